"""PsyNeuLink's own MDF exports, old and new, against PsyNeuLink's own runs.

tests/data/wild/psyneulink/v<version>/ is written by tools/pnl_export/make_wild.py in a venv of
that PsyNeuLink release (see the README there): ``NAME.json`` is the export, ``NAME.oracle.json``
the inputs of each trial, every output port after it (PsyNeuLink's ``comp.run``), the
scheduler's execution list of each trial and, in absolute time, its timestamps. One trial is one
``Simulation.evaluate(initializer=...)``; the file is run in the scheduling mode PsyNeuLink ran
it in. Each file runs on both backends; where the compiled backend falls back to the interpreted
one, the test records the reason it logged. PsyNeuLink itself is never imported.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from pnl_runs import assert_port_matches, trial_inputs

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.errors import MDFError

DATA = Path(__file__).resolve().parent / "data" / "wild" / "psyneulink"
FILES = sorted(
    p
    for p in DATA.glob("v*/*.json")
    if not p.name.endswith(".oracle.json") and not p.name.startswith("wide_")
)  # the wide corpus (wide_*) has its own test: tests/test_pnl_wide.py
OUTCOMES: dict[tuple[str, str, str], str] = {}
#: Files the engine does not yet run as their writer did, and why (strict xfail: a fix shows)
KNOWN: dict[tuple[str, str], str] = {}
#: Per file stem, the nodes whose outputs and executions are not compared because the export
#: lost what drives them
LOSSY = {
    "tests_model_nested_comp_with_scheduler": (
        {"E", "F"},
        "PsyNeuLink drops the projection C -> Inner_Composition and the nested composition's "
        "condition (it runs once, after C) from the export",
    ),
}
for _v in ("v0.15.3.0", "v0.21.0.0"):  # PsyNeuLink's own test scripts (make_tests_json.py)
    KNOWN[(_v, "tests_model_with_control")] = (
        "the OptimizationControlMechanism's GridSearch simulates the composition per "
        "allocation, which the file cannot express ('gridsearch' is refused)"
    )
    KNOWN[(_v, "tests_stroop_conflict_monitoring")] = (
        "the export drops the CONTROL mechanism's control signal to TASK's gain (docs/pnl.md)"
    )


#: Files the engine refuses, with (what the one-line error says, why)
REFUSED: dict[tuple[str, str], tuple[str, str]] = {
    ("v0.21.0.0", "tests_model_backprop"): (
        "unknown function 'backpropagation'",
        "PsyNeuLink's BackPropagation learning function (of the learning mechanisms) has no "
        "definition in MDF",
    ),
}


def _oracle(path: Path) -> dict:
    return json.loads(path.with_name(path.stem + ".oracle.json").read_text())


def run_file(path: Path, backend: str) -> tuple[Simulation, dict, list]:
    """Run every trial of ``path``; return the simulation, the oracle and per trial
    (output ports, time steps, step times)."""
    oracle = _oracle(path)
    model = mdf_engine.load(str(path))
    sim = Simulation(
        model,
        graph=oracle.get("graph"),
        backend=backend,
        scheduling_mode=oracle["scheduling_mode"],
    )
    got = []
    for t in range(len(oracle["trials"])):
        sim.evaluate(initializer=trial_inputs(oracle, t))
        outs = {p: v for node in sim.outputs.values() for p, v in node.items()}
        got.append((outs, sim.time_steps, sim.time_step_times))
    return sim, oracle, got


def _compare(oracle: dict, got: list, name: str, loose: dict[str, float] | None = None) -> None:
    """Every output port and the time steps of every trial; ``loose``: ports compared with
    a wider relative tolerance (where PsyNeuLink's own float64 evaluation loses digits)."""
    nested = "nested_execution" in oracle
    for t, (trial, (outs, steps, times)) in enumerate(zip(oracle["trials"], got)):
        lost = LOSSY.get(name.split("/")[-1], ((), ""))[0]
        for port, want in trial.items():
            assert port in outs, f"trial {t}: no output port {port}"
            if _drawn_at_random(port, trial) or port.split("_")[0] in lost:
                continue
            if loose and port in loose:
                np.testing.assert_allclose(
                    np.ravel(outs[port]), np.ravel(want), rtol=loose[port], err_msg=port
                )
                continue
            assert_port_matches(outs[port], want, f"{name} trial {t} {port}")
        want_steps = oracle["execution"][t]
        if nested:  # the engine flattens nested compositions: compare the runs per node
            # (a nested scheduler's execution list is cumulative over the trials)
            inner = {
                c: steps_of[len(oracle["nested_execution"][t - 1][c]) if t else 0 :]
                for c, steps_of in oracle["nested_execution"][t].items()
            }
            want = Counter(n for s in want_steps for n in s if n not in inner)
            for steps_of in inner.values():  # (a composition nested deeper has its own)
                want.update(n for s in steps_of for n in s if n not in inner)
            got = Counter(n for s in steps for n in s if n not in lost)
            assert got == Counter({n: k for n, k in want.items() if n not in lost}), f"trial {t}"
        else:
            assert [sorted(s) for s in steps] == want_steps, f"trial {t} time steps"
        if oracle["times"][t] is not None:
            assert times == pytest.approx(oracle["times"][t]), f"trial {t} step times"


def _drawn_at_random(port: str, trial: dict) -> bool:
    """A DDM's decision variable is PsyNeuLink's random draw (-threshold with the probability
    of the lower bound): compared only where that probability is below 0.1 or above 0.9 (the
    engine gives the more likely bound)."""
    if not port.endswith("_DECISION_VARIABLE"):
        return False
    p = trial.get(port[: -len("DECISION_VARIABLE")] + "PROBABILITY_LOWER_THRESHOLD")
    return p is not None and 0.1 <= float(np.ravel(p)[0]) <= 0.9


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_export_matches_psyneulink(path, backend, caplog, request):
    name = f"{path.parent.name}/{path.stem}"
    why = KNOWN.get((path.parent.name, path.stem))
    if why:
        OUTCOMES[(path.parent.name, path.stem, backend)] = f"differs: {why}"
        request.applymarker(pytest.mark.xfail(reason=why, strict=True))
    if (path.parent.name, path.stem) in REFUSED:
        wanted, why = REFUSED[(path.parent.name, path.stem)]
        with pytest.raises(MDFError, match=re.escape(wanted)) as err:
            run_file(path, backend)
        assert "\n" not in str(err.value)
        OUTCOMES[(path.parent.name, path.stem, backend)] = f"refused: {why}"
        return
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        sim, oracle, got = run_file(path, backend)
    assert sim.model.generating_application.startswith("PsyNeuLink")
    _compare(oracle, got, name)
    outcome = "match"
    if backend == "compiled" and not sim.runner.is_compiled:
        reason = sim.runner.fallback_reason
        assert reason and any(reason in r.getMessage() for r in caplog.records)
        outcome = f"match (interpreted: {reason})"
    OUTCOMES[(path.parent.name, path.stem, backend)] = outcome
    if backend == "compiled" and sim.runner.is_compiled:  # every pnl function has a kernel
        pnl = set(mdf_engine.registry.REGISTRY.names("pnl"))
        assert not pnl & set(sim.runner.python_calls), f"{name}: {sim.runner.python_calls}"
    # no file falls back for want of a PsyNeuLink rule: the compiled loop has them (held
    # external inputs, time steps that read the values from before the step, initial values)
    assert "in PsyNeuLink files" not in outcome, f"{name}: {outcome}"


def test_corpus_table(capsys):
    """Print version, files, matching per backend (after the file tests)."""
    versions = sorted({p.parent.name for p in FILES})
    lines = [
        f"{'version':<12} {'files':>5} {'interpreted':>12} {'compiled':>9}  compiled falls back"
    ]
    for v in versions:
        stems = [p.stem for p in FILES if p.parent.name == v]
        row = {
            b: sum(OUTCOMES.get((v, s, b), "").startswith("match") for s in stems)
            for b in ("interpreted", "compiled")
        }
        back = [s for s in stems if "interpreted:" in OUTCOMES.get((v, s, "compiled"), "")]
        lines.append(
            f"{v:<12} {len(stems):>5} {row['interpreted']:>12} {row['compiled']:>9}  "
            f"{', '.join(back) or '-'}"
        )
    reasons = sorted(
        {
            o
            for o in OUTCOMES.values()
            if "interpreted:" in o or o.startswith(("differs", "refused"))
        }
    )
    with capsys.disabled():
        print("\nPsyNeuLink corpus (files matching PsyNeuLink's runs):")
        print("\n".join(lines))
        for r in reasons:
            print("  ", r)
    assert len(versions) >= 2


#: (MDF condition, graph-scheduler condition) of nodes A and B per scheduling mode (graph-scheduler
#: 1.2's standard mode does not end a second update of the TimeInterval graph)
_CONDITIONS = {
    "exact_time": (
        {"type": "TimeInterval", "kwargs": {"repeat": 1}},
        {"type": "TimeInterval", "kwargs": {"repeat": 2, "start": 1}},
    ),
    "standard": (
        {"type": "Always", "kwargs": {}},
        {"type": "EveryNCalls", "kwargs": {"dependency": "A", "n": 2}},
    ),
}


@pytest.mark.parametrize("mode", ["standard", "exact_time"])
@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_time_steps_equal_graph_schedulers(backend, mode):
    """Simulation.time_steps / time_step_times of each evaluate() against graph-scheduler's
    own execution list and timestamps for the same graph and conditions."""
    import graph_scheduler as gs

    a, b = _CONDITIONS[mode]
    model = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "input_ports": {"a_in": {}},
                            "output_ports": {"a": {"value": "a_in"}},
                        },
                        "B": {
                            "input_ports": {"b_in": {}},
                            "output_ports": {"b": {"value": "b_in"}},
                        },
                    },
                    "edges": {
                        "e": {
                            "sender": "A",
                            "sender_port": "a",
                            "receiver": "B",
                            "receiver_port": "b_in",
                        }
                    },
                    "conditions": {
                        "node_specific": {"A": a, "B": b},
                        "termination": {
                            "environment_state_update": {
                                "type": "AfterNCalls",
                                "kwargs": {"dependency": "A", "n": 3},
                            }
                        },
                    },
                }
            }
        }
    }

    def gs_cond(c: dict):
        kw = {k: v for k, v in c["kwargs"].items() if k != "dependency"}
        args = ["A"] if "dependency" in c["kwargs"] else []
        return getattr(gs, c["type"])(*args, **kw)

    sched = gs.Scheduler(
        graph={"A": set(), "B": {"A"}},
        conditions={"A": gs_cond(a), "B": gs_cond(b)},
        termination_conds={gs.TimeScale.ENVIRONMENT_STATE_UPDATE: gs.AfterNCalls("A", 3)},
        mode=gs.SchedulingMode[mode.upper()],
    )
    sim = Simulation(model, backend=backend, scheduling_mode=mode)
    eid = sched.default_execution_id
    for _ in range(3):
        before = len(sched.execution_list[eid])
        stamps_before = len(sched.execution_timestamps[eid])
        list(sched.run())
        want = sched.execution_list[eid][before:]
        stamps = [
            float(t.absolute.to("ms").m) for t in sched.execution_timestamps[eid][stamps_before:]
        ] or [0.0] * len(want)
        sim.evaluate()
        assert sim.time_steps == [set(s) for s in want]
        assert sim.time_step_times == pytest.approx(stamps)
    if backend == "compiled":
        assert sim.runner.is_compiled, sim.runner.fallback_reason


