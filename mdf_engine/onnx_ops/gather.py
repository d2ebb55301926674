"""``onnx::`` Gather, GatherElements, Scatter and ScatterElements: take (or write) slices or single
elements of ``data`` at integer indices along one axis.

Gather takes whole slices along ``axis``; GatherElements/ScatterElements take or write one element
per index entry (``indices`` has ``data``'s rank). Scatter is ScatterElements' opset-9 name;
ScatterElements gains ``reduction`` (add, mul) at 16 and max/min at 18. Negative indices count
from the end; an index out of range is an :class:`MDFError`.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._index_common import (
    as_bits,
    flat_view,
    guarded,
    index_axis,
    reduction_code,
)
from ._jita_elements import (
    elements_offsets,
    gatherelements_like_jit,
    scatter_flat,
    scatter_like_jit,
    scatterelements16_like_jit,
    scatterelements18_like_jit,
    take_flat,
)
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, norm_axis


@numba.njit(cache=True)
def _gather_core(x, idx, outer, n, inner):
    m = idx.size
    out = np.empty(outer * m * inner, dtype=x.dtype)
    for t in range(m):
        j = idx[t]
        if j < 0:
            j += n
        if j < 0 or j >= n:
            raise IndexError("Gather index out of range")
    for o in range(outer):
        for t in range(m):
            j = idx[t]
            if j < 0:
                j += n
            src = (o * n + j) * inner
            dst = (o * m + t) * inner
            for i in range(inner):
                out[dst + i] = x[src + i]
    return out


@numba.njit(cache=True)
def gather_like_jit(data, indices, axis, like):
    """nopython Gather (compiled backend; ``like``: the result's shape, see ``_shape_jit``)."""
    xd = _dims(data)
    ind = _ints(indices)
    ax = norm_axis(np.int64(axis), len(xd))
    if ax < 0:
        raise ValueError("Gather: axis is out of range")
    outer = 1
    inner = 1
    for d in range(len(xd)):
        if d < ax:
            outer *= xd[d]
        elif d > ax:
            inner *= xd[d]
    idd = _dims(indices)
    want = np.empty(len(xd) - 1 + len(idd), np.int64)
    want[:ax] = xd[:ax]
    want[ax : ax + len(idd)] = idd
    want[ax + len(idd) :] = xd[ax + 1 :]
    check_like(want, like, "Gather: the result's shape is not the compiled backend's warm-up's")
    return _shaped(_gather_core(_flat(data), ind, outer, xd[ax], inner), like)


@onnx_op(
    "Gather",
    inputs=("data", "indices"),
    attributes={"axis": 0},
    outputs=("output",),
    jit=gather_like_jit,
    jit_like=True,
)
def gather(data, indices, *, axis=0):
    """Take the slices of ``data`` at ``indices`` along ``axis`` (negative indices wrap)."""
    x = np.asarray(data)
    ind = np.asarray(indices)
    ax = index_axis(axis, x.ndim, "Gather")
    outer = math.prod(x.shape[:ax])
    inner = math.prod(x.shape[ax + 1 :])
    flat = flat_view(x)
    if flat.dtype.kind in "OUS":
        res = np.take(x, np.where(ind < 0, ind + x.shape[ax], ind), axis=ax)
        return (res,)
    res = guarded(
        "Gather",
        _gather_core,
        as_bits(flat),
        flat_view(ind).astype(np.int64),
        outer,
        x.shape[ax],
        inner,
    ).view(flat.dtype)
    return (res.reshape(x.shape[:ax] + ind.shape + x.shape[ax + 1 :]),)


# ---------------------------------------------------------------- GatherElements / ScatterElements


def _elem_offsets(op: str, x: np.ndarray, ind: np.ndarray, axis: Any) -> tuple[np.ndarray, int]:
    if ind.ndim != x.ndim:
        raise MDFError(f"{op}: indices must have the rank of data ({x.ndim}), got {ind.ndim}")
    ax = index_axis(axis, x.ndim, op)
    offs = guarded(
        op,
        elements_offsets,
        flat_view(ind).astype(np.int64),
        np.array(ind.shape, dtype=np.int64),
        np.array(x.shape, dtype=np.int64),
        ax,
    )
    return offs, ax


@onnx_op(
    "GatherElements",
    inputs=("data", "indices"),
    attributes={"axis": 0},
    outputs=("output",),
    since=11,
    jit=gatherelements_like_jit,
    jit_like=True,
)
def gatherelements(data, indices, *, axis=0):
    """``out[i..] = data[i.. with the axis coordinate replaced by indices[i..]]``."""
    x = np.asarray(data)
    ind = np.asarray(indices)
    offs, _ = _elem_offsets("GatherElements", x, ind, axis)
    return (take_flat(as_bits(flat_view(x)), offs).view(x.dtype).reshape(ind.shape),)


def _scatter_elements(
    op: str, data: Any, indices: Any, updates: Any, axis: Any, reduction: int
) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    upd = np.asarray(updates)
    if upd.shape != ind.shape:
        raise MDFError(f"{op}: updates shape {upd.shape} must equal indices shape {ind.shape}")
    offs, _ = _elem_offsets(op, x, ind, axis)
    out = np.array(x, order="C", copy=True).reshape(-1)
    scatter_flat(out, offs, flat_view(upd).astype(x.dtype, copy=False), reduction)
    return out.reshape(x.shape)


#: the schema fields every Scatter/ScatterElements version shares (``jit_like``: a template)
SCATTER = {"inputs": ("data", "indices", "updates"), "outputs": ("output",), "jit_like": True}
#: the reductions of ScatterElements 16 (18 adds max and min)
REDUCE16 = ("none", "add", "mul")


@onnx_op("Scatter", attributes={"axis": 0}, since=9, jit=scatter_like_jit, **SCATTER)
def scatter(data, indices, updates, *, axis=0):
    """Deprecated alias of ScatterElements without reduction."""
    return (_scatter_elements("Scatter", data, indices, updates, axis, 0),)


@onnx_op("ScatterElements", attributes={"axis": 0}, since=11, jit=scatter_like_jit, **SCATTER)
def scatterelements_v11(data, indices, updates, *, axis=0):
    """A copy of ``data`` with ``updates`` written at ``indices`` along ``axis``."""
    return (_scatter_elements("ScatterElements", data, indices, updates, axis, 0),)


def _reduced(data, indices, updates, axis, reduction, allowed) -> tuple:
    r = reduction_code(reduction, "ScatterElements", allowed)
    return (_scatter_elements("ScatterElements", data, indices, updates, axis, r),)


#: ScatterElements' attributes from opset 16
REDUCING = {"attributes": {"axis": 0, "reduction": "none"}, **SCATTER}


@onnx_op("ScatterElements", since=16, jit=scatterelements16_like_jit, **REDUCING)
def scatterelements_v16(data, indices, updates, *, axis=0, reduction="none"):
    """ScatterElements with ``reduction`` none, add or mul (in index order for duplicates)."""
    return _reduced(data, indices, updates, axis, reduction, REDUCE16)


@onnx_op("ScatterElements", since=18, jit=scatterelements18_like_jit, **REDUCING)
def scatterelements(data, indices, updates, *, axis=0, reduction="none"):
    """ScatterElements with ``reduction`` none, add, mul, max or min."""
    return _reduced(data, indices, updates, axis, reduction, (*REDUCE16, "max", "min"))
