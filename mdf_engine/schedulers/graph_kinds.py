"""A graph's conditions read once, and what both schedulers of the engine share about them,
without importing graph-scheduler.

* :class:`SchedNode`: a node as a scheduler sees it (its id, and ``is_finished``);
* :class:`ScheduleKinds`: the graph's conditions as kinds, per node and per time scale;
* :func:`scheduler_nodes`, :func:`dependencies`: the nodes and their senders (from the edges);
* :func:`consideration_queue`: graph-scheduler's consideration queue (its toposort of the
  dependencies), or None for a graph with a cycle;
* :func:`read_termination`: the checks of termination conditions both schedulers make.

graph-scheduler's bridge (:mod:`.conditions`) and the engine's own scheduler for the compiled
backend's warm-up (:mod:`.own`) are both built from these.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..errors import MDFError
from ..model import Graph
from .kinds import ConditionKind, EveryNCalls, TimeInterval
from .parse import parse_condition, time_scale
from .time_scales import TimeScale


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


@dataclass
class ScheduleKinds:
    """A graph's conditions as kinds: per node id (only the nodes the file gives one), and the
    termination conditions per time scale."""

    nodes: dict[str, ConditionKind] = field(default_factory=dict)
    termination: dict[TimeScale, ConditionKind] = field(default_factory=dict)


def scheduler_nodes(
    graph: Graph, finished: Callable[[str], bool] | None = None
) -> dict[str, SchedNode]:
    """The scheduler's node of every node of ``graph`` (``finished``: what WhenFinished
    reads)."""
    nodes = {n.id: SchedNode(n.id) for n in graph.nodes}
    for n in graph.nodes:
        sn = nodes[n.id]
        sn.finished = finished
        if n.get("parameters", "is_finished") or n.get("output_ports", "is_finished"):
            sn.finish_value = "is_finished"
    return nodes


def dependencies(graph: Graph, nodes: dict[str, SchedNode]) -> dict[SchedNode, set[SchedNode]]:
    """Each node's senders: from the edges, except an edge into an input port that has a
    ``default_value`` (which is how cycles are allowed)."""
    deps: dict[SchedNode, set[SchedNode]] = {nodes[n.id]: set() for n in graph.nodes}
    by_id = {n.id: n for n in graph.nodes}  # (Graph.get_node scans: quadratic over edges)
    for e in graph.edges:
        receiver = by_id.get(e.receiver)
        port = receiver.get("input_ports", e.receiver_port) if receiver else None
        if port is not None and port.default_value is not None:
            continue
        deps[nodes[e.receiver]].add(nodes[e.sender])
    return deps


def consideration_queue(deps: dict[Hashable, set[Hashable]]) -> list[set[Hashable]] | None:
    """graph-scheduler's consideration queue of ``deps`` in standard mode (the toposort
    package's levels: the nodes whose senders are all in earlier levels, a node's dependency
    on itself ignored), or None when the dependencies have a cycle."""
    # Kahn's algorithm by levels: each node's senders still waiting are counted, and a level
    # lowers the counts of its members' receivers only (rebuilding every node's set of
    # waiting senders per level made a chain of thousands of nodes quadratic)
    waiting: dict[Hashable, int] = {}
    receivers: dict[Hashable, list[Hashable]] = {}
    for n, ds in deps.items():
        senders = {d for d in ds if d != n}
        waiting[n] = len(senders)
        for d in senders:
            waiting.setdefault(d, 0)  # (a sender that is not a key depends on no one)
            receivers.setdefault(d, []).append(n)
    level = {n for n, k in waiting.items() if k == 0}
    queue: list[set[Hashable]] = []
    placed = 0
    while level:
        queue.append(level)
        placed += len(level)
        following: set[Hashable] = set()
        for n in level:
            for r in receivers.get(n, ()):
                waiting[r] -= 1
                if waiting[r] == 0:
                    following.add(r)
        level = following
    return queue if placed == len(waiting) else None


def has_repeating_interval(kind: ConditionKind) -> bool:
    """``kind`` is, or contains, a TimeInterval with a repeat."""
    return any(isinstance(k, TimeInterval) and k.repeat is not None for k in kind.walk())


def read_termination(cond: Any, scale: Any, where: str, graph: Graph) -> tuple[TimeScale, Any]:
    """The time scale and kind of a termination condition (``where``: its field path)."""
    made = parse_condition(cond, where, graph)
    for k in made.walk():
        if isinstance(k, EveryNCalls):
            raise MDFError(
                f"EveryNCalls({k.dependency}) cannot be (part of) a termination condition: it "
                "counts calls since the node it belongs to last ran, and a termination "
                "condition belongs to no node (graph-scheduler fails on it; use AfterNCalls)",
                where,
            )
    if has_repeating_interval(made):
        raise MDFError(
            "a TimeInterval with a 'repeat' cannot be (part of) a termination "
            "condition: graph-scheduler counts the repeat from the place of "
            "the node it belongs to, and a termination condition belongs to "
            "no node (use TimeTermination, or TimeInterval with start/end)",
            where,
        )
    return time_scale(scale, where), made
