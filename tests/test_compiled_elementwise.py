"""Element-wise expressions on the compiled backend: an expression over 1-D arrays of one shape
(and scalars) is computed element by element in a loop instead of as whole-array temporaries.

Checks (a) which expressions count as element-wise (``expressions.to_element_source``), and
(b) that models whose parameters and output ports take the loop give the interpreted backend's
values (the oracle; rtol 1e-12, NaN and inf in the same places), including Euler steps with
conditions, comparisons used as numbers, division by zero, and shapes that must not take it.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.expressions import parse, to_element_source

ARRAYS = {"v": "a0[i_]", "w": "a1[i_]"}
SCALARS = {"tau": "s0", "k": "s1"}


def _element(name: str):
    return ARRAYS.get(name) or SCALARS.get(name)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("v + w * tau", "(a0[i_] + (a1[i_] * s0))"),
        ("-v / tau", "((-a0[i_]) / s0)"),
        ("exp(-v) + np.tanh(w) - math.pi", "((np.exp((-a0[i_])) + np.tanh(a1[i_])) - 3.14159"),
        ("(v > k) * 2.0", "((a0[i_] > s1) * 2.0)"),
        ("np.maximum(v, 0) ** 2", "(np.maximum(a0[i_], 0) ** 2)"),
        ("abs(v) + pow(w, 2)", "(abs(a0[i_]) + (a1[i_] ** 2))"),
    ],
)
def test_element_wise_expressions_are_written_per_element(text: str, expected: str):
    src = to_element_source(parse(text), _element, repr)
    assert src is not None and src.startswith(expected)


@pytest.mark.parametrize(
    "text",
    [
        "u + v",  # u has another shape
        "v @ w",  # a matrix product
        "np.sum(v) + w",  # a reduction
        "v[0] + w",  # indexing
        "np.where(v > 0, v, w)",  # not in the element-wise list
        "0 < v < k",  # a chained comparison (an error for arrays in numpy)
        "v if k else w",  # a Python conditional
        "v and w",
        "[1.0, 2.0] + v",
        "np.exp",  # a function named, not called
        "linear(v, slope=k)",  # a registered function
        "np.round(v, decimals=1)",
    ],
)
def test_other_expressions_are_not_element_wise(text: str):
    expr = parse(text, functions={"linear": abs})  # any callable: only the name matters here
    assert to_element_source(expr, _element, repr) is None


def _model(n: int = 7) -> dict:
    """A vector population: Euler steps with two conditions (the second wins), an element-wise
    stateful value, outputs that compare, divide by zero and mix shapes."""
    rng = np.random.default_rng(3)
    drive = (rng.random(n) * 4 - 1).tolist()
    return {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "src": {
                            "parameters": {"I": {"value": drive}},
                            "output_ports": {"out": {"value": "I"}},
                        },
                        "pop": {
                            "input_ports": {"inp": {"shape": [n]}},
                            "parameters": {
                                "tau": {"value": 3.0},
                                "v": {
                                    "default_initial_value": [0.25] * n,
                                    "time_derivative": "(-v + inp * 2) / tau + np.sin(v)",
                                    "conditions": [
                                        {"id": "hi", "test": "v > 1.2", "value": "v - 1"},
                                        {"id": "lo", "test": "v < -0.5", "value": "inp * 0"},
                                    ],
                                },
                                "acc": {
                                    "default_initial_value": 0.0,
                                    "value": "acc + (v > 0) * np.exp(-v)",
                                },
                                "M": {
                                    "value": np.arange(2 * n, dtype=float).reshape(2, n).tolist()
                                },
                                # a product that reads its own slot: it must not be written in place
                                "Q": {"value": [[0.5, -0.25], [0.75, 0.5]]},
                                "z": {"default_initial_value": [1.0, -2.0], "value": "Q @ z"},
                            },
                            "output_ports": {
                                "ratio": {"value": "v / (v - v)"},  # x/0: inf
                                "nan": {"value": "(v - v) / (v - v)"},  # 0/0: nan
                                "flag": {"value": "(v > 0.5) * 1.0 + acc"},
                                "proj": {
                                    "value": "M @ v"
                                },  # not element-wise: np.dot into the port
                                "zz": {"value": "z"},
                                "copy": {"value": "v"},
                            },
                        },
                    },
                    "edges": {
                        "e": {
                            "sender": "src",
                            "sender_port": "out",
                            "receiver": "pop",
                            "receiver_port": "inp",
                        }
                    },
                }
            }
        }
    }


def _generated_source(sim: Simulation) -> str:
    module = sys.modules[sim.runner._fn.py_func.__module__]
    with open(module.__file__) as f:
        return f.read()


@pytest.mark.filterwarnings(
    "ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning"
)
def test_element_loops_give_the_interpreted_values():
    steps, dt = 60, 0.05
    interp = Simulation(_model(), backend="interpreted")
    comp = Simulation(_model(), backend="compiled")
    ri = interp.run(steps=steps, dt=dt, record=["pop.v", "pop.acc", "pop.ratio"])
    rc = comp.run(steps=steps, dt=dt, record=["pop.v", "pop.acc", "pop.ratio"])
    assert comp.runner.mode == "compiled", comp.runner.fallback_reason
    source = _generated_source(comp)
    assert source.count("for i_ in range(7):") >= 4  # v (two branches), acc, ratio, flag
    for key in ("pop.v", "pop.acc", "pop.ratio"):
        np.testing.assert_allclose(
            rc.trace(*key.split(".")), ri.trace(*key.split(".")), rtol=1e-12, atol=0, err_msg=key
        )
    run = source[source.index("def run(") : source.index("def run_quiet(")]
    # M @ v goes straight into the port; Q @ z, which overwrites z, through a temporary
    assert run.count("np.dot(") == 1 and run.count(" @ ") == 1
    for port in ("ratio", "nan", "flag", "proj", "zz", "copy"):
        np.testing.assert_allclose(
            comp.outputs["pop"][port], interp.outputs["pop"][port], rtol=1e-12, atol=0, err_msg=port
        )
    # the case is not vacuous: both conditions fired (resets by about -1, and exact zeros)
    v = np.asarray(ri.trace("pop", "v"))
    assert (np.diff(v, axis=0) < -0.5).any() and (v == 0).any()
    assert np.isinf(interp.outputs["pop"]["ratio"]).all()
    assert np.isnan(interp.outputs["pop"]["nan"]).all()


def test_arrays_of_other_shapes_keep_whole_array_code():
    # a 1-D value broadcast against a 2-D one: not element-wise over the result's shape
    model = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "n": {
                            "parameters": {
                                "x": {"value": [1.0, 2.0, 3.0]},
                                "y": {
                                    "default_initial_value": [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
                                    "value": "y + x",
                                },
                            },
                            "output_ports": {"o": {"value": "y * x"}},
                        }
                    }
                }
            }
        }
    }
    interp = Simulation(model, backend="interpreted")
    comp = Simulation(model, backend="compiled")
    interp.run(steps=5)
    comp.run(steps=5)
    assert comp.runner.mode == "compiled"
    # (element loops that copy a constant into a slot of its own shape are no expression)
    lines = _generated_source(comp).splitlines()
    bodies = [lines[k + 1].strip() for k, line in enumerate(lines) if "for i_ in range" in line]
    assert all(re.fullmatch(r"a\d+\[i_\] = c\d+\[i_\]", b) for b in bodies), bodies
    np.testing.assert_array_equal(comp.outputs["n"]["o"], interp.outputs["n"]["o"])
