"""A schedule the compiled backend cannot compile (here NWhen) stays with graph-scheduler, which
calls the jitted node functions: same time steps and values as the interpreted backend, a log
line naming the condition, and the same errors."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mdf_engine


def _model(overflow: bool = False) -> dict:
    growth = "x * 1e200" if overflow else "x + i"
    nodes = {
        "A": {
            "input_ports": {"drive": {"shape": [3]}},
            "parameters": {"count": {"value": "count + 1"}, "level": {"value": "level + drive"}},
            "output_ports": {"out": {"value": "level"}, "n": {"value": "count"}},
        },
        "B": {
            "input_ports": {"i": {"shape": [3]}},
            "parameters": {"x": {"value": growth, "default_initial_value": 1.0}},
            "output_ports": {"out": {"value": "x"}},
        },
        "C": {
            "input_ports": {"i": {"shape": [3]}},
            "parameters": {"y": {"value": "sum(i)"}},
            "output_ports": {"out": {"value": "y"}},
        },
    }
    edges = {
        "ab": {"sender": "A", "sender_port": "out", "receiver": "B", "receiver_port": "i"},
        "bc": {"sender": "B", "sender_port": "out", "receiver": "C", "receiver_port": "i"},
    }
    conditions = {
        "node_specific": {
            "B": {
                "type": "NWhen",
                "kwargs": {
                    "n": 3,
                    "condition": {"type": "EveryNCalls", "kwargs": {"dependency": "A", "n": 1}},
                },
            },
            "C": {
                "type": "Threshold",
                "kwargs": {
                    "dependency": "A",
                    "parameter": "count",
                    "threshold": 2,
                    "comparator": ">=",
                },
            },
        },
        "termination": {
            "environment_state_update": {
                "type": "AfterNCalls",
                "kwargs": {"dependency": "A", "n": 2},
            }
        },
    }
    return {"m": {"graphs": {"g": {"nodes": nodes, "edges": edges, "conditions": conditions}}}}


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    return tmp_path


def test_node_by_node_matches_interpreted(cache, caplog):
    init = {"drive": np.array([0.5, 1.0, -2.0])}
    a = mdf_engine.Simulation(_model())
    a.run(steps=6, initializer=init)
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        b = mdf_engine.Simulation(_model(), backend="compiled")
        b.run(steps=6, initializer=init)
    assert b.runner.mode == "node by node"
    assert "NWhen" in b.runner.fallback_reason
    assert any(
        "NWhen" in r.getMessage() and "node functions" in r.getMessage() for r in caplog.records
    )
    assert b.runner.time_steps == a.runner.time_steps
    assert any("B" in ts for ts in a.runner.time_steps[6:])  # B ran after the warm-up too
    for nid, name in [
        ("A", "level"),
        ("A", "count"),
        ("B", "x"),
        ("B", "i"),
        ("C", "y"),
        ("C", "out"),
        ("A", "n"),
    ]:
        np.testing.assert_allclose(
            np.asarray(b.value(nid, name), dtype=float),
            np.asarray(a.value(nid, name), dtype=float),
            rtol=1e-12,
            atol=0,
            err_msg=f"{nid}.{name}",
        )


def test_node_by_node_from_the_cache(cache):
    init = {"drive": np.array([0.5, 1.0, -2.0])}
    first = mdf_engine.Simulation(_model(), backend="compiled")
    first.run(steps=4, initializer=init)
    second = mdf_engine.Simulation(_model(), backend="compiled")
    second.run(steps=4, initializer=init)
    assert second.runner.origin == "cache" and second.runner.mode == "node by node"
    for nid, ports in first.outputs.items():
        for port, v in ports.items():
            assert np.array_equal(second.outputs[nid][port], v), f"{nid}.{port}"
    assert second.runner.time_steps == first.runner.time_steps


def test_node_by_node_check_finite_names_parameter_and_step(cache):
    def message(backend: str) -> str:
        sim = mdf_engine.Simulation(_model(overflow=True), backend=backend, check_finite=True)
        with pytest.raises(mdf_engine.MDFError) as e:
            sim.run(steps=10, initializer={"drive": np.ones(3)})
        return str(e.value)

    expected = message("interpreted")
    assert "non-finite value in parameter 'x'" in expected
    assert message("compiled") == expected
