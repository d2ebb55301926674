"""Errors found running the ecosystem's real files (tests/data/wild/), each pinned on a small
model: a Threshold on a value of several elements, and LEMS's power ``x^3`` copied into an MDF
expression, are refused in one line naming the field, alike on both backends; the values they
compare where they run come from the corpus oracles (tests/test_wild_*.py)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError

BACKENDS = ("interpreted", "compiled")


def _model(value: object, expr: str, condition: dict | None = None) -> dict:
    out: dict = {"value": "y"}
    if isinstance(value, list):  # what a Threshold reads before the node first runs
        out["shape"] = list(np.shape(value))
    node = {
        "parameters": {"x": {"value": value}, "y": {"value": expr}},
        "output_ports": {"out": out},
    }
    graph: dict = {"nodes": {"A": node}}
    if condition is not None:
        graph["conditions"] = {"termination": {"environment_state_update": condition}}
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": graph}}}


def _threshold(indices: list | None) -> dict:
    kw = {"dependency": "A", "parameter": "out", "threshold": 5, "comparator": ">="}
    if indices is not None:
        kw["indices"] = indices
    return {"type": "Threshold", "kwargs": kw}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("indices", [None, [0]])
def test_a_threshold_on_several_elements_is_refused_in_one_line(backend, indices):
    """graph-scheduler's Threshold takes ``float()`` of the value at ``indices``: a value of
    several elements there has no one number to compare (it raised numpy's TypeError)."""
    model = _model([[1.0, 2.0], [3.0, 4.0]], "x", _threshold(indices))
    with pytest.raises(MDFError, match="Threshold on 'A.out' compares one number") as e:
        Simulation(model, backend=backend).run(steps=1)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_threshold_index_out_of_range_is_refused_in_one_line(backend):
    model = _model([1.0, 2.0], "x", _threshold([5]))
    with pytest.raises(MDFError, match="index 5 of indices") as e:
        Simulation(model, backend=backend).run(steps=1)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lems_power_is_refused_with_a_hint(backend):
    """NeuroMLlite copies LEMS's ``V^3`` (a power) into the file; in MDF ``^`` is Python's
    bitwise xor, which floats do not have."""
    with pytest.raises(MDFError, match=r"'\^' is a bitwise operator .* written '\*\*'") as e:
        Simulation(_model(1.5, "x^3"), backend=backend).run(steps=1)
    assert "parameters.y" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("expr,op", [("x^3", operator.xor), ("x&3", operator.and_)])
def test_bitwise_operators_of_integers_are_pythons(expr, op):
    sim = Simulation(_model(6, expr), backend="interpreted")
    sim.run(steps=1)
    assert sim.value("A", "out") == op(6, 3)
