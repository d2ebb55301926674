"""Remaining implementable Hexagon ops: TopK_8, QuantizedPRelu_8_V2, instance normalisation,
QuantizedPad_V2_8, Pack_f/Pack_int32 and Moments_8to32.

Judgement calls: TopK_8 returns int32 indices (the shared TopK header says int32, the _8 entry
"quint8"); QuantizedInstanceNorm_8 uses epsilon 1e-5 (the document gives none); instance norms and
PRelu_V2 quantize to the adjusted data range unless an output range is given; Moments_8to32 gives
the mean in the input range and the variance as qint32 with 8 fractional bits of step**2
(range ±2**31 * step**2 / 256). Pack appends the inputs' memory along the rightmost size-1 dim, as
the document describes (with its caveat about non-1 dims to the left).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .floatops import pad_widths, reduce_4d
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    adjust_range,
    as4d,
    auto_or_given,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    step_u8,
)

Q_IN = ("input", "input_min", "input_max")
OUT_RANGE = ("output_min", "output_max")


@hexop("TopK_8", ("input", "k", "input_min", "input_max"),
       outputs=("output", "indices", "output_min", "output_max"))
def topk_8(q, k, q_min, q_max, *, padding="NA"):
    """The k largest codes along depth (descending; all of the depth if it is smaller than k)
    and their int32 indices; range copied."""
    a = as4d(q).astype(np.uint8)
    kk = ival(k)
    if kk < 1:
        raise MDFError(f"TopK_8: k must be >= 1, got {kk}")
    idx = np.argsort(-a.astype(np.int16), axis=3, kind="stable")[..., :kk]
    return (np.take_along_axis(a, idx, axis=3), idx.astype(np.int32), scalar(q_min),
            scalar(q_max))


@hexop("QuantizedPRelu_8_V2", Q_IN + ("alphas", "alpha_min", "alpha_max") + OUT_RANGE,
       optional=OUT_RANGE)
def quantized_prelu_8_v2(q, q_min, q_max, alphas, a_min, a_max, out_min=None, out_max=None, *,
                         padding="NA"):
    """x if x > 0 else alpha * x with quint8 alphas (broadcast along depth)."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max))
    al = real_u8(np.asarray(alphas).astype(np.uint8), fval(a_min), fval(a_max)).reshape(-1)
    if al.size not in (1, r.shape[3]):
        raise MDFError(f"QuantizedPRelu_8_V2: {al.size} alphas for depth {r.shape[3]}")
    out = np.where(r > 0, r, r * al).astype(F32)
    lo, hi = (out.min(), out.max()) if out.size else (F32(0), F32(0))
    mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(out, mn, mx), mn, mx)


def _instance_norm(r: np.ndarray, eps: float) -> np.ndarray:
    mean = r.mean(axis=(1, 2), keepdims=True)
    var = ((r - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    return (r - mean) / np.sqrt(var + eps)


def _auto8(r: np.ndarray):
    r = r.astype(F32)
    mn, mx = adjust_range(r.min(), r.max()) if r.size else adjust_range(0.0, 0.0)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedInstanceNorm_8", Q_IN)
def quantized_instance_norm_8(q, q_min, q_max, *, padding="NA"):
    """(x - mean) / sqrt(var + 1e-5) per batch and channel over h, w (population variance)."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max)).astype(np.float64)
    return _auto8(_instance_norm(r, 1e-5))


@hexop("QuantizedInstanceNormBG_8", Q_IN + ("epsilon", "gamma", "gamma_min", "gamma_max",
                                            "beta", "beta_min", "beta_max"))
def quantized_instance_norm_bg_8(q, q_min, q_max, eps, gamma, g_min, g_max, beta, b_min, b_max,
                                 *, padding="NA"):
    """(x - mean[b,c]) * gamma / sqrt(var[b,c] + eps) + beta, over h, w."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max)).astype(np.float64)
    g = real_u8(np.asarray(gamma).astype(np.uint8), fval(g_min), fval(g_max)).reshape(-1)
    b = real_u8(np.asarray(beta).astype(np.uint8), fval(b_min), fval(b_max)).reshape(-1)
    for name, v in (("gamma", g), ("beta", b)):
        if v.size not in (1, r.shape[3]):
            raise MDFError(f"QuantizedInstanceNormBG_8: {name} needs {r.shape[3]} values")
    return _auto8(_instance_norm(r, float(fval(eps))) * g + b)


@hexop("QuantizedPad_V2_8", Q_IN + ("paddings", "pad_value"))
def quantized_pad_v2_8(q, q_min, q_max, pads, pad_value, *, padding="NA"):
    """Pad with the given quint8 code (a required scalar); range copied."""
    a = as4d(q).astype(np.uint8)
    code = ival(pad_value)
    if not 0 <= code <= 255:
        raise MDFError(f"QuantizedPad_V2_8: pad value must be a quint8 code 0..255, got {code}")
    return q8_triple(np.pad(a, pad_widths(pads, a), constant_values=np.uint8(code)),
                     fval(q_min), fval(q_max))


def pack(xs, dtype) -> np.ndarray:
    if not xs:
        raise MDFError("Pack needs at least one input")
    arrs = [as4d(x, dtype) for x in xs]
    shape = arrs[0].shape
    if any(a.shape != shape for a in arrs):
        raise MDFError(f"Pack inputs must have the same shape, got {[a.shape for a in arrs]}")
    ones = [i for i, n in enumerate(shape) if n == 1]
    if not ones:
        raise MDFError(f"Pack needs a dimension of size 1 to stack along, shape is {shape}")
    out = list(shape)
    out[ones[-1]] = len(arrs)
    return np.concatenate([a.reshape(-1) for a in arrs]).reshape(out)


@hexop("Pack_f", ("inputs",), outputs=("output",), variadic=True)
def pack_f(*xs, padding="NA"):
    """Stack same-shape float tensors along the rightmost size-1 dim (memory append)."""
    return (pack(xs, F32),)


@hexop("Pack_int32", ("inputs",), outputs=("output",), variadic=True)
def pack_int32(*xs, padding="NA"):
    """Stack same-shape int32 tensors along the rightmost size-1 dim (memory append)."""
    return (pack(xs, np.int32),)


@hexop("Moments_8to32", ("input", "axes", "input_min", "input_max"),
       outputs=("mean", "variance", "mean_min", "mean_max", "variance_min", "variance_max"))
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
    return (quantize_u8(mean.astype(F32), mn, mx), vq, scalar(mn), scalar(mx), scalar(vmin),
            scalar(vmax))
