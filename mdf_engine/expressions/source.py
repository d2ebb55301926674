"""A checked expression written out as Python source for the compiled backend (Numba), over
engine-made names only, and the guess of which parts of it may be integers (they take checked
integer helpers in generated code)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..errors import NotCompilable
from .functions import BUILTIN_FUNCTIONS, MATH_FUNCTIONS, MODULES, numpy_name
from .operators import BINOP_SRC, CMP_SRC, UNARY_SRC
from .parse import Expr


def to_source(
    expr: Expr,
    rename: Callable[[str], str],
    call: Callable[[str], str],
    const: Callable[[Any], str],
    index: Callable[[str, list[str]], str],
    checked: Callable[[str, list[str]], str] | None = None,
) -> str:
    """Python source of ``expr`` for Numba that holds no text of the expression: variables
    renamed by ``rename``, calls of registered functions by ``call``, literals (numbers,
    strings) by ``const`` (the name of a constant-table entry); math/numpy calls as
    ``np.<f>`` from the whitelist, keyword names from :data:`SOURCE_KEYWORDS`. Division keeps
    Python's operators: the code must be jitted with ``error_model='numpy'`` (x/0 gives
    inf/nan as in the interpreter, at the speed of a plain division). A subscript by
    indices (not slices) is ``index(value, indices)``: code that checks the bounds; ``int()``,
    ``//`` and ``%`` are ``checked(helper, operands)`` (``_int``, ``_floordiv``, ``_mod``,
    and ``_ifloordiv``, ``_imod`` inside the expression or by a nonzero literal: an int64 of two
    integers, compiled/intdiv.py): the semantics of docs/semantics.md, "One numeric
    semantics"."""
    emitter = Emitter(rename, call, const, index)
    emitter.checked = checked
    emitter.top = expr.tree.body
    return emitter.emit(expr.tree.body)


#: Keyword arguments a call may pass in compiled code (others are not compiled); the source
#: holds the engine's copy of the name, never the expression's text.
SOURCE_KEYWORDS = {
    k: k
    for k in "axis keepdims dtype shape fill_value reps axes ord num "
    "endpoint decimals ddof k a_min a_max".split()
}


def _negative_int_literal(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    )


#: the generated code's helper of each comparison (compiled/intdiv.py)
_COMPARE_HELPERS = {
    ast.Lt: "_clt",
    ast.LtE: "_cle",
    ast.Gt: "_cgt",
    ast.GtE: "_cge",
    ast.Eq: "_ceq",
    ast.NotEq: "_cne",
}


def _literal_value(node: ast.AST) -> int | None:
    """The integer an integer literal (``7``, ``-2``) spells, else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign, node = (-1 if isinstance(node.op, ast.USub) else 1), node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _int_literal(node: ast.AST, least: int | None = None) -> bool:
    """An integer literal other than 0 (``7``, ``-2``: ``k % 7`` is never a float), or one of at
    least ``least`` (``k ** 2``)."""
    v = _literal_value(node)
    return v is not None and (v != 0 if least is None else v >= least)


def _maybe_int(node: ast.AST) -> bool:
    """Whether compiled code may compute ``node`` as an integer (values held in the compiled
    state are float64; integers come from literals, ``int()``, ``len()``, ``round()`` and
    arithmetic on them, and function arguments, which keep their expression's type)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return node.id not in ("True", "False", "None")
    if isinstance(node, ast.Call):
        f = node.func
        return isinstance(f, ast.Name) and f.id in ("int", "len", "round", "abs", "min", "max")
    if isinstance(node, ast.UnaryOp):
        return _maybe_int(node.operand)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Div, ast.MatMult)):
        return _maybe_int(node.left) and _maybe_int(node.right)
    if isinstance(node, ast.IfExp):
        return _maybe_int(node.body) or _maybe_int(node.orelse)
    return isinstance(node, ast.Subscript)


