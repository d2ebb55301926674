"""Values that grow by numpy broadcasting over a graph's first steps: the interpreted backend
runs those steps, then hands its state over to the compiled loop (docs/compiled.md, "Values
that grow by broadcasting").

A state variable starts at its ``(2,)`` initial value (or the number 1) and becomes ``(2, 2)``
once its Euler step or a condition brings in a ``(2, 2)`` parameter (the corpus cases:
NeuroML's PyNN_IF_net and modeci-mdf's RNNs example). The interpreted backend is the oracle:
at every step every output port and parameter has its values, shapes and dtypes, the schedule
log its time steps, and sweeps and seeded runs its numbers; the graph runs compiled after the
hand-over, at the step where the interpreter's sizes stop changing.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.loader import from_dict

WILD = Path(__file__).resolve().parent / "data" / "wild"


def _euler_model(initial: object) -> dict:
    """``x`` grows at its first Euler step (step 2), where ``W`` broadcasts it."""
    node = {
        "parameters": {
            "W": {"value": [[1.0, -2.0], [0.5, 3.0]]},
            "x": {"default_initial_value": initial, "time_derivative": "W - 0.5 * x"},
        },
        "output_ports": {
            "x": {"value": "x"},
            "y": {"value": "np.exp(-x) + W * x"},
            "s": {"value": "np.sum(x)"},  # (a sum differs for a value held pre-grown)
        },
    }
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"n": node}}}}}


def _chain_model(depth: int, scheduled: bool = False, random: bool = False) -> dict:
    """``x`` grows at its first Euler step (step 2); each ``p<i>`` follows ``p<i-1>`` (``p0``
    is ``x``) and, declared before it, sees its value of the step before: ``p<depth>``, the
    output, grows at step ``2 + depth``. With ``scheduled``, a second node runs every second
    call of the first (EveryNCalls); with ``random``, ``x`` adds an unseeded normal draw."""
    params: dict[str, Any] = {
        "gain": {"value": 0.5},
        "W": {"value": [[0.5, -0.25], [0.75, 0.5]]},
        "t": {"default_initial_value": 0, "time_derivative": "1"},
    }
    for i in range(depth, 0, -1):
        params[f"p{i}"] = {
            "default_initial_value": [1.0, -1.0],
            "time_derivative": f"p{i - 1} - p{i}",
        }
    params["p0"] = {
        "default_initial_value": [1.0, 2.0],
        "time_derivative": "gain * W - 0.5 * p0" + (" + r" if random else ""),
    }
    out = f"p{depth}"
    node: dict[str, Any] = {
        "parameters": params,
        "output_ports": {
            "y": {"value": out},
            "s": {"value": f"np.sum({out})"},
            "t": {"value": "t"},
        },
    }
    if random:
        node["functions"] = {"r": {"function": "onnx::RandomNormal", "args": {"shape": [2]}}}
        node["output_ports"]["r"] = {"value": "r"}
    nodes = {"n": node}
    graph: dict[str, Any] = {"nodes": nodes}
    if scheduled:
        nodes["m"] = {
            "input_ports": {"i": {}},
            "parameters": {"z": {"value": "2 * i"}},
            "output_ports": {"z": {"value": "z"}},
        }
        graph["edges"] = {
            "e": {"sender": "n", "sender_port": "s", "receiver": "m", "receiver_port": "i"}
        }
        graph["conditions"] = {
            "node_specific": {"m": {"type": "EveryNCalls", "kwargs": {"dependency": "n", "n": 2}}}
        }
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": graph}}}


def _values(sim: Simulation) -> dict[tuple[str, str], Any]:
    """Every output port and parameter value of ``sim``."""
    out = {(n, p): v for n, ports in sim.outputs.items() for p, v in ports.items()}
    for node in sim.graph.nodes:
        for par in node.parameters:
            out[(node.id, "par " + par.id)] = sim.value(node.id, par.id)
    return out


def _same(got: Any, want: Any, what: str) -> None:
    """Equal values, shapes and dtypes (a Python number as numpy holds it)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != interpreted {w.shape}"
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != interpreted {w.dtype}"
    np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=what)


def _settles(model: Any, dt: float, steps: int = 20) -> int:
    """The oracle's hand-over step: the last step at which an interpreted value's size
    changed."""
    sim = Simulation(model, backend="interpreted")
    last, before = 0, None
    for step in range(1, steps + 1):
        sim.run(steps=1, dt=dt)
        sizes = {k: np.size(v) for k, v in _values(sim).items() if v is not None}
        if before is not None and any(before.get(k, s) != s for k, s in sizes.items()):
            last = step
        before = sizes
    return last


def _step_by_step(model: Any, dt: float, steps: int, **kw: Any) -> dict[str, Simulation]:
    """Both backends one step per call, every value equal after every step."""
    sims = {b: Simulation(model, backend=b, **kw) for b in ("interpreted", "compiled")}
    for k in range(steps):
        for sim in sims.values():
            sim.run(steps=1, dt=dt)
        want, got = _values(sims["interpreted"]), _values(sims["compiled"])
        assert got.keys() == want.keys()
        for key, w in want.items():
            _same(got[key], w, f"step {k + 1} {key}")
    return sims


