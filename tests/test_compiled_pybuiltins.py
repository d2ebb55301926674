"""Python's list display and builtin ``max``/``min`` over arrays on the compiled backend equal
the interpreted backend (issue 22, goal 2): ``numpy.array([port_a, port_b])`` of PsyNeuLink's
input combinations, and the clipping of its DriftDiffusionIntegrator,
``min(max(unclipped, -1 * threshold), threshold)`` over arrays of one element whose shapes
differ (see docs/compiled.md, "Lists and builtin max/min")."""

from __future__ import annotations

import numpy as np
import pytest
from mdf_dicts import one_node

from mdf_engine import Simulation
from mdf_engine.errors import MDFError


def _model(value: str) -> dict:
    params = {
        "x": {"value": "x + 1", "default_initial_value": 0.0},
        "a": {"value": "a + 1", "default_initial_value": [[0.0]]},
        "t": {"value": [3.5]},
        "v": {"value": "x * np.array([1.0, -2.0, 0.5])"},
        "o": {"value": value},
    }
    return one_node(params)


@pytest.mark.parametrize(
    "value",
    [
        "np.array([v, 2 * v, v - 1])",  # a list of arrays of one shape: stacked
        "numpy.array([v, v]) @ v",
        "[x, 2 * x, 3]",  # numbers: a 1-D array
        "np.concatenate([v, v * x])",
        "np.stack([v, v])[1]",
        "min(max(a - 4, -1 * t), t)",  # the DDI's clipping: (1, 1) against (1,)
        "max(a, x - 1.5) + min(t, x)",
        "max(x, float('nan')) + min(2, x)",
        "max(float('nan'), x, 1.0)",
        "max(a - 2, 0, t - 2)",
    ],
)
def test_lists_and_builtin_max_min_equal_interpreted(value):
    sims = {b: Simulation(_model(value), backend=b) for b in ("interpreted", "compiled")}
    for step in range(8):
        for sim in sims.values():
            sim.run(steps=1)
        want, got = sims["interpreted"].value("n", "o"), sims["compiled"].value("n", "o")
        # a value max/min gives is the winning argument, in its dtype and shape
        # (backends/compiled/variants.py); inside a larger expression only its numbers
        np.testing.assert_array_equal(np.ravel(got), np.ravel(want), err_msg=f"step {step}")
        if value.startswith(("min", "max")) or "max" not in value:
            assert np.shape(got) == np.shape(want), f"step {step}"
            assert np.asarray(got).dtype == np.asarray(want).dtype, f"step {step}"
    assert sims["compiled"].runner.mode == "compiled", sims["compiled"].runner.fallback_reason


@pytest.mark.parametrize("value", ["max(v, x)", "np.array([v, a])"])
def test_what_numpy_refuses_is_refused_alike(value):
    """A max of an array of three elements (its truth is ambiguous), a list of arrays of
    different shapes: an MDFError on both backends."""
    for backend in ("interpreted", "compiled"):
        with pytest.raises(MDFError):
            Simulation(_model(value), backend=backend).run(steps=3)
