"""Nopython twins of Pad (every opset form: ``pads``, ``constant_value`` and ``axes`` as values;
modes constant, reflect, edge and, from opset 19, wrap) for the compiled backend.

The result's shape follows from the *values* of ``pads``, so the kernels take the result's
template last (``jit_like``, see :mod:`._shape_jit`) and raise when the shape they compute is
not the warm-up's. Every output element is one input element (or the fill value): per axis an
output coordinate maps to an input coordinate (a crop by negative pads first, then the mode's
rule), exactly the elements the Python kernel's plane copies give, so results are bit for bit
its results. Bad arguments raise ``ValueError`` where the Python kernel raises ``MDFError``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _like_dims, _shaped, c_strides, check_like
from ._shape_jit import norm_axis as _norm

#: mode numbers of the kernels (wrap from opset 19)
CONSTANT, REFLECT, EDGE, WRAP = 0, 1, 2, 3


@numba.njit(cache=True)
def _mode_code(mode, wrap_ok):
    if mode == "constant":
        return CONSTANT
    if mode == "reflect":
        return REFLECT
    if mode == "edge":
        return EDGE
    if mode == "wrap" and wrap_ok:
        return WRAP
    raise ValueError("Pad: mode must be one of constant, reflect, edge (wrap from opset 19)")


def _axes_or_all(axes, nd):  # pragma: no cover - replaced by the overload
    """``axes`` as int64[:], every axis when None."""


@overload(_axes_or_all)
def _axes_or_all_ov(axes, nd):
    if axes is None or isinstance(axes, (types.NoneType, types.Omitted)):
        return lambda axes, nd: np.arange(nd)
    return lambda axes, nd: _ints(axes)


def _fill(value):  # pragma: no cover - replaced by the overload
    """Constant mode's value: the first element of ``value``, 0 when None or empty."""


@overload(_fill)
def _fill_ov(value):
    if value is None or isinstance(value, (types.NoneType, types.Omitted)):
        return lambda value: 0
    if isinstance(value, (types.Number, types.Boolean)):
        return lambda value: value

    def first(value):
        v = _flat(value)
        return v[0] if v.size else 0

    return first


@numba.njit(cache=True)
def _source(t, n, mode):
    """The input coordinate of padded coordinate ``t`` (``t`` outside ``[0, n)``)."""
    if mode == EDGE:
        return min(max(t, 0), n - 1)
    if mode == WRAP:
        return t % n
    period = 2 * (n - 1)
    src = abs(t) % period
    return period - src if src >= n else src


@numba.njit(cache=True)
def _pad(data, pads, value, axes, mode, like):
    xd = _dims(data)
    nd = len(xd)
    p = _ints(pads)
    ax = _axes_or_all(axes, nd)
    if len(p) != 2 * len(ax):
        raise ValueError("Pad: pads needs two values per axis")
    before = np.zeros(nd, np.int64)
    after = np.zeros(nd, np.int64)
    for i in range(len(ax)):
        a = _norm(ax[i], nd)
        if a < 0:
            raise ValueError("Pad: an axis is out of range")
        before[a] = p[i]
        after[a] = p[i + len(ax)]
    # negative pads crop, as numpy's slice(max(-b, 0), n - max(-e, 0)) does
    start = np.empty(nd, np.int64)
    size = np.empty(nd, np.int64)
    want = np.empty(nd, np.int64)
    for d in range(nd):
        n = xd[d]
        lo = min(max(-before[d], 0), n)
        hi = n - max(-after[d], 0)
        hi = min(max(hi + n if hi < 0 else hi, 0), n)
        start[d] = lo
        size[d] = max(hi - lo, 0)
        b, e = max(before[d], 0), max(after[d], 0)
        if mode != CONSTANT and (b or e) and size[d] == 0:
            raise ValueError("Pad: this mode cannot pad an empty axis")
        if mode == REFLECT and (b or e) and size[d] < 2:
            raise ValueError("Pad: reflect needs an axis of length >= 2")
        want[d] = size[d] + b + e
    check_like(want, like, "Pad: " + SHAPE_CHANGED)
    # per axis: each output coordinate's input coordinate (-1: the fill value)
    src_of = np.empty((nd, max(want.max(), 1) if nd else 1), np.int64)
    for d in range(nd):
        b = max(before[d], 0)
        for o in range(want[d]):
            t = o - b
            if 0 <= t < size[d]:
                src_of[d, o] = start[d] + t
            elif mode == CONSTANT:
                src_of[d, o] = -1
            else:
                src_of[d, o] = start[d] + _source(t, size[d], mode)
    src = _flat(data)
    st = c_strides(xd)
    out = np.empty(np.prod(_like_dims(like)), src.dtype)
    fill = _fill(value)
    idx = np.zeros(nd, np.int64)
    for k in range(out.size):
        off = 0
        for d in range(nd):
            s = src_of[d, idx[d]]
            if s < 0:
                off = -1
                break
            off += s * st[d]
        if off < 0:
            out[k] = fill
        else:
            out[k] = src[off]
        d = nd - 1
        while d >= 0:
            idx[d] += 1
            if idx[d] < want[d]:
                break
            idx[d] = 0
            d -= 1
    return _shaped(out, like)


@numba.njit(cache=True)
def pad2_like_jit(data, pads, mode, value, like):
    """Pad (opset 2): ``pads`` and ``value`` attributes."""
    return _pad(data, pads, value, None, _mode_code(mode, False), like)


@numba.njit(cache=True)
def pad11_like_jit(data, pads, constant_value, mode, like):
    """Pad (opset 11): ``pads`` and ``constant_value`` inputs."""
    return _pad(data, pads, constant_value, None, _mode_code(mode, False), like)


@numba.njit(cache=True)
def pad18_like_jit(data, pads, constant_value, axes, mode, like):
    """Pad (opset 18): the ``axes`` input (every axis when absent)."""
    return _pad(data, pads, constant_value, axes, _mode_code(mode, False), like)


@numba.njit(cache=True)
def pad19_like_jit(data, pads, constant_value, axes, mode, like):
    """Pad (opset 19): wrap mode too."""
    return _pad(data, pads, constant_value, axes, _mode_code(mode, True), like)
