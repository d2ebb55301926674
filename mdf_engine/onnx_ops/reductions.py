"""``onnx::`` reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
ArgMax/ArgMin, CumSum and TopK, with Numba kernels.

Every reduction is brought to one layout before the kernel runs: the reduced axes are made one
contiguous block (a transposed copy only when they are not adjacent already) so that the data
is ``(outer, n, inner)`` in C order; the njit kernel then reduces the middle dimension.

Opset versions: the Reduce* ops take ``axes`` as an attribute up to opset 17 (ReduceSum: 12)
and as an optional input afterwards, together with ``noop_with_empty_axes``. ArgMax/ArgMin gain
``select_last_index`` at 12; TopK takes ``k`` as an attribute at 1, as input ``K`` from 10, and
``largest``/``sorted`` from 11.

``jit=`` versions (nopython, for the compiled backend) are given for every Reduce* version
(``axes`` a tuple of ints or None, ``keepdims``/``noop_with_empty_axes`` compile-time constants
so that the output rank is known), ArgMax/ArgMin (``keepdims`` constant) and CumSum. TopK's
output shape depends on the value of K, so it has none.
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
        a = acc[o * inner:(o + 1) * inner]
        for j in range(n):
            row = x[(o * n + j) * inner:(o * n + j + 1) * inner]
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
            a = acc[o * inner:(o + 1) * inner]
            f = nan[o * inner:(o + 1) * inner]
            first = x[o * n * inner:(o * n + 1) * inner]
            for i in range(inner):
                a[i] = first[i]
                f[i] = first[i] != first[i]
            for j in range(1, n):
                row = x[(o * n + j) * inner:(o * n + j + 1) * inner]
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


def _int_list(v: Any) -> list[int]:
    """Axes given as an int, a list/tuple or an integer tensor, as a list of ints."""
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    if isinstance(v, np.ndarray):
        return [int(a) for a in v.reshape(-1).tolist()]
    return [int(a) for a in np.asarray(v).reshape(-1).tolist()]


_ACC_INT_KINDS = (SUM, L1, SUMSQUARE, MAX, MIN, PROD)


def _reduce(kind: int, op: str, data: Any, axes: Any, keepdims: int, noop: int) -> np.ndarray:
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    nd = x.ndim
    ax = None if axes is None else _int_list(axes)
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
        n = math.prod(shape[red[0]: red[-1] + 1])
        inner = math.prod(shape[red[-1] + 1:])
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
            isinstance(axes, types.BaseTuple) and len(axes) == 0):
        if noop.literal_value:
            return lambda data, axes, keepdims, noop, kind: data.copy()
        const_axes = np.arange(nd, dtype=np.int64)
    elif isinstance(axes, types.UniTuple) and isinstance(axes.dtype, types.Integer):
        pass
    elif isinstance(axes, types.BaseTuple) and all(
            isinstance(t, types.IntegerLiteral) for t in axes.types):
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


# Public nopython entry points, two per reduction: ``<op>_jit(data, axes, keepdims)`` for the
# attribute-axes versions and ``<op>_axes_jit(data, axes, keepdims, noop_with_empty_axes)`` for
# the input-axes versions. ``keepdims``/``noop_with_empty_axes`` are forced to compile-time
# constants (``numba.literally``); ``axes`` is a tuple of ints or None. Max/Min over an empty
# axis give 0 here (the Python kernels give -inf/+inf).


@numba.njit(cache=True)
def reducel1_jit(data, axes, keepdims):
    """nopython ReduceL1 over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, L1)


@numba.njit(cache=True)
def reducel1_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceL1 with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, L1)


@numba.njit(cache=True)
def reducel2_jit(data, axes, keepdims):
    """nopython ReduceL2 over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, L2)


@numba.njit(cache=True)
def reducel2_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceL2 with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, L2)


@numba.njit(cache=True)
def reducelogsum_jit(data, axes, keepdims):
    """nopython ReduceLogSum over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, LOGSUM)


@numba.njit(cache=True)
def reducelogsum_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceLogSum with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, LOGSUM)


@numba.njit(cache=True)
def reducelogsumexp_jit(data, axes, keepdims):
    """nopython ReduceLogSumExp over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, LOGSUMEXP)


@numba.njit(cache=True)
def reducelogsumexp_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceLogSumExp with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, LOGSUMEXP)


@numba.njit(cache=True)
def reducemax_jit(data, axes, keepdims):
    """nopython ReduceMax over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, MAX)


