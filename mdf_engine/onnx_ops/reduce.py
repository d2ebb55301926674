"""``onnx::`` Reduce* operators: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
with Numba kernels.

Every reduction is brought to one layout before the kernel runs: the reduced axes are made one
contiguous block (a transposed copy only when they are not adjacent already) so that the data
is ``(outer, n, inner)`` in C order; the njit kernel then reduces the middle dimension.

Opset versions: the Reduce* ops take ``axes`` as an attribute up to opset 17 (ReduceSum: 12)
and as an optional input afterwards, together with ``noop_with_empty_axes``.

``jit=`` versions (nopython, for the compiled backend) are made for every Reduce* version by one
factory, :func:`_reduce_jits` (``axes`` a tuple of ints or None, ``keepdims``/
``noop_with_empty_axes`` compile-time constants so that the output rank is known).
ArgMax/ArgMin, CumSum and TopK live in :mod:`.argreduce`, :mod:`.cumsum` and :mod:`.topk`.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import MDFError
from . import onnx_op
from ._axes import int_list

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


def _empty_extreme(kind: int, dtype: np.dtype) -> Any:
    """The value of max/min over an empty set: -inf/+inf, or the dtype's extreme for ints."""
    if dtype.kind == "b":
        return kind == MIN
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == MAX else info.max
    return -np.inf if kind == MAX else np.inf


_ACC_INT_KINDS = (SUM, L1, SUMSQUARE, MAX, MIN, PROD)


def _reduce(kind: int, op: str, data: Any, axes: Any, keepdims: int, noop: int) -> np.ndarray:
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    nd = x.ndim
    ax = None if axes is None else int_list(axes)
    if not ax:
        if noop:
            return x
        red = list(range(nd))
    else:
        red = []
        for a in ax:
            if not -nd <= a < max(nd, 1):
                raise MDFError(f"{op}: axis {a} is out of range for a tensor of rank {nd}")
            red.append(a % nd if nd else 0)
        red = sorted(set(red)) if nd else []
    shape = x.shape
    if keepdims:
        out_shape = tuple(1 if i in red else s for i, s in enumerate(shape))
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i not in red)
    # bring the reduced axes into one contiguous block
    if red and red[-1] - red[0] + 1 != len(red):
        keep = [i for i in range(nd) if i not in red]
        x = np.transpose(x, keep + red)
        red = list(range(len(keep), nd))
        shape = x.shape
    if red:
        outer = math.prod(shape[: red[0]])
        n = math.prod(shape[red[0] : red[-1] + 1])
        inner = math.prod(shape[red[-1] + 1 :])
    else:
        outer, n, inner = x.size, 1, 1
    dt = x.dtype
    if (kind == MAX or kind == MIN) and n == 0:
        return np.full(out_shape, _empty_extreme(kind, dt), dtype=dt)
    flat = x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)
    k = dt.kind
    if k == "b":
        flat = flat.view(np.uint8)
    elif k == "f" and dt.itemsize < 4:
        flat = flat.astype(np.float32)
    if k in "iub" and kind in _ACC_INT_KINDS:
        acc = np.empty(outer * inner, dtype=np.uint64 if dt == np.uint64 else np.int64)
    else:
        acc = np.empty(outer * inner, dtype=np.float64)
    res = _reduce_core(flat, outer, n, inner, kind, acc)
    return res.astype(dt, copy=False).reshape(out_shape)


# ---------------------------------------------------------------- nopython reductions


@numba.njit(cache=True)
def _perm_kept_first(nd, axes):
    """The permutation putting the kept dims first and the reduced ``axes`` last."""
    red = np.zeros(nd, dtype=np.bool_)
    for a in axes:
        red[a % nd] = True
    perm = np.empty(nd, dtype=np.int64)
    p = 0
    for i in range(nd):
        if not red[i]:
            perm[p] = i
            p += 1
    for i in range(nd):
        if red[i]:
            perm[p] = i
            p += 1
    return perm


