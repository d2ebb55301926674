"""An interrupted run (KeyboardInterrupt, i.e. Ctrl-C) keeps what it has: Simulation.run returns
partial Results marked with the last completed step, ``mdf run -o FILE`` still writes them with
that note (exit 130), and result files are written atomically (an interrupt while writing
leaves the previous file intact and no temporary file behind)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import mdf_engine
from mdf_engine import cli
from mdf_engine.interpreter import InterpretedGraph
from mdf_engine.results import atomic_write_text

STOP_AFTER = 3  # evaluate() calls that complete before the simulated Ctrl-C

COUNTER = {
    "m": {
        "graphs": {
            "g": {
                "nodes": {
                    "A": {
                        "parameters": {"c": {"value": "c + 1"}},
                        "output_ports": {"out": {"value": "c"}},
                    },
                }
            }
        }
    }
}


@pytest.fixture
def ctrl_c_on_evaluate(monkeypatch):
    """Make the interpreted backend's evaluate() raise KeyboardInterrupt on call STOP_AFTER+1."""
    real = InterpretedGraph.evaluate
    calls = {"n": 0}

    def evaluate(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > STOP_AFTER:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(InterpretedGraph, "evaluate", evaluate)
    return calls


@pytest.mark.parametrize("record", [["A.out"], None])
def test_run_returns_partial_results(ctrl_c_on_evaluate, record):
    res = mdf_engine.Simulation(COUNTER).run(steps=10, record=record)
    assert not res.completed
    assert res.interrupted_at_step == STOP_AFTER == res.steps
    assert f"last completed step {STOP_AFTER} of 10" in res.note
    assert float(res.outputs["A"]["out"]) == STOP_AFTER
    if record:
        np.testing.assert_array_equal(res.trace("A", "out"), np.arange(1, STOP_AFTER + 1))


def test_completed_run_is_not_marked():
    res = mdf_engine.Simulation(COUNTER).run(steps=4)
    assert res.completed and res.interrupted_at_step is None and res.steps == 4


@pytest.mark.parametrize("suffix", [".csv", ".json", ".npz"])
def test_cli_writes_partial_results_with_a_note(ctrl_c_on_evaluate, tmp_path, capsys, suffix):
    model = tmp_path / "counter.json"
    model.write_text(json.dumps(COUNTER))
    out = tmp_path / f"out{suffix}"
    rc = cli.main(
        ["run", str(model), "--steps", "10", "--record", "A.out", "-o", str(out), "--quiet"]
    )
    err = capsys.readouterr().err
    assert rc == 130
    assert f"last completed step {STOP_AFTER} of 10" in err
    assert "Traceback" not in err
    if suffix == ".csv":
        lines = out.read_text().splitlines()
        assert lines[0] == "time,A.out"
        assert [float(r.split(",")[1]) for r in lines[1 : 1 + STOP_AFTER]] == [1.0, 2.0, 3.0]
        assert lines[-1] == f"# interrupted: last completed step {STOP_AFTER} of 10"
    elif suffix == ".json":
        data = json.loads(out.read_text())
        assert data["interrupted_at_step"] == STOP_AFTER and data["steps"] == STOP_AFTER
        assert data["traces"]["A.out"] == [1, 2, 3]
        assert "last completed step 3" in data["note"]
    else:
        with np.load(out) as z:
            assert int(z["interrupted_at_step"]) == STOP_AFTER
            np.testing.assert_array_equal(z["trace:A.out"], [1, 2, 3])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_interrupt_while_writing_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    path.write_text("old")

    def fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new contents")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_compiled_backend_interrupt_reports_the_steps_done(monkeypatch):
    """Ctrl-C reaches Python only when the jitted loop returns: every step it ran counts."""
    from mdf_engine.backends.compiled import CompiledGraph

    real = CompiledGraph._run_compiled
    state = {"armed": False}

    def run_then_interrupt(self, n, *args, **kwargs):
        real(self, n, *args, **kwargs)
        if n > 0 and state["armed"]:
            raise KeyboardInterrupt

    monkeypatch.setattr(CompiledGraph, "_run_compiled", run_then_interrupt)
    sim = mdf_engine.Simulation(COUNTER, backend="compiled")
    sim.run(steps=2)
    state["armed"] = True
    res = sim.run(steps=5)
    assert sim.runner.is_compiled
    assert not res.completed and res.interrupted_at_step == 5
    assert float(res.outputs["A"]["out"]) == 7.0