@numba.njit(cache=True)
def reducemax_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceMax with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, MAX)


@numba.njit(cache=True)
def reducemean_jit(data, axes, keepdims):
    """nopython ReduceMean over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, MEAN)


@numba.njit(cache=True)
def reducemean_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceMean with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, MEAN)


@numba.njit(cache=True)
def reducemin_jit(data, axes, keepdims):
    """nopython ReduceMin over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, MIN)


@numba.njit(cache=True)
def reducemin_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceMin with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, MIN)


@numba.njit(cache=True)
def reduceprod_jit(data, axes, keepdims):
    """nopython ReduceProd over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, PROD)


@numba.njit(cache=True)
def reduceprod_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceProd with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, PROD)


@numba.njit(cache=True)
def reducesum_jit(data, axes, keepdims):
    """nopython ReduceSum over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, SUM)


@numba.njit(cache=True)
def reducesum_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceSum with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, SUM)


@numba.njit(cache=True)
def reducesumsquare_jit(data, axes, keepdims):
    """nopython ReduceSumSquare over the ``axes`` tuple (None = all)."""
    numba.literally(keepdims)
    return _reduce_stub(data, axes, keepdims, 0, SUMSQUARE)


@numba.njit(cache=True)
def reducesumsquare_axes_jit(data, axes, keepdims, noop_with_empty_axes):
    """nopython ReduceSumSquare with ``axes`` as an input (a tuple, or None) and noop_with_empty_axes."""
    numba.literally(keepdims)
    numba.literally(noop_with_empty_axes)
    return _reduce_stub(data, axes, keepdims, noop_with_empty_axes, SUMSQUARE)


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
    attrs1 = {"axes": None, "keepdims": 1}
    onnx_op(op, inputs=("data",), attributes=attrs1, outputs=("reduced",), since=1,
            jit=globals()[op.lower() + "_jit"])(_attr_reduction(kind, op))
    onnx_op(
        op, inputs=("data", "axes"), optional=("axes",),
        attributes={"keepdims": 1, "noop_with_empty_axes": 0}, outputs=("reduced",),
        since=input_since, jit=globals()[op.lower() + "_axes_jit"],
    )(_input_reduction(kind, op))


for _op, _kind in (
    ("ReduceL1", L1), ("ReduceL2", L2), ("ReduceLogSum", LOGSUM),
    ("ReduceLogSumExp", LOGSUMEXP), ("ReduceMax", MAX), ("ReduceMean", MEAN),
    ("ReduceMin", MIN), ("ReduceProd", PROD), ("ReduceSumSquare", SUMSQUARE),
):
    _register_reduce(_op, _kind, 18)
_register_reduce("ReduceSum", SUM, 13)


# ---------------------------------------------------------------- ArgMax / ArgMin


@numba.njit(cache=True)
def _arg_core(x, outer, n, inner, want_max, last):
    """Index of the max/min over the middle dim of (outer, n, inner); rows read contiguously."""
    out = np.zeros(outer * inner, dtype=np.int64)
    best = np.empty(inner, dtype=x.dtype)
    for o in range(outer):
        bi = out[o * inner:(o + 1) * inner]
        first = x[o * n * inner:(o * n + 1) * inner]
        for i in range(inner):
            best[i] = first[i]
        for j in range(1, n):
            row = x[(o * n + j) * inner:(o * n + j + 1) * inner]
            for i in range(inner):
                v = row[i]
                if want_max:
                    better = v > best[i] or (last and v == best[i])
                else:
                    better = v < best[i] or (last and v == best[i])
                if better:
                    best[i] = v
                    bi[i] = j
    return out


def _split3(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    outer = math.prod(shape[:axis])
    inner = math.prod(shape[axis + 1:])
    return outer, int(shape[axis]), inner


def _axis(axis: Any, ndim: int, op: str) -> int:
    a = int(axis) if isinstance(axis, (int, np.integer)) else _int_list(axis)[0]
    if not -ndim <= a < ndim:
        raise MDFError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def _argreduce(data: Any, axis: int, keepdims: int, last: int, want_max: bool) -> np.ndarray:
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    op = "ArgMax" if want_max else "ArgMin"
    ax = _axis(axis, x.ndim, op)
    if x.shape[ax] == 0:
        raise MDFError(f"{op}: axis {ax} has length 0, there is no index to return")
    outer, n, inner = _split3(x.shape, ax)
    flat = x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)
    if flat.dtype.kind == "b":
        flat = flat.view(np.uint8)
    res = _arg_core(flat, outer, n, inner, want_max, bool(last))
    shape = list(x.shape)
    if keepdims:
        shape[ax] = 1
    else:
        del shape[ax]
    return res.reshape(shape)


