"""The 16-bit Hexagon convolutions against onnxruntime's float Conv / ConvTranspose on the
dequantized operands (within one output step), and the 8-bit case against the 8x8 kernel."""

import numpy as np
import pytest
from hexagon_formulas import F, ort, s

from mdf_engine.hexagon import run
from mdf_engine.hexagon.quant import to_u16


def u16(x, mn, mx):
    q = to_u16(x, mn, mx)
    return q, mn + q.astype(np.float64) * ((mx - mn) / 65536.0)


def zero_exact(mn, mx):
    """A quint16 range whose zero is a code (so padding with it adds exactly 0)."""
    st = (mx - mn) / 65536.0
    return -round(-mn / st) * st, mx


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
