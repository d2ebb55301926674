"""The Numba core of ``onnx::`` CumSum and its nopython twin (``jit=``) for the compiled
backend, with ``axis`` a constant or a value (CumSum takes it as an input).

The data is seen as ``(outer, n, inner)`` around the axis; the Python kernel (:mod:`.cumsum`)
and the twin run the same core on it, so the results are equal bit for bit. The twin follows
the ``jit_like`` convention (:mod:`._shape_jit`): its last argument is an array of the
result's warm-up shape (the input's).
"""

from __future__ import annotations

import numba
import numpy as np

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, norm_axis, prod


@numba.njit(cache=True)
def cumsum_core(x, outer, n, inner, exclusive, reverse):
    """Running sums along the middle dim of (outer, n, inner), row by contiguous row."""
    out = np.empty_like(x)
    run = np.zeros(inner, dtype=x.dtype)
    for o in range(outer):
        run[:] = 0
        for t in range(n):
            j = n - 1 - t if reverse else t
            k = (o * n + j) * inner
            src = x[k : k + inner]
            dst = out[k : k + inner]
            if exclusive:
                for i in range(inner):
                    dst[i] = run[i]
                    run[i] += src[i]
            else:
                for i in range(inner):
                    run[i] += src[i]
                    dst[i] = run[i]
    return out


@numba.njit(cache=True)
def cumsum_like_jit(x, axis, exclusive, reverse, like):
    """nopython CumSum."""
    src, dims = _flat(x), _dims(x)
    a = _ints(axis)
    if len(dims) == 0:
        raise ValueError("CumSum: x must have rank >= 1")
    ax = norm_axis(a[0], len(dims)) if len(a) else -1
    if ax < 0:
        raise ValueError("CumSum: the axis is out of range")
    check_like(dims, like, "CumSum: " + SHAPE_CHANGED)
    res = cumsum_core(
        src, prod(dims[:ax]), dims[ax], prod(dims[ax + 1 :]), exclusive != 0, reverse != 0
    )
    return _shaped(res, like)
