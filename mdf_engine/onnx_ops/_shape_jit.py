"""Nopython twins (``jit=``) of the ``onnx::`` ops that move data or read shapes: Reshape,
Squeeze, Unsqueeze, Flatten, Expand, Tile, Transpose (``perm`` a value), Concat (``axis`` a
value), Slice, Gather, Shape, Size, ConstantOfShape, Cast and CastLike, for the compiled backend.

An op registered with ``jit_like=True`` takes one argument after its attributes: an array of
the shape and dtype its result had in the compiled backend's warm-up (``like``; the result's
slot, see ``backends/compiled/calls.py``). Numba types an array's rank at compile time, so an op
whose result's rank follows from the *values* of an input (Reshape's ``shape``, Unsqueeze's
``axes``) gets it from ``like``; the kernel computes the shape the op asks for from its inputs
as the Python kernel does and raises when it is not ``like``'s (the warm-up's shape changed),
so a value is never silently reshaped. Results equal the Python kernels' bit for bit: these ops
only copy elements (Cast converts them as numpy's ``astype`` does).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload


def _ints(v):  # pragma: no cover - replaced by the overload in jitted code
    """An int, a tuple of ints, an integer (or whole float) array or None as int64[:]."""


def _dims(x):  # pragma: no cover
    """The shape of an array (a number: ``()``) as int64[:]."""


def _flat(x):  # pragma: no cover
    """An array (a number: of one element) as a C-contiguous 1-D array (a view if it is
    one)."""


def _shaped(flat, like):  # pragma: no cover
    """A C-contiguous 1-D array of ``like.size`` elements in ``like``'s shape."""


@overload(_ints)
def _ints_ov(v):
    if v is None or isinstance(v, (types.NoneType, types.Omitted)):
        return lambda v: np.empty(0, np.int64)
    if isinstance(v, (types.Integer, types.Float, types.Boolean)):
        return lambda v: np.full(1, np.int64(v))
    if isinstance(v, types.BaseTuple):
        if len(v) == 0:
            return lambda v: np.empty(0, np.int64)

        def tuple_ints(v):
            out = np.empty(len(v), np.int64)
            for i in range(len(v)):
                out[i] = np.int64(v[i])
            return out

        return tuple_ints
    if isinstance(v, types.Array):
        if v.ndim == 0:
            return lambda v: np.full(1, np.int64(v[()]))

        def array_ints(v):
            out = np.empty(v.size, np.int64)
            k = 0
            for e in v.flat:
                out[k] = np.int64(e)
                k += 1
            return out

        return array_ints
    raise TypingError(f"not a list of integers: {v}")


@overload(_dims)
def _dims_ov(x):
    if isinstance(x, types.Array) and x.ndim > 0:

        def dims(x):
            out = np.empty(x.ndim, np.int64)
            for i in range(x.ndim):
                out[i] = x.shape[i]
            return out

        return dims
    if isinstance(x, (types.Array, types.Number, types.Boolean)):
        return lambda x: np.empty(0, np.int64)
    raise TypingError(f"not an array: {x}")


@overload(_flat)
def _flat_ov(x):
    if isinstance(x, types.Array) and x.ndim > 0:
        return lambda x: np.ascontiguousarray(x).reshape(x.size)
    if isinstance(x, types.Array):
        return lambda x: np.full(1, x[()])
    if isinstance(x, (types.Number, types.Boolean)):
        return lambda x: np.full(1, x)
    raise TypingError(f"not an array: {x}")


def _like_dims(like):  # pragma: no cover
    """``like``'s shape as int64[:] (a number, a number slot's template: ``()``)."""


@overload(_like_dims)
def _like_dims_ov(like):
    return lambda like: _dims(like)


@overload(_shaped)
def _shaped_ov(flat, like):
    if isinstance(like, (types.Number, types.Boolean)):
        return lambda flat, like: flat[0]  # (a number: the template of a number slot)
    if not isinstance(like, types.Array):
        raise TypingError(f"not an array: {like}")
    if like.ndim == 0:

        def scalar(flat, like):
            out = np.empty((), flat.dtype)
            out[()] = flat[0]
            return out

        return scalar
    return lambda flat, like: flat.reshape(like.shape)


@numba.njit(cache=True)
def prod(dims):
    """The product of int64[:] ``dims``."""
    n = 1
    for d in dims:
        n *= d
    return n


@numba.njit(cache=True)
def same_dims(want, like):
    """Whether the shape ``want`` (int64[:]) is ``like``'s (a number's: ``()``)."""
    d = _like_dims(like)
    if len(want) != len(d):
        return False
    for i in range(len(want)):
        if want[i] != d[i]:
            return False
    return True


@numba.njit(cache=True)
def check_like(want, like, op_message):
    """Raise when the shape ``want`` is not the warm-up's (``like``'s)."""
    if not same_dims(want, like):
        raise ValueError(op_message)


@numba.njit(cache=True)
def norm_axis(a, rank):
    """``a`` in ``[0, rank)`` (negative from the end), or -1 when out of range."""
    if a < -rank or a >= rank:
        return -1
    return a + rank if a < 0 else a


@numba.njit(cache=True)
def strided_copy(src, offset, vshape, vstrides, out):
    """``out.flat[k]`` (C order over the virtual shape ``vshape``, whose size is
    ``out.size``) = ``src[offset + sum(i_d * vstrides[d])]``: transposes, slices, broadcasts
    and tiles as one loop over a contiguous 1-D ``src``."""
    nd = len(vshape)
    total = 1
    for d in range(nd):
        total *= vshape[d]
    if total == 0:
        return
    idx = np.zeros(nd, np.int64)
    pos = offset
    inner = vshape[nd - 1] if nd else 1
    step = vstrides[nd - 1] if nd else 0
    k = 0
    while k < total:
        p = pos
        for _ in range(inner):
            out[k] = src[p]
            p += step
            k += 1
        # advance the odometer past the innermost axis
        d = nd - 2
        while d >= 0:
            idx[d] += 1
            pos += vstrides[d]
            if idx[d] < vshape[d]:
                break
            pos -= vstrides[d] * vshape[d]
            idx[d] = 0
            d -= 1


@numba.njit(cache=True)
def c_strides(dims):
    """Element strides of a C-contiguous array of shape ``dims``."""
    n = len(dims)
    out = np.empty(n, np.int64)
    s = 1
    for i in range(n - 1, -1, -1):
        out[i] = s
        s *= dims[i]
    return out


@numba.njit(cache=True)
def copy_view(data, offset, vshape, vstrides, like):
    """A new array of ``like``'s shape holding the strided view of ``data`` (see
    :func:`strided_copy`)."""
    src = _flat(data)
    out = np.empty(prod(_like_dims(like)), src.dtype)
    strided_copy(src, offset, vshape, vstrides, out)
    return _shaped(out, like)
