"""Numba helpers giving generated code the interpreter's answers for Python's list display and
its builtin ``max``/``min`` (docs/compiled.md, "Lists and builtin max/min").

``_list(t)`` is ``numpy.array([x, y, ...])`` of a tuple of numbers (a 1-D array) or of arrays
of one shape (stacked on a new first axis); arrays of different shapes raise ValueError, as
numpy does (the interpreted backend reports it alike). Numba's ``np.array`` takes neither.

``_pymax(a, b)``/``_pymin(a, b)`` are Python's ``max(a, b)``/``min(a, b)``: ``b`` when
``b > a`` (``b < a``) is true, else ``a`` (so a NaN second argument never wins). Python
takes the truth of that comparison, which numpy gives only for a value of one element: an
array argument of another size raises ValueError, as on the interpreted backend. The
interpreter returns the winning object itself, whose dtype and shape may be either
argument's; compiled code returns its one element as a scalar (numpy's promotion of the two)
and, where the arguments differ in kind, ``_pywon`` gives the tag of the one that won, which
the value's slot keeps (variants.py) to read it back as that argument's kind.

``_pywon(a, b, ta, tb, greater, k, step, err)`` is the tag of the argument ``_pymax(a, b)``
(``greater``) or ``_pymin(a, b)`` returns: ``tb`` when ``b`` wins, else ``ta`` (a value whose
kind is the argument that won, variants.py); an integer beyond 2**53 winning over a float
stops the run (``err`` -7 naming the field ``k``: ``intdiv.beyond53``), since its slot holds
it as a float.

``_like(dst, x)`` is ``x`` in the dtype of the float array slot ``dst`` when ``x`` is an
integer or boolean array: a value's initial value written as integers (``[-60]``) and its
Euler step (floats) are then one Numba type, as the interpreter's value turns float after its
first step. Any other ``x`` is itself (a narrowing is refused where it is stored).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _make_helpers() -> tuple[Any, Any, Any, Any, Any]:
    from numba import literal_unroll, types
    from numba.extending import overload

    from .intdiv import beyond53, inexact_pair

    def _list(t):  # pragma: no cover - replaced by the overload in jitted code
        return np.array(list(t))

    def _pymax(a, b):  # pragma: no cover
        return max(a, b)

    def _pymin(a, b):  # pragma: no cover
        return min(a, b)

    def _one(x):  # pragma: no cover
        return x

    def _like(dst, x):  # pragma: no cover
        return x

    @overload(_like)
    def _like_ov(dst, x):
        if isinstance(dst, types.Array) and (
            (isinstance(x, types.Array) and x.ndim != dst.ndim) or isinstance(x, scalar)
        ):
            # a value that settled in a larger slot (its first steps ran interpreted,
            # handover.py): its initial value again (a step without dt) fits only when it
            # has the slot's size, else the run stops (KindChanged, runtime.call_checked)
            float_slot = isinstance(dst.dtype, types.Float)
            dtype = dst.dtype

            def fit(dst, x):
                a = np.asarray(x)
                if a.size != dst.size:
                    raise ValueError("a value of another shape than its compiled slot")
                a = np.ascontiguousarray(a).reshape(dst.shape)
                return a.astype(dtype) if float_slot else a

            return fit
        if (
            isinstance(dst, types.Array)
            and isinstance(x, types.Array)
            and isinstance(dst.dtype, types.Float)
            and not isinstance(x.dtype, (types.Float, types.Complex))
        ):
            dtype = dst.dtype
            return lambda dst, x: x.astype(dtype)
        return lambda dst, x: x

    scalar = (types.Number, types.Boolean)

    @overload(_list)
    def _list_ov(t):
        if not isinstance(t, types.BaseTuple) or len(t) == 0:
            return None
        items = list(t)
        n = len(items)
        if all(isinstance(x, scalar) for x in items):
            if any(isinstance(x, types.Complex) for x in items):
                return None
            if any(isinstance(x, types.Float) for x in items):
                dtype = np.float64
            elif any(isinstance(x, types.Integer) for x in items):
                dtype = np.int64
            else:
                dtype = np.bool_

            def numbers(t):
                out = np.empty(n, dtype)
                i = 0
                for x in literal_unroll(t):
                    out[i] = x
                    i += 1
                return out

            return numbers
        if not all(isinstance(x, types.Array) for x in items):
            return None
        if len({x.ndim for x in items}) != 1 or items[0].ndim == 0:
            return None
        dtypes = {x.dtype for x in items}
        if dtypes == {types.float32}:
            dtype = np.float32
        elif all(isinstance(d, (types.Float, types.Integer, types.Boolean)) for d in dtypes):
            dtype = (
                np.float64
                if any(isinstance(d, types.Float) for d in dtypes)
                else (np.int64 if any(isinstance(d, types.Integer) for d in dtypes) else np.bool_)
            )
        else:
            return None

        def arrays(t):
            first = t[0].shape
            out = np.empty((n,) + first, dtype)
            i = 0
            for x in literal_unroll(t):
                if x.shape != first:
                    raise ValueError("a list of arrays of different shapes")
                out[i] = x
                i += 1
            return out

        return arrays

    @overload(_one)
    def _one_ov(x):
        if isinstance(x, scalar):
            return lambda x: x
        if isinstance(x, types.Array):

            def one(x):
                if x.size != 1:
                    raise ValueError(
                        "the truth value of an array with more than one element is ambiguous "
                        "(builtin max/min of arrays)"
                    )
                return x.ravel()[0]

            return one
        return None

    def _choose(greater: bool):
        def ov(a, b):
            if isinstance(a, scalar) and isinstance(b, scalar):
                if greater:
                    return lambda a, b: b if b > a else a
                return lambda a, b: b if b < a else a
            if not all(isinstance(x, (*scalar, types.Array)) for x in (a, b)):
                return None
            if greater:

                def pick_max(a, b):
                    x, y = _one(a), _one(b)
                    return y if y > x else x

                return pick_max

            def pick_min(a, b):
                x, y = _one(a), _one(b)
                return y if y < x else x

            return pick_min

        return ov

    overload(_pymax)(_choose(True))
    overload(_pymin)(_choose(False))

    def _pywon(a, b, ta, tb, greater, k, step, err):  # pragma: no cover
        return tb if (b > a if greater else b < a) else ta

    def _item(x):
        return x.dtype if isinstance(x, types.Array) else x

    @overload(_pywon)
    def _pywon_ov(a, b, ta, tb, greater, k, step, err):
        if not all(isinstance(x, (*scalar, types.Array)) for x in (a, b)):
            return None
        ints = [isinstance(_item(x), (types.Integer, types.Boolean)) for x in (a, b)]
        # an integer winning over a float is held in a float slot: exact to 2**53
        first_int, second_int = ints[0] and not ints[1], ints[1] and not ints[0]

        def won(a, b, ta, tb, greater, k, step, err):
            x, y = _one(a), _one(b)
            second = y > x if greater else y < x
            # (each side on its own: ``y if second else x`` would be the float of the two;
            # beyond53 writes err -7 naming the field ``k``)
            if second and second_int:
                beyond53(y, k, step, err)
            elif not second and first_int:
                beyond53(x, k, step, err)
            elif first_int:  # (a float won: its float64 test may not be Python's exact one)
                inexact_pair(x, y, k, step, err)
            elif second_int:
                inexact_pair(y, x, k, step, err)
            return tb if second else ta

        return won

    return _list, _pymax, _pymin, _like, _pywon


_list, _pymax, _pymin, _like, _pywon = _make_helpers()
