"""Grouped/dilated convolution, division, strided slices, shuffles, nearest resize and
space<->batch rearrangements against numpy formulas (here and in hexagon_formulas.py)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, real, s, step, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

RNG = np.random.default_rng(5)


def conv_real(x, w, dil=1):
    """VALID float convolution of NHWC x with HWIO w, dilation dil, stride 1."""
    fh, fw = (w.shape[0] - 1) * dil + 1, (w.shape[1] - 1) * dil + 1
    oh, ow = x.shape[1] - fh + 1, x.shape[2] - fw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i : i + fh : dil, j : j + fw : dil, :]
            out[:, i, j] = np.einsum("bhwc,hwco->bo", patch, w)
    return out


def test_grouped_conv():
    x = RNG.integers(0, 256, size=(1, 5, 5, 4), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(3, 3, 2, 6), dtype=np.uint8)
    b = RNG.integers(-(2**24), 2**24, size=(1, 1, 1, 6)).astype(np.int32)
    scale = np.full((1, 1, 1, 6), 0.5, F)
    q, mn, mx = run(
        "QuantizedGroupedConv2d_8x8p32to8",
        [
            x,
            w,
            b,
            s(-1),
            s(1),
            s(-0.5),
            s(0.5),
            s(-1),
            s(1),
            np.zeros((1, 1, 1, 1)),
            np.array(2),
            s(-np.inf),
            s(np.inf),
            scale,
        ],
        padding="VALID",
    )
    rx, rw = real(x, -1, 1), real(w, -0.5, 0.5)
    ref = np.concatenate(
        [conv_real(rx[..., :2], rw[..., :3]), conv_real(rx[..., 2:], rw[..., 3:])], axis=3
    )
    ref = (ref + b.reshape(-1) * 2.0 / 2**32) * 0.5
    m, M = mn.item(), mx.item()
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)
    with pytest.raises(MDFError, match="groups do not divide"):
        run(
            "QuantizedGroupedConv2d_8x8p32to8",
            [
                x,
                w,
                b,
                s(-1),
                s(1),
                s(-0.5),
                s(0.5),
                s(-1),
                s(1),
                np.zeros((1, 1, 1, 1)),
                np.array(3),
                s(-np.inf),
                s(np.inf),
            ],
            padding="VALID",
        )
    with pytest.raises(MDFError, match="channel scales"):
        run(
            "QuantizedGroupedConv2d_8x8p32to8",
            [
                x,
                w,
                b,
                s(-1),
                s(1),
                s(-0.5),
                s(0.5),
                s(-1),
                s(1),
                np.zeros((1, 1, 1, 1)),
                np.array(2),
                s(-np.inf),
                s(np.inf),
                scale * 0.01,
            ],
            padding="VALID",
        )


def test_dilated_conv_quint8_bias():
    x = RNG.integers(0, 256, size=(1, 7, 7, 2), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(2, 2, 2, 3), dtype=np.uint8)
    b = RNG.integers(0, 256, size=(1, 1, 1, 3), dtype=np.uint8)
    q, mn, mx = run(
        "QuantizedDilatedConv2d_8x8p32to8",
        [
            x,
            w,
            b,
            s(-1),
            s(1),
            s(-1),
            s(1),
            s(-2),
            s(2),
            np.zeros((1, 1, 1, 1)),
            np.array([[[[2, 2]]]]),
            s(0.0),
            s(np.inf),
        ],
        padding="VALID",
    )
    ref = conv_real(real(x, -1, 1), real(w, -1, 1), dil=2) + real(b, -2, 2).reshape(-1)
    m, M = mn.item(), mx.item()
    assert q.shape == (1, 5, 5, 3) and m == 0.0
    np.testing.assert_allclose(
        deq(q, m, M), np.maximum(ref, 0), atol=float(step(m, M)) * 0.51 + 1e-5
    )
    with pytest.raises(MDFError, match="stride 1x1x1x1"):
        run(
            "QuantizedDilatedConv2d_8x8p32to8",
            [
                x,
                w,
                b,
                s(-1),
                s(1),
                s(-1),
                s(1),
                s(-2),
                s(2),
                np.zeros((1, 2, 2, 1)),
                np.array([2, 2]),
                s(0.0),
                s(np.inf),
            ],
            padding="VALID",
        )


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


def tconv_real(x, w, stride, pads):
    """Transposed conv by scattering each input pixel times the [O,H,W,I] filter (float)."""
    n, ih, iw, _ = x.shape
    o, kh, kw, _ = w.shape
    full = np.zeros((n, (ih - 1) * stride + kh, (iw - 1) * stride + kw, o))
    for i in range(ih):
        for j in range(iw):
            full[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :] += np.einsum(
                "bk,oack->baco", x[:, i, j, :], w
            )
    t, b, l, r = pads
    return full[:, t : full.shape[1] - b, l : full.shape[2] - r]


@pytest.mark.parametrize(
    "op", ["QuantizedTransposeConv2d_8x8p32to8", "QuantizedTransposeConv2d_8x8p8to8"]
)
def test_transpose_conv(op):
    x = RNG.integers(0, 256, size=(2, 3, 4, 2), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(3, 3, 3, 2), dtype=np.uint8)
    p32 = "p32" in op
    b = (
        RNG.integers(-(2**26), 2**26, size=(1, 1, 1, 3)).astype(np.int32)
        if p32
        else RNG.integers(0, 256, size=(1, 1, 1, 3), dtype=np.uint8)
    )
    pads = np.array([1, 0, 0, 2], np.int32).reshape(1, 1, 2, 2)
    q, mn, mx = run(
        op,
        [
            x,
            w,
            s(-1),
            s(1),
            s(-1),
            s(1),
            pads,
            np.zeros((1, 2, 2, 1)),
            b,
            s(-1),
            s(1),
            s(-np.inf),
            s(np.inf),
        ],
    )
    ref = tconv_real(real(x, -1, 1), real(w, -1, 1), 2, (1, 0, 0, 2))
    ref = ref + (b.reshape(-1) * 2.0 / 2**32 if p32 else real(b, -1, 1).reshape(-1))
    m, M = mn.item(), mx.item()
    assert q.shape == (2, 6, 7, 3) == ref.shape
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)
    with pytest.raises(MDFError, match="groups > 1"):
        run(
            op,
            [
                x,
                w,
                s(-1),
                s(1),
                s(-1),
                s(1),
                pads,
                np.zeros((1, 2, 2, 1)),
                b,
                s(-1),
                s(1),
                s(-np.inf),
                s(np.inf),
                None,
                np.array(2),
            ],
        )
