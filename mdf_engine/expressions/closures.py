"""A checked expression's syntax tree turned into nested Python closures ``env -> value``:
the evaluator the interpreted backend calls (no ``eval``, no generated code)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import MDFError
from .functions import BUILTIN_FUNCTIONS, MATH_FUNCTIONS, MODULES
from .operators import BINOPS, CMP, UNARY


def fail(msg: str, where: str, text: str) -> MDFError:
    """An MDFError for ``msg`` about the expression ``text`` (shortened) at field ``where``."""
    shown = text if len(text) <= 80 else text[:77] + "..."
    return MDFError(f"{msg} in expression {shown!r}", where)


class ClosureBuilder:
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
                raise fail(f"unknown name '{name}'", where, text) from None

        return lookup

    def _Attribute(self, node: ast.Attribute):
        funcs, consts = MODULES[node.value.id]  # checked by parse
        v = consts[node.attr] if node.attr in consts else funcs[node.attr]
        return lambda env: v

    def _BinOp(self, node: ast.BinOp):
        op = BINOPS[type(node.op)]
        left, right = self.build(node.left), self.build(node.right)
        return lambda env: op(left(env), right(env))

    def _UnaryOp(self, node: ast.UnaryOp):
        op = UNARY[type(node.op)]
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
        ops = [CMP[type(o)] for o in node.ops]
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
