"""The Numba cores of the ``onnx::`` Reduce* operators, and their nopython twins (``jit=``)
for the compiled backend, with ``axes`` and ``keepdims`` constants or values.

A reduction brings the reduced axes into one contiguous block (a transposed copy only when
they are not adjacent already), so the data is ``(outer, n, inner)`` in C order, and
:func:`_reduce_core` reduces the middle dimension. The Python kernels (:mod:`.reduce`) and the
nopython ones take the same steps with the same cores, so their results are equal bit for bit.

The nopython kernels follow the ``jit_like`` convention (:mod:`._shape_jit`): after the
attributes they take ``like``, an array of the shape and dtype the result had in the compiled
backend's warm-up, whose rank Numba types; the axes (a tuple, an integer or float array, a
number, None) and ``keepdims``/``noop_with_empty_axes`` are read at run time, and a result
whose shape is not ``like``'s raises ``ValueError("<Op>: the result's shape is not the compiled
backend's warm-up's")``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, c_strides, check_like, prod, strided_copy

# kinds of reduction understood by the kernels
SUM, L1, L2, LOGSUM, LOGSUMEXP, MAX, MEAN, MIN, PROD, SUMSQUARE = range(10)


_FM = {"reassoc", "contract"}  # lets LLVM vectorise the sums (order of additions may change)


@numba.njit(cache=True, fastmath=_FM)
def _sum_rows(x, outer, n, inner, kind, acc):
    """Sum-like reductions (sum/mean/logsum, L1, L2/sum of squares, prod) into ``acc``."""
    m = outer * inner
    for k in range(m):
        acc[k] = 1 if kind == PROD else 0
    if inner == 1:
        for o in range(outer):
            s = acc[o]
            base = o * n
            if kind == L1:
                for j in range(n):
                    s += abs(x[base + j])
            elif kind == L2 or kind == SUMSQUARE:
                for j in range(n):
                    v = x[base + j]
                    s += v * v
            elif kind == PROD:
                for j in range(n):
                    s *= x[base + j]
            else:
                for j in range(n):
                    s += x[base + j]
            acc[o] = s
        return acc
    for o in range(outer):
        a = acc[o * inner : (o + 1) * inner]
        for j in range(n):
            row = x[(o * n + j) * inner : (o * n + j + 1) * inner]
            if kind == L1:
                for i in range(inner):
                    a[i] += abs(row[i])
            elif kind == L2 or kind == SUMSQUARE:
                for i in range(inner):
                    a[i] += row[i] * row[i]
            elif kind == PROD:
                for i in range(inner):
                    a[i] *= row[i]
            else:
                for i in range(inner):
                    a[i] += row[i]
    return acc


@numba.njit(cache=True)
def _minmax_rows(x, outer, n, inner, want_max, acc):
    """Max or min over the middle dim; a NaN anywhere in a group gives NaN."""
    m = outer * inner
    nan = np.zeros(m, dtype=np.bool_)
    if n == 0:
        for k in range(m):
            acc[k] = 0
        return acc
    if inner == 1:
        for o in range(outer):
            base = o * n
            s = x[base]
            bad = s != s
            if want_max:
                for j in range(1, n):
                    v = x[base + j]
                    s = v if v > s else s
                    bad |= v != v
            else:
                for j in range(1, n):
                    v = x[base + j]
                    s = v if v < s else s
                    bad |= v != v
            acc[o] = s
            nan[o] = bad
    else:
        for o in range(outer):
            a = acc[o * inner : (o + 1) * inner]
            f = nan[o * inner : (o + 1) * inner]
            first = x[o * n * inner : (o * n + 1) * inner]
            for i in range(inner):
                a[i] = first[i]
                f[i] = first[i] != first[i]
            for j in range(1, n):
                row = x[(o * n + j) * inner : (o * n + j + 1) * inner]
                if want_max:
                    for i in range(inner):
                        v = row[i]
                        a[i] = v if v > a[i] else a[i]
                        f[i] |= v != v
                else:
                    for i in range(inner):
                        v = row[i]
                        a[i] = v if v < a[i] else a[i]
                        f[i] |= v != v
    for k in range(m):
        if nan[k]:
            acc[k] = np.nan
    return acc


@numba.njit(cache=True)
def _reduce_core(x, outer, n, inner, kind, acc):
    """Reduce the middle dim of the C-ordered ``x`` seen as (outer, n, inner) into ``acc``.

    ``acc`` (length outer*inner, float64 or int64) is written in place and returned."""
    m = outer * inner
    if kind == MAX or kind == MIN:
        return _minmax_rows(x, outer, n, inner, kind == MAX, acc)
    if kind == LOGSUMEXP:
        _minmax_rows(x, outer, n, inner, True, acc)
        mx = acc.copy()
        for k in range(m):
            acc[k] = 0
        for o in range(outer):
            for j in range(n):
                base = (o * n + j) * inner
                for i in range(inner):
                    acc[o * inner + i] += np.exp(x[base + i] - mx[o * inner + i])
        for k in range(m):
            if n == 0:
                acc[k] = -np.inf
            elif np.isinf(mx[k]):
                acc[k] = mx[k]
            else:
                acc[k] = mx[k] + np.log(acc[k])
        return acc
    _sum_rows(x, outer, n, inner, kind, acc)
    if kind == L2:
        for k in range(m):
            acc[k] = np.sqrt(acc[k])
    elif kind == LOGSUM:
        for k in range(m):
            acc[k] = np.log(acc[k])
    elif kind == MEAN:
        for k in range(m):
            acc[k] = acc[k] / n if n > 0 else np.nan
    return acc


#: the reductions that accumulate integer (and boolean) data as integers
ACC_INT_KINDS = (SUM, L1, SUMSQUARE, MAX, MIN, PROD)


def _numeric(x):  # pragma: no cover - replaced by the overload in jitted code
    """A C-contiguous 1-D array as the cores read it (booleans as uint8)."""


@overload(_numeric)
def _numeric_ov(x):
    if isinstance(x.dtype, types.Boolean):
        return lambda x: x.astype(np.uint8)
    return lambda x: x


def _acc(x, m, kind):  # pragma: no cover
    """The accumulator of ``m`` values of reduction ``kind`` (a literal) over data ``x``:
    int64 (uint64 for uint64 data) for integer data and :data:`ACC_INT_KINDS`, else float64."""


@overload(_acc, prefer_literal=True)
def _acc_ov(x, m, kind):
    if not isinstance(kind, types.IntegerLiteral):
        raise TypingError("the reduction kind must be a constant")
    dt = x.dtype
    if isinstance(dt, (types.Integer, types.Boolean)) and kind.literal_value in ACC_INT_KINDS:
        if dt == types.uint64:
            return lambda x, m, kind: np.empty(m, np.uint64)
        return lambda x, m, kind: np.empty(m, np.int64)
    return lambda x, m, kind: np.empty(m, np.float64)


def _extreme(x, kind):  # pragma: no cover
    """Max (``kind`` MAX) or min over an empty set in ``x``'s dtype: -inf/+inf, an integer
    dtype's extreme, False/True."""


