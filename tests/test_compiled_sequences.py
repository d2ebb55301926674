"""Tuples and lists of fixed shape on the compiled backend (issue 22, goal 2).

PsyNeuLink's exports hold lists (``[port_a, port_b]`` input combinations) and tuples of mixed
shapes (the FitzHugh-Nagumo integrator's ``(v, w, time)``): they compile whole, and every
trial's outputs equal the interpreted backend's (whose values tests/test_pnl_models.py checks
against PsyNeuLink's stored runs).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import one_node
from pnl_runs import trial_inputs

import mdf_engine
from mdf_engine import Simulation

DATA = Path(__file__).resolve().parent / "data" / "pnl"


def _trials(name: str):
    exp = json.loads((DATA / f"{name}.expected.json").read_text())
    for t in range(len(exp["trials"])):
        yield trial_inputs(exp, t)


@pytest.mark.parametrize("name", ["fhn", "branching", "stroop"])
def test_pnl_sequences_compile_and_equal_interpreted(name):
    model = mdf_engine.load(str(DATA / f"{name}.json"))
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for init in _trials(name):
        for sim in sims.values():
            sim.evaluate(initializer=init)
        want, got = sims["interpreted"].outputs, sims["compiled"].outputs
        for node, ports in want.items():
            for port, v in ports.items():
                np.testing.assert_allclose(
                    np.ravel(got[node][port]),
                    np.ravel(v),
                    rtol=1e-12,
                    atol=0,
                    err_msg=f"{name} {node}.{port}",
                )
    runner = sims["compiled"].runner
    assert runner.mode == "compiled", runner.fallback_reason


def _model(value: str, extra: dict | None = None) -> dict:
    params = {
        "x": {"value": "x + 1", "default_initial_value": 0.5},
        "v": {"value": "[x, 2 * x]"},
        "u": {"value": "(v, 3 * x)"},
        "o": {"value": value},
        **(extra or {}),
    }
    return one_node(params)


def test_tuple_and_list_values_read_back_as_the_interpreter_holds_them():
    sims = {
        b: Simulation(_model("u[0][1] * v[0] + u[1]"), backend=b)
        for b in ("interpreted", "compiled")
    }
    for sim in sims.values():
        sim.run(steps=6)
    assert sims["compiled"].runner.mode == "compiled", sims["compiled"].runner.fallback_reason
    for name in ("x", "v", "u", "o"):
        want, got = sims["interpreted"].value("n", name), sims["compiled"].value("n", name)
        if isinstance(want, (list, tuple)):
            assert type(got) is type(want) and len(got) == len(want), name
        np.testing.assert_array_equal(
            np.hstack([np.ravel(g) for g in got]) if isinstance(got, (list, tuple)) else got,
            np.hstack([np.ravel(w) for w in want]) if isinstance(want, (list, tuple)) else want,
        )


@pytest.mark.parametrize(
    "value, why",
    [
        ("v + v", "sequence is used"),  # list concatenation, not element-wise addition
        # a tuple of mixed shapes indexed by a changing integer: the value's shape alternates
        ("u[int(x) % 2]", "from step to step"),
    ],
)
def test_what_cannot_compile_names_itself(value, why, caplog):
    sims = {b: Simulation(_model(value), backend=b) for b in ("interpreted", "compiled")}
    with caplog.at_level("WARNING", logger="mdf_engine"):
        for sim in sims.values():
            sim.run(steps=3)
    runner = sims["compiled"].runner
    assert runner.mode == "interpreted"
    assert why in runner.fallback_reason
    assert "parameters.o" in runner.fallback_reason or "ports.out" in runner.fallback_reason
    assert why in caplog.text
    np.testing.assert_array_equal(
        np.ravel(sims["compiled"].value("n", "o")), np.ravel(sims["interpreted"].value("n", "o"))
    )


def test_element_loops_over_arrays_of_two_axes_equal_interpreted():
    """A value over (2, 3) arrays is computed element by element over their flat view."""
    y = {"default_initial_value": [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]], "value": "y * 0.5 + 1"}
    model = one_node({"y": y}, "np.exp(-y) * y - 2")
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for sim in sims.values():
        sim.run(steps=7)
    assert sims["compiled"].runner.mode == "compiled"
    np.testing.assert_allclose(
        sims["compiled"].outputs["n"]["out"],
        sims["interpreted"].outputs["n"]["out"],
        rtol=1e-12,
        atol=0,
    )
