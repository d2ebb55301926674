"""Allocations are checked before they are made (issue 18): ONNX ConstantOfShape, Tile, Expand
and Range of a huge size, a huge sweep design and a huge sweep recording are MDFErrors naming
the operation and the limit, raised before any memory is asked for; a step count beyond the
limit names the environment variable that allows more, and that variable works."""

from __future__ import annotations

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError
from mdf_engine.onnx_ops.creation import constantofshape, range_
from mdf_engine.onnx_ops.shape import expand, tile
from mdf_engine.sweep import make_design


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: constantofshape(np.array([100000, 100000, 9])), "ConstantOfShape"),
        (lambda: tile(np.ones((10, 10)), np.array([100000, 100000])), "Tile"),
        (lambda: expand(np.ones((1, 1)), np.array([10**6, 10**6])), "Expand"),
        (lambda: range_(np.array(0), np.array(10**12), np.array(1)), "Range"),
        (lambda: range_(np.array(0.0), np.array(1e12), np.array(1.0)), "Range"),
        (lambda: range_(np.array(0.0), np.array(np.inf), np.array(1.0)), "Range"),
    ],
)
def test_huge_onnx_allocations_are_refused_before_allocating(call, name):
    with pytest.raises(MDFError, match=name):
        call()


def test_small_onnx_allocations_still_work():
    np.testing.assert_array_equal(constantofshape(np.array([2, 3]))[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(range_(np.array(1), np.array(7), np.array(2))[0], [1, 3, 5])


def test_a_huge_sweep_design_is_refused_before_it_is_built():
    with pytest.raises(MDFError, match="MDF_ENGINE_MAX_SWEEP_VALUES"):
        make_design({"A.x": "0:1:100000", "A.y": "0:1:100000"})


def test_the_step_limit_names_its_variable_and_the_variable_raises_it(monkeypatch):
    model = {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {
                        "id": "A",
                        "parameters": [{"id": "x", "value": "x + 1", "default_initial_value": 0}],
                        "output_ports": [{"id": "o", "value": "x"}],
                    }
                ],
            }
        ],
    }
    monkeypatch.setenv("MDF_ENGINE_MAX_STEPS", "10")
    sim = mdf_engine.Simulation(model, backend="interpreted")
    with pytest.raises(MDFError, match="asks for 11 steps.*MDF_ENGINE_MAX_STEPS"):
        sim.run(steps=11)
    with pytest.raises(MDFError, match="MDF_ENGINE_MAX_STEPS"):
        sim.run(duration=1.0, dt=0.01)
    with pytest.raises(MDFError, match="duration"):
        sim.run(duration=float("inf"), dt=0.1)
    monkeypatch.setenv("MDF_ENGINE_MAX_STEPS", "20")
    sim.run(steps=11)
    assert float(sim.value("A", "x")) == 11.0
