"""Numba helpers that the compiled backend's generated code calls.

``_scalar`` and ``_where`` give numpy's answers on Numba scalars; ``_ix1``/``_ix2``/``_ck``
bounds-check subscripts; ``_fma(a, b, c)`` is ``a * b + c`` rounded once (LLVM's ``fma``:
small matrix products summed as this machine's BLAS sums them, ``small_products``); ``_int``, ``_floordiv``, ``_mod``, ``_ipow`` (``intdiv.py``), ``_iadd``, ``_isub`` and
``_imul`` give integers the semantics of docs/semantics.md ("One numeric semantics"), the same
as the interpreted backend. A failed check writes the ``err`` row of the compiled loop (see
``runtime.ERR_WIDTH``) instead of raising, so that parallel sweeps report it too;
:func:`index_error` turns a bounds failure into the MDFError the user sees. ``_put(dst, src)``
is ``dst[...] = src`` written as loops that compile fast (:mod:`.copies`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from .intdiv import HELPERS as INT_HELPERS
from .sizes import HELPERS as SIZE_HELPERS

#: The helpers generated code imports, each defined (with its Numba overload) in
#: :func:`_make_helpers` and a name of this module; ``module_code`` spells the generated import
#: from this list and ``generated_source.ENGINE_NAMES`` admits it.
HELPERS = tuple(
    "_bscalar _cast _ck _iadd _imul _int _iscalar _isub _ix1 _ix2 _put _scalar _where _fma".split()
) + tuple(INT_HELPERS)  # (integer //, %, ** and comparisons with floats: intdiv.py)
HELPERS += tuple(SIZE_HELPERS)  # (array constructors held to the size bound: sizes.py)


def _make_helpers() -> dict[str, Any]:
    from llvmlite import ir
    from numba import njit, types
    from numba.core.errors import TypingError
    from numba.extending import intrinsic, overload

    def _scalar(x):  # pragma: no cover - replaced by the overload in jitted code
        return float(np.asarray(x))

    def _where(m, a, b):  # pragma: no cover
        return np.where(m, a, b)

    @overload(_scalar)
    def _scalar_ov(x):
        if isinstance(x, types.Boolean):
            return lambda x: 1.0 if x else 0.0
        if isinstance(x, types.Number):
            return lambda x: float(x)
        if isinstance(x, types.Array) and x.ndim == 0:
            return lambda x: float(x[()])
        return None

    def _iscalar(x, k, step, err):  # pragma: no cover
        return np.int64(x)

    def _bscalar(x):  # pragma: no cover
        return bool(x)

    def _number_type(x):
        """The Numba type of a number or of the element of a 0-d array (else None)."""
        if isinstance(x, (types.Number, types.Boolean)):
            return x
        if isinstance(x, types.Array) and x.ndim == 0:
            return x.dtype
        return None

    @njit
    def _whole(v, k, step, err):
        """The int64 of a whole float ``v``; else err -6 (a non-integer for an integer)."""
        if v >= -9.223372036854775808e18 and v < 9.223372036854775808e18 and v == np.floor(v):
            return np.int64(v)
        if err[0] == 0:
            err[0] = -6
            err[1] = k
            err[2] = step
        return np.int64(0)

    @overload(_iscalar)
    def _iscalar_ov(x, k, step, err):
        # an integer number slot: integers and booleans as they are; a float (``//`` of two
        # integers is one here) must be a whole number, else the value's kind changed after
        # the warm-up: err -6 names the field (the interpreted backend would hold a float)
        t = _number_type(x)
        if isinstance(t, (types.Integer, types.Boolean)):
            if isinstance(x, types.Array):
                return lambda x, k, step, err: np.int64(x[()])
            return lambda x, k, step, err: np.int64(x)
        if not isinstance(t, types.Float):
            return None

        if isinstance(x, types.Array):
            return lambda x, k, step, err: _whole(float(x[()]), k, step, err)
        return lambda x, k, step, err: _whole(float(x), k, step, err)

    @overload(_bscalar)
    def _bscalar_ov(x):
        if not isinstance(_number_type(x), types.Boolean):
            raise TypingError(
                f"a {x} value for a boolean number of the model: its kind changed "
                "after the compiled backend's warm-up"
            )
        if isinstance(x, types.Array):
            return lambda x: bool(x[()])
        return lambda x: bool(x)

    @overload(_where)
    def _where_ov(m, a, b):
        scalar = (types.Number, types.Boolean)
        if isinstance(m, scalar) and isinstance(a, types.Boolean) and isinstance(b, types.Boolean):
            return lambda m, a, b: a if m else b
        if isinstance(m, scalar) and isinstance(a, types.Integer) and isinstance(b, types.Integer):
            return lambda m, a, b: np.int64(a) if m else np.int64(b)
        if isinstance(m, scalar) and isinstance(a, scalar) and isinstance(b, scalar):
            return lambda m, a, b: float(a) if m else float(b)
        if isinstance(m, scalar):

            def where_scalar_mask(m, a, b):
                if m:
                    return np.asarray(a) + np.zeros_like(np.asarray(b) * 1.0)
                return np.asarray(b) + np.zeros_like(np.asarray(a) * 1.0)

            return where_scalar_mask
        return lambda m, a, b: np.where(m, a, b)

    def _ix1(x, i, k, step, err):  # pragma: no cover
        return x[i]

    def _ix2(x, i, j, k, step, err):  # pragma: no cover
        return x[i, j]

    def _out_of_bounds(err, k, axis, i, n, step):  # pragma: no cover
        pass

    @overload(_out_of_bounds)
    def _oob_ov(err, k, axis, i, n, step):
        def oob(err, k, axis, i, n, step):
            # the first failure is reported; the node's code goes on with element 0 and the
            # loop returns after the node (a size-0 axis has no element 0: raise)
            if err[0] == 0:
                err[0] = -3
                err[1] = k
                err[2] = step
                err[3] = i
                err[4] = n
                err[5] = axis
            if n == 0:
                raise IndexError(k, axis, i, n, step)

        return oob

    def _ck(i, n, k, axis, step, err):  # pragma: no cover
        return i

    @overload(_ck)
    def _ck_ov(i, n, k, axis, step, err):
        if isinstance(i, types.Integer):

            def ck(i, n, k, axis, step, err):
                if i < -n or i >= n:
                    _out_of_bounds(err, k, axis, i, n, step)
                    return 0
                return i

            return ck
        return None

    def _int(x, k, step, err):  # pragma: no cover
        return int(x)

    @overload(_int)
    def _int_ov(x, k, step, err):
        if isinstance(x, types.Integer):
            return lambda x, k, step, err: np.int64(x)
        if isinstance(x, (types.Float, types.Boolean)):

            def to_int(x, k, step, err):
                v = float(x)
                # int() of NaN, inf or a value beyond int64 is an error on both backends
                if not (v >= -9.223372036854775808e18 and v < 9.223372036854775808e18):
                    if err[0] == 0:
                        err[0] = -4
                        err[1] = k
                        err[2] = step
                    return np.int64(0)
                return np.int64(v)

            return to_int
        if isinstance(x, types.Array) and x.ndim == 0:
            return lambda x, k, step, err: _int(x[()], k, step, err)
        return None

    _I64_MAX = np.int64(2**63 - 1)
    _I64_MIN = np.int64(-(2**63))

    def _int_pair(a, b):
        return isinstance(a, types.Integer) and isinstance(b, types.Integer)

    def _overflow(err, k, step):  # pragma: no cover
        pass

    @overload(_overflow)
    def _overflow_ov(err, k, step):
        def overflow(err, k, step):
            if err[0] == 0:
                err[0] = -5
                err[1] = k
                err[2] = step

        return overflow

    def _iadd(a, b, k, step, err):  # pragma: no cover
        return a + b

    def _isub(a, b, k, step, err):  # pragma: no cover
        return a - b

    def _imul(a, b, k, step, err):  # pragma: no cover
        return a * b

    # the checks below compute nothing that overflows (Numba's wrapped integer results do
    # not support checking after the fact)
    @overload(_iadd)
    def _iadd_ov(a, b, k, step, err):
        if not _int_pair(a, b):
            return lambda a, b, k, step, err: a + b

        def iadd(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if (y > 0 and x > _I64_MAX - y) or (y < 0 and x < _I64_MIN - y):
                _overflow(err, k, step)
                return np.int64(0)
            return x + y

        return iadd

    @overload(_isub)
    def _isub_ov(a, b, k, step, err):
        if not _int_pair(a, b):
            return lambda a, b, k, step, err: a - b

        def isub(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if (y < 0 and x > _I64_MAX + y) or (y > 0 and x < _I64_MIN + y):
                _overflow(err, k, step)
                return np.int64(0)
            return x - y

        return isub

    @overload(_imul)
    def _imul_ov(a, b, k, step, err):
        if not _int_pair(a, b):
            return lambda a, b, k, step, err: a * b

        def imul(a, b, k, step, err):
            x, y = np.int64(a), np.int64(b)
            if x == 0 or y == 0:
                return np.int64(0)
            one = np.uint64(1)
            ux = np.uint64(-(x + 1)) + one if x < 0 else np.uint64(x)
            uy = np.uint64(-(y + 1)) + one if y < 0 else np.uint64(y)
            limit = np.uint64(_I64_MAX) + (one if (x < 0) != (y < 0) else np.uint64(0))
            if ux > limit // uy:
                _overflow(err, k, step)
                return np.int64(0)
            return x * y

        return imul

    @overload(_ix1)
    def _ix1_ov(x, i, k, step, err):
        if isinstance(x, types.Array) and x.ndim >= 1 and isinstance(i, types.Integer):

            def ix1(x, i, k, step, err):
                n = x.shape[0]
                if i < -n or i >= n:
                    _out_of_bounds(err, k, 0, i, n, step)
                    return x[0]
                return x[i]

            return ix1
        return None

    @overload(_ix2)
    def _ix2_ov(x, i, j, k, step, err):
        if (
            isinstance(x, types.Array)
            and x.ndim >= 2
            and isinstance(i, types.Integer)
            and isinstance(j, types.Integer)
        ):

            def ix2(x, i, j, k, step, err):
                n, m = x.shape[0], x.shape[1]
                if i < -n or i >= n:
                    _out_of_bounds(err, k, 0, i, n, step)
                    return x[0, 0]
                if j < -m or j >= m:
                    _out_of_bounds(err, k, 1, j, m, step)
                    return x[0, 0]
                return x[i, j]

            return ix2
        return None

    from .copies import _put  # noqa: F401 (returned by name below; its overload: copies.py)
    from .copies import narrowing as _narrowing

    def _cast(dst, x):  # pragma: no cover
        return x

    @overload(_cast)
    def _cast_ov(dst, x):
        # one element of the integer or boolean array slot ``dst`` (a fused loop)
        if not isinstance(dst, types.Array) or _narrowing(dst, x):
            raise TypingError(
                f"a {x} value for a {dst.dtype} value of the model: its kind changed "
                "after the compiled backend's warm-up"
            )
        return lambda dst, x: x

    def _fma(a, b, c):  # pragma: no cover - replaced by the overload in jitted code
        from .small_products import exact_fma

        return exact_fma(float(a), float(b), float(c))

    @intrinsic
    def _fma_f64(typingctx, a, b, c):
        def codegen(context, builder, sig, args):
            d = ir.DoubleType()
            fnty = ir.FunctionType(d, [d, d, d])
            fn = builder.module.declare_intrinsic("llvm.fma", [d], fnty)
            return builder.call(fn, args)

        return types.float64(types.float64, types.float64, types.float64), codegen

    @overload(_fma)
    def _fma_ov(a, b, c):
        if all(isinstance(t, types.Float) for t in (a, b, c)):
            return lambda a, b, c: _fma_f64(float(a), float(b), float(c))
        return None

    del njit
    made = {**locals(), **INT_HELPERS, **SIZE_HELPERS}
    return {name: made[name] for name in HELPERS}


globals().update(_make_helpers())  # the module's names: one per entry of HELPERS


def index_error(e: IndexError, fields: list[str], prefix: str = "") -> MDFError | None:
    """The MDFError for a bounds check of generated code (``_ix1``/``_ix2``), in the words
    numpy uses on the interpreted backend, naming the field and the step; None for any other
    IndexError."""
    args = e.args
    if (
        len(args) != 5
        or not all(isinstance(a, int) for a in args)
        or not 0 <= args[0] < len(fields)
    ):
        return None
    k, axis, i, n, step = args
    return MDFError(
        f"{prefix}evaluation failed: IndexError: index {i} is out of bounds for "
        f"axis {axis} with size {n} (at step {step})",
        fields[k],
    )
