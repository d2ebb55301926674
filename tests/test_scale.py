"""Large generated graphs (``tests/scale_models.py``: chains, fan-out/fan-in, many small cells
with conditions, ONNX-like DAGs) give the oracles' schedules and values:

* the engine's own scheduler, which the interpreted backend uses for graphs of 1,000 nodes or
  more (:mod:`mdf_engine.schedulers.choice`), against graph-scheduler on the same interpreter;
* the interpreted backend against modeci-mdf's reference engine;
* AllHaveRun over many nodes (its code counts the nodes that have run: ``codegen.all_ran``)
  in the own scheduler and the compiled loop, against graph-scheduler;
* the consideration queue (Kahn's levels) against graph-scheduler's own.

No timing is asserted (benchmarks/scale_speed.py measures them)."""

from __future__ import annotations

import numpy as np
import pytest
import scale_models
from reference_engine import reference_run

import mdf_engine
from mdf_engine.interpreter import InterpretedGraph
from mdf_engine.loader import from_dict
from mdf_engine.plan import plan_graph
from mdf_engine.schedulers.choice import OWN_FROM_NODES, use_own_scheduler
from mdf_engine.schedulers.codegen import ALL_RAN_TERMS
from mdf_engine.schedulers.own import OwnScheduler

pytestmark = pytest.mark.filterwarnings("ignore:.*as its owner:UserWarning")


def _many_conditions(n: int) -> dict:
    """Cells, plus nodes whose conditions read more nodes than ALL_RAN_TERMS: one waits for
    every integrator in the update, one for every stimulus in the pass, and the update ends
    when a chosen few of the integrators (more than ALL_RAN_TERMS) have run twice."""
    d = scale_models.cells(n)
    g = next(iter(d.values()))["graphs"]["g"]
    cells = n // 2
    many = ALL_RAN_TERMS + 4
    assert cells > many
    g["nodes"]["all_v"] = {"parameters": {"c": {"default_initial_value": 0, "value": "c + 1"}}}
    g["nodes"]["all_s"] = {"parameters": {"c": {"default_initial_value": 0, "value": "c + 1"}}}
    cs = g["conditions"]
    cs["node_specific"]["all_v"] = {
        "type": "AllHaveRun",
        "kwargs": {"dependencies": [f"v{k}" for k in range(cells)]},
    }
    cs["node_specific"]["all_s"] = {
        "type": "AllHaveRun",
        "kwargs": {"dependencies": [f"s{k}" for k in range(many)], "time_scale": "PASS"},
    }
    ends = [{"type": "AfterNCalls", "kwargs": {"dependency": f"v{k}", "n": 2}} for k in range(many)]
    cs["termination"] = {"environment_state_update": {"type": "All", "kwargs": {"args": ends}}}
    return d


def _interpreted(d: dict, own: bool, steps: int) -> InterpretedGraph:
    model = from_dict(d)
    interp = InterpretedGraph(plan_graph(model, model.graphs[0]), own_scheduler=own)
    assert isinstance(interp.scheduler, OwnScheduler) == own
    for _ in range(steps):
        interp.evaluate()
    return interp


def _assert_same_values(a: InterpretedGraph, b: InterpretedGraph) -> None:
    outs_a, outs_b = a.outputs(), b.outputs()
    assert outs_a.keys() == outs_b.keys()
    for nid, ports in outs_a.items():
        for pid, v in ports.items():
            np.testing.assert_array_equal(v, outs_b[nid][pid], err_msg=f"{nid}.{pid}")


LARGE = [
    ("chain", scale_models.chain(600), 2),
    ("fan", scale_models.fan(600), 2),
    ("cells", scale_models.cells(600), 3),
    ("dag", scale_models.dag(600), 2),
    ("many_conditions", _many_conditions(200), 3),
]


@pytest.mark.parametrize("d, steps", [c[1:] for c in LARGE], ids=[c[0] for c in LARGE])
def test_own_scheduler_equals_graph_scheduler_on_large_graphs(d, steps):
    ours = _interpreted(d, True, steps)
    oracle = _interpreted(d, False, steps)
    queue = [{str(n) for n in cs} for cs in ours.scheduler.consideration_queue]
    assert queue == [{str(n) for n in cs} for cs in oracle.scheduler.consideration_queue]
    assert ours.time_steps == oracle.time_steps
    assert ours.order_of_execution == oracle.order_of_execution
    _assert_same_values(ours, oracle)


REFERENCE = ["chain", "fan", "cells", "dag"]


