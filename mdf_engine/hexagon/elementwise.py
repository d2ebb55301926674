"""Hexagon elementwise arithmetic on quantized and float tensors (size-1 dims broadcast).

* QuantizedAdd_8p8to32 / QuantizedSub_8p8to32: qint32 in the range ±2**17 max|input ranges|,
  ``round((a - z_a) step_a/step_o ± (b - z_b) step_b/step_o)`` (the BiasAdd_8p8to32 formula).
* QuantizedMul_8x8to32: ``(a - z_a)(b - z_b)`` in the product range ±2**31 step_a step_b.
* QuantizedAdd_8p8to8 and the flat sub used for QuantizedSub_8p8to8_d32: the real sum/difference
  quantized to the optional output range (-inf/+inf = data range); without one, [judgement] the
  range of every possible result, [a_min ± b.., a_max ± b..], adjusted for an exact zero.
* QuantizedMul_8x8to8: the real product in its actual data range (adjusted) [judgement: the document
  gives no output-range rule].
* Add_f, Sub_f, Mul_f, Minimum_f, Maximum_f: float, broadcasting.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .matmul import BIN_IN, sum_to_q32
from .quant import (
    F32,
    adjust_range,
    as4d,
    auto_or_given,
    fval,
    product_range,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    step_u8,
    zero_code,
)

BIN_OUT_IN = BIN_IN + ("output_min", "output_max")


def _bcast(a: np.ndarray, b: np.ndarray) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise MDFError(f"shapes {a.shape} and {b.shape} do not broadcast (sizes must match or be 1)"
                       ) from None


@hexop("QuantizedAdd_8p8to32", BIN_IN)
def quantized_add_8p8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a + quint8 b -> qint32."""
    a, b = as4d(a), as4d(b)
    _bcast(a, b)
    return sum_to_q32(a, a_min, a_max, b, b_min, b_max, 1)


@hexop("QuantizedSub_8p8to32", BIN_IN)
def quantized_sub_8p8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a - quint8 b -> qint32."""
    a, b = as4d(a), as4d(b)
    _bcast(a, b)
    return sum_to_q32(a, a_min, a_max, b, b_min, b_max, -1)


@hexop("QuantizedMul_8x8to32", BIN_IN)
def quantized_mul_8x8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a * quint8 b -> qint32 (a - z_a)(b - z_b)."""
    a, b = as4d(a), as4d(b)
    _bcast(a, b)
    am, aM, bm, bM = fval(a_min), fval(a_max), fval(b_min), fval(b_max)
    out = (a.astype(np.int32) - zero_code(am, aM)) * (b.astype(np.int32) - zero_code(bm, bM))
    lo, hi = product_range(step_u8(am, aM), step_u8(bm, bM))
    return out.astype(np.int32), scalar(lo), scalar(hi)


def _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, op: str):
    a, b = as4d(a), as4d(b)
    _bcast(a, b)
    am, aM, bm, bM = fval(a_min), fval(a_max), fval(b_min), fval(b_max)
    ra = real_u8(a, am, aM).astype(np.float64)
    rb = real_u8(b, bm, bM).astype(np.float64)
    if op == "add":
        r, lo, hi = ra + rb, am + bm, aM + bM
    elif op == "sub":
        r, lo, hi = ra - rb, am - bM, aM - bm
    else:
        r = ra * rb
        lo, hi = (r.min(), r.max()) if r.size else (0.0, 0.0)
    r = r.astype(F32)
    if out_min is not None or out_max is not None:
        dlo, dhi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
        mn, mx = auto_or_given(dlo, dhi, out_min, out_max)
    else:
        mn, mx = adjust_range(F32(lo), F32(hi))
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedAdd_8p8to8", BIN_OUT_IN, optional=("output_min", "output_max"))
def quantized_add_8p8to8(a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *,
                         padding="NA"):
    """quint8 a + quint8 b -> quint8 in the (optional) output range."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, "add")


def quantized_sub_8p8to8(a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *,
                         padding="NA"):
    """quint8 a - quint8 b -> quint8: the flat form of QuantizedSub_8p8to8_d32 (the document
    has no flat Sub_8p8to8, so this is registered only under the d32 name)."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, "sub")


@hexop("QuantizedMul_8x8to8", BIN_IN)
def quantized_mul_8x8to8(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a * quint8 b -> quint8 in the product's actual range."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, None, None, "mul")


def _float_binary(name: str, fn, doc: str) -> None:
    def kernel(a, b, *, padding="NA"):
        x, y = as4d(a, F32), as4d(b, F32)
        _bcast(x, y)
        return (fn(x, y).astype(F32),)
    kernel.__doc__ = doc
    hexop(name, ("a", "b"), outputs=("output",))(kernel)


_float_binary("Add_f", np.add, "a + b in float, broadcasting size-1 dims.")
_float_binary("Sub_f", np.subtract, "a - b in float, broadcasting size-1 dims.")
_float_binary("Mul_f", np.multiply, "a * b in float, broadcasting size-1 dims.")
_float_binary("Minimum_f", np.minimum, "min(a, b) in float, broadcasting size-1 dims.")
_float_binary("Maximum_f", np.maximum, "max(a, b) in float, broadcasting size-1 dims.")
