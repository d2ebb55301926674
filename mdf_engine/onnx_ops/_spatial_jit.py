"""The window geometry of :mod:`._spatial` in nopython form, for the ``jit=`` kernels of the
convolutions and pools that the compiled backend calls.

Compiled code gives an ONNX attribute as ``None`` (left at its default), a number (an
integer literal or a float64 scalar) or a 1-D array of numbers (the constant table holds
integer lists as float64): :func:`attr_ints` reads any of them as int64. The geometry is
the same int64 array as :func:`._spatial.geometry_array` makes (kernel, strides, dilations,
pads at the beginning, output shape, each lifted to 3-D), so the family kernels that take it
serve both backends. :func:`as5d_nb` and :func:`spatial_shape_nb` lift an input of rank 3-5
to (N, C, D, H, W) and give an output its rank back; they are overloads, chosen per rank when
Numba types the caller. A bad attribute raises ``ValueError`` (the compiled backend reports
it); the interpreted warm-up has already checked the model's values with MDF errors.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

#: ``auto_pad`` codes.
NOTSET, SAME_UPPER, SAME_LOWER, VALID = 0, 1, 2, 3


@numba.njit(cache=True)
def attr_ints(v, n, fill):
    """An int-list attribute (None, a number or a 1-D array) as ``n`` int64 values; None or
    an empty array give ``fill`` repeated."""
    out = np.full(n, fill, dtype=np.int64)
    if v is None:
        return out
    a = np.asarray(v).reshape(-1)
    if a.size == 0:
        return out
    if a.size != n:
        raise ValueError("a window attribute has the wrong number of values")
    for i in range(n):
        out[i] = int(a[i])
    return out


@numba.njit(cache=True)
def attr_int(v, default):
    """An int attribute given as None, a number or a size-1 array."""
    if v is None:
        return default
    return int(np.asarray(v).reshape(-1)[0])


@numba.njit(cache=True)
def pad_mode(auto_pad):
    """The code of an ``auto_pad`` string (None: NOTSET)."""
    if auto_pad is None:
        return NOTSET
    s = auto_pad.upper()
    if s == "NOTSET" or s == "":
        return NOTSET
    if s == "SAME_UPPER":
        return SAME_UPPER
    if s == "SAME_LOWER":
        return SAME_LOWER
    if s == "VALID":
        return VALID
    raise ValueError("auto_pad should be NOTSET, SAME_UPPER, SAME_LOWER or VALID")


@numba.njit(cache=True, inline="always")
def axis_window(size, k, s, d, b, e, mode, ceil_mode):
    """``(outputs, pad at the beginning, pad at the end)`` of a window of ``k`` taps ``d``
    apart, ``s`` apart, along an axis of ``size`` (``mode``: the ``auto_pad`` code; ``b``
    and ``e``: the given pads, which only NOTSET reads). The one statement of the rule: both
    :func:`window_nb` and :func:`._spatial.window_geometry` (as ``.py_func``) call it; the
    outputs may be below 1 (each caller reports that as its backend does)."""
    dk = (k - 1) * d + 1
    if mode == SAME_UPPER or mode == SAME_LOWER:
        o = -(-size // s)
        total = max(0, (o - 1) * s + dk - size)
        small = total // 2
        if mode == SAME_UPPER:
            return o, small, total - small
        return o, total - small, small
    if mode == VALID:
        return (size - dk) // s + 1, 0, 0
    span = size + b + e - dk
    if ceil_mode:
        o = -(-span // s) + 1
        if (o - 1) * s >= size + b:
            o -= 1
        return o, b, e
    return span // s + 1, b, e


@numba.njit(cache=True)
def window_nb(sp, k, s, d, pads, mode, ceil_mode, extra):
    """The geometry array (16 int64: see :func:`._spatial.geometry_array`, ``extra`` last)
    and the end pads (3, lifted) of a window over the spatial shape ``sp`` (``n`` int64 of
    rank 1-3), per :func:`._spatial.window_geometry`: kernel ``k``, strides ``s``, dilations
    ``d`` (``n`` values each) and ``pads`` (``2n``)."""
    n = sp.size
    g = np.zeros(16, dtype=np.int64)
    pe = np.zeros(3, dtype=np.int64)
    off = 3 - n
    for i in range(3):  # lifted axes: a window of one tap, one output
        g[i] = 1
        g[3 + i] = 1
        g[6 + i] = 1
        g[12 + i] = 1
    for i in range(n):
        size, ki, si, di = sp[i], k[i], s[i], d[i]
        if si < 1 or di < 1 or ki < 1:
            raise ValueError("kernel, strides and dilations must be >= 1")
        o, b, e = axis_window(size, ki, si, di, pads[i], pads[n + i], mode, ceil_mode)
        if o < 1 or b < 0 or e < 0:
            raise ValueError("the window does not fit the input")
        j = off + i
        g[j] = ki
        g[3 + j] = si
        g[6 + j] = di
        g[9 + j] = b
        g[12 + j] = o
        pe[j] = e
    g[15] = extra
    return g, pe


@numba.njit(cache=True)
def pool_geometry(sp, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, extra):
    """:func:`window_nb` of a pool's (or a convolution's) attributes as compiled code gives
    them; ``kernel_shape`` may not be None."""
    n = sp.size
    k = attr_ints(kernel_shape, n, 1)
    return window_nb(
        sp,
        k,
        attr_ints(strides, n, 1),
        attr_ints(dilations, n, 1),
        attr_ints(pads, 2 * n, 0),
        pad_mode(auto_pad),
        attr_int(ceil_mode, 0),
        extra,
    )


def as5d_nb(x):
    """``x`` (N, C, D1[, D2[, D3]]) C-contiguous as (N, C, D, H, W) (nopython only)."""
    raise NotImplementedError("as5d_nb is only callable from nopython code")


@overload(as5d_nb, jit_options={"cache": True})
def _as5d_ov(x):
    nd = getattr(x, "ndim", 0)
    if nd == 3:
        return lambda x: np.ascontiguousarray(x).reshape((x.shape[0], x.shape[1], 1, 1, x.shape[2]))
    if nd == 4:
        return lambda x: np.ascontiguousarray(x).reshape(
            (x.shape[0], x.shape[1], 1, x.shape[2], x.shape[3])
        )
    if nd == 5:
        return lambda x: np.ascontiguousarray(x)
    raise numba.errors.TypingError("expected a tensor (N, C, D1[, D2[, D3]])")


def spatial_nb(x):
    """The spatial shape of ``x`` (N, C, D1[, D2[, D3]]) as an int64 array (nopython only)."""
    raise NotImplementedError("spatial_nb is only callable from nopython code")


@overload(spatial_nb, jit_options={"cache": True})
def _spatial_ov(x):
    def impl(x):
        sh = x.shape
        out = np.empty(len(sh) - 2, dtype=np.int64)
        for i in range(len(sh) - 2):
            out[i] = sh[i + 2]
        return out

    return impl


def shaped_like_nb(y5, x):
    """``y5`` (N, M, D, H, W) with the rank of ``x``: the lifted axes dropped (nopython only)."""
    raise NotImplementedError("shaped_like_nb is only callable from nopython code")


@overload(shaped_like_nb, jit_options={"cache": True})
def _shaped_like_ov(y5, x):
    nd = getattr(x, "ndim", 0)
    if nd == 3:
        return lambda y5, x: y5.reshape((y5.shape[0], y5.shape[1], y5.shape[4]))
    if nd == 4:
        return lambda y5, x: y5.reshape((y5.shape[0], y5.shape[1], y5.shape[3], y5.shape[4]))
    if nd == 5:
        return lambda y5, x: y5
    raise numba.errors.TypingError("expected a tensor (N, C, D1[, D2[, D3]])")
