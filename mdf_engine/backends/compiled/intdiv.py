"""Where an integer meets a float64 in generated code: integer ``//``, ``%`` and ``**``,
comparisons of an integer and a float, conditionals with a float branch, each the
interpreter's exact answer or a stop (docs/compiled.md, "Integers beyond 2**53").

On the interpreted backend ``k // n`` and ``k % n`` of two integers are Python integers, or
numpy's float64 ``inf``/``nan`` when ``n`` is 0 (docs/semantics.md, "One numeric semantics").
Numba needs one type per expression, so generated code writes them two ways
(``expressions/source.py`` chooses):

- ``_ifloordiv``/``_imod`` (inside a larger expression, or a divisor that is a nonzero
  literal): an int64, so ``(k % 7) * k`` or ``t + k // 3`` (``t`` an int64 array) stay exact
  integers as on the interpreted backend. A zero divisor, where the interpreter's answer turns
  into a float, stops the run (``err`` -8); ``-2**63 // -1`` is an integer overflow (-5).
- ``_floordiv``/``_mod`` (the whole expression, with a divisor that may be 0): a float64,
  numpy's answer at 0; the quotient is exact in a float64 up to 2**53, beyond it the run
  stops (``err`` -7) where the float would round it.

``a ** b`` of two integers is exact on the interpreted backend while the result fits in 62
bits (and ``b >= 0``), else a float64. ``_ipow`` (the whole expression) is a float64, and an
exact result beyond 2**53 stops the run (-7); ``_iipow`` (inside an expression, or a
nonnegative literal exponent) is an int64, and a result the interpreter gives as a float
stops it (-8).

``_i53(x, ...)`` is ``x``, stopping the run (-7) when it is an integer beyond 2**53: a branch
of ``a if c else b`` whose other branch may be a float (Numba makes both one type, a float64;
the interpreter keeps the integer), unless that branch is an integer literal.

``_clt`` ... ``_cne`` (``<`` ... ``!=``) of an integer scalar and a float scalar compare in
float64, which is Python's exact answer unless the integer, beyond 2**53, rounds to the float
without being equal to it (rounding is monotonic): that stops the run (-7, :func:`inexact_pair`,
which ``pybuiltins._pywon`` calls too). Arrays compare as numpy does, on both backends.

Operands that are not two integers (arrays, floats) take numpy's and Python's own ``//``,
``%``, ``**`` and comparisons in every form. Every helper takes the field number ``k``, the
step and the ``err`` row (``runtime.ERR_WIDTH``): a stop names the field and the step, and
``runtime.reported_error`` makes it a ``KindChanged`` (the run is handed to the interpreted
backend: ``handback.py``). :func:`beyond53` records -7 for ``pybuiltins._pywon`` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``err[0]`` of an integer held as a float beyond 2**53, and of an integer operation whose
#: answer is a float on the interpreter (by zero, a negative or too large power) where the
#: compiled code holds an int64 (field number and step in ``err[1:3]``)
BEYOND_53, INT_BY_ZERO = -7, -8
#: 2**53: float64 holds every integer up to it exactly
TWO53 = 9007199254740992


def _make() -> tuple[Any, Any, Any, Any, Any]:
    from numba import njit, types
    from numba.extending import overload

    i64_min = np.int64(-(2**63))

    @njit
    def beyond53(v, k, step, err):
        """Whether the integer ``v`` is beyond 2**53 (then err -7, if no error yet)."""
        if v > TWO53 or v < -TWO53:
            if err[0] == 0:
                err[0] = BEYOND_53
                err[1] = k
                err[2] = step
            return True
        return False

    @njit
    def _stop(code, k, step, err):
        if err[0] == 0:
            err[0] = code
            err[1] = k
            err[2] = step

    def _floordiv(a, b, k, step, err):  # pragma: no cover - replaced by the overloads
        return a // b

    def _mod(a, b, k, step, err):  # pragma: no cover
        return a % b

    def _ifloordiv(a, b, k, step, err):  # pragma: no cover
        return a // b

    def _imod(a, b, k, step, err):  # pragma: no cover
        return a % b

    def _pair(a, b):
        return isinstance(a, types.Integer) and isinstance(b, types.Integer)

    def _plain(floor: bool):
        if floor:
            return lambda a, b, k, step, err: a // b
        return lambda a, b, k, step, err: a % b

    @overload(_floordiv)
    def _floordiv_ov(a, b, k, step, err):
        if not _pair(a, b):
            return _plain(True)

        def float_floordiv(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if y == 0:  # numpy's float64 answer (inf, -inf or nan), as interpreted
                return np.floor_divide(np.float64(x), np.float64(y))
            if x == i64_min and y == -1:
                _stop(-5, k, step, err)
                return 0.0
            q = x // y
            beyond53(q, k, step, err)
            return np.float64(q)

        return float_floordiv

    @overload(_mod)
    def _mod_ov(a, b, k, step, err):
        if not _pair(a, b):
            return _plain(False)

        def float_mod(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if y == 0:
                return np.float64(np.nan)
            r = x % y if y != -1 else np.int64(0)
            beyond53(r, k, step, err)
            return np.float64(r)

        return float_mod

    @overload(_ifloordiv)
    def _ifloordiv_ov(a, b, k, step, err):
        if not _pair(a, b):
            return _plain(True)

        def int_floordiv(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if y == 0:
                _stop(INT_BY_ZERO, k, step, err)
                return np.int64(0)
            if x == i64_min and y == -1:
                _stop(-5, k, step, err)
                return np.int64(0)
            return x // y

        return int_floordiv

    @overload(_imod)
    def _imod_ov(a, b, k, step, err):
        if not _pair(a, b):
            return _plain(False)

        def int_mod(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if y == 0:
                _stop(INT_BY_ZERO, k, step, err)
                return np.int64(0)
            if y == -1:
                return np.int64(0)
            return x % y

        return int_mod

    def _ipow(a, b, k, step, err):  # pragma: no cover
        return a**b

    @overload(_ipow)
    def _ipow_ov(a, b, k, step, err):
        if not _pair(a, b):
            return lambda a, b, k, step, err: a**b

        def ipow(a, b, k, step, err):
            # as the interpreted backend: exact while the result fits in 62 bits, else
            # float64; a float64 either way here, so an exact result beyond 2**53 stops
            x, y = np.int64(a), np.int64(b)
            if y < 0:
                return np.float64(x) ** np.float64(y)
            ax = -x if x < 0 else x
            bits, t = 0, ax
            while t > 0:
                bits += 1
                t >>= 1
            if ax <= 1 or y * bits <= 62:
                p = x**y
                beyond53(p, k, step, err)
                return np.float64(p)
            return np.float64(x) ** np.float64(y)

        return ipow

    def _iipow(a, b, k, step, err):  # pragma: no cover
        return a**b

    @overload(_iipow)
    def _iipow_ov(a, b, k, step, err):
        if not _pair(a, b):
            return lambda a, b, k, step, err: a**b

        def int_pow(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            ax = -x if x < 0 else x
            bits, t = 0, ax
            while t > 0:
                bits += 1
                t >>= 1
            if y < 0 or not (ax <= 1 or y * bits <= 62):  # (a float on the interpreter)
                _stop(INT_BY_ZERO, k, step, err)
                return np.int64(0)
            return x**y

        return int_pow

    @njit
    def inexact_pair(i, f, k, step, err):
        """Whether comparing the integer ``i`` with the float ``f`` in float64 may differ from
        Python's exact comparison (then err -7, if no error yet). Rounding is monotonic, so
        the float64 test differs only where ``i`` rounds to ``f`` without being equal to it."""
        if (i > TWO53 or i < -TWO53) and np.float64(i) == f:
            if f >= 9.223372036854775808e18 or np.int64(f) != i:
                return beyond53(i, k, step, err)
        return False

    def _compare(name: str, plain: Any) -> Any:
        def stub(a, b, k, step, err):  # pragma: no cover
            return plain(a, b)

        stub.__name__ = name

        @overload(stub)
        def ov(a, b, k, step, err):
            int_float = isinstance(a, types.Integer) and isinstance(b, types.Float)
            float_int = isinstance(a, types.Float) and isinstance(b, types.Integer)
            if int_float:

                def guarded_if(a, b, k, step, err):
                    inexact_pair(a, b, k, step, err)
                    return plain(a, b)

                return guarded_if
            if float_int:

                def guarded_fi(a, b, k, step, err):
                    inexact_pair(b, a, k, step, err)
                    return plain(a, b)

                return guarded_fi
            return lambda a, b, k, step, err: plain(a, b)

        return stub

    def _i53(x, k, step, err):  # pragma: no cover
        return x

    @overload(_i53)
    def _i53_ov(x, k, step, err):
        if isinstance(x, types.Integer):

            def guarded(x, k, step, err):
                beyond53(x, k, step, err)
                return x

            return guarded
        return lambda x, k, step, err: x

    ops = {
        "_clt": lambda a, b: a < b,
        "_cle": lambda a, b: a <= b,
        "_cgt": lambda a, b: a > b,
        "_cge": lambda a, b: a >= b,
        "_ceq": lambda a, b: a == b,
        "_cne": lambda a, b: a != b,
    }
    compares = {name: _compare(name, njit(f)) for name, f in ops.items()}
    made = {
        "_ifloordiv": _ifloordiv,
        "_imod": _imod,
        "_ipow": _ipow,
        "_iipow": _iipow,
        "_i53": _i53,
    }
    made.update(_floordiv=_floordiv, _mod=_mod, **compares)
    return beyond53, inexact_pair, made


#: the helpers of this module that generated code imports (``helpers.HELPERS`` lists them)
beyond53, inexact_pair, HELPERS = _make()
