"""Numba kernels shared by the elementwise ONNX families (arithmetic, logic, activations, variadic).

One generic loop per family, dispatched by a small integer op code, keeps the number of compiled
specializations small (float64, float32, int64, uint64 and bool only):

* ``arith_core``   binary arithmetic (Add Sub Mul Div Pow Mod Max Min PRelu) with broadcasting;
* ``compare_core`` comparisons and boolean logic (output bool) with broadcasting;
* ``shift_core``   BitShift on int64/uint64 with the width of the original dtype;
* ``unary_core``   float unary math and activations (three float parameters);
* ``unary_int_core`` the unary ops that are defined on integers (Abs Neg Sign Relu Clip ...);
* ``axis_core``    Softmax/LogSoftmax/Hardmax over the middle axis of an (outer, n, inner) view;
* ``where_core``   Where with three-way broadcasting.

Broadcast operands are passed flat (1-D, C-contiguous) with ``shape`` (of the output) and element
strides per operand (0 along broadcast dimensions); equal-size operands and size-1 operands take
fast linear paths and need no shape information (pass empty arrays). The ``*_nb`` functions are
nopython entry points taking whole arrays (any rank, or scalars) for the compiled MDF backend.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

# ---- op codes --------------------------------------------------------------------------------
ADD, SUB, MUL, DIV, POW, MOD_PY, MOD_C, MAX, MIN, PRELU = range(10)
EQ, GT, LT, GE, LE, AND, OR, XOR = range(8)
(
    ABS,
    NEG,
    RECIP,
    SQRT,
    EXP,
    LOG,
    SIN,
    COS,
    TAN,
    ASIN,
    ACOS,
    ATAN,
    SINH,
    COSH,
    TANH,
    ASINH,
    ACOSH,
    ATANH,
    ERF,
    CEIL,
    FLOOR,
    ROUND,
    SIGN,
    RELU,
    LEAKY,
    ELU,
    SELU,
    CELU,
    SIGMOID,
    HSIGMOID,
    SOFTPLUS,
    SOFTSIGN,
    THRELU,
    SHRINK,
    CLIP,
    IDENT,
) = range(36)
SOFTMAX, LOGSOFTMAX, HARDMAX = range(3)

# ---- scalar helpers specialised by type at compile time -----------------------------------------


def _div(x, y):  # pragma: no cover - replaced by the overload in nopython code
    raise NotImplementedError


def _pow(x, y, one):  # pragma: no cover
    raise NotImplementedError


def _mod_py(x, y):  # pragma: no cover
    raise NotImplementedError


def _mod_c(x, y):  # pragma: no cover
    raise NotImplementedError


@overload(_div)
def _div_ov(x, y):
    """Float: true division. Signed int: C division truncating toward zero (0 for y == 0).
    Unsigned int: floor division (0 for y == 0)."""
    if isinstance(x, types.Float):
        return lambda x, y: x / y
    if isinstance(x, types.Integer) and x.signed:

        def impl(x, y):
            if y == 0:
                return x - x
            q = x // y
            if q * y != x and ((x < 0) != (y < 0)):
                q += 1
            return q

        return impl
    if isinstance(x, types.Integer):

        def impl_u(x, y):
            if y == 0:
                return x - x
            return x // y

        return impl_u
    return None


@overload(_pow)
def _pow_ov(x, y, one):
    """Float: x**y. Integers: exact repeated squaring (negative exponents give 1/x^k truncated);
    ``one`` is 1 in x's type (keeps uint64 arithmetic in uint64)."""
    if isinstance(x, types.Float):
        return lambda x, y, one: x**y
    if isinstance(x, types.Integer):

        def impl(x, y, one):
            if y < 0:
                if x == 1:
                    return one
                if x == -1:
                    return one if (y % 2) == 0 else x
                return x - x
            r = one
            b = x
            e = y
            while e > 0:
                if e & 1:
                    r = r * b
                b = b * b
                e = e >> 1
            return r

        return impl
    return None


@overload(_mod_py)
def _mod_py_ov(x, y):
    """Remainder with the sign of the divisor (Python/numpy ``%``); int y == 0 gives 0."""
    if isinstance(x, types.Float):

        def impl_f(x, y):
            if y == 0 or x != x or y != y or math.isinf(x):
                return math.nan
            r = np.fmod(x, y)
            if r != 0:
                if (r < 0) != (y < 0):
                    r = r + y
            else:
                r = math.copysign(0.0, y)
            return r

        return impl_f
    if isinstance(x, types.Integer):

        def impl_i(x, y):
            if y == 0:
                return x - x
            return x % y

        return impl_i
    return None


