"""Writers' conventions applied to a planned node: modeci-mdf's onnx_to_mdf/pytorch_to_mdf output
ports that each take one output of a multi-output op, and PsyNeuLink's parameters that a call
reads fresh."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from ..expressions import Expr
from .parts import CallPlan, ParameterPlan, ValuePlan


def number_bare_output_ports(
    params: list[ParameterPlan], outputs: list[tuple[str, ValuePlan]]
) -> None:
    """modeci-mdf's onnx_to_mdf gives every output port of a node the value ``<function id>``,
    one port per ONNX output the node uses: with a multi-output op (MaxPool, LSTM, Dropout) the
    k-th such port is the op's k-th output, and the op computes only as many outputs as there
    are ports. (The reference engine puts the whole tuple on every port, which the next op
    cannot read.) Only when nothing else in the node uses the call's value."""
    for pp in params:
        call = pp.call
        if (
            call is None
            or call.schema is None
            or len(call.schema.outputs) < 2
            or not call.name.startswith("onnx::")
        ):
            continue
        bare = [
            i
            for i, (_, vp) in enumerate(outputs)
            if vp.expr is not None and vp.expr.is_bare_name() and vp.expr.names == {pp.id}
        ]
        users = [vp for _, vp in outputs if pp.id in vp.names] + [
            v
            for q in params
            if q is not pp
            for v in (q.value, q.derivative, q.initial)
            if v is not None and pp.id in v.names
        ]
        wanted = _indexed_only(pp.id, users)
        if wanted is not None:
            # pytorch_to_mdf's ``f[0]``: index the outputs, even when the op returns only one
            call.keep_tuple = True
            call.outputs_wanted = wanted
            continue
        if not bare or len(users) != len(bare):
            continue
        call.outputs_wanted = len(bare)
        if len(bare) == 1:
            continue
        for k, i in enumerate(bare):
            oid, vp = outputs[i]
            outputs[i] = (oid, ValuePlan(expr=_output_ref(pp.id, k, vp.expr.where), text=vp.text))


def _indexed_only(name: str, users: list[ValuePlan]) -> int | None:
    """When every use of ``name`` in ``users`` is ``name[<int>]``: one more than the largest
    index; else None."""
    top = -1
    for vp in users:
        tree = vp.expr.tree if vp.expr is not None else None
        if tree is None:
            return None
        indexed = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == name
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, int)
                and node.slice.value >= 0
            ):
                indexed.add(id(node.value))
                top = max(top, node.slice.value)
        if any(
            isinstance(n, ast.Name) and n.id == name and id(n) not in indexed
            for n in ast.walk(tree)
        ):
            return None
    return top + 1 if top >= 0 else None


def _output_ref(name: str, k: int, where: str) -> Expr:
    """``name[k]`` as a syntax tree: output ``k`` of the multi-output call ``name``."""
    tree = ast.Expression(
        body=ast.Subscript(
            value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(value=k), ctx=ast.Load()
        )
    )

    def fetch(env: Mapping[str, Any]) -> Any:
        return env[name][k]

    return Expr(
        text=f"{name}[{k}]",
        tree=tree,
        names=frozenset({name}),
        functions=frozenset(),
        _fn=fetch,
        where=where,
    )


def fresh_parameters_in_calls(
    ordered: list[tuple[str, CallPlan]], params: list[ParameterPlan], port_ids: set[str]
) -> None:
    """PsyNeuLink files: a function that uses a stateless parameter whose value is an
    expression over input ports (e.g. ``<port>_combination_function_input_data = [port_a,
    port_b]``) means this execution's value of it, not the previous one that functions see
    under the reference order (functions before parameters). Such parameters are evaluated
    again as the first arguments of the calls that use them."""
    fresh = {
        pp.id: pp.value
        for pp in params
        if not pp.stateful
        and pp.value is not None
        and pp.value.expr is not None
        and not pp.conditions
        and pp.value.names <= port_ids
    }
    if not fresh:
        return
    for _, call in ordered:
        used = set().union(*(v.names for _, v in call.args)) if call.args else set()
        if call.value is not None:
            used |= call.value.names
        own = {name for name, _ in call.args}
        extra = [(pid, vp) for pid, vp in fresh.items() if pid in used and pid not in own]
        if extra:
            call.args[:0] = extra
