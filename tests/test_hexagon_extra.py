"""The non-core Hexagon ops (float/int32 reference ops, casts, reductions, rearrangements and the
extra quantized ops) against numpy formulas (here and in hexagon_formulas.py)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, s, step, zero
from hexagon_formulas import real32 as real

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4, 5)).astype(F)
I = RNG.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int32)
Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


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


def test_transpose_concat_slice_pad():
    np.testing.assert_array_equal(
        run("Transpose_f", [X, np.array([2, 0, 1])])[0], X.transpose(0, 3, 1, 2)
    )
    np.testing.assert_array_equal(
        run("Transpose_int32", [I, np.array([1, 0])])[0], I.transpose(0, 1, 3, 2)
    )
    np.testing.assert_array_equal(
        run("Concat_f", [np.array(3), X, X])[0], np.concatenate([X, X], 3)
    )
    np.testing.assert_array_equal(
        run("ConcatV2_f", [X, X, np.array(1)])[0], np.concatenate([X, X], 1)
    )
    np.testing.assert_array_equal(
        run("ConcatV2_int32", [I, I, np.array(0)])[0], np.concatenate([I, I], 0)
    )
    np.testing.assert_array_equal(
        run("Slice_f", [X, np.array([1, 2]), np.array([-1, 2])])[0], X[:, :, 1:, 2:4]
    )
    np.testing.assert_array_equal(
        run("Slice_int32", [I, np.array([1]), np.array([3])])[0], I[..., 1:4]
    )
    np.testing.assert_array_equal(
        run("Slice_8", [Q, np.array([0, 1, 0, 0]), np.array([1, 1, -1, 2])])[0], Q[:1, 1:2, :, :2]
    )
    pads = np.array([[0, 0], [1, 2]]).reshape(1, 1, 2, 2)
    np.testing.assert_array_equal(
        run("Pad_f", [X, pads])[0], np.pad(X, ((0, 0), (1, 2), (0, 0), (0, 0)))
    )
    pads = np.array([[0, 0], [1, 2], [2, 1]]).reshape(1, 1, 3, 2)
    w = ((0, 0), (1, 2), (2, 1), (0, 0))
    np.testing.assert_array_equal(
        run("MirrorPad_f", [X, pads], padding="MIRROR_REFLECT")[0], np.pad(X, w, mode="reflect")
    )
    q, mn, mx = run("MirrorPad_8", [Q, pads, s(-1), s(1)], padding="MIRROR_SYMMETRIC")
    np.testing.assert_array_equal(q, np.pad(Q, w, mode="symmetric"))
    with pytest.raises(MDFError, match="MIRROR"):
        run("MirrorPad_f", [X, pads], padding="SAME")


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


def test_space_depth_rearrangement():
    a = np.arange(2 * 4 * 6 * 3, dtype=F).reshape(2, 4, 6, 3)
    out = run("SpaceToDepth_f", [a, np.array([2, 3])])[0]
    assert out.shape == (2, 2, 2, 18)
    for b, i, j in [(0, 0, 0), (1, 1, 1), (0, 1, 0)]:
        np.testing.assert_array_equal(
            out[b, i, j], a[b, 2 * i : 2 * i + 2, 3 * j : 3 * j + 3].reshape(-1)
        )
    back = run("DepthToSpace_f", [out, np.array([2, 3])])[0]
    np.testing.assert_array_equal(back, a)
    cropped = run("DepthToSpace_f", [out, np.array([2, 3]), np.array([1, 0, 0, 2])])[0]
    np.testing.assert_array_equal(cropped, a[:, 1:, :4])
    q, mn, mx = run("SpaceToDepth_8", [Q[:, :2, :4], np.array(2), s(-1), s(1)])
    np.testing.assert_array_equal(run("DepthToSpace_8", [q, np.array(2), mn, mx])[0], Q[:, :2, :4])
    with pytest.raises(MDFError, match="multiples"):
        run("SpaceToDepth_f", [a, np.array(4)])


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
    rr = real(Q, mn, mx).astype(np.float64)
    ref = rr / np.sqrt((rr**2).sum(axis=3, keepdims=True))
    np.testing.assert_array_equal(q, quant(ref, -1.0, 1.0))


def test_quantized_min_max_compare_select():
    B = Q[:, :, :1]
    args = [Q, B, s(-1), s(1), s(-2), s(0.5)]
    ra, rb = real(Q, -1, 1), real(B, -2, 0.5)
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
        real(Q, -1, 1).sum(3, keepdims=True),
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
