"""The engine's BLAS thread policy (``onnx_ops._blas``; issue 22, goal 5): a product below
2**27 multiply-adds runs on one BLAS thread on both backends (a compiled call under the count of
the largest product its warm-up made), ``MDF_ENGINE_BLAS_THREADS`` caps every product, and
counts are only ever lowered. The oracle for thread counts is threadpoolctl's own report."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from mdf_engine.backends.compiled.runtime import call_checked
from mdf_engine.errors import MDFError
from mdf_engine.onnx_ops import _blas
from mdf_engine.onnx_ops.linalg import matmul


@pytest.fixture(autouse=True)
def _scipy_blas_loaded():
    _blas._blas_controllers()  # (loads scipy's BLAS, which Numba's products call)


def _counts() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.mark.parametrize(
    ("setting", "macs", "inside"),
    [
        ("", 1 << 20, 1),  # below SHARED_MIN_MACS: one thread
        ("", 1 << 27, 2),  # at it: the caller's count
        ("0", 1 << 27, 2),
        ("1", 1 << 27, 1),  # the setting caps every product
        ("", 100, 2),  # below UNSHARED_MACS: left alone (OpenBLAS does not share it)
    ],
)
def test_blas_threads_for(monkeypatch, setting, macs, inside):
    monkeypatch.setenv(_blas.THREADS_VAR, setting)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _counts()
        assert set(before) == {2}
        with _blas.blas_threads_for(macs):
            assert set(_counts()) == {inside}
        assert _counts() == before


def test_compiled_call_runs_under_the_largest_products_count(monkeypatch):
    monkeypatch.delenv(_blas.THREADS_VAR, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):
        # (a Python function stands for the generated code: what it sees is what nopython
        # code's BLAS calls get)
        assert set(call_checked(_counts, (), [], 1 << 22)) == {1}
        assert set(call_checked(_counts, (), [], 1 << 28)) == {2}
        assert set(call_checked(_counts, (), [], 0)) == {2}  # (no BLAS product: as it is)
        assert set(_counts()) == {2}


def test_largest_product_records_the_interpreters_products():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s) for s in ((64, 128), (128, 96), (96, 4)))
    with _blas.largest_product() as seen:
        (ab,) = matmul(a, b)
        matmul(ab, c)
        matmul(a[:2, :3], b[:3, :2])  # (too small to count)
    assert seen == [64 * 128 * 96]
    with _blas.largest_product() as none:
        matmul(a[:2, :3], b[:3, :2])
    assert none == [0]


def test_bad_setting_is_an_error(monkeypatch):
    monkeypatch.setenv(_blas.THREADS_VAR, "two")
    with pytest.raises(MDFError, match="MDF_ENGINE_BLAS_THREADS='two' is not a whole number"):
        _blas.threads_for(1 << 20)


def test_compiled_graph_keeps_its_largest_product(monkeypatch, tmp_path):
    """A compiled ONNX MatMul graph records its product (m x k x n multiply-adds) in the warm-up,
    keeps it in the compile cache's record, and gives the interpreter's output."""
    from onnx import TensorProto, helper, numpy_helper

    from mdf_engine import Simulation
    from mdf_engine.onnx_io import import_model

    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    rng = np.random.default_rng(1)
    w = rng.standard_normal((128, 96))
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "mm",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [64, 128])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [64, 96])],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    model = import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    meta = model.metadata["onnx"]
    x = rng.standard_normal((64, 128))
    init = {meta["inputs"]["x"]: x}
    node, port = meta["outputs"]["y"].split(".", 1)
    oracle = Simulation(model, backend="interpreted")
    oracle.evaluate(initializer=init)
    for origin in ("generated", "cache"):
        sim = Simulation(model, backend="compiled")
        sim.evaluate(initializer=init)
        assert sim.runner.mode == "compiled", sim.runner.fallback_reason
        assert sim.runner.origin == origin
        assert sim.runner.blas_macs == 64 * 128 * 96
        np.testing.assert_allclose(sim.value(node, port), oracle.value(node, port), rtol=1e-12)


def test_gemm_records_only_the_products_its_compiled_form_sends_to_blas():
    """The compiled Gemm makes a product of one float dtype up to GEMM_OWN_MACS multiply-adds by
    own loops: such a product sets no thread count for the compiled call (its threadpoolctl
    switch cost 10-13 us a call of the small CNN, for no BLAS call); mixed dtypes go to BLAS."""
    from mdf_engine.onnx_ops.linalg import GEMM_OWN_MACS, gemm

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((1, 2048)), rng.standard_normal((2048, 10))
    with _blas.largest_product() as own:
        gemm(a, b)
        gemm(a.astype(np.float32), b.astype(np.float32))
    assert own == [0]
    with _blas.largest_product() as mixed:
        gemm(a.astype(np.float32), b)
    assert mixed == [2048 * 10]
    big_a, big_b = rng.standard_normal((256, 256)), rng.standard_normal((256, 128))
    assert 256 * 256 * 128 > GEMM_OWN_MACS
    with _blas.largest_product() as big:
        gemm(big_a, big_b)
    assert big == [256 * 256 * 128]
