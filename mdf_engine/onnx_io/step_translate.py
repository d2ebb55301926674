"""Expression translation for stateful exports: the stateless :class:`Translator` plus the few
numpy forms dynamical MDF models use.

Added to what :mod:`mdf_engine.onnx_io.translate` exports:

* ``a % b``: numpy's floored modulo, written ``a - floor(a / b) * b`` (ONNX ``Mod`` has no
  floored form for floats);
* ``numpy.where(c, a, b)`` (``Where``), ``numpy.sum(x)`` / ``numpy.sum(x, axis=k)``
  (``ReduceSum``), ``numpy.mean`` likewise (``ReduceMean``);
* ``x[k]`` with a constant integer ``k`` on a tensor (``Gather`` on axis 0);
* list displays ``[a, b, ...]`` of values of one shape (``Unsqueeze`` + ``Concat``).

Also :func:`safe_name`: an ASCII ONNX name for any MDF id (model text is data: ids with odd
unicode, spaces or punctuation never reach a name unescaped).
"""

from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

from ..errors import MDFError
from .translate import Translator, Val
from .vocabulary import COMPARE

__all__ = ["StepTranslator", "safe_name"]


def safe_name(*parts: str) -> str:
    """``parts`` joined by ``_`` as an ASCII name (letters, digits, ``_``); never empty."""
    s = "_".join(re.sub(r"[^0-9A-Za-z_]", "_", str(p)) for p in parts)
    s = re.sub(r"_{3,}", "__", s).strip("_") or "v"
    return s if not s[0].isdigit() else "v_" + s


def _integral(v: Val) -> bool:
    """An int64 value, or a constant integer."""
    if v.name is not None:
        return v.kind == "int"
    return (
        v.multi is None and isinstance(v.const, (int, np.integer)) and not isinstance(v.const, bool)
    )


def const_array(v: Any) -> Any:
    """A model constant as ONNX can hold it: a numeric array, or an MDFError."""
    if isinstance(v, (list, tuple)):
        try:
            return np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise MDFError(
                "a constant list that is not a numeric array cannot be exported"
            ) from None
    if isinstance(v, dict) or isinstance(v, str):
        raise MDFError(f"a constant {type(v).__name__} cannot be exported to ONNX")
    return v


