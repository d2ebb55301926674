"""``onnx::`` ArgMax and ArgMin: the index of the largest/smallest value along one axis
(first occurrence, or the last with ``select_last_index`` from opset 12), as int64, with a Numba
kernel over the ``(outer, n, inner)`` layout (:mod:`._jitb_argreduce`, with the ``jit=``
forms: ``axis`` and ``keepdims`` constants or values, the result's shape the warm-up's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import axis_index, split3
from ._jitb_argreduce import (
    arg_core,
    argmax1_like_jit,
    argmax_like_jit,
    argmin1_like_jit,
    argmin_like_jit,
)


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
    res = arg_core(flat, outer, n, inner, want_max, bool(last))
    shape = list(x.shape)
    if keepdims:
        shape[ax] = 1
    else:
        del shape[ax]
    return res.reshape(shape)


@onnx_op(
    "ArgMax",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1},
    outputs=("reduced",),
    jit=argmax1_like_jit,
    jit_like=True,
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
    jit=argmax_like_jit,
    jit_like=True,
)
def argmax(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the maxima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, True),)


@onnx_op(
    "ArgMin",
    inputs=("data",),
    attributes={"axis": 0, "keepdims": 1},
    outputs=("reduced",),
    jit=argmin1_like_jit,
    jit_like=True,
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
    jit=argmin_like_jit,
    jit_like=True,
)
def argmin(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the minima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, False),)
