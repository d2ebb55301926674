"""PsyNeuLink 0.21 files' mechanisms as PsyNeuLink ran them, where the export writes a
mechanism's behaviour beside a function's arguments or drops a part of it (rules applied only to
files whose ``generating_application`` is PsyNeuLink; docs/semantics.md, PsyNeuLink files).
:func:`mechanism_values` reads what the function's ``metadata`` holds, a mechanism's ``clip``,
its standard output ports and its integrators' state; :func:`recurrent_projections` rebuilds a
recurrent mechanism's projection onto itself. Each rule was found where a stored PsyNeuLink run
disagreed (tests/test_pnl_wide.py).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from .model import Edge, Function, Graph, Node

#: per function, the arguments PsyNeuLink 0.21 writes into ``metadata`` only (not ``args``)
_METADATA_ARGS = {
    "linearcombination": ("weights", "exponents", "operation"),
    "reduce": ("weights", "exponents", "operation"),
    "softmax": ("output",),
}

#: a standard output port (``<node>_<NAME>``) reading its mechanism's value ``{f}``, which the
#: export writes as the plain value; PsyNeuLink computes NAME of it
_STANDARD_PORTS = {
    "MEAN": "numpy.mean({f})",
    "variance": "numpy.var({f})",
    "MEDIAN": "numpy.median({f})",
    "standard_deviation": "numpy.std({f})",
    "MAX_VAL": "numpy.max({f})",
    "MAX_ABS_VAL": "numpy.max(numpy.abs({f}))",
    "MAX_INDICATOR": "1.0 * numpy.equal({f}, numpy.max({f}))",
    "MAX_ABS_INDICATOR": "1.0 * numpy.equal(numpy.abs({f}), numpy.max(numpy.abs({f})))",
}


#: functions the export calls by name whose state is the node's ``previous_value`` parameter
#: (it does not pass it)
_STATE_FUNCTIONS = ("interactiveactivationintegrator", "ornsteinuhlenbeckintegrator")


def _with_state(n: Node, fs: list[Function]) -> list[Function]:
    """The node's functions with ``previous_value`` passed where PsyNeuLink keeps it."""
    if n.get("parameters", "previous_value") is None:
        return fs
    return [
        replace(f, args={**(f.args or {}), "previous_value": "previous_value"})
        if f.function in _STATE_FUNCTIONS and "previous_value" not in (f.args or {})
        else f
        for f in fs
    ]


def _with_metadata_args(f: Function) -> Function:
    names = _METADATA_ARGS.get(str(f.function), ())
    md = f.metadata or {}
    extra = {k: md[k] for k in names if md.get(k) is not None and k not in (f.args or {})}
    if "operation" in extra:
        extra["operation"] = repr(str(extra["operation"]))
    if "output" in extra:
        extra["output"] = repr(str(extra["output"]))
    return replace(f, args={**(f.args or {}), **extra}) if extra else f


def _clip_bounds(n: Node) -> tuple[float, float] | None:
    p = n.get("parameters", "clip")
    v = getattr(p, "value", None)
    if isinstance(v, (list, tuple)) and len(v) == 2:
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return float(v[0]), float(v[1])
    return None


def _final_functions(n: Node) -> set[str]:
    """The node's functions that no other of its functions reads (the mechanism's value)."""
    ids = {f.id for f in n.functions}
    read = set()
    for f in n.functions:
        for a in (f.args or {}).values():
            read.update(w for w in re.findall(r"[A-Za-z_]\w*", str(a)) if w in ids and w != f.id)
    return ids - read


def mechanism_values(graph: Graph) -> Graph:
    """``graph`` with what PsyNeuLink 0.21 writes beside a function's arguments applied
    (docs/semantics.md, PsyNeuLink files):

    * ``linearcombination``/``reduce``'s ``weights``, ``exponents`` and ``operation`` and
      ``softmax``'s ``output``, written in the function's ``metadata``, become its arguments;
    * a mechanism's ``clip`` parameter ([low, high]) bounds its value: output ports reading the
      node's final function read it clipped (PsyNeuLink clips after the function);
    * a standard output port ``<node>_MEAN`` (``variance``, ``MEDIAN``, ``standard_deviation``,
      ``MAX_VAL``, ``MAX_ABS_VAL``, ``MAX_INDICATOR``, ``MAX_ABS_INDICATOR``) whose value is the
      plain function is that statistic of it, as PsyNeuLink computes the port;
    * an integrator called by name whose state is the node's ``previous_value`` (interactive
      activation, Ornstein-Uhlenbeck) is passed that state (from its ``default_initial_value``:
      a composition's run starts the interactive activation integrator at 0, not ``rest``).
    """
    nodes = []
    for n in graph.nodes:
        fs = _with_state(n, [_with_metadata_args(f) for f in n.functions])
        finals = _final_functions(n)
        bounds = _clip_bounds(n)
        ports = []
        for op in n.output_ports:
            value = op.value
            if isinstance(value, str) and value in finals:
                f = value
                if bounds is not None:
                    f = f"numpy.clip({value}, {bounds[0]!r}, {bounds[1]!r})"
                name = op.id[len(n.id) + 1 :] if op.id.startswith(f"{n.id}_") else None
                value = _STANDARD_PORTS.get(name, "{f}").format(f=f)
            ports.append(replace(op, value=value) if value != op.value else op)
        nodes.append(replace(n, functions=fs, output_ports=ports))
    return replace(graph, nodes=nodes)


def _number(p: Any) -> float | None:
    v = getattr(p, "value", None)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def recurrent_projections(graph: Graph) -> Graph:
    """``graph`` with the recurrent projection of PsyNeuLink's recurrent mechanisms
    (RecurrentTransferMechanism, LCAMechanism) that the 0.21 export drops: a node with an input
    port ``..._input_port_from_<node>_recurrent_projection`` that no edge reaches and numbers
    ``auto`` and ``hetero`` gets an edge from its first output port into that port with
    PsyNeuLink's matrix ``auto`` on the diagonal and ``hetero`` elsewhere (an LCA's
    ``self_excitation`` and ``-competition``). A matrix given explicitly is not in the file
    (auto 1 and hetero 0 are written): such a mechanism cannot be read as it ran."""
    reached = {(e.receiver, e.receiver_port) for e in graph.edges}
    edges = list(graph.edges)
    nodes = []
    for n in graph.nodes:
        auto, hetero = _number(n.get("parameters", "auto")), _number(n.get("parameters", "hetero"))
        if auto is None or hetero is None or not n.output_ports:
            nodes.append(n)
            continue
        ports = []
        for p in n.input_ports:
            if (
                not p.id.endswith(f"_input_port_from_{n.id}_recurrent_projection")
                or (n.id, p.id) in reached
                or not p.shape
                or len(p.shape) != 1
            ):
                ports.append(p)
                continue
            k = int(p.shape[0])
            m = hetero * (np.ones((k, k)) - np.eye(k)) + auto * np.eye(k)
            # a default value makes the edge no dependency of the node on itself; before the
            # node first runs, the edge carries its initial value (its function of its default
            # input: the rule of an unrun sender), which is PsyNeuLink's
            ports.append(replace(p, default_value=[0.0] * k))
            edges.append(
                Edge(
                    id=f"{n.id}_recurrent_projection",
                    sender=n.id,
                    sender_port=n.output_ports[0].id,
                    receiver=n.id,
                    receiver_port=p.id,
                    parameters={"matrix": m.tolist()},
                )
            )
        nodes.append(replace(n, input_ports=ports))
    if len(edges) == len(graph.edges):
        return graph
    return replace(graph, nodes=nodes, edges=edges)
