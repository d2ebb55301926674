"""Hexagon elementwise ops (quint8, 16-bit, float and int32) against numpy formulas."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, real, real32, s, step, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run


def rnd_u8(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


RNG = np.random.default_rng(9)


X = RNG.normal(size=(2, 3, 4, 5)).astype(F)


I = RNG.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int32)


Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


def test_add_sub_mul_8():
    rng = np.random.default_rng(10)
    a, b = rnd_u8(rng, (1, 2, 3, 4)), rnd_u8(rng, (1, 1, 1, 4))
    ar, br = (-1.0, 3.0), (-2.0, 0.5)
    args = [a, b, s(ar[0]), s(ar[1]), s(br[0]), s(br[1])]
    ra = (a.astype(np.float64) - zero(*ar)) * float(step(*ar))
    rb = (b.astype(np.float64) - zero(*br)) * float(step(*br))
    q, mn, mx = run("QuantizedAdd_8p8to8", args)
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    assert m <= -3.0 + 1e-5 and M >= 3.5 - 1e-5
    np.testing.assert_allclose(deq(q, m, M), ra + rb, atol=float(step(m, M)) * 0.51 + 1e-5)
    q, mn, mx = run("QuantizedAdd_8p8to8", args + [s(-1.0), s(1.0)])
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    np.testing.assert_allclose(
        deq(q, m, M), np.clip(ra + rb, m, M), atol=float(step(m, M)) * 0.51 + 1e-5
    )
    q32, mn, mx = run("QuantizedSub_8p8to32", args)
    np.testing.assert_allclose(
        q32 * (float(mx[0, 0, 0, 0] - mn[0, 0, 0, 0]) / 2**32), ra - rb, atol=1e-4
    )
    q32, mn, mx = run("QuantizedMul_8x8to32", args)
    np.testing.assert_array_equal(
        q32, (a.astype(np.int64) - zero(*ar)) * (b.astype(np.int64) - zero(*br))
    )
    q, mn, mx = run("QuantizedMul_8x8to8", args)
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    np.testing.assert_allclose(deq(q, m, M), ra * rb, atol=float(step(m, M)) * 0.51 + 1e-5)


def test_div_recip():
    a = RNG.integers(0, 256, size=(1, 2, 3, 4), dtype=np.uint8)
    b = np.array([[[[10, 60, 200, 255]]]], np.uint8)
    q, mn, mx = run("QuantizedDiv_8", [a, b, s(-1), s(1), s(0), s(2)])
    ref = real(a, -1, 1) / real(b, 0, 2)
    m, M = mn.item(), mx.item()
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)
    q, mn, mx = run("QuantizedDiv_8", [a, b, s(-1), s(1), s(0), s(2), s(-1), s(1)])
    m, M = mn.item(), mx.item()
    np.testing.assert_allclose(
        deq(q, m, M), np.clip(ref, m, M), atol=float(step(m, M)) * 0.51 + 1e-5
    )
    with pytest.raises(MDFError, match="division by zero"):
        run("QuantizedDiv_8", [a, np.zeros((1, 1, 1, 4), np.uint8), s(-1), s(1), s(0), s(2)])
    q, mn, mx = run("QuantizedRecip_8", [b, s(0), s(2)])
    m, M = mn.item(), mx.item()
    np.testing.assert_allclose(deq(q, m, M), 1 / real(b, 0, 2), atol=float(step(m, M)) * 0.51)


@pytest.mark.parametrize(
    "op,fn", [("Neg_f", np.negative), ("Abs_f", np.abs), ("Ceil_f", np.ceil), ("Floor_f", np.floor)]
)
def test_float_unary(op, fn):
    np.testing.assert_array_equal(run(op, [X])[0], fn(X))


def test_round_half_even_and_casts():
    v = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 300.7, -3.9], F)
    np.testing.assert_array_equal(
        run("Round_f", [v])[0].reshape(-1), [-2, -2, -0, 0, 2, 2, 301, -4]
    )
    np.testing.assert_array_equal(
        run("CastFloat32ToInt32", [v])[0].reshape(-1), [-2, -1, 0, 0, 1, 2, 300, -3]
    )
    np.testing.assert_array_equal(
        run("CastFloat32ToUInt8", [v])[0].reshape(-1), [0, 0, 0, 0, 1, 2, 255, 0]
    )
    iv = np.array([-1, 256, 257, 70000], np.int32)
    np.testing.assert_array_equal(
        run("CastInt32ToUInt8", [iv])[0].reshape(-1), [255, 0, 1, 70000 % 256]
    )
    assert run("CastInt32ToFloat32", [iv])[0].dtype == F
    assert run("Convert_int32_f", [iv])[0].reshape(-1)[3] == 70000.0
    u = np.array([0, 200], np.uint8)
    np.testing.assert_array_equal(run("CastUInt8ToInt32", [u])[0].reshape(-1), [0, 200])
    np.testing.assert_array_equal(run("CastUInt8ToFloat32", [u])[0].reshape(-1), [0.0, 200.0])
    with pytest.raises(MDFError, match="NaN"):
        run("CastFloat32ToInt32", [np.array([np.nan], F)])


def test_int32_ops_wrap():
    b = I[:, :1]
    for op, fn in (
        ("Add_int32", np.add),
        ("Sub_int32", np.subtract),
        ("Mul_int32", np.multiply),
        ("BitwiseAnd_int32", np.bitwise_and),
        ("BitwiseOr_int32", np.bitwise_or),
        ("BitwiseXor_int32", np.bitwise_xor),
    ):
        np.testing.assert_array_equal(run(op, [I, b])[0], fn(I, b))
    big = np.array([2**31 - 1], np.int32)
    assert run("Add_int32", [big, np.array([1])])[0].item() == -(2**31)
    assert run("Neg_int32", [np.array([-(2**31)], np.int32)])[0].item() == -(2**31)
    np.testing.assert_array_equal(run("Abs_int32", [I])[0], np.abs(I))
    np.testing.assert_array_equal(run("Neg_int32", [I])[0], -I)
    np.testing.assert_array_equal(run("BitwiseNot_int32", [I])[0], ~I)


def test_float_binary_addn_select_range_rank_sink():
    np.testing.assert_array_equal(run("Sub_f", [X, X[:1]])[0], X - X[:1])
    np.testing.assert_array_equal(run("Minimum_f", [X, F(0.1)])[0], np.minimum(X, F(0.1)))
    np.testing.assert_array_equal(run("Maximum_f", [X, F(0.1)])[0], np.maximum(X, F(0.1)))
    np.testing.assert_allclose(run("AddN_f", [X, X, X])[0], 3 * X, rtol=1e-6)
    with pytest.raises(MDFError, match="same shape"):
        run("AddN_f", [X, X[:1]])
    c = (X > 0).astype(np.uint8)
    np.testing.assert_array_equal(run("Select_f", [c, X, -X])[0], np.abs(X))
    np.testing.assert_array_equal(
        run("Range_int32", [np.array(2), np.array(11), np.array(3)])[0].reshape(-1), [2, 5, 8]
    )
    np.testing.assert_array_equal(
        run("Range_int32", [np.array(5), np.array(0), np.array(-2)])[0].reshape(-1), [5, 3, 1]
    )
    assert run("Rank_int32", [X, np.array(4)])[0].item() == 4
    assert run("Sink", [X, I]) == []
    with pytest.raises(MDFError, match="never reaches"):
        run("Range_int32", [np.array(0), np.array(5), np.array(-1)])


def test_quantized_neg_sqrt_prelu_l2norm():
    mn, mx = -1.0, 3.0
    q, lo, hi = run("QuantizedNeg_8", [Q, s(mn), s(mx)])
    assert (lo.item(), hi.item()) == (-3.0, 1.0)
    np.testing.assert_allclose(deq(q, -3.0, 1.0), -deq(Q, mn, mx), atol=1e-5)
    q, lo, hi = run("QuantizedSqrt_8", [Q, s(0.0), s(4.0)])
    ref = np.sqrt(deq(Q, 0.0, 4.0))
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()), ref, atol=float(step(lo.item(), hi.item())) * 0.51
    )
    with pytest.raises(MDFError, match="min >= 0"):
        run("QuantizedSqrt_8", [Q, s(-1.0), s(4.0)])
    alphas = np.linspace(0.1, 0.5, 5).astype(F)
    q, lo, hi = run("QuantizedPRelu_8", [Q, s(mn), s(mx), alphas])
    r = deq(Q, mn, mx)
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()),
        np.where(r > 0, r, r * alphas),
        atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-6,
    )
    q, lo, hi = run("L2Normalize_8", [Q, s(mn), s(mx)])
    assert (lo.item(), hi.item()) == (-1.0, 1.0)
    rr = real32(Q, mn, mx).astype(np.float64)
    ref = rr / np.sqrt((rr**2).sum(axis=3, keepdims=True))
    np.testing.assert_array_equal(q, quant(ref, -1.0, 1.0))


def test_quantized_min_max_compare_select():
    B = Q[:, :, :1]
    args = [Q, B, s(-1), s(1), s(-2), s(0.5)]
    ra, rb = real32(Q, -1, 1), real32(B, -2, 0.5)
    for op, fn in (("QuantizedMinimum", np.minimum), ("QuantizedMax_8", np.maximum)):
        q, lo, hi = run(op, args)
        assert lo.item() <= -2 + 1e-6 and hi.item() >= 1 - 1e-6
        np.testing.assert_allclose(
            deq(q, lo.item(), hi.item()),
            fn(ra, rb),
            atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-6,
        )
    q, lo, hi = run("QuantizedMin_8", args + [s(-0.5), s(0.5)])
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()),
        np.clip(np.minimum(ra, rb), lo.item(), hi.item()),
        atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-6,
    )
    for op, fn in (
        ("QuantizedEqual_8", np.equal),
        ("QuantizedNotEqual_8", np.not_equal),
        ("QuantizedLess_8", np.less),
        ("QuantizedLessEqual_8", np.less_equal),
        ("QuantizedGreater_8", np.greater),
        ("QuantizedGreaterEqual_8", np.greater_equal),
    ):
        np.testing.assert_array_equal(run(op, args)[0], fn(ra, rb).astype(np.uint8))
    assert run("QuantizedEqual_8", [Q, Q, s(-1), s(1), s(-1), s(1)])[0].all()
    cond = (Q > 100).astype(np.uint8)
    q, lo, hi = run("Select_8", [cond, Q, s(-1), s(1), 255 - Q, s(0), s(2)])
    ref = np.where(cond != 0, deq(Q, -1, 1), deq(255 - Q, 0, 2))
    np.testing.assert_allclose(
        deq(q, lo.item(), hi.item()), ref, atol=float(step(lo.item(), hi.item())) * 0.51 + 1e-6
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
