"""Nopython kernels of GatherElements, Scatter and ScatterElements: the element loops their
Python kernels (``gather.py``) call, and the compiled backend's twins (``jit_like``, see
:mod:`._shape_jit`) that check their arguments as those do (``ValueError`` or ``IndexError``
where they raise ``MDFError``) and give their values bit for bit (the same loops)."""

from __future__ import annotations

import numba
import numpy as np

from ._index_common import scatter_one
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, norm_axis


@numba.njit(cache=True)
def elements_offsets(idx, ishape, dshape, axis):
    """Flat offsets into the C-ordered data for each element of the indices tensor."""
    nd = ishape.size
    dstr = np.ones(nd, dtype=np.int64)
    for i in range(nd - 2, -1, -1):
        dstr[i] = dstr[i + 1] * dshape[i + 1]
    n = dshape[axis]
    offs = np.empty(idx.size, dtype=np.int64)
    for k in range(idx.size):
        rem = k
        off = 0
        for d in range(nd - 1, -1, -1):
            c = rem % ishape[d]
            rem //= ishape[d]
            if d == axis:
                j = idx[k]
                if j < 0:
                    j += n
                if j < 0 or j >= n:
                    raise IndexError("index out of range")
                c = j
            off += c * dstr[d]
        offs[k] = off
    return offs


@numba.njit(cache=True)
def take_flat(x, offs):
    """``x[offs]`` of a flat ``x``."""
    out = np.empty(offs.size, dtype=x.dtype)
    for k in range(offs.size):
        out[k] = x[offs[k]]
    return out


@numba.njit(cache=True)
def scatter_flat(out, offs, upd, reduction):
    """out[offs[k]] (op)= upd[k]; reduction 0 none, 1 add, 2 mul, 3 max, 4 min."""
    for k in range(offs.size):
        scatter_one(out, offs[k], upd[k], reduction)
    return out


@numba.njit(cache=True)
def reduction_number(reduction, most):
    """The code of a reduction name (``_index_common.REDUCTIONS``) among the first ``most``
    (3: none, add, mul; 5: also max, min)."""
    names = ("none", "add", "mul", "max", "min")
    for k in range(most):
        if reduction == names[k]:
            return k
    raise ValueError("a reduction must be none, add or mul (max and min from opset 18)")


@numba.njit(cache=True)
def _offsets(data, indices, axis):
    xd = _dims(data)
    idd = _dims(indices)
    if len(idd) != len(xd):
        raise ValueError("indices must have the rank of data")
    ax = norm_axis(np.int64(axis), len(xd))
    if ax < 0:
        raise ValueError("axis is out of range")
    return elements_offsets(_ints(indices), idd, xd, ax)


@numba.njit(cache=True)
def gatherelements_like_jit(data, indices, axis, like):
    """GatherElements: ``indices``' shape, each element taken along ``axis``."""
    offs = _offsets(data, indices, axis)
    check_like(_dims(indices), like, "GatherElements: " + SHAPE_CHANGED)
    return _shaped(take_flat(_flat(data), offs), like)


@numba.njit(cache=True)
def _scatter(data, indices, updates, axis, code, like):
    idd = _dims(indices)
    ud = _dims(updates)
    if len(ud) != len(idd) or (ud != idd).any():
        raise ValueError("updates must have the shape of indices")
    offs = _offsets(data, indices, axis)
    check_like(_dims(data), like, "ScatterElements: " + SHAPE_CHANGED)
    out = _flat(data).copy()
    src = _flat(updates)
    upd = np.empty(src.size, out.dtype)
    for k in range(src.size):
        upd[k] = src[k]
    return _shaped(scatter_flat(out, offs, upd, code), like)


@numba.njit(cache=True)
def scatter_like_jit(data, indices, updates, axis, like):
    """Scatter (opset 9) and ScatterElements (opset 11): no reduction."""
    return _scatter(data, indices, updates, axis, 0, like)


@numba.njit(cache=True)
def scatterelements16_like_jit(data, indices, updates, axis, reduction, like):
    """ScatterElements (opset 16): reduction none, add or mul."""
    return _scatter(data, indices, updates, axis, reduction_number(reduction, 3), like)


@numba.njit(cache=True)
def scatterelements18_like_jit(data, indices, updates, axis, reduction, like):
    """ScatterElements (opset 18): max and min too."""
    return _scatter(data, indices, updates, axis, reduction_number(reduction, 5), like)
