"""Window helpers shared by the pooling families (:mod:`.maxpool`, :mod:`.avgpool`,
:mod:`.roi_pool`): the pooling attributes, the window geometry of an input (``_spatial`` resolves
kernel, strides, dilations, pads / auto_pad and ceil_mode), the output span whose windows lie
inside the input, clipped tap ranges, and the float type pools compute in.

Offsets into flat arrays are made unsigned (:data:`U`): Numba then indexes without the
negative-index wraparound test that keeps LLVM from vectorizing a loop.
"""

from __future__ import annotations

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from ._spatial import ints, window_geometry

#: Unsigned offsets (see the module docstring).
U = np.uint64


@numba.njit(cache=True)
def window_span(n_out, k, s, d, pb, size):
    """Outputs ``[lo, hi)`` along an axis whose whole window (``k`` taps ``d`` apart from
    ``q * s - pb``) lies inside ``[0, size)``; the others are borders."""
    first = -pb
    lo = 0 if first >= 0 else (-first + s - 1) // s
    last = (k - 1) * d - pb
    hi = 0 if last >= size else (size - last + s - 1) // s
    lo = min(lo, n_out)
    return lo, max(min(hi, n_out), lo)


@numba.njit(cache=True)
def clip_taps(start, k, d, size):
    """First and last+1 tap of a window from ``start`` inside ``[0, size)``."""
    a = 0
    while a < k and start + a * d < 0:
        a += 1
    b = k
    while b > a and start + (b - 1) * d >= size:
        b -= 1
    return a, b


@numba.njit(cache=True)
def list_borders(lo, hi, n):
    """The positions of ``[0, n)`` outside ``[lo, hi)`` (the border windows)."""
    out = np.empty(n - (hi - lo), dtype=np.int64)
    t = 0
    for q in range(lo):
        out[t] = q
        t += 1
    for q in range(hi, n):
        out[t] = q
        t += 1
    return out


def float_in(X: np.ndarray) -> np.ndarray:
    """``X`` as a C-contiguous float array: float32/float64 as they are, anything else
    (float16, integers) as float32."""
    if X.dtype.kind == "f" and X.dtype != np.float16:
        return np.ascontiguousarray(X)
    return np.ascontiguousarray(X, dtype=np.float32)


def pool_window(X: np.ndarray, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, op):
    """The window geometry of a pool over ``X`` (N, C, D1[, D2[, D3]]): the number of spatial
    dims, kernel, strides, dilations, output sizes, begin pads and end pads."""
    if X.ndim < 3 or X.ndim > 5:
        raise MDFError(f"{op}: expected X of shape (N, C, D1[, D2[, D3]]), got {X.shape}")
    nsp = X.ndim - 2
    if kernel_shape is None or len(kernel_shape) != nsp:
        raise MDFError(f"{op}: kernel_shape should have {nsp} values, got {kernel_shape}")
    k = ints(kernel_shape, nsp, 1, "kernel_shape", op)
    s = ints(strides, nsp, 1, "strides", op)
    d = ints(dilations, nsp, 1, "dilations", op)
    out, pb, pe = window_geometry(X.shape[2:], k, s, d, pads, auto_pad, int(ceil_mode), op)
    return nsp, k, s, d, out, pb, pe


POOL_ATTRS = {
    "auto_pad": "NOTSET",
    "ceil_mode": 0,
    "dilations": None,
    "kernel_shape": REQUIRED,
    "pads": None,
    "strides": None,
}
