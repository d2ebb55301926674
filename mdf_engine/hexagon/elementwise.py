"""Hexagon quantized (quint8) elementwise ops; size-1 dims broadcast unless said otherwise.

* QuantizedAdd_8p8to32 / QuantizedSub_8p8to32: qint32 in the range ±2**17 max|input ranges|,
  ``round((a - z_a) step_a/step_o ± (b - z_b) step_b/step_o)`` (the BiasAdd_8p8to32 formula).
* QuantizedMul_8x8to32: ``(a - z_a)(b - z_b)`` in the product range ±2**31 step_a step_b.
* QuantizedAdd_8p8to8 and the flat sub used for QuantizedSub_8p8to8_d32: the real sum/difference
  quantized to the optional output range (-inf/+inf = data range); without one, [judgement] the
  range of every possible result, [a_min ± b.., a_max ± b..], adjusted for an exact zero.
* QuantizedMul_8x8to8: the real product in its actual data range (adjusted) [judgement: the
  document gives no output-range rule].
* QuantizedNeg_8 mirrors the range ([-max, -min], codes 255 - q, exact); QuantizedSqrt_8 (input
  min >= 0) and QuantizedRecip_8 use the adjusted range of their results [judgement,
  hexagon-digest §1.4 'unspecified']; QuantizedDiv_8 (b is [1,1,1,d]) the given ("static") range
  or the data range; a zero divisor is an error.
* Min/Max/Minimum/Maximum and Select_8 use the (adjusted) union of the input ranges unless an
  output range is given (-inf/+inf = data range); the comparisons give uint8 0/1.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .matmul import sum_to_q32
from .quant import (
    BIN_IN,
    F32,
    OUT_RANGE,
    Q_IN,
    adjust_range,
    as4d,
    check_broadcast,
    codes,
    deq8,
    dequantize_u8,
    fval,
    product_range,
    q8_of_real,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    step_u8,
    zero_code,
)

BIN_OUT_IN = BIN_IN + ("output_min", "output_max")


@hexop("QuantizedAdd_8p8to32", BIN_IN)
def quantized_add_8p8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a + quint8 b -> qint32."""
    a, b = as4d(a), as4d(b)
    check_broadcast(a, b)
    return sum_to_q32(a, a_min, a_max, b, b_min, b_max, 1)


@hexop("QuantizedSub_8p8to32", BIN_IN)
def quantized_sub_8p8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a - quint8 b -> qint32."""
    a, b = as4d(a), as4d(b)
    check_broadcast(a, b)
    return sum_to_q32(a, a_min, a_max, b, b_min, b_max, -1)


@hexop("QuantizedMul_8x8to32", BIN_IN)
def quantized_mul_8x8to32(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a * quint8 b -> qint32 (a - z_a)(b - z_b)."""
    a, b = as4d(a), as4d(b)
    check_broadcast(a, b)
    am, aM, bm, bM = fval(a_min), fval(a_max), fval(b_min), fval(b_max)
    out = (a.astype(np.int32) - zero_code(am, aM)) * (b.astype(np.int32) - zero_code(bm, bM))
    lo, hi = product_range(step_u8(am, aM), step_u8(bm, bM))
    return out.astype(np.int32), scalar(lo), scalar(hi)


def _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, op: str):
    a, b = as4d(a), as4d(b)
    check_broadcast(a, b)
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
        return q8_of_real(r, out_min, out_max)
    mn, mx = adjust_range(F32(lo), F32(hi))
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedAdd_8p8to8", BIN_OUT_IN, optional=("output_min", "output_max"))
def quantized_add_8p8to8(
    a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *, padding="NA"
):
    """quint8 a + quint8 b -> quint8 in the (optional) output range."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, "add")


def quantized_sub_8p8to8(
    a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *, padding="NA"
):
    """quint8 a - quint8 b -> quint8: the flat form of QuantizedSub_8p8to8_d32 (the document
    has no flat Sub_8p8to8, so this is registered only under the d32 name)."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, out_min, out_max, "sub")


@hexop("QuantizedMul_8x8to8", BIN_IN)
def quantized_mul_8x8to8(a, b, a_min, a_max, b_min, b_max, *, padding="NA"):
    """quint8 a * quint8 b -> quint8 in the product's actual range."""
    return _binary_to8(a, b, a_min, a_max, b_min, b_max, None, None, "mul")


@hexop("QuantizedNeg_8", Q_IN)
def quantized_neg_8(q, q_min, q_max, *, padding="NA"):
    """-x: codes 255 - q in the mirrored range [-max, -min] (exact)."""
    return q8_triple(np.uint8(255) - codes(q), -fval(q_max), -fval(q_min))


