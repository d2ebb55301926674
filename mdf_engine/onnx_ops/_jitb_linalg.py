"""The Numba core of ``onnx::`` Det and its nopython twin (``jit=``) for the compiled backend.

Det is an LU factorisation with partial pivoting of each matrix of the stack (in float64, the
result cast to the input's dtype), the same core for the Python kernel (:mod:`.linalg`) and the
twin, so their results are equal bit for bit. The twin follows the ``jit_like`` convention
(:mod:`._shape_jit`): its last argument is an array (a number, for one matrix) of the
result's warm-up shape.
"""

from __future__ import annotations

import numba
import numpy as np

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _shaped, check_like


@numba.njit(cache=True)
def det_batch(x):
    """Determinants of the (k, n, n) float64 stack ``x`` by LU with partial pivoting."""
    k, n, _ = x.shape
    out = np.empty(k, dtype=np.float64)
    for t in range(k):
        a = x[t].copy()
        det = 1.0
        for c in range(n):
            p = c
            best = abs(a[c, c])
            for r in range(c + 1, n):
                if abs(a[r, c]) > best:
                    best = abs(a[r, c])
                    p = r
            if a[p, c] == 0.0:
                det = 0.0
                break
            if p != c:
                for j in range(n):
                    tmp = a[c, j]
                    a[c, j] = a[p, j]
                    a[p, j] = tmp
                det = -det
            piv = a[c, c]
            det *= piv
            for r in range(c + 1, n):
                f = a[r, c] / piv
                if f != 0.0:
                    for j in range(c + 1, n):
                        a[r, j] -= f * a[c, j]
        out[t] = det
    return out


@numba.njit(cache=True)
def det_like_jit(X, like):
    """nopython Det of every square matrix in the last two dims of ``X``."""
    src, dims = _flat(X), _dims(X)
    nd = len(dims)
    if nd < 2 or dims[nd - 1] != dims[nd - 2]:
        raise ValueError("Det: X must end in a square matrix")
    n = dims[nd - 1]
    check_like(dims[: nd - 2], like, "Det: " + SHAPE_CHANGED)
    stack = src.astype(np.float64).reshape((src.size // (n * n) if n else 0, n, n))
    return _shaped(det_batch(stack).astype(src.dtype), like)