@overload(_mod_c)
def _mod_c_ov(x, y):
    """C ``fmod``: remainder with the sign of the dividend; int y == 0 gives 0."""
    if isinstance(x, types.Float):
        return lambda x, y: np.fmod(x, y)
    if isinstance(x, types.Integer) and x.signed:

        def impl_i(x, y):
            if y == 0:
                return x - x
            r = x % y
            if r != 0 and ((r < 0) != (x < 0)):
                r = r - y
            return r

        return impl_i
    if isinstance(x, types.Integer):

        def impl_u(x, y):
            if y == 0:
                return x - x
            return x % y

        return impl_u
    return None


@njit(cache=True)
def _aop(code, x, y, one):
    if code == ADD:
        return x + y
    elif code == SUB:
        return x - y
    elif code == MUL:
        return x * y
    elif code == DIV:
        return _div(x, y)
    elif code == POW:
        return _pow(x, y, one)
    elif code == MOD_PY:
        return _mod_py(x, y)
    elif code == MOD_C:
        return _mod_c(x, y)
    elif code == MAX:
        return x if (x >= y or x != x) else y
    elif code == MIN:
        return x if (x <= y or x != x) else y
    else:  # PRELU
        return x if x >= 0 else x * y


@njit(cache=True)
def _cop(code, x, y):
    if code == EQ:
        return x == y
    elif code == GT:
        return x > y
    elif code == LT:
        return x < y
    elif code == GE:
        return x >= y
    elif code == LE:
        return x <= y
    elif code == AND:
        return (x != 0) and (y != 0)
    elif code == OR:
        return (x != 0) or (y != 0)
    else:  # XOR
        return (x != 0) != (y != 0)


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
            out[k] = _aop(code, a[k], b[k], one)
        return
    for _ in range(rows):
        for k in range(inner):
            out[o + k] = _aop(code, a[ia + k * sai], b[ib + k * sbi], one)
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
            out[k] = _cop(code, a[k], b[k])
        return
    idx = np.zeros(max(shape.size, 1), np.int64)
    ia = 0
    ib = 0
    o = 0
    for _ in range(rows):
        for k in range(inner):
            out[o + k] = _cop(code, a[ia + k * sai], b[ib + k * sbi])
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


# ---- unary loops ----------------------------------------------------------------------------


@njit(cache=True)
def _round_half_even(x):
    r = math.floor(x)
    d = x - r
    if d > 0.5:
        return r + 1.0
    if d == 0.5:
        return r + 1.0 if (r - 2.0 * math.floor(r * 0.5)) != 0.0 else r
    return r


@njit(cache=True)
def _uop(code, x, p1, p2, p3):
    if code == ABS:
        return abs(x)
    elif code == NEG:
        return -x
    elif code == RECIP:
        return 1.0 / x
    elif code == SQRT:
        return math.sqrt(x) if x >= 0 else math.nan
    elif code == EXP:
        return math.exp(x)
    elif code == LOG:
        if x > 0:
            return math.log(x)
        return -math.inf if x == 0 else math.nan
    elif code == SIN:
        return math.sin(x)
    elif code == COS:
        return math.cos(x)
    elif code == TAN:
        return math.tan(x)
    elif code == ASIN:
        return math.asin(x) if -1.0 <= x <= 1.0 else math.nan
    elif code == ACOS:
        return math.acos(x) if -1.0 <= x <= 1.0 else math.nan
    elif code == ATAN:
        return math.atan(x)
    elif code == SINH:
        return math.sinh(x)
    elif code == COSH:
        return math.cosh(x)
    elif code == TANH:
        return math.tanh(x)
    elif code == ASINH:
        return math.asinh(x)
    elif code == ACOSH:
        return math.acosh(x) if x >= 1.0 else math.nan
    elif code == ATANH:
        if -1.0 < x < 1.0:
            return math.atanh(x)
        if x == 1.0:
            return math.inf
        if x == -1.0:
            return -math.inf
        return math.nan
    elif code == ERF:
        return math.erf(x)
    elif code == CEIL:
        return math.ceil(x) if math.isfinite(x) else x
    elif code == FLOOR:
        return math.floor(x) if math.isfinite(x) else x
    elif code == ROUND:
        return _round_half_even(x) if math.isfinite(x) else x
    elif code == SIGN:
        if x > 0:
            return 1.0
        if x < 0:
            return -1.0
        return x * 0.0
    elif code == RELU:
        return x if x > 0 else x * 0.0
    elif code == LEAKY:
        return x if x >= 0 else p1 * x
    elif code == ELU:
        return x if x >= 0 else p1 * (math.exp(x) - 1.0)
    elif code == SELU:
        return p2 * x if x > 0 else p2 * (p1 * math.exp(x) - p1)
    elif code == CELU:
        return max(0.0, x) + min(0.0, p1 * (math.exp(x / p1) - 1.0))
    elif code == SIGMOID:
        if x >= 0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
    elif code == HSIGMOID:
        return max(0.0, min(1.0, p1 * x + p2))
    elif code == SOFTPLUS:
        if x > 0:
            return x + math.log1p(math.exp(-x))
        return math.log1p(math.exp(x))
    elif code == SOFTSIGN:
        return x / (1.0 + abs(x))
    elif code == THRELU:
        return x if x > p1 else 0.0
    elif code == SHRINK:
        if x < -p2:
            return x + p1
        if x > p2:
            return x - p1
        return 0.0
    elif code == CLIP:
        v = x if x >= p1 else p1
        return v if v <= p2 else p2
    else:  # IDENT
        return x