@overload(_extreme, prefer_literal=True)
def _extreme_ov(x, kind):
    if not isinstance(kind, types.IntegerLiteral):
        raise TypingError("the reduction kind must be a constant")
    want_max = kind.literal_value == MAX
    dt = x.dtype
    if isinstance(dt, types.Boolean):
        v = not want_max
    elif isinstance(dt, types.Integer):
        info = np.iinfo(np.dtype(str(dt)))
        v = int(info.min if want_max else info.max)
    else:
        v = -np.inf if want_max else np.inf
    nt = numba.np.numpy_support.as_dtype(dt).type
    return lambda x, kind: nt(v)


@numba.njit(cache=True)
def reduced_flags(ax, nd, op):
    """The reduced dims (bool[nd]) of the axes ``ax`` (int64[:]; empty: every dim), checked
    against the rank ``nd`` as the Python kernel checks them."""
    red = np.zeros(nd, np.bool_)
    if len(ax) == 0:
        red[:] = True
        return red
    for a in ax:
        if a < -nd or a >= max(nd, 1):
            raise ValueError(op + ": an axis is out of range")
        if nd:
            red[a % nd] = True
    return red


@numba.njit(cache=True)
def kept_dims(dims, red, keepdims):
    """The result's shape: ``dims`` with the reduced ones 1 (``keepdims``) or dropped."""
    out = np.empty(len(dims), np.int64)
    q = 0
    for i in range(len(dims)):
        if not red[i]:
            out[q] = dims[i]
            q += 1
        elif keepdims != 0:
            out[q] = 1
            q += 1
    return out[:q]


