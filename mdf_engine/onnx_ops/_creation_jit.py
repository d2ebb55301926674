"""Nopython twins of Trilu and Range (Range's length is the warm-up's: ``jit_like``, see
:mod:`._shape_jit`), with the Python kernels' checks (``ValueError`` where they raise
``MDFError``) and values."""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like


@numba.njit(cache=True)
def trilu_jit(input, k, upper):
    """Trilu: the upper (lower) triangle of each matrix in the last two axes, from diagonal
    ``k`` (None: 0) on; zeros elsewhere."""
    x = np.ascontiguousarray(input)
    if x.ndim < 2:
        raise ValueError("Trilu: input must have rank >= 2")
    kk = 0 if k is None else _ints(k)[0]
    rows = x.shape[x.ndim - 2]
    cols = x.shape[x.ndim - 1]
    out = x.copy()
    flat = out.reshape(out.size)
    for m in range(out.size // max(rows * cols, 1)):
        base = m * rows * cols
        for i in range(rows):
            for j in range(cols):
                if (j - i < kk) if upper else (j - i > kk):
                    flat[base + i * cols + j] = 0
    return out


def _range_values(start, limit, delta):  # pragma: no cover - replaced by the overload
    """Range's values: int64 for integer inputs, float64 otherwise (as the Python kernel)."""


@overload(_range_values)
def _range_values_ov(start, limit, delta):
    if isinstance(start, (types.Integer, types.Boolean)) or (
        isinstance(start, types.Array) and isinstance(start.dtype, types.Integer)
    ):

        def ints(start, limit, delta):
            s, e, d = _ints(start), _ints(limit), _ints(delta)
            if s.size != 1 or e.size != 1 or d.size != 1:
                raise ValueError("Range: start, limit and delta must be scalars")
            si, li, di = s[0], e[0], d[0]
            if di == 0:
                raise ValueError("Range: delta must not be 0")
            n = max(-((si - li) // di), 0)
            out = np.empty(n, np.int64)
            for i in range(n):
                out[i] = si + i * di
            return out

        return ints

    def floats(start, limit, delta):
        s, e, d = _flat(start), _flat(limit), _flat(delta)
        if s.size != 1 or e.size != 1 or d.size != 1:
            raise ValueError("Range: start, limit and delta must be scalars")
        sf, lf, df = np.float64(s[0]), np.float64(e[0]), np.float64(d[0])
        if df == 0:
            raise ValueError("Range: delta must not be 0")
        q = (lf - sf) / df
        if not np.isfinite(q):
            raise ValueError("Range: (limit - start) / delta is not a finite number")
        n = max(np.int64(np.ceil(q)), 0)
        out = np.empty(n, np.float64)
        for i in range(n):
            out[i] = sf + i * df
        return out

    return floats


@numba.njit(cache=True)
def range_like_jit(start, limit, delta, like):
    """Range (its length is the warm-up's, ``like``'s)."""
    vals = _range_values(start, limit, delta)
    check_like(_dims(vals), like, "Range: " + SHAPE_CHANGED)
    return vals.astype(like.dtype)


@numba.njit(cache=True)
def eyelike_like_jit(input, dtype, k, like):
    """EyeLike: ones on diagonal ``k`` of a 2-D array shaped as ``input``, in ``like``'s dtype
    (``dtype``'s, or the input's when None, as the warm-up held it)."""
    xd = _dims(input)
    if len(xd) != 2:
        raise ValueError("EyeLike: input must be 2-D")
    check_like(xd, like, "EyeLike: " + SHAPE_CHANGED)
    out = np.zeros(xd[0] * xd[1], like.dtype)
    kk = np.int64(k)
    for i in range(xd[0]):
        j = i + kk
        if 0 <= j < xd[1]:
            out[i * xd[1] + j] = 1
    return _shaped(out, like)