def _keep_or_drop(res, shape, ax, keepdims):  # pragma: no cover - typed by overload
    raise NotImplementedError("only callable from Numba nopython code")


@overload(_keep_or_drop, prefer_literal=True)
def _keep_or_drop_ol(res, shape, ax, keepdims):
    """``res`` reshaped to ``shape`` with dim ``ax`` set to 1 (keepdims) or removed; the
    literal ``keepdims`` fixes the output rank at compile time."""
    if not isinstance(keepdims, (types.IntegerLiteral, types.BooleanLiteral)):
        return None
    nd = len(shape)
    if keepdims.literal_value:
        def keep(res, shape, ax, keepdims):
            return res.reshape(numba.np.unsafe.ndarray.tuple_setitem(shape, ax, 1))
        return keep
    out_nd = nd - 1

    def drop(res, shape, ax, keepdims):
        o = np.empty(out_nd, dtype=np.int64)
        q = 0
        for i in range(nd):
            if i != ax:
                o[q] = shape[i]
                q += 1
        return res.reshape(to_fixed_tuple(o, out_nd))
    return drop


@numba.njit(cache=True)
def _arg_jit(data, axis, keepdims, select_last_index, want_max):
    x = np.ascontiguousarray(data)
    nd = x.ndim
    ax = axis % nd
    outer = 1
    inner = 1
    for i in range(nd):
        if i < ax:
            outer *= x.shape[i]
        elif i > ax:
            inner *= x.shape[i]
    res = _arg_core(x.ravel(), outer, x.shape[ax], inner, want_max, select_last_index != 0)
    return _keep_or_drop(res, x.shape, ax, keepdims)


@numba.njit(cache=True)
def argmax_jit(data, axis, keepdims, select_last_index):
    """nopython ArgMax (opset 12); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, select_last_index, True)


@numba.njit(cache=True)
def argmin_jit(data, axis, keepdims, select_last_index):
    """nopython ArgMin (opset 12); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, select_last_index, False)


@numba.njit(cache=True)
def argmax_v1_jit(data, axis, keepdims):
    """nopython ArgMax (opset 1); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, 0, True)


@numba.njit(cache=True)
def argmin_v1_jit(data, axis, keepdims):
    """nopython ArgMin (opset 1); ``keepdims`` must be a compile-time constant."""
    numba.literally(keepdims)
    return _arg_jit(data, axis, keepdims, 0, False)


@onnx_op("ArgMax", inputs=("data",), attributes={"axis": 0, "keepdims": 1}, outputs=("reduced",),
         jit=argmax_v1_jit)
def argmax_v1(data, *, axis=0, keepdims=1):
    """Indices of the maxima along ``axis`` (first occurrence), as int64."""
    return (_argreduce(data, axis, keepdims, 0, True),)


@onnx_op("ArgMax", inputs=("data",), attributes={"axis": 0, "keepdims": 1, "select_last_index": 0},
         outputs=("reduced",), since=12, jit=argmax_jit)
def argmax(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the maxima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, True),)


@onnx_op("ArgMin", inputs=("data",), attributes={"axis": 0, "keepdims": 1}, outputs=("reduced",),
         jit=argmin_v1_jit)
def argmin_v1(data, *, axis=0, keepdims=1):
    """Indices of the minima along ``axis`` (first occurrence), as int64."""
    return (_argreduce(data, axis, keepdims, 0, False),)


@onnx_op("ArgMin", inputs=("data",), attributes={"axis": 0, "keepdims": 1, "select_last_index": 0},
         outputs=("reduced",), since=12, jit=argmin_jit)
def argmin(data, *, axis=0, keepdims=1, select_last_index=0):
    """Indices of the minima along ``axis`` (the last one among ties if select_last_index)."""
    return (_argreduce(data, axis, keepdims, select_last_index, False),)


# ---------------------------------------------------------------- CumSum


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
            src = x[k:k + inner]
            dst = out[k:k + inner]
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


@onnx_op("CumSum", inputs=("x", "axis"), attributes={"exclusive": 0, "reverse": 0},
         since=11, jit=cumsum_jit)
def cumsum(x, axis, *, exclusive=0, reverse=0):
    """Cumulative sum along ``axis`` (an input), optionally exclusive and/or reversed."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise MDFError("CumSum: x must have rank >= 1")
    ax = _axis(axis, a.ndim, "CumSum")
    outer, n, inner = _split3(a.shape, ax)
    res = _cumsum_core(np.ascontiguousarray(a).reshape(-1), outer, n, inner,
                       bool(exclusive), bool(reverse))
    return (res.reshape(a.shape),)