@pytest.mark.parametrize("stem", ["fhn", "exact_time"])
def test_held_inputs_and_time_steps_compile_over_many_trials(stem):
    """One run of 25 trials with the first trial's inputs (as benchmarks/pnl_speed.py runs
    it): the compiled loop equals the interpreted backend (which matches PsyNeuLink's runs
    above) trial by trial. fhn's input node runs 4 times per trial (held input), exact_time's
    nodes of one time step read their senders' values from before the step."""
    path = DATA / "v0.21.0.0" / f"{stem}.json"
    oracle = _oracle(path)
    init = trial_inputs(oracle, 0)
    sims = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(str(path), backend=backend, scheduling_mode=oracle["scheduling_mode"])
        ports = [(n, p) for n, ps in sim.outputs.items() for p in ps]
        res = sim.run(steps=25, initializer=init, record=[f"{n}.{p}" for n, p in ports])
        sims[backend] = (sim, res, ports)
    assert sims["compiled"][0].runner.is_compiled, sims["compiled"][0].runner.fallback_reason
    for n, p in sims["interpreted"][2]:
        np.testing.assert_allclose(
            np.asarray(sims["compiled"][1].trace(n, p), dtype=float),
            np.asarray(sims["interpreted"][1].trace(n, p), dtype=float),
            rtol=1e-12,
            atol=1e-14,
            err_msg=f"{stem} {n}.{p}",
        )


