"""The nopython loop of OneHot, shared by its Python kernel (``onehot.py``) and its compiled
backend twin (``jit_like``, see :mod:`._shape_jit`: ``depth`` is a value, so the result's
length along the new axis is the warm-up's), which checks its arguments as the Python kernel
does (``ValueError`` where that one raises ``MDFError``) and gives its values bit for bit."""

from __future__ import annotations

import numba
import numpy as np

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _like_dims, _shaped, check_like, prod


@numba.njit(cache=True)
def onehot_core(idx, outer, depth, inner, off, on, out):
    """``out`` (outer, depth, inner) flat: ``on`` where the index of (outer, inner) is the
    depth coordinate (negative from the end), ``off`` elsewhere."""
    for k in range(out.size):
        out[k] = off
    for o in range(outer):
        for i in range(inner):
            j = idx[o * inner + i]
            if j < 0:
                j += depth
            if 0 <= j < depth:
                out[(o * depth + j) * inner + i] = on
    return out


@numba.njit(cache=True)
def onehot_like_jit(indices, depth, values, axis, like):
    """OneHot (opset 9): a new axis of length ``depth`` at ``axis``."""
    idd = _dims(indices)
    d = _ints(depth)[0]
    if d < 1:
        raise ValueError("OneHot: depth must be >= 1")
    vals = _flat(values)
    if vals.size != 2:
        raise ValueError("OneHot: values must hold [off, on]")
    r = len(idd) + 1
    a = np.int64(axis)
    if a < -r or a >= r:
        raise ValueError("OneHot: axis is out of range for the output's rank")
    a %= r
    want = np.empty(r, np.int64)
    want[:a] = idd[:a]
    want[a] = d
    want[a + 1 :] = idd[a:]
    check_like(want, like, "OneHot: " + SHAPE_CHANGED)
    out = np.empty(prod(_like_dims(like)), vals.dtype)
    onehot_core(_ints(indices), prod(idd[:a]), d, prod(idd[a:]), vals[0], vals[1], out)
    return _shaped(out, like)