class StepTranslator(Translator):
    """A :class:`Translator` that also knows ``%``, ``numpy.where``/``sum``/``mean``,
    constant indexing and list displays."""

    def carried(self, ep: Any, v: Val, et: str) -> Val:
        """The sender's value ``v`` as edge ``ep`` carries it: times its folded PsyNeuLink
        projection matrix (sender @ matrix), then times its weight."""
        if ep.matrix is not None:
            m = self.materialize(Val(const=const_array(ep.matrix)), et + "_matrix", "float")
            v = self.op("MatMul", [self.as_kind(v, "float", et), m], et + "_projected", "float")
        if ep.has_weight:
            w = self.materialize(Val(const=const_array(ep.weight)), et + "_weight", "float")
            v = self.op("Mul", [self.as_kind(v, "float", et), w], et + "_weighted", "float")
        return v

    def emit(self, n: ast.AST, target: str, scope: dict[str, Val], what: str) -> Val:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod):
            a = self.as_kind(self.emit(n.left, target, scope, what), "float", target + "_a")
            c = self.as_kind(self.emit(n.right, target, scope, what), "float", target + "_b")
            q = self.op("Div", [a, c], target + "_q", "float")
            f = self.op("Floor", [q], target + "_f", "float")
            m = self.op("Mul", [f, c], target + "_m", "float")
            return self.op("Sub", [a, m], target, "float")
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and type(n.ops[0]) in COMPARE:
            # counters (int64) compared with integers stay integers: no Cast
            a = self.emit(n.left, target, scope, what)
            c = self.emit(n.comparators[0], target, scope, what)
            if _integral(a) and _integral(c) and (a.name or c.name):
                a = self.materialize(a, target + "_a", "int")
                c = self.materialize(c, target + "_b", "int")
                return self.op(COMPARE[type(n.ops[0])], [a, c], target, "bool")
        if isinstance(n, ast.BoolOp):
            vals = [
                self.as_kind(self.emit(e, f"{target}_{k}", scope, what), "bool", f"{target}_{k}")
                for k, e in enumerate(n.values)
            ]
            op = "And" if isinstance(n.op, ast.And) else "Or"
            out = vals[0]
            for k, v in enumerate(vals[1:]):
                out = self.op(op, [out, v], f"{target}_{op.lower()}{k}", "bool")
            return out
        if isinstance(n, ast.Subscript):
            v = self.emit(n.value, target, scope, what)
            idx = n.slice
            if v.multi is None and isinstance(idx, ast.Constant) and type(idx.value) is int:
                if v.name is None:
                    try:
                        return Val(const=np.asarray(v.const)[idx.value])
                    except (IndexError, TypeError):
                        raise MDFError(
                            f"index {idx.value} out of range", f"{self.where}.{what}"
                        ) from None
                k = self.materialize(Val(const=idx.value), target + "_index", "int")
                return self.op("Gather", [v, k], target, v.kind)
        if isinstance(n, ast.Tuple):
            # a tuple (PsyNeuLink's FitzHugh-Nagumo returns (v, w, time)): its items may differ
            # in rank, so it stays a set of values, read back by constant index as f[k] is
            if not n.elts:
                raise MDFError("an empty tuple cannot be exported", f"{self.where}.{what}")
            vals = [self.emit(e, f"{target}_{k}", scope, what) for k, e in enumerate(n.elts)]
            items = [self.materialize(v, f"{target}_{k}") for k, v in enumerate(vals)]
            return Val(multi=[v.name for v in items], kinds=[v.kind for v in items])
        if isinstance(n, ast.List):
            if not n.elts:
                raise MDFError("an empty list cannot be exported", f"{self.where}.{what}")
            vals = [self.emit(e, f"{target}_{k}", scope, what) for k, e in enumerate(n.elts)]
            if all(v.name is None and v.multi is None for v in vals):
                return Val(const=np.asarray([v.const for v in vals], dtype=float))
            axes = self.materialize(Val(const=np.asarray([0])), target + "_axes", "int")
            parts = []
            for k, v in enumerate(vals):
                x = self.as_kind(v, "float", f"{target}_{k}")
                parts.append(self.op("Unsqueeze", [x, axes], f"{target}_{k}_u", "float"))
            out = self.b.fresh(target)
            self.b.node("Concat", [p.name for p in parts], [out], self.node_name(target), axis=0)
            return Val(out, "float")
        return super().emit(n, target, scope, what)

    def call(self, n: ast.Call, target: str, scope: dict[str, Val], what: str) -> Val:
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        owner = getattr(f.value, "id", "") if isinstance(f, ast.Attribute) else ""
        if owner in ("np", "numpy") or not isinstance(f, ast.Attribute):
            if fname == "where" and len(n.args) == 3 and not n.keywords:
                c = self.as_kind(self.emit(n.args[0], target, scope, what), "bool", target + "_c")
                a = self.as_kind(self.emit(n.args[1], target, scope, what), "float", target + "_a")
                e = self.as_kind(self.emit(n.args[2], target, scope, what), "float", target + "_b")
                return self.op("Where", [c, a, e], target, "float")
            if fname in ("sum", "mean") and owner and len(n.args) == 1:
                return self._reduce(n, fname, target, scope, what)
        return super().call(n, target, scope, what)

    def _reduce(
        self, n: ast.Call, fname: str, target: str, scope: dict[str, Val], what: str
    ) -> Val:
        axis: Any = None
        for kw in n.keywords:
            if kw.arg != "axis" or not isinstance(kw.value, (ast.Constant, ast.UnaryOp)):
                raise MDFError(
                    f"numpy.{fname} is exported with a constant axis only", f"{self.where}.{what}"
                )
            axis = ast.literal_eval(kw.value)
            if type(axis) is not int:
                raise MDFError(f"numpy.{fname}: axis must be an integer", f"{self.where}.{what}")
        x = self.as_kind(self.emit(n.args[0], target, scope, what), "float", target + "_x")
        op = "ReduceSum" if fname == "sum" else "ReduceMean"
        inputs = [x.name]
        attrs: dict[str, Any] = {"keepdims": 0}
        if axis is not None:
            if op == "ReduceSum" or self.b.opset >= 18:
                inputs.append(self.b.initializer(np.asarray([axis]), target + "_axes", "int"))
            else:
                attrs["axes"] = [axis]
        out = self.b.fresh(target)
        self.b.node(op, inputs, [out], self.node_name(target), **attrs)
        return Val(out, "float")

    def _input(self, text: Any, formal: Any, sch: Any, name: str, what: str) -> str:
        # an ``axes`` input given as one number (our engine accepts it) is a 1-D tensor in ONNX
        if getattr(formal, "name", "") == "axes":
            v = self.expr(text, name, what)
            if v.name is None and v.multi is None and np.ndim(v.const) == 0:
                text = [int(v.const)]
        return super()._input(text, formal, sch, name, what)
