"""Hexagon matrix product and bias additions into qint32 accumulators.

QuantizedMatMul_8x8to32: A [b,h,w,K] is taken as [b*h*w, K], B is [1,1,K,N]; the result is
[1,1,M,N] int32 ``sum (a - z_a)(b - z_b)`` with range ``(INT32_MIN, INT32_MAX) * step_a * step_b``
(outputs in the order data, min, max; the document lists max before min by mistake).
QuantizedBiasAdd_8p8to32: range ``±2**17 * max(|x_min|, x_max, |b_min|, b_max)`` and
``out = round((x - z_x) step_x / step_o + (b - z_b) step_b / step_o)``.
QuantizedBiasAdd_32p32to32: range copied from x; bias rescaled ``round(b * step_b / step_x)`` and
added without saturation (int32 wrap-around, as the accumulator).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import _kernels as K
from ._registry import hexop
from .conv import checked_u8
from .quant import (
    BIN_IN,
    F32,
    TWO32,
    as4d,
    fval,
    product_range,
    round_half_away,
    scalar,
    step_q32,
    step_u8,
    zero_code,
)


@hexop("QuantizedMatMul_8x8to32", BIN_IN)
def quantized_matmul_8x8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 [M,K] x quint8 [K,N] -> qint32 [1,1,M,N]."""
    a = checked_u8(a, "matmul A")
    b = checked_u8(b, "matmul B")
    a2 = a.reshape(-1, a.shape[3])
    if b.shape[0] * b.shape[1] != 1:
        raise MDFError(f"matmul B must be [1,1,K,N], got {b.shape}")
    b2 = b.reshape(b.shape[2], b.shape[3])
    if a2.shape[1] != b2.shape[0]:
        raise MDFError(f"matmul A depth {a2.shape[1]} must equal B's K = {b2.shape[0]}")
    sa, sb = step_u8(fval(a_min), fval(a_max)), step_u8(fval(b_min), fval(b_max))
    acc = K.matmul_u8(
        np.ascontiguousarray(a2),
        np.ascontiguousarray(b2),
        zero_code(fval(a_min), fval(a_max)),
        zero_code(fval(b_min), fval(b_max)),
    )
    lo, hi = product_range(sa, sb)
    return acc.reshape(1, 1, *acc.shape), scalar(lo), scalar(hi)


def sum_to_q32(x, x_min, x_max, y, y_min, y_max, sign: int = 1):
    """round((x - z_x) g_x + sign (y - z_y) g_y) in the ±2**17 max|range| accumulator range."""
    xm, xM, ym, yM = fval(x_min), fval(x_max), fval(y_min), fval(y_max)
    out_max = F32(F32(131072.0) * max(abs(xm), xM, abs(ym), yM))
    out_min = F32(-out_max)
    so = F32((out_max - out_min) / TWO32)
    if so <= 0:
        raise MDFError("bias add: both input ranges are empty (all zero)")
    gx = F32(step_u8(xm, xM) / so)
    gy = F32(step_u8(ym, yM) / so)
    vx = (as4d(x).astype(np.int64) - zero_code(xm, xM)).astype(np.float64) * gx
    vy = (as4d(y).astype(np.int64) - zero_code(ym, yM)).astype(np.float64) * gy
    v = round_half_away(vx + sign * vy)
    return np.clip(v, -(2.0**31), 2.0**31 - 1).astype(np.int32), scalar(out_min), scalar(out_max)


def _bias_shape(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = as4d(b)
    if b.shape[:3] != (1, 1, 1) or b.shape[3] not in (1, x.shape[3]):
        raise MDFError(f"bias must be [1,1,1,{x.shape[3]}], got {b.shape}")
    return b


@hexop(
    "QuantizedBiasAdd_8p8to32", ("input", "bias", "input_min", "input_max", "bias_min", "bias_max")
)
def quantized_bias_add_8p8to32(x, bias, x_min, x_max, b_min, b_max, *, padding="NA"):
    """quint8 x + quint8 bias along depth -> qint32."""
    x = as4d(x)
    return sum_to_q32(x, x_min, x_max, _bias_shape(x, bias), b_min, b_max)


@hexop(
    "QuantizedBiasAdd_32p32to32",
    ("input", "bias", "input_min", "input_max", "bias_min", "bias_max"),
)
def quantized_bias_add_32p32to32(x, bias, x_min, x_max, b_min, b_max, *, padding="NA"):
    """qint32 x + qint32 bias along depth -> qint32 in x's range."""
    x = as4d(x).astype(np.int64)
    b = _bias_shape(x, bias).astype(np.int64)
    sx, sb = step_q32(fval(x_min), fval(x_max)), step_q32(fval(b_min), fval(b_max))
    if sx <= 0:
        raise MDFError("bias add: the input range is empty (min == max)")
    rb = round_half_away(b.astype(np.float64) * float(F32(sb / sx))).astype(np.int64)
    out = ((x + rb + 2**31) % 2**32 - 2**31).astype(np.int32)
    return out, scalar(x_min), scalar(x_max)