@hexop("QuantizedSqrt_8", Q_IN)
def quantized_sqrt_8(q, q_min, q_max, *, padding="NA"):
    """sqrt(x); the input range must not be negative (min >= 0)."""
    if fval(q_min) < 0:
        raise MDFError(f"QuantizedSqrt_8 needs input min >= 0, got {fval(q_min)}")
    return q8_of_real(np.sqrt(deq8(q, q_min, q_max)).astype(F32))


@hexop(
    "QuantizedDiv_8",
    ("a", "b", "a_min", "a_max", "b_min", "b_max", "output_min", "output_max"),
    optional=("output_min", "output_max"),
)
def quantized_div_8(a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *, padding="NA"):
    """a / b with b [1,1,1,d] of a's depth; output in the static range if given, else the
    data range (adjusted)."""
    x, y = as4d(a), as4d(b)
    if y.shape[:3] != (1, 1, 1) or y.shape[3] != x.shape[3]:
        raise MDFError(f"QuantizedDiv_8: b must be [1,1,1,{x.shape[3]}], got {y.shape}")
    rb = real_u8(y, fval(b_min), fval(b_max))
    if np.any(rb == 0):
        raise MDFError("QuantizedDiv_8: division by zero (a divisor code equals the zero code)")
    r = (real_u8(x, fval(a_min), fval(a_max)) / rb).astype(F32)
    return q8_of_real(r, out_min, out_max)


@hexop("QuantizedRecip_8", ("input", "input_min", "input_max"))
def quantized_recip_8(q, q_min, q_max, *, padding="NA"):
    """1 / x in the data range of the result (adjusted); a zero input is an error."""
    r = real_u8(as4d(q), fval(q_min), fval(q_max))
    if np.any(r == 0):
        raise MDFError("QuantizedRecip_8: reciprocal of zero")
    return q8_of_real(F32(1) / r)


def _binary_real(a, b, a_min, a_max, b_min, b_max):
    x, y = codes(a), codes(b)
    check_broadcast(x, y)
    return (real_u8(x, fval(a_min), fval(a_max)), real_u8(y, fval(b_min), fval(b_max)))


def _minmax(fn, a, b, a_min, a_max, b_min, b_max, out_min, out_max):
    ra, rb = _binary_real(a, b, a_min, a_max, b_min, b_max)
    r = fn(ra, rb).astype(F32)
    if out_min is not None or out_max is not None:
        return q8_of_real(r, out_min, out_max)
    mn, mx = adjust_range(min(fval(a_min), fval(b_min)), max(fval(a_max), fval(b_max)))
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


for _name, _fn in (
    ("QuantizedMinimum", np.minimum),
    ("QuantizedMaximum", np.maximum),
    ("QuantizedMin_8", np.minimum),
    ("QuantizedMax_8", np.maximum),
):

    def _mm_kernel(
        a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *, padding="NA", _fn=_fn
    ):
        return _minmax(_fn, a, b, a_min, a_max, b_min, b_max, out_min, out_max)

    _mm_kernel.__doc__ = f"{_name}: elementwise {_fn.__name__} of two quint8 tensors (broadcast)."
    hexop(_name, BIN_IN + OUT_RANGE, optional=OUT_RANGE)(_mm_kernel)


for _name, _fn in (
    ("QuantizedEqual_8", np.equal),
    ("QuantizedNotEqual_8", np.not_equal),
    ("QuantizedLess_8", np.less),
    ("QuantizedLessEqual_8", np.less_equal),
    ("QuantizedGreater_8", np.greater),
    ("QuantizedGreaterEqual_8", np.greater_equal),
):

    def _cmp_kernel(a, b, a_min, a_max, b_min, b_max, *, padding="NA", _fn=_fn):
        ra, rb = _binary_real(a, b, a_min, a_max, b_min, b_max)
        return (_fn(ra, rb).astype(np.uint8),)

    _cmp_kernel.__doc__ = f"{_name}: compares the real values of A and B -> uint8 0/1 (broadcast)."
    hexop(_name, BIN_IN, outputs=("output",))(_cmp_kernel)


@hexop("Select_8", ("cond", "x", "x_min", "x_max", "y", "y_min", "y_max"))
def select_8(cond, x, x_min, x_max, y, y_min, y_max, *, padding="NA"):
    """X where cond != 0 else Y, in the union of their ranges; all shapes equal."""
    c, a, b = as4d(cond), codes(x), codes(y)
    if not c.shape == a.shape == b.shape:
        raise MDFError(f"Select_8 needs equal shapes, got {c.shape}, {a.shape}, {b.shape}")
    mn, mx = adjust_range(min(fval(x_min), fval(y_min)), max(fval(x_max), fval(y_max)))
    r = np.where(
        c != 0,
        dequantize_u8(a, fval(x_min), fval(x_max)),
        dequantize_u8(b, fval(y_min), fval(y_max)),
    )
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)
