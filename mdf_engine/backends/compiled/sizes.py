"""Array constructors in generated code, held to the size an expression may make.

On the interpreted backend ``np.zeros``, ``np.ones``, ``np.full``, ``np.empty``,
``np.linspace``, ``np.arange``, ``np.eye``, ``np.identity`` and ``np.tile`` refuse, before
allocating, a result of more than ``expressions.operators.MAX_RESULT_ELEMENTS`` elements
(``expressions/functions.py``). Generated code calls the same constructors with their size
argument passed through one of these helpers first (``expressions/source.py`` writes the
calls):

- ``_csize(n_or_shape)``: an element count or a shape (an integer, a float count, a tuple of
  integers) returned as it is;
- ``_csize2(n, m)``: ``n`` returned as it is when ``n * m`` elements fit (``np.eye``);
- ``_crange(start, stop, step)``: ``stop`` returned as it is when ``np.arange(start, stop,
  step)`` fits;
- ``_ctile(a, reps)``: ``reps`` returned as it is when ``np.tile(a, reps)`` fits.

A size beyond the bound raises ``ValueError`` in the compiled loop before anything is
allocated; the compiled backend hands the run back to the interpreter (``handback.py``), which
reports the refusal as a first run does, naming the node and field. Values and speed of
every allowed call are unchanged (the helpers return their argument).
"""

from __future__ import annotations

import math
from typing import Any

from ...expressions.operators import MAX_RESULT_ELEMENTS

#: the refusal's words (a constant: Numba raises exceptions with constant arguments)
TOO_MANY = f"an array of more than {MAX_RESULT_ELEMENTS} elements"


def _make() -> dict[str, Any]:
    from numba import literal_unroll, njit, types
    from numba.extending import overload

    limit = float(MAX_RESULT_ELEMENTS)

    @njit
    def _fits(total):
        if not total <= limit:  # (NaN is refused too)
            raise ValueError(TOO_MANY)

    @njit
    def _count(x):
        v = math.ceil(float(x))
        return v if v > 0.0 else 0.0

    def _csize(x):  # pragma: no cover - replaced by the overload in jitted code
        return x

    @overload(_csize)
    def _csize_ov(x):
        if isinstance(x, (types.Integer, types.Float, types.Boolean)):

            def one(x):
                _fits(_count(x))
                return x

            return one
        if isinstance(x, types.BaseTuple) and all(
            isinstance(t, (types.Integer, types.Boolean)) for t in x.types
        ):

            def shape(x):
                total = 1.0
                for d in literal_unroll(x):
                    total *= _count(d)
                _fits(total)
                return x

            return shape
        return lambda x: x  # (anything else: Numba's own typing decides)

    def _csize2(n, m):  # pragma: no cover
        return n

    @overload(_csize2)
    def _csize2_ov(n, m):
        if all(isinstance(t, (types.Integer, types.Float)) for t in (n, m)):

            def pair(n, m):
                _fits(_count(n) * _count(m))
                return n

            return pair
        return lambda n, m: n

    def _crange(start, stop, step):  # pragma: no cover
        return stop

    @overload(_crange)
    def _crange_ov(start, stop, step):
        if all(isinstance(t, (types.Integer, types.Float)) for t in (start, stop, step)):

            def span(start, stop, step):
                if step != 0:
                    _fits(_count((float(stop) - float(start)) / float(step)))
                return stop

            return span
        return lambda start, stop, step: stop

    def _ctile(a, reps):  # pragma: no cover
        return reps

    @overload(_ctile)
    def _ctile_ov(a, reps):
        if isinstance(a, types.Array):
            size = lambda a: float(a.size)  # noqa: E731
        elif isinstance(a, (types.Number, types.Boolean)):
            size = lambda a: 1.0  # noqa: E731
        else:
            return lambda a, reps: reps
        size = njit(size)
        if isinstance(reps, types.Integer):

            def one(a, reps):
                _fits(size(a) * _count(reps))
                return reps

            return one
        if isinstance(reps, types.BaseTuple) and all(
            isinstance(t, types.Integer) for t in reps.types
        ):

            def many(a, reps):
                total = size(a)
                for d in literal_unroll(reps):
                    total *= _count(d)
                _fits(total)
                return reps

            return many
        return lambda a, reps: reps

    return {"_csize": _csize, "_csize2": _csize2, "_crange": _crange, "_ctile": _ctile}


#: the helpers of this module that generated code imports (``helpers.HELPERS`` lists them)
HELPERS = _make()