class Emitter:
    """Writes one syntax-tree node as source, dispatching on the node type (``_BinOp``, ...)."""

    def __init__(
        self,
        rename: Callable[[str], str],
        call: Callable[[str], str],
        const: Callable[[Any], str],
        index: Callable[[str, list[str]], str] | None = None,
    ):
        self.rename = rename
        self.call = call
        self.const = const
        self.index = index
        self.checked: Callable[[str, list[str]], str] | None = None
        #: the whole expression: its own ``//``/``%`` of integers is numpy's float64 at a zero
        #: divisor, as the interpreter's value then is; one inside it is an int64
        self.top: ast.AST | None = None

    def emit(self, node: ast.AST) -> str:
        return getattr(self, "_" + type(node).__name__)(node)

    def _Constant(self, node):
        if node.value is None or isinstance(node.value, bool):
            return repr(node.value)  # a keyword
        return self.const(node.value)

    def _Name(self, node):
        if node.id in ("True", "False", "None"):
            return node.id
        return self.rename(node.id)

    def _Attribute(self, node):
        mod = node.value.id
        if node.attr in MODULES[mod][1]:
            value = MODULES[mod][1][node.attr]
            return "None" if value is None else self.const(value)
        return numpy_name(mod, node.attr)

    def _BinOp(self, node):
        left, right = self.emit(node.left), self.emit(node.right)
        if isinstance(node.op, ast.Pow) and _negative_int_literal(node.right):
            right = self.const(float(-node.right.operand.value))  # Numba's int power raises at 0
        if self.checked is not None and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            helper = "_floordiv" if isinstance(node.op, ast.FloorDiv) else "_mod"
            if node is not self.top or _int_literal(node.right):
                helper = "_i" + helper[1:]  # (an int64 of two integers: compiled/intdiv.py)
            return self.checked(helper, [left, right])
        if (
            self.checked is not None
            and isinstance(node.op, ast.Pow)
            and _maybe_int(node.left)
            and _maybe_int(node.right)
        ):
            whole = node is self.top and not _int_literal(node.right, 0)
            lit = [_literal_value(x) for x in (node.left, node.right)]
            if None not in lit:  # (the interpreter's int, or its float beyond 62 bits)
                a, b = lit
                whole = not (b >= 0 and (abs(a) <= 1 or b * abs(a).bit_length() <= 62))
            return self.checked("_ipow" if whole else "_iipow", [left, right])
        if (
            self.checked is not None
            and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult))
            and _maybe_int(node.left)
            and _maybe_int(node.right)
        ):
            helper = {ast.Add: "_iadd", ast.Sub: "_isub", ast.Mult: "_imul"}[type(node.op)]
            return self.checked(helper, [left, right])
        return f"({left} {BINOP_SRC[type(node.op)]} {right})"

    def _UnaryOp(self, node):
        return f"({UNARY_SRC[type(node.op)]}{self.emit(node.operand)})"

    def _BoolOp(self, node):
        op = " and " if isinstance(node.op, ast.And) else " or "
        return "(" + op.join(self.emit(v) for v in node.values) + ")"

    def _Compare(self, node):
        if (
            self.checked is not None
            and len(node.ops) == 1
            and (_maybe_int(node.left) or _maybe_int(node.comparators[0]))
        ):  # (an integer beyond 2**53 and a float: compiled/intdiv.py guards the float64 test)
            helper = _COMPARE_HELPERS[type(node.ops[0])]
            return self.checked(helper, [self.emit(node.left), self.emit(node.comparators[0])])
        parts = [self.emit(node.left)]
        for o, c in zip(node.ops, node.comparators):
            parts += [CMP_SRC[type(o)], self.emit(c)]
        return "(" + " ".join(parts) + ")"

    def _IfExp(self, node):
        body, orelse = self.emit(node.body), self.emit(node.orelse)
        if self.checked is not None:  # (a float branch makes both float64: compiled/intdiv.py)
            if _maybe_int(node.body) and _literal_value(node.orelse) is None:
                body = self.checked("_i53", [body])
            if _maybe_int(node.orelse) and _literal_value(node.body) is None:
                orelse = self.checked("_i53", [orelse])
        return f"({body} if {self.emit(node.test)} else {orelse})"

    def _Subscript(self, node):
        value, sl = self.emit(node.value), node.slice
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        slices = [isinstance(p, ast.Slice) for p in parts]
        if all(slices):  # slicing clamps to the bounds, as numpy does
            return f"{value}[{self.emit(sl)}]"
        if any(slices) or self.index is None:
            raise NotCompilable("an index mixed with slices is not bounds-checked")
        return self.index(value, [self.emit(p) for p in parts])

    def _Slice(self, node):
        lo = self.emit(node.lower) if node.lower else ""
        hi = self.emit(node.upper) if node.upper else ""
        st = ":" + self.emit(node.step) if node.step else ""
        return f"{lo}:{hi}{st}"

    def _Tuple(self, node):
        inner = ", ".join(self.emit(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"

    def _List(self, node):
        # numpy.array of the list, as the interpreter's list becomes wherever it is computed
        # with (Numba's np.array takes no list of arrays): see compiled/pybuiltins.py
        return "_list((" + "".join(self.emit(e) + ", " for e in node.elts) + "))"

    def _Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute):
            name = numpy_name(f.value.id, f.attr)
        elif f.id in MATH_FUNCTIONS:
            name = numpy_name("math", f.id)
        elif f.id in BUILTIN_FUNCTIONS:
            name = f.id
        else:
            name = self.call(f.id)
        if name in ("max", "min") and len(node.args) >= 2 and not node.keywords:
            # Python's max/min of several values (arrays of one element included)
            out = self.emit(node.args[0])
            for a in node.args[1:]:
                out = f"_py{name}({out}, {self.emit(a)})"
            return out
        args = [self.emit(a) for a in node.args]
        if name in ("np.array", "np.asarray") and len(node.args) == 1 and not node.keywords:
            if isinstance(node.args[0], ast.List):
                return args[0]  # already numpy.array of the list
        if name in ("np.concatenate", "np.stack", "np.hstack", "np.vstack"):
            # numpy's sequence of arrays is a tuple for Numba
            args = [
                self.emit(ast.Tuple(elts=a.elts)) if isinstance(a, ast.List) else s
                for a, s in zip(node.args, args)
            ]
        if self.checked is not None and name in _SIZED:
            args = _sized_args(name, args, node.keywords)
        if name == "int" and self.checked is not None:
            if len(args) != 1 or node.keywords:
                raise NotCompilable("int() with more than one argument")
            return self.checked("_int", args)
        for k in node.keywords:
            if k.arg not in SOURCE_KEYWORDS:
                raise NotCompilable("a keyword argument that compiled code does not take")
            value = self.emit(k.value)
            if self.checked is not None and name in _SIZED and k.arg in ("shape", "num"):
                value = f"_csize({value})"  # (compiled/sizes.py)
            args.append(f"{SOURCE_KEYWORDS[k.arg]}={value}")
        return f"{name}({', '.join(args)})"


#: numpy constructors whose result's size comes from their arguments: generated code passes
#: the size through a check (compiled/sizes.py) before the array is made
_SIZED = frozenset(
    "np.zeros np.ones np.full np.empty np.linspace np.arange np.eye np.identity np.tile".split()
)


def _sized_args(name: str, args: list[str], keywords: list[ast.keyword]) -> list[str]:
    """``args`` (positional, already source) of a call of the constructor ``name`` with its
    size argument checked against the bound on an array's elements (compiled/sizes.py)."""
    args = list(args)
    if name in ("np.zeros", "np.ones", "np.full", "np.empty") and args:
        args[0] = f"_csize({args[0]})"
    elif name == "np.linspace" and len(args) >= 3:
        args[2] = f"_csize({args[2]})"
    elif name == "np.identity" and args:
        args[0] = f"_csize2({args[0]}, {args[0]})"
    elif name == "np.eye" and args:
        m = args[1] if len(args) >= 2 and not any(k.arg == "M" for k in keywords) else args[0]
        args[0] = f"_csize2({args[0]}, {m})"
    elif name == "np.arange" and len(args) == 1 and not keywords:
        args[0] = f"_csize({args[0]})"
    elif name == "np.arange" and len(args) in (2, 3) and not keywords:
        step = args[2] if len(args) == 3 else "1"
        args[1] = f"_crange({args[0]}, {args[1]}, {step})"
    elif name == "np.tile" and len(args) == 2:
        args[1] = f"_ctile({args[0]}, {args[1]})"
    return args
