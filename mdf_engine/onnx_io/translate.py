"""Translation of MDF expressions, standard functions and ``onnx::`` calls into ONNX nodes.

:class:`Builder` collects the ONNX nodes, initializers and unique value names of one export;
:class:`Translator` turns one MDF node's values (expression text, a standard function with its
arguments, an ``onnx::`` call) into ONNX nodes, tracking each value's element kind (``float`` in the
export dtype, ``int`` as int64, ``bool``) and inserting ``Cast`` where ONNX types require it.
Used by :mod:`mdf_engine.onnx_io.exporter`, which handles graphs, ports and edges.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from ..expressions import looks_numeric, parse
from ..model import Node
from .vocabulary import (  # noqa: F401 - re-exported: the tables the translator reads
    BINARY_CALLS,
    BINOPS,
    COMPARE,
    CONSTANTS,
    ELEM,
    KIND_TYPE,
    OPSET_FLOOR,
    STD_ARGS,
    STD_FORMULAS,
    TYPE_STR,
    UNARY_CALLS,
)

__all__ = ["Val", "Builder", "Translator", "STD_FORMULAS", "OPSET_FLOOR", "ELEM"]


@dataclass
class Val:
    """An ONNX value: its name, element kind ('float', 'int' or 'bool'), or a constant."""

    name: str | None = None
    kind: str = "float"
    const: Any = None
    multi: list[str] | None = None
    hint: str | None = None
    kinds: list[str] | None = None
    typed: bool = False  # a numpy constant of the model: its dtype is kept where ONNX allows


class Builder:
    """Collects ONNX nodes, initializers and unique names while a graph is translated."""

    def __init__(self, dtype: str, opset: int):
        from onnx import helper

        self.helper = helper
        self.dtype = np.dtype(dtype)
        self.opset = opset
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.names: set[str] = set()
        self.const_cache: dict[tuple[int, str], tuple[str, Any]] = {}

    def fresh(self, base: str) -> str:
        out, k = base, 1
        while out in self.names:
            out = f"{base}_{k}"
            k += 1
        self.names.add(out)
        return out

    def node(self, op: str, inputs: list[str], outputs: list[str], name: str, **attrs: Any) -> None:
        self.nodes.append(
            self.helper.make_node(op, inputs, outputs, name=self.fresh(name), **attrs)
        )

    def initializer(self, value: Any, name: str, kind: str = "float") -> str:
        """An initializer for a constant (floats in the export dtype, ints as int64)."""
        from onnx import numpy_helper

        try:  # a model's constant may be anything a file holds (a dict, a ragged list)
            arr = np.asarray(value)
            if kind == "int":
                arr = arr.astype(np.int64)
            elif kind == "bool":
                arr = arr.astype(bool)
            elif kind != "asis":
                arr = arr.astype(self.dtype)
        except (TypeError, ValueError, OverflowError) as e:
            raise MDFError(
                f"the constant for {name!r:.60} is not a numeric array: {value!r:.60} ({e})"
            ) from None
        key = (id(value), kind)
        hit = self.const_cache.get(key)
        if hit is not None and hit[1] is value:  # the same constant object used again
            return hit[0]
        nm = self.fresh(name)
        self.inits.append(numpy_helper.from_array(arr, nm))
        if not np.isscalar(value):
            self.const_cache[key] = (nm, value)  # keeps value alive, so its id stays its own
        return nm


def _onnx_schema(op: str, opset: int) -> Any:
    import onnx.defs

    try:
        return onnx.defs.get_schema(op, opset, "")
    except Exception:
        raise MDFError(f"ONNX has no operator '{op}' at opset {opset}") from None


def _allowed(schema: Any, formal: Any) -> set[str]:
    ts = formal.type_str
    for c in schema.type_constraints:
        if c.type_param_str == ts:
            return set(c.allowed_type_strs)
    return {ts}


class Translator:
    """Translates one node's parameters, functions and output ports into ONNX nodes."""

    def __init__(self, b: Builder, node: Node, where: str, scope: dict[str, Val]):
        self.b = b
        self.node = node
        self.where = where
        self.scope = scope

    def node_name(self, target: str) -> str:
        """ONNX node name ``NODE/rest`` for a value named ``NODE_rest``."""
        prefix = self.node.id + "_"
        return self.node.id + "/" + target[len(prefix) :] if target.startswith(prefix) else target

    # -- values ------------------------------------------------------------------------------
    def materialize(self, v: Val, name: str, kind: str | None = None) -> Val:
        """A value with an ONNX name; constants become initializers of ``kind``."""
        if v.multi is not None:
            raise MDFError(
                "a function with several outputs is used without an index (write f[0], f[1], ...)",
                self.where,
            )
        if v.name is not None:
            return v
        c = v.const
        name = v.hint or name
        if kind is None:
            arr = np.asarray(c)
            kind = "bool" if arr.dtype == bool else "float"
        if kind == "asis":
            dt = np.asarray(c).dtype
            out_kind = "bool" if dt.kind == "b" else ("int" if dt.kind in "iu" else "float")
            return Val(self.b.initializer(c, name, kind), out_kind)
        return Val(self.b.initializer(c, name, kind), kind)

    def as_kind(self, v: Val, kind: str, name: str) -> Val:
        v = self.materialize(v, name, kind)
        if v.kind == kind:
            return v
        out = self.b.fresh(f"{name}_cast")
        to = {"float": ELEM[self.b.dtype.name], "int": 7, "bool": 9}[kind]
        self.b.node("Cast", [v.name], [out], self.node_name(f"{name}_cast"), to=to)
        return Val(out, kind)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, text: Any, target: str, what: str, scope: dict[str, Val] | None = None) -> Val:
        """The value of an MDF value/argument (constant or expression) as a Val."""
        scope = self.scope if scope is None else scope
        if not isinstance(text, str):
            if text is None:
                raise MDFError(f"{what} has no value", self.where)
            return Val(const=np.asarray(text) if isinstance(text, list) else text)
        num = looks_numeric(text)
        if num is not None:
            return Val(const=num)
        parse(text, f"{self.where}.{what}", _expr_functions())  # the engine's own checks
        tree = ast.parse(text.strip(), mode="eval").body
        return self.emit(tree, target, scope, what)

    def emit(self, n: ast.AST, target: str, scope: dict[str, Val], what: str) -> Val:
        if isinstance(n, ast.Constant):
            if isinstance(n.value, (bool, int, float)):
                return Val(const=n.value)
            raise MDFError(f"constant {n.value!r} cannot be exported", f"{self.where}.{what}")
        if isinstance(n, ast.Name):
            if n.id in scope:
                return scope[n.id]
            if n.id in CONSTANTS:
                return Val(const=CONSTANTS[n.id])
            if n.id in ("True", "False"):
                return Val(const=n.id == "True")
            raise MDFError(f"unknown name '{n.id}'", f"{self.where}.{what}")
        if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") in ("math", "np", "numpy"):
            if n.attr in CONSTANTS:
                return Val(const=CONSTANTS[n.attr])
        if isinstance(n, ast.UnaryOp):
            v = self.emit(n.operand, target, scope, what)
            if isinstance(n.op, ast.UAdd):
                return v
            if isinstance(n.op, ast.USub):
                if v.name is None and v.multi is None:
                    return Val(
                        const=-np.asarray(v.const) if isinstance(v.const, np.ndarray) else -v.const
                    )
                x = self.as_kind(v, "float", target)
                return self.op("Neg", [x], target, "float")
            if isinstance(n.op, ast.Not):
                x = self.as_kind(v, "bool", target)
                return self.op("Not", [x], target, "bool")
        if isinstance(n, ast.BinOp):
            if type(n.op) is ast.FloorDiv:
                a = self.as_kind(self.emit(n.left, target, scope, what), "float", target + "_a")
                c = self.as_kind(self.emit(n.right, target, scope, what), "float", target + "_b")
                q = self.op("Div", [a, c], target + "_div", "float")
                return self.op("Floor", [q], target, "float")
            op = BINOPS.get(type(n.op))
            if op is None:
                raise MDFError(
                    f"operator '{ast.unparse(n)}' has no ONNX export (supported: + - * / // ** @)",
                    f"{self.where}.{what}",
                )
            a = self.as_kind(self.emit(n.left, target, scope, what), "float", target + "_a")
            c = self.as_kind(self.emit(n.right, target, scope, what), "float", target + "_b")
            return self.op(op, [a, c], target, "float")
        if isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                raise MDFError("chained comparisons cannot be exported", f"{self.where}.{what}")
            cmp = type(n.ops[0])
            a = self.as_kind(self.emit(n.left, target, scope, what), "float", target + "_a")
            c = self.as_kind(
                self.emit(n.comparators[0], target, scope, what), "float", target + "_b"
            )
            if cmp is ast.NotEq:
                eq = self.op("Equal", [a, c], target + "_eq", "bool")
                return self.op("Not", [eq], target, "bool")
            if cmp in (ast.LtE, ast.GtE) and self.b.opset < 12:  # no LessOrEqual before 12
                strict = self.op(
                    "Greater" if cmp is ast.LtE else "Less", [a, c], target + "_strict", "bool"
                )
                return self.op("Not", [strict], target, "bool")
            if cmp not in COMPARE:
                raise MDFError(
                    f"comparison '{ast.unparse(n)}' cannot be exported", f"{self.where}.{what}"
                )
            return self.op(COMPARE[cmp], [a, c], target, "bool")
        if isinstance(n, ast.Subscript):
            v = self.emit(n.value, target, scope, what)
            idx = n.slice
            if v.multi is not None and isinstance(idx, ast.Constant) and isinstance(idx.value, int):
                if not 0 <= idx.value < len(v.multi):
                    raise MDFError(f"output index {idx.value} out of range", f"{self.where}.{what}")
                return Val(v.multi[idx.value], (v.kinds or ["float"] * len(v.multi))[idx.value])
            raise MDFError(
                f"subscript '{ast.unparse(n)}' cannot be exported (only f[k] of a "
                "function with several outputs)",
                f"{self.where}.{what}",
            )
        if isinstance(n, ast.IfExp):
            c = self.as_kind(self.emit(n.test, target, scope, what), "bool", target + "_c")
            a = self.as_kind(self.emit(n.body, target, scope, what), "float", target + "_a")
            e = self.as_kind(self.emit(n.orelse, target, scope, what), "float", target + "_b")
            return self.op("Where", [c, a, e], target, "float")
        if isinstance(n, ast.Call):
            return self.call(n, target, scope, what)
        raise MDFError(f"'{ast.unparse(n)}' cannot be exported to ONNX", f"{self.where}.{what}")

    def call(self, n: ast.Call, target: str, scope: dict[str, Val], what: str) -> Val:
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        qualified = isinstance(f, ast.Attribute)
        n_given = len(n.args) + len(n.keywords)
        if not qualified and fname in STD_FORMULAS and (fname not in UNARY_CALLS or n_given > 1):
            args = STD_ARGS.get(fname, ("variable0", "scale"))
            bound: dict[str, Val] = {}
            if len(n.args) > len(args):
                raise MDFError(f"{fname} takes {len(args)} arguments", f"{self.where}.{what}")
            for a_name, a in zip(args, n.args):
                bound[a_name] = self.emit(a, target + "_" + a_name, scope, what)
            for kw in n.keywords:
                bound[kw.arg] = self.emit(kw.value, target + "_" + kw.arg, scope, what)
            return self.std(fname, bound, target, what)
        if fname in UNARY_CALLS and len(n.args) == 1 and not n.keywords:
            x = self.as_kind(self.emit(n.args[0], target, scope, what), "float", target)
            return self.op(UNARY_CALLS[fname], [x], target, "float")
        if fname in BINARY_CALLS and len(n.args) == 2 and not n.keywords:
            a = self.as_kind(self.emit(n.args[0], target, scope, what), "float", target + "_a")
            c = self.as_kind(self.emit(n.args[1], target, scope, what), "float", target + "_b")
            return self.op(BINARY_CALLS[fname], [a, c], target, "float")
        if fname == "pow" and len(n.args) == 2:
            a = self.as_kind(self.emit(n.args[0], target, scope, what), "float", target + "_a")
            c = self.as_kind(self.emit(n.args[1], target, scope, what), "float", target + "_b")
            return self.op("Pow", [a, c], target, "float")
        raise MDFError(f"call '{ast.unparse(n)}' has no ONNX export", f"{self.where}.{what}")

    def std(self, fname: str, bound: dict[str, Val], target: str, what: str) -> Val:
        """A standard function: its formula translated with its arguments bound."""
        needed = STD_ARGS.get(fname, ("variable0", "scale"))
        missing = [a for a in needed if a not in bound]
        if missing:
            raise MDFError(f"{fname} needs argument '{missing[0]}'", f"{self.where}.{what}")
        tree = ast.parse(STD_FORMULAS[fname], mode="eval").body
        return self.emit(tree, target, bound, what)

    def op(self, op: str, inputs: list[Val], target: str, kind: str) -> Val:
        """One ONNX node ``op`` over named ``inputs``, its output a fresh value named after
        ``target`` of element kind ``kind`` (the stateful export builds its own nodes so)."""
        out = self.b.fresh(target)
        self.b.node(op, [v.name for v in inputs], [out], self.node_name(target))
        return Val(out, kind)

    # -- onnx:: calls ------------------------------------------------------------------------
    def onnx_call(
        self, op: str, args: dict[str, Any], target: str, what: str, n_outputs: int | None
    ) -> Val:
        from ..registry import REGISTRY

        ours = REGISTRY.lookup(f"onnx::{op}", self.b.opset, f"{self.where}.{what}")
        sch = _onnx_schema(op, self.b.opset)
        rest = dict(args)
        inputs: list[str] = []
        formals = list(sch.inputs)
        our_inputs = list(ours.inputs)
        for i, arg in enumerate(our_inputs):
            if arg not in rest:
                inputs.append("")
                continue
            text = rest.pop(arg)
            formal = formals[min(i, len(formals) - 1)]
            inputs.append(self._input(text, formal, sch, f"{target}_{arg}", f"{what}.args.{arg}"))
        if ours.variadic:
            for arg in [a for a in list(rest) if a not in ours.attributes]:
                text = rest.pop(arg)
                inputs.append(
                    self._input(text, formals[-1], sch, f"{target}_{arg}", f"{what}.args.{arg}")
                )
        while inputs and inputs[-1] == "":
            inputs.pop()
        attrs: dict[str, Any] = {}
        for k, text in rest.items():
            if k not in sch.attributes:
                if k in ours.attributes and k == "num_outputs":
                    continue
                raise MDFError(
                    f"onnx::{op} has no attribute '{k}' at opset {self.b.opset}",
                    f"{self.where}.{what}.args.{k}",
                )
            value = self._attribute(text, sch.attributes[k], f"{what}.args.{k}")
            if value is not None:
                attrs[k] = value
        n_out = n_outputs or 1
        variadic_out = sch.outputs[-1].option == sch.outputs[-1].option.Variadic
        if op == "Split":
            sizes = (
                self.expr(args["split"], f"{target}_split", f"{what}.args.split")
                if args.get("split") is not None
                else None
            )
            if sizes is not None and sizes.name is None and sizes.multi is None:
                n_out = int(np.asarray(sizes.const).size)
            elif args.get("num_outputs") is not None:
                n_out = int(args["num_outputs"])
        elif (
            not variadic_out
            and len(ours.outputs) > 1
            and len(sch.outputs) > 1
            and op not in ("BatchNormalization", "Dropout")
        ):
            n_out = min(max(n_out, len(ours.outputs)), len(sch.outputs))
        if n_outputs is not None and n_outputs > n_out:
            raise MDFError(
                f"onnx::{op} has {n_out} outputs here; index {n_outputs - 1} is used",
                f"{self.where}.{what}",
            )
        outs = [self.b.fresh(target if n_out == 1 else f"{target}_{k}") for k in range(n_out)]
        self.b.node(op, inputs, outs, self.node_name(target), **attrs)
        kinds = []
        for k in range(n_out):
            allowed = _allowed(sch, sch.outputs[min(k, len(sch.outputs) - 1)])
            kinds.append(
                "bool"
                if allowed == {"tensor(bool)"}
                else "int"
                if allowed <= {"tensor(int64)", "tensor(int32)"}
                else "float"
            )
        if n_out == 1 and n_outputs is None:
            return Val(outs[0], kinds[0])
        return Val(multi=outs, kinds=kinds)

    def _input(self, text: Any, formal: Any, sch: Any, name: str, what: str) -> str:
        v = self.expr(text, name, what)
        allowed = _allowed(sch, formal)
        float_ok = (
            f"tensor({self.b.dtype.name.replace('float32', 'float').replace('float64', 'double')})"
            in allowed
        )
        if v.name is None and v.multi is None:
            arr = np.asarray(v.const)
            if v.typed and TYPE_STR.get(arr.dtype.name) in allowed:
                return self.materialize(v, name, "asis").name
            if arr.dtype.kind in "iu" and not float_ok and "tensor(int64)" in allowed:
                return self.materialize(v, name, "int").name
            if arr.dtype == bool and "tensor(bool)" in allowed:
                return self.materialize(v, name, "bool").name
            kind = "float" if float_ok else ("int" if "tensor(int64)" in allowed else "float")
            return self.materialize(v, name, kind).name
        v = self.materialize(v, name)
        if KIND_TYPE.get(v.kind, "") in allowed or (v.kind == "float" and float_ok):
            return v.name
        if float_ok:
            return self.as_kind(v, "float", name).name
        if "tensor(int64)" in allowed:
            return self.as_kind(v, "int", name).name
        return v.name

    def _attribute(self, text: Any, attr: Any, what: str) -> Any:
        from onnx import numpy_helper
        from onnx.defs import OpSchema

        t = attr.type
        value = text
        if isinstance(text, str):
            if t in (OpSchema.AttrType.STRING,):
                return text
            v = self.expr(text, "attr", what)
            if v.name is not None or v.multi is not None:
                raise MDFError("an ONNX attribute must be a constant", f"{self.where}.{what}")
            value = v.const
        if value is None:
            return None
        if t == OpSchema.AttrType.TENSOR:
            arr = np.asarray(value)
            if arr.dtype == np.float64:
                arr = arr.astype(self.b.dtype)
            return numpy_helper.from_array(arr)
        if t == OpSchema.AttrType.INT:
            return int(np.asarray(value))
        if t == OpSchema.AttrType.FLOAT:
            return float(np.asarray(value))
        if t == OpSchema.AttrType.INTS:
            return [int(x) for x in np.asarray(value).reshape(-1)]
        if t == OpSchema.AttrType.FLOATS:
            return [float(x) for x in np.asarray(value).reshape(-1)]
        if t == OpSchema.AttrType.STRINGS:
            return [str(x) for x in value]
        return value


def _expr_functions() -> dict[str, Any]:
    from ..plan import expression_functions

    return expression_functions()
