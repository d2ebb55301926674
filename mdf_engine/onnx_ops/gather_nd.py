"""``onnx::`` GatherND and ScatterND: take (or write) slices of ``data`` addressed by index tuples
in the last axis of ``indices``, after ``batch_dims`` shared leading dims (GatherND, opset 12).

ScatterND gains ``reduction`` (add, mul) at 16 and max/min at 18. Negative indices count from the
end; an index out of range is an :class:`MDFError`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MDFError
from . import _jita_nd as N
from . import onnx_op
from ._index_common import as_bits, flat_view, guarded, reduction_code
from ._jita_nd import gather_blocks, nd_offsets, scatter_blocks


def _nd_layout(op: str, x: np.ndarray, ind: np.ndarray, b: int):
    if ind.ndim < 1:
        raise MDFError(f"{op}: indices must have rank >= 1")
    q = ind.shape[-1]
    if b < 0 or b >= min(x.ndim, ind.ndim) or q > x.ndim - b:
        raise MDFError(f"{op}: batch_dims {b} and index depth {q} do not fit data rank {x.ndim}")
    if x.shape[:b] != ind.shape[:b]:
        raise MDFError(f"{op}: batch dims of data {x.shape[:b]} and indices {ind.shape[:b]} differ")
    nbatch = math.prod(x.shape[:b])
    inner = math.prod(x.shape[b + q :])
    idx2 = np.ascontiguousarray(ind, dtype=np.int64).reshape(-1, q)
    offs = guarded(op, nd_offsets, idx2, np.array(x.shape, dtype=np.int64), b, nbatch)
    return offs, inner, q


def _gathernd(data: Any, indices: Any, batch_dims: int) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    b = int(batch_dims)
    offs, inner, q = _nd_layout("GatherND", x, ind, b)
    out = gather_blocks(as_bits(flat_view(x)), offs, inner).view(x.dtype)
    return out.reshape(ind.shape[:-1] + x.shape[b + q :])


#: the nopython twins take the result's template (``jit_like``: ``_jita_nd``)
LIKE = {"outputs": ("output",), "jit_like": True}


@onnx_op("GatherND", inputs=("data", "indices"), since=11, jit=N.gathernd11_like_jit, **LIKE)
def gathernd_v11(data, indices):
    """Slices of ``data`` addressed by the last dim of ``indices``."""
    return (_gathernd(data, indices, 0),)


@onnx_op(
    "GatherND",
    inputs=("data", "indices"),
    attributes={"batch_dims": 0},
    since=12,
    jit=N.gathernd_like_jit,
    **LIKE,
)
def gathernd(data, indices, *, batch_dims=0):
    """GatherND whose first ``batch_dims`` dims of data and indices are batch dims."""
    return (_gathernd(data, indices, batch_dims),)


def _scatternd(data: Any, indices: Any, updates: Any, reduction: int) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    upd = np.asarray(updates)
    offs, inner, q = _nd_layout("ScatterND", x, ind, 0)
    want = ind.shape[:-1] + x.shape[q:]
    if upd.shape != want:
        raise MDFError(f"ScatterND: updates must have shape {want}, got {upd.shape}")
    out = np.array(x, order="C", copy=True).reshape(-1)
    scatter_blocks(out, offs, flat_view(upd).astype(x.dtype, copy=False), inner, reduction)
    return out.reshape(x.shape)


#: ScatterND's inputs; its reductions from opset 16 (18 adds max and min)
SCATTER = {"inputs": ("data", "indices", "updates"), **LIKE}
REDUCE16 = ("none", "add", "mul")


@onnx_op("ScatterND", since=11, jit=N.scatternd11_like_jit, **SCATTER)
def scatternd_v11(data, indices, updates):
    """A copy of ``data`` with ``updates`` written at the index tuples of ``indices``."""
    return (_scatternd(data, indices, updates, 0),)


def _reduced(data, indices, updates, reduction, allowed) -> tuple:
    r = reduction_code(reduction, "ScatterND", allowed)
    return (_scatternd(data, indices, updates, r),)


@onnx_op(
    "ScatterND", attributes={"reduction": "none"}, since=16, jit=N.scatternd16_like_jit, **SCATTER
)
def scatternd_v16(data, indices, updates, *, reduction="none"):
    """ScatterND with ``reduction`` none, add or mul."""
    return _reduced(data, indices, updates, reduction, REDUCE16)


@onnx_op(
    "ScatterND", attributes={"reduction": "none"}, since=18, jit=N.scatternd18_like_jit, **SCATTER
)
def scatternd(data, indices, updates, *, reduction="none"):
    """ScatterND with ``reduction`` none, add, mul, max or min."""
    return _reduced(data, indices, updates, reduction, (*REDUCE16, "max", "min"))
