"""Hexagon layout moves (reshape, transpose, concat, pack, tile, shuffles, slices, pads, space/depth
rearrangements) against numpy, and Split / ExpandDims (their count / shape is a node
attribute) against onnxruntime."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, ort, s, step, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

RNG = np.random.default_rng(9)


X = RNG.normal(size=(2, 3, 4, 5)).astype(F)


I = RNG.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int32)


Q = RNG.integers(0, 256, size=(2, 3, 4, 5), dtype=np.uint8)


def test_shape_ops():
    x = np.arange(24, dtype=np.uint8).reshape(1, 2, 3, 4)
    q, mn, mx = run("QuantizedReshape", [x, np.array([[[[-1, 6]]]], np.int32), s(-1), s(1)])
    assert q.shape == (1, 1, 4, 6) and mn[0, 0, 0, 0] == -1
    (f,) = run("Flatten", [x])
    assert f.shape == (1, 1, 1, 24)
    assert run("QuantizedFlatten", [x, s(0), s(1)])[0].shape == (1, 1, 1, 24)
    np.testing.assert_array_equal(run("Shape_int32", [x])[0].reshape(-1), [1, 2, 3, 4])
    t, _, _ = run("Transpose_8", [x, np.array([1, 0, 2]), s(0), s(1)])
    np.testing.assert_array_equal(t, x.transpose(0, 2, 1, 3))
    sl, _, _ = run("QuantizedSlice_8", [x, np.array([1, 1]), np.array([2, -1]), s(0), s(1)])
    np.testing.assert_array_equal(sl, x[:, :, 1:3, 1:])
    am = run("ArgMax_8toInt32", [x, np.array(3), s(0), s(1)])[0]
    assert am.shape == (1, 2, 3, 1) and (am == 3).all()
    with pytest.raises(MDFError, match="cannot take shape"):
        run("Reshape", [x, np.array([5, 5])])


def test_pad_8_values():
    x = np.full((1, 1, 2, 1), 7, np.uint8)
    pads = np.array([[0, 0], [0, 0], [1, 2]], np.int32).reshape(1, 1, 3, 2)
    q, _, _ = run("QuantizedPad_8", [x, s(-1.0), s(1.0), pads])
    np.testing.assert_array_equal(q.reshape(-1), [zero(-1, 1), 7, 7, zero(-1, 1), zero(-1, 1)])
    q, _, _ = run("QuantizedPad_8", [x, s(-1.0), s(1.0), pads, s(-np.inf)])
    assert q.reshape(-1)[0] == 0
    q, _, _ = run("QuantizedPad_8", [x, s(-1.0), s(1.0), pads, s(1.004)])  # code 256 -> 255
    assert q.reshape(-1)[0] == 255
    with pytest.raises(MDFError, match="too far outside"):
        run("QuantizedPad_8", [x, s(-1.0), s(1.0), pads, s(5.0)])


def test_concat_union_range():
    a = np.array([[[[0, 255]]]], np.uint8)
    b = np.array([[[[0, 255]]]], np.uint8)
    q, mn, mx = run("QuantizedConcat_8", [np.array(3), a, b, s(-1.0), s(0.0), s(1.0), s(4.0)])
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    assert m == -1.0 and M == 4.0
    np.testing.assert_allclose(deq(q, m, M).reshape(-1), [-1, 1, 0, 4], atol=float(step(m, M)))
    with pytest.raises(MDFError, match="axis 3"):
        run("QuantizedConcat_8", [np.array(1), a, b, s(-1), s(0), s(1), s(4)])
    q2, _, _ = run("QuantizedConcat_8_d32", [np.array(1), a, b, s(-1), s(0), s(1), s(4)])
    assert q2.shape == (1, 2, 1, 2)


def test_strided_slice():
    a = np.arange(2 * 3 * 4 * 5, dtype=F).reshape(2, 3, 4, 5)
    (o,) = run("StridedSlice_f", [a, np.array([0, 1]), np.array([4, 5]), np.array([2, 2])])
    np.testing.assert_array_equal(o, a[:, :, 0:4:2, 1:5:2])
    (o,) = run("StridedSlice_f", [a, np.array([3, 4]), np.array([-1, 0]), np.array([-2, -3])])
    np.testing.assert_array_equal(o, a[:, :, 3::-2, 4:0:-3])
    # begin_mask on w (bit 2), end_mask on d (bit 3), shrink h (bit 1)
    (o,) = run(
        "StridedSlice_int32",
        [
            a.astype(np.int32),
            np.array([0, 1, 2, 1]),
            np.array([2, 2, 3, 2]),
            np.array([1, 1, 1, 1]),
            np.array(4),
            np.array(8),
            np.array(2),
        ],
    )
    np.testing.assert_array_equal(o, a[:, 1, 0:3, 1:].reshape(1, 2, 3, 4))
    q, mn, mx = run(
        "QuantizedStridedSlice_8",
        [
            a.astype(np.uint8),
            np.array([1]),
            np.array([4]),
            np.array([1]),
            np.array(0),
            np.array(0),
            np.array(0),
            s(0),
            s(1),
        ],
    )
    np.testing.assert_array_equal(q, a.astype(np.uint8)[..., 1:4])
    with pytest.raises(MDFError, match="out of range"):
        run("StridedSlice_uint8", [a.astype(np.uint8), np.array([0]), np.array([9]), np.array([1])])
    with pytest.raises(MDFError, match="all present"):
        run("StridedSlice_f", [a, np.array([0]), np.array([1]), np.array([1]), np.array(1)])


def test_shuffles_and_nearest_resize():
    a = np.arange(2 * 6 * 3, dtype=F).reshape(1, 2, 6, 3)
    (o,) = run("AxisShuffle_f", [a, np.array(-2), np.array(2)])
    np.testing.assert_array_equal(
        o, a.reshape(1, 2, 2, 3, 3).transpose(0, 1, 3, 2, 4).reshape(a.shape)
    )
    q = np.arange(12, dtype=np.uint8).reshape(1, 1, 1, 12)
    o, mn, mx = run("QuantizedChannelShuffle_8", [np.array(3), q, s(0), s(1)])
    np.testing.assert_array_equal(o.reshape(-1), q.reshape(3, 4).T.reshape(-1))
    o, _, _ = run("AxisShuffle_16", [q.astype(np.uint16), np.array(3), np.array(4), s(0), s(1)])
    assert o.dtype == np.uint16
    img = RNG.integers(0, 256, size=(1, 3, 4, 2), dtype=np.uint8)
    o, _, _ = run("ResizeNearestNeighbor_8", [img, np.array([5, 7]), s(0), s(1)])
    ys, xs = (
        np.minimum((np.arange(5) * 3 / 5).astype(int), 2),
        np.minimum((np.arange(7) * 4 / 7).astype(int), 3),
    )
    np.testing.assert_array_equal(o[0], img[0][ys][:, xs])
    o, _, _ = run("ResizeNearestNeighbor_8", [img, np.array([5, 7]), s(0), s(1), np.array(1)])
    ys = np.floor(np.arange(5) * 2 / 4 + 0.5).astype(int)
    xs = np.floor(np.arange(7) * 3 / 6 + 0.5).astype(int)
    np.testing.assert_array_equal(o[0], img[0][ys][:, xs])


def test_space_batch_roundtrip_and_layout():
    a = RNG.normal(size=(2, 3, 4, 2)).astype(F)
    (o,) = run("SpaceToBatchND_f", [a, np.array([2, 2]), np.array([[0, 1], [2, 2]])])
    p = np.pad(a, ((0, 0), (0, 1), (2, 2), (0, 0)))
    assert o.shape == (8, 2, 4, 2)
    for ih in range(2):
        for iw in range(2):
            for b in range(2):
                np.testing.assert_array_equal(o[(ih * 2 + iw) * 2 + b], p[b, ih::2, iw::2])
    (back,) = run("BatchToSpaceND_f", [o, np.array([2, 2]), np.array([[0, 1], [2, 2]])])
    np.testing.assert_array_equal(back, a)
    q = RNG.integers(0, 256, size=(1, 2, 2, 1), dtype=np.uint8)
    o, mn, mx = run("SpaceToBatchND_8", [q, np.array(2), np.array([1, 1]), s(-1), s(1)])
    assert o.shape == (2, 2, 2, 1) and (o[0, 0] == zero(-1, 1)).all()
    back, _, _ = run("BatchToSpaceND_8", [o, np.array(2), np.array([1, 1]), mn, mx])
    np.testing.assert_array_equal(back, q)
    q16 = RNG.integers(0, 65535, size=(1, 2, 4, 4)).astype(np.uint16)
    t, _, _ = run("Transpose_16", [q16, np.array([0, 2, 1, 3]), s(0), s(1)])
    np.testing.assert_array_equal(t, q16.transpose(0, 2, 1, 3))
    d, _, _ = run("SpaceToDepth_16", [q16, np.array(2), s(0), s(1)])
    assert d.dtype == np.uint16 and d.shape == (1, 1, 2, 16)
    np.testing.assert_array_equal(run("DepthToSpace_16", [d, np.array(2), s(0), s(1)])[0], q16)


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


@pytest.mark.parametrize("dim,n", [(0, 2), (1, 3), (2, 1), (3, 4)])
def test_split_against_onnxruntime(dim, n):
    rng = np.random.default_rng(dim)
    shape = [2, 3, 5, 8]
    x = rng.normal(size=shape).astype(F)
    parts = run("Split_f", [np.int32(dim), x], num_outputs=n)
    ref = ort("Split", {"x": x}, {"axis": dim, "num_outputs": n}, n_out=n)
    assert len(parts) == n
    for p, r in zip(parts, ref):
        np.testing.assert_array_equal(p, r)
    ints = run("Split_int32", [np.int32(dim), (x * 100).astype(np.int32)], num_outputs=n)
    for p, r in zip(ints, ref):
        np.testing.assert_array_equal(p, (r * 100).astype(np.int32))
    codes = rng.integers(0, 256, size=shape).astype(np.uint8)
    out = run("QuantizedSplit_8", [np.int32(dim), codes, s(-1.0), s(3.0)], num_outputs=n)
    assert len(out) == n + 2 and (out[-2].item(), out[-1].item()) == (-1.0, 3.0)
    np.testing.assert_array_equal(np.concatenate(out[:n], axis=dim), codes)


def test_split_and_expand_dims_errors_and_shapes():
    with pytest.raises(MDFError, match="equal parts"):
        run("Split_f", [np.int32(3), np.zeros((1, 1, 1, 5))], num_outputs=2)
    with pytest.raises(MDFError, match="num_outputs"):
        run("Split_f", [np.int32(3), np.zeros((1, 1, 1, 4))])
    x = np.arange(6, dtype=F)
    (y,) = run("ExpandDims_f", [x], output_shape=[2, 1, 3])
    (r,) = ort("Unsqueeze", {"x": x.reshape(2, 3), "axes": np.array([1], np.int64)}, opset=13)
    np.testing.assert_array_equal(y, r.reshape(1, 2, 1, 3))
    (z,) = run("ExpandDims_int32", [x.astype(np.int32)], output_shape=[1, 6, 1, 1])
    assert z.shape == (1, 6, 1, 1) and z.dtype == np.int32
    with pytest.raises(MDFError, match="holds 4 elements"):
        run("ExpandDims_f", [x], output_shape=[2, 2])
