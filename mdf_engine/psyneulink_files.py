"""How files that PsyNeuLink wrote are read: rules that apply only when the model's
``generating_application`` starts with "PsyNeuLink" (see docs/semantics.md, PsyNeuLink section).

PsyNeuLink exports a projection that has its own matrix as a node of its own, named
``<projection>_dummy_node``, with one input port, one ``onnx::MatMul`` of that port by a constant
matrix, and one output port, between a ``_dummy_pre_edge`` from the sender and a
``_dummy_post_edge`` to the receiver. In PsyNeuLink the projection is part of the receiver's
input, not a step of the schedule: :func:`fold_projection_nodes` replaces each such node and its
two edges by one edge that carries the matrix (``EdgePlan.matrix``: the receiver gets
``sender_value @ matrix``, as the MatMul computes it). Written with
``simple_edge_format=False``, a projection is one edge whose ``metadata.functions`` holds that
MatMul: :func:`edge_matrices` puts its matrix on the edge alike.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from .model import Edge, Graph, Node

_SUFFIX = "_dummy_node"


def is_psyneulink(model: Any) -> bool:
    """The model says PsyNeuLink wrote it (``generating_application``)."""
    app = str(getattr(model, "generating_application", None) or "")
    return app.lower().startswith("psyneulink")


def writer_version(model: Any) -> tuple[int, ...] | None:
    """The PsyNeuLink release that wrote ``model`` ("PsyNeuLink v0.15.3.0" -> (0, 15, 3, 0)),
    or None if the model does not say."""
    m = re.match(
        r"psyneulink v?(\d+(?:\.\d+)*)", str(getattr(model, "generating_application", "")), re.I
    )
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


#: PsyNeuLink 0.15's Logistic (before 0.16.0): ``offset`` inside the exponential
_OLD_LOGISTIC = "scale / (1 + exp(-gain * (variable0 + bias - x_0) + offset))"
_LOGISTIC_DEFAULTS = {"gain": 1.0, "bias": 0.0, "x_0": 0.0, "scale": 1.0, "offset": 0.0}


def older_writer(graph: Graph, model: Any) -> Graph:
    """``graph`` as the PsyNeuLink release that wrote it meant it, where that release's files
    differ from 0.17+ (docs/semantics.md, PsyNeuLink files):

    * before 0.16 a ``logistic`` adds ``offset`` inside the exponential: such a call becomes
      the value expression of that formula over the same arguments;
    * before 0.17 the sum of several projections into one port is indexed ``variable0[0][0]``
      (the writer's ports held ``(1, n)`` values); ports here hold their declared shape, as
      PsyNeuLink's do, so the sum is ``variable0[0]``.
    """
    v = writer_version(model)
    if v is None or v >= (0, 17):
        return graph
    nodes = []
    for n in graph.nodes:
        fs = []
        for f in n.functions:
            if f.id.endswith("_dimreduce") and f.value == "variable0[0][0]":
                f = replace(f, value="variable0[0]")
            elif v < (0, 16) and f.function == "logistic" and f.value is None:
                f = replace(
                    f,
                    function=None,
                    args={**_LOGISTIC_DEFAULTS, **(f.args or {})},
                    value=_OLD_LOGISTIC,
                )
            fs.append(f)
        nodes.append(replace(n, functions=fs))
    return replace(graph, nodes=nodes)


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


def _metadata_matrix(edge: Edge) -> np.ndarray | None:
    """The constant matrix of a projection that PsyNeuLink wrote as a plain edge
    (``simple_edge_format=False``): its function, in the edge's ``metadata.functions``, is one
    ``onnx::MatMul`` of the sender's value by a constant ``B``. None if the edge has none."""
    fs = (edge.metadata or {}).get("functions")
    if not isinstance(fs, dict) or len(fs) != 1:
        return None
    f = next(iter(fs.values()))
    if not isinstance(f, dict) or f.get("function") != "onnx::MatMul":
        return None
    b = (f.get("args") or {}).get("B")
    if b is None or isinstance(b, str):
        return None
    try:
        m = np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return None
    return m if m.ndim == 2 else None


def edge_matrices(graph: Graph) -> Graph:
    """``graph`` with the matrix of every projection that PsyNeuLink wrote as a plain edge
    with its function in the edge's metadata (``simple_edge_format=False``) on that edge's
    ``parameters`` (``matrix``), as :func:`fold_projection_nodes` puts a projection node's."""
    edges = []
    changed = False
    for e in graph.edges:
        m = None if "matrix" in (e.parameters or {}) else _metadata_matrix(e)
        if m is not None:
            e = replace(e, parameters={**(e.parameters or {}), "matrix": m})
            changed = True
        edges.append(e)
    return replace(graph, edges=edges) if changed else graph


def fold_projection_nodes(graph: Graph) -> Graph:
    """``graph`` with every PsyNeuLink projection node folded into the edge it stands for (an
    edge whose ``parameters`` hold ``matrix``); unchanged if it has none."""
    matrices = {n.id: m for n in graph.nodes if (m := _projection_matrix(n)) is not None}
    if not matrices:
        return graph
    # folded: a projection node with one edge in, from a node that stays (any other shape, a
    # self-loop or a second sender, is left a node of its own: its MatMul computes the same)
    incoming: dict[str, list[Edge]] = {}
    for e in graph.edges:
        if e.receiver in matrices:
            incoming.setdefault(e.receiver, []).append(e)
    into = {
        nid: es[0] for nid, es in incoming.items() if len(es) == 1 and es[0].sender not in matrices
    }
    edges = []
    for e in graph.edges:
        if e.receiver in into:
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


def to_port_shape(value: Any, shape: tuple[int, ...] | None) -> Any:
    """What a projection delivers to an input port of declared ``shape``: PsyNeuLink shapes a
    projection's value as its receiver port's variable, so a value with as many elements takes
    the port's shape (a ``[[7.0]]`` sent into a port of shape ``[1]`` becomes ``[7.0]``, and
    the ports combined into one input stack evenly); any other value is left as it is."""
    if shape is None:
        return value
    a = np.asarray(value)
    if a.shape == tuple(shape) or a.dtype == object or a.size != int(np.prod(shape)):
        return value
    return a.reshape(shape)


def not_compiled_reason(
    plan: Any,
    scheduler: Any,
    initializer: Any = None,
    initial: Any = None,
    whole_loop: bool = False,
) -> str | None:
    """Why the compiled backend cannot run a PsyNeuLink file with PsyNeuLink's rules (it runs
    the reference ones), or None: an edge between two nodes
    that one time step may run together (they read values from before the step), a node that
    may run before a sender whose initial value (``initial(node)``: its outputs from default
    inputs) is not zero, or an input node that may run more than once in an update (it reads
    its input every time). ``whole_loop``: the compiled whole-graph loop, which has these
    rules (backends/compiled/pnl_rules.py): nothing to refuse (``scheduler`` and ``initial``
    are not read)."""
    if not plan.psyneulink or whole_loop:
        return None
    # (projection matrices on edges compile: the compiled loop multiplies by them)
    sets = [{str(n) for n in cs} for cs in scheduler.consideration_queue]
    for ep in plan.edges:
        if any(ep.sender in s and ep.receiver in s for s in sets):
            return (
                f"edge '{ep.id}' joins nodes of one time step, which read values from "
                "before the step in PsyNeuLink files (not compiled)"
            )
    conds = {str(n): c for n, c in scheduler.conditions.conditions_basic.items()}
    for ep in plan.edges:
        if _sender_runs_first(ep.sender, ep.receiver, conds):
            continue
        first = initial(ep.sender) if initial is not None else None
        if first is None or np.any(np.asarray(first[ep.sender_port], dtype=float) != 0):
            return (
                f"node '{ep.receiver}' may run before its sender '{ep.sender}', whose initial "
                "value it then reads in PsyNeuLink files (not compiled)"
            )
    ports = set(initializer or ())
    for nid, np_ in plan.nodes.items():
        if ports & {ip.id for ip in np_.inputs} and not _runs_once(nid, plan, scheduler):
            return (
                f"input node '{nid}' may run more than once per trial and reads its "
                "input every time in PsyNeuLink files (not compiled)"
            )
    return None


#: conditions under which a node runs only after a call of their ``dependency``
_AFTER_DEPENDENCY = ("EveryNCalls", "AfterNCalls", "AfterCall", "AfterNCallsCombined")


def _sender_runs_first(sender: str, receiver: str, conds: dict[str, Any]) -> bool:
    """The receiver's condition lets it run only after ``sender`` ran: it waits for calls of
    the sender or of a node that itself waits for the sender, it starts at a later pass than
    the sender's ``AtPass``, or both run under Always (the sender first in each pass)."""
    seen = set()
    node = receiver
    while node not in seen:
        seen.add(node)
        c = conds.get(node)
        if type(c).__name__ not in _AFTER_DEPENDENCY:
            break
        node = str(getattr(c, "dependency", None) or (c.args[0] if c.args else None))
        if node == sender:
            return True
    rc, sc = conds.get(receiver), conds.get(sender)
    rn, sn = type(rc).__name__, type(sc).__name__
    if rn == "AfterNPasses" and sn == "AtPass":
        return _first_arg(sc, "n") < _first_arg(rc, "n")
    return rn in ("NoneType", "Always") and sn in ("NoneType", "Always")


def _first_arg(c: Any, name: str) -> Any:
    return getattr(c, name, None) if getattr(c, name, None) is not None else c.args[0]


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