@pytest.mark.parametrize("family", REFERENCE)
def test_large_graphs_against_the_reference_engine(family, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "own")
    d = scale_models.FAMILIES[family](100 if family == "dag" else 200)
    ref = reference_run(d, 3)
    sim = mdf_engine.Simulation(d, backend="interpreted")
    sim.run(steps=3)
    assert isinstance(sim.runner.scheduler, OwnScheduler)
    assert sim.runner.time_steps == ref["time_steps"]
    # (the reference engine runs onnx:: operators in onnxruntime, in float32)
    rtol, atol = (1e-5, 1e-6) if family == "dag" else (1e-12, 0.0)
    for nid, ports in ref["outputs"].items():
        for pid, v in ports.items():
            np.testing.assert_allclose(
                np.asarray(sim.outputs[nid][pid], float), np.asarray(v, float), rtol=rtol, atol=atol
            )


def test_interpreted_backend_picks_the_own_scheduler_for_large_graphs(monkeypatch):
    monkeypatch.delenv("MDF_ENGINE_SCHEDULER", raising=False)
    assert not use_own_scheduler(OWN_FROM_NODES - 1)
    assert use_own_scheduler(OWN_FROM_NODES)
    big = mdf_engine.Simulation(scale_models.chain(OWN_FROM_NODES), backend="interpreted")
    assert isinstance(big.runner.scheduler, OwnScheduler)
    small = mdf_engine.Simulation(scale_models.chain(20), backend="interpreted")
    assert not isinstance(small.runner.scheduler, OwnScheduler)
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "graph-scheduler")
    assert not use_own_scheduler(10**6)
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "own")
    assert use_own_scheduler(2)
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "fastest")
    with pytest.raises(mdf_engine.MDFError, match="MDF_ENGINE_SCHEDULER"):
        use_own_scheduler(2)


def test_compiled_loop_counts_many_nodes_as_graph_scheduler(monkeypatch):
    """The compiled loop's AllHaveRun over many nodes (graph-scheduler's default end of an
    update, over every node) runs graph-scheduler's time steps and the interpreter's values
    (node conditions over many nodes: the own scheduler's test above, the same code)."""
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "graph-scheduler")
    d = scale_models.cells(2 * (ALL_RAN_TERMS + 2))
    oracle = mdf_engine.Simulation(d, backend="interpreted")
    compiled = mdf_engine.Simulation(d, backend="compiled")
    oracle.run(steps=4)
    compiled.run(steps=4)
    assert compiled.runner.fallback_reason is None
    assert compiled.order_of_execution == oracle.order_of_execution
    for nid, ports in oracle.outputs.items():
        for pid, v in ports.items():
            np.testing.assert_array_equal(compiled.outputs[nid][pid], v, err_msg=f"{nid}.{pid}")


def test_compiled_backend_leaves_a_graph_of_too_many_nodes_interpreted(monkeypatch, caplog):
    """Beyond MDF_ENGINE_COMPILE_MAX_NODES the graph runs interpreted at once, saying why."""
    monkeypatch.setenv("MDF_ENGINE_COMPILE_MAX_NODES", "30")
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "graph-scheduler")
    d = scale_models.cells(40)
    oracle = mdf_engine.Simulation(d, backend="interpreted")
    oracle.run(steps=3)
    # (its interpreter runs as the interpreted backend would: here, on the own scheduler)
    monkeypatch.setenv("MDF_ENGINE_SCHEDULER", "own")
    with caplog.at_level("WARNING", logger="mdf_engine"):
        sim = mdf_engine.Simulation(d, backend="compiled")
        sim.run(steps=3)
    why = sim.runner.fallback_reason
    assert "40 nodes" in why and "MDF_ENGINE_COMPILE_MAX_NODES" in why
    assert why in caplog.text
    assert isinstance(sim.runner.interp.scheduler, OwnScheduler)
    assert sim.order_of_execution == oracle.order_of_execution
    for nid, ports in oracle.outputs.items():
        for pid, v in ports.items():
            np.testing.assert_array_equal(sim.outputs[nid][pid], v, err_msg=f"{nid}.{pid}")


def test_a_large_graph_left_to_graph_scheduler_says_so(monkeypatch, caplog):
    """A condition the own scheduler does not run (absolute time) keeps graph-scheduler,
    with a log line saying that a large graph is slow there (not hung)."""
    monkeypatch.delenv("MDF_ENGINE_SCHEDULER", raising=False)
    d = scale_models.chain(OWN_FROM_NODES)
    g = next(iter(d.values()))["graphs"]["g"]
    g["conditions"] = {"node_specific": {"c0": {"type": "TimeInterval", "kwargs": {"repeat": 1}}}}
    with caplog.at_level("WARNING", logger="mdf_engine"):
        sim = mdf_engine.Simulation(d, backend="interpreted")
    assert not isinstance(sim.runner.scheduler, OwnScheduler)
    assert f"this {OWN_FROM_NODES}-node graph" in caplog.text
