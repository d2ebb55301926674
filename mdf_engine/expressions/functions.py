"""The names an expression may use besides its own variables: whitelisted ``math``/``numpy``
functions and constants, a few builtins, and the modules they are reached through.

Array constructors in the tables refuse results larger than
:data:`~mdf_engine.expressions.operators.MAX_RESULT_ELEMENTS` before allocating, ``int()``
refuses values beyond 64 bits, and ``math`` functions that the compiled backend computes with
numpy (``math.log(0)``, ``math.exp(1000)``, ``math.sqrt(-1)``) give numpy's inf/nan here too
instead of raising. :func:`numpy_name` is how generated source spells each function.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from .operators import INT64_MAX, INT64_MIN, too_big

MATH_FUNCTIONS = {
    name: getattr(math, name)
    for name in (
        "exp log log10 log2 log1p expm1 sqrt sin cos tan asin acos atan atan2 sinh cosh tanh "
        "asinh acosh atanh floor ceil fabs pow hypot erf erfc gamma lgamma isnan isinf isfinite "
        "copysign fmod trunc degrees radians"
    ).split()
}
MATH_CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "tau": math.tau}

NUMPY_FUNCTIONS = {
    name: getattr(np, name)
    for name in (
        "exp log log10 log2 log1p expm1 sqrt sin cos tan arcsin arccos arctan arctan2 sinh cosh "
        "tanh arcsinh arccosh arctanh floor ceil abs absolute fabs power square sign maximum "
        "minimum clip where sum prod mean max min amax amin argmax argmin dot matmul outer "
        "transpose reshape array asarray zeros ones full zeros_like ones_like full_like tile "
        "concatenate stack hstack vstack exp2 round rint heaviside isnan isinf isfinite "
        "logical_and logical_or logical_not logical_xor greater less equal not_equal "
        "greater_equal less_equal add subtract multiply divide true_divide floor_divide mod "
        "remainder fmod negative reciprocal cumsum diff sort linspace arange eye identity "
        "diag trace shape size ndim float64 float32 int64 int32 squeeze expand_dims ravel "
        "flip roll all any var std median tanh atleast_1d atleast_2d broadcast_to"
    ).split()
}
NUMPY_CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None}

BUILTIN_FUNCTIONS = {
    name: getattr(builtins, name) for name in "abs min max round pow sum len int float bool".split()
}

#: Module names through which math/numpy functions may be called.
MODULES = {
    "math": (MATH_FUNCTIONS, MATH_CONSTANTS),
    "numpy": (NUMPY_FUNCTIONS, NUMPY_CONSTANTS),
    "np": (NUMPY_FUNCTIONS, NUMPY_CONSTANTS),
}

#: Names that are always known to an expression (modules and whitelisted builtins).
RESERVED_NAMES = set(MODULES) | set(BUILTIN_FUNCTIONS) | {"True", "False", "None"}


_MATH_TO_NUMPY = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "atan2": "arctan2",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "pow": "power",
    "fabs": "abs",
}


def numpy_name(module: str, attr: str) -> str:
    """How generated source names the whitelisted function ``module.attr`` (``np.arcsin`` for
    ``math.asin``; ``math.erf`` and its kin stay ``math``)."""
    if module == "math":
        if attr in (
            "erf",
            "erfc",
            "gamma",
            "lgamma",
            "copysign",
            "hypot",
            "degrees",
            "radians",
            "isnan",
            "isinf",
            "isfinite",
            "trunc",
            "fmod",
            "log1p",
            "expm1",
        ):
            return f"math.{attr}" if attr in ("erf", "erfc", "gamma", "lgamma") else f"np.{attr}"
        return "np." + _MATH_TO_NUMPY.get(attr, attr)
    return "np." + attr


# ---------------------------------------------------------------------------------------------
# Guarded callables for the interpreted backend: array constructors refuse results larger than
# MAX_RESULT_ELEMENTS before allocating, and math functions that the compiled backend computes
# with numpy (math.log(0), math.exp(1000), math.sqrt(-1)) give numpy's inf/nan here too
# instead of raising.


def _shape_size(shape: Any) -> float:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    total = 1.0
    for d in dims:
        total *= max(float(np.asarray(d)), 0.0)
    return total


def _arg(args: tuple, kwargs: Mapping[str, Any], i: int, name: str, default: Any) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _arange_size(*args: Any, **kwargs: Any) -> float:
    if len(args) == 1 and "stop" not in kwargs:
        start, stop, step = 0, args[0], 1
    else:
        start = _arg(args, kwargs, 0, "start", 0)
        stop = _arg(args, kwargs, 1, "stop", 0)
        step = _arg(args, kwargs, 2, "step", 1)
    try:
        return max(0.0, math.ceil((float(stop) - float(start)) / float(step)))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return 0.0  # numpy reports these itself


def _size(x: Any) -> float:
    return float(np.size(x))


_SIZE_OF: dict[str, Callable[..., float]] = {
    "zeros": lambda *a, **k: _shape_size(_arg(a, k, 0, "shape", 0)),
    "ones": lambda *a, **k: _shape_size(_arg(a, k, 0, "shape", 0)),
    "full": lambda *a, **k: _shape_size(_arg(a, k, 0, "shape", 0)),
    "arange": _arange_size,
    "linspace": lambda *a, **k: float(_arg(a, k, 2, "num", 50)),
    "eye": lambda *a, **k: (
        float(_arg(a, k, 0, "N", 0)) * float(_arg(a, k, 1, "M", None) or _arg(a, k, 0, "N", 0))
    ),
    "identity": lambda *a, **k: float(_arg(a, k, 0, "n", 0)) ** 2,
    "tile": lambda *a, **k: _size(_arg(a, k, 0, "A", 0)) * _shape_size(_arg(a, k, 1, "reps", 1)),
    "outer": lambda *a, **k: _size(_arg(a, k, 0, "a", 0)) * _size(_arg(a, k, 1, "b", 0)),
    "broadcast_to": lambda *a, **k: _shape_size(_arg(a, k, 1, "shape", 0)),
}


def _limited(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    size_of = _SIZE_OF[name]

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            n = size_of(*args, **kwargs)
        except (TypeError, ValueError, OverflowError):
            n = 0.0  # malformed arguments: numpy raises its own error below
        too_big(n, f"np.{name}(...)")
        return fn(*args, **kwargs)

    call.__name__ = name
    return call


def _numpy_fallback(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    np_fn = getattr(np, _MATH_TO_NUMPY.get(name, name))

    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except (ValueError, OverflowError, TypeError):
            with np.errstate(all="ignore"):
                return np_fn(*[_as_float(a) for a in args])

    call.__name__ = name
    return call


def _checked_int(*args: Any) -> int:
    """``int(x)``, refused (MDFError) beyond 64-bit integers: the compiled backend's integers
    are 64-bit, and both backends give the same answer (docs/semantics.md)."""
    try:
        value = int(*args)
    except (OverflowError, ValueError):
        if not isinstance(args[0], (float, np.floating)):
            raise
        value = None  # inf or NaN
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        raise MDFError(f"int() of a value beyond 64-bit integers (or NaN): {_short(args[0])}")
    return value


def _short(x: Any) -> str:
    text = f"{float(x):.6g}" if isinstance(x, (int, float, np.number)) else type(x).__name__
    return text


def _as_float(a: Any) -> Any:
    """A Python int as a float64 (inf beyond float64's range, as numpy rounds it)."""
    if isinstance(a, int) and not isinstance(a, bool):
        try:
            return np.float64(a)
        except OverflowError:
            return np.float64(math.inf if a > 0 else -math.inf)
    return a


BUILTIN_FUNCTIONS["int"] = _checked_int

for _name in _SIZE_OF:
    NUMPY_FUNCTIONS[_name] = _limited(_name, NUMPY_FUNCTIONS[_name])
for _name in list(MATH_FUNCTIONS):
    if numpy_name("math", _name).startswith("np.") and hasattr(
        np, _MATH_TO_NUMPY.get(_name, _name)
    ):
        MATH_FUNCTIONS[_name] = _numpy_fallback(_name, MATH_FUNCTIONS[_name])
del _name
