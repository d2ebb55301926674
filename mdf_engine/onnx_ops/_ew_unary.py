"""Unary and along-an-axis loops of the elementwise kernels: ``unary_core`` (float math and the
activations, three float parameters), ``unary_int_core`` (the unary ops defined on integers),
``classify_core`` (IsNaN/IsInf), ``axis_core`` (Softmax/LogSoftmax/Hardmax over the middle axis of
an (outer, n, inner) view; the Softmax family's twins are in ``_jitb_axis``), and the nopython
entry point ``unary_nb``."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._ew_codes import (
    ABS,
    ACOS,
    ACOSH,
    ASIN,
    ASINH,
    ATAN,
    ATANH,
    CEIL,
    CELU,
    CLIP,
    COS,
    COSH,
    ELU,
    ERF,
    EXP,
    FLOOR,
    HARDMAX,
    HSIGMOID,
    LEAKY,
    LOG,
    NEG,
    RECIP,
    RELU,
    ROUND,
    SELU,
    SHRINK,
    SIGMOID,
    SIGN,
    SIN,
    SINH,
    SOFTMAX,
    SOFTPLUS,
    SOFTSIGN,
    SQRT,
    TAN,
    TANH,
    THRELU,
)

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


@njit(cache=True)
def unary_nb(code, X, p1, p2, p3):
    """Float unary op on a whole array (result in X's float dtype)."""
    x = np.asarray(X)
    out = np.empty(x.shape, x.dtype)
    unary_core(code, np.ascontiguousarray(x).reshape(-1), out.reshape(-1), p1, p2, p3)
    return out
