"""The text of a graph drawing: a condition as a call (``EveryNCalls(A, n=2)``), an edge's
ports and weight, a node box's ports and scheduling condition, and the termination caption
(graph-scheduler's defaults named where the graph gives none). Used by
:mod:`mdf_engine.viz.drawing` and :mod:`mdf_engine.viz.edges`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model import Condition, Graph

__all__ = ["condition_text", "edge_label", "node_text", "termination_text"]

#: graph-scheduler's termination conditions when a graph gives none for a time scale.
DEFAULT_TERMINATION = {
    "environment_state_update": "AllHaveRun()",
    "environment_sequence": "Never()",
}

_WRAP = 44  # characters per line inside a box


def _value_text(v: Any) -> str:
    if isinstance(v, (Condition, Mapping)) and _is_condition(v):
        return condition_text(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, np.ndarray):
        return _short(np.array2string(v, precision=3, separator=", ", threshold=6))
    return str(v)


def _is_condition(v: Any) -> bool:
    return isinstance(v, Condition) or (
        isinstance(v, Mapping) and "type" in v and set(v) <= {"type", "kwargs", "metadata"}
    )


def condition_text(cond: Any) -> str:
    """A condition as a call: ``EveryNCalls(A, n=2)``, ``And(AfterNCalls(C, n=2), JustRan(A))``
    (dependencies positional, other arguments by keyword)."""
    if isinstance(cond, Condition):
        kind, kwargs = cond.type, dict(cond.kwargs or {})
    elif isinstance(cond, Mapping) and "type" in cond:
        kind, kwargs = str(cond["type"]), dict(cond.get("kwargs") or {})
    else:
        return _value_text(cond)
    args: list[str] = []
    for key in ("dependency", "dependencies"):
        if key in kwargs:
            dep = kwargs.pop(key)
            deps = dep if isinstance(dep, (list, tuple)) else [dep]
            args.extend(_value_text(d) for d in deps)
    args.extend(f"{k}={_value_text(v)}" for k, v in kwargs.items())
    return f"{kind}({', '.join(args)})"


def _short(s: str, n: int = 40) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def edge_label(edge: Any) -> str:
    """An edge's label: ``sender_port → receiver_port`` and its weight, if it has one."""
    text = f"{edge.sender_port} → {edge.receiver_port}"
    params = edge.parameters or {}
    if "weight" in params:
        text += f"\nweight = {_short(_value_text(params['weight']), 30)}"
    return text


def node_text(node: Any, graph: Graph) -> str:
    """The body of a node's box: its input and output ports and the condition it runs under."""
    lines = []
    ins = ", ".join(p.id for p in node.input_ports)
    outs = ", ".join(p.id for p in node.output_ports)
    if ins:
        lines += textwrap.wrap(f"in: {ins}", _WRAP, subsequent_indent="   ")
    if outs:
        lines += textwrap.wrap(f"out: {outs}", _WRAP, subsequent_indent="   ")
    conds = graph.conditions.node_specific if graph.conditions is not None else {}
    when = condition_text(conds[node.id]) if node.id in conds else "Always (default)"
    lines += textwrap.wrap(f"when: {when}", _WRAP, subsequent_indent="   ")
    return "\n".join(lines)


def termination_text(graph: Graph, width: int) -> str:
    """The caption: every time scale's termination condition, wrapped to ``width`` characters."""
    term = dict(graph.conditions.termination) if graph.conditions is not None else {}
    parts = [f"{scale}: {condition_text(c)}" for scale, c in term.items()]
    parts += [
        f"{scale}: {text} (default)"
        for scale, text in DEFAULT_TERMINATION.items()
        if scale not in term
    ]
    return "\n".join(
        textwrap.fill(p, width, subsequent_indent="    ") for p in ["Termination:"] + parts
    )
