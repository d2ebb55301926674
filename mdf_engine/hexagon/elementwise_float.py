"""Hexagon float and int32 elementwise ops: Add_f/Sub_f/Mul_f/Minimum_f/Maximum_f, the int32
arithmetic and bitwise ops (int32 wraps around like the C code), Neg/Abs, Ceil/Floor/Round_f
(ties to even), AddN_f (no broadcasting), Select_f and Range_int32. Binary ops broadcast size-1
dims.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    O1,
    as4d,
    check_broadcast,
    ival,
)


def _i32(x) -> np.ndarray:
    return as4d(x).astype(np.int64)


def wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values wrapped around to int32, as C int32 arithmetic does."""
    return ((v + 2**31) % 2**32 - 2**31).astype(np.int32)


def register_unary(name: str, fn, dtype, doc: str) -> None:
    def kernel(x, *, padding="NA"):
        return (fn(as4d(x, dtype)),)

    kernel.__doc__ = doc
    hexop(name, ("input",), outputs=O1)(kernel)


register_unary("Neg_f", lambda a: -a, F32, "-x in float.")


register_unary("Abs_f", np.abs, F32, "|x| in float.")


register_unary("Ceil_f", np.ceil, F32, "ceil(x) in float.")


register_unary("Floor_f", np.floor, F32, "floor(x) in float.")


register_unary("Round_f", np.rint, F32, "x rounded to nearest, ties to even.")


register_unary("Neg_int32", lambda a: wrap32(-a.astype(np.int64)), np.int32, "-x in int32 (wraps).")


register_unary("Abs_int32", lambda a: wrap32(np.abs(a.astype(np.int64))), np.int32, "|x| in int32.")


register_unary("BitwiseNot_int32", np.invert, np.int32, "~x in int32.")


def _binary_i32(name: str, fn, doc: str) -> None:
    def kernel(a, b, *, padding="NA"):
        x, y = _i32(a), _i32(b)
        check_broadcast(x, y)
        return (wrap32(fn(x, y)),)

    kernel.__doc__ = doc
    hexop(name, ("a", "b"), outputs=O1)(kernel)


_binary_i32("Add_int32", np.add, "a + b in int32 (wraps), broadcasting size-1 dims.")


_binary_i32("Sub_int32", np.subtract, "a - b in int32 (wraps), broadcasting size-1 dims.")


_binary_i32("Mul_int32", np.multiply, "a * b in int32 (low 32 bits), broadcasting size-1 dims.")


_binary_i32("BitwiseAnd_int32", np.bitwise_and, "a & b in int32, broadcasting size-1 dims.")


_binary_i32("BitwiseOr_int32", np.bitwise_or, "a | b in int32, broadcasting size-1 dims.")


_binary_i32("BitwiseXor_int32", np.bitwise_xor, "a ^ b in int32, broadcasting size-1 dims.")


def _float_binary(name: str, fn, doc: str) -> None:
    def kernel(a, b, *, padding="NA"):
        x, y = as4d(a, F32), as4d(b, F32)
        check_broadcast(x, y)
        return (fn(x, y).astype(F32),)

    kernel.__doc__ = doc
    hexop(name, ("a", "b"), outputs=("output",))(kernel)


_float_binary("Add_f", np.add, "a + b in float, broadcasting size-1 dims.")


_float_binary("Sub_f", np.subtract, "a - b in float, broadcasting size-1 dims.")


_float_binary("Mul_f", np.multiply, "a * b in float, broadcasting size-1 dims.")


_float_binary("Minimum_f", np.minimum, "min(a, b) in float, broadcasting size-1 dims.")


_float_binary("Maximum_f", np.maximum, "max(a, b) in float, broadcasting size-1 dims.")


@hexop("AddN_f", ("inputs",), outputs=O1, variadic=True)
def add_n_f(*xs, padding="NA"):
    """Sum of N >= 1 float tensors of the same shape (no broadcasting)."""
    if not xs:
        raise MDFError("AddN_f needs at least one input")
    arrs = [as4d(x, F32) for x in xs]
    if any(a.shape != arrs[0].shape for a in arrs):
        raise MDFError(f"AddN_f inputs must all have the same shape, got {[a.shape for a in arrs]}")
    return (np.sum(arrs, axis=0, dtype=F32),)


@hexop("Select_f", ("cond", "x", "y"), outputs=O1)
def select_f(cond, x, y, *, padding="NA"):
    """x where cond != 0 else y; all three the same shape."""
    c, a, b = as4d(cond), as4d(x, F32), as4d(y, F32)
    if not c.shape == a.shape == b.shape:
        raise MDFError(f"Select_f needs equal shapes, got {c.shape}, {a.shape}, {b.shape}")
    return (np.where(c != 0, a, b),)


@hexop("Range_int32", ("start", "limit", "delta"), outputs=O1)
def range_int32(start, limit, delta, *, padding="NA"):
    """start, start+delta, ... while < limit (or > limit when limit < start), as [1,1,1,n]."""
    s0, lim, d = ival(start), ival(limit), ival(delta)
    if d == 0 or (lim > s0 and d < 0) or (lim < s0 and d > 0):
        raise MDFError(f"Range_int32: delta {d} never reaches limit {lim} from {s0}")
    return (np.arange(s0, lim, d, dtype=np.int32).reshape(1, 1, 1, -1),)
