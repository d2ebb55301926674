"""Hexagon conversions (quantize, dequantize, requantize chain, 16-bit conversions) against the
quantization formulas of hexagon-digest §1.3 (hexagon_formulas.py)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, real, s, step, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

RNG = np.random.default_rng(9)


Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


def test_requantize_chain_agrees():
    rng = np.random.default_rng(4)
    q32 = rng.integers(-(2**20), 2**22, size=(1, 3, 3, 5)).astype(np.int32)
    rmin, rmax = s(-1000.0), s(1000.0)
    st = F(2000.0) / F(2**32)
    lo, hi = run("RequantizationRange_32", [q32, rmin, rmax])
    assert lo[0, 0, 0, 0] == pytest.approx(min(0.0, q32.min() * float(st)), rel=1e-5)
    assert hi[0, 0, 0, 0] == pytest.approx(q32.max() * float(st), rel=1e-5)
    a = run("Requantize_32to8", [q32, rmin, rmax, lo, hi])
    b = run("QuantizeDownAndShrinkRange_32to8", [q32, rmin, rmax])
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    q8, mn, mx = a
    real = q32.astype(np.float64) * float(st)
    np.testing.assert_allclose(
        deq(q8, mn[0, 0, 0, 0], mx[0, 0, 0, 0]),
        real,
        atol=float(step(mn[0, 0, 0, 0], mx[0, 0, 0, 0])) / 2 + 1e-6,
    )
    z = (-mn[0, 0, 0, 0]) / step(mn[0, 0, 0, 0], mx[0, 0, 0, 0])
    assert abs(z - round(z)) < 1e-3


def test_requantize_saturates_at_0_and_255():
    q32 = np.array([[[[-(2**31), 0, 2**31 - 1]]]], np.int32)
    q8, mn, mx = run("Requantize_32to8", [q32, s(-10.0), s(10.0), s(-1.0), s(1.0)])
    z = zero(mn[0, 0, 0, 0], mx[0, 0, 0, 0])
    np.testing.assert_array_equal(q8[0, 0, 0], [0, z, 255])


def test_requantize_8to8():
    x = np.arange(0, 256, 17, dtype=np.uint8).reshape(1, 1, 1, -1)
    q, mn, mx = run("Requantize_8to8", [x, s(-1.0), s(3.0), s(-0.5), s(0.5)])
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    np.testing.assert_array_equal(q, quant(deq(x, -1.0, 3.0), m, M))


def test_quantize_dequantize_autoquantize():
    x = np.array([[[[-0.3, 0.0, 0.7, 1.2]]]], F)
    q, mn, mx = run("Quantize", [x, s(-0.3), s(1.2)])
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    assert m <= -0.3 + 1e-6 and M >= 1.2 - 1e-6
    assert q[0, 0, 0, 1] == zero(m, M)
    (d,) = run("Dequantize", [q, mn, mx])
    assert d[0, 0, 0, 1] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(d, x, atol=float(step(m, M)) / 2 + 1e-6)
    qa, mna, mxa = run("AutoQuantize", [x])
    np.testing.assert_array_equal(qa, q)
    with pytest.raises(MDFError, match="NaN or inf"):
        run("AutoQuantize", [np.array([np.inf], F)])


def test_quantize_int32_roundtrip():
    x = np.array([[[[-2.0, 0.5, 1.0]]]], F)
    q, mn, mx = run("Quantize_int32", [x, s(-2.0), s(1.0)])
    assert mn[0, 0, 0, 0] == -2.0 and mx[0, 0, 0, 0] == 2.0
    (d,) = run("Dequantize_qint32_f", [q, mn, mx])
    np.testing.assert_allclose(d, x, rtol=1e-6)


def test_convert_8_16_and_back_lossless():
    mn, mx = -1.28, 1.27  # step 0.01, zero code 128: an exact-zero range
    q16, lo, hi = run("Convert_8_16", [Q, s(mn), s(mx)])
    assert q16.dtype == np.int16 and lo.item() == -hi.item()
    np.testing.assert_allclose(q16 * (hi.item() / 32768.0), real(Q, mn, mx), rtol=1e-6, atol=1e-9)
    q8, lo8, hi8 = run("Convert_16_8", [q16, lo, hi, s(mn), s(mx)])
    np.testing.assert_allclose(real(q8, lo8.item(), hi8.item()), real(Q, mn, mx), atol=1e-5)


def test_convert_8_u16_and_back():
    qu, lo, hi = run("Convert_8_u16", [Q, s(-0.5), s(2.0)])
    np.testing.assert_array_equal(qu, Q.astype(np.uint16) * 257)
    assert lo.item() == -0.5
    assert hi.item() == pytest.approx(2.0 + 2.5 / 65535, rel=1e-6)
    r16 = lo.item() + qu.astype(np.float64) * (hi.item() - lo.item()) / 65536
    np.testing.assert_allclose(r16, deq(Q, -0.5, 2.0), atol=1e-5)
    q8, lo8, hi8 = run("Convert_u16_8", [qu, lo, hi])
    np.testing.assert_allclose(
        deq(q8, lo8.item(), hi8.item()), r16, atol=float(step(lo8.item(), hi8.item())) * 0.51
    )


def test_convert_16_8_step_at_least_twice_input_step():
    q16 = np.array([[[[-3, 0, 5]]]], np.int16)
    q8, lo, hi = run("Convert_16_8", [q16, s(-1.0), s(1.0), s(-1e-6), s(1e-6)])
    in_step = 2.0 / 65536
    assert (hi.item() - lo.item()) / 255 >= 2 * in_step * 0.999
    z = -lo.item() * 255 / (hi.item() - lo.item())
    assert abs(z - round(z)) < 1e-3


def test_requantize_32to16():
    q32 = RNG.integers(-(2**30), 2**30, size=(1, 2, 2, 3)).astype(np.int32)
    st = 20.0 / 2**32
    q16, lo, hi = run("Requantize_32to16", [q32, s(-10), s(10), s(-2), s(5)])
    assert (lo.item(), hi.item()) == (-5.0, 5.0)
    ref = np.clip(q32 * st, -5, 5 * 32767 / 32768)
    np.testing.assert_allclose(q16.astype(float) * 5 / 32768, ref, atol=5 / 32768)
    q16, lo, hi = run("QuantizeDownAndShrinkRange_32to16", [q32, s(-10), s(10)])
    assert hi.item() == pytest.approx(np.abs(q32 * st).max(), rel=1e-6)
    np.testing.assert_allclose(
        q16.astype(float) * hi.item() / 32768, q32 * st, atol=hi.item() / 32768
    )
