"""Hexagon convolution, depthwise convolution, supernodes, matrix product, bias additions and
pooling against numpy formulas of hexagon-digest §1.3 (hexagon_formulas.py)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, s, step, zero

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def rnd_u8(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def ref_conv(x, w, zx, zw, stride, same, depthwise=False):
    """Plain loops over zero-point-shifted codes with explicit padding by the zero code."""
    b, h, wd, c = x.shape
    fh, fw = w.shape[:2]
    sh, sw = stride
    if same:
        oh, ow = -(-h // sh), -(-wd // sw)
        ph = max(0, (oh - 1) * sh + fh - h)
        pw = max(0, (ow - 1) * sw + fw - wd)
    else:
        oh, ow = (h - fh) // sh + 1, (wd - fw) // sw + 1
        ph = pw = 0
    xp = np.pad(
        x.astype(np.int64) - zx, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0))
    )
    wz = w.astype(np.int64) - zw
    dout = c * w.shape[3] if depthwise else w.shape[3]
    out = np.zeros((b, oh, ow, dout), np.int64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * sh : i * sh + fh, j * sw : j * sw + fw, :]
            if depthwise:
                out[:, i, j, :] = np.einsum("bhwc,hwcm->bcm", patch, wz).reshape(b, -1)
            else:
                out[:, i, j, :] = np.einsum("bhwc,hwco->bo", patch, wz)
    return out


def _supernode_ref(x, w, xr, wr, b_real, stride, same, scale=None):
    acc = ref_conv(x, w, zero(*xr), zero(*wr), stride, same)
    r = acc * float(step(*xr) * step(*wr)) + b_real
    return r if scale is None else r * scale


@pytest.mark.parametrize("same,stride", [(True, (1, 1)), (False, (2, 1)), (True, (2, 2))])
@pytest.mark.parametrize("depthwise", [False, True])
def test_conv_8x8to32_exact(same, stride, depthwise):
    rng = np.random.default_rng(1)
    x = rnd_u8(rng, (2, 6, 7, 3))
    w = rnd_u8(rng, (3, 2, 3, 2 if depthwise else 4))
    xr, wr = (-1.5, 2.0), (-0.7, 0.4)
    op = "QuantizedDepthwiseConv2d_8x8to32" if depthwise else "QuantizedConv2d_8x8to32"
    out, mn, mx = run(
        op,
        [x, w, s(xr[0]), s(xr[1]), s(wr[0]), s(wr[1]), np.zeros((1, stride[0], stride[1], 1))],
        padding="SAME" if same else "VALID",
    )
    expect = ref_conv(x, w, zero(*xr), zero(*wr), stride, same, depthwise)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, expect)
    prod = step(*xr) * step(*wr)
    assert mn[0, 0, 0, 0] == pytest.approx(I32_MIN * prod, rel=1e-6)
    assert mx[0, 0, 0, 0] == pytest.approx(I32_MAX * prod, rel=1e-6)


def test_conv_rejects_na_padding_and_depth_mismatch():
    x = np.zeros((1, 4, 4, 2), np.uint8)
    w = np.zeros((2, 2, 2, 1), np.uint8)
    args = [x, w, s(-1), s(1), s(-1), s(1), np.zeros((1, 1, 1, 1))]
    with pytest.raises(MDFError, match="SAME or VALID"):
        run("QuantizedConv2d_8x8to32", args, padding="NA")
    with pytest.raises(MDFError, match="filter depth"):
        run(
            "QuantizedConv2d_8x8to32",
            [x, np.zeros((2, 2, 3, 1), np.uint8)] + args[2:],
            padding="VALID",
        )


def test_matmul_exact():
    rng = np.random.default_rng(2)
    a, b = rnd_u8(rng, (1, 1, 5, 7)), rnd_u8(rng, (1, 1, 7, 3))
    ar, br = (-3.0, 1.0), (0.0, 2.0)
    out, mn, mx = run("QuantizedMatMul_8x8to32", [a, b, s(ar[0]), s(ar[1]), s(br[0]), s(br[1])])
    expect = (a[0, 0].astype(np.int64) - zero(*ar)) @ (b[0, 0].astype(np.int64) - zero(*br))
    np.testing.assert_array_equal(out[0, 0], expect)
    assert out.shape == (1, 1, 5, 3)
    assert mn[0, 0, 0, 0] < 0 < mx[0, 0, 0, 0]


def test_bias_add_8p8to32_formula():
    rng = np.random.default_rng(3)
    x, b = rnd_u8(rng, (1, 2, 2, 4)), rnd_u8(rng, (1, 1, 1, 4))
    xr, br = (-2.0, 6.0), (-0.5, 0.5)
    out, mn, mx = run("QuantizedBiasAdd_8p8to32", [x, b, s(xr[0]), s(xr[1]), s(br[0]), s(br[1])])
    om = F(2**17) * F(6.0)
    assert mx[0, 0, 0, 0] == om and mn[0, 0, 0, 0] == -om
    so = F(2 * om) / F(2**32)
    v = (x.astype(np.float64) - zero(*xr)) * float(step(*xr) / so) + (
        b.astype(np.float64) - zero(*br)
    ) * float(step(*br) / so)
    np.testing.assert_array_equal(out, np.sign(v) * np.floor(np.abs(v) + 0.5))
    real = out.astype(np.float64) * float(so)
    ref = (x.astype(np.float64) - zero(*xr)) * float(step(*xr)) + (
        b.astype(np.float64) - zero(*br)
    ) * float(step(*br))
    np.testing.assert_allclose(real, ref, atol=1e-3)


def test_bias_add_32p32to32_keeps_range():
    x = np.array([[[[100, -200]]]], np.int32)
    b = np.array([[[[10, 3]]]], np.int32)
    out, mn, mx = run("QuantizedBiasAdd_32p32to32", [x, b, s(-1.0), s(1.0), s(-4.0), s(4.0)])
    np.testing.assert_array_equal(out, [[[[140, -188]]]])  # b rescaled by 8/2 = 4
    assert mn[0, 0, 0, 0] == -1 and mx[0, 0, 0, 0] == 1


@pytest.mark.parametrize("auto", [True, False])
def test_supernode_p8_and_inf_means_auto(auto):
    rng = np.random.default_rng(5)
    x, w, b = rnd_u8(rng, (1, 5, 5, 3)), rnd_u8(rng, (3, 3, 3, 4)), rnd_u8(rng, (1, 1, 1, 4))
    xr, wr, br = (-1.0, 1.0), (-0.5, 0.5), (-2.0, 2.0)
    out_lo, out_hi = (-np.inf, np.inf) if auto else (-3.0, 3.0)
    q, mn, mx = run(
        "Supernode_8x8p8to8",
        [
            x,
            w,
            s(xr[0]),
            s(xr[1]),
            s(wr[0]),
            s(wr[1]),
            np.zeros((1, 1, 1, 1)),
            b,
            s(br[0]),
            s(br[1]),
            s(out_lo),
            s(out_hi),
        ],
        padding="SAME",
    )
    b_real = (b.reshape(-1).astype(np.float64) - zero(*br)) * float(step(*br))
    ref = _supernode_ref(x, w, xr, wr, b_real, (1, 1), True)
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    if auto:
        assert m <= ref.min() + 1e-4 and M >= ref.max() - 1e-4
        assert M - m <= (ref.max() - ref.min()) * 1.01
        np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)
    else:
        assert m == pytest.approx(-3.0, abs=0.03) and M == pytest.approx(3.0, abs=0.03)
        np.testing.assert_allclose(
            deq(q, m, M), np.clip(ref, m, M), atol=float(step(m, M)) * 0.51 + 1e-5
        )
        assert (q == 0).any() or ref.min() > m  # clipping happens only where data leave range


def test_supernode_p32_min_zero_is_relu_and_channel_scale():
    rng = np.random.default_rng(6)
    x, w = rnd_u8(rng, (1, 4, 4, 2)), rnd_u8(rng, (2, 2, 2, 3))
    b = np.array([[[[1000000, -500000, 0]]]], np.int32)
    xr, wr = (-1.0, 1.0), (-1.0, 1.0)
    scale = np.array([[[[1.0, 0.5, 0.25]]]], F)
    # x, w, their ranges, the stride, b, its range and the output range; then the scales
    ranges = [s(-1), s(1), s(-1), s(1)]
    fixed = [x, w, *ranges, np.zeros((1, 2, 2, 1)), b, s(-1), s(1), s(0.0), s(np.inf)]
    q, mn, mx = run(
        "Supernode_8x8p32to8",
        [*fixed, scale],
        padding="VALID",
    )
    b_real = b.reshape(-1).astype(np.float64) * 2.0 / 2**32
    ref = _supernode_ref(x, w, xr, wr, b_real, (2, 2), False, scale.reshape(-1))
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    assert m == 0.0
    np.testing.assert_allclose(
        deq(q, m, M), np.maximum(ref, 0), atol=float(step(m, M)) * 0.51 + 1e-5
    )
    with pytest.raises(MDFError, match="channel scales"):
        run(
            "Supernode_8x8p32to8",
            [*fixed, scale * 2],
            padding="VALID",
        )


def test_depthwise_supernode_p32():
    rng = np.random.default_rng(7)
    x, w = rnd_u8(rng, (1, 5, 5, 2)), rnd_u8(rng, (3, 3, 2, 2))
    b = np.zeros((1, 1, 1, 4), np.int32)
    q, mn, mx = run(
        "DepthwiseSupernode_8x8p32to8",
        [
            x,
            w,
            s(-1),
            s(1),
            s(-1),
            s(1),
            np.zeros((1, 1, 1, 1)),
            b,
            s(-1),
            s(1),
            s(-np.inf),
            s(np.inf),
        ],
        padding="SAME",
    )
    ref = ref_conv(x, w, zero(-1, 1), zero(-1, 1), (1, 1), True, True) * float(step(-1, 1)) ** 2
    m, M = mn[0, 0, 0, 0], mx[0, 0, 0, 0]
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pooling(padding):
    rng = np.random.default_rng(9)
    x = rnd_u8(rng, (2, 5, 6, 3))
    win, stride = np.zeros((1, 3, 2, 1)), np.zeros((1, 2, 2, 1))
    mx_q, _, _ = run("QuantizedMaxPool_8", [x, s(-1), s(1), win, stride], padding=padding)
    av_q, lo, hi = run("QuantizedAvgPool_8", [x, s(-1), s(1), win, stride], padding=padding)
    assert lo[0, 0, 0, 0] == -1 and hi[0, 0, 0, 0] == 1
    if padding == "VALID":
        oh, ow, pt, pl = 2, 3, 0, 0
    else:
        oh, ow = 3, 3
        pt, pl = max(0, (oh - 1) * 2 + 3 - 5) // 2, max(0, (ow - 1) * 2 + 2 - 6) // 2
    assert mx_q.shape == (2, oh, ow, 3)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * 2 - pt, j * 2 - pl
            patch = x[:, max(0, y0) : y0 + 3, max(0, x0) : x0 + 2, :].astype(np.int64)
            np.testing.assert_array_equal(mx_q[:, i, j], patch.max(axis=(1, 2)))
            n = patch.shape[1] * patch.shape[2]
            np.testing.assert_array_equal(av_q[:, i, j], (patch.sum(axis=(1, 2)) + n // 2) // n)
    (f,) = run("MaxPool_f", [deq(x, -1, 1), win, stride], padding=padding)
    np.testing.assert_allclose(f, deq(mx_q, -1, 1), atol=1e-6)
