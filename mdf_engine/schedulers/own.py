"""The engine's own scheduler: graph-scheduler's algorithm for one graph, run in Python from
the scheduler code the compiled loop runs, for the compiled backend's warm-up.

A first run of the compiled backend warms the graph up on the interpreter (docs/compiled.md);
with graph-scheduler that costs a fresh process most of a second of importing (pint's unit
registry, networkx, dask) before any node runs. The compiled loop does not need
graph-scheduler: :mod:`.codegen` writes graph-scheduler's algorithm for a graph's conditions
as code over counters (tested against graph-scheduler's own execution order). Here the same
code, with each time step handed back to the interpreter (a generator), is compiled by Python,
so the warm-up imports no graph-scheduler either.

:meth:`OwnScheduler.make` declines (returns None, and the interpreter builds graph-scheduler's
scheduler, which also reports any error in the conditions) for what it does not run exactly as
graph-scheduler does: another scheduling mode than standard, dependencies with a cycle
(PsyNeuLink's), absolute time (TimeInterval, TimeTermination), WhenFinished (graph-scheduler
reads ``is_finished`` through the node), JustRan (asked before the first time step it is an
MDFError, which graph-scheduler's bridge raises when it is asked), a Threshold that is not over numbers, conditions
that do not read, and conditions the compiled loop lacks.

The generated source is made of engine-made names (counters, node indices) and whole-number
counts only; every number from the model (a Threshold's value and tolerances) is an entry
``K[k]`` of a constant list, and the code runs with no builtins but ``abs``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from numbers import Real
from typing import Any

import numpy as np

from ..errors import MDFError, NotCompilable
from ..model import Graph
from .codegen import SchedulerSource
from .compiled import encode
from .graph_kinds import (
    SchedNode,
    ScheduleKinds,
    consideration_queue,
    dependencies,
    read_termination,
    scheduler_nodes,
)
from .kinds import (
    ConditionKind,
    JustRan,
    Threshold,
    TimeInterval,
    TimeTermination,
    WhenFinished,
    WhenFinishedAll,
    WhenFinishedAny,
)
from .kinds.calls import threshold_number
from .parse import parse_condition

#: passes of one update at most (the interpreter stops an update at its own limit of time
#: steps first: every pass is at least one time step)
MAX_PASSES = 1 << 40


class OwnScheduler:
    """graph-scheduler's scheduler of one graph in standard mode, for the graph's kinds (see
    the module docstring). It answers what :func:`.compiled.encode` and the interpreter read
    of a graph-scheduler scheduler: ``kinds``, ``nodes``, ``graph``, ``consideration_queue``,
    ``mode``, ``get_absolute_conditions()`` and ``run()``, which yields the set of node ids
    of each time step of one environment state update."""

    mode = "STANDARD"

    def __init__(
        self,
        kinds: ScheduleKinds,
        nodes: dict[str, SchedNode],
        deps: dict[SchedNode, set[SchedNode]],
        queue: list[set[SchedNode]],
    ):
        self.kinds = kinds
        self.sched_nodes = nodes
        self.nodes = list(nodes.values())
        self.graph = deps
        self.consideration_queue = queue
        self._ids = list(nodes)
        n = len(self._ids)
        # the scheduler's state across updates, as the compiled loop keeps it
        self._clock = np.zeros(7, dtype=np.int64)
        self._useable = np.zeros(0, dtype=np.int64)  # (sized by _compile)
        self._total = np.zeros((3, n), dtype=np.int64)
        self._last = np.zeros(n, dtype=np.bool_)
        self._ever = np.zeros(n, dtype=np.bool_)
        self._logpos = np.zeros(2, dtype=np.int64)  # (the log is off)
        self._logbuf = np.zeros(1, dtype=np.int64)
        self._err = np.zeros(8, dtype=np.int64)
        self._update: Callable[..., Iterator[list[int]]] | None = None
        self._constants: list[Any] = []
        self._thresholds: list[tuple[str, str, Any]] = []
        self._thr = np.zeros(0)
        self._getter: Callable[[str, str], Any] | None = None

    @classmethod
    def make(
        cls,
        graph: Graph,
        value_getter: Callable[[str, str], Any],
        where: str = "",
        mode: str = "standard",
    ) -> OwnScheduler | None:
        """The own scheduler of ``graph`` (``value_getter(node, name)``: what a Threshold
        reads), or None where graph-scheduler's is needed (see the module docstring)."""
        if mode != "standard":
            return None
        nodes = scheduler_nodes(graph)
        deps = dependencies(graph, nodes)
        queue = consideration_queue(deps)
        if queue is None:
            return None
        try:
            kinds = _read_kinds(graph, where)
        except MDFError:
            return None  # (graph-scheduler's bridge reports it, in its order of checks)
        given = [*kinds.nodes.values(), *kinds.termination.values()]
        if not all(_plain(k) for kind in given for k in kind.walk()):
            return None
        sched = cls(kinds, nodes, deps, queue)
        try:
            sched._compile(value_getter)
        except NotCompilable:
            return None
        return sched

    def get_absolute_conditions(self) -> dict[Any, Any]:
        """No absolute-time conditions (:meth:`make` declines them)."""
        return {}

    def _compile(self, value_getter: Callable[[str, str], Any]) -> None:
        """The Python function of one update, from the compiled loop's scheduler code."""
        table, roots, term, queue = encode(self, self._ids)
        constants: list[Any] = []

        def number(v: Any) -> str:
            constants.append(v)
            return f"K[{len(constants) - 1}]"

        source = SchedulerSource(table, roots, term, queue, len(self._ids), number)
        source.compact_useable = True
        self._useable = np.zeros(max(source.useable_count(), 1), dtype=np.int64)
        ind = "    "
        refresh = [f"q_th{k} = refresh({k})" for k in range(len(table.thresholds))]

        def body(m: int, ind: str) -> list[str]:
            return [f"{ind}q_run.append({int(m)})"]

        def step(ind: str) -> list[str]:
            return [f"{ind}yield q_run", f"{ind}q_run = []"] + [ind + r for r in refresh]

        def give_up(ind: str) -> list[str]:
            return [f"{ind}return"]

        lines = [
            "def update(clock, useable, total, last_set, ever, thr, logpos, logbuf, err, K, "
            "refresh):",
            *source.load(ind),
            f"{ind}q_run = []",
            *(ind + r for r in refresh),
            *source.update(body, give_up, MAX_PASSES, ind, step=step),
            *source.store(ind),
        ]
        namespace: dict[str, Any] = {"__builtins__": {"abs": abs}}
        exec(compile("\n".join(lines) + "\n", "<mdf_engine scheduler>", "exec"), namespace)
        self._update = namespace["update"]
        self._constants = constants
        self._thresholds = list(table.thresholds)
        self._thr = np.zeros(len(table.thresholds))
        self._getter = value_getter

    def _threshold(self, k: int) -> float:
        """The current value Threshold slot ``k`` compares."""
        nid, name, indices = self._thresholds[k]
        return threshold_number(self._getter(nid, name), indices, f"{nid}.{name}")

    def run(self) -> Iterator[set[str]]:
        """One environment state update: the set of node ids of each time step (the caller
        runs them before asking for the next)."""
        for members in self._update(
            self._clock,
            self._useable,
            self._total,
            self._last,
            self._ever,
            self._thr,
            self._logpos,
            self._logbuf,
            self._err,
            self._constants,
            self._threshold,
        ):
            yield {self._ids[m] for m in members}
        self._clock[2] += 1  # (updates ever: the compiled loop counts them after an update)

    def now(self) -> float:
        """The absolute time in ms: without absolute-time conditions graph-scheduler's clock
        stays at 0."""
        return 0.0


def _read_kinds(graph: Graph, where: str) -> ScheduleKinds:
    """The graph's conditions as kinds (MDFError for a condition that does not read)."""
    kinds = ScheduleKinds()
    cs = graph.conditions
    if cs is not None:
        for node_id, cond in cs.node_specific.items():
            w = f"{where}.conditions.node_specific.{node_id}"
            kinds.nodes[node_id] = parse_condition(cond, w, graph)
        for scale, cond in cs.termination.items():
            w = f"{where}.conditions.termination.{scale}"
            ts, made = read_termination(cond, scale, w, graph)
            kinds.termination[ts] = made
    return kinds


def _plain(kind: ConditionKind) -> bool:
    """Whether the own scheduler runs ``kind`` as graph-scheduler does (see the module
    docstring)."""
    if isinstance(
        kind,
        (TimeInterval, TimeTermination, WhenFinished, WhenFinishedAny, WhenFinishedAll, JustRan),
    ):
        return False
    if isinstance(kind, Threshold):
        numbers = (kind.threshold, kind.atol, kind.rtol)
        return all(isinstance(v, Real) and not isinstance(v, bool) for v in numbers)
    return True
