"""Hexagon activations (ReLU family, Sigmoid/Tanh fixed ranges, Softmax, PRelu, float references)
against numpy formulas."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, s, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run


def rnd_u8(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def test_relu_relux_clamp():
    mn, mx = -1.0, 1.0  # not an exact-zero range: its zero code 127.5 rounds to 128
    x = np.arange(0, 256, 15, dtype=np.uint8).reshape(1, 1, 1, -1)
    z = zero(mn, mx)
    q, m, M = run("QuantizedRelu_8", [x, s(mn), s(mx)])
    np.testing.assert_array_equal(q, np.maximum(x, z))
    assert m[0, 0, 0, 0] == mn and M[0, 0, 0, 0] == mx
    q, _, _ = run("QuantizedReluX_8", [x, s(mn), s(mx), s(0.5)])
    np.testing.assert_array_equal(q, np.clip(x, z, quant(0.5, mn, mx)))
    q, _, _ = run("QuantizedClamp_8", [x, s(mn), s(mx), s(-0.25), s(0.75)])
    np.testing.assert_array_equal(q, np.clip(x, quant(-0.25, mn, mx), quant(0.75, mn, mx)))


def test_tanh_sigmoid_fixed_ranges():
    x = np.arange(256, dtype=np.uint8).reshape(1, 1, 16, 16)
    real = deq(x, -6.0, 6.0).astype(np.float64)
    q, mn, mx = run("QuantizedTanh_8", [x, s(-6.0), s(6.0)])
    assert mn[0, 0, 0, 0] == -1.0 and mx[0, 0, 0, 0] == pytest.approx(0.992188, abs=1e-6)
    assert zero(-1.0, 127 / 128) == 128
    np.testing.assert_array_equal(q, quant(np.tanh(real), -1.0, 127 / 128))
    q, mn, mx = run("QuantizedSigmoid_8", [x, s(-6.0), s(6.0)])
    assert mn[0, 0, 0, 0] == 0.0 and mx[0, 0, 0, 0] == 1.0
    np.testing.assert_array_equal(q, quant(1 / (1 + np.exp(-real)), 0.0, 1.0))


def test_softmax_8():
    rng = np.random.default_rng(8)
    x = rnd_u8(rng, (1, 2, 3, 10))
    q, mn, mx = run("QuantizedSoftmax_8", [x, s(-4.0), s(4.0), s(2.0)])
    r = 2.0 * deq(x, -4.0, 4.0).astype(np.float64)
    e = np.exp(r - r.max(-1, keepdims=True))
    np.testing.assert_array_equal(q, quant(e / e.sum(-1, keepdims=True), 0, 1))
    assert (mn[0, 0, 0, 0], mx[0, 0, 0, 0]) == (0.0, 1.0)


def test_float_reference_ops():
    a = np.array([[[[-1.0, 2.0, 0.5]]]], F)
    np.testing.assert_array_equal(run("Relu_f", [a])[0], np.maximum(a, 0))
    np.testing.assert_array_equal(run("Add_f", [a, np.array(1.0)])[0], a + 1)
    np.testing.assert_array_equal(run("Mul_f", [a, a])[0], a * a)
    e = np.exp(a - a.max())
    np.testing.assert_allclose(run("Softmax_f", [a])[0], e / e.sum(), rtol=1e-6)
    with pytest.raises(MDFError, match="1-D"):
        run("Softmax_f", [np.ones((1, 2, 1, 3))])
    (av,) = run(
        "AvgPool_f",
        [np.arange(4, dtype=F).reshape(1, 2, 2, 1), np.zeros((1, 2, 2, 1)), np.zeros((1, 2, 2, 1))],
        padding="VALID",
    )
    assert av.reshape(-1)[0] == 1.5
