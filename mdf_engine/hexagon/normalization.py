"""Hexagon normalisation: QuantizedBatchNorm_8x8p8to8/p32to8 (``out = x * scale[d] + bias[d]``
quantized to the output range, -inf/+inf = auto), LRN (``x / (bias + alpha/n * sum over the window
of x^2)^beta``, window [1,1,1,k] across depth or [1,kh,kw,1] spatially, centred, in-bounds terms
only; the quantized output in its own data range [judgement]), instance norms
(``(x - mean) / sqrt(var + eps)`` per batch and channel over h, w; eps 1e-5 for
QuantizedInstanceNorm_8, whose document gives none; gamma/beta for the BG form; adjusted data
range), L2Normalize_8 (``x / sqrt(sum x^2)`` along an axis, default depth, fixed range [-1, 1]) and
Moments_8to32 (mean quint8 in the input range; population variance qint32 with 8 fractional bits
of step**2, range ±2**31 * step**2 / 256).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import bias_real
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    O1,
    Q_IN,
    as4d,
    codes,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_of_real,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    shape_of,
    step_u8,
)
from .reduce import reduce_4d

BN_IN = (
    "input",
    "scale",
    "input_min",
    "input_max",
    "scale_min",
    "scale_max",
    "bias",
    "bias_min",
    "bias_max",
    "output_min",
    "output_max",
)


def batch_norm(
    x, scale, x_min, x_max, s_min, s_max, bias, b_min, b_max, out_min, out_max, qint32_bias: bool
):
    """x * scale[d] + bias[d] in float, quantized to the output range."""
    a = as4d(x)
    d = a.shape[3]
    rx = real_u8(a, fval(x_min), fval(x_max))
    s = real_u8(as4d(scale), fval(s_min), fval(s_max)).reshape(-1)
    b = bias_real(bias, b_min, b_max, qint32_bias)
    for name, v in (("scale", s), ("bias", b)):
        if v.size not in (1, d):
            raise MDFError(f"batch norm {name} must be [1,1,1,{d}] or [1,1,1,1], got {v.size}")
    r = (rx * s + b).astype(F32)
    return q8_of_real(r, out_min, out_max)


@hexop("QuantizedBatchNorm_8x8p8to8", BN_IN)
def quantized_batch_norm_8x8p8to8(*args, padding="NA"):
    """Batch norm with quint8 scale and bias."""
    return batch_norm(*args, qint32_bias=False)


@hexop("QuantizedBatchNorm_8x8p32to8", BN_IN)
def quantized_batch_norm_8x8p32to8(*args, padding="NA"):
    """Batch norm with quint8 scale and qint32 bias."""
    return batch_norm(*args, qint32_bias=True)


def _shifted(v: np.ndarray, off: tuple[int, int, int]) -> np.ndarray:
    """v[b, h+dh, w+dw, d+dd] where in bounds, else 0."""
    out = np.zeros_like(v)
    src, dst = [slice(None)], [slice(None)]
    for axis, o in zip((1, 2, 3), off):
        n = v.shape[axis]
        src.append(slice(max(0, o), n + min(0, o)))
        dst.append(slice(max(0, -o), n - max(0, o)))
    out[tuple(dst)] = v[tuple(src)]
    return out


def lrn_real(x: np.ndarray, window, bias, alpha, beta) -> np.ndarray:
    """LRN of float data; window [1,1,1,k] across depth or [1,kh,kw,1] spatial, centred."""
    wb, wh, ww, wd = shape_of(window)
    if wb != 1 or (wd != 1 and (wh, ww) != (1, 1)):
        raise MDFError(
            f"LRN window must be [1,1,1,k] (depth) or [1,kh,kw,1] (spatial), got {(wb, wh, ww, wd)}"
        )
    n = wh * ww * wd
    sq = x * x
    acc = np.zeros_like(x)
    for a in range(wh):
        for b in range(ww):
            for c in range(wd):
                acc += _shifted(sq, (a - wh // 2, b - ww // 2, c - wd // 2))
    return x / (float(fval(bias)) + float(fval(alpha)) / n * acc) ** float(fval(beta))


@hexop("QuantizedLRN_8", ("input", "input_min", "input_max", "window", "bias", "alpha", "beta"))
def quantized_lrn_8(q, q_min, q_max, window, bias, alpha, beta, *, padding="NA"):
    """Local response normalisation of quint8 data."""
    x = dequantize_u8(as4d(q), fval(q_min), fval(q_max)).astype(np.float64)
    return q8_of_real(lrn_real(x, window, bias, alpha, beta))


@hexop("LRN_f", ("input", "window", "bias", "alpha", "beta"), outputs=O1)
def lrn_f(x, window, bias, alpha, beta, *, padding="NA"):
    """x / (bias + alpha/n * sum over the centred window of x^2)^beta."""
    return (lrn_real(as4d(x, np.float64), window, bias, alpha, beta).astype(F32),)


def _instance_norm(r: np.ndarray, eps: float) -> np.ndarray:
    mean = r.mean(axis=(1, 2), keepdims=True)
    var = ((r - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    return (r - mean) / np.sqrt(var + eps)


@hexop("QuantizedInstanceNorm_8", Q_IN)
def quantized_instance_norm_8(q, q_min, q_max, *, padding="NA"):
    """(x - mean) / sqrt(var + 1e-5) per batch and channel over h, w (population variance)."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max)).astype(np.float64)
    return q8_of_real(_instance_norm(r, 1e-5))


