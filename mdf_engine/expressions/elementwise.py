"""Which expressions can be computed one array element at a time (a fused loop in compiled code),
and the source of one element."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .functions import BUILTIN_FUNCTIONS, MATH_FUNCTIONS, MODULES
from .parse import Expr
from .source import Emitter, _int_literal

#: Functions, as :func:`to_source` names them, that act on each element on its own (numpy
#: ufuncs and their math counterparts): an expression made of them, arithmetic and single
#: comparisons over arrays of one shape can be computed one element at a time.
ELEMENTWISE_CALLS = frozenset(
    ["abs", "pow", "math.erf", "math.erfc", "math.gamma", "math.lgamma"]
    + [
        "np." + n
        for n in (
            "exp exp2 expm1 log log10 log2 log1p sqrt square sin cos tan arcsin arccos arctan "
            "arctan2 sinh cosh tanh arcsinh arccosh arctanh floor ceil trunc rint abs absolute fabs "
            "power sign maximum minimum fmod hypot copysign degrees radians isnan isinf isfinite "
            "negative reciprocal mod remainder add subtract multiply divide true_divide "
            "floor_divide"
        ).split()
    ]
)


class _NotElementwise(Exception):
    pass


def to_element_source(
    expr: Expr, element: Callable[[str], str | None], const: Callable[[Any], str]
) -> str | None:
    """Python source of one element of ``expr``, or None when ``expr`` is not element-wise.

    ``element(name)`` gives the source of one element of a variable (``a3[i_]`` for an array
    of the result's shape, the variable itself for a scalar) or None when the variable has
    another shape. Element-wise: numbers, names, arithmetic other than ``@``, single
    comparisons and calls of :data:`ELEMENTWISE_CALLS`. The value is computed with the same
    scalar operations in the same order as the whole-array expression."""
    try:
        return _ElementEmitter(element, const).emit(expr.tree.body)
    except _NotElementwise:
        return None


def _safe_operand(node: ast.BinOp) -> bool:
    """A ``//``, ``%`` or ``**`` whose right operand is a literal for which an element of
    integers gives the interpreter's kind (a nonzero divisor, a nonnegative exponent, a
    float): a number that may be 0 gives the interpreter's float only in checked code."""
    r = node.right
    if isinstance(r, ast.Constant) and type(r.value) is float:
        return True
    return _int_literal(r, 0 if isinstance(node.op, ast.Pow) else None)


class _ElementEmitter(Emitter):
    def __init__(self, element: Callable[[str], str | None], const: Callable[[Any], str]):
        super().__init__(element, lambda n: n, const)

    def _Name(self, node):
        if node.id in ("True", "False"):
            return node.id
        src = self.rename(node.id) if node.id != "None" else None
        if src is None:
            raise _NotElementwise
        return src

    def _BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            raise _NotElementwise
        if isinstance(node.op, (ast.FloorDiv, ast.Mod, ast.Pow)) and not _safe_operand(node):
            raise _NotElementwise  # (integers by 0 or to a power: a float, intdiv.py checks)
        return super()._BinOp(node)

    def _Compare(self, node):
        if len(node.ops) != 1:  # a chained comparison of arrays is an error in numpy
            raise _NotElementwise
        return super()._Compare(node)

    def _Call(self, node):
        f = node.func
        if node.keywords or (
            isinstance(f, ast.Name) and f.id not in MATH_FUNCTIONS and f.id not in BUILTIN_FUNCTIONS
        ):
            raise _NotElementwise  # keywords, or a registered MDF function
        source = super()._Call(node)
        if source.split("(", 1)[0] not in ELEMENTWISE_CALLS:
            raise _NotElementwise
        return source

    def _Constant(self, node):
        if not isinstance(node.value, (int, float, bool)):
            raise _NotElementwise
        return super()._Constant(node)

    def _not_elementwise(self, node):
        raise _NotElementwise

    _BoolOp = _IfExp = _Subscript = _Slice = _Tuple = _List = _Dict = _not_elementwise

    def _Attribute(self, node):
        if node.attr not in MODULES[node.value.id][1]:
            raise _NotElementwise  # a function named but not called
        return super()._Attribute(node)
