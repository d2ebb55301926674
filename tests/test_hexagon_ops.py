"""Core Hexagon ops against values computed independently here from the digest's formulas."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, s, step, zero

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


def _supernode_ref(x, w, xr, wr, b_real, stride, same, scale=None):
    acc = ref_conv(x, w, zero(*xr), zero(*wr), stride, same)
    r = acc * float(step(*xr) * step(*wr)) + b_real
    return r if scale is None else r * scale


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
    q, mn, mx = run(
        "Supernode_8x8p32to8",
        [
            x,
            w,
            s(-1),
            s(1),
            s(-1),
            s(1),
            np.zeros((1, 2, 2, 1)),
            b,
            s(-1),
            s(1),
            s(0.0),
            s(np.inf),
            scale,
        ],
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
            [
                x,
                w,
                s(-1),
                s(1),
                s(-1),
                s(1),
                np.zeros((1, 2, 2, 1)),
                b,
                s(-1),
                s(1),
                s(0.0),
                s(np.inf),
                scale * 2,
            ],
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


def test_checks_raise_with_amount():
    run("Check", [np.array([1, 2]), np.array([1, 2])])
    with pytest.raises(MDFError, match="exceeds the tolerance"):
        run("Check", [np.array([1, 2]), np.array([1, 3])])
    ref = np.linspace(-1, 1, 10).astype(F)
    run("Close_f", [ref + F(0.1), ref])  # 0.1 <= 0.07 * 2 = 0.14
    with pytest.raises(MDFError, match=r"exceeds the tolerance 0.14 by 0.06"):
        run("Close_f", [ref + F(0.2), ref])
    run("Close_f", [ref + F(0.2), ref, s(0.15)])
    run("Close_quint8", [np.array([100, 50]), np.array([105, 50])])
    with pytest.raises(MDFError, match="Close_int32 failed"):
        run("Close_int32", [np.array([100, 50]), np.array([120, 50])])
    q = np.array([[[[10, 20]]]], np.uint8)
    run("Close_q_quint8", [q, s(0), s(1), q + 3, s(0), s(1)])
    with pytest.raises(MDFError, match="Close_q_quint8 failed"):
        run("Close_q_quint8", [q, s(0), s(1), q + 30, s(0), s(1)])
    run("Close_d32", [np.array([13]), s(0), s(255), np.array([13.4])])
    with pytest.raises(MDFError, match="excess error"):
        run("Close_d32", [np.array([14]), s(0), s(255), np.array([13.4])])


def test_io_const_nop():
    a = np.ones((1, 1, 1, 2))
    assert run("INPUT", [a, a])[1] is a
    np.testing.assert_array_equal(run("Nop", [a])[0], a)
    np.testing.assert_array_equal(run("Const", [], value=[1.0, 2.0])[0], [[[[1.0, 2.0]]]])
    with pytest.raises(MDFError, match="needs attribute 'value'"):
        run("Const", [])


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