# ---------------------------------------------------------------- TopK


@numba.njit(cache=True)
def _topk_core(x2, k, largest):
    """Top ``k`` of each row, sorted, equal values by lower index first. Small ``k``: one pass
    with an insertion-sorted buffer; otherwise a stable sort of the row."""
    rows, n = x2.shape
    vals = np.empty((rows, k), dtype=x2.dtype)
    idx = np.empty((rows, k), dtype=np.int64)
    if k == 0:
        return vals, idx
    if k <= 16 and k * 8 < n:
        for r in range(rows):
            row = x2[r]
            bv = vals[r]
            bi = idx[r]
            cnt = 0
            for j in range(n):
                v = row[j]
                if cnt == k:
                    w = bv[k - 1]
                    if not ((v > w) if largest else (v < w)):
                        continue
                    p = k - 1
                else:
                    p = cnt
                    cnt += 1
                # shift worse entries right; equal values stay ahead (lower index first)
                while p > 0 and ((v > bv[p - 1]) if largest else (v < bv[p - 1])):
                    bv[p] = bv[p - 1]
                    bi[p] = bi[p - 1]
                    p -= 1
                bv[p] = v
                bi[p] = j
        return vals, idx
    for r in range(rows):
        row = x2[r]
        if largest:
            # stable ascending sort of the reversed row, read backwards: descending values,
            # ties in increasing original index
            order = np.argsort(row[::-1], kind="mergesort")
            for t in range(k):
                j = n - 1 - order[n - 1 - t]
                idx[r, t] = j
                vals[r, t] = row[j]
        else:
            order = np.argsort(row, kind="mergesort")
            for t in range(k):
                idx[r, t] = order[t]
                vals[r, t] = row[order[t]]
    return vals, idx


def _topk(X: Any, k: int, axis: int, largest: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(X)
    ax = _axis(axis, x.ndim, "TopK")
    n = x.shape[ax]
    if not 0 <= k <= n:
        raise MDFError(f"TopK: K must be between 0 and the axis length {n}, got {k}")
    moved = np.moveaxis(x, ax, -1)
    x2 = np.ascontiguousarray(moved).reshape(-1, n)
    vals, idx = _topk_core(x2, k, bool(largest))
    shape = moved.shape[:-1] + (k,)
    vals = np.moveaxis(vals.reshape(shape), -1, ax)
    idx = np.moveaxis(idx.reshape(shape), -1, ax)
    return np.ascontiguousarray(vals), np.ascontiguousarray(idx)


@onnx_op("TopK", inputs=("X",), attributes={"axis": -1, "k": None}, outputs=("Values", "Indices"))
def topk_v1(X, *, axis=-1, k=None):
    """The ``k`` largest elements along ``axis`` (``k`` an attribute, opset 1)."""
    if k is None:
        raise MDFError("TopK (opset 1) needs the attribute 'k'")
    return _topk(X, int(k), axis, 1)


@onnx_op("TopK", inputs=("X", "K"), attributes={"axis": -1}, outputs=("Values", "Indices"),
         since=10)
def topk_v10(X, K, *, axis=-1):
    """The ``K`` largest elements along ``axis``, sorted, ties by lower index."""
    return _topk(X, int(np.asarray(K).reshape(-1)[0]), axis, 1)


@onnx_op("TopK", inputs=("X", "K"), attributes={"axis": -1, "largest": 1, "sorted": 1},
         outputs=("Values", "Indices"), since=11)
def topk(X, K, *, axis=-1, largest=1, sorted=1):
    """The ``K`` largest (or smallest) elements along ``axis``; always returned sorted (allowed
    for ``sorted=0``), equal values ordered by lower index first."""
    return _topk(X, int(np.asarray(K).reshape(-1)[0]), axis, largest)
