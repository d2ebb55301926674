"""The arithmetic of expressions on the interpreted backend, and the operator tables.

Each binary operator is a guarded function with the semantics both backends share
(docs/semantics.md, "One numeric semantics"): Python ints stay exact but are refused beyond
64 bits, scalar division by zero and float powers follow numpy (inf/nan, no exception), and a
result that would exceed :data:`MAX_RESULT_ELEMENTS` elements (broadcasting, sequence repeats,
matrix products) is refused before it is allocated. The ``*_SRC`` tables spell each operator for
generated source.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import MDFError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: Most elements an expression may create in one array, string or list (larger requests are
#: refused with MDFError instead of exhausting memory).
MAX_RESULT_ELEMENTS = 10**8


def too_big(n: float, what: str) -> None:
    """Refuse (MDFError) a result of ``n`` elements beyond :data:`MAX_RESULT_ELEMENTS`."""
    if n > MAX_RESULT_ELEMENTS:
        raise MDFError(f"{what} would have {n:.3g} elements; the limit is {MAX_RESULT_ELEMENTS}")


def combine(a: Any, b: Any, mode: str, node: str, port: str) -> Any:
    """Two values arriving at input port ``port`` of the node at field path ``node``, added
    (``mode="add"``) or multiplied; values that do not combine (an initializer's dict or empty
    list against an edge's array, an int beyond float range) are an MDFError naming the port,
    not numpy's or Python's own exception."""
    try:
        return a + b if mode == "add" else a * b
    except (ValueError, TypeError, OverflowError) as e:
        raise MDFError(
            f"cannot combine the values arriving here: {type(e).__name__}: {e}",
            f"{node}.input_ports.{port}",
        ) from None


def _check_broadcast(a: Any, b: Any) -> None:
    if (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and a.shape != b.shape
        and a.size > 1
        and b.size > 1
    ):
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            return  # the operation itself reports the mismatch
        too_big(math.prod(shape), "the result")


def _float_pair(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float)) and isinstance(b, (int, float))


def _numpy_scalar(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """``op`` on float64 scalars with numpy's semantics (x/0 = inf or nan, no exception), as
    the compiled backend computes it."""
    with np.errstate(all="ignore"):
        return op(np.float64(a), np.float64(b))


def _int64(value: Any) -> Any:
    """``value``, refused when it is a Python int beyond 64 bits: integers are 64-bit on the
    compiled backend, and both backends give the same answer (docs/semantics.md)."""
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        raise MDFError("integer overflow: a result beyond 64-bit integers")
    return value


def _add(a: Any, b: Any) -> Any:
    _check_broadcast(a, b)
    return _int64(a + b)


def _sub(a: Any, b: Any) -> Any:
    _check_broadcast(a, b)
    return _int64(a - b)


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
            too_big(len(seq) * n, "the repeated sequence")
    _check_broadcast(a, b)
    return _int64(a * b)


def _truediv(a: Any, b: Any) -> Any:
    _check_broadcast(a, b)
    try:
        return a / b
    except ZeroDivisionError:
        return _numpy_scalar(operator.truediv, a, b)


def _floordiv(a: Any, b: Any) -> Any:
    _check_broadcast(a, b)
    try:
        return a // b
    except ZeroDivisionError:
        return _numpy_scalar(np.floor_divide, a, b)


def _mod(a: Any, b: Any) -> Any:
    _check_broadcast(a, b)
    try:
        return a % b
    except ZeroDivisionError:
        return _numpy_scalar(np.mod, a, b)


def _pow(a: Any, b: Any) -> Any:
    """Python ints stay exact while small; other scalars follow numpy's float64 semantics
    (0 ** -1 = inf, (-8) ** 0.5 = nan, huge results = inf), as in the compiled backend."""
    if (
        type(a) is int
        and type(b) is int
        and b >= 0
        and (abs(a) <= 1 or b * abs(a).bit_length() <= 62)
    ):
        return a**b
    if _float_pair(a, b):
        return _numpy_scalar(operator.pow, a, b)
    _check_broadcast(a, b)
    return a**b


def _matmul(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim >= 2 and b.ndim >= 2:
        too_big(a.size / max(a.shape[-1], 1) * (b.size / max(b.shape[-2], 1)), "the product")
    return a @ b


def _bitwise(op: Callable[[Any, Any], Any], sym: str) -> Callable[[Any, Any], Any]:
    """``op`` (``&``, ``|``, ``^``) of integers or booleans; of anything else a TypeError that
    says so (LEMS/NeuroML expressions write a power ``x^3``, which MDF writes ``x**3``)."""

    def f(a: Any, b: Any) -> Any:
        for v in (a, b):
            if np.asarray(v).dtype.kind not in "biu":
                hint = " (a power is written '**')" if sym == "^" else ""
                raise TypeError(
                    f"'{sym}' is a bitwise operator of integers and booleans, not of "
                    f"{np.asarray(v).dtype} values{hint}"
                )
        return op(a, b)

    return f


BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: _sub,
    ast.Mult: _mul,
    ast.Div: _truediv,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
    ast.MatMult: _matmul,
    ast.BitAnd: _bitwise(operator.and_, "&"),
    ast.BitOr: _bitwise(operator.or_, "|"),
    ast.BitXor: _bitwise(operator.xor, "^"),
}
BINOP_SRC = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
}
UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
UNARY_SRC = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not ", ast.Invert: "~"}
CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
CMP_SRC = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
