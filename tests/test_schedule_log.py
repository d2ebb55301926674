"""The compiled loop's schedule log (issue 22, item 3): a ring buffer written in machine code,
bounded by ``schedule_log`` (so memory does not grow with the trials), decoded only when read,
and off with ``schedule_log=0``. The oracle is the interpreted backend (graph-scheduler's own
schedule): the compiled log holds exactly its most recent time steps."""

from __future__ import annotations

import mdf_engine


def _model() -> dict:
    """A chain A -> B -> C under EveryNCalls/AtPass conditions (a schedule that is not fixed,
    so the compiled loop logs it)."""
    node = lambda nid, inp: {  # noqa: E731
        "id": nid,
        **({"input_ports": [{"id": "i"}]} if inp else {}),
        "parameters": [
            {"id": "x", "value": "x + 1" + (" + i" if inp else ""), "default_initial_value": 0}
        ],
        "output_ports": [{"id": "o", "value": "x"}],
    }
    edges = [
        {"id": f"e{k}", "sender": s, "sender_port": "o", "receiver": r, "receiver_port": "i"}
        for k, (s, r) in enumerate([("A", "B"), ("B", "C")])
    ]
    conds = {
        "node_specific": {
            "B": {"type": "EveryNCalls", "kwargs": {"dependency": "A", "n": 2}},
            "C": {"type": "EveryNCalls", "kwargs": {"dependency": "B", "n": 1}},
        },
        "termination": {
            "environment_state_update": {
                "type": "AfterNCalls",
                "kwargs": {"dependency": "C", "n": 1},
            }
        },
    }
    return {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [node("A", False), node("B", True), node("C", True)],
                "edges": edges,
                "conditions": conds,
            }
        ],
    }


def test_the_log_keeps_the_most_recent_time_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    ref = mdf_engine.Simulation(_model(), backend="interpreted")
    for _ in range(40):
        ref.run(steps=1)
    full = mdf_engine.Simulation(_model(), backend="compiled")
    small = mdf_engine.Simulation(_model(), backend="compiled", schedule_log=50)
    off = mdf_engine.Simulation(_model(), backend="compiled", schedule_log=0)
    for _ in range(40):  # trial by trial: the log is not decoded between trials
        for sim in (full, small, off):
            sim.run(steps=1)
    assert full.runner.mode == "compiled", full.runner.fallback_reason
    want = ref.runner.time_steps
    assert full.runner.time_steps == want
    assert full.runner.order_of_execution == ref.runner.order_of_execution
    kept = small.runner.time_steps
    assert 0 < len(kept) <= 50 and kept == want[-len(kept) :]
    assert small.runner.schedule_truncated and not full.runner.schedule_truncated
    assert small.runner.log.ring.size == 50
    assert off.runner.time_steps == [] and off.runner.schedule_truncated
    for sim in (small, off):
        assert sim.value("C", "x") == ref.value("C", "x")
