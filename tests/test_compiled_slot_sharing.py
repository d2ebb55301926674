"""Slot sharing on the compiled backend (backends/compiled/sharing.py): an output port that is
one of its node's values, and an input port fed by one plain edge under a fixed schedule, live
in the slot of the value they would copy. Every value a user can read afterwards (every input
port, parameter and output port, after every update and after a run of several steps) must be
the interpreted backend's (the oracle), bit for bit, on graphs where a shared slot could leak
a later value: a sender read by several receivers, a receiver whose own values are computed in
place next to the shared input, a node that passes its shared input on, a cycle, and nodes
that run twice per update."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.backends.compiled.layout import output_key, value_key


def _edge(sender: str, receiver: str, sport: str = "o", rport: str = "i") -> dict:
    return {"sender": sender, "receiver": receiver, "sender_port": sport, "receiver_port": rport}


def _model(nodes: dict, edges: dict, conditions: dict | None = None) -> dict:
    graph = {"nodes": nodes, "edges": edges}
    if conditions:
        graph["conditions"] = conditions
    return {"sharing": {"format": "ModECI MDF v0.4", "graphs": {"g": graph}}}


def _node(inputs: dict, params: dict, outputs: dict) -> dict:
    return {
        "input_ports": {k: {"shape": [3]} for k in inputs}
        | {k: v for k, v in inputs.items() if isinstance(v, dict)},
        "parameters": params,
        "output_ports": {k: {"value": v} for k, v in outputs.items()},
    }


def _fan_out() -> dict:
    """A accumulates; B and C both read A (B computes element-wise, C by a product); E passes
    its input on as its output; D reads B, C and E."""
    acc = {"s": {"value": "s + x", "default_initial_value": [0.5, -1.0, 2.0]}}
    x = {"x": {"shape": [3], "default_value": [1.0, 2.0, 0.25]}}
    return _model(
        {
            "A": _node(x, acc, {"o": "s"}),
            "B": _node({"i": {}}, {"q": {"value": "i * 3 + 1"}}, {"o": "q"}),
            "C": _node({"i": {}}, {"q": {"value": "i * i"}, "r": {"value": "q - i"}}, {"o": "r"}),
            "E": _node({"i": {}}, {}, {"o": "i"}),
            "D": _node(
                {"b": {}, "c": {}, "e": {}},
                {"d": {"value": "b - c * e"}},
                {"o": "d", "o2": "b"},
            ),
        },
        {
            "ab": _edge("A", "B"),
            "ac": _edge("A", "C"),
            "ae": _edge("A", "E"),
            "bd": _edge("B", "D", rport="b"),
            "cd": _edge("C", "D", rport="c"),
            "ed": _edge("E", "D", rport="e"),
        },
    )


def _cycle() -> dict:
    """A -> B -> A: B reads A's output of this update, A reads B's of the last one."""
    return _model(
        {
            "A": _node(
                {"i": {"shape": [3], "default_value": [0.0, 1.0, 2.0]}},
                {"s": {"value": "i + 1"}},
                {"o": "s"},
            ),
            "B": _node({"i": {}}, {"t": {"value": "i * 2"}}, {"o": "t"}),
        },
        {"ab": _edge("A", "B"), "ba": _edge("B", "A")},
    )


def _twice() -> dict:
    """_fan_out's graph where every node runs in each of two passes of an update."""
    model = _fan_out()
    graph = model["sharing"]["graphs"]["g"]
    graph["conditions"] = {
        "node_specific": {n: {"type": "Always"} for n in graph["nodes"]},
        "termination": {"environment_state_update": {"type": "AfterNPasses", "kwargs": {"n": 2}}},
    }
    return model


def _values(sim: Simulation, model: dict) -> dict:
    """Every input port, parameter and output port of every node."""
    out = {}
    for nid, node in model["sharing"]["graphs"]["g"]["nodes"].items():
        for group in ("input_ports", "parameters", "output_ports"):
            for name in node.get(group, {}):
                out[nid, name] = np.asarray(sim.value(nid, name))
    return out


def _assert_equal(want: dict, got: dict, when: str) -> None:
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype and g.shape == w.shape, (when, key, g, w)
        np.testing.assert_array_equal(g, w, err_msg=f"{when} {key}")


#: (receiver, input port, sender): ports that read their sender's output slot
FAN_OUT = [("B", "i", "A"), ("C", "i", "A"), ("E", "i", "A"), ("D", "b", "B"), ("D", "e", "E")]


@pytest.mark.parametrize(
    "build, shared, own",
    [
        (_fan_out, FAN_OUT, []),
        (_cycle, [("B", "i", "A")], [("A", "i", "B")]),  # (the edge back keeps its slot)
        (_twice, [], FAN_OUT),  # (a node that runs twice per update)
        ("fed", FAN_OUT, []),  # (A's input from the initializer, read without a pending copy)
    ],
    ids=["fan_out", "cycle", "twice", "fed"],
)
def test_shared_slots_read_as_on_the_interpreter(build, shared, own) -> None:
    fed = build == "fed"
    model = _fan_out() if fed else build()
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for step in range(4):
        init = {"x": np.array([0.5, -2.0, 1.0]) * (step + 1)} if fed else None
        for sim in sims.values():
            sim.evaluate(initializer=init)
        runner = sims["compiled"].runner
        assert runner.mode == "compiled", runner.fallback_reason
        want = _values(sims["interpreted"], model)
        _assert_equal(want, _values(sims["compiled"], model), f"update {step}")
    for sim in sims.values():
        sim.run(steps=3, initializer={"x": np.array([1.0, 2.0, 3.0])} if fed else None)
    _assert_equal(_values(sims["interpreted"], model), _values(sims["compiled"], model), "run")
    # the sharing under test happened: an output is its value's slot (under any schedule) ...
    slots = runner._layout.slots
    assert slots[output_key("A", "o")].index == slots[value_key("A", "s")].index
    # ... and receivers read their sender's slot only where the sender always ran before
    for receiver, port, sender in shared + own:
        same = slots[value_key(receiver, port)].index == slots[output_key(sender, "o")].index
        assert same == ((receiver, port, sender) in shared), (receiver, port)
    if build in (_fan_out, "fed"):  # (E passes on its input: A's slot, as D.e is)
        assert slots[output_key("E", "o")].index == slots[output_key("A", "o")].index
    if fed:  # (the initializer's argument goes straight into A.x, not through its pending)
        source = Path(runner._quiet_fn.py_func.__code__.co_filename).read_text()
        assert f"_put({slots[value_key('A', 'x')].var}, I0)" in source
