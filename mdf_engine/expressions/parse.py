"""Parsing and checking: an expression string becomes an :class:`Expr` only if every node of its
syntax tree belongs to the whitelisted subset (see :mod:`mdf_engine.expressions`), within the
limits on length, size and nesting below."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import EVALUATION_ERRORS, MDFError, evaluation_failed
from .closures import ClosureBuilder, fail
from .functions import BUILTIN_FUNCTIONS, MATH_FUNCTIONS, MODULES
from .operators import BINOPS, CMP, UNARY

MAX_EXPRESSION_LENGTH = 20_000
MAX_AST_NODES = 5_000
#: Deepest nesting of an expression (``x+x+...+x`` of 800 terms nests 800 levels): deeper ones
#: are refused with an error naming the field instead of exhausting Python's recursion limit.
MAX_EXPRESSION_DEPTH = 100


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
    *BINOPS,
    *UNARY,
    *CMP,
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
        except EVALUATION_ERRORS as e:
            raise evaluation_failed(e, self.where) from None

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
        raise fail(f"syntax error ({e.msg})", where, text) from None
    except (RecursionError, MemoryError, ValueError):
        raise fail("expression nested too deeply", where, text) from None
    depth = _depth(tree)
    if depth > MAX_EXPRESSION_DEPTH:
        raise fail(f"nested more than {MAX_EXPRESSION_DEPTH} levels deep (the limit)", where, text)
    if "pow" not in (functions or {}):  # (after the depth check: the rewrite recurses)
        tree = _PowAsOperator().visit(tree)
    count = 0
    names: set[str] = set()
    called: set[str] = set()
    extra = functions or {}
    for node in ast.walk(tree):
        count += 1
        if count > MAX_AST_NODES:
            raise fail(f"more than {MAX_AST_NODES} terms", where, text)
        if not isinstance(node, _ALLOWED_NODES):
            raise fail(f"'{type(node).__name__}' is not allowed", where, text)
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise fail(f"name '{node.id}' is not allowed", where, text)
        if isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id in MODULES):
                raise fail(f"attribute access '.{node.attr}' is not allowed", where, text)
            funcs, consts = MODULES[node.value.id]
            if node.attr not in funcs and node.attr not in consts:
                raise fail(f"'{node.value.id}.{node.attr}' is not an allowed function", where, text)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute):
                if f.attr not in MODULES.get(getattr(f.value, "id", ""), ({}, {}))[0]:
                    raise fail(f"'{ast.unparse(f)}' is not callable", where, text)
            elif isinstance(f, ast.Name):
                if (
                    f.id not in BUILTIN_FUNCTIONS
                    and f.id not in extra
                    and f.id not in MATH_FUNCTIONS
                ):
                    raise fail(f"unknown function '{f.id}'", where, text)
                called.add(f.id)
            else:
                raise fail("only named functions can be called", where, text)
            for kw in node.keywords:
                if kw.arg is None:
                    raise fail("'**' arguments are not allowed", where, text)
        if isinstance(node, ast.Dict) and any(
            k is None or not isinstance(k, ast.Constant) for k in node.keys
        ):
            raise fail("dict keys must be constants", where, text)
        if isinstance(node, ast.Constant) and not isinstance(
            node.value, (int, float, complex, str, bool, type(None))
        ):
            raise fail("unsupported constant", where, text)
    _check_spelling(tree, text.strip(), where, text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not _is_call_target(node, tree):
            if node.id not in MODULES and node.id not in ("True", "False", "None"):
                names.add(node.id)
    builder = ClosureBuilder(extra, where, text)
    fn = builder.build(tree.body)
    return Expr(
        text=text,
        tree=tree,
        names=frozenset(names),
        functions=frozenset(called),
        _fn=fn,
        where=where,
    )


class _PowAsOperator(ast.NodeTransformer):
    """``pow(a, b)`` is ``a ** b``, with its guards and numeric semantics on every backend
    (Python's ``pow(10, 10**10)`` computed a 4 GB integer for minutes, Numba's ``pow`` of two
    integers wrapped around 64 bits, and ``pow(-8, 0.5)`` was complex where ``**`` is NaN)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "pow" and len(node.args) == 2:
            if not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
                return ast.copy_location(ast.BinOp(node.args[0], ast.Pow(), node.args[1]), node)
        return node


def _check_spelling(tree: ast.Expression, source: str, where: str, text: str) -> None:
    """Every name reads as it is written. Python's parser folds identifiers to Unicode NFKC
    (``ｋ`` and the Kelvin sign ``K`` read as ``k`` and ``K``): an expression naming the id
    ``ｋ`` would silently read the parameter ``k`` instead, so such a spelling is refused."""
    if source.isascii():
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            written = ast.get_source_segment(source, node)
            if written is not None and written != node.id:
                raise fail(
                    f"the name {written!a} reads as {node.id!a} (Python folds names to Unicode "
                    "NFKC), so it cannot name an id spelled otherwise",
                    where,
                    text,
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
