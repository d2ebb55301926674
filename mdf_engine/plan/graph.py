"""Planning a graph: every node's ports, parameters, functions (in dependency order) and
outputs, and the edges between nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..expressions import names_in
from ..model import Graph, Model, Node, Parameter
from ..psyneulink_files import ddm_outputs, edge_matrices, fold_projection_nodes, older_writer
from ..psyneulink_mechanisms import mechanism_values, recurrent_projections
from .calls import plan_call, preferred_namespace
from .conventions import fresh_parameters_in_calls, number_bare_output_ports
from .libraries import expression_functions, graph_function_names, load_function_libraries
from .parts import CallPlan, EdgePlan, GraphPlan, InputPlan, NodePlan, ParameterPlan
from .values import value_plan

SCHEDULING_MODES = ("standard", "exact_time")


def plan_graph(
    model: Model | None, graph: Graph, source: str | None = None, scheduling_mode: str = "standard"
) -> GraphPlan:
    """Check and compile a graph for execution (``scheduling_mode``: graph-scheduler's
    standard mode or ``"exact_time"``, PsyNeuLink's ``SchedulingMode.EXACT_TIME``)."""
    where = f"graphs.{graph.id}"
    if scheduling_mode not in SCHEDULING_MODES:
        raise MDFError(
            f"unknown scheduling mode '{scheduling_mode}' (choose from "
            f"{', '.join(SCHEDULING_MODES)})"
        )
    opset = getattr(model, "onnx_opset_version", None) if model is not None else None
    prefer = preferred_namespace(model)
    if prefer == "pnl":
        graph = fold_projection_nodes(older_writer(graph, model))
        graph = mechanism_values(ddm_outputs(edge_matrices(recurrent_projections(graph))))
    load_function_libraries(graph_function_names(graph))
    funcs = expression_functions()
    try:
        nodes = {
            n.id: _plan_node(n, f"{where}.nodes.{n.id}", funcs, opset, prefer) for n in graph.nodes
        }
    except MDFError as e:
        if source and not e.source:
            raise MDFError(e.message, e.path, source) from None
        raise
    edges = []
    for e in graph.edges:
        w = e.weight
        if isinstance(w, list):
            w = np.asarray(w)
        has_weight = not (isinstance(w, (int, float)) and not isinstance(w, bool) and w == 1)
        matrix = (e.parameters or {}).get("matrix") if prefer == "pnl" else None
        edges.append(
            EdgePlan(
                e.id, e.sender, e.sender_port, e.receiver, e.receiver_port, w, has_weight, matrix
            )
        )
    incoming: dict[str, list[EdgePlan]] = {n: [] for n in nodes}
    for ep in edges:
        incoming[ep.receiver].append(ep)
    return GraphPlan(graph, nodes, edges, incoming, opset, where, scheduling_mode, prefer == "pnl")


def _plan_node(
    node: Node, where: str, funcs: Mapping[str, Any], opset: int | None, prefer: str | None = None
) -> NodePlan:
    inputs = [
        InputPlan(
            p.id,
            p.shape,
            p.type,
            np.array(p.default_value) if isinstance(p.default_value, list) else p.default_value,
            p.reduce,
        )
        for p in node.input_ports
    ]
    port_ids = {p.id for p in node.input_ports}
    param_ids = {p.id for p in node.parameters}
    # Node functions: dependency order (repeated passes), seeing ports and all parameters.
    known = set(port_ids) | param_ids
    pending = list(node.functions)
    ordered: list[tuple[str, CallPlan]] = []
    ids = known | {f.id for f in node.functions}

    def _names(text: str) -> set[str]:
        return {text} if text in ids else names_in(text)

    while pending:
        progressed = False
        for f in list(pending):
            fw = f"{where}.functions.{f.id}"
            needed = set()
            for v in (f.args or {}).values():
                if isinstance(v, str):
                    needed |= _names(v) - set(f.args or {})
            if isinstance(f.value, str):
                needed |= _names(f.value) - set(f.args or {})
            if needed <= known:
                ordered.append((f.id, plan_call(f, fw, funcs, known, opset, prefer, param_ids)))
                known.add(f.id)
                pending.remove(f)
                progressed = True
        if not progressed:
            f = pending[0]
            missing = sorted(
                set().union(
                    *[_names(v) for v in (f.args or {}).values() if isinstance(v, str)],
                    _names(f.value) if isinstance(f.value, str) else set(),
                )
                - known
                - set(f.args or {})
            )
            raise MDFError(
                f"unknown name '{missing[0] if missing else '?'}' (functions may "
                "not depend on each other in a cycle)",
                f"{where}.functions.{f.id}",
            )
    known_params = port_ids | param_ids | {fid for fid, _ in ordered}
    params = [
        _plan_parameter(
            p, f"{where}.parameters.{p.id}", funcs, known_params, opset, prefer, param_ids
        )
        for p in node.parameters
    ]
    outputs = [
        (o.id, value_plan(o.value, f"{where}.output_ports.{o.id}.value", funcs, known_params))
        for o in node.output_ports
    ]
    number_bare_output_ports(params, outputs)
    if prefer == "pnl":
        fresh_parameters_in_calls(ordered, params, port_ids)
    return NodePlan(node.id, inputs, ordered, params, outputs, where)


def _plan_parameter(
    p: Parameter,
    where: str,
    funcs: Mapping[str, Any],
    known: set[str],
    opset: int | None,
    prefer: str | None = None,
    sibling_params: set[str] | frozenset[str] = frozenset(),
) -> ParameterPlan:
    plan = ParameterPlan(id=p.id, stateful=p.is_stateful())
    if p.value is not None:
        plan.value = value_plan(p.value, f"{where}.value", funcs, known)
    elif p.function is not None:
        plan.call = plan_call(p, where, funcs, known, opset, prefer, sibling_params)
    elif p.time_derivative is not None:
        plan.derivative = value_plan(p.time_derivative, f"{where}.time_derivative", funcs, known)
    if p.default_initial_value is not None:
        plan.initial = value_plan(
            p.default_initial_value, f"{where}.default_initial_value", funcs, known
        )
    for i, c in enumerate(p.conditions):
        cw = f"{where}.conditions.{c.id or i}"
        plan.conditions.append(
            (
                c.id,
                value_plan(c.test, f"{cw}.test", funcs, known),
                value_plan(c.value, f"{cw}.value", funcs, known),
            )
        )
    return plan
