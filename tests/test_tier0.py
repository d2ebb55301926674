"""Tier 0 of the compiled backend (mdf_engine/backends/vm) against the interpreted backend.

Tier 0 runs a graph's first short runs from its generated ``run``'s syntax tree on an
engine-wide machine instead of compiling that code (issue 22, goal 4). Every model of the
corpus that test_compiled_coverage.py walks (tests/data/wild, examples/, tests/data/pnl) is
driven the same way on the interpreted backend (the oracle) and on tier 0, with both of its
machines (plain Python, and the Numba machine from Numba's cache), one update per call so
that every step is compared: every output port, and the nodes each update ran (conditions).
:data:`ACCEPTED` lists the files tier 0 runs: one it stops running fails, and so does one it
newly runs (add it: the set only grows).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compiled_coverage import STEPS, _cases

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.backends.compiled import CompiledGraph
from mdf_engine.backends.vm import tier
from mdf_engine.backends.vm.translate import Program
from mdf_engine.errors import MDFError

ROOT = Path(__file__).resolve().parents[1]
ACCEPTED_FILE = Path(__file__).resolve().parent / "data" / "tier0_accepted.json"
#: writer/file of every corpus model tier 0 runs
ACCEPTED: set[str] = set(json.loads(ACCEPTED_FILE.read_text()))
SEEN: dict[str, str] = {}


def _calls(model: Path, kind: str, oracle: dict | None) -> tuple[Any, list[dict]]:
    """A simulation factory's arguments and the calls of the corpus test's drive, one update
    each: (kwargs of ``run``)."""
    if kind == "wild":
        run = oracle["run"]
        init = run.get("initializer")
        if run.get("initializer_file"):
            init = json.loads((model.parent / run["initializer_file"]).read_text())
        if init is not None:
            init = {k: np.asarray(v) if isinstance(v, list) else v for k, v in init.items()}
        n = min(run["steps"], STEPS)
        return {}, [{"steps": 1, "dt": run["dt"], "initializer": init}] * n
    if kind in ("trials", "trials_old"):
        extra = (
            {"scheduling_mode": oracle["scheduling_mode"]} if "scheduling_mode" in oracle else {}
        )
        if kind == "trials_old":
            inputs = [oracle["run"]["initializer"]] * oracle["run"]["steps"]
        else:
            n = len(next(iter(oracle["inputs"].values())))
            inputs = [{k: v[t] for k, v in oracle["inputs"].items()} for t in range(n)]
        calls = [
            {"steps": 1, "initializer": {k: np.asarray(v, dtype=float) for k, v in t.items()}}
            for t in inputs[:STEPS]
        ]
        return extra, calls
    return {}, [{"steps": 1, "dt": 0.01}] * STEPS


def _drive(model: Path, extra: dict, calls: list[dict], backend: str) -> tuple[Any, list]:
    sim = Simulation(mdf_engine.load(str(model)), backend=backend, **extra)
    seen = []
    for call in calls:
        before = len(sim.runner.time_steps)
        sim.run(**call)
        outs = {(n, p): v for n, ports in sim.outputs.items() for p, v in ports.items()}
        seen.append((outs, [sorted(s) for s in sim.runner.time_steps[before:]]))
    return sim, seen


class Refused(Exception):
    """Tier 0 did not take the graph (the test compiles no generated code)."""


_run_compiled = CompiledGraph._run_compiled


def _no_generated_code(self: CompiledGraph, *args: Any) -> None:
    if self.tier0 is None:
        raise Refused
    _run_compiled(self, *args)


def _same(ours: Any, want: Any, what: str) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(want), what
        for k, (x, y) in enumerate(zip(ours, want)):
            _same(x, y, f"{what}[{k}]")
        return
    ours, want = np.asarray(ours), np.asarray(want)
    assert ours.shape == want.shape, f"{what}: shape {ours.shape} != {want.shape}"
    np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-300, err_msg=what)


@pytest.mark.parametrize("writer,model,kind,oracle", _cases())
def test_tier0_equals_interpreted(writer, model, kind, oracle, monkeypatch, caplog) -> None:
    key = f"{writer}/{model.name}"
    if kind == "actr":
        return
    extra, calls = _calls(model, kind, oracle)
    try:
        _, want = _drive(model, extra, calls, "interpreted")
    except MDFError:
        return  # refused by the interpreter: tests/test_compiled_coverage.py checks both
    monkeypatch.setenv("MDF_ENGINE_TIER0", "always")
    monkeypatch.setattr(CompiledGraph, "_run_compiled", _no_generated_code)
    runs = []
    for machine in ("python", "numba"):
        monkeypatch.setattr(tier, "PYTHON_WORK", 10**12 if machine == "python" else -1)
        try:
            with caplog.at_level(logging.INFO, logger="mdf_engine"):
                sim, got = _drive(model, extra, calls, "compiled")
        except Refused:  # the log says why (never silently)
            assert any("tier 0 cannot run" in r.getMessage() for r in caplog.records), key
            break
        t0 = getattr(sim.runner, "tier0", None)
        if t0 is None:  # (the graph runs interpreted)
            break
        handed = sim.runner.first_steps  # (first steps interpreted: handover.py)
        assert t0.updates == len(calls) - (handed.steps if handed is not None else 0)
        runs.append((machine, got))
    SEEN[key] = "tier 0" if runs else "not taken"
    if key in ACCEPTED:
        assert runs, f"{key}: tier 0 no longer runs it"
    else:
        assert not runs, f"{key}: tier 0 runs it now: add it to {ACCEPTED_FILE.name}"
    for machine, got in runs:
        assert len(got) == len(want)
        for t, ((g, gsteps), (w, wsteps)) in enumerate(zip(got, want)):
            what = f"{key} ({machine} machine) call {t}"
            assert gsteps == wsteps, f"{what}: time steps {gsteps} != {wsteps}"
            assert g.keys() == w.keys()
            for port in w:
                _same(g[port], w[port], f"{what} {port[0]}.{port[1]}")


@pytest.mark.parametrize(
    "path", ["examples/fitzhugh_nagumo.json", "examples/conditions_threshold.json"]
)
def test_generated_code_carries_on_from_tier0(path, monkeypatch) -> None:
    """A short first run on tier 0, then a run beyond its budget: the generated code is
    compiled and carries on from tier 0's state; every value equals the interpreter's."""
    want = Simulation(str(ROOT / path), backend="interpreted")
    monkeypatch.setenv("MDF_ENGINE_TIER0", "always")
    sim = Simulation(str(ROOT / path), backend="compiled")
    for steps in (7, tier.TIER0_UPDATES):
        sim.run(steps=steps, dt=0.01)
        want.run(steps=steps, dt=0.01)
        for node, ports in want.outputs.items():
            for port, value in ports.items():
                _same(sim.outputs[node][port], value, f"{path} {node}.{port}")
        assert [sorted(s) for s in sim.runner.time_steps[-20:]] == [
            sorted(s) for s in want.runner.time_steps[-20:]
        ]
        if steps == 7:
            assert sim.runner.tier0 is not None and sim.runner.tier0.updates == 7
    assert sim.runner.tier0 is None and sim.runner.is_compiled  # the generated code ran


def test_tier0_policy_depends_on_the_calls_only(monkeypatch) -> None:
    """Which machine runs a call follows from the updates and instructions so far: tier 0
    hands over to the generated code once its update budget is spent, for good."""
    prog = Program(np.zeros((10, 10), dtype=np.int64), np.zeros(1), {}, np.zeros(2))
    t0 = tier.Tier0(prog)
    assert t0.takes(5) and t0._python(5)
    t0.updates, t0.python_updates, t0.executed = 5, 5, 5 * 1000
    assert t0._python(tier.PYTHON_WORK // 1000 - 5)
    assert not t0._python(tier.PYTHON_WORK // 1000 - 4)  # the Numba machine
    assert t0.takes(tier.TIER0_UPDATES - 5)
    assert not t0.takes(tier.TIER0_UPDATES - 4)
    assert not t0.takes(1)  # done: the generated code runs from now on
