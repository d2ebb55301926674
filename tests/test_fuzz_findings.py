"""Audit 4 (docs/security.md): one regression test per class of finding of the structural
fuzzer ``tools/fuzz_inputs.py`` (the minimal mutant inline, the MDFError's text naming the
file and the field), and a quick seeded run of that fuzzer over the loader and the planner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mdf_engine import MDFError, load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import fuzz_inputs  # noqa: E402


def test_a_seeded_fuzz_run_of_the_loader_and_planner_finds_nothing(tmp_path):
    problems, counts = fuzz_inputs.smoke(seed=4, mutants=300, folder=tmp_path)
    assert not problems, "\n".join(problems)
    # the mutants reach both sides: some load and plan, some are refused
    assert counts.get("ok", 0) > 30 and counts.get("error", 0) > 100, counts


def test_the_mutants_are_a_function_of_the_seed():
    files = fuzz_inputs.corpus(20_000)
    kinds, functions = fuzz_inputs.vocabulary()
    a = fuzz_inputs.make_mutant(5, 17, files, kinds, functions)
    assert a == fuzz_inputs.make_mutant(5, 17, files, kinds, functions)


def _mdf(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MDF_ENGINE_CACHE": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "mdf_engine.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _model(nodes: dict, edges: dict | None = None, **graph) -> dict:
    return {
        "m": {
            "format": "ModECI MDF v0.4",
            "graphs": {"g": {"nodes": nodes, "edges": edges or {}, **graph}},
        }
    }


A = {"parameters": {"x": {"value": 1.0}}, "output_ports": {"o": {"value": "x"}}}


def test_yaml_nested_beyond_the_c_stack_is_refused_not_a_segfault(tmp_path):
    """libyaml's composer recursed once per level in C: 30,000 levels (60 KB) killed the process
    with SIGSEGV. The nesting is now counted on the parser's flat event stream first."""
    (tmp_path / "deep.yaml").write_text("[" * 30_000 + "]" * 30_000)
    r = _mdf("validate", "deep.yaml", cwd=tmp_path)
    assert r.returncode == 1, (r.returncode, r.stderr[-300:])
    assert r.stderr.count("\n") == 1 and "deep.yaml" in r.stderr and "nesting deeper" in r.stderr


def test_an_enormous_id_is_clipped_in_errors_and_log_lines(tmp_path):
    """A 2 MB id made a 2 MB error line (and a 2 MB warning of an ignored field)."""
    big = "n" * 1_000_000
    path = tmp_path / "m.json"
    model = _model(
        {"A": {**A, big: 1}},
        {"e": {"sender": big, "receiver": "A", "sender_port": "o", "receiver_port": "i"}},
    )
    path.write_text(json.dumps(model))
    with pytest.raises(MDFError) as e:
        load(path)
    text = str(e.value)
    assert len(text) < 10_000 and "m.json" in text and "graphs.g.edges.e.sender" in text
    assert "characters)..." in text


def _node_model(tmp_path: Path, params: dict) -> Path:
    path = tmp_path / "m.json"
    node = {"parameters": params, "output_ports": {"o": {"value": "p"}}}
    path.write_text(json.dumps(_model({"A": node})))
    return path


def test_a_condition_whose_value_does_not_broadcast_names_the_condition(tmp_path):
    """A conditional parameter whose value is ``[]`` under a condition giving two numbers was an
    internal error (numpy's ValueError out of ``np.where``)."""
    from mdf_engine import Simulation

    cond = {"c": {"test": "a > 0", "value": "a"}}
    path = _node_model(
        tmp_path, {"a": {"value": [1.0, 2.0]}, "p": {"value": [], "conditions": cond}}
    )
    with pytest.raises(
        MDFError,
        match=r"m\.json: graphs\.g\.nodes\.A\.parameters\.p\.conditions\.c: evaluation failed",
    ):
        Simulation(path, backend="interpreted").run(steps=2)


def test_a_derivative_that_does_not_broadcast_fails_cleanly_in_compiled_code(tmp_path):
    """A state of two numbers with a derivative of three: Numba's own ValueError escaped the
    compiled backend (the first step has no dt, so the warm-up never met it)."""
    from mdf_engine import Simulation

    deriv = {
        "p": {"default_initial_value": [1.0, 2.0], "time_derivative": "np.array([1.0, 2.0, 3.0])"}
    }
    path = _node_model(tmp_path, deriv)
    for backend in ("interpreted", "compiled"):
        sim = Simulation(path, backend=backend)
        sim.run(steps=1)
        with pytest.raises(
            MDFError, match=r"m\.json: graphs\.g.*evaluation failed: ValueError"
        ) as e:
            sim.run(steps=2, dt=0.1)
        assert "\n" not in str(e.value) and "numba" not in str(e.value)
