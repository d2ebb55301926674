"""MDF conditions -> graph-scheduler conditions and a ready ``graph_scheduler.Scheduler``.

A graph's ``conditions`` hold node-specific conditions (``{node_id: Condition}``) and termination
conditions keyed by time scale (``environment_state_update``, ``TimeScale.ENVIRONMENT_STATE_UPDATE``,
``.ENVIRONMENT_STATE_UPDATE``, and PsyNeuLink's older ``TRIAL``/``RUN``). Node ids in condition
arguments, also inside lists, name nodes; nested conditions are built recursively;
``dependencies`` is accepted for classes that take ``dependency``; ``Threshold`` reads the
current value of a node's port, parameter or function through a getter that the executor gives.

The scheduler's nodes are :class:`SchedNode` objects: the node id as a string that also answers
``is_finished`` for the WhenFinished family (see :class:`SchedNode`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import graph_scheduler
from graph_scheduler import TimeScale

from ..errors import MDFError
from ..model import Condition, Graph

_TIME_SCALE_RE = re.compile(r"^(TimeScale)?\.?([A-Z_]+)$")
_OLD_NAMES = {
    "TRIAL": "ENVIRONMENT_STATE_UPDATE",
    "RUN": "ENVIRONMENT_SEQUENCE",
    "TIME_STEP": "CONSIDERATION_SET_EXECUTION",
}


class SchedNode(str):
    """A node as graph-scheduler sees it: its id (a string), plus ``is_finished``.

    A node counts as finished when it has run in the current environment state update and, if it
    has a parameter or output port called ``is_finished``, that value is true.
    """

    finished: Callable[[str], bool] | None = None
    #: the parameter or output port that says whether the node is finished, if it has one
    finish_value: str | None = None

    def is_finished(self, execution_id: Any = None) -> bool:
        return bool(self.finished(str(self))) if self.finished else False


def time_scale(name: Any, where: str = "") -> TimeScale:
    """A ``TimeScale`` from the spellings MDF files use."""
    if isinstance(name, TimeScale):
        return name
    text = str(name).strip()
    m = _TIME_SCALE_RE.match(text.upper()) or _TIME_SCALE_RE.match(text.upper().split(".")[-1])
    key = m.group(2) if m else text.upper()
    key = _OLD_NAMES.get(key, key)
    try:
        return TimeScale[key]
    except KeyError:
        raise MDFError(
            f"unknown time scale '{name}' (known: {', '.join(t.name for t in TimeScale)})", where
        ) from None


class ConditionBuilder:
    """Builds graph-scheduler conditions for one graph."""

    def __init__(
        self,
        graph: Graph,
        nodes: dict[str, SchedNode],
        value_getter: Callable[[str, str], Any] | None = None,
        default_getter: Callable[[str, str], Any] | None = None,
    ):
        self.graph = graph
        self.nodes = nodes
        self.value_getter = value_getter
        self.default_getter = default_getter

    def build(self, cond: Condition | dict, where: str) -> graph_scheduler.Condition:
        if isinstance(cond, dict):
            cond = Condition(type=cond.get("type"), kwargs=dict(cond.get("kwargs") or {}))
        cls = getattr(graph_scheduler.condition, str(cond.type), None)
        structural = getattr(graph_scheduler.condition, "GraphStructureCondition", None)
        if inspect.isclass(cls) and structural is not None and issubclass(cls, structural):
            raise MDFError(
                f"{cond.type} is a graph structure condition (it edits the "
                "scheduler's graph); an MDF graph's structure comes from its edges, "
                "so it cannot be used as a node or termination condition",
                f"{where}.type",
            )
        if not (inspect.isclass(cls) and issubclass(cls, graph_scheduler.condition.Condition)):
            raise MDFError(f"unknown condition type '{cond.type}'", f"{where}.type")
        sig = inspect.signature(cls)
        kwargs = {k: self.argument(v, f"{where}.kwargs.{k}") for k, v in cond.kwargs.items()}
        if (
            "dependencies" in kwargs
            and "dependencies" not in sig.parameters
            and "dependency" in sig.parameters
        ):
            kwargs["dependency"] = kwargs.pop("dependencies")
        if "custom_parameter_getter" in sig.parameters:
            self._threshold_getter(kwargs, where)
        if "func" in sig.parameters and "func" not in kwargs:
            raise MDFError(
                f"{cond.type} needs a Python function and cannot be given in a model file", where
            )
        var_pos = [n for n, p in sig.parameters.items() if p.kind is p.VAR_POSITIONAL]
        for name in ("n", "N"):
            if isinstance(kwargs.get(name), float) and float(kwargs[name]).is_integer():
                kwargs[name] = int(kwargs[name])
        _check_counts_and_nodes(cond.type, kwargs, where, {str(n.id) for n in self.graph.nodes})
        try:
            if var_pos and var_pos[0] in kwargs:
                args = kwargs.pop(var_pos[0])
                args = args if isinstance(args, (list, tuple)) else [args]
                return cls(*args, **kwargs)
            return cls(**kwargs)
        except MDFError:
            raise
        except Exception as e:
            raise MDFError(
                f"cannot build {cond.type}({', '.join(cond.kwargs)}): {e}", where
            ) from None

    def argument(self, v: Any, where: str) -> Any:
        if isinstance(v, Condition) or (isinstance(v, dict) and "type" in v):
            return self.build(v, where)
        if isinstance(v, list):
            return [self.argument(x, f"{where}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, str):
            if v in self.nodes:
                return self.nodes[v]
            m = _TIME_SCALE_RE.match(v)
            if m and (m.group(1) or v.startswith(".")):
                return time_scale(v, where)
        return v

    def _threshold_getter(self, kwargs: dict, where: str) -> None:
        dep, param = kwargs.get("dependency"), kwargs.get("parameter")
        if dep is None or param is None:
            raise MDFError("Threshold needs 'dependency' and 'parameter'", where)
        if str(dep) not in self.nodes:
            raise MDFError(f"Threshold dependency '{dep}' is not a node", f"{where}.kwargs")
        node = self.graph.get_node(str(dep))
        if not any(
            node.get(k, param) for k in ("input_ports", "parameters", "functions", "output_ports")
        ):
            raise MDFError(
                f"node '{dep}' has no port, parameter or function '{param}'",
                f"{where}.kwargs.parameter",
            )
        getter = self.value_getter
        kwargs["custom_parameter_getter"] = lambda d, p: getter(str(d), p)
        kwargs["custom_parameter_validator"] = lambda d, p: True


def _check_counts_and_nodes(kind: str, kwargs: dict, where: str, node_ids: set[str]) -> None:
    """A count ``n`` is a whole number (at least 1 for ``Every...``, graph-scheduler would
    divide by it), and a dependency names a node of the graph (a known id was already
    replaced by its node)."""
    for name in ("n", "N"):
        if name not in kwargs:
            continue
        v = kwargs[name]
        if isinstance(v, bool) or not isinstance(v, int):
            raise MDFError(f"'{name}' must be a whole number, got {v!r}", f"{where}.kwargs.{name}")
        least = 1 if kind.startswith("Every") else 0
        if v < least:
            raise MDFError(f"'{name}' must be at least {least}, got {v}", f"{where}.kwargs.{name}")
    for name in ("dependency", "dependencies"):
        deps = kwargs.get(name)
        for d in deps if isinstance(deps, (list, tuple)) else [deps]:
            if isinstance(d, str) and d not in node_ids:
                raise MDFError(f"'{d}' is not a node of this graph", f"{where}.kwargs.{name}")


def _has_repeating_interval(cond: Any) -> bool:
    """``cond`` is, or contains, a TimeInterval with a repeat."""
    if isinstance(cond, graph_scheduler.TimeInterval) and cond.repeat is not None:
        return True
    return any(
        _has_repeating_interval(a)
        for a in getattr(cond, "args", ())
        if isinstance(a, graph_scheduler.Condition)
    )


def make_scheduler(
    graph: Graph,
    value_getter: Callable[[str, str], Any] | None = None,
    finished: Callable[[str], bool] | None = None,
    where: str = "",
    mode: str = "standard",
) -> tuple[graph_scheduler.Scheduler, dict[str, SchedNode]]:
    """A graph-scheduler ``Scheduler`` for ``graph``: dependencies from the edges (an edge into
    an input port that has a ``default_value`` is not a dependency, which is how cycles are
    allowed), and the graph's conditions. ``mode`` "exact_time" is graph-scheduler's
    ``SchedulingMode.EXACT_TIME`` (all nodes in one consideration set)."""
    nodes = {n.id: SchedNode(n.id) for n in graph.nodes}
    for n in graph.nodes:
        sn = nodes[n.id]
        sn.finished = finished
        if n.get("parameters", "is_finished") or n.get("output_ports", "is_finished"):
            sn.finish_value = "is_finished"
    deps: dict[SchedNode, set[SchedNode]] = {nodes[n.id]: set() for n in graph.nodes}
    for e in graph.edges:
        receiver = graph.get_node(e.receiver)
        port = receiver.get("input_ports", e.receiver_port) if receiver else None
        if port is not None and port.default_value is not None:
            continue
        deps[nodes[e.receiver]].add(nodes[e.sender])
    builder = ConditionBuilder(graph, nodes, value_getter)
    conditions: dict[SchedNode, Any] = {}
    termination: dict[TimeScale, Any] = {}
    cs = graph.conditions
    if cs is not None:
        for node_id, cond in cs.node_specific.items():
            conditions[nodes[node_id]] = builder.build(
                cond, f"{where}.conditions.node_specific.{node_id}"
            )
        for scale, cond in cs.termination.items():
            w = f"{where}.conditions.termination.{scale}"
            termination[time_scale(scale, w)] = built = builder.build(cond, w)
            if _has_repeating_interval(built):
                raise MDFError(
                    "a TimeInterval with a 'repeat' cannot be (part of) a termination "
                    "condition: graph-scheduler counts the repeat from the place of "
                    "the node it belongs to, and a termination condition belongs to "
                    "no node (use TimeTermination, or TimeInterval with start/end)",
                    w,
                )
    try:
        sched = graph_scheduler.Scheduler(
            graph=deps,
            conditions=conditions,
            termination_conds=termination,
            mode=graph_scheduler.SchedulingMode[mode.upper()],
        )
    except Exception as e:
        raise MDFError(f"graph-scheduler refused the graph: {e}", where) from None
    return sched, nodes
