"""16-bit Hexagon ops and the remaining extras (TopK_8, PRelu_V2, instance norms, Pad_V2, Pack,
Moments) against numpy formulas (here and in hexagon_formulas.py)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, real, s, step

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

RNG = np.random.default_rng(9)
Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


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


def test_add_sub_mul_16():
    a = RNG.integers(-30000, 30000, size=(1, 2, 3, 4)).astype(np.int16)
    b = RNG.integers(-30000, 30000, size=(1, 1, 1, 4)).astype(np.int16)
    ra, rb = a * 2.0 / 32768, b * 1.0 / 32768
    for op, fn in (
        ("QuantizedAdd_16", np.add),
        ("QuantizedSub_16", np.subtract),
        ("QuantizedMul_16", np.multiply),
    ):
        q, lo, hi = run(op, [a, b, s(-2), s(2), s(-1), s(1), s(-3), s(3)])
        assert (lo.item(), hi.item()) == (-3.0, 3.0)
        np.testing.assert_allclose(
            q.astype(float) * 3 / 32768, np.clip(fn(ra, rb), -3, 3 * 32767 / 32768), atol=3 / 32768
        )
    ua = RNG.integers(0, 65535, size=(1, 2, 3, 4)).astype(np.uint16)
    rua = -1 + ua * 3.0 / 65536
    q, lo, hi = run("QuantizedAdd_u16", [ua, ua, s(-1), s(2), s(-1), s(2), s(-2), s(4)])
    np.testing.assert_allclose(-2 + q.astype(float) * 6.0 / 65536, 2 * rua, atol=6.0 / 65536)
    q, lo, hi = run("QuantizedMul_16", [a, b, s(-2), s(2), s(-1), s(1), s(-1e-9), s(1e-9)])
    assert hi.item() * 2 >= 4 * 2 / 32768 * 0.999  # enlarged to range_a*range_b/32768


def test_pad_16_u16():
    x = np.full((1, 1, 2, 1), 7, np.int16)
    pads = np.array([[0, 0], [0, 0], [1, 1]]).reshape(1, 1, 3, 2)
    q, _, _ = run("QuantizedPad_16", [x, s(-2), s(2), pads, s(1.0)])
    np.testing.assert_array_equal(q.reshape(-1), [16384, 7, 7, 16384])
    q, _, _ = run("QuantizedPad_16", [x, s(-2), s(2), pads, s(np.inf)])
    assert q.reshape(-1)[0] == 32767
    q, _, _ = run("QuantizedPad_u16", [x.astype(np.uint16), s(-2), s(2), pads])
    assert q.reshape(-1)[0] == 32768
    q, _, _ = run("QuantizedPad_u16", [x.astype(np.uint16), s(-2), s(2), pads, s(2.01)])
    assert q.reshape(-1)[0] == 65535  # 164 codes over: clipped
    with pytest.raises(MDFError, match="too far outside"):
        run("QuantizedPad_16", [x, s(-2), s(2), pads, s(3.0)])


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


def test_pack_and_moments():
    a = np.arange(6, dtype=F).reshape(1, 1, 2, 3)
    (o,) = run("Pack_f", [a, a + 10])
    assert o.shape == (1, 2, 2, 3)
    np.testing.assert_array_equal(o[0, 1], a[0, 0] + 10)
    (o,) = run("Pack_int32", [np.array([1, 2]), np.array([3, 4]), np.array([5, 6])])
    np.testing.assert_array_equal(o, [[[[1, 2], [3, 4], [5, 6]]]])
    with pytest.raises(MDFError, match="size 1"):
        run("Pack_f", [np.ones((2, 2, 2, 2))])
    mean, var, mlo, mhi, vlo, vhi = run("Moments_8to32", [Q, np.array([1, 2]), s(-1), s(1)])
    r = deq(Q, -1, 1).astype(np.float64)
    np.testing.assert_allclose(
        deq(mean, mlo.item(), mhi.item()),
        r.mean(axis=(1, 2), keepdims=True),
        atol=float(step(-1, 1)) * 0.51,
    )
    vst = (vhi.item() - vlo.item()) / 2**32
    np.testing.assert_allclose(var * vst, r.var(axis=(1, 2), keepdims=True), rtol=1e-3, atol=1e-6)
