"""Every file of the wild corpus (tests/data/wild/<writer>/, made by the real writers) against
the oracle stored beside it (``<name>.oracle.json``, see tests/data/wild/README.md), with
``Simulation`` on both backends and with ``mdf run``.

A file that does not compile runs on the interpreted backend with a log line saying why; the
test records the reason and still checks the values. At the end a table of writer, files and
matching files per backend is printed.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdf_engine import cli
from mdf_engine.errors import MDFError
from mdf_engine.simulation import Simulation

WILD = Path(__file__).resolve().parent / "data" / "wild"
#: The PsyNeuLink exports have their own tests (tests/test_wild_psyneulink*.py).
ORACLES = sorted(
    p for p in WILD.glob("*/*.oracle.json") if p.parent.name not in ("psyneulink", "psyneulink_old")
)
MODES = ("interpreted", "compiled", "mdf run")

#: (writer, mode) -> {file: "match" | "match (interpreted: <why>)" | "MISMATCH ..."}
RESULTS: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)


def _oracle(path: Path) -> dict:
    return json.loads(path.read_text())


def _model_path(oracle_path: Path, oracle: dict) -> Path:
    return oracle_path.parent / oracle["model"]


def _initializer(oracle_path: Path, oracle: dict) -> dict | None:
    run = oracle["run"]
    init = run.get("initializer")
    if run.get("initializer_file"):
        init = json.loads((oracle_path.parent / run["initializer_file"]).read_text())
    if init is None:
        return None
    return {k: np.asarray(v) if isinstance(v, list) else v for k, v in init.items()}


def _close(ours: Any, expected: Any, oracle: dict, what: str) -> None:
    """``ours`` equals ``expected`` within the oracle's tolerances; shapes must agree, except
    that the reference engine's 0-d / (1,) / scalar forms of one value are the same value."""
    if isinstance(expected, dict):
        assert isinstance(ours, dict), f"{what}: expected a mapping, got {ours!r:.80}"
        assert set(ours) == set(expected), f"{what}: keys {sorted(ours)} != {sorted(expected)}"
        for k in expected:
            _close(ours[k], expected[k], oracle, f"{what}.{k}")
        return
    if isinstance(expected, str) or expected is None:
        assert ours == expected, f"{what}: {ours!r} != {expected!r}"
        return
    try:
        b = np.asarray(expected, dtype=float)
    except (ValueError, TypeError):  # a list of chunks, productions or ragged lists
        assert len(ours) == len(expected), f"{what}: {len(ours)} items != {len(expected)}"
        for i, (x, y) in enumerate(zip(ours, expected)):
            _close(x, y, oracle, f"{what}[{i}]")
        return
    a = np.asarray(ours, dtype=float)
    if a.shape != b.shape:
        lenient = oracle["protocol"] == "reference" and a.size == b.size
        assert lenient, f"{what}: shape {a.shape} != expected {b.shape}"
        a, b = a.ravel(), b.ravel()
    np.testing.assert_allclose(a, b, rtol=oracle["rtol"], atol=oracle["atol"], err_msg=what)


def _check_outputs(values: dict[str, Any], oracle: dict) -> None:
    for key, exp in oracle["expected"].items():
        assert key in values, f"no output {key}"
        _close(values[key], exp, oracle, key)


def _run_simulation(model: Path, oracle: dict, init: dict | None, backend: str) -> tuple:
    sim = Simulation(str(model), backend=backend)
    traces = {k: v for k, v in oracle.get("traces", {}).items() if k != "every"}
    res = sim.run(
        steps=oracle["run"]["steps"], dt=oracle["run"]["dt"], initializer=init, record=list(traces)
    )
    values = {f"{n}.{p}": v for n, ports in res.outputs.items() for p, v in ports.items()}
    every = oracle.get("traces", {}).get("every", 1)
    for key, exp in traces.items():
        _close(list(res.traces[key][::every]), exp, oracle, f"trace {key}")
    return sim, values


