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
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import MDFError, NotCompilable

MAX_EXPRESSION_LENGTH = 20_000
MAX_AST_NODES = 5_000
#: Deepest nesting of an expression (``x+x+...+x`` of 800 terms nests 800 levels): deeper ones
#: are refused with an error naming the field instead of exhausting Python's recursion limit.
MAX_EXPRESSION_DEPTH = 100

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

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: Most elements an expression may create in one array, string or list (larger requests are
#: refused with MDFError instead of exhausting memory).
MAX_RESULT_ELEMENTS = 10**8


def _too_big(n: float, what: str) -> None:
    if n > MAX_RESULT_ELEMENTS:
        raise MDFError(f"{what} would have {n:.3g} elements; the limit is {MAX_RESULT_ELEMENTS}")


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
        _too_big(math.prod(shape), "the result")


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
            _too_big(len(seq) * n, "the repeated sequence")
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
        _too_big(a.size / max(a.shape[-1], 1) * (b.size / max(b.shape[-2], 1)), "the product")
    return a @ b


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: _add,
    ast.Sub: _sub,
    ast.Mult: _mul,
    ast.Div: _truediv,
    ast.FloorDiv: _floordiv,
    ast.Mod: _mod,
    ast.Pow: _pow,
    ast.MatMult: _matmul,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_BINOP_SRC = {
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
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_UNARY_SRC = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not ", ast.Invert: "~"}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_CMP_SRC = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Name,
    ast.Constant,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Attribute,
    ast.Load,
    ast.keyword,
    ast.And,
    ast.Or,
    *_BINOPS,
    *_UNARY,
    *_CMP,
)


@dataclass(frozen=True)
class Expr:
    """A checked expression: its text, its free variable names, and its evaluator."""

    text: str
    tree: ast.Expression
    names: frozenset[str]
    functions: frozenset[str]
    _fn: Callable[[Mapping[str, Any]], Any]
    where: str = ""

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """The value of the expression with variables taken from ``env``; a failure (a shape
        mismatch, a bad index, a too large array) raises MDFError naming ``where``."""
        try:
            return self._fn(env)
        except MDFError as e:
            if e.path or not self.where:
                raise
            raise MDFError(e.message, self.where, e.source) from None
        except (
            ArithmeticError,
            ValueError,
            TypeError,
            IndexError,
            KeyError,
            MemoryError,
            RecursionError,
        ) as e:
            raise MDFError(f"evaluation failed: {type(e).__name__}: {e}", self.where) from None

    @property
    def is_constant(self) -> bool:
        return not self.names and not self.functions

    def is_bare_name(self) -> bool:
        return isinstance(self.tree.body, ast.Name)

    def matmul_operands(self) -> tuple[str, str] | None:
        """``(a, b)`` when the expression is exactly ``a @ b`` of two names, else None."""
        b = self.tree.body
        if (
            isinstance(b, ast.BinOp)
            and isinstance(b.op, ast.MatMult)
            and isinstance(b.left, ast.Name)
            and isinstance(b.right, ast.Name)
        ):
            return b.left.id, b.right.id
        return None


def _fail(msg: str, where: str, text: str) -> MDFError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return MDFError(f"{msg} in expression {shown!r}", where)


def parse(text: str, where: str = "", functions: Mapping[str, Callable] | None = None) -> Expr:
    """Parse and check ``text``; ``functions`` are extra callable names (registered functions).

    Raises :class:`MDFError` naming ``where`` for anything outside the safe subset.
    """
    if not isinstance(text, str):
        raise MDFError(f"expected an expression string, got {type(text).__name__}", where)
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise MDFError(
            f"expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_LENGTH}",
            where,
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise _fail(f"syntax error ({e.msg})", where, text) from None
    except (RecursionError, MemoryError, ValueError):
        raise _fail("expression nested too deeply", where, text) from None
    depth = _depth(tree)
    if depth > MAX_EXPRESSION_DEPTH:
        raise _fail(f"nested more than {MAX_EXPRESSION_DEPTH} levels deep (the limit)", where, text)
    count = 0
    names: set[str] = set()
    called: set[str] = set()
    extra = functions or {}
    for node in ast.walk(tree):
        count += 1
        if count > MAX_AST_NODES:
            raise _fail(f"more than {MAX_AST_NODES} terms", where, text)
        if not isinstance(node, _ALLOWED_NODES):
            raise _fail(f"'{type(node).__name__}' is not allowed", where, text)
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise _fail(f"name '{node.id}' is not allowed", where, text)
        if isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id in MODULES):
                raise _fail(f"attribute access '.{node.attr}' is not allowed", where, text)
            funcs, consts = MODULES[node.value.id]
            if node.attr not in funcs and node.attr not in consts:
                raise _fail(
                    f"'{node.value.id}.{node.attr}' is not an allowed function", where, text
                )
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute):
                if f.attr not in MODULES.get(getattr(f.value, "id", ""), ({}, {}))[0]:
                    raise _fail(f"'{ast.unparse(f)}' is not callable", where, text)
            elif isinstance(f, ast.Name):
                if (
                    f.id not in BUILTIN_FUNCTIONS
                    and f.id not in extra
                    and f.id not in MATH_FUNCTIONS
                ):
                    raise _fail(f"unknown function '{f.id}'", where, text)
                called.add(f.id)
            else:
                raise _fail("only named functions can be called", where, text)
            for kw in node.keywords:
                if kw.arg is None:
                    raise _fail("'**' arguments are not allowed", where, text)
        if isinstance(node, ast.Dict) and any(
            k is None or not isinstance(k, ast.Constant) for k in node.keys
        ):
            raise _fail("dict keys must be constants", where, text)
        if isinstance(node, ast.Constant) and not isinstance(
            node.value, (int, float, complex, str, bool, type(None))
        ):
            raise _fail("unsupported constant", where, text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not _is_call_target(node, tree):
            if node.id not in MODULES and node.id not in ("True", "False", "None"):
                names.add(node.id)
    builder = _ClosureBuilder(extra, where, text)
    fn = builder.build(tree.body)
    return Expr(
        text=text,
        tree=tree,
        names=frozenset(names),
        functions=frozenset(called),
        _fn=fn,
        where=where,
    )


def _depth(tree: ast.AST) -> int:
    """How deeply ``tree`` nests, counted without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_EXPRESSION_DEPTH + 1:
            break
        stack.extend(
            (child, d + 1)
            for child in ast.iter_child_nodes(node)
            if not isinstance(
                child, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
            )
        )
    return deepest


def _is_call_target(name: ast.Name, tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.func is name:
            return True
    return False


def names_in(text: Any) -> set[str]:
    """Free variable names of an expression string (empty for non-strings or bad syntax)."""
    if not isinstance(text, str):
        return set()
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and id(n) not in calls and n.id not in MODULES
    }


def looks_numeric(text: str) -> Any:
    """The number a string spells (``"1"``, ``"2.5"``), else None: the reference reads such
    strings as numbers, not expressions."""
    try:
        return int(text)
    except (TypeError, ValueError):
        pass
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


class _ClosureBuilder:
    """Turns a checked AST into nested Python closures ``env -> value``."""

    def __init__(self, functions: Mapping[str, Callable], where: str, text: str):
        self.functions = functions
        self.where = where
        self.text = text

    def build(self, node: ast.AST) -> Callable[[Mapping[str, Any]], Any]:
        method = getattr(self, "_" + type(node).__name__)
        return method(node)

    def _Constant(self, node: ast.Constant):
        v = node.value
        return lambda env: v

    def _Name(self, node: ast.Name):
        name = node.id
        if name == "True":
            return lambda env: True
        if name == "False":
            return lambda env: False
        if name == "None":
            return lambda env: None
        where, text = self.where, self.text

        def lookup(env):
            try:
                return env[name]
            except KeyError:
                raise _fail(f"unknown name '{name}'", where, text) from None

        return lookup

    def _Attribute(self, node: ast.Attribute):
        funcs, consts = MODULES[node.value.id]  # checked by parse
        v = consts[node.attr] if node.attr in consts else funcs[node.attr]
        return lambda env: v

    def _BinOp(self, node: ast.BinOp):
        op = _BINOPS[type(node.op)]
        left, right = self.build(node.left), self.build(node.right)
        return lambda env: op(left(env), right(env))

    def _UnaryOp(self, node: ast.UnaryOp):
        op = _UNARY[type(node.op)]
        operand = self.build(node.operand)
        return lambda env: op(operand(env))

    def _BoolOp(self, node: ast.BoolOp):
        parts = [self.build(v) for v in node.values]
        if isinstance(node.op, ast.And):

            def f_and(env):
                v = True
                for p in parts:
                    v = p(env)
                    if not v:
                        return v
                return v

            return f_and

        def f_or(env):
            v = False
            for p in parts:
                v = p(env)
                if v:
                    return v
            return v

        return f_or

    def _Compare(self, node: ast.Compare):
        left = self.build(node.left)
        ops = [_CMP[type(o)] for o in node.ops]
        rights = [self.build(c) for c in node.comparators]
        if len(ops) == 1:
            op, right = ops[0], rights[0]
            return lambda env: op(left(env), right(env))

        def chain(env):
            a = left(env)
            result = True
            for op, r in zip(ops, rights):
                b = r(env)
                result = op(a, b)
                if not result:
                    return result
                a = b
            return result

        return chain

    def _IfExp(self, node: ast.IfExp):
        test, body, orelse = self.build(node.test), self.build(node.body), self.build(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def _Subscript(self, node: ast.Subscript):
        value, index = self.build(node.value), self.build(node.slice)
        return lambda env: value(env)[index(env)]

    def _Slice(self, node: ast.Slice):
        lo = self.build(node.lower) if node.lower else (lambda env: None)
        hi = self.build(node.upper) if node.upper else (lambda env: None)
        st = self.build(node.step) if node.step else (lambda env: None)
        return lambda env: slice(lo(env), hi(env), st(env))

    def _Tuple(self, node: ast.Tuple):
        parts = [self.build(e) for e in node.elts]
        return lambda env: tuple(p(env) for p in parts)

    def _List(self, node: ast.List):
        parts = [self.build(e) for e in node.elts]
        return lambda env: [p(env) for p in parts]

    def _Dict(self, node: ast.Dict):
        keys = [k.value for k in node.keys]
        values = [self.build(v) for v in node.values]
        return lambda env: {k: v(env) for k, v in zip(keys, values)}

    def _Call(self, node: ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            target = MODULES[f.value.id][0][f.attr]
        elif f.id in self.functions:
            target = self.functions[f.id]
        elif f.id in BUILTIN_FUNCTIONS:
            target = BUILTIN_FUNCTIONS[f.id]
        else:
            target = MATH_FUNCTIONS[f.id]
        args = [self.build(a) for a in node.args]
        kwargs = [(k.arg, self.build(k.value)) for k in node.keywords]
        if not kwargs:
            return lambda env: target(*[a(env) for a in args])
        return lambda env: target(*[a(env) for a in args], **{k: v(env) for k, v in kwargs})


# ---------------------------------------------------------------------------------------------
# Source emission for the compiled backend


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
    ``//`` and ``%`` are ``checked(helper, operands)`` (``_int``, ``_floordiv``, ``_mod``):
    the semantics of docs/semantics.md, "One numeric semantics"."""
    emitter = _Emitter(rename, call, const, index)
    emitter.checked = checked
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


class _Emitter:
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
        return _numpy_name(mod, node.attr)

    def _BinOp(self, node):
        left, right = self.emit(node.left), self.emit(node.right)
        if isinstance(node.op, ast.Pow) and _negative_int_literal(node.right):
            right = self.const(float(-node.right.operand.value))  # Numba's int power raises at 0
        if self.checked is not None and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            helper = "_floordiv" if isinstance(node.op, ast.FloorDiv) else "_mod"
            return self.checked(helper, [left, right])
        if (
            self.checked is not None
            and isinstance(node.op, ast.Pow)
            and _maybe_int(node.left)
            and _maybe_int(node.right)
        ):
            return self.checked("_ipow", [left, right])
        if (
            self.checked is not None
            and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult))
            and _maybe_int(node.left)
            and _maybe_int(node.right)
        ):
            helper = {ast.Add: "_iadd", ast.Sub: "_isub", ast.Mult: "_imul"}[type(node.op)]
            return self.checked(helper, [left, right])
        return f"({left} {_BINOP_SRC[type(node.op)]} {right})"

    def _UnaryOp(self, node):
        return f"({_UNARY_SRC[type(node.op)]}{self.emit(node.operand)})"

    def _BoolOp(self, node):
        op = " and " if isinstance(node.op, ast.And) else " or "
        return "(" + op.join(self.emit(v) for v in node.values) + ")"

    def _Compare(self, node):
        parts = [self.emit(node.left)]
        for o, c in zip(node.ops, node.comparators):
            parts += [_CMP_SRC[type(o)], self.emit(c)]
        return "(" + " ".join(parts) + ")"

    def _IfExp(self, node):
        return f"({self.emit(node.body)} if {self.emit(node.test)} else {self.emit(node.orelse)})"

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
        return "np.array([" + ", ".join(self.emit(e) for e in node.elts) + "])"

    def _Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute):
            name = _numpy_name(f.value.id, f.attr)
        elif f.id in MATH_FUNCTIONS:
            name = _numpy_name("math", f.id)
        elif f.id in BUILTIN_FUNCTIONS:
            name = f.id
        else:
            name = self.call(f.id)
        args = [self.emit(a) for a in node.args]
        if name == "int" and self.checked is not None:
            if len(args) != 1 or node.keywords:
                raise NotCompilable("int() with more than one argument")
            return self.checked("_int", args)
        for k in node.keywords:
            if k.arg not in SOURCE_KEYWORDS:
                raise NotCompilable("a keyword argument that compiled code does not take")
            args.append(f"{SOURCE_KEYWORDS[k.arg]}={self.emit(k.value)}")
        return f"{name}({', '.join(args)})"


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


class _ElementEmitter(_Emitter):
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


def _numpy_name(module: str, attr: str) -> str:
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
        _too_big(n, f"np.{name}(...)")
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
    if _numpy_name("math", _name).startswith("np.") and hasattr(
        np, _MATH_TO_NUMPY.get(_name, _name)
    ):
        MATH_FUNCTIONS[_name] = _numpy_fallback(_name, MATH_FUNCTIONS[_name])
del _name
