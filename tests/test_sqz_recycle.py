"""Arrays recycled by the interpreter's bound kernels (``onnx_ops/_recycle.py``: a Conv's
value and Relu, a Concat's array of fused Relus) and the Relu written by the Conv's kernel
(``interpreter_fused.RELU_IN_KERNEL``, the 1x1 tiles' Relu step). Oracles: the interpreter's
general path (graph-scheduler every update, ``evaluate_node`` every node, no fusion, no
recycling) bit for bit on every output port after every update, and onnxruntime."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_threads_pool import _fires, _outputs, _sim, threads  # noqa: E402, F401

from mdf_engine import interpreter_fused  # noqa: E402
from mdf_engine.onnx_ops import _recycle  # noqa: E402


def test_an_array_is_handed_out_again_only_when_nothing_refers_to_it():
    rec = _recycle.Recycler()
    a = rec.empty((3, 4), np.float32)
    wa = weakref.ref(a)
    assert rec.empty((3, 4), np.float32) is not a  # held here
    view = a.reshape(-1)[2:]  # a view only: numpy's base is the recycler's array
    del a
    gc.collect()
    assert all(rec.empty((3, 4), np.float32) is not wa() for _ in range(2))
    del view
    assert rec.empty((3, 4), np.float32) is wa()  # nothing refers to it any more
    assert rec.empty((4, 3), np.float32) is not wa()  # another shape: a new array
    assert rec.empty((3, 4), np.float64).dtype == np.float64
    assert len(rec.arrays) <= _recycle.KEEP


@pytest.mark.parametrize("n", [1, 2])
def test_recycled_and_fused_values_equal_the_general_path(n, threads, monkeypatch):  # noqa: F811
    threads(n)
    mp = _fires()
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((1, 3, 47, 47)).astype(np.float32) for _ in range(5)]
    slow, key, node, port = _sim(mp, fast=False)
    fast = _sim(mp)[0]
    monkeypatch.setattr(interpreter_fused, "RELU_IN_KERNEL", False)
    before = _sim(mp)[0]  # the Relu after the 1x1 convolutions, Concat parts by the Relu
    concat = next(nid for nid in fast.runner.states if nid.startswith("concat"))
    conv = next(nid for nid in fast.runner.states if nid.startswith("conv"))
    held, bases, again = [], [], 0
    for k, x in enumerate(xs):
        for sim in (slow, fast, before):
            sim.evaluate(initializer={key: x})
        want = _outputs(slow)
        for sim in (fast, before):
            got = _outputs(sim)
            assert got.keys() == want.keys()
            for name, v in want.items():  # every output port, bit for bit
                assert got[name].dtype == v.dtype and got[name].tobytes() == v.tobytes(), name
        exp = sess.run(None, {"input": x})[0]
        np.testing.assert_allclose(fast.value(node, port), exp, rtol=1e-4, atol=1e-5)
        outs = fast.runner.states
        base = next(iter(outs[conv].outputs.values())).base
        again += any(b() is base for b in bases)
        bases.append(weakref.ref(base))
        if k == 1:  # a user holds views of these values: never written again
            for nid in (concat, conv):
                v = next(iter(outs[nid].outputs.values()))[0, 1:]
                held.append((v, v.copy()))
    for v, copy in held:
        assert v.tobytes() == copy.tobytes()
    assert again > 0  # a Conv's arrays were handed out again


@pytest.mark.parametrize("pixels", [70, 81, 169, 125])  # a last group of 1, 2, 3, 4 vectors
def test_pointwise_relu_tiles_equal_the_plain_tiles_and_the_engines_relu(pixels):
    from mdf_engine import onnx_ops
    from mdf_engine.onnx_ops import _conv_threads as ct

    rng = np.random.default_rng(pixels)
    x = rng.standard_normal((2, 6, pixels)).astype(np.float32)
    x[:, :, 3] = 0.0  # exact zeros: the Relu of -0.0 and 0.0 as the engine's
    w = rng.standard_normal((9, 6)).astype(np.float32)  # blocks of 4, 4 and 1 filters
    b = rng.standard_normal(9).astype(np.float32)
    plain = ct.conv_pointwise_tiles(x, w, b, True)
    relu = onnx_ops.run("Relu", [plain], {})[0]
    for n in (1, 3):
        y, r = np.full_like(plain, np.nan), np.full_like(plain, np.nan)
        got = ct.conv_pointwise_shared(x, w, b, True, n, r, y)
        assert np.shares_memory(got, y)
        assert np.array_equal(y.view(np.int32), plain.view(np.int32))
        assert np.array_equal(r.view(np.int32), relu.view(np.int32))
    exp = np.einsum("mc,ncp->nmp", w.astype(np.float64), x.astype(np.float64)) + b[:, None]
    np.testing.assert_allclose(plain, exp, rtol=1e-5, atol=1e-5)