def _run_actr(model: Path, oracle: dict, backend: str) -> Simulation:
    """The ACT-R example scripts' loop, as the oracle's generator drives the reference."""
    sim = Simulation(str(model), backend=backend)
    goal: Any = {}
    retrieval: Any = {}
    seen: dict[str, list] = defaultdict(list)
    for _ in range(oracle["run"]["steps"]):
        sim.evaluate(initializer={"goal_input": goal, "dm_input": retrieval})
        goal = sim.value("fire_production", "fire_prod_output_to_goal")
        retrieval = sim.value("fire_production", "fire_prod_output_to_retrieval")
        seen["fire_production.fire_prod_output_to_goal"].append(goal)
        seen["goal_buffer.goal_output"].append(sim.value("goal_buffer", "goal_output"))
        seen["pattern_matching.pattern_output"].append(
            list(sim.value("pattern_matching", "pattern_output"))
        )
    assert bool(sim.value("check_termination", "check_output")), "did not terminate"
    for key, exp in oracle["traces"].items():
        _close(seen[key], exp, oracle, key)
    _close(
        seen["goal_buffer.goal_output"][-1],
        oracle["expected"]["goal_buffer.goal_output"],
        oracle,
        "final goal",
    )
    return sim


def _run_cli(model: Path, oracle: dict, oracle_path: Path, tmp_path: Path, capsys) -> None:
    argv = ["run", str(model), "--json", "--backend", "interpreted"]
    run = oracle["run"]
    if oracle["protocol"] != "actr":
        argv += ["--steps", str(run["steps"])]
        if run["dt"] is not None:
            argv += ["--dt", repr(run["dt"])]
        if run.get("initializer_file"):
            argv += ["--initializer", str(oracle_path.parent / run["initializer_file"])]
        elif run.get("initializer") is not None:
            f = tmp_path / "init.json"
            f.write_text(json.dumps(run["initializer"]))
            argv += ["--initializer", str(f)]
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    if oracle["protocol"] == "actr":
        assert data["cycles"] == oracle["expected"]["cycles"]
        _close(data["goal"], oracle["expected"]["goal_buffer.goal_output"], oracle, "goal")
        return
    values = {f"{n}.{p}": v for n, ports in data["outputs"].items() for p, v in ports.items()}
    _check_outputs(values, oracle)


def _check_refusal(
    model: Path, oracle: dict, oracle_path: Path, mode: str, tmp_path: Path, capsys
) -> None:
    """A file its writer broke (the oracle's note says how): refused with one line naming
    what is missing, never a traceback or a number, within the oracle's steps (a fault in a
    time derivative shows at the second step, the first with a time increment)."""
    wanted = oracle["expected"]["error_contains"]
    run = oracle["run"]
    if mode == "mdf run":
        capsys.readouterr()
        argv = ["run", str(model), "--json", "--steps", str(run["steps"])]
        if run["dt"] is not None:
            argv += ["--dt", repr(run["dt"])]
        code = cli.main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 2 and wanted in err and "\n" not in err, err
        return
    init = _initializer(oracle_path, oracle)
    with pytest.raises(MDFError, match=re.escape(wanted)) as err:
        Simulation(str(model), backend=mode).run(steps=run["steps"], dt=run["dt"], initializer=init)
    assert "\n" not in str(err.value)


def _table_lines() -> list[str]:
    writers = sorted({w for w, _ in RESULTS})
    lines = [
        "wild corpus: writer, files, matching per mode (cmp: ran compiled)",
        f"{'writer':<16}{'files':>6}" + "".join(f"{m:>18}" for m in MODES),
    ]
    for w in writers:
        files = len({f for m in MODES for f in RESULTS[(w, m)]})
        row = f"{w:<16}{files:>6}"
        for m in MODES:
            r = RESULTS[(w, m)]
            ok = sum(1 for v in r.values() if v.startswith("match"))
            cell = f"{ok}/{len(r)}"
            if m == "compiled":
                cmp_ = sum(1 for v in r.values() if v == "match" or "refused" in v)
                cell += f" ({cmp_} cmp)"
            row += f"{cell:>18}"
        lines.append(row)
    notes = [
        f"  {w}/{f}: {v}"
        for (w, m), r in sorted(RESULTS.items())
        for f, v in r.items()
        if m == "compiled" and v != "match" and "refused" not in v
    ]
    if notes:
        lines.append("compiled mode, not compiled (the backend that ran, and why) or failed:")
        lines += notes
    return lines


class _TablePlugin:
    """Prints the table in pytest's terminal summary."""

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if RESULTS:
            terminalreporter.section("wild corpus")
            for line in _table_lines():
                terminalreporter.write_line(line)