@pytest.mark.parametrize("mode", ["exact_time", "standard"])
def test_cli_scheduling_mode_on_an_exact_time_export(mode, tmp_path, capsys):
    """``mdf run --scheduling-mode exact_time`` on PsyNeuLink 0.21's EXACT_TIME export gives
    PsyNeuLink's first trial: its outputs, execution list and step times in ms; the default
    (standard) mode runs the file as graph-scheduler's standard mode does, as
    ``Simulation`` does without the mode, which is not PsyNeuLink's run."""
    from mdf_engine.cli import main as cli_main

    path = DATA / "v0.21.0.0" / "exact_time.json"
    oracle = _oracle(path)
    init = tmp_path / "init.json"
    init.write_text(json.dumps({k: v[0] for k, v in oracle["inputs"].items()}))
    argv = ["run", str(path), "--initializer", str(init), "--json", "-q", "--steps", "1"]
    if mode == "exact_time":
        argv += ["--scheduling-mode", "exact_time"]
    capsys.readouterr()
    assert cli_main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    outs = {p: v for ports in data["outputs"].values() for p, v in ports.items()}
    if mode == "exact_time":
        assert data["time_steps"] == oracle["execution"][0]
        assert data["time_step_times"] == pytest.approx(oracle["times"][0])
        for port, want in oracle["trials"][0].items():
            np.testing.assert_allclose(np.ravel(outs[port]), np.ravel(want), rtol=1e-9)
        return
    sim = Simulation(mdf_engine.load(str(path)))
    sim.evaluate(initializer={k: np.array(v[0]) for k, v in oracle["inputs"].items()})
    assert data["time_steps"] == [sorted(s) for s in sim.time_steps]
    assert data["time_step_times"] == pytest.approx(sim.time_step_times)
    for ports in sim.outputs.values():
        for port, value in ports.items():
            np.testing.assert_allclose(np.ravel(outs[port]), np.ravel(value), rtol=1e-12)
    assert data["time_steps"] != oracle["execution"][0]
