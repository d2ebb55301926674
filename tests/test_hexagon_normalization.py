"""Hexagon normalisation ops (batch norm, LRN, instance norms, L2Normalize, Moments) against numpy
formulas."""

import numpy as np
from hexagon_formulas import F, deq, s, step

from mdf_engine.hexagon import run

RNG = np.random.default_rng(9)


X = RNG.normal(size=(2, 3, 4, 5)).astype(F)


Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


def test_batch_norm_and_channel_scale():
    x = np.array([[[[0, 128, 255]]]], np.uint8)
    sc = np.array([[[[255, 255, 0]]]], np.uint8)  # scale real 1, 1, 0 in [0, 1]
    bi = np.array([[[[0, 0, 255]]]], np.uint8)  # bias real 0, 0, 1 in [0, 1]
    q, mn, mx = run(
        "QuantizedBatchNorm_8x8p8to8",
        [x, sc, s(0), s(2.55), s(0), s(1), bi, s(0), s(1), s(-np.inf), s(np.inf)],
    )
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    np.testing.assert_allclose(deq(q, m, M).reshape(-1), [0, 1.28, 1.0], atol=float(step(m, M)))
    q32 = np.array([[[[100, 100]]]], np.int32)
    out, mn, mx = run("QuantizedChannelScale_32xf", [q32, np.array([0.5, 0.25], F), s(-1), s(1)])
    np.testing.assert_array_equal(out.reshape(-1), [50, 25])


def test_float_lrn_resize_match_quantized_formulas():
    x = np.abs(X[:1])
    out = run("LRN_f", [x, np.zeros((1, 1, 1, 3)), s(2.0), s(1.0), s(0.5)])[0]
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0), (0, 0), (0, 0), (1, 1)))
    ref = x / (2.0 + 1.0 / 3 * (sq[..., :-2] + sq[..., 1:-1] + sq[..., 2:])) ** 0.5
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    r = run("ResizeBilinear_f", [x, np.array([5, 7]), np.array(1.0)])[0]
    assert r.shape == (1, 5, 7, 5)
    np.testing.assert_allclose(r[:, 0, 0], x[:, 0, 0])  # corners aligned
    np.testing.assert_allclose(r[:, -1, -1], x[:, -1, -1], rtol=1e-6)
    np.testing.assert_allclose(r[:, 2, 0], x[:, 1, 0], rtol=1e-6)  # 2 * (3-1)/(5-1) = 1


def test_instance_norms():
    r = deq(Q, -1, 1).astype(np.float64)
    m = r.mean(axis=(1, 2), keepdims=True)
    v = ((r - m) ** 2).mean(axis=(1, 2), keepdims=True)
    q, lo, hi = run("QuantizedInstanceNorm_8", [Q, s(-1), s(1)])
    ref = (r - m) / np.sqrt(v + 1e-5)
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()), ref, atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-5
    )
    g = np.full((1, 1, 1, 5), 255, np.uint8)
    b = np.full((1, 1, 1, 5), 0, np.uint8)
    q, lo, hi = run(
        "QuantizedInstanceNormBG_8", [Q, s(-1), s(1), s(0.1), g, s(0), s(2), b, s(0), s(1)]
    )
    ref = (r - m) * 2.0 / np.sqrt(v + 0.1)
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()), ref, atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-5
    )
