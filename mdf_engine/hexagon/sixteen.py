"""16-bit Hexagon ops. qint16 is symmetric: ``real = q * max / 32768`` with ``min = -max``;
quint16 is asymmetric: ``real = min + q * (max - min) / 65536``.

* Convert_8_16: lossless, range ±256*step8 so that q16 = (q8 - z) * 128.
* Convert_8_u16: codes x 257, same min, max widened to min + (max-min)*65536/65535 (lossless; the
  document describes the widening as about (max-min)/65536).
* Convert_16_8 / Convert_u16_8: requested range (default the input range) adjusted for an exact
  zero and, if needed, scaled up so the 8-bit step is at least twice the 16-bit step.
* Requantize_32to16: symmetric ±max(|out_min|, |out_max|); QuantizeDownAndShrinkRange_32to16:
  the smallest symmetric range holding the data, but at least in_range/65536 wide.
* QuantizedAdd/Sub/Mul_16 and _u16: the real result quantized to the required output range,
  enlarged when it is below 1/8192 of the largest input range (add/sub) or below 1/32768 of the
  product of the input ranges (mul).
* QuantizedPad_16 / _u16: pad value quantized; within 1536 codes of the range it is clipped,
  further out an error; -inf/+inf give the min/max code. Range copied.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .floatops import pad_widths
from .quant import (
    F32,
    adjust_range,
    as4d,
    fval,
    q8_triple,
    quantize_u8,
    scalar,
    step_q32,
    step_u8,
    zero_code,
)

Q_IN = ("input", "input_min", "input_max")
OUT_RANGE = ("output_min", "output_max")


def real_i16(q, mx) -> np.ndarray:
    return as4d(q).astype(np.float64) * (float(fval(mx)) / 32768.0)


def real_u16(q, mn, mx) -> np.ndarray:
    m, M = float(fval(mn)), float(fval(mx))
    return m + as4d(q).astype(np.float64) * ((M - m) / 65536.0)


def to_i16(r: np.ndarray, m: float) -> np.ndarray:
    v = r * (32768.0 / m)
    return np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -32768, 32767).astype(np.int16)


def to_u16(r: np.ndarray, mn: float, mx: float) -> np.ndarray:
    v = (r - mn) / ((mx - mn) / 65536.0)
    return np.clip(np.floor(v + 0.5), 0, 65535).astype(np.uint16)


@hexop("Convert_8_16", Q_IN)
def convert_8_16(q, q_min, q_max, *, padding="NA"):
    """quint8 -> qint16 losslessly: q16 = (q8 - z) * 128 in the range ±256 * step8."""
    mn, mx = fval(q_min), fval(q_max)
    q16 = ((as4d(q).astype(np.int32) - zero_code(mn, mx)) * 128).astype(np.int16)
    m = F32(256.0) * step_u8(mn, mx)
    return q16, scalar(-m), scalar(m)


@hexop("Convert_8_u16", Q_IN)
def convert_8_u16(q, q_min, q_max, *, padding="NA"):
    """quint8 -> quint16: codes x 257, same min, max widened by a factor 65536/65535 of the range."""
    mn, mx = float(fval(q_min)), float(fval(q_max))
    return ((as4d(q).astype(np.uint16) * 257).astype(np.uint16), scalar(mn),
            scalar(mn + (mx - mn) * 65536.0 / 65535.0))


def _to8(r: np.ndarray, in_step: float, lo, hi):
    mn, mx = adjust_range(fval(lo), fval(hi))
    need = 510.0 * in_step
    if float(mx - mn) < need:
        k = need / float(mx - mn)
        mn, mx = adjust_range(F32(float(mn) * k), F32(float(mx) * k))
    return q8_triple(quantize_u8(r.astype(F32), mn, mx), mn, mx)


@hexop("Convert_16_8", Q_IN + OUT_RANGE, optional=OUT_RANGE)
def convert_16_8(q, q_min, q_max, out_min=None, out_max=None, *, padding="NA"):
    """qint16 -> quint8 in the requested (default: input) range, made a proper qu8 range."""
    m = float(fval(q_max))
    r = real_i16(q, q_max)
    lo, hi = (q_min, q_max) if out_min is None else (out_min, out_max)
    return _to8(r, 2 * m / 65536.0, lo, hi)


@hexop("Convert_u16_8", Q_IN + OUT_RANGE, optional=OUT_RANGE)
def convert_u16_8(q, q_min, q_max, out_min=None, out_max=None, *, padding="NA"):
    """quint16 -> quint8 in the requested (default: input) range, made a proper qu8 range."""
    r = real_u16(q, q_min, q_max)
    lo, hi = (q_min, q_max) if out_min is None else (out_min, out_max)
    return _to8(r, (float(fval(q_max)) - float(fval(q_min))) / 65536.0, lo, hi)


@hexop("Requantize_32to16", Q_IN + OUT_RANGE)
def requantize_32to16(q, q_min, q_max, out_min, out_max, *, padding="NA"):
    """qint32 -> qint16 in the symmetric range ±max(|out_min|, |out_max|)."""
    m = max(abs(float(fval(out_min))), abs(float(fval(out_max))), 1e-30)
    r = as4d(q).astype(np.float64) * float(step_q32(fval(q_min), fval(q_max)))
    return to_i16(r, m), scalar(-m), scalar(m)


@hexop("QuantizeDownAndShrinkRange_32to16", Q_IN)
def quantize_down_and_shrink_range_32to16(q, q_min, q_max, *, padding="NA"):
    """qint32 -> qint16 in the smallest symmetric range holding the data, >= in_range/65536."""
    a = as4d(q).astype(np.float64)
    st = float(step_q32(fval(q_min), fval(q_max)))
    r = a * st
    m = max(float(np.abs(r).max()) if r.size else 0.0,
            (float(fval(q_max)) - float(fval(q_min))) / 131072.0, 1e-30)
    return to_i16(r, m), scalar(-m), scalar(m)


BIN16 = ("a", "b", "a_min", "a_max", "b_min", "b_max", "output_min", "output_max")


def _binary16(op: str, signed: bool, a, b, a_min, a_max, b_min, b_max, out_min, out_max):
    if signed:
        ra, rb = real_i16(a, a_max), real_i16(b, b_max)
    else:
        ra, rb = real_u16(a, a_min, a_max), real_u16(b, b_min, b_max)
    try:
        np.broadcast_shapes(ra.shape, rb.shape)
    except ValueError:
        raise MDFError(f"shapes {ra.shape} and {rb.shape} do not broadcast") from None
    r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](ra, rb)
    rng_a = float(fval(a_max)) - float(fval(a_min))
    rng_b = float(fval(b_max)) - float(fval(b_min))
    least = rng_a * rng_b / 32768.0 if op == "mul" else max(rng_a, rng_b) / 8192.0
    lo, hi = float(fval(out_min)), float(fval(out_max))
    if signed:
        m = max(abs(lo), abs(hi), least / 2)
        return to_i16(r, m), scalar(-m), scalar(m)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < least:
        k = least / (hi - lo) if hi > lo else None
        lo, hi = (lo * k, hi * k) if k else (0.0, least)
    return to_u16(r, lo, hi), scalar(lo), scalar(hi)


for _name, _op, _signed in (("QuantizedAdd_16", "add", True), ("QuantizedSub_16", "sub", True),
                            ("QuantizedMul_16", "mul", True), ("QuantizedAdd_u16", "add", False),
                            ("QuantizedSub_u16", "sub", False),
                            ("QuantizedMul_u16", "mul", False)):
    def _k16(a, b, a_min, a_max, b_min, b_max, out_min, out_max, *, padding="NA", _op=_op,
             _signed=_signed):
        return _binary16(_op, _signed, a, b, a_min, a_max, b_min, b_max, out_min, out_max)
    _k16.__doc__ = (f"{_name}: {_op} of {'qint16' if _signed else 'quint16'} tensors into the "
                    "required output range (broadcast).")
    hexop(_name, BIN16)(_k16)


def _pad16(q, q_min, q_max, pads, value, signed: bool):
    a = as4d(q)
    mn, mx = float(fval(q_min)), float(fval(q_max))
    lo_code, hi_code = (-32768, 32767) if signed else (0, 65535)
    v = 0.0 if value is None else float(fval(value))
    if np.isinf(v):
        code = lo_code if v < 0 else hi_code
    else:
        c = v * 32768.0 / mx if signed else (v - mn) / ((mx - mn) / 65536.0)
        code = int(np.sign(c) * np.floor(abs(c) + 0.5))
        if code < lo_code - 1536 or code > hi_code + 1536:
            raise MDFError(f"pad value {v} is too far outside the range [{mn}, {mx}] "
                           f"(code {code})")
        code = min(hi_code, max(lo_code, code))
    out = np.pad(a, pad_widths(pads, a), constant_values=code)
    return out.astype(np.int16 if signed else np.uint16), scalar(mn), scalar(mx)


@hexop("QuantizedPad_16", Q_IN + ("paddings", "pad_value"), optional=("pad_value",))
def quantized_pad_16(q, q_min, q_max, pads, value=None, *, padding="NA"):
    """Pad qint16 data with the quantized pad value; range copied."""
    return _pad16(q, q_min, q_max, pads, value, True)


@hexop("QuantizedPad_u16", Q_IN + ("paddings", "pad_value"), optional=("pad_value",))
def quantized_pad_u16(q, q_min, q_max, pads, value=None, *, padding="NA"):
    """Pad quint16 data with the quantized pad value; range copied."""
    return _pad16(q, q_min, q_max, pads, value, False)


