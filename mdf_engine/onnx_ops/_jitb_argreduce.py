"""The Numba core of ``onnx::`` ArgMax and ArgMin, and their nopython twins (``jit=``) for the
compiled backend, with ``axis`` and ``keepdims`` constants or values.

The data is seen as ``(outer, n, inner)`` around the axis and :func:`arg_core` finds, per
``(outer, inner)`` position, the index of the largest (smallest) value along ``n``: the first
among ties, or the last with ``select_last_index``. The Python kernels (:mod:`.argreduce`) and
the nopython ones call the same core. The nopython kernels follow the ``jit_like`` convention
(:mod:`._shape_jit`): their last argument is an array of the result's warm-up shape.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jitb_reduce import _numeric
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, norm_axis, prod


@numba.njit(cache=True)
def arg_core(x, outer, n, inner, want_max, last):
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


@numba.njit(cache=True)
def _arg_like(data, axis, keepdims, select_last_index, want_max, like, op):
    src = _flat(data)
    dims = _dims(data)
    nd = len(dims)
    a = _ints(axis)
    ax = norm_axis(a[0], nd) if len(a) else -1
    if ax < 0:
        raise ValueError(op + ": the axis is out of range")
    n = dims[ax]
    if n == 0:
        raise ValueError(op + ": the axis has length 0, there is no index to return")
    want = dims.copy()
    want[ax] = 1
    if keepdims == 0:
        want = np.concatenate((dims[:ax], dims[ax + 1 :]))
    check_like(want, like, op + ": " + SHAPE_CHANGED)
    res = arg_core(
        _numeric(src), prod(dims[:ax]), n, prod(dims[ax + 1 :]), want_max, select_last_index != 0
    )
    return _shaped(res, like)


@numba.njit(cache=True)
def argmax_like_jit(data, axis, keepdims, select_last_index, like):
    """nopython ArgMax (opset 12+)."""
    return _arg_like(data, axis, keepdims, select_last_index, True, like, "ArgMax")


@numba.njit(cache=True)
def argmin_like_jit(data, axis, keepdims, select_last_index, like):
    """nopython ArgMin (opset 12+)."""
    return _arg_like(data, axis, keepdims, select_last_index, False, like, "ArgMin")


@numba.njit(cache=True)
def argmax1_like_jit(data, axis, keepdims, like):
    """nopython ArgMax (opsets 1-11)."""
    return _arg_like(data, axis, keepdims, 0, True, like, "ArgMax")


@numba.njit(cache=True)
def argmin1_like_jit(data, axis, keepdims, like):
    """nopython ArgMin (opsets 1-11)."""
    return _arg_like(data, axis, keepdims, 0, False, like, "ArgMin")