@numba.njit(cache=True)
def kept_first(red):
    """The permutation putting the dims not flagged in ``red`` first, then the flagged ones
    (each group in order)."""
    nd = len(red)
    perm = np.empty(nd, np.int64)
    p = 0
    for want in (False, True):
        for i in range(nd):
            if red[i] == want:
                perm[p] = i
                p += 1
    return perm


@numba.njit(cache=True)
def blocked(src, dims, red):
    """``(x, outer, n, inner)``: ``src`` (C order, shape ``dims``) with the reduced dims as one
    contiguous block, transposed (kept dims first) only when they are not adjacent."""
    nd = len(dims)
    first, last, cnt = -1, -1, 0
    for i in range(nd):
        if red[i]:
            if first < 0:
                first = i
            last = i
            cnt += 1
    if cnt == 0:
        return src, src.size, 1, 1
    if last - first + 1 == cnt:
        return src, prod(dims[:first]), prod(dims[first : last + 1]), prod(dims[last + 1 :])
    perm = kept_first(red)
    strides = c_strides(dims)
    x = np.empty(src.size, src.dtype)
    strided_copy(src, 0, dims[perm], strides[perm], x)
    outer, n = 1, 1
    for i in range(nd):
        if red[i]:
            n *= dims[i]
        else:
            outer *= dims[i]
    return x, outer, n, 1


def _reduce_like_jits(kind: int, op: str):
    """The two nopython forms of reduction ``kind``: ``(data, axes, keepdims, like)`` (axes an
    attribute) and ``(data, axes, keepdims, noop_with_empty_axes, like)`` (axes an input)."""
    message = f"{op}: {SHAPE_CHANGED}"

    def input_axes(data, axes, keepdims, noop_with_empty_axes, like):
        src = _flat(data)
        dims = _dims(data)
        ax = _ints(axes)
        if len(ax) == 0 and noop_with_empty_axes != 0:
            check_like(dims, like, message)
            return _shaped(src.copy(), like)
        red = reduced_flags(ax, len(dims), op)
        check_like(kept_dims(dims, red, keepdims), like, message)
        x, outer, n, inner = blocked(src, dims, red)
        if (kind == MAX or kind == MIN) and n == 0:
            return _shaped(np.full(outer * inner, _extreme(src, kind)), like)
        acc = _acc(src, outer * inner, kind)
        res = _reduce_core(_numeric(x), outer, n, inner, kind, acc)
        return _shaped(res.astype(src.dtype), like)

    def attr_axes(data, axes, keepdims, like):
        return input_jit(data, axes, keepdims, 0, like)

    input_axes.__doc__ = f"nopython {op} with ``axes`` an input and noop_with_empty_axes."
    attr_axes.__doc__ = f"nopython {op} over the ``axes`` attribute (None: every axis)."
    for f, suffix in ((attr_axes, "_like_jit"), (input_axes, "_axes_like_jit")):
        f.__name__ = f.__qualname__ = op.lower() + suffix
    input_jit = numba.njit(cache=True)(input_axes)
    return numba.njit(cache=True)(attr_axes), input_jit
