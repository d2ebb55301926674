"""Nopython twins of Split for the compiled backend, writing the parts into their slots.

Split's number of parts and their lengths follow from values (``split`` sizes, or
``num_outputs``), and its value is a tuple of them, so the compiled call passes the parts'
slots last (``jit_parts``, ``backends/compiled/calls.py``): a tuple of arrays (a tuple slot,
or one array for a single part), or one array whose first axis are the parts (parts of one
shape). The kernel computes the sizes as the Python kernel does, raises when they are not the
warm-up's parts, and copies each part (bit for bit: only data movement). Bad arguments raise
``ValueError`` where the Python kernel raises ``MDFError``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, norm_axis, prod


def _given(v):  # pragma: no cover - replaced by the overload
    """Whether an optional argument was given (not None)."""


@overload(_given)
def _given_ov(v):
    none = v is None or isinstance(v, (types.NoneType, types.Omitted))
    return lambda v: not none


def _count(v):  # pragma: no cover - replaced by the overload
    """``num_outputs`` as an int64 (None: 0)."""


@overload(_count)
def _count_ov(v):
    if v is None or isinstance(v, (types.NoneType, types.Omitted)):
        return lambda v: np.int64(0)
    return lambda v: np.int64(v)


@numba.njit(cache=True)
def _sizes(n, split, num_outputs, ceil):
    """The parts' lengths along an axis of length ``n``, as the Python kernel finds them."""
    if _given(split):
        sizes = _ints(split)
        total = 0
        for s in sizes:
            if s < 0:
                raise ValueError("Split: the sizes do not add up to the axis length")
            total += s
        if total != n:
            raise ValueError("Split: the sizes do not add up to the axis length")
        return sizes
    k = _count(num_outputs)
    if not _given(num_outputs):
        raise ValueError("Split: give 'split' (sizes) or 'num_outputs'")
    if k < 1:
        raise ValueError("Split: num_outputs must be >= 1")
    sizes = np.empty(k, np.int64)
    if ceil:
        chunk = -(-n // k)
        for i in range(k):
            sizes[i] = min(chunk, max(n - i * chunk, 0))
    else:
        if n % k:
            raise ValueError("Split: the axis does not split into equal parts")
        sizes[:] = n // k
    return sizes


@numba.njit(cache=True)
def _split_into(input, split, axis, num_outputs, ceil, parts):
    xd = _dims(input)
    ax = norm_axis(np.int64(axis), len(xd))
    if ax < 0:
        raise ValueError("Split: axis is out of range")
    sizes = _sizes(xd[ax], split, num_outputs, ceil)
    if len(sizes) != len(parts):
        raise ValueError("Split: " + SHAPE_CHANGED)
    outer = prod(xd[:ax])
    inner = prod(xd[ax + 1 :])
    n = xd[ax]
    src = _flat(input)
    start = 0
    for k in range(len(sizes)):
        p = parts[k]
        pd = _dims(p)
        s = sizes[k]
        for d in range(len(xd)):
            if pd[d] != (s if d == ax else xd[d]):
                raise ValueError("Split: " + SHAPE_CHANGED)
        dst = p.reshape(p.size)
        for o in range(outer):
            a = (o * n + start) * inner
            b = o * s * inner
            for i in range(s * inner):
                dst[b + i] = src[a + i]
        start += s


@numba.njit(cache=True)
def split2_into_jit(input, axis, split, num_outputs, parts):
    """Split (opset 2): ``split`` an attribute; equal parts otherwise."""
    _split_into(input, split, axis, num_outputs, False, parts)


@numba.njit(cache=True)
def split13_into_jit(input, split, axis, num_outputs, parts):
    """Split (opset 13): ``split`` an input; equal parts otherwise."""
    _split_into(input, split, axis, num_outputs, False, parts)


@numba.njit(cache=True)
def split18_into_jit(input, split, axis, num_outputs, parts):
    """Split (opset 18): parts of ceil(n / num_outputs), the last one smaller."""
    _split_into(input, split, axis, num_outputs, True, parts)
