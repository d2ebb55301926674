"""A value of a plan from MDF data: a constant, an expression over the node's known names, or
exactly one name (as a syntax tree, so that ids that are not identifiers stay data)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..expressions import Expr, looks_numeric, parse
from .parts import ValuePlan


def _name_ref(name: str, where: str) -> Expr:
    """An expression that is exactly one known name, built as a syntax tree (never from
    source text): ids that are not Python identifiers (``/fc1/Gemm``, ``fc1.weight``, ``""``,
    as modeci-mdf's ONNX and PyTorch converters write them) stay data."""
    tree = ast.Expression(body=ast.Name(id=name, ctx=ast.Load()))

    def fetch(env: Mapping[str, Any]) -> Any:
        return env[name]

    return Expr(
        text=name, tree=tree, names=frozenset({name}), functions=frozenset(), _fn=fetch, where=where
    )


def value_plan(
    v: Any, where: str, funcs: Mapping[str, Any], known: set[str] | None, what: str = "value"
) -> ValuePlan:
    """The plan of one MDF value at field ``where``: a number (also one spelled as a string), a
    list as an array, or an expression over ``known`` names (None: any), checked now."""
    if isinstance(v, str) and known is not None and v in known and not v.isidentifier():
        return ValuePlan(expr=_name_ref(v, where), text=v)
    if isinstance(v, str):
        num = looks_numeric(v)
        if num is not None:
            return ValuePlan(const=num, text=v)
        expr = parse(v, where, funcs)
        if known is not None:
            unknown = sorted(expr.names - known)
            if unknown:
                raise MDFError(
                    f"unknown name '{unknown[0]}' in {what} {v!r} (known here: "
                    f"{', '.join(sorted(known)) or 'none'})",
                    where,
                )
        if expr.is_constant:
            return ValuePlan(const=expr.evaluate({}), text=v)
        return ValuePlan(expr=expr, text=v)
    if isinstance(v, list):
        try:
            return ValuePlan(const=np.array(v), text=v)
        except ValueError:
            return ValuePlan(const=list(v), text=v)
    if v is None or isinstance(v, (bool, int, float, dict, np.ndarray, np.generic)):
        return ValuePlan(const=v, text=v)
    raise MDFError(f"unsupported value of type {type(v).__name__}", where)


def attribute_value(v: str, where: str, funcs: Mapping[str, Any], scope: set[str]) -> ValuePlan:
    """An attribute given as a string: an expression over known names, else the string itself
    (ONNX string attributes such as ``mode: "reflect"`` or an Einsum equation)."""
    try:
        plan = value_plan(v, where, funcs, scope, "argument")
    except MDFError:
        return ValuePlan(const=v, text=v)
    return plan