@numba.njit(cache=True)
def _reduce_keep(data, axes, perm, kind, acc_tmpl):
    """nopython reduction over the int64 array ``axes`` (``perm`` = kept dims first, as a
    tuple), in the keepdims layout (same rank)."""
    x = np.ascontiguousarray(data)
    nd = x.ndim
    red = np.zeros(nd, dtype=np.bool_)
    for a in axes:
        red[a % nd] = True
    outer = 1
    n = 1
    for i in range(nd):
        if red[i]:
            n *= x.shape[i]
        else:
            outer *= x.shape[i]
    xt = np.ascontiguousarray(np.transpose(x, perm))
    acc = np.empty(outer, dtype=acc_tmpl.dtype)
    _reduce_core(xt.ravel(), outer, n, 1, kind, acc)
    shp = x.shape
    for i in range(nd):
        if red[i]:
            shp = numba.np.unsafe.ndarray.tuple_setitem(shp, i, 1)
    return acc.astype(x.dtype).reshape(shp)


@numba.njit(cache=True)
def _kept_dims(shape, axes):
    nd = len(shape)
    red = np.zeros(nd, dtype=np.bool_)
    for a in axes:
        red[a % nd] = True
    out = np.empty(nd, dtype=np.int64)
    q = 0
    for i in range(nd):
        if not red[i]:
            out[q] = shape[i]
            q += 1
    return out[:q]


@numba.njit(cache=True)
def _axes_array(axes):
    out = np.empty(len(axes), dtype=np.int64)
    for t in range(len(axes)):
        out[t] = axes[t]
    return out


def _reduce_stub(data, axes, keepdims, noop, kind):  # pragma: no cover - typed by overload
    raise NotImplementedError("only callable from Numba nopython code")


@overload(_reduce_stub, prefer_literal=True)
def _reduce_stub_ol(data, axes, keepdims, noop, kind):
    """Type a nopython reduction: ``keepdims``, ``noop`` and ``kind`` must be compile-time
    constants, ``axes`` a tuple of distinct ints (or None / an empty tuple for all axes), so
    the output rank is known when compiling."""
    lit = (types.IntegerLiteral, types.BooleanLiteral)
    if not (isinstance(keepdims, lit) and isinstance(noop, lit) and isinstance(kind, lit)):
        return None
    if not isinstance(data, types.Array):
        return None
    nd = data.ndim
    k_kind = int(kind.literal_value)
    keep = bool(keepdims.literal_value)
    const_axes = None
    if isinstance(axes, (types.NoneType, types.Omitted)) or (
        isinstance(axes, types.BaseTuple) and len(axes) == 0
    ):
        if noop.literal_value:
            return lambda data, axes, keepdims, noop, kind: data.copy()
        const_axes = np.arange(nd, dtype=np.int64)
    elif isinstance(axes, types.UniTuple) and isinstance(axes.dtype, types.Integer):
        pass
    elif isinstance(axes, types.BaseTuple) and all(
        isinstance(t, types.IntegerLiteral) for t in axes.types
    ):
        # constant axes written in the caller's code: a tuple of literals
        const_axes = np.array([t.literal_value for t in axes.types], dtype=np.int64)
    else:
        return None
    n_red = len(const_axes) if const_axes is not None else len(axes)
    out_nd = nd if keep else nd - n_red
    acc_int = isinstance(data.dtype, types.Integer) and k_kind in _ACC_INT_KINDS
    tmpl = np.zeros(0, dtype=np.int64 if acc_int else np.float64)
    if const_axes is not None:
        if keep:

            def impl_const_keep(data, axes, keepdims, noop, kind):
                perm = to_fixed_tuple(_perm_kept_first(nd, const_axes), nd)
                return _reduce_keep(data, const_axes, perm, k_kind, tmpl)

            return impl_const_keep

        def impl_const(data, axes, keepdims, noop, kind):
            perm = to_fixed_tuple(_perm_kept_first(nd, const_axes), nd)
            r = _reduce_keep(data, const_axes, perm, k_kind, tmpl)
            return r.reshape(to_fixed_tuple(_kept_dims(data.shape, const_axes), out_nd))

        return impl_const
    if keep:

        def impl_keep(data, axes, keepdims, noop, kind):
            ax = _axes_array(axes)
            perm = to_fixed_tuple(_perm_kept_first(nd, ax), nd)
            return _reduce_keep(data, ax, perm, k_kind, tmpl)

        return impl_keep

    def impl(data, axes, keepdims, noop, kind):
        ax = _axes_array(axes)
        perm = to_fixed_tuple(_perm_kept_first(nd, ax), nd)
        r = _reduce_keep(data, ax, perm, k_kind, tmpl)
        return r.reshape(to_fixed_tuple(_kept_dims(data.shape, ax), out_nd))

    return impl


