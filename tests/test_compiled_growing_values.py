"""Values that grow by numpy broadcasting over a graph's first steps are not compiled.

A state variable starts at its ``(2,)`` initial value (or the number 1) and becomes ``(2, 2)``
once its Euler step adds a ``(2, 2)`` parameter (the corpus cases: NeuroML's PyNN_IF_net and
modeci-mdf's RNNs example). A compiled slot has one shape, while the interpreted backend (the
oracle) shows the smaller value in the first steps: the graph runs interpreted, the log line
names the value, and every output equals the interpreter's, shape included, at every step.
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.loader import from_dict


def _model(initial: object) -> dict:
    node = {
        "parameters": {
            "W": {"value": [[1.0, -2.0], [0.5, 3.0]]},
            "x": {"default_initial_value": initial, "time_derivative": "W - 0.5 * x"},
        },
        "output_ports": {"x": {"value": "x"}, "y": {"value": "np.exp(-x) + W * x"}},
    }
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"n": node}}}}}


@pytest.mark.parametrize("initial", [[1.0, 2.0], 1])
def test_a_value_growing_by_broadcasting_runs_interpreted(initial: object) -> None:
    model = from_dict(_model(initial))
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for k in range(4):
        for sim in sims.values():
            sim.run(steps=1, dt=0.1)  # (the first without a time step)
        want, got = sims["interpreted"].outputs["n"], sims["compiled"].outputs["n"]
        for port, w in want.items():
            assert np.shape(got[port]) == np.shape(w), f"{k} {port}"
            np.testing.assert_array_equal(got[port], w, err_msg=f"{k} {port}")
    runner = sims["compiled"].runner
    assert not runner.is_compiled
    why = runner.fallback_reason
    assert why.startswith("graphs.g.nodes.n.") and "changes its shape from" in why, why
    assert "to (2, 2) in the first steps" in why, why
