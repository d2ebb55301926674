"""A function without a Numba kernel (here onnx::TopK, onnx::Range) does not keep a graph off
the compiled backend: the compiled loop calls its Python kernel (Numba's object mode) for
that node, with a log line, and gets the same numbers as the interpreted backend. A value
whose shape changes from step to step cannot live in compiled state: a first run then starts
again on the interpreted backend; a later one raises, naming the function."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import mdf_engine


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    return tmp_path


def _node_model(parameters: dict, outputs: dict) -> dict:
    """A model of one node ``n`` with these parameters and output port values."""
    return {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "n": {
                            "parameters": parameters,
                            "output_ports": {k: {"value": v} for k, v in outputs.items()},
                        }
                    }
                }
            }
        }
    }


def _both(model: dict, steps: int) -> tuple:
    """The model run ``steps`` times on the interpreted and on the compiled backend."""
    ref = mdf_engine.Simulation(model, backend="interpreted")
    ref.run(steps=steps)
    sim = mdf_engine.Simulation(model, backend="compiled")
    sim.run(steps=steps)
    return ref, sim


def _conv_model() -> dict:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 1, 3, 3)) * 0.3
    x0 = rng.standard_normal((1, 1, 6, 6))
    return _node_model(
        {
            "x": {"value": "0.9 * x + 0.05", "default_initial_value": x0.tolist()},
            "W": {"value": w.tolist()},
            "k": {
                # (Conv and LpNormalization have Numba kernels now: TopK, with its two
                # outputs, has none)
                "function": "onnx::TopK",
                "args": {"X": "x", "K": [3], "axis": 3},
            },
        },
        {"out": "k[0]", "total": "k[0] * 2.0 + x[0, 0, 0, 0]"},
    )


def _range_model() -> dict:
    """Range's result grows from 1 to 2 items at step 30, after the compiled backend's
    warm-up (a value whose size changes within the warm-up is handed over or refused
    there: tests/test_compiled_growing_values.py)."""
    return _node_model(
        {
            "c": {"value": "c + 1"},
            "r": {
                "function": "onnx::Range",
                "args": {"start": 0.0, "limit": "1.0 + (c > 29)", "delta": 1.0},
            },
        },
        {"out": "r"},
    )


def test_function_without_kernel_runs_through_python_in_the_compiled_loop(cache, caplog):
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        a, b = _both(_conv_model(), 25)
    assert b.runner.mode == "compiled" and b.runner.python_calls == ["onnx::TopK"]
    assert any("onnx::TopK has no Numba kernel" in r.getMessage() for r in caplog.records)
    for name in ("out", "total", "x"):
        np.testing.assert_allclose(
            b.value("n", name), a.value("n", name), rtol=1e-12, atol=0, err_msg=name
        )
    again = mdf_engine.Simulation(_conv_model(), backend="compiled")
    again.run(steps=25)
    assert again.runner.origin == "cache"
    np.testing.assert_array_equal(again.value("n", "out"), b.value("n", "out"))


def test_a_changing_shape_reruns_a_first_run_interpreted(cache):
    a, b = _both(_range_model(), 34)
    assert b.runner.mode == "interpreted" and "onnx::Range" in b.runner.fallback_reason
    np.testing.assert_array_equal(b.value("n", "out"), a.value("n", "out"))
    assert b.runner.time_steps == a.runner.time_steps


def test_a_changing_shape_in_a_later_run_goes_on_interpreted(cache):
    """The interpreted backend replays the first run and runs the second (handback.py)."""
    sims = {
        b: mdf_engine.Simulation(_range_model(), backend=b) for b in ("interpreted", "compiled")
    }
    for sim in sims.values():
        sim.run(steps=1)
    assert sims["compiled"].runner.mode == "compiled"
    for sim in sims.values():
        sim.run(steps=33)
    runner = sims["compiled"].runner
    assert runner.mode == "interpreted" and "onnx::Range returned shape" in runner.fallback_reason
    got, want = (np.asarray(sims[b].value("n", "out")) for b in ("compiled", "interpreted"))
    assert got.shape == want.shape == (2,)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "a", [[7, 8], 7, "k", "w"], ids=["int_array", "int_scalar", "int_number", "int_vector"]
)
def test_integer_inputs_compute_as_integers(a, cache):
    """onnx::Div divides integers as integers (7 / 2 is 3): integer constants, numbers and
    arrays (``w``: computed from an integer array and number) keep int64 in compiled state,
    so the graph compiles and gives the interpreted backend's values and dtype (it would
    give 3.5 in float64)."""
    model = _node_model(
        {
            "k": {"value": 7},
            "v": {"value": [7, 8]},
            "w": {"value": "v * k + 1"},
            "d": {"function": "onnx::Div", "args": {"A": a, "B": 2}},
        },
        {"out": "d", "vec": "w", "num": "k"},
    )
    ref, sim = _both(model, 3)
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    for port in ("out", "vec", "num"):
        want, got = np.asarray(ref.value("n", port)), np.asarray(sim.value("n", port))
        assert want.dtype == np.int64 and got.dtype == want.dtype, port
        np.testing.assert_array_equal(got, want)


def test_integer_input_from_an_expression_keeps_the_graph_interpreted(cache, caplog):
    """An integer computed by an expression over compiled values is not known to keep its
    dtype in generated code: a dtype-aware function given one stays interpreted, with a log
    line naming the call and the input."""
    model = _node_model(
        {"v": {"value": [7, 8]}, "d": {"function": "onnx::Div", "args": {"A": "v + 1", "B": 2}}},
        {"out": "d"},
    )
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        ref, sim = _both(model, 3)
    assert sim.runner.mode == "interpreted"
    why = "onnx::Div gets int64 input 'A' from an expression"
    assert why in sim.runner.fallback_reason and why in caplog.text
    np.testing.assert_array_equal(sim.value("n", "out"), ref.value("n", "out"))


def _register_kind_changing_kernel() -> None:
    """A test function (namespace ``test``) whose value is integers while its input is below
    4, then floats: its value changes kind after the compiled backend's warm-up."""
    from mdf_engine.registry import REGISTRY, register

    if "test::IntsThenFloats" in REGISTRY:
        return

    @register("test", "IntsThenFloats", inputs=("X",))
    def ints_then_floats(X):
        x = np.asarray(X, dtype=float)
        return (x.astype(np.int64) if x[0] < 4 else x / 4,)


def test_a_python_kernel_failing_in_a_first_run_reruns_it_interpreted(cache, caplog):
    """Integers in the warm-up give an int64 slot; a float value later would be truncated
    there, so the call fails and the first run starts again on the interpreted backend."""
    _register_kind_changing_kernel()
    model = _node_model(
        {
            "x": {"value": "x + 1.0", "default_initial_value": [1.0, 2.0]},
            "y": {"function": "test::IntsThenFloats", "args": {"X": "x"}},
        },
        {"out": "y"},
    )
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        ref, sim = _both(model, 4)
    assert sim.runner.mode == "interpreted"
    assert (
        "test::IntsThenFloats returned float64 where the compiled backend's warm-up gave int64"
        in sim.runner.fallback_reason
    )
    np.testing.assert_array_equal(sim.value("n", "out"), ref.value("n", "out"))
