"""Hexagon quantize / dequantize and the qint32 -> quint8 requantization chain.

Quantize uses ``adjust_range(min, max)`` then ``clamp(round((x - min)/step), 0, 255)``;
AutoQuantize takes the range of the data (NaN/inf rejected, max >= min + 1e-4). The TF-style chain
``QuantizedConv2d_8x8to32 -> RequantizationRange_32 -> Requantize_32to8`` (or the one-step
QuantizeDownAndShrinkRange_32to8) converts int32 codes to floats with ``step_in = (max-min)/2**32``
and quantizes them to 8 bits in a range adjusted for an exact zero, clipping.

Judgement calls (the document gives no formula): Quantize_int32 and Quantize_16 use the symmetric
range ``±max(|min|, |max|)``; QuantizedChannelScale_32xf multiplies codes by the channel scale,
rounding half away from zero, and keeps the input range.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import _kernels as K
from ._registry import hexop
from .quant import (
    F32,
    TWO32,
    adjust_range,
    as4d,
    dequantize_u8,
    fval,
    q8_triple,
    quantize_u8,
    round_half_away,
    scalar,
    step_q32,
    step_u8,
)

Q_IN = ("input", "input_min", "input_max")
REQ_IN = Q_IN + ("output_min", "output_max")


@hexop("Quantize", Q_IN)
def quantize(x, x_min, x_max, *, padding="NA"):
    """float -> quint8 in adjust_range(min, max)."""
    mn, mx = adjust_range(fval(x_min), fval(x_max))
    return q8_triple(quantize_u8(as4d(x, F32), mn, mx), mn, mx)


def auto_range(x: np.ndarray) -> tuple[np.float32, np.float32]:
    """adjust_range of the data's own min and max (max >= min + 1e-4); NaN/inf rejected."""
    if x.size == 0:
        return adjust_range(0.0, 0.0)
    if not np.all(np.isfinite(x)):
        raise MDFError("AutoQuantize: input holds NaN or inf; the data range is undefined")
    lo, hi = F32(x.min()), F32(x.max())
    hi = max(hi, F32(lo + F32(1e-4)))
    return adjust_range(lo, hi)


@hexop("AutoQuantize", ("input",))
def auto_quantize(x, *, padding="NA"):
    """float -> quint8 in the data's own range (adjusted for an exact zero)."""
    a = as4d(x, F32)
    mn, mx = auto_range(a)
    return q8_triple(quantize_u8(a, mn, mx), mn, mx)


@hexop("Dequantize", Q_IN, outputs=("output",))
def dequantize(q, q_min, q_max, *, padding="NA"):
    """quint8 -> float: min + q * (max - min)/255."""
    mn, mx = fval(q_min), fval(q_max)
    step = F32(max(F32(1e-18), F32(mx - mn)) / F32(255.0))
    return ((F32(mn) + as4d(q).astype(F32) * step).astype(F32),)


@hexop("Quantize_int32", Q_IN)
def quantize_int32(x, x_min, x_max, *, padding="NA"):
    """float -> qint32 in the symmetric range ±max(|min|, |max|), saturating."""
    m = F32(max(abs(fval(x_min)), abs(fval(x_max)), F32(1e-30)))
    step = F32(F32(2.0) * m / TWO32)
    v = round_half_away(as4d(x, F32).astype(np.float64) / float(step))
    q = np.clip(v, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int32)
    return q, scalar(-m), scalar(m)


@hexop("Dequantize_qint32_f", Q_IN, outputs=("output",))
def dequantize_qint32_f(q, q_min, q_max, *, padding="NA"):
    """qint32 -> float: q * (max - min)/2**32 (zero offset)."""
    return ((as4d(q).astype(F32) * step_q32(fval(q_min), fval(q_max))).astype(F32),)


@hexop("Quantize_16", Q_IN)
def quantize_16(x, x_min, x_max, *, padding="NA"):
    """float -> qint16, symmetric: real = q * max / 32768, out_min = -out_max."""
    m = F32(max(abs(fval(x_min)), abs(fval(x_max)), F32(1e-4)))
    v = round_half_away(as4d(x, F32).astype(np.float64) * (32768.0 / float(m)))
    return np.clip(v, -32768, 32767).astype(np.int16), scalar(-m), scalar(m)


def requantize_to(q32: np.ndarray, step_in: np.float32, mn, mx):
    q = K.requantize_q32(np.ascontiguousarray(q32), F32(step_in), F32(mn), step_u8(mn, mx))
    return q8_triple(q.reshape(q32.shape), mn, mx)


def q32_data_range(q32: np.ndarray, step_in: np.float32) -> tuple[np.float32, np.float32]:
    if q32.size == 0:
        return F32(0.0), F32(0.0)
    return F32(F32(q32.min()) * step_in), F32(F32(q32.max()) * step_in)


@hexop("QuantizeDownAndShrinkRange_32to8", Q_IN)
def quantize_down_and_shrink_range_32to8(q, q_min, q_max, *, padding="NA"):
    """qint32 -> quint8 in the range actually used by the data (adjusted for an exact zero)."""
    q32 = as4d(q).astype(np.int32)
    step_in = step_q32(fval(q_min), fval(q_max))
    mn, mx = adjust_range(*q32_data_range(q32, step_in))
    return requantize_to(q32, step_in, mn, mx)


@hexop("RequantizationRange_32", Q_IN, outputs=("output_min", "output_max"))
def requantization_range_32(q, q_min, q_max, *, padding="NA"):
    """The float range actually used by qint32 data, widened to hold 0 (min <= 0 <= max)."""
    q32 = as4d(q).astype(np.int32)
    lo, hi = q32_data_range(q32, step_q32(fval(q_min), fval(q_max)))
    return scalar(min(F32(0.0), lo)), scalar(max(F32(0.0), hi))


@hexop("Requantize_32to8", REQ_IN)
def requantize_32to8(q, q_min, q_max, out_min, out_max, *, padding="NA"):
    """qint32 -> quint8 in adjust_range(out_min, out_max), clipping."""
    mn, mx = adjust_range(fval(out_min), fval(out_max))
    return requantize_to(as4d(q).astype(np.int32), step_q32(fval(q_min), fval(q_max)), mn, mx)


@hexop("Requantize_8to8", REQ_IN)
def requantize_8to8(q, q_min, q_max, out_min, out_max, *, padding="NA"):
    """quint8 -> quint8 in adjust_range(out_min, out_max), clipping."""
    mn, mx = adjust_range(fval(out_min), fval(out_max))
    real = dequantize_u8(as4d(q), fval(q_min), fval(q_max))
    return q8_triple(quantize_u8(real, mn, mx), mn, mx)


@hexop("QuantizedChannelScale_32xf", ("input", "scale", "input_min", "input_max"))
def quantized_channel_scale_32xf(q, scale, q_min, q_max, *, padding="NA"):
    """qint32 codes times a per-channel float scale [1,1,1,d]; the range is kept."""
    q32 = as4d(q).astype(np.float64)
    s = np.asarray(scale, dtype=F32).reshape(-1)
    if s.size not in (1, q32.shape[3]):
        raise MDFError(f"channel scale must have {q32.shape[3]} values, got {s.size}")
    v = round_half_away(q32 * s.astype(np.float64))
    return np.clip(v, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int32), scalar(q_min), scalar(q_max)
