"""Hexagon grouped, dilated and transposed convolutions against numpy formulas, and the 16-bit
convolutions against onnxruntime's float Conv / ConvTranspose on the dequantized operands
(within one output step) and against the 8x8 kernel on 8-bit codes."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, ort, real, s, step

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run
from mdf_engine.hexagon.quant import to_u16

RNG = np.random.default_rng(9)


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


I = RNG.integers(-1000, 1000, size=(2, 3, 4, 5)).astype(np.int32)


def u16(x, mn, mx):
    q = to_u16(x, mn, mx)
    return q, mn + q.astype(np.float64) * ((mx - mn) / 65536.0)


def zero_exact(mn, mx):
    """A quint16 range whose zero is a code (so padding with it adds exactly 0)."""
    st = (mx - mn) / 65536.0
    return -round(-mn / st) * st, mx


def test_grouped_conv():
    x = RNG.integers(0, 256, size=(1, 5, 5, 4), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(3, 3, 2, 6), dtype=np.uint8)
    b = RNG.integers(-(2**24), 2**24, size=(1, 1, 1, 6)).astype(np.int32)
    scale = np.full((1, 1, 1, 6), 0.5, F)
    # x, w, b, their ranges and the stride; then the group count, the output range, scales
    fixed = [x, w, b, s(-1), s(1), s(-0.5), s(0.5), s(-1), s(1), np.zeros((1, 1, 1, 1))]
    q, mn, mx = run(
        "QuantizedGroupedConv2d_8x8p32to8",
        [*fixed, np.array(2), s(-np.inf), s(np.inf), scale],
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
            [*fixed, np.array(3), s(-np.inf), s(np.inf)],
            padding="VALID",
        )
    with pytest.raises(MDFError, match="channel scales"):
        run(
            "QuantizedGroupedConv2d_8x8p32to8",
            [*fixed, np.array(2), s(-np.inf), s(np.inf), scale * 0.01],
            padding="VALID",
        )


def test_dilated_conv_quint8_bias():
    x = RNG.integers(0, 256, size=(1, 7, 7, 2), dtype=np.uint8)
    w = RNG.integers(0, 256, size=(2, 2, 2, 3), dtype=np.uint8)
    b = RNG.integers(0, 256, size=(1, 1, 1, 3), dtype=np.uint8)
    inputs = [x, w, b, s(-1), s(1), s(-1), s(1), s(-2), s(2)]  # x, w, b and their ranges
    q, mn, mx = run(
        "QuantizedDilatedConv2d_8x8p32to8",
        [*inputs, np.zeros((1, 1, 1, 1)), np.array([[[[2, 2]]]]), s(0.0), s(np.inf)],
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
            [*inputs, np.zeros((1, 2, 2, 1)), np.array([2, 2]), s(0.0), s(np.inf)],
            padding="VALID",
        )


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
    # x, w, their ranges, pads, stride, b, its range, the output range
    ranges = [s(-1), s(1), s(-1), s(1)]
    inputs = [x, w, *ranges, pads, np.zeros((1, 2, 2, 1)), b, s(-1), s(1), s(-np.inf), s(np.inf)]
    q, mn, mx = run(op, inputs)
    ref = tconv_real(real(x, -1, 1), real(w, -1, 1), 2, (1, 0, 0, 2))
    ref = ref + (b.reshape(-1) * 2.0 / 2**32 if p32 else real(b, -1, 1).reshape(-1))
    m, M = mn.item(), mx.item()
    assert q.shape == (2, 6, 7, 3) == ref.shape
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51 + 1e-5)
    with pytest.raises(MDFError, match="groups > 1"):
        run(op, [*inputs, None, np.array(2)])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_16x16to32_against_onnxruntime(padding):
    rng = np.random.default_rng(0)
    xr, wr = zero_exact(-1.0, 2.0), zero_exact(-0.5, 0.5)
    qx, x = u16(rng.uniform(-1, 2, size=(1, 6, 7, 3)), *xr)
    qw, w = u16(rng.uniform(-0.5, 0.5, size=(3, 3, 3, 4)), *wr)
    acc, lo, hi = run(
        "QuantizedConv2d_16x16to32",
        [qx, qw, s(xr[0]), s(xr[1]), s(wr[0]), s(wr[1]), np.zeros((1, 2, 1, 1))],
        padding=padding,
    )
    assert acc.dtype == np.int32
    st = (hi.item() - lo.item()) / 2**32
    pads = [0, 1, 1, 1] if padding == "SAME" else [0, 0, 0, 0]  # TF SAME: extra pad after
    (ref,) = ort(
        "Conv",
        {"x": x.transpose(0, 3, 1, 2).astype(F), "w": w.transpose(3, 2, 0, 1).astype(F)},
        {"strides": [2, 1], "pads": pads},
    )
    ref = ref.transpose(0, 2, 3, 1)
    assert acc.shape == ref.shape
    np.testing.assert_allclose(acc * st, ref, atol=st + 1e-4 * np.abs(ref).max(), rtol=1e-4)


def test_conv_16x16to32_on_8bit_codes_is_the_8x8_conv():
    rng = np.random.default_rng(1)
    qx = rng.integers(0, 256, size=(1, 5, 5, 2)).astype(np.uint8)
    qw = rng.integers(0, 256, size=(2, 2, 2, 3)).astype(np.uint8)
    args = [qx, qw, s(-1.0), s(1.0), s(-0.3), s(0.7), np.zeros((1, 1, 1, 1))]
    a16 = run("QuantizedConv2d_16x16to32", args, padding="VALID")
    a8 = run("QuantizedConv2d_8x8to32", args, padding="VALID")
    for u, v in zip(a16, a8):
        np.testing.assert_array_equal(u, v)


def test_transpose_conv_16x16p32to16_against_onnxruntime():
    rng = np.random.default_rng(2)
    xr, wr = zero_exact(-1.0, 1.0), zero_exact(-0.5, 0.5)
    qx, x = u16(rng.uniform(-1, 1, size=(1, 4, 5, 3)), *xr)
    qw, w = u16(rng.uniform(-0.5, 0.5, size=(2, 3, 3, 3)), *wr)  # [O, H, W, I]
    bias = np.array([0.25, -0.5])
    bq = np.round(bias / (8.0 / 2**32)).astype(np.int32)  # qint32 on [-4, 4]
    q, lo, hi = run(
        "QuantizedTransposeConv2d_16x16p32to16",
        [
            qx,
            qw,
            s(xr[0]),
            s(xr[1]),
            s(wr[0]),
            s(wr[1]),
            np.array([1, 0, 1, 1], np.int32),
            np.zeros((1, 2, 2, 1)),
            bq.reshape(1, 1, 1, 2),
            s(-4.0),
            s(4.0),
            s(-np.inf),
            s(np.inf),
        ],
    )
    (ref,) = ort(
        "ConvTranspose",
        {
            "x": x.transpose(0, 3, 1, 2).astype(F),
            "w": w.transpose(3, 0, 1, 2).astype(F),
            "b": bias.astype(F),
        },
        {"strides": [2, 2], "pads": [1, 1, 0, 1]},
    )
    ref = ref.transpose(0, 2, 3, 1)
    assert q.dtype == np.uint16 and q.shape == ref.shape
    st = (hi.item() - lo.item()) / 65536
    got = lo.item() + q.astype(np.float64) * st
    assert np.abs(got - ref).max() <= st + 1e-5
