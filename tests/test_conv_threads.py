"""Convolutions shared with worker threads (``onnx_ops/_conv_threads.py``): the same values,
bit for bit, as on the calling thread alone, and onnxruntime's; the fused Relu output equal to
the engine's own Relu of the Conv's value; the thread count's policy; a worker that the machine
does not schedule holds nothing up.

The thread count is passed explicitly (CI runs with ``NUMBA_NUM_THREADS=1``): the workers are
Python threads of the engine, not Numba's, so the sharing runs at any Numba setting.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mdf_engine import onnx_ops
from mdf_engine.onnx_ops import _conv_threads as ct
from mdf_engine.onnx_ops import conv as conv_mod

ort = pytest.importorskip("onnxruntime")
from onnx_cases import ort_run  # noqa: E402

# (x shape, w shape, attributes, kernel): several images, groups, strides, an odd filter count,
# a 1x1 layer with a partial last vector and chunks of pixels
CASES = [
    ((2, 4, 19, 17), (14, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, "shift"),
    ((1, 3, 40, 37), (9, 3, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1]}, "shift"),
    ((1, 5, 6, 7, 9), (7, 5, 2, 3, 3), {"pads": [1, 1, 1, 0, 1, 1]}, "shift"),
    ((2, 1100, 9, 10), (13, 1100, 1, 1), {}, "pointwise"),
    ((1, 8, 600), (6, 8, 1), {}, "pointwise"),
]


def _run(case, dtype, threads, monkeypatch):
    xs, ws, attrs, kernel = case
    rng = np.random.default_rng(len(xs) * 100 + ws[0])
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    monkeypatch.setattr(conv_mod, "conv_threads", lambda macs: threads)
    return x, w, b, onnx_ops.run("Conv", [x, w, b], attrs)[0]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_shared_conv_equals_one_thread_and_onnxruntime(case, monkeypatch):
    xs, ws, attrs, kernel = case
    x, w, b, one = _run(case, np.float32, 1, monkeypatch)
    key = conv_mod.geometry_key(
        "NOTSET", None, attrs.get("group", 1), None, attrs.get("pads"), attrs.get("strides")
    )
    assert conv_mod._conv_geometry(x, w, key, "Conv")[2] == kernel
    for threads in (2, 3):
        got = _run(case, np.float32, threads, monkeypatch)[3]
        assert got.dtype == one.dtype and np.array_equal(got.view(np.int32), one.view(np.int32))
    exp = ort_run("Conv", [x, w, b], attrs)[0]
    np.testing.assert_allclose(one, exp, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("kernel", ["shift", "pointwise"])
def test_fused_relu_output_is_the_engines_relu(kernel):
    rng = np.random.default_rng(7)
    if kernel == "shift":
        x = rng.standard_normal((1, 3, 1, 21, 23)).astype(np.float32)
        w = rng.standard_normal((10, 27)).astype(np.float32)
        key = conv_mod.geometry_key("NOTSET", None, 1, None, [1, 1, 1, 1], None)
        g = conv_mod._conv_geometry(x[:, :, 0], w.reshape(10, 3, 3, 3), key, "Conv")[1]
        b = rng.standard_normal(10).astype(np.float32)
        plain = ct.conv_shift_g(x, w, b, g)
        shared = ct.conv_shift_shared
        args = (x, w, b, g)
    else:
        x = rng.standard_normal((1, 6, 70)).astype(np.float32)
        x[0, :, 5] = 0.0  # exact zeros: the Relu of -0.0 and 0.0 as the engine's
        w = rng.standard_normal((9, 6)).astype(np.float32)
        b = np.zeros(9, np.float32)
        plain = ct.conv_pointwise_tiles(x, w, b, False)
        shared = ct.conv_pointwise_shared
        args = (x, w, b, False)
    relu = onnx_ops.run("Relu", [plain], {})[0]
    for threads in (1, 3):
        # the Relu written into a part of a larger array (a Concat's, along its first axis)
        buf = np.full((2,) + plain.shape, np.nan, np.float32)
        y = shared(*args, threads, relu_out=buf[1])
        assert np.array_equal(y.view(np.int32), plain.view(np.int32))
        assert np.array_equal(buf[1].view(np.int32), relu.view(np.int32))
        assert np.isnan(buf[0]).all()
    with pytest.raises(ValueError, match="relu_out"):
        shared(*args, 1, relu_out=buf[:, 0])  # not C-contiguous


def test_thread_count_follows_numba_and_the_setting(monkeypatch):
    import numba

    monkeypatch.delenv("MDF_ENGINE_BLAS_THREADS", raising=False)
    big = 1 << 40
    assert ct.conv_threads(big) == numba.get_num_threads()
    assert ct.conv_threads(ct.PART_MIN_MACS) == 1  # too small to share
    monkeypatch.setenv("MDF_ENGINE_BLAS_THREADS", "1")
    assert ct.conv_threads(big) == 1
    saved = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        monkeypatch.delenv("MDF_ENGINE_BLAS_THREADS")
        assert ct.conv_threads(big) == 1
    finally:
        numba.set_num_threads(saved)


def test_an_unscheduled_worker_holds_nothing_up():
    """A worker busy elsewhere (standing for one the machine has not scheduled) takes no item;
    the caller does them all and returns without waiting for it."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 40, 300)).astype(np.float32)
    w = rng.standard_normal((12, 40)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    gate, held = threading.Event(), threading.Event()

    class Blocker:
        def run(self):
            held.set()
            gate.wait(30)

    (q,) = ct._workers(1)
    q.put(Blocker())
    assert held.wait(30)
    try:
        y = ct.conv_pointwise_shared(x, w, b, True, 2)
    finally:
        gate.set()
    assert np.array_equal(y, ct.conv_pointwise_tiles(x, w, b, True))


@pytest.mark.parametrize(
    "xs,ws,attrs,kernel",
    [
        ((1, 8, 12, 12), (8, 1, 3, 3), {"group": 8, "pads": [1, 1, 1, 1]}, "direct"),
        ((1, 3, 20, 18), (6, 3, 3, 3), {"strides": [2, 1], "pads": [1, 1, 1, 1]}, "shift"),
        ((1, 24, 9, 9), (10, 24, 1, 1), {}, "pointwise"),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_bound_conv_relu_gives_the_conv_and_its_relu(xs, ws, attrs, kernel, threads, monkeypatch):
    from mdf_engine.onnx_ops import _conv_relu

    rng = np.random.default_rng(11)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    full = {k: attrs.get(k, v) for k, v in conv_mod.CONV_ATTRS.items()}
    key = conv_mod.geometry_key(*(full[k] for k in conv_mod._GEOMETRY_ATTRS))
    assert conv_mod._conv_geometry(x, w, key, "Conv")[2] == kernel
    monkeypatch.setattr(_conv_relu, "conv_threads", lambda macs: threads)
    bound = _conv_relu.prepare_conv_relu([(False, None), (True, w), (True, b)], full)
    y, r = bound(x)
    alone = conv_mod.prepare_conv([(False, None), (True, w), (True, b)], full)(x)[0]
    assert np.array_equal(y.view(np.int32), alone.view(np.int32))
    relu = onnx_ops.run("Relu", [alone], {})[0]
    assert r.shape == y.shape and np.array_equal(r.view(np.int32), relu.view(np.int32))
    into = np.empty_like(r)
    y2, r2 = bound(x, relu_out=into)
    assert r2 is into and np.array_equal(into.view(np.int32), relu.view(np.int32))
    assert np.array_equal(y2.view(np.int32), alone.view(np.int32))
    np.testing.assert_allclose(y, ort_run("Conv", [x, w, b], attrs)[0], rtol=1e-4, atol=2e-4)
