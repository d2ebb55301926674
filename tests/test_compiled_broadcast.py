"""Values that grow by numpy broadcasting over a graph's first steps, on the compiled backend
(issue 22, goal 2; the corpus case is tests/data/wild/neuroml/PyNN_IF_net.mdf.json).

A state variable starts at its ``(2,)`` initial value and becomes ``(2, 2)`` once its Euler
step adds a ``(2, 2)`` parameter. The compiled state holds it as ``(2, 2)`` from the start; the
interpreted backend (the oracle) gives the values it compares with at every step, broadcast to
that shape. Read by something that is not element-wise (a subscript, a sum), the broadcast value
would compute something else: the graph then runs interpreted and the log line says why
(modeci_examples/RNNs.json in the corpus: a number growing into an input's shape, read by the
element-wise ``tanh`` function, compiles).
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.loader import from_dict


def _model(readout: str | dict, initial: object) -> dict:
    node = {
        "parameters": {
            "W": {"value": [[1.0, -2.0], [0.5, 3.0]]},
            "x": {"default_initial_value": initial, "time_derivative": "W - 0.5 * x"},
            "y": readout if isinstance(readout, dict) else {"value": readout},
        },
        "output_ports": {"x": {"value": "x"}, "y": {"value": "y"}},
    }
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"n": node}}}}}


@pytest.mark.parametrize(
    "readout,initial,compiles",
    [
        ("np.exp(-x) + W * x", [1.0, 2.0], True),
        ("x[0] + x[1]", [1.0, 2.0], False),
        # a number growing into the shape (an integer: a float one is a sweepable table entry,
        # whose non-fused Euler step does not compile): its sum is not that of its broadcast
        ("np.sum(x) + W", 1, False),
    ],
)
def test_value_grown_by_broadcasting(readout: str | dict, initial: object, compiles: bool) -> None:
    model = from_dict(_model(readout, initial))
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for k in range(5):
        for sim in sims.values():
            sim.evaluate(time_increment=0.1)
        want, got = sims["interpreted"].outputs["n"], sims["compiled"].outputs["n"]
        for port, w in want.items():
            g = np.asarray(got[port])
            np.testing.assert_array_equal(g, np.broadcast_to(w, g.shape), err_msg=f"{k} {port}")
            if k >= 1 or not compiles:  # (the first step: the interpreter's value is smaller)
                assert g.shape == np.shape(w), port
    runner = sims["compiled"].runner
    assert runner.is_compiled == compiles, runner.fallback_reason
    if not compiles:
        why = "'x' grows by broadcasting in the first steps and is read by an operation"
        assert why in runner.fallback_reason
