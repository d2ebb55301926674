"""Large constant arrays are held in the compiled state, not frozen into machine code.

Numba compiles a module global array into the machine code as a literal; SqueezeNet's 3.5 M
numbers (weights and zero defaults of its ports) took gigabytes and did not finish compiling.
So an array beyond ``constants.HOLD_ABOVE`` numbers (or beyond ``FROZEN_MOST`` frozen numbers
in all) is a read-only array slot passed to the generated code at run time. Here every array
is held (``HOLD_ABOVE = 0``): results equal the interpreted backend's (the oracle) on a fresh
compile, a start from the compile cache, a batch (sweep), node by node and tier 0; the held
arrays are read-only and shared between runs, and the generated module freezes no array.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.backends.compiled import constants
from mdf_engine.backends.compiled.layout import Role

DATA = Path(__file__).resolve().parent / "data"
MLP = DATA / "wild" / "keras" / "mlp_linear.json"


@pytest.fixture
def hold_all(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every constant array held; a compile cache of the test's own."""
    monkeypatch.setattr(constants, "HOLD_ABOVE", 0)
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    return tmp_path


def _outputs_equal(got: dict, want: dict) -> None:
    for nid, ports in want.items():
        for pid, w in ports.items():
            g = np.asarray(got[nid][pid])
            assert g.dtype == np.asarray(w).dtype, f"{nid}.{pid}"
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=f"{nid}.{pid}")


def _held(runner) -> list[np.ndarray]:
    layout, state = runner._layout, runner.compiled_state
    return [state["A"][s.index] for k, s in layout.slots.items() if k.role is Role.CONSTANT]


def test_held_constants_compile_and_equal_the_interpreter(hold_all: Path) -> None:
    oracle = Simulation(MLP, backend="interpreted")
    oracle.run(steps=2)
    for origin in ("generated", "cache"):
        sim = Simulation(MLP, backend="compiled")
        sim.run(steps=2)
        assert sim.runner.mode == "compiled", sim.runner.fallback_reason
        assert sim.runner.origin == origin
        held = _held(sim.runner)
        assert held and not any(a.flags.writeable for a in held)
        _outputs_equal(sim.runner.outputs(), oracle.runner.outputs())
        fresh = sim.runner.cold_state()["A"]  # (a fresh state shares the held arrays)
        assert all(any(a is b for b in fresh) for a in held)
    with np.load(next(hold_all.glob("mdf_model_*.npz"))) as z:  # the module's table
        kinds = str(z["kinds"])
    assert "a" not in kinds  # numbers and strings only: no array frozen into machine code


def test_held_constants_in_a_batch_and_on_tier0(
    hold_all: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle = Simulation(MLP, backend="interpreted")
    oracle.run(steps=2)
    want = oracle.runner.outputs()
    recorded = [(nid, pid) for nid, ports in want.items() for pid in ports]
    sim = Simulation(MLP, backend="compiled")
    assert sim.runner.prepare_batch([], recorded, None), sim.runner.fallback_reason
    rec = sim.runner.run_batch(np.zeros((3, 1)), 2, None)  # three runs from cold states
    for nid, name, col, _shape in sim.runner.record_layout:
        w = np.asarray(want[nid][name], dtype=np.float64).reshape(-1)
        for row in rec:
            np.testing.assert_allclose(row[-1, col : col + w.size], w, rtol=1e-12, atol=0)
    assert _held(sim.runner) and not any(a.flags.writeable for a in _held(sim.runner))
    monkeypatch.setenv("MDF_ENGINE_TIER0", "always")  # (tier 0 reads held arrays too)
    tier0 = Simulation(MLP, backend="compiled")
    tier0.run(steps=2)
    assert tier0.runner.tier0 is not None
    assert _held(tier0.runner)
    got = tier0.runner.outputs()
    for nid, ports in want.items():
        for pid, w in ports.items():
            np.testing.assert_allclose(got[nid][pid], w, rtol=1e-12, atol=1e-15)


def test_a_cnn_with_large_weights_holds_them_and_equals_onnxruntime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Weights beyond ``HOLD_ABOVE`` at its default (a 3x3 conv of 32 x 16 channels, a 2048 x
    10 classifier; SqueezeNet's layers in small) are held and stay float32."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    from mdf_engine.onnx_io import import_model

    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    rng = np.random.default_rng(0)
    inits = {
        "w": rng.normal(0, 0.2, (32, 16, 3, 3)).astype(np.float32),
        "b": rng.normal(0, 0.1, 32).astype(np.float32),
        "fw": rng.normal(0, 0.05, (10, 32 * 8 * 8)).astype(np.float32),
        "fb": rng.normal(0, 0.1, 10).astype(np.float32),
    }
    assert inits["w"].size > constants.HOLD_ABOVE
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "held",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(proto)
    feed = rng.standard_normal((1, 16, 16, 16)).astype(np.float32)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": feed})
    model = import_model(proto)
    meta = model.metadata["onnx"]
    node, port = meta["outputs"]["y"].split(".", 1)
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(model, backend=backend)
        for _ in range(2):  # (the second call runs the compiled code)
            sim.evaluate(initializer={meta["inputs"]["x"]: feed})
        runs[backend] = sim
    runner = runs["compiled"].runner
    assert runner.is_compiled and runner.python_calls == [], runner.fallback_reason
    held = _held(runner)
    assert {a.size for a in held} >= {inits["w"].size, inits["fw"].size}
    assert all(a.dtype == np.float32 for a in held)
    got = np.asarray(runs["compiled"].value(node, port))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    want = np.asarray(runs["interpreted"].value(node, port))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
