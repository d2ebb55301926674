"""A function call of a parameter or node function bound to its registered schema: which version
of a shared name (the writer's namespace first), which arguments are inputs and which are
attributes (ONNX attributes also taken from sibling parameters, pytorch_to_mdf's lists of
input names spread out)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import MDFError
from ..model import Function, Model, Parameter
from ..registry import REGISTRY, OpSchema
from .libraries import load_function_libraries
from .parts import CallPlan, ValuePlan
from .values import attribute_value, value_plan


def preferred_namespace(model: Model | None) -> str | None:
    """The namespace whose version of a shared bare name (``linear``, ``logistic``, ...) a model
    means: ``pnl`` for files PsyNeuLink wrote (its functions take more arguments, and its
    logistic adds ``offset`` outside the exponential), else the default version."""
    app = str(getattr(model, "generating_application", None) or "")
    return "pnl" if app.lower().startswith("psyneulink") else None


def _choose_version(schema: OpSchema, args: Mapping[str, Any], prefer: str | None) -> OpSchema:
    """Among the versions registered under ``schema.name`` in other namespaces, take the ``prefer`` namespace's one; else keep ``schema`` if the arguments bind,
    otherwise the first other version they bind to (so a PsyNeuLink-style call of ``linear``
    with ``scale``/``offset`` finds the ``pnl`` version)."""
    others = [v for v in REGISTRY.versions(schema.name) if v.namespace != schema.namespace]
    if not others:
        return schema
    if prefer is not None:
        for v in others:
            if v.namespace == prefer:
                return v
    bound = {k: k for k in args}
    try:
        schema.bind(bound)
        return schema
    except MDFError:
        pass
    for v in others:
        try:
            v.bind(bound)
            return v
        except MDFError:
            continue
    return schema


def plan_call(
    owner: Parameter | Function,
    where: str,
    funcs: Mapping[str, Any],
    known: set[str],
    opset: int | None,
    prefer: str | None = None,
    sibling_params: set[str] | frozenset[str] = frozenset(),
) -> CallPlan:
    """The call of ``owner`` (a parameter or node function) bound to its registered function,
    or its ``value`` over its ``args`` when it names no function."""
    args = dict(owner.args or {})
    fname = owner.function
    if "opset" in args:
        opset = args.pop("opset")
    schema = None
    if fname is not None:
        load_function_libraries([fname])
        name = fname if fname in REGISTRY else _alias(fname)
        if prefer != "pnl" and _only_pnl(name):  # PsyNeuLink's "relu" is not others' "Relu"
            name = _alias(fname, skip=name)
        schema = REGISTRY.lookup(
            name, opset if name.startswith("onnx::") else None, f"{where}.function"
        )
        if "::" not in name:
            schema = _choose_version(schema, args, prefer)
        elif name.startswith("onnx::"):
            args.update(_sibling_attributes(schema, args, sibling_params, owner.id))
            args = _spread_name_list(schema, args, known)
    arg_plans: list[tuple[str, ValuePlan]] = []
    scope = set(known)
    attr_names = set(schema.attributes) if schema is not None else set()
    for k, v in args.items():
        w = f"{where}.args.{k}"
        if schema is not None and k in attr_names and isinstance(v, str):
            plan = attribute_value(v, w, funcs, scope)
        else:
            plan = value_plan(v, w, funcs, scope, "argument")
        arg_plans.append((k, plan))
        scope.add(k)
    call = CallPlan(name=fname or "", schema=schema, args=arg_plans)
    if schema is None:
        if getattr(owner, "value", None) is None:
            raise MDFError("a function needs a 'function' name or a 'value'", where)
        call.value = value_plan(owner.value, f"{where}.value", funcs, scope)
        return call
    bound = {k: k for k in args}
    inputs, attrs = schema.bind(bound, f"{where}.args")
    call.input_names = inputs
    call.attribute_names = list(attrs)
    return call


def _sibling_attributes(
    schema: OpSchema, args: Mapping[str, Any], params: Iterable[str], own_id: str
) -> dict[str, str]:
    """ONNX attributes given as parameters of the calling node rather than in ``args``, as
    modeci-mdf's ``onnx_to_mdf`` and ``pytorch_to_mdf`` write them (``transB``, ``alpha``,
    ``kernel_shape``, ...): the reference engine binds every node parameter named like an
    attribute of the op to that attribute, and so do we (an attribute in ``args`` wins)."""
    return {p: p for p in params if p in schema.attributes and p not in args and p != own_id}


def _spread_name_list(schema: OpSchema, args: dict[str, Any], known: set[str]) -> dict[str, Any]:
    """pytorch_to_mdf writes a variadic op's inputs as the text of a Python list of names,
    ``"['_10', '_11']"``: they are the op's inputs in that order (the reference engine instead
    feeds every value in scope to a variadic op)."""
    if not (schema.variadic and schema.inputs) or not isinstance(args.get(schema.inputs[0]), str):
        return args
    first = schema.inputs[0]
    try:
        names = ast.literal_eval(args[first].strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return args
    if not (
        isinstance(names, list) and names and all(isinstance(n, str) and n in known for n in names)
    ):
        return args
    out: dict[str, Any] = {}
    for k, v in args.items():
        if k != first:
            out[k] = v
            continue
        out[first] = names[0]
        for i, n in enumerate(names[1:], start=1):
            key = f"{first}{i}"
            while key in args or key in schema.attributes:
                key += "_"
            out[key] = n
    return out


def _alias(fname: str, skip: str | None = None) -> str:
    """Spellings seen in files: ``onnx_ops.add`` -> ``onnx::Add`` is not guessed; only
    case-insensitive matches of a registered name (other than ``skip``) are accepted."""
    lowered = {n.lower(): n for n in REGISTRY.names() if n != skip}
    return lowered.get(fname.lower(), fname)


def _only_pnl(name: str) -> bool:
    """``name`` is registered by PsyNeuLink's functions alone (a file of another writer
    spelling it means the case-insensitive match of another name, if there is one)."""
    return name in REGISTRY and all(v.namespace == "pnl" for v in REGISTRY.versions(name))
