"""Hexagon normalisation and resizing: QuantizedBatchNorm_8x8p8to8/p32to8
(``out = x * scale[d] + bias[d]`` quantized to the output range, -inf/+inf = auto), QuantizedLRN_8
(``x / (bias + alpha/n * sum over the window of x^2)^beta``, window [1,1,1,k] across depth or
[1,kh,kw,1] spatially, centred, in-bounds terms only; output in its own data range [judgement])
and QuantizedResizeBilinear_8 (TF resize_bilinear; range copied)."""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import bias_real
from .quant import (
    F32,
    adjust_range,
    as4d,
    auto_or_given,
    dequantize_u8,
    fval,
    ilist,
    q8_triple,
    quantize_u8,
    real_u8,
    shape_of,
)

BN_IN = ("input", "scale", "input_min", "input_max", "scale_min", "scale_max", "bias",
         "bias_min", "bias_max", "output_min", "output_max")


def batch_norm(x, scale, x_min, x_max, s_min, s_max, bias, b_min, b_max, out_min, out_max,
               qint32_bias: bool):
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
    lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
    mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedBatchNorm_8x8p8to8", BN_IN)
def quantized_batch_norm_8x8p8to8(*args, padding="NA"):
    """Batch norm with quint8 scale and bias."""
    return batch_norm(*args, qint32_bias=False)


@hexop("QuantizedBatchNorm_8x8p32to8", BN_IN)
def quantized_batch_norm_8x8p32to8(*args, padding="NA"):
    """Batch norm with quint8 scale and qint32 bias."""
    return batch_norm(*args, qint32_bias=True)


def lrn_real(x: np.ndarray, window, bias, alpha, beta) -> np.ndarray:
    """LRN of float data; window [1,1,1,k] across depth or [1,kh,kw,1] spatial, centred."""
    wb, wh, ww, wd = shape_of(window)
    if wb != 1 or (wd != 1 and (wh, ww) != (1, 1)):
        raise MDFError(f"LRN window must be [1,1,1,k] (depth) or [1,kh,kw,1] (spatial), got "
                       f"{(wb, wh, ww, wd)}")
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
    r = lrn_real(x, window, bias, alpha, beta).astype(F32)
    mn, mx = adjust_range(r.min(), r.max()) if r.size else adjust_range(0.0, 0.0)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


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


def bilinear(x: np.ndarray, dims, align_corners=None) -> np.ndarray:
    """Bilinear resize of float data [b,h,w,d] to dims (h_out, w_out), TF source mapping."""
    hw = ilist(dims)
    if len(hw) != 2 or min(hw) < 1:
        raise MDFError(f"resize dims must be [1,1,1,2] = (h_out, w_out) >= 1, got {hw}")
    ac = bool(align_corners is not None and fval(align_corners) != 0)
    for axis, n_out in ((1, hw[0]), (2, hw[1])):
        n_in = x.shape[axis]
        scale = (n_in - 1) / (n_out - 1) if ac and n_out > 1 else n_in / n_out
        src = np.arange(n_out) * scale
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        f = (src - i0).reshape([-1 if k == axis else 1 for k in range(4)])
        x = np.take(x, i0, axis=axis) * (1 - f) + np.take(x, i1, axis=axis) * f
    return x


@hexop("QuantizedResizeBilinear_8", ("input", "new_dims", "input_min", "input_max",
                                     "align_corners"), optional=("align_corners",))
def quantized_resize_bilinear_8(q, dims, q_min, q_max, align_corners=None, *, padding="NA"):
    """Bilinear resize to (h_out, w_out), TF resize_bilinear source mapping; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    x = bilinear(dequantize_u8(as4d(q), mn, mx).astype(np.float64), dims, align_corners)
    return q8_triple(quantize_u8(x.astype(F32), mn, mx), mn, mx)
