"""Shared quantization arithmetic of the Hexagon backend (the formulas of hexagon-digest §1.3, §4).

A quantized 8-bit tensor is a triple ``(data uint8, min, max)``; ``real(q) = min + q * step`` with
``step = max(1e-4, max - min) / 255``. A qint32 accumulator ``(data int32, min, max)`` has
``real(q) = q * (max - min) / 2**32`` (zero offset). All range and step arithmetic is done in float32,
as on the hardware; rounding is half away from zero; 8-bit results saturate at 0 and 255.

16-bit: qint16 is symmetric, ``real = q * max / 32768``; quint16 is ``real = min + q * (max - min)
/ 65536``; fixed-scale quint16 box coordinates (RoIs, rectangles) are ``real = q * 0.125``.

Also here, so that every family module shares one copy: the common input-name tuples (``Q_IN``,
``BIN_IN``, ``OUT_RANGE``, ``O1``), 4-D shape normalisation (tensors are BHWD, scalars are shape
(1,1,1,1)), the broadcast check, codes and real values of a quint8 input, quantizing a real result
to a given or its own range, the padding attribute (``NN_PAD_*`` names or numbers) and the
output-size/padding rule of convolution and pooling.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError

F32 = np.float32
TWO32 = F32(4294967296.0)
INT32_MIN = -2147483648
INT32_MAX = 2147483647

#: The inputs of a quantized tensor, of a binary op on two of them, an optional output range, and
#: the output name of a one-output op.
Q_IN = ("input", "input_min", "input_max")
BIN_IN = ("a", "b", "a_min", "a_max", "b_min", "b_max")
OUT_RANGE = ("output_min", "output_max")
O1 = ("output",)
#: Step of fixed-scale quint16 box coordinates (hexagon-digest §1.3).
BOX_STEP = 0.125

#: padding_type enum of nn_graph_types.h.
PADDING = {
    "NA": 0,
    "SAME": 1,
    "VALID": 2,
    "MIRROR_REFLECT": 3,
    "MIRROR_SYMMETRIC": 4,
    "SAME_CAFFE": 5,
}
PADDING_NAMES = {v: k for k, v in PADDING.items()}


def padding_code(padding: Any) -> int:
    """The padding attribute as its enum value; accepts 'SAME', 'NN_PAD_SAME', 1, None (= NA)."""
    if padding is None:
        return 0
    if isinstance(padding, (int, np.integer)):
        if int(padding) in PADDING_NAMES:
            return int(padding)
    elif isinstance(padding, str):
        name = padding.upper()
        name = name[7:] if name.startswith("NN_PAD_") else name
        if name in PADDING:
            return PADDING[name]
    raise MDFError(f"padding must be one of {sorted(PADDING)} (or NN_PAD_<name>), got {padding!r}")


def as4d(x: Any, dtype: Any = None) -> np.ndarray:
    """``x`` as an array of rank 4, lower ranks padded with leading 1s (a scalar -> (1,1,1,1))."""
    a = np.asarray(x, dtype=dtype)
    if a.ndim > 4:
        raise MDFError(f"hexagon tensors have at most 4 dims (b,h,w,d), got shape {a.shape}")
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


def scalar(x: Any) -> np.ndarray:
    """A float32 scalar tensor of shape (1,1,1,1)."""
    return np.full((1, 1, 1, 1), F32(fval(x)), dtype=F32)


def fval(x: Any) -> float:
    """The single float value of a scalar tensor (or a Python number), as float32."""
    a = np.asarray(x, dtype=F32)
    if a.size != 1:
        raise MDFError(f"expected a scalar (shape (1,1,1,1)), got shape {a.shape}")
    return F32(a.reshape(-1)[0])


def ival(x: Any) -> int:
    """The single int value of an int32 scalar tensor (or a Python int)."""
    a = np.asarray(x)
    if a.size != 1:
        raise MDFError(f"expected an int32 scalar (shape (1,1,1,1)), got shape {a.shape}")
    return int(a.reshape(-1)[0])


def ilist(x: Any) -> list[int]:
    """The values of an int32 ``[1,1,1,n]`` control tensor as a list."""
    return [int(v) for v in np.asarray(x).reshape(-1)]


def shape_of(x: Any) -> tuple[int, int, int, int]:
    """The 4-D shape of a shape-only tensor (stride, window); its data are ignored."""
    return as4d(x).shape


def step_u8(mn: float, mx: float) -> np.float32:
    """Quantization step of a quint8 range: max(1e-4, max - min) / 255 (float32)."""
    return F32(max(F32(1e-4), F32(mx) - F32(mn)) / F32(255.0))


def step_q32(mn: float, mx: float) -> np.float32:
    """Step of a qint32 range: (max - min) / 2**32 (float32)."""
    return F32((F32(mx) - F32(mn)) / TWO32)


def round_half_away(v: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away from zero (C roundf)."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def zero_code(mn: float, mx: float) -> int:
    """The uint8 code that stands for 0.0 in the range [mn, mx] (quantize_uint8(0, mn, mx))."""
    v = (F32(0.0) - F32(mn)) / step_u8(mn, mx)
    return int(min(255.0, max(0.0, float(round_half_away(np.float32(v))))))


def adjust_range(in_min: float, in_max: float) -> tuple[np.float32, np.float32]:
    """Widen [in_min, in_max] as little as possible so that it holds 0 and 0.0 has an integer code.

    Forces min <= 0 <= max, then moves either the max up or the min down (whichever moves less,
    within the hardware's rule) so that the zero code -min*255/(max-min) is an integer.
    """
    mn = F32(min(F32(0.0), F32(in_min)))
    mx = F32(max(F32(0.0), F32(in_max)))
    rng = F32(max(F32(1e-4), mx - mn))
    z = F32(-mn * F32(255.0) / rng)
    zi = F32(math.floor(z))
    zf = F32(z - zi)
    eps = F32(2.0**-14)
    if zf < eps or zf > F32(1.0) - eps:
        return mn, mx
    if zi > 0 and (zi > 253 or (zf - F32(1.0)) * mn >= zf * mx):
        rng = F32(F32(-255.0) * mn / zi)
        mx = F32(mn + rng)
    else:
        mn = F32(mx * (zi + F32(1.0)) / (zi - F32(254.0)))
    return mn, mx


@numba.njit(cache=True)
def _quantize_u8_kernel(x, mn, step):  # pragma: no cover - compiled
    out = np.empty(x.size, dtype=np.uint8)
    flat = x.reshape(-1)
    for i in range(flat.size):
        v = (np.float32(flat[i]) - mn) / step
        if v != v:
            r = 0.0
        elif v >= 0:
            r = np.floor(v + np.float32(0.5))
        else:
            r = -np.floor(-v + np.float32(0.5))
        if r < 0:
            r = 0.0
        elif r > 255:
            r = 255.0
        out[i] = np.uint8(r)
    return out


def quantize_u8(x: Any, mn: float, mx: float) -> np.ndarray:
    """quint8 codes of float data in [mn, mx]: clamp(round((x - mn) / step), 0, 255)."""
    a = np.ascontiguousarray(np.asarray(x, dtype=F32))
    q = _quantize_u8_kernel(a, F32(mn), step_u8(mn, mx))
    return q.reshape(a.shape)


def dequantize_u8(q: Any, mn: float, mx: float) -> np.ndarray:
    """Float32 values of quint8 codes: mn + q * step."""
    return (F32(mn) + np.asarray(q).astype(F32) * step_u8(mn, mx)).astype(F32)


def real_u8(q: Any, mn: float, mx: float) -> np.ndarray:
    """Float32 values of quint8 codes as (q - zero_code) * step (the form the product ops use)."""
    z = zero_code(mn, mx)
    return ((np.asarray(q).astype(np.int32) - z).astype(F32) * step_u8(mn, mx)).astype(F32)


def dequantize_q32(q: Any, mn: float, mx: float) -> np.ndarray:
    """Float32 values of qint32 codes: q * (max - min) / 2**32."""
    return (np.asarray(q).astype(F32) * step_q32(mn, mx)).astype(F32)


def product_range(step_a: float, step_b: float) -> tuple[np.float32, np.float32]:
    """qint32 range of an 8x8 product accumulator: (INT32_MIN, INT32_MAX) * step_a * step_b."""
    s = F32(F32(step_a) * F32(step_b))
    return F32(F32(INT32_MIN) * s), F32(F32(INT32_MAX) * s)


def auto_or_given(
    data_min: float, data_max: float, out_min: Any, out_max: Any
) -> tuple[np.float32, np.float32]:
    """Output range of ops with a specified range where -inf/+inf mean 'auto' (the data range),
    adjusted for an exact zero."""
    lo = fval(out_min) if out_min is not None else F32(-np.inf)
    hi = fval(out_max) if out_max is not None else F32(np.inf)
    if np.isinf(lo):
        lo = data_min
    if np.isinf(hi):
        hi = data_max
    if np.isnan(lo) or np.isnan(hi):
        raise MDFError("output min/max must not be NaN")
    return adjust_range(lo, hi)


def out_size_and_pad(n_in: int, k: int, s: int, padding: int) -> tuple[int, int]:
    """Output size along one spatial dim and the padding put before it (TF rules of §4)."""
    if s < 1 or k < 1:
        raise MDFError(f"stride and window/filter sizes must be >= 1, got stride {s}, size {k}")
    if padding == PADDING["VALID"]:
        out = (n_in - k) // s + 1
        if n_in < k:
            raise MDFError(f"VALID padding needs input size {n_in} >= window/filter size {k}")
    elif padding in (PADDING["SAME"], PADDING["SAME_CAFFE"]):
        out = (n_in + s - 1) // s
    elif padding == PADDING["NA"]:
        out = n_in // s
        if out < 1:
            raise MDFError(f"padding NA needs input size {n_in} >= stride {s}")
    else:
        raise MDFError(f"padding {PADDING_NAMES[padding]} is not valid for this op")
    total = max(0, (out - 1) * s + k - n_in)
    before = total // 2 if padding != PADDING["SAME_CAFFE"] else (total + 1) // 2
    if padding == PADDING["NA"]:
        before = 0
    return out, before


def q8_triple(q: np.ndarray, mn: float, mx: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The output triple (data, min (1,1,1,1), max (1,1,1,1))."""
    return as4d(q), scalar(mn), scalar(mx)


def check_broadcast(a: np.ndarray, b: np.ndarray) -> None:
    """MDFError unless the shapes broadcast (sizes equal or 1)."""
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise MDFError(
            f"shapes {a.shape} and {b.shape} do not broadcast (sizes must match or be 1)"
        ) from None


def codes(q: Any) -> np.ndarray:
    """A quint8 input as a 4-D uint8 array of codes."""
    return as4d(q).astype(np.uint8)


def deq8(q: Any, mn: Any, mx: Any) -> np.ndarray:
    """Float32 values of a quint8 input with its range tensors: min + q * step."""
    return dequantize_u8(codes(q), fval(mn), fval(mx))


def q8_of_real(r: np.ndarray, out_min: Any = None, out_max: Any = None):
    """Quantize a real result to the given output range, where None or -inf/+inf mean the data's
    own min/max; the range is adjusted for an exact zero. Returns the quint8 triple."""
    r = np.asarray(r, dtype=F32)
    lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
    mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


def real_i16(q: Any, mx: Any) -> np.ndarray:
    """Float64 values of qint16 codes with range [-mx, mx]: q * mx / 32768."""
    return as4d(q).astype(np.float64) * (float(fval(mx)) / 32768.0)


def real_u16(q: Any, mn: Any, mx: Any) -> np.ndarray:
    """Float64 values of quint16 codes in [mn, mx]: mn + q * (mx - mn) / 65536."""
    m, big = float(fval(mn)), float(fval(mx))
    return m + as4d(q).astype(np.float64) * ((big - m) / 65536.0)


def to_i16(r: np.ndarray, m: float) -> np.ndarray:
    """qint16 codes of real values in [-m, m] (round half away from zero, saturating)."""
    v = r * (32768.0 / m)
    return np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -32768, 32767).astype(np.int16)


def to_u16(r: Any, mn: float, mx: float) -> np.ndarray:
    """quint16 codes of real values in [mn, mx] (round half up, saturating)."""
    v = (np.asarray(r, np.float64) - mn) / ((mx - mn) / 65536.0)
    return np.clip(np.floor(v + 0.5), 0, 65535).astype(np.uint16)


def fixed_box_real(q: Any) -> np.ndarray:
    """Fixed-scale quint16 box coordinates as float64: q * 0.125."""
    return as4d(q).astype(np.float64) * BOX_STEP


def fixed_box_codes(r: Any) -> np.ndarray:
    """quint16 codes of box coordinates on the fixed scale 0.125 (clipped to 0..65535)."""
    v = np.floor(np.asarray(r, np.float64) / BOX_STEP + 0.5)
    return np.clip(v, 0, 65535).astype(np.uint16)
