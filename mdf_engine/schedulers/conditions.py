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
from dataclasses import fields
from typing import Any

import graph_scheduler

from ..errors import MDFError
from ..model import Graph
from .graph_kinds import (
    SchedNode,
    ScheduleKinds,
    dependencies,
    read_termination,
    scheduler_nodes,
)
from .kinds import ConditionKind
from .parse import parse_condition, time_scale
from .time_scales import to_graph_scheduler

__all__ = ["SchedNode", "Bridge", "ScheduleKinds", "Scheduler", "make_scheduler", "time_scale"]


class CheckedJustRan(graph_scheduler.JustRan):
    """graph-scheduler's ``JustRan``, which reads the last time step of the scheduler's
    execution list: asked before the first time step (after consideration sets that ran
    nothing, say) that list is empty and graph-scheduler fails with an IndexError; this one
    raises an MDFError naming the condition (``where``) instead."""

    def __init__(self, dependency: Any, where: str = ""):
        super().__init__(dependency)
        self.node_id = str(dependency)
        self.where = where

    def is_satisfied(self, *args: Any, execution_id: Any = None, **kwargs: Any) -> bool:
        sched = kwargs.get("scheduler")
        if sched is not None and not sched.execution_list.get(execution_id):
            raise MDFError(
                f"JustRan({self.node_id}) is asked before the first time step, which "
                "graph-scheduler cannot evaluate (nothing has run yet): it needs a condition "
                "before it that is false then",
                self.where,
            )
        return super().is_satisfied(*args, execution_id=execution_id, **kwargs)


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
        #: the field path of the condition being built (named by a JustRan that fails)
        self.where = ""

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

    def just_ran(self, node_id: str) -> graph_scheduler.Condition:
        """``JustRan(node_id)`` (see :class:`CheckedJustRan`)."""
        return CheckedJustRan(self.node(node_id), self.where)

    def build(self, kind: ConditionKind, where: str) -> graph_scheduler.Condition:
        """The graph-scheduler condition of ``kind`` (at field path ``where``)."""
        self.where = where
        try:
            return kind.graph_scheduler(self)
        except MDFError:
            raise
        except Exception as e:
            given = [f.name for f in fields(kind) if getattr(kind, f.name) != f.default]
            raise MDFError(f"cannot build {kind.name}({', '.join(given)}): {e}", where) from None


class OrderedSet(set):
    """A consideration set that is walked in a fixed order (``order``: its members, sorted)."""

    def __init__(self, members: Any, order: list[Any]):
        super().__init__(members)
        self.order = order

    def __iter__(self):
        return iter(self.order)


class Scheduler(graph_scheduler.Scheduler):
    """graph-scheduler's scheduler of an MDF graph, which also keeps the graph's conditions
    as kinds (:attr:`kinds`) for the compiled backend.

    graph-scheduler walks a consideration set as a Python ``set``, in the order of the nodes'
    hashes, which for string ids changes from process to process; a set whose outcome depends
    on that order (``BeforeNCalls`` of a node of the same set, say) then ran differently from
    run to run, and differently from the compiled backend. Here every set is walked in the
    graph's node order (``rank``), as the compiled backend walks it."""

    def __init__(self, kinds: ScheduleKinds, rank: dict[str, int] | None = None, **kwargs: Any):
        self._rank = rank or {}
        self._ordered: tuple[Any, list[OrderedSet]] | None = None
        super().__init__(**kwargs)
        self.kinds = kinds

    @property
    def consideration_queue(self) -> list[OrderedSet]:
        queue = super().consideration_queue
        # graph-scheduler makes the exact-time queue anew each time it is asked
        key = "exact" if self.mode is graph_scheduler.SchedulingMode.EXACT_TIME else id(queue)
        if self._ordered is None or self._ordered[0] != key:
            rank = self._rank
            made = [
                OrderedSet(cs, sorted(cs, key=lambda n: (rank.get(str(n), len(rank)), str(n))))
                for cs in queue
            ]
            self._ordered = (key, made)
        return self._ordered[1]


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
    nodes = scheduler_nodes(graph, finished)
    deps = dependencies(graph, nodes)
    deps = _one_step_per_cycle(deps)
    bridge = Bridge(nodes, value_getter)
    kinds = ScheduleKinds()
    conditions: dict[SchedNode, Any] = {}
    termination: dict[Any, Any] = {}
    cs = graph.conditions
    if cs is not None:
        for node_id, cond in cs.node_specific.items():
            w = f"{where}.conditions.node_specific.{node_id}"
            kinds.nodes[node_id] = made = parse_condition(cond, w, graph)
            conditions[nodes[node_id]] = bridge.build(made, w)
        for scale, cond in cs.termination.items():
            w = f"{where}.conditions.termination.{scale}"
            ts, made = read_termination(cond, scale, w, graph)
            kinds.termination[ts] = made
            termination[to_graph_scheduler(ts)] = bridge.build(made, w)
    try:
        sched = Scheduler(
            kinds,
            rank={nid: i for i, nid in enumerate(nodes)},
            graph=deps,
            conditions=conditions,
            termination_conds=termination,
            mode=graph_scheduler.SchedulingMode[mode.upper()],
        )
    except Exception as e:
        raise MDFError(f"graph-scheduler refused the graph: {e}", where) from None
    return sched, nodes
