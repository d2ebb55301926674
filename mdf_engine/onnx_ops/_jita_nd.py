"""Nopython kernels of GatherND and ScatterND: the block loops their Python kernels
(``gather_nd.py``) call, and the compiled backend's twins (``jit_like``, see
:mod:`._shape_jit`) that check their arguments as those do (``ValueError`` or ``IndexError``
where they raise ``MDFError``) and give their values bit for bit (the same loops)."""

from __future__ import annotations

import numba
import numpy as np

from ._index_common import scatter_one
from ._jita_elements import reduction_number
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, prod


@numba.njit(cache=True)
def nd_offsets(idx2, dshape, b, nbatch):
    """Flat data offsets (in units of ``inner`` blocks) of each index tuple.

    ``idx2`` is (nbatch * per_batch, q); tuple t belongs to batch t // per_batch."""
    rows, q = idx2.shape
    per = rows // nbatch if nbatch > 0 else 0
    # block = product of dshape[b + q:], strides over dshape[b : b + q] in blocks
    st = np.ones(q, dtype=np.int64)
    for i in range(q - 2, -1, -1):
        st[i] = st[i + 1] * dshape[b + i + 1]
    slab = 1
    for i in range(q):
        slab *= dshape[b + i]
    offs = np.empty(rows, dtype=np.int64)
    for t in range(rows):
        bi = t // per if per > 0 else 0
        off = bi * slab
        for i in range(q):
            j = idx2[t, i]
            n = dshape[b + i]
            if j < 0:
                j += n
            if j < 0 or j >= n:
                raise IndexError("index out of range")
            off += j * st[i]
        offs[t] = off
    return offs


@numba.njit(cache=True)
def gather_blocks(x, offs, inner):
    """The ``inner``-element blocks of a flat ``x`` at block offsets ``offs``, in order."""
    out = np.empty(offs.size * inner, dtype=x.dtype)
    for t in range(offs.size):
        s = offs[t] * inner
        for i in range(inner):
            out[t * inner + i] = x[s + i]
    return out


@numba.njit(cache=True)
def scatter_blocks(out, offs, upd, inner, reduction):
    """``upd``'s blocks written (or reduced) into a flat ``out`` at block offsets ``offs``."""
    for t in range(offs.size):
        s = offs[t] * inner
        for i in range(inner):
            scatter_one(out, s + i, upd[t * inner + i], reduction)
    return out


@numba.njit(cache=True)
def _layout(data, indices, b):
    """(block offsets, inner, q) as the Python kernel's ``_nd_layout`` finds them."""
    xd = _dims(data)
    idd = _dims(indices)
    if len(idd) < 1:
        raise ValueError("indices must have rank >= 1")
    q = idd[len(idd) - 1]
    if b < 0 or b >= min(len(xd), len(idd)) or q > len(xd) - b:
        raise ValueError("batch_dims and the index depth do not fit the data's rank")
    for d in range(b):
        if xd[d] != idd[d]:
            raise ValueError("the batch dims of data and indices differ")
    rows = prod(idd[: len(idd) - 1])
    idx2 = _ints(indices).reshape(rows, q)
    offs = nd_offsets(idx2, xd, b, prod(xd[:b]))
    return offs, prod(xd[b + q :]), q


@numba.njit(cache=True)
def _gathernd(data, indices, batch_dims, like):
    b = np.int64(batch_dims)
    offs, inner, q = _layout(data, indices, b)
    xd = _dims(data)
    idd = _dims(indices)
    want = np.concatenate((idd[: len(idd) - 1], xd[b + q :]))
    check_like(want, like, "GatherND: " + SHAPE_CHANGED)
    return _shaped(gather_blocks(_flat(data), offs, inner), like)


@numba.njit(cache=True)
def gathernd11_like_jit(data, indices, like):
    """GatherND (opset 11): no batch dims."""
    return _gathernd(data, indices, 0, like)


@numba.njit(cache=True)
def gathernd_like_jit(data, indices, batch_dims, like):
    """GatherND (opset 12): the first ``batch_dims`` dims shared."""
    return _gathernd(data, indices, batch_dims, like)


@numba.njit(cache=True)
def _scatternd(data, indices, updates, code, like):
    offs, inner, q = _layout(data, indices, 0)
    xd = _dims(data)
    idd = _dims(indices)
    want = np.concatenate((idd[: len(idd) - 1], xd[q:]))
    ud = _dims(updates)
    if len(ud) != len(want) or (ud != want).any():
        raise ValueError("ScatterND: updates must have the shape indices.shape[:-1] + ...")
    check_like(xd, like, "ScatterND: " + SHAPE_CHANGED)
    out = _flat(data).copy()
    src = _flat(updates)
    upd = np.empty(src.size, out.dtype)
    for k in range(src.size):
        upd[k] = src[k]
    return _shaped(scatter_blocks(out, offs, upd, inner, code), like)


@numba.njit(cache=True)
def scatternd11_like_jit(data, indices, updates, like):
    """ScatterND (opset 11): no reduction."""
    return _scatternd(data, indices, updates, 0, like)


@numba.njit(cache=True)
def scatternd16_like_jit(data, indices, updates, reduction, like):
    """ScatterND (opset 16): reduction none, add or mul."""
    return _scatternd(data, indices, updates, reduction_number(reduction, 3), like)


@numba.njit(cache=True)
def scatternd18_like_jit(data, indices, updates, reduction, like):
    """ScatterND (opset 18): max and min too."""
    return _scatternd(data, indices, updates, reduction_number(reduction, 5), like)