@njit(cache=True)
def unary_core(code, x, out, p1, p2, p3):
    """out = f_code(x; p1, p2, p3) over flat float arrays (computed in the input's precision
    where the math library allows, stored in out's dtype)."""
    # frequent ops get their own loop with a constant code (see arith_core)
    if code == RELU:
        _unary_loop(RELU, x, out, p1, p2, p3)
    elif code == SIGMOID:
        _unary_loop(SIGMOID, x, out, p1, p2, p3)
    elif code == TANH:
        _unary_loop(TANH, x, out, p1, p2, p3)
    elif code == EXP:
        _unary_loop(EXP, x, out, p1, p2, p3)
    elif code == LOG:
        _unary_loop(LOG, x, out, p1, p2, p3)
    elif code == SQRT:
        _unary_loop(SQRT, x, out, p1, p2, p3)
    elif code == ABS:
        _unary_loop(ABS, x, out, p1, p2, p3)
    elif code == NEG:
        _unary_loop(NEG, x, out, p1, p2, p3)
    elif code == LEAKY:
        _unary_loop(LEAKY, x, out, p1, p2, p3)
    elif code == CLIP:
        _unary_loop(CLIP, x, out, p1, p2, p3)
    else:
        _unary_loop(code, x, out, p1, p2, p3)


@njit(cache=True, inline="always")
def _unary_loop(code, x, out, p1, p2, p3):
    for i in range(x.size):
        out[i] = _uop(code, x[i], p1, p2, p3)


@njit(cache=True)
def _uiop(code, x, p1, p2, one):
    if code == ABS:
        return x if x >= 0 else (x - x) - x
    elif code == NEG:
        return (x - x) - x
    elif code == SIGN:
        if x > 0:
            return one
        if x < 0:
            return x - x - one
        return x - x
    elif code == RELU:
        return x if x > 0 else x - x
    elif code == CLIP:
        v = x if x >= p1 else p1
        return v if v <= p2 else p2
    elif code == SHRINK:
        if x < (p2 - p2) - p2:
            return x + p1
        if x > p2:
            return x - p1
        return x - x
    else:  # CEIL FLOOR ROUND IDENT: integers are already integral
        return x


@njit(cache=True)
def unary_int_core(code, x, out, p1, p2):
    """Integer unary ops (Abs Neg Sign Relu Clip Shrink; Ceil/Floor/Round are identities);
    p1, p2 are bounds/bias/lambd already in x's integer dtype."""
    one = np.ones(1, out.dtype)[0]
    for i in range(x.size):
        out[i] = _uiop(code, x[i], p1, p2, one)


@njit(cache=True)
def classify_core(x, out, nan, pos, neg):
    """out[i] = isnan(x[i]) if nan else (x[i] == +inf and pos) or (x[i] == -inf and neg)."""
    for i in range(x.size):
        v = x[i]
        if nan:
            out[i] = v != v
        else:
            out[i] = (pos and v == math.inf) or (neg and v == -math.inf)


# ---- axis ops -------------------------------------------------------------------------------


@njit(cache=True)
def axis_core(code, x, out, outer, n, inner):
    """Softmax / LogSoftmax / Hardmax of x seen as (outer, n, inner) along the middle axis."""
    for o in range(outer):
        base = o * n * inner
        for j in range(inner):
            m = x[base + j]
            arg = 0
            for k in range(1, n):
                v = x[base + k * inner + j]
                if v > m or (v != v and m == m):
                    m = v
                    arg = k
            if code == HARDMAX:
                for k in range(n):
                    out[base + k * inner + j] = 1.0 if k == arg else 0.0
                continue
            s = 0.0
            for k in range(n):
                s += math.exp(x[base + k * inner + j] - m)
            if code == SOFTMAX:
                for k in range(n):
                    out[base + k * inner + j] = math.exp(x[base + k * inner + j] - m) / s
            else:
                ls = math.log(s)
                for k in range(n):
                    out[base + k * inner + j] = x[base + k * inner + j] - m - ls


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


