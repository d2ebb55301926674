"""The expression helpers of ``modeci_mdf.execution_engine``, on mdf_engine's safe expression
compiler: :func:`evaluate_expr`, :func:`get_required_variables_from_expression` and the array
format names.

``evaluate_expr`` reads a value the way the reference (modelspec's ``evaluate``) does: a string
that names a parameter gives that parameter's value, a numeric string gives the number, a list
gives a numpy array, and any other string is an expression over the parameters, compiled by
:mod:`mdf_engine.expressions` (never Python ``eval``). Like the reference, a Python float result
that is a whole number comes back as an ``int``.
"""

from __future__ import annotations

import ast
import builtins
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import MDFError
from ..expressions import Expr, looks_numeric, parse

FORMAT_NUMPY = "numpy"
FORMAT_TENSORFLOW = "tensorflow"
FORMAT_DEFAULT = FORMAT_NUMPY

#: Names the reference counts as known without a value (modules and builtins).
KNOWN_PARAMETERS = ["constant", "math", "numpy"] + dir(builtins)


def check_array_format(array_format: Any) -> None:
    """Only numpy arrays are produced; ``"tensorflow"`` is refused. Other values are read as
    numpy, as the reference does (it only tests for ``"tensorflow"``)."""
    if array_format == FORMAT_TENSORFLOW:
        raise MDFError(
            "array_format 'tensorflow' is not supported by mdf_engine "
            "(values are numpy arrays; use array_format='numpy')"
        )


@lru_cache(maxsize=4096)
def compile_expression(text: str, where: str = "") -> Expr:
    """A checked expression (cached by text), with the registered MDF functions callable."""
    from ..plan import expression_functions

    return parse(text, where, expression_functions())


def _as_array(v: Any) -> Any:
    if isinstance(v, list):
        return np.array(v)
    if isinstance(v, np.ndarray):
        return np.array(v)
    return v


def evaluate_expr(
    expr: Any = None,
    func_params: Mapping[str, Any] | None = None,
    array_format: str = FORMAT_DEFAULT,
    allow_strings_returned: bool = False,
    verbose: bool = False,
) -> Any:
    """The value of ``expr`` (a constant, list, array or expression string) given the
    parameter values ``func_params``, as ``modeci_mdf.execution_engine.evaluate_expr``.

    An expression that cannot be evaluated raises :class:`MDFError`, unless
    ``allow_strings_returned`` (or it is one of :data:`KNOWN_PARAMETERS`): then the string
    itself is returned, as in the reference."""
    check_array_format(array_format)
    params = func_params if func_params is not None else {}
    if type(expr) is str and expr in params:
        expr = params[expr]  # a string value found this way is read again, as in the reference
    if type(expr) is not str:
        value = _as_array(expr)
    else:
        num = looks_numeric(expr)
        if num is not None:
            value = num
        else:
            try:
                value = compile_expression(expr).evaluate(params)
            except MDFError as e:
                if allow_strings_returned or expr in KNOWN_PARAMETERS:
                    return expr
                raise MDFError(
                    f"cannot evaluate expression {_shown(expr)}: {e.message}", e.path
                ) from None
            value = _whole_float_as_int(value)
            if isinstance(value, str):
                if allow_strings_returned:
                    return expr
                raise MDFError(f"expression {_shown(expr)} gives a string, not a value")
    if verbose:
        print(f"    Evaluated {_shown(expr)} = {value!r}")
    return value


def _whole_float_as_int(v: Any) -> Any:
    if type(v) is float and math.isfinite(v) and v.is_integer():
        return int(v)
    return v


def _shown(expr: Any) -> str:
    text = repr(expr)
    return text if len(text) <= 80 else text[:77] + "..."


def get_required_variables_from_expression(expr: Any) -> list[str]:
    """The variable names an expression string uses (called names and module names included,
    as in the reference; ``x[y]`` gives ``x`` and ``y``). Not a string: ``[]``.

    A string that is not an expression raises :class:`MDFError`."""
    if not isinstance(expr, str) or not expr.strip():
        return []
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise MDFError(f"not an expression: {_shown(expr)}") from None
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
