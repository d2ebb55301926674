"""``onnx::`` CumSum: running sums along one axis (given as an input), optionally exclusive
and/or reversed, with a Numba kernel over the ``(outer, n, inner)`` layout and a ``jit=`` form."""

from __future__ import annotations

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import axis_index, split3


@numba.njit(cache=True)
def _cumsum_core(x, outer, n, inner, exclusive, reverse):
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
def cumsum_jit(x, axis, exclusive, reverse):
    """nopython CumSum; ``axis`` is an integer (or a 0-d/1-element integer array)."""
    a = np.ascontiguousarray(x)
    nd = a.ndim
    ax = int(np.asarray(axis).ravel()[0]) % nd
    outer = 1
    inner = 1
    for i in range(nd):
        if i < ax:
            outer *= a.shape[i]
        elif i > ax:
            inner *= a.shape[i]
    res = _cumsum_core(a.ravel(), outer, a.shape[ax], inner, exclusive != 0, reverse != 0)
    return res.reshape(a.shape)


@onnx_op(
    "CumSum",
    inputs=("x", "axis"),
    attributes={"exclusive": 0, "reverse": 0},
    since=11,
    jit=cumsum_jit,
)
def cumsum(x, axis, *, exclusive=0, reverse=0):
    """Cumulative sum along ``axis`` (an input), optionally exclusive and/or reversed."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise MDFError("CumSum: x must have rank >= 1")
    ax = axis_index(axis, a.ndim, "CumSum")
    outer, n, inner = split3(a.shape, ax)
    res = _cumsum_core(
        np.ascontiguousarray(a).reshape(-1), outer, n, inner, bool(exclusive), bool(reverse)
    )
    return (res.reshape(a.shape),)
