"""How files that PsyNeuLink wrote are read: rules that apply only when the model's
``generating_application`` starts with "PsyNeuLink" (see docs/semantics.md, PsyNeuLink section).

PsyNeuLink exports a projection that has its own matrix as a node of its own, named
``<projection>_dummy_node``, with one input port, one ``onnx::MatMul`` of that port by a constant
matrix, and one output port, between a ``_dummy_pre_edge`` from the sender and a
``_dummy_post_edge`` to the receiver. In PsyNeuLink the projection is part of the receiver's
input, not a step of the schedule: :func:`fold_projection_nodes` replaces each such node and its
two edges by one edge that carries the matrix (``EdgePlan.matrix``: the receiver gets
``sender_value @ matrix``, as the MatMul computes it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .model import Edge, Graph, Node

_SUFFIX = "_dummy_node"


def is_psyneulink(model: Any) -> bool:
    """The model says PsyNeuLink wrote it (``generating_application``)."""
    app = str(getattr(model, "generating_application", None) or "")
    return app.lower().startswith("psyneulink")


def _projection_matrix(node: Node) -> np.ndarray | None:
    """The constant matrix of a PsyNeuLink projection node, or None if ``node`` is not one."""
    if (
        not node.id.endswith(_SUFFIX)
        or node.parameters
        or len(node.input_ports) != 1
        or len(node.functions) != 1
        or len(node.output_ports) != 1
    ):
        return None
    f, port, out = node.functions[0], node.input_ports[0], node.output_ports[0]
    args = f.args or {}
    if (
        f.function != "onnx::MatMul"
        or args.get("A") != port.id
        or out.value != f.id
        or isinstance(args.get("B"), str)
        or args.get("B") is None
    ):
        return None
    try:
        return np.asarray(args["B"], dtype=float)
    except (TypeError, ValueError):
        return None


def fold_projection_nodes(graph: Graph) -> Graph:
    """``graph`` with every PsyNeuLink projection node folded into the edge it stands for (an
    edge whose ``parameters`` hold ``matrix``); unchanged if it has none."""
    matrices = {n.id: m for n in graph.nodes if (m := _projection_matrix(n)) is not None}
    if not matrices:
        return graph
    into = {e.receiver: e for e in graph.edges if e.receiver in matrices}
    edges = []
    for e in graph.edges:
        if e.receiver in matrices:
            continue
        if e.sender in matrices and e.sender in into:
            pre = into[e.sender]
            weight = _weight(pre) * _weight(e)
            edges.append(
                Edge(
                    id=e.id,
                    sender=pre.sender,
                    sender_port=pre.sender_port,
                    receiver=e.receiver,
                    receiver_port=e.receiver_port,
                    parameters={"weight": weight, "matrix": matrices[e.sender]},
                )
            )
            continue
        edges.append(e)
    folded = {n for n in matrices if n in into}
    nodes = [n for n in graph.nodes if n.id not in folded]
    cs = graph.conditions
    if cs is not None and any(n in folded for n in cs.node_specific):
        cs = replace(
            cs, node_specific={k: v for k, v in cs.node_specific.items() if k not in folded}
        )
    return replace(graph, nodes=nodes, edges=edges, conditions=cs)


def _weight(e: Edge) -> Any:
    w = e.weight
    return np.asarray(w) if isinstance(w, list) else w


def not_compiled_reason(plan: Any, scheduler: Any, initializer: Any = None) -> str | None:
    """Why the compiled backend's node-by-node mode (graph-scheduler runs the schedule) cannot
    run a PsyNeuLink file with PsyNeuLink's rules, or None: an edge between two nodes that one
    time step may run together (they read values from before the step), or an input node that
    may run more than once in an update (it reads its input every time). The whole-graph loop
    has both rules (backends/compiled/pnl_rules.py)."""
    if not plan.psyneulink:
        return None
    # (projection matrices on edges compile: the compiled loop multiplies by them)
    sets = [{str(n) for n in cs} for cs in scheduler.consideration_queue]
    for ep in plan.edges:
        if any(ep.sender in s and ep.receiver in s for s in sets):
            return (
                f"edge '{ep.id}' joins nodes of one time step, which read values from "
                "before the step in PsyNeuLink files (not compiled)"
            )
    ports = set(initializer or ())
    for nid, np_ in plan.nodes.items():
        if ports & {ip.id for ip in np_.inputs} and not _runs_once(nid, plan, scheduler):
            return (
                f"input node '{nid}' may run more than once per trial and reads its "
                "input every time in PsyNeuLink files (not compiled)"
            )
    return None


def _runs_once(nid: str, plan: Any, scheduler: Any) -> bool:
    """``nid`` runs at most once per update: its condition is AtPass(0), or every node's
    condition is Always (or none) and the update ends when every node has run
    (graph-scheduler's default termination)."""
    import graph_scheduler

    conds = scheduler.conditions.conditions_basic
    cond = next((c for n, c in conds.items() if str(n) == nid), None)
    if isinstance(cond, graph_scheduler.AtPass) and cond.args and cond.args[0] == 0:
        return True
    term = scheduler.termination_conds.get(graph_scheduler.TimeScale.ENVIRONMENT_STATE_UPDATE)
    # (AllHaveRun ends the update after one pass only when no node waits for others' calls)
    always = all(type(c).__name__ == "Always" for c in conds.values())
    return always and type(term).__name__ == "AllHaveRun"


#: A DDM mechanism's value (PsyNeuLink's DDM indices) from its DriftDiffusionAnalytical
#: function's result (rt, er, then the six conditional RT moments)
_DDM_VALUE = {
    1: "{f}[0]",
    2: "1 - {f}[1]",
    3: "{f}[1]",
    **{k: f"{{f}}[{k - 2}]" for k in range(4, 10)},
}


def ddm_outputs(graph: Graph) -> Graph:
    """``graph`` with the output ports of PsyNeuLink DDM mechanisms (analytical) reading the
    mechanism's value layout, which the export indexes but does not write out: index 0 the
    decision variable, 1 the response time, 2/3 the probabilities of the upper/lower bound,
    4-9 the conditional RT moments. PsyNeuLink draws the decision variable's sign at random
    (-threshold with the probability of the lower bound); here it is the more likely bound."""
    nodes = []
    for n in graph.nodes:
        f = next((f for f in n.functions if f.function == "driftdiffusionanalytical"), None)
        if f is None or (n.metadata or {}).get("type") != "DDM":
            nodes.append(n)
            continue
        thr = (f.args or {}).get("threshold")
        ports = []
        for op in n.output_ports:
            value = op.value
            for k in range(10):
                if value == f"{f.id}[{k}]":
                    if k == 0 and isinstance(thr, (int, float)):
                        value = f"{thr} - 2 * {thr} * ({f.id}[1] > 0.5)"
                    elif k:
                        value = _DDM_VALUE[k].format(f=f.id)
                    break
            ports.append(replace(op, value=value))
        nodes.append(replace(n, output_ports=ports))
    return replace(graph, nodes=nodes)
