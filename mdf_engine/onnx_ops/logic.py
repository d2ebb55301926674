"""ONNX comparisons and boolean logic: Equal Greater Less GreaterOrEqual LessOrEqual (bool
results), And Or Xor Not, and Where (select with three-way broadcasting).

Numeric inputs run through the shared Numba loops of :mod:`._ew_kernels`. String tensors
(object/unicode dtype) are compared and selected with numpy object operations, which is the only
non-numeric path here (Equal on strings is ONNX opset 19; Where accepts any element type).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..errors import MDFError
from . import _ew_kernels as K
from . import onnx_op
from ._common import (
    _COMPUTE,
    EMPTY_I64,
    broadcast_shape,
    broadcast_strides,
    compute_dtype,
)
from ._common import flat_as as _flat
from .elementwise import run_binary

_ndarray = np.ndarray
_BOOL = np.dtype(np.bool_)
_TRUE = np.ones(1, np.bool_)


def _arr(x: Any) -> np.ndarray:
    return x if type(x) is _ndarray else np.asarray(x)


def compare(code: int, A: Any, B: Any, name: str = "") -> np.ndarray:
    """Broadcasting comparison/logic ``code`` of A and B as a bool tensor."""
    a = _arr(A)
    b = _arr(B)
    dt = a.dtype
    if b.dtype != dt:
        dt = np.result_type(a, b)
    cd = _COMPUTE.get(dt)
    if cd is None:
        if code == K.EQ and dt.kind in "OUS":
            broadcast_shape(a.shape, b.shape)
            return np.asarray(np.equal(a.astype(object), b.astype(object)), dtype=np.bool_)
        cd = compute_dtype(dt, f"{name} input")
    return run_binary(K.compare_core, code, a, b, cd, _BOOL)


def _compare_op(op: str, code: int, since: int):
    def kernel(A, B):
        return (compare(code, A, B, op),)

    jit = K.jit_entry(lambda A, B: K.compare_nb(code, A, B), f"{op.lower()}_jit", kernel, 2)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"ONNX {op}: elementwise with multidirectional broadcasting, bool result"
    onnx_op(op, inputs=("A", "B"), since=since, jit=jit)(kernel)
    return kernel


equal = _compare_op("Equal", K.EQ, 7)
greater = _compare_op("Greater", K.GT, 7)
less = _compare_op("Less", K.LT, 7)
greaterorequal = _compare_op("GreaterOrEqual", K.GE, 12)
lessorequal = _compare_op("LessOrEqual", K.LE, 12)
and_ = _compare_op("And", K.AND, 7)
or_ = _compare_op("Or", K.OR, 7)
xor = _compare_op("Xor", K.XOR, 7)


def not_(X):
    """ONNX Not: logical negation of a bool tensor."""
    x = _arr(X)
    out = np.empty(x.shape, _BOOL)
    K.compare_core(K.XOR, _flat(x, _BOOL), _TRUE, out.reshape(-1), EMPTY_I64, EMPTY_I64, EMPTY_I64)
    return (out,)


not_jit = K.jit_entry(lambda X: K.compare_nb(K.XOR, X, True), "not_jit", not_, 1)
onnx_op("Not", inputs=("X",), since=1, jit=not_jit)(not_)


# ---- Where ---------------------------------------------------------------------------------------


def where(condition: Any, X: Any, Y: Any) -> np.ndarray:
    """X where condition else Y, all three broadcast together; result dtype of X (and Y)."""
    c = _arr(condition)
    x = _arr(X)
    y = _arr(Y)
    dt = x.dtype
    if y.dtype != dt:
        dt = np.result_type(x, y)
    shape = broadcast_shape(c.shape, x.shape, y.shape)
    cd = _COMPUTE.get(dt)
    if cd is None:
        if dt.kind not in "OUS":
            compute_dtype(dt, "Where input")
        return np.where(c.astype(bool), x, y)
    out = np.empty(shape, cd)
    if c.shape == x.shape == y.shape:
        K.where_core(
            _flat(c, _BOOL),
            _flat(x, cd),
            _flat(y, cd),
            out.reshape(-1),
            EMPTY_I64,
            EMPTY_I64,
            EMPTY_I64,
            EMPTY_I64,
        )
    else:
        K.where_core(
            _flat(c, _BOOL),
            _flat(x, cd),
            _flat(y, cd),
            out.reshape(-1),
            np.array(shape, np.int64),
            broadcast_strides(c.shape, shape),
            broadcast_strides(x.shape, shape),
            broadcast_strides(y.shape, shape),
        )
    return out if cd == dt else out.astype(dt)


@njit(cache=True)
def _where_nb(condition, X, Y):
    c = np.asarray(condition)
    x = np.asarray(X)
    y = np.asarray(Y)
    shape = K.bshape_nb(K.bshape_nb(c.shape, x.shape), y.shape)
    out = np.empty(shape, x.dtype)
    K.where_core(
        np.ascontiguousarray(c).astype(np.bool_).reshape(-1),
        np.ascontiguousarray(x).reshape(-1),
        np.ascontiguousarray(y).astype(x.dtype).reshape(-1),
        out.reshape(-1),
        K.shape_array_nb(shape),
        K.bstrides_nb(c.shape, shape),
        K.bstrides_nb(x.shape, shape),
        K.bstrides_nb(y.shape, shape),
    )
    return out


def where_(condition, X, Y):
    """ONNX Where: elements of X where condition is true, else of Y (broadcast)."""
    if _arr(condition).dtype.kind not in "biuf":
        raise MDFError("Where expects a bool condition tensor")
    return (where(condition, X, Y),)


where_jit = K.jit_entry(lambda condition, X, Y: _where_nb(condition, X, Y), "where_jit", where_, 3)
onnx_op("Where", inputs=("condition", "X", "Y"), since=9, jit=where_jit)(where_)
