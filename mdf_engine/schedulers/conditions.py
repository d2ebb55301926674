"""MDF conditions -> graph-scheduler conditions and a ready ``graph_scheduler.Scheduler``.

A graph's ``conditions`` hold node-specific conditions (``{node_id: Condition}``) and termination
conditions keyed by time scale (``environment_state_update``, ``TimeScale.ENVIRONMENT_STATE_UPDATE``,
``.ENVIRONMENT_STATE_UPDATE``, and PsyNeuLink's older ``TRIAL``/``RUN``). Each is read once into
a condition kind (:mod:`mdf_engine.schedulers.parse`, :mod:`mdf_engine.schedulers.kinds`); the
:class:`Bridge` here turns kinds into graph-scheduler objects, and the :class:`Scheduler` keeps
the kinds for the compiled backend's code generator. ``Threshold`` reads the current value of a
node's port, parameter or function through a getter that the executor gives.

The scheduler's nodes are :class:`SchedNode` objects: the node id as a string that also answers
``is_finished`` for the WhenFinished family (see :class:`SchedNode`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import graph_scheduler
from graph_scheduler import TimeScale

from ..errors import MDFError
from ..model import Graph
from .kinds import ConditionKind, JustRan, TimeInterval
from .parse import parse_condition, time_scale

__all__ = ["SchedNode", "Bridge", "ScheduleKinds", "Scheduler", "make_scheduler", "time_scale"]


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


class Bridge:
    """Builds graph-scheduler conditions from condition kinds for one graph: node ids become
    the scheduler's :class:`SchedNode` objects, and ``Threshold`` reads values through
    ``value_getter(node_id, name)``."""

    def __init__(
        self,
        nodes: dict[str, SchedNode],
        value_getter: Callable[[str, str], Any] | None = None,
    ):
        self.nodes = nodes
        self.value_getter = value_getter

    def node(self, node_id: str) -> SchedNode:
        return self.nodes[node_id]

    def resolve(self, v: Any, role: str) -> Any:
        """A kind's field value as graph-scheduler takes it (by the field's role)."""
        if role == "node":
            return self.node(v)
        if role == "nodes":
            return tuple(self.node(n) for n in v)
        if role == "cond":
            return v.graph_scheduler(self)
        if role == "conds":
            return tuple(c.graph_scheduler(self) for c in v)
        return v

    def build(self, kind: ConditionKind, where: str) -> graph_scheduler.Condition:
        """The graph-scheduler condition of ``kind`` (at field path ``where``)."""
        try:
            return kind.graph_scheduler(self)
        except MDFError:
            raise
        except Exception as e:
            given = [f.name for f in fields(kind) if getattr(kind, f.name) != f.default]
            raise MDFError(f"cannot build {kind.name}({', '.join(given)}): {e}", where) from None


@dataclass
class ScheduleKinds:
    """A graph's conditions as kinds: per node id (only the nodes the file gives one), and the
    termination conditions per time scale."""

    nodes: dict[str, ConditionKind] = field(default_factory=dict)
    termination: dict[TimeScale, ConditionKind] = field(default_factory=dict)


class Scheduler(graph_scheduler.Scheduler):
    """graph-scheduler's scheduler of an MDF graph, which also keeps the graph's conditions
    as kinds (:attr:`kinds`) for the compiled backend."""

    def __init__(self, kinds: ScheduleKinds, **kwargs: Any):
        super().__init__(**kwargs)
        self.kinds = kinds


def _has_repeating_interval(kind: ConditionKind) -> bool:
    """``kind`` is, or contains, a TimeInterval with a repeat."""
    return any(isinstance(k, TimeInterval) and k.repeat is not None for k in kind.walk())


def _check_just_ran(sched: Scheduler, kinds: ScheduleKinds, mode: str, where: str) -> None:
    """Refuse JustRan where graph-scheduler would evaluate it before any node has run (it then
    fails reading its empty execution list): on a node of the first consideration set, or on
    any node in exact_time mode (every node is in the one consideration set)."""
    first = {str(n) for n in sched.consideration_queue[0]} if sched.consideration_queue else set()
    for node_id, kind in kinds.nodes.items():
        if not any(isinstance(k, JustRan) for k in kind.walk()):
            continue
        if mode == "exact_time" or node_id in first:
            when = (
                "in scheduling mode 'exact_time'"
                if mode == "exact_time"
                else "on a node that runs in the first time step"
            )
            raise MDFError(
                f"JustRan cannot be used {when}: graph-scheduler evaluates it before any "
                "node has run",
                f"{where}.conditions.node_specific.{node_id}",
            )


def _one_step_per_cycle(deps: dict[Any, set[Any]]) -> dict[Any, set[Any]]:
    """``deps`` with each cycle of dependencies (which only PsyNeuLink files may have: the
    loader refuses them elsewhere) made one group, as PsyNeuLink schedules a cycle: its nodes
    depend on no one in the group and on everything the group depends on, so they share a
    consideration set (and read each other's values from before the step)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(deps)
    g.add_edges_from((s, r) for r, ss in deps.items() for s in ss if s is not r)
    groups = [c for c in nx.strongly_connected_components(g) if len(c) > 1]
    if not groups:
        return deps
    out = {r: set(ss) for r, ss in deps.items()}
    for group in groups:
        outside = set().union(*(deps[n] for n in group)) - group
        for n in group:
            out[n] = set(outside) | (deps[n] & {n})
    return out


def make_scheduler(
    graph: Graph,
    value_getter: Callable[[str, str], Any] | None = None,
    finished: Callable[[str], bool] | None = None,
    where: str = "",
    mode: str = "standard",
) -> tuple[Scheduler, dict[str, SchedNode]]:
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
    deps = _one_step_per_cycle(deps)
    bridge = Bridge(nodes, value_getter)
    kinds = ScheduleKinds()
    conditions: dict[SchedNode, Any] = {}
    termination: dict[TimeScale, Any] = {}
    cs = graph.conditions
    if cs is not None:
        for node_id, cond in cs.node_specific.items():
            w = f"{where}.conditions.node_specific.{node_id}"
            kinds.nodes[node_id] = made = parse_condition(cond, w, graph)
            conditions[nodes[node_id]] = bridge.build(made, w)
        for scale, cond in cs.termination.items():
            w = f"{where}.conditions.termination.{scale}"
            made = parse_condition(cond, w, graph)
            if _has_repeating_interval(made):
                raise MDFError(
                    "a TimeInterval with a 'repeat' cannot be (part of) a termination "
                    "condition: graph-scheduler counts the repeat from the place of "
                    "the node it belongs to, and a termination condition belongs to "
                    "no node (use TimeTermination, or TimeInterval with start/end)",
                    w,
                )
            ts = time_scale(scale, w)
            kinds.termination[ts] = made
            termination[ts] = bridge.build(made, w)
    try:
        sched = Scheduler(
            kinds,
            graph=deps,
            conditions=conditions,
            termination_conds=termination,
            mode=graph_scheduler.SchedulingMode[mode.upper()],
        )
    except Exception as e:
        raise MDFError(f"graph-scheduler refused the graph: {e}", where) from None
    _check_just_ran(sched, kinds, mode, where)
    return sched, nodes