# Public nopython entry points, two per reduction, made by :func:`_reduce_jits`:
# ``(data, axes, keepdims)`` for the attribute-axes versions and ``(data, axes, keepdims,
# noop_with_empty_axes)`` for the input-axes versions. ``keepdims``/``noop_with_empty_axes`` are
# forced to compile-time constants (``numba.literally``); ``axes`` is a tuple of ints or None.
# Max/Min over an empty axis give 0 here (the Python kernels give -inf/+inf).


def _reduce_jits(kind: int, op: str) -> tuple[Any, Any]:
    """The two nopython forms of the reduction ``kind``: attribute axes, and input axes with
    ``noop_with_empty_axes``. ``kind`` is a closure constant, so each form compiles (and is
    cached) once per reduction."""

    def attr_axes(data, axes, keepdims):
        numba.literally(keepdims)
        return _reduce_stub(data, axes, keepdims, 0, kind)

    def input_axes(data, axes, keepdims, noop_with_empty_axes):
        numba.literally(keepdims)
        numba.literally(noop_with_empty_axes)
        return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, kind)

    attr_axes.__doc__ = f"nopython {op} over the ``axes`` tuple (None = all)."
    input_axes.__doc__ = (
        f"nopython {op} with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."
    )
    for f, suffix in ((attr_axes, "_jit"), (input_axes, "_axes_jit")):
        f.__name__ = f.__qualname__ = op.lower() + suffix
    return numba.njit(cache=True)(attr_axes), numba.njit(cache=True)(input_axes)


def _attr_reduction(kind: int, op: str):
    def kernel(data, *, axes=None, keepdims=1):
        return (_reduce(kind, op, data, axes, keepdims, 0),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"{op} over the ``axes`` attribute (all axes when absent)."
    return kernel


def _input_reduction(kind: int, op: str):
    def kernel(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
        return (_reduce(kind, op, data, axes, keepdims, noop_with_empty_axes),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = (
        f"{op} over the ``axes`` input; empty or absent axes reduce everything unless "
        "``noop_with_empty_axes`` is set (then the input is returned unchanged)."
    )
    return kernel


def _register_reduce(op: str, kind: int, input_since: int) -> None:
    attr_jit, input_jit = _reduce_jits(kind, op)
    attrs1 = {"axes": None, "keepdims": 1}
    onnx_op(op, inputs=("data",), attributes=attrs1, outputs=("reduced",), since=1, jit=attr_jit)(
        _attr_reduction(kind, op)
    )
    onnx_op(
        op,
        inputs=("data", "axes"),
        optional=("axes",),
        attributes={"keepdims": 1, "noop_with_empty_axes": 0},
        outputs=("reduced",),
        since=input_since,
        jit=input_jit,
    )(_input_reduction(kind, op))


for _op, _kind in (
    ("ReduceL1", L1),
    ("ReduceL2", L2),
    ("ReduceLogSum", LOGSUM),
    ("ReduceLogSumExp", LOGSUMEXP),
    ("ReduceMax", MAX),
    ("ReduceMean", MEAN),
    ("ReduceMin", MIN),
    ("ReduceProd", PROD),
    ("ReduceSumSquare", SUMSQUARE),
):
    _register_reduce(_op, _kind, 18)
_register_reduce("ReduceSum", SUM, 13)