@njit(cache=True)
def arith_nb(code, A, B):
    """Broadcasting binary arithmetic on whole arrays (result in A's dtype)."""
    a = np.asarray(A)
    b = np.asarray(B)
    shape = bshape_nb(a.shape, b.shape)
    out = np.empty(shape, a.dtype)
    arith_core(
        code,
        np.ascontiguousarray(a).reshape(-1),
        np.ascontiguousarray(b).astype(a.dtype).reshape(-1),
        out.reshape(-1),
        shape_array_nb(shape),
        bstrides_nb(a.shape, shape),
        bstrides_nb(b.shape, shape),
    )
    return out


@njit(cache=True)
def compare_nb(code, A, B):
    """Broadcasting comparison/logic on whole arrays (bool result)."""
    a = np.asarray(A)
    b = np.asarray(B)
    shape = bshape_nb(a.shape, b.shape)
    out = np.empty(shape, np.bool_)
    compare_core(
        code,
        np.ascontiguousarray(a).reshape(-1),
        np.ascontiguousarray(b).reshape(-1),
        out.reshape(-1),
        shape_array_nb(shape),
        bstrides_nb(a.shape, shape),
        bstrides_nb(b.shape, shape),
    )
    return out


@njit(cache=True)
def unary_nb(code, X, p1, p2, p3):
    """Float unary op on a whole array (result in X's float dtype)."""
    x = np.asarray(X)
    out = np.empty(x.shape, x.dtype)
    unary_core(code, np.ascontiguousarray(x).reshape(-1), out.reshape(-1), p1, p2, p3)
    return out


@njit(cache=True)
def axis_nb(code, X, axis, coerce_2d):
    """Softmax-family op along ``axis`` (per axis, or over the trailing block when coerce_2d)."""
    x = np.ascontiguousarray(np.asarray(X))
    nd = x.ndim
    ax = axis + nd if axis < 0 else axis
    outer = 1
    for d in range(ax):
        outer *= x.shape[d]
    n = 1
    inner = 1
    if coerce_2d:
        for d in range(ax, nd):
            n *= x.shape[d]
    else:
        n = x.shape[ax]
        for d in range(ax + 1, nd):
            inner *= x.shape[d]
    out = np.empty(x.shape, x.dtype)
    axis_core(code, x.reshape(-1), out.reshape(-1), outer, n, inner)
    return out


# ---- jit= entries: plain functions that compile inline into nopython callers -------------------


_NB_NAMES: set[str] = set()


def jit_entry(nb, name: str, kernel, n_inputs: int | None):
    """A function named ``name`` for the registry's ``jit=``.

    Called from nopython code it compiles ``nb`` (a plain Python function taking the inputs then
    the attributes positionally) inline into the caller; called from Python it runs the Python
    ``kernel`` (``n_inputs`` positional inputs, the remaining arguments as its attributes, or
    all arguments as inputs when ``n_inputs`` is None) and returns its one output array.

    A Numba ``overload`` rather than one ``njit`` dispatcher per op keeps compilation cheap: a
    compiled model links each shared core above once, however many ops use it.
    """
    import inspect

    # ``nb`` is often a closure made by a factory (one per op, same source line). Numba names
    # the compiled function and its disk-cache file after ``__qualname__`` (+ line), so two ops
    # from one factory got the same symbol and, once cached, a graph calling both (e.g. Selu
    # and HardSigmoid) linked one op's code for the other. A unique, deterministic name per
    # entry point keeps them apart.
    base = f"{name}_nb_{nb.__module__.rsplit('.', 1)[-1]}"
    unique = base
    while unique in _NB_NAMES:
        unique = f"{base}{len(_NB_NAMES)}"
    _NB_NAMES.add(unique)
    nb.__qualname__ = nb.__name__ = unique
    params = list(inspect.signature(nb).parameters.values())
    attr_names = [p.name for p in params][n_inputs or 0 :] if n_inputs is not None else []

    def py(*args):
        if n_inputs is None:
            out = kernel(*args)
        else:
            out = kernel(*args[:n_inputs], **dict(zip(attr_names, args[n_inputs:])))
        return out[0] if isinstance(out, tuple) else out

    sig = ", ".join(str(p) for p in params)
    call = ", ".join(("*" if p.kind == p.VAR_POSITIONAL else "") + p.name for p in params)
    ns: dict = {"_py": py, "_nb": nb}
    exec(f"def {name}({sig}):\n    return _py({call})\n", ns)
    exec(f"def _typer({sig}):\n    return _nb\n", ns)
    entry = ns[name]
    entry.__doc__ = f"nopython-callable form of {getattr(kernel, '__name__', name)}"
    overload(entry, jit_options={"cache": True})(ns["_typer"])
    return entry
