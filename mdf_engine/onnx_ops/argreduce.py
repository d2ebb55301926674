"""``onnx::`` ArgMax and ArgMin: the index of the largest/smallest value along one axis
(first occurrence, or the last with ``select_last_index`` from opset 12), as int64, with a Numba
kernel over the ``(outer, n, inner)`` layout and ``jit=`` forms (``keepdims`` a compile-time
constant)."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import MDFError
from . import onnx_op
from ._axes import axis_index, split3


@numba.njit(cache=True)
def _arg_core(x, outer, n, inner, want_max, last):
    """Index of the max/min over the middle dim of (outer, n, inner); rows read contiguously."""
    out = np.zeros(outer * inner, dtype=np.int64)
    best = np.empty(inner, dtype=x.dtype)
    for o in range(outer):
        bi = out[o * inner : (o + 1) * inner]
        first = x[o * n * inner : (o * n + 1) * inner]
        for i in range(inner):
            best[i] = first[i]
        for j in range(1, n):
            row = x[(o * n + j) * inner : (o * n + j + 1) * inner]
            for i in range(inner):
                v = row[i]
                if want_max:
                    better = v > best[i] or (last and v == best[i])
                else:
                    better = v < best[i] or (last and v == best[i])
                if better:
                    best[i] = v
                    bi[i] = j
    return out


def _argreduce(data: Any, axis: int, keepdims: int, last: int, want_max: bool) -> np.ndarray:
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    op = "ArgMax" if want_max else "ArgMin"
    ax = axis_index(axis, x.ndim, op)
    if x.shape[ax] == 0:
        raise MDFError(f"{op}: axis {ax} has length 0, there is no index to return")
    outer, n, inner = split3(x.shape, ax)
    flat = x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)
    if flat.dtype.kind == "b":
        flat = flat.view(np.uint8)
    res = _arg_core(flat, outer, n, inner, want_max, bool(last))
    shape = list(x.shape)
    if keepdims:
        shape[ax] = 1
    else:
        del shape[ax]
    return res.reshape(shape)


def _keep_or_drop(res, shape, ax, keepdims):  # pragma: no cover - typed by overload
    raise NotImplementedError("only callable from Numba nopython code")


@overload(_keep_or_drop, prefer_literal=True)
def _keep_or_drop_ol(res, shape, ax, keepdims):
    """``res`` reshaped to ``shape`` with dim ``ax`` set to 1 (keepdims) or removed; the
    literal ``keepdims`` fixes the output rank at compile time."""
    if not isinstance(keepdims, (types.IntegerLiteral, types.BooleanLiteral)):
        return None
    nd = len(shape)
    if keepdims.literal_value:

        def keep(res, shape, ax, keepdims):
            return res.reshape(numba.np.unsafe.ndarray.tuple_setitem(shape, ax, 1))

        return keep
    out_nd = nd - 1

    def drop(res, shape, ax, keepdims):
        o = np.empty(out_nd, dtype=np.int64)
        q = 0
        for i in range(nd):
            if i != ax:
                o[q] = shape[i]
                q += 1
        return res.reshape(to_fixed_tuple(o, out_nd))

    return drop


@numba.njit(cache=True)
def _arg_jit(data, axis, keepdims, select_last_index, want_max):
    x = np.ascontiguousarray(data)
    nd = x.ndim
    ax = axis % nd
    outer = 1
    inner = 1
    for i in range(nd):
        if i < ax:
            outer *= x.shape[i]
        elif i > ax:
            inner *= x.shape[i]
    res = _arg_core(x.ravel(), outer, x.shape[ax], inner, want_max, select_last_index != 0)
    return _keep_or_drop(res, x.shape, ax, keepdims)


@numba.njit(cache=True)
def argmax_jit(data, axis, keepdims, select_last_index):
    """nopython ArgMax (opset 12); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, select_last_index, True)


@numba.njit(cache=True)
def argmin_jit(data, axis, keepdims, select_last_index):
    """nopython ArgMin (opset 12); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, select_last_index, False)


@numba.njit(cache=True)
def argmax_v1_jit(data, axis, keepdims):
    """nopython ArgMax (opset 1); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, 0, True)


@numba.njit(cache=True)
def argmin_v1_jit(data, axis, keepdims):
    """nopython ArgMin (opset 1); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, 0, False)


@onnx_op(
    "ArgMax",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1},
    outputs=("reduced",),
    jit=argmax_v1_jit,
)
def argmax_v1(data, *, axis=0, keepdims=1):
    """Indices of the maxima along ``axis`` (first occurrence), as int64."""
    return (_argreduce(data, axis, keepdims, 0, True),)


@onnx_op(
    "ArgMax",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1, "select_last_index": 0},
    outputs=("reduced",),
    since=12,
    jit=argmax_jit,
)
def argmax(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the maxima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, True),)


@onnx_op(
    "ArgMin",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1},
    outputs=("reduced",),
    jit=argmin_v1_jit,
)
def argmin_v1(data, *, axis=0, keepdims=1):
    """Indices of the minima along ``axis`` (first occurrence), as int64."""
    return (_argreduce(data, axis, keepdims, 0, False),)


@onnx_op(
    "ArgMin",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1, "select_last_index": 0},
    outputs=("reduced",),
    since=12,
    jit=argmin_jit,
)
def argmin(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the minima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, False),)
