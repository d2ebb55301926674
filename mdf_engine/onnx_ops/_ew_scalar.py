"""Scalar operations of the elementwise kernels, specialised by type when Numba compiles them:
true/integer division, Pow (integer powers exactly), Python-style and C-style Mod (integer modulo
by zero gives 0, as ONNX's reference does), and the arithmetic (``arith_op``) and comparison
(``compare_op``) dispatch on an op code of :mod:`._ew_codes`."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ._ew_codes import (
    ADD,
    AND,
    DIV,
    EQ,
    GE,
    GT,
    LE,
    LT,
    MAX,
    MIN,
    MOD_C,
    MOD_PY,
    MUL,
    OR,
    POW,
    SUB,
)


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
def arith_op(code, x, y, one):
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
def compare_op(code, x, y):
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
