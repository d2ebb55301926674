"""The one expression compiler: MDF expression strings into a safe, checked form.

An expression (a parameter ``value``, a ``time_derivative``, a condition ``test``, an output port
``value``, a function argument) is parsed with :mod:`ast` and accepted only if every node belongs
to a whitelisted subset: numbers and strings, names, arithmetic, comparisons, boolean operators,
``a if c else b``, subscripts and slices, lists/tuples, and calls to whitelisted ``math``/``numpy``
functions, a few builtins, or registered MDF functions. Attribute access other than
``math.f``/``numpy.f``/``np.f``, dunder names, lambdas, comprehensions, starred arguments and
imports are refused. Model text is never passed to ``eval``/``exec``.

A parsed :class:`Expr` can be evaluated directly (a tree of Python closures, used by the
interpreted backend) or written out as Python source over renamed variables (used by the compiled
backend, which jits that source with Numba).

The stages, one module each: :mod:`.parse` (checking, :class:`Expr`), :mod:`.closures` (the
interpreted evaluator), :mod:`.source` (Numba source, integer inference), :mod:`.elementwise`
(one element of an element-wise expression), :mod:`.operators` (guarded arithmetic, operator
tables) and :mod:`.functions` (the whitelisted functions and constants). This package is the
compiler's one entry: the rest of the engine imports the names below from it. The limits
(``parse.MAX_EXPRESSION_LENGTH``, ``operators.MAX_RESULT_ELEMENTS``, ...) live, and are set,
in the module that reads them.
"""

from __future__ import annotations

from .elementwise import to_element_source
from .functions import MATH_FUNCTIONS, NUMPY_CONSTANTS, NUMPY_FUNCTIONS, RESERVED_NAMES
from .parse import Expr, looks_numeric, names_in, parse
from .source import to_source

__all__ = [
    "MATH_FUNCTIONS",
    "NUMPY_CONSTANTS",
    "NUMPY_FUNCTIONS",
    "RESERVED_NAMES",
    "Expr",
    "looks_numeric",
    "names_in",
    "parse",
    "to_element_source",
    "to_source",
]
