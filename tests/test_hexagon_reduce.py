"""Hexagon reductions, ArgMax/ArgMin and TopK against numpy."""

import numpy as np
from hexagon_formulas import F, deq, quant, real, real32, s, step, zero

from mdf_engine.hexagon import run

RNG = np.random.default_rng(9)


X = RNG.normal(size=(2, 3, 4, 5)).astype(F)


I = RNG.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int32)


Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


def test_reductions():
    np.testing.assert_allclose(run("Sum_f", [X])[0], X.sum(keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(
        run("Sum_f", [X, np.array([1, 2])])[0], X.sum(axis=(1, 2), keepdims=True), rtol=1e-5
    )
    got = run("Max_f", [X, np.array([1, 2])], padding="VALID")[0]
    np.testing.assert_array_equal(got, X.max(axis=(1, 2)).reshape(1, 1, 2, 5))
    np.testing.assert_array_equal(
        run("Min_f", [X, np.array([0]), np.array(2)])[0], X.min(axis=2, keepdims=True)
    )
    np.testing.assert_allclose(
        run("Prod_f", [X, np.array([3])])[0], X.prod(axis=3, keepdims=True), rtol=1e-5
    )
    small = (I % 5).astype(np.int32)
    np.testing.assert_array_equal(
        run("Prod_int32", [small, np.array([2])])[0],
        small.astype(np.int64).prod(axis=2, keepdims=True),
    )
    np.testing.assert_array_equal(
        run("ArgMax_ftoInt32", [X, np.array(-1)])[0], X.argmax(axis=3)[..., None]
    )
    v, idx = run("TopK_f", [X, np.array(2)])
    order = np.argsort(-X, axis=3, kind="stable")[..., :2]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(v, np.take_along_axis(X, order, 3))


def test_quantized_softmax_float_reductions_args_tile():
    out = run("Softmax_uint8", [Q, s(-2), s(2), s(0.5)])[0]
    r = 0.5 * deq(Q, -2, 2).astype(np.float64)
    e = np.exp(r - r.max(axis=3, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=3, keepdims=True), rtol=1e-5)
    q, lo, hi = run("QuantizedMean_8", [Q, s(-1), s(1), np.array([1, 2])])
    assert (lo.item(), hi.item()) == (-1.0, 1.0)
    np.testing.assert_array_equal(
        q, quant(deq(Q, -1, 1).astype(np.float64).mean(axis=(1, 2), keepdims=True), -1, 1)
    )
    q32, lo, hi = run("QuantizedSum_8to32", [Q, s(-1), s(1), np.array([3])])
    np.testing.assert_array_equal(q32, (Q.astype(np.int64) - zero(-1, 1)).sum(3, keepdims=True))
    np.testing.assert_allclose(
        q32 * (hi.item() - lo.item()) / 2**32,
        real32(Q, -1, 1).sum(3, keepdims=True),
        rtol=1e-4,
        atol=1e-4,
    )
    q, lo, hi = run("ArgMax_8", [Q, np.array(-1), s(-1), s(1)])
    np.testing.assert_array_equal(q, Q.argmax(axis=3)[..., None])
    assert (lo.item(), hi.item()) == (0.0, 255.0)
    np.testing.assert_array_equal(
        run("ArgMin_8", [Q, np.array(1), s(-1), s(1)])[0], Q.argmin(axis=1)[:, None]
    )
    q, _, _ = run("QuantizedTile_8", [Q, np.array([2, 1]), s(-1), s(1)])
    np.testing.assert_array_equal(q, np.tile(Q, (1, 1, 2, 1)))


def test_topk_8_prelu_v2_pad_v2():
    v, idx, lo, hi = run("TopK_8", [Q, np.array(3), s(-1), s(1)])
    order = np.argsort(-Q.astype(np.int16), axis=3, kind="stable")[..., :3]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(v, np.take_along_axis(Q, order, 3))
    v, idx, _, _ = run("TopK_8", [Q, np.array(9), s(-1), s(1)])
    assert v.shape[3] == 5 and (np.diff(v.astype(int), axis=3) <= 0).all()
    alphas = np.array([[[[0, 64, 128, 192, 255]]]], np.uint8)
    q, lo, hi = run("QuantizedPRelu_8_V2", [Q, s(-1), s(1), alphas, s(0), s(1)])
    r = deq(Q, -1, 1).astype(np.float64)
    al = real(alphas, 0, 1).reshape(-1)
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()),
        np.where(r > 0, r, r * al),
        atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-6,
    )
    pads = np.array([[1, 0]]).reshape(1, 1, 1, 2)
    q, _, _ = run("QuantizedPad_V2_8", [Q, s(-1), s(1), pads, np.array(77)])
    assert q.shape == (3, 3, 4, 5) and (q[0] == 77).all()