@pytest.mark.parametrize(
    "model,dt",
    [
        (_euler_model([1.0, 2.0]), 0.1),
        (_euler_model(1), 0.1),
        (_chain_model(1), 0.5),
        (_chain_model(3), 0.5),
        (_chain_model(6), 0.5),
    ],
    ids=["euler-vector", "euler-number", "chain-step3", "chain-step5", "chain-step8"],
)
def test_a_growing_value_is_handed_over_where_it_settles(model, dt, caplog) -> None:
    model = from_dict(model)
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        sims = _step_by_step(model, dt, 14)
    runner = sims["compiled"].runner
    assert runner.is_compiled and runner.mode == "compiled", runner.fallback_reason
    k = _settles(model, dt)
    assert k >= 2 and runner.first_steps.steps == k
    said = [
        r.getMessage() for r in caplog.records if "compiled loop runs the rest" in r.getMessage()
    ]
    assert len(said) == 1 and f"ran the first {k} steps" in said[0], said
    assert said[0].startswith("compiled backend: graphs.g.nodes.n.") and "(2, 2)" in said[0]
    # the compiled loop ran the rest: its state holds the values now
    assert runner.evaluations == 14 and runner.handover is None


@pytest.mark.parametrize("k", [1, 3])
def test_the_schedule_carries_on_after_the_hand_over(k) -> None:
    """EveryNCalls counts, the time steps of every update and the whole log are the
    interpreter's, whether evaluate() or run() drives the graph."""
    model = from_dict(_chain_model(k, scheduled=True))
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for step in range(9):
        for sim in sims.values():  # (a first run() gives the warm-up its dt)
            if step == 0:
                sim.run(steps=1, dt=1.0)
            else:
                sim.evaluate(time_increment=1.0)
        i, c = sims["interpreted"], sims["compiled"]
        if step:
            assert c.time_steps == i.time_steps, step
        for key, w in _values(i).items():
            _same(_values(c)[key], w, f"step {step + 1} {key}")
    for sim in sims.values():
        sim.run(steps=7, dt=1.0)
    i, c = sims["interpreted"], sims["compiled"]
    assert c.runner.mode == "compiled" and c.runner.handover is None
    assert c.order_of_execution == i.order_of_execution
    assert c.runner.time_steps == i.runner.time_steps
    for key, w in _values(i).items():
        _same(_values(c)[key], w, f"after run {key}")


def test_a_run_recording_traces_and_a_seeded_random_draw() -> None:
    """A seeded run draws the same numbers on both backends: the interpreter's first steps
    and the compiled loop after them take them from one stream, in the interpreter's order."""
    model = from_dict(_chain_model(2, random=True))
    res = {
        b: Simulation(model, backend=b, seed=11).run(steps=12, dt=1.0, record=["n.y", "n.s", "n.r"])
        for b in ("interpreted", "compiled")
    }
    for key, trace in res["interpreted"].traces.items():
        got = res["compiled"].traces[key]
        assert len(got) == len(trace) == 12
        for step, (g, w) in enumerate(zip(got, trace)):
            _same(g, w, f"{key} step {step + 1}")
    # the draws differ from step to step (a fresh draw per step, not a repeated seed)
    assert not np.array_equal(res["compiled"].traces["n.r"][-1], res["compiled"].traces["n.r"][-2])


def test_a_sweep_hands_every_parameter_set_over() -> None:
    """Each parameter set's first steps run on an interpreter of its own values; the
    recorded sum differs from the sum of a value held grown from the start."""
    pytest.importorskip("xarray")
    from mdf_engine.sweep import sweep

    model = _chain_model(3)
    args = {"steps": 10, "dt": 1.0, "record": ["n.s", "n.t"]}
    got = sweep(copy.deepcopy(model), {"n.gain": [0.25, 0.5, 2.0]}, backend="compiled", **args)
    want = sweep(copy.deepcopy(model), {"n.gain": [0.25, 0.5, 2.0]}, backend="interpreted", **args)
    for key in ("n.s", "n.t"):
        np.testing.assert_allclose(got[key].values, want[key].values, rtol=1e-12, atol=0)
    assert not np.allclose(want["n.s"].values[:, 0], want["n.s"].values[:, -1])
    # keeping the final values only: the same last row
    final = sweep(copy.deepcopy(model), {"n.gain": [0.25, 0.5, 2.0]}, keep="final", **args)
    np.testing.assert_allclose(final["n.s"].values[:, -1], want["n.s"].values[:, -1], rtol=1e-12)


def test_a_cached_start_hands_over_too() -> None:
    """The hand-over step is in the compile cache's record."""
    model = from_dict(_euler_model([1.0, 2.0]))
    _step_by_step(model, 0.1, 3)  # (compiles, or finds the record)
    sims = _step_by_step(model, 0.1, 6)
    runner = sims["compiled"].runner
    assert runner.origin == "cache" and runner.first_steps is not None
    assert runner.mode == "compiled" and runner.handover is None


def test_a_step_without_dt_after_the_hand_over_is_handed_back_not_broadcast() -> None:
    """Without a time step the interpreter gives ``x`` its ``(2,)`` initial value again; the
    compiled slot holds ``(2, 2)``: the interpreted backend replays the compiled steps and runs
    it (handback.py), with its values and shapes."""
    sims = {}
    for backend in ("interpreted", "compiled"):
        sim = sims[backend] = Simulation(from_dict(_euler_model([1.0, 2.0])), backend=backend)
        sim.run(steps=5, dt=0.1)
        if backend == "compiled":
            assert sim.runner.mode == "compiled" and sim.runner.handover is None
        sim.evaluate()
    assert "another shape" in sims["compiled"].runner.fallback_reason
    got, want = (np.asarray(sims[b].value("n", "x")) for b in ("compiled", "interpreted"))
    assert got.shape == want.shape == (2,)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "path,dt",
    [("neuroml/PyNN_IF_net.mdf.json", 5e-05), ("modeci_examples/RNNs.json", 0.01)],
)
def test_the_corpus_files_equal_the_interpreter_at_every_step(path, dt) -> None:
    sims = _step_by_step(str(WILD / path), dt, 10)
    runner = sims["compiled"].runner
    assert runner.mode == "compiled" and runner.handover is None
    assert runner.first_steps.steps == _settles(str(WILD / path), dt, 8)