@pytest.fixture(scope="module", autouse=True)
def _table(request):
    pm = request.config.pluginmanager
    if not pm.has_plugin("wild-corpus-table"):
        pm.register(_TablePlugin(), "wild-corpus-table")
    yield


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name[: -len('.oracle.json')]}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("oracle_path", ORACLES, ids=_id)
def test_wild_file(oracle_path: Path, mode: str, tmp_path: Path, capsys, caplog) -> None:
    oracle = _oracle(oracle_path)
    writer = oracle_path.parent.name
    model = _model_path(oracle_path, oracle)
    key = model.name
    RESULTS[(writer, mode)][key] = "MISMATCH (error)"
    if oracle["protocol"] == "refuse":
        _check_refusal(model, oracle, oracle_path, mode, tmp_path, capsys)
        RESULTS[(writer, mode)][key] = "match (refused, as the oracle says)"
        return
    if mode == "mdf run":
        _run_cli(model, oracle, oracle_path, tmp_path, capsys)
        RESULTS[(writer, mode)][key] = "match"
        return
    if oracle["protocol"] == "actr":  # chunks and productions: the compiled ACT-R kernels
        sim = _run_actr(model, oracle, mode)
        ran = getattr(sim.runner, "mode", mode)
        assert ran == mode, getattr(sim.runner, "fallback_reason", None)
        RESULTS[(writer, mode)][key] = "match"
        return
    init = _initializer(oracle_path, oracle)
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        sim, values = _run_simulation(model, oracle, init, mode)
    _check_outputs(values, oracle)
    if mode == "compiled" and getattr(sim.runner, "mode", "compiled") != "compiled":
        why = getattr(sim.runner, "fallback_reason", None) or sim.runner.mode
        assert caplog.records, "a file that does not compile must log why"
        RESULTS[(writer, mode)][key] = f"match ({sim.runner.mode}: {why})"
    else:
        RESULTS[(writer, mode)][key] = "match"


def _small_model(**extra: Any) -> dict:
    node = {"parameters": {"x": {"value": 2}}, "output_ports": {"out": {"value": "x"}}}
    return {"m": {"graphs": {"g": {"nodes": {"A": node}}}, **extra}}


def test_fields_of_other_versions_load_and_unknown_ones_warn_once(tmp_path, caplog):
    """Fields some MDF version defines (model ``version``, edge ``name``) load silently; fields
    none defines are dropped with one warning line naming their paths, and the model runs."""
    data = _small_model(version="0.2", grahps={})
    node = data["m"]["graphs"]["g"]["nodes"]["A"]
    node["paramters"] = {}
    node["parameters"]["x"]["valu"] = 1
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        sim = Simulation(str(path), backend="interpreted")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    for field in ("grahps", "graphs.g.nodes.A.paramters", "parameters.x.valu"):
        assert field in lines[0]
    assert "version" not in lines[0].split(":", 2)[-1]
    sim.run(steps=1)
    assert sim.value("A", "out") == 2


def test_a_parameter_defined_by_nothing_or_by_conditions_runs_as_the_reference(tmp_path):
    """pytorch_to_mdf's absent optional input ``{}`` and a parameter set only by conditions,
    step by step against modeci-mdf's reference engine, on both backends."""
    pytest.importorskip("modeci_mdf")
    from reference_engine import reference_run

    data = _small_model()
    node = data["m"]["graphs"]["g"]["nodes"]["A"]
    node["parameters"].update(
        {
            "absent": {},
            "t": {"value": "t + 1"},
            "flag": {
                "conditions": [
                    {"id": "on", "test": "t == 2", "value": 5},
                    {"id": "off", "test": "t == 4", "value": "x - 2"},
                ]
            },
        }
    )
    node["output_ports"]["f"] = {"value": "flag"}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    expected = []
    for k in range(1, 6):
        ref = reference_run(str(path), steps=k)
        expected.append(float(ref["outputs"]["A"]["f"]))
    absent = ref["graph"].enodes["A"].evaluable_parameters["absent"].curr_value
    for backend in ("interpreted", "compiled"):
        sim = Simulation(str(path), backend=backend)
        seen = []
        for _ in range(5):
            sim.evaluate()
            seen.append(float(sim.value("A", "f")))
        assert seen == expected, backend
    assert Simulation(str(path), backend="interpreted").run(steps=1) is not None
    sim = Simulation(str(path), backend="interpreted")
    sim.evaluate()
    assert sim.value("A", "absent") is absent is None