@hexop(
    "QuantizedInstanceNormBG_8",
    Q_IN + ("epsilon", "gamma", "gamma_min", "gamma_max", "beta", "beta_min", "beta_max"),
)
def quantized_instance_norm_bg_8(
    q, q_min, q_max, eps, gamma, g_min, g_max, beta, b_min, b_max, *, padding="NA"
):
    """(x - mean[b,c]) * gamma / sqrt(var[b,c] + eps) + beta, over h, w."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max)).astype(np.float64)
    g = real_u8(np.asarray(gamma).astype(np.uint8), fval(g_min), fval(g_max)).reshape(-1)
    b = real_u8(np.asarray(beta).astype(np.uint8), fval(b_min), fval(b_max)).reshape(-1)
    for name, v in (("gamma", g), ("beta", b)):
        if v.size not in (1, r.shape[3]):
            raise MDFError(f"QuantizedInstanceNormBG_8: {name} needs {r.shape[3]} values")
    return q8_of_real(_instance_norm(r, float(fval(eps))) * g + b)


@hexop("L2Normalize_8", Q_IN + ("axis",), optional=("axis",))
def l2_normalize_8(q, q_min, q_max, axis=None, *, padding="NA"):
    """x / sqrt(sum of x^2 along axis (default depth)) into the fixed range [-1, 1]."""
    r = real_u8(codes(q), fval(q_min), fval(q_max)).astype(np.float64)
    ax = 3 if axis is None else ival(axis) % 4
    norm = np.sqrt((r * r).sum(axis=ax, keepdims=True))
    out = np.divide(r, norm, out=np.zeros_like(r), where=norm > 0)
    return q8_triple(quantize_u8(out.astype(F32), F32(-1), F32(1)), -1.0, 1.0)


@hexop(
    "Moments_8to32",
    ("input", "axes", "input_min", "input_max"),
    outputs=("mean", "variance", "mean_min", "mean_max", "variance_min", "variance_max"),
)
def moments_8to32(q, axes, q_min, q_max, *, padding="NA"):
    """Mean (quint8, input range) and population variance (qint32) over the axes (kept)."""
    mn, mx = fval(q_min), fval(q_max)
    ax = ilist(axes)
    if not 1 <= len(ax) <= 4 or any(not 0 <= a <= 3 for a in ax):
        raise MDFError(f"Moments_8to32: axes must be 1..4 values in 0..3, got {ax}")
    r = dequantize_u8(as4d(q), mn, mx).astype(np.float64)
    mean = reduce_4d(r, np.array(ax), None, "NA", np.mean)
    var = reduce_4d((r - mean) ** 2, np.array(ax), None, "NA", np.mean)
    st = float(step_u8(mn, mx)) ** 2 / 256.0
    vq = np.clip(np.floor(var / st + 0.5), INT32_MIN, INT32_MAX).astype(np.int32)
    vmax = F32(INT32_MAX * st)
    vmin = F32(INT32_MIN * st)
    return (
        quantize_u8(mean.astype(F32), mn, mx),
        vq,
        scalar(mn),
        scalar(mx),
        scalar(vmin),
        scalar(vmax),
    )
