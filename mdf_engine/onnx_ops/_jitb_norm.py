"""The Numba cores of ``onnx::`` InstanceNormalization, MeanVarianceNormalization,
LpNormalization and LRN, and their nopython twins (``jit=``) for the compiled backend.

The Python kernels (:mod:`.normalization`) and the twins take the same steps with the same
cores: the input in its float dtype (float32 for other dtypes), rows ``(R, L)`` of the values
one statistic covers (after moving the reduced axes last: a strided copy, then back), the
result cast to the input's dtype; so the results are equal bit for bit. The twins follow the
``jit_like`` convention (:mod:`._shape_jit`): ``axes``/``axis`` may be values, and the last
argument is an array of the result's warm-up shape (the input's).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._jitb_reduce import kept_first
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import (
    _dims,
    _flat,
    _ints,
    _shaped,
    c_strides,
    check_like,
    norm_axis,
    prod,
    strided_copy,
)


@numba.njit(cache=True)
def standardize_rows(x, eps, scale, bias):
    """``(x - mean) / sqrt(var + eps) * scale[r] + bias[r]`` for each row r of x (R, L)."""
    R, L = x.shape
    y = np.empty_like(x)
    for r in range(R):
        s = 0.0
        for t in range(L):
            s += x[r, t]
        m = s / L
        q = 0.0
        for t in range(L):
            dv = x[r, t] - m
            q += dv * dv
        inv = 1.0 / np.sqrt(q / L + eps)
        a = inv * scale[r]
        for t in range(L):
            y[r, t] = (x[r, t] - m) * a + bias[r]
    return y


@numba.njit(cache=True)
def lp_rows(x, p):
    R, L = x.shape
    y = np.empty_like(x)
    for r in range(R):
        s = 0.0
        for t in range(L):
            s += abs(x[r, t]) if p == 1 else x[r, t] * x[r, t]
        nrm = s if p == 1 else np.sqrt(s)
        for t in range(L):
            y[r, t] = x[r, t] / nrm if nrm > 0 else 0.0
    return y


@numba.njit(cache=True)
def lrn_core(x, alpha, beta, bias, size):
    N, C, L = x.shape
    y = np.empty_like(x)
    lo = (size - 1) // 2
    hi = size - 1 - lo
    for n in range(N):
        for c in range(C):
            c0 = max(0, c - lo)
            c1 = min(C - 1, c + hi)
            for t in range(L):
                s = 0.0
                for cc in range(c0, c1 + 1):
                    v = x[n, cc, t]
                    s += v * v
                y[n, c, t] = x[n, c, t] / (bias + alpha / size * s) ** beta
    return y


def _float_in(x):  # pragma: no cover - replaced by the overload in jitted code
    """A flat array in the dtype the cores compute in: its own float32/float64, else float32."""


@overload(_float_in)
def _float_in_ov(x):
    if x.dtype in (types.float32, types.float64):
        return lambda x: x
    return lambda x: x.astype(np.float32)


@numba.njit(cache=True)
def _param(v, n, op):
    """A per-channel parameter as float64[n] (one value repeated)."""
    a = _flat(v).astype(np.float64)
    if a.size == 1 and n != 1:
        return np.full(n, a[0])
    if a.size != n:
        raise ValueError(op + ": a parameter has not one value per channel")
    return a


@numba.njit(cache=True)
def _moved_last(src, dims, red):
    """``src`` (shape ``dims``) with the dims flagged in ``red`` moved last (in order), as
    rows ``(R, L)``; and the element strides that put such rows back (see :func:`_put_back`)."""
    nd = len(dims)
    perm = kept_first(red)
    x = np.empty(src.size, src.dtype)
    strided_copy(src, 0, dims[perm], c_strides(dims)[perm], x)
    L = 1
    for i in range(nd):
        if red[i]:
            L *= dims[i]
    back = np.empty(nd, np.int64)
    back[perm] = c_strides(dims[perm])
    return x.reshape((src.size // L if L else 0, L)), back


@numba.njit(cache=True)
def _out(y, src, back, dims, like, op):
    """The rows ``y`` in the input's order (``back``: :func:`_moved_last`) and dtype."""
    check_like(dims, like, op + ": " + SHAPE_CHANGED)
    flat = y.reshape(y.size)
    out = np.empty(flat.size, flat.dtype)
    strided_copy(flat, 0, dims, back, out)
    return _shaped(out.astype(src.dtype), like)


@numba.njit(cache=True)
def _axis_flags(axes, nd, op):
    red = np.zeros(nd, np.bool_)
    for a in _ints(axes):
        b = a + nd if a < 0 else a
        if b < 0 or b >= nd:
            raise ValueError(op + ": an axis is out of range")
        red[b] = True
    return red


@numba.njit(cache=True)
def instancenorm_like_jit(input, scale, B, epsilon, like):
    """nopython InstanceNormalization."""
    op = "InstanceNormalization"
    src, dims = _flat(input), _dims(input)
    if len(dims) < 3:
        raise ValueError(op + ": input should be (N, C, D1, ...)")
    N, C = dims[0], dims[1]
    sc, bi = _param(scale, C, op), _param(B, C, op)
    st, bt = np.empty(N * C), np.empty(N * C)
    for n in range(N):
        st[n * C : (n + 1) * C] = sc
        bt[n * C : (n + 1) * C] = bi
    rows = _float_in(src).reshape((N * C, prod(dims[2:])))
    y = standardize_rows(rows, float(epsilon), st, bt)
    check_like(dims, like, op + ": " + SHAPE_CHANGED)
    return _shaped(y.reshape(y.size).astype(src.dtype), like)


@numba.njit(cache=True)
def mvn_like_jit(X, axes, like):
    """nopython MeanVarianceNormalization (``axes`` a constant or a value)."""
    op = "MeanVarianceNormalization"
    src, dims = _flat(X), _dims(X)
    rows, back = _moved_last(_float_in(src), dims, _axis_flags(axes, len(dims), op))
    R = rows.shape[0]
    y = standardize_rows(rows, 0.0, np.ones(R), np.zeros(R))
    return _out(y, src, back, dims, like, op)


@numba.njit(cache=True)
def lpnorm_like_jit(input, axis, p, like):
    """nopython LpNormalization (``axis`` a constant or a value)."""
    op = "LpNormalization"
    if int(p) != 1 and int(p) != 2:
        raise ValueError(op + ": p should be 1 or 2")
    src, dims = _flat(input), _dims(input)
    red = np.zeros(len(dims), np.bool_)
    a = _ints(axis)
    ax = norm_axis(a[0], len(dims)) if len(a) else -1
    if ax < 0:
        raise ValueError(op + ": the axis is out of range")
    red[ax] = True
    rows, back = _moved_last(_float_in(src), dims, red)
    return _out(lp_rows(rows, int(p)), src, back, dims, like, op)


@numba.njit(cache=True)
def lrn_like_jit(X, alpha, beta, bias, size, like):
    """nopython LRN."""
    op = "LRN"
    src, dims = _flat(X), _dims(X)
    if size is None or int(size) < 1:
        raise ValueError(op + ": size should be a positive int")
    if len(dims) < 3:
        raise ValueError(op + ": X should be (N, C, D1, ...)")
    x3 = _float_in(src).reshape((dims[0], dims[1], prod(dims[2:])))
    y = lrn_core(x3, float(alpha), float(beta), float(bias), int(size))
    check_like(dims, like, op + ": " + SHAPE_CHANGED)
    return _shaped(y.reshape(y.size).astype(src.dtype), like)
