"""Broadcasting binary loops of the elementwise kernels: ``arith_core`` (Add Sub Mul Div Pow Mod
Max Min PRelu), ``compare_core`` (comparisons and boolean logic, bool output), ``shift_core``
(BitShift with the width of the original dtype) and ``where_core`` (three-way broadcasting), and
the nopython entry points on whole arrays (``arith_nb``, ``compare_nb`` and the broadcast-shape
helpers) that the compiled MDF backend calls.

Broadcast operands are passed flat (1-D, C-contiguous) with ``shape`` (of the output) and element
strides per operand (0 along broadcast dimensions); equal-size operands and size-1 operands take
fast linear paths and need no shape information (pass empty arrays)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from ._ew_codes import ADD, DIV, EQ, GE, GT, LE, LT, MAX, MIN, MUL, SUB
from ._ew_scalar import arith_op, compare_op

# ---- binary loops ---------------------------------------------------------------------------


@njit(cache=True)
def _advance(idx, shape, sa, sb, ia, ib):
    """Step the multi-index ``idx`` over all but the last dimension; returns the new operand
    offsets (ia, ib)."""
    d = shape.size - 2
    while d >= 0:
        idx[d] += 1
        ia += sa[d]
        ib += sb[d]
        if idx[d] < shape[d]:
            break
        ia -= sa[d] * shape[d]
        ib -= sb[d] * shape[d]
        idx[d] = 0
        d -= 1
    return ia, ib


@njit(cache=True)
def _layout(n, a_size, b_size, shape, sa, sb):
    """(rows, inner, inner stride of a, inner stride of b) of a broadcast loop; with no shape
    given, operands are either full (stride 1) or single elements (stride 0)."""
    if shape.size == 0:
        return 1, n, (1 if a_size == n else 0), (1 if b_size == n else 0)
    inner = shape[shape.size - 1]
    return (n // inner if inner else 0), inner, sa[shape.size - 1], sb[shape.size - 1]


@njit(cache=True)
def arith_core(code, a, b, out, shape, sa, sb):
    """out = a <code> b over flat arrays (see the module docstring for the broadcast layout)."""
    n = out.size
    if n == 0:
        return
    one = np.ones(1, out.dtype)[0]
    rows, inner, sai, sbi = _layout(n, a.size, b.size, shape, sa, sb)
    # one loop per frequent op with the code as a constant: the switch in _aop folds away and
    # the inner loop vectorises (a runtime code kept the switch inside the loop, ~5-10x slower)
    if code == ADD:
        _arith_rows(ADD, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    elif code == SUB:
        _arith_rows(SUB, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    elif code == MUL:
        _arith_rows(MUL, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    elif code == DIV:
        _arith_rows(DIV, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    elif code == MAX:
        _arith_rows(MAX, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    elif code == MIN:
        _arith_rows(MIN, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)
    else:
        _arith_rows(code, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one)


@njit(cache=True, inline="always")
def _arith_rows(code, a, b, out, shape, sa, sb, rows, inner, sai, sbi, one):
    idx = np.zeros(max(shape.size, 1), np.int64)
    ia = 0
    ib = 0
    o = 0
    if rows == 1 and sai == 1 and sbi == 1:  # same shapes: one unit-stride loop
        for k in range(inner):
            out[k] = arith_op(code, a[k], b[k], one)
        return
    for _ in range(rows):
        for k in range(inner):
            out[o + k] = arith_op(code, a[ia + k * sai], b[ib + k * sbi], one)
        o += inner
        if shape.size > 1:
            ia, ib = _advance(idx, shape, sa, sb, ia, ib)


@njit(cache=True)
def compare_core(code, a, b, out, shape, sa, sb):
    """out (bool) = a <code> b over flat arrays; same layout rules as ``arith_core``."""
    n = out.size
    if n == 0:
        return
    rows, inner, sai, sbi = _layout(n, a.size, b.size, shape, sa, sb)
    # constant-code loops for the comparisons (see arith_core)
    if code == EQ:
        _compare_rows(EQ, a, b, out, shape, sa, sb, rows, inner, sai, sbi)
    elif code == LT:
        _compare_rows(LT, a, b, out, shape, sa, sb, rows, inner, sai, sbi)
    elif code == GT:
        _compare_rows(GT, a, b, out, shape, sa, sb, rows, inner, sai, sbi)
    elif code == LE:
        _compare_rows(LE, a, b, out, shape, sa, sb, rows, inner, sai, sbi)
    elif code == GE:
        _compare_rows(GE, a, b, out, shape, sa, sb, rows, inner, sai, sbi)
    else:
        _compare_rows(code, a, b, out, shape, sa, sb, rows, inner, sai, sbi)


@njit(cache=True, inline="always")
def _compare_rows(code, a, b, out, shape, sa, sb, rows, inner, sai, sbi):
    if rows == 1 and sai == 1 and sbi == 1:  # same shapes: one unit-stride loop
        for k in range(inner):
            out[k] = compare_op(code, a[k], b[k])
        return
    idx = np.zeros(max(shape.size, 1), np.int64)
    ia = 0
    ib = 0
    o = 0
    for _ in range(rows):
        for k in range(inner):
            out[o + k] = compare_op(code, a[ia + k * sai], b[ib + k * sbi])
        o += inner
        if shape.size > 1:
            ia, ib = _advance(idx, shape, sa, sb, ia, ib)


@njit(cache=True)
def _shift(x, s, left, width, signed):
    if s < 0 or s >= width:
        if left or not signed or x >= 0:
            return x - x
        return ~(x - x)
    if left:
        return x << s
    return x >> s


@njit(cache=True)
def shift_core(a, b, out, shape, sa, sb, left, width, signed):
    """BitShift of a (int64 or uint64) by b (int64): shifts outside [0, width) give 0 (or -1 for
    a right shift of a negative value); right shifts of signed values are arithmetic. Left
    shifts are not wrapped here: the caller casts to the ``width``-bit dtype."""
    n = out.size
    if n == 0:
        return
    rows, inner, sai, sbi = _layout(n, a.size, b.size, shape, sa, sb)
    idx = np.zeros(max(shape.size, 1), np.int64)
    ia = 0
    ib = 0
    o = 0
    for _ in range(rows):
        for k in range(inner):
            out[o + k] = _shift(a[ia + k * sai], b[ib + k * sbi], left, width, signed)
        o += inner
        if shape.size > 1:
            ia, ib = _advance(idx, shape, sa, sb, ia, ib)


@njit(cache=True)
def where_core(c, x, y, out, shape, sc, sx, sy):
    """out = x where c else y; c bool, all flat with element strides in the output's index
    space (general path only: every operand is read through its strides)."""
    n = out.size
    if c.size == n and x.size == n and y.size == n:
        for i in range(n):
            out[i] = x[i] if c[i] else y[i]
        return
    if n == 0:
        return
    nd = shape.size
    idx = np.zeros(nd, np.int64)
    ic = 0
    ix = 0
    iy = 0
    for o in range(n):
        out[o] = x[ix] if c[ic] else y[iy]
        d = nd - 1
        while d >= 0:
            idx[d] += 1
            ic += sc[d]
            ix += sx[d]
            iy += sy[d]
            if idx[d] < shape[d]:
                break
            ic -= sc[d] * shape[d]
            ix -= sx[d] * shape[d]
            iy -= sy[d] * shape[d]
            idx[d] = 0
            d -= 1


# ---- nopython entry points (whole arrays, any rank) ------------------------------------------


def bshape_nb(sa, sb):  # pragma: no cover - replaced by the overload in nopython code
    """Broadcast shape of two shape tuples (nopython only; np.broadcast_shapes compiles slowly)."""
    raise NotImplementedError


@overload(bshape_nb)
def _bshape_ov(sa, sb):
    nd = max(len(getattr(sa, "types", ())), len(getattr(sb, "types", ())))

    def impl(sa, sb):
        res = np.ones(nd, np.int64)
        for d in range(len(sa)):
            res[nd - len(sa) + d] = sa[d]
        for d in range(len(sb)):
            k = nd - len(sb) + d
            v = sb[d]
            if v != 1:
                if res[k] != 1 and res[k] != v:
                    raise ValueError("shapes cannot be broadcast together")
                res[k] = v
        return to_fixed_tuple(res, nd)

    return impl


@njit(cache=True)
def bstrides_nb(shape, out_shape):
    """Element strides of a C-contiguous array of ``shape`` broadcast to ``out_shape``."""
    nd = len(out_shape)
    res = np.zeros(nd, np.int64)
    pad = nd - len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] != 1:
            res[d + pad] = acc
        acc *= shape[d]
    return res


@njit(cache=True)
def shape_array_nb(shape):
    """A shape tuple as an int64 array."""
    res = np.zeros(len(shape), np.int64)
    for d in range(len(shape)):
        res[d] = shape[d]
    return res


@njit(cache=True, inline="always")
def broadcast_nb(a_shape, b_shape):
    """Two operands broadcast together, as the broadcasting cores take them: ``(shape, dims,
    a_strides, b_strides)``, the result's shape, that shape as an int64 array, and each
    operand's element strides (0 along a broadcast axis) in its C-contiguous flat form."""
    shape = bshape_nb(a_shape, b_shape)
    return shape, shape_array_nb(shape), bstrides_nb(a_shape, shape), bstrides_nb(b_shape, shape)


@njit(cache=True)
def arith_nb(code, A, B):
    """Broadcasting binary arithmetic on whole arrays (result in A's dtype)."""
    a = np.asarray(A)
    b = np.asarray(B)
    shape, dims, sa, sb = broadcast_nb(a.shape, b.shape)
    out = np.empty(shape, a.dtype)
    arith_core(
        code,
        np.ascontiguousarray(a).reshape(-1),
        np.ascontiguousarray(b).astype(a.dtype).reshape(-1),
        out.reshape(-1),
        dims,
        sa,
        sb,
    )
    return out


@njit(cache=True)
def compare_nb(code, A, B):
    """Broadcasting comparison/logic on whole arrays (bool result)."""
    a = np.asarray(A)
    b = np.asarray(B)
    shape, dims, sa, sb = broadcast_nb(a.shape, b.shape)
    out = np.empty(shape, np.bool_)
    compare_core(
        code,
        np.ascontiguousarray(a).reshape(-1),
        np.ascontiguousarray(b).reshape(-1),
        out.reshape(-1),
        dims,
        sa,
        sb,
    )
    return out
