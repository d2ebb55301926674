"""graph-scheduler as the oracle of the engine's schedules, shared by the condition tests.

A test writes conditions as a model file does (:func:`mdf_condition`), runs them on the engine,
and runs the same conditions with graph-scheduler itself on a dict graph of :class:`OracleNode`
strings (:class:`OracleRun`). The oracle's nodes keep what graph-scheduler asks of a node:

- every node's runs since the start (a ``Threshold`` on ``count`` reads them through
  :meth:`OracleRun.getter`; a ``Threshold`` on ``v`` reads ``runs * inc[node]``, the model's
  ``v = v + inc``),
- whether it ran in the current update, and its ``is_finished`` flag: a node is finished when it
  ran in this update and its runs reached ``finish[node]`` (no entry: at once), the engine's
  documented reading of a node's ``is_finished`` (docs/semantics.md).

graph-scheduler walks a consideration set in the order of a Python set (which changes with the
hash seed); the oracle walks it in the graph's node order, as the engine does (on a chain every
set has one node, so there the order is graph-scheduler's own).

Used by ``test_conditions`` (:func:`oracle_time_steps`: conditions built by hand on the chain
A -> B -> C), ``test_condition_kinds`` (the same, with conditions built by :func:`gs_condition`
from the file) and ``test_graph_scheduler_scenarios`` (:meth:`OracleRun.updates` over any graph,
update by update, with absolute times).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import graph_scheduler as gs
from graph_scheduler import TimeScale as TS

#: an update that graph-scheduler ends within this many time steps, else :class:`NoEnd`
MAX_STEPS = 80

#: the old names of two termination keys
_OLD_KEYS = {"TRIAL": "ENVIRONMENT_STATE_UPDATE", "RUN": "ENVIRONMENT_SEQUENCE"}

#: (time steps, absolute time of each in ms) of one update
Update = tuple[list[set[str]], list[float]]


def mdf_condition(type_: str, **kwargs: Any) -> dict:
    """An MDF condition as a model file writes it."""
    return {"type": type_, "kwargs": kwargs}


def walk(d: Any) -> Iterator[dict]:
    """Every MDF condition in ``d`` (a condition, or a list of them), nested ones included."""
    if isinstance(d, dict) and "type" in d:
        yield d
        for v in d["kwargs"].values():
            yield from walk(v)
    elif isinstance(d, list):
        for v in d:
            yield from walk(v)


def termination_scale(key: str) -> TS:
    """graph-scheduler's time scale for a termination key of a model file
    (``environment_state_update``, ``TimeScale.ENVIRONMENT_SEQUENCE``, ``TRIAL``, ...)."""
    name = key.split(".")[-1].upper()
    return TS[_OLD_KEYS.get(name, name)]


class OracleNode(str):
    """A node of the oracle's graph: its id, answering ``is_finished`` from its run."""

    run: OracleRun

    def is_finished(self, execution_id: Any = None) -> bool:
        return self.run.is_finished(self)


class NoEnd(Exception):
    """graph-scheduler's update did not end within the time steps allowed."""


class _InGraphOrder(gs.Scheduler):
    """graph-scheduler walking each consideration set in the graph's node order."""

    def __init__(self, rank: dict[str, int], **kwargs: Any):
        self.rank = rank
        super().__init__(**kwargs)

    class _Walk(set):
        def __init__(self, members: Any, rank: dict[str, int]):
            super().__init__(members)
            self.order = sorted(members, key=lambda n: rank[str(n)])

        def __iter__(self):
            return iter(self.order)

    @property
    def consideration_queue(self) -> list[set]:
        return [self._Walk(cs, self.rank) for cs in super().consideration_queue]


class OracleRun:
    """One run of graph-scheduler over ``graph`` (``{node: [senders]}``), keeping each node's
    runs and its ``is_finished`` (``finish``: node -> runs it needs) and ``v`` (``inc``: node ->
    growth per run) for the conditions that read them."""

    def __init__(
        self,
        graph: dict[str, list[str]],
        finish: dict[str, int] | None = None,
        inc: dict[str, float] | None = None,
    ):
        self.graph = graph
        self.finish = finish or {}
        self.inc = inc or {}
        self.runs: Counter[str] = Counter()
        self.ran: set[str] = set()  # the nodes that ran in the current update
        self.nodes: dict[str, OracleNode] = {}
        for nid in graph:
            node = OracleNode(nid)
            node.run = self
            self.nodes[nid] = node

    def is_finished(self, node: str) -> bool:
        """``node`` ran in this update and its runs reached its ``finish`` (if it has one)."""
        k = self.finish.get(str(node))
        return node in self.ran and (k is None or self.runs[str(node)] >= k)

    def getter(self, dep: Any, param: str) -> float:
        """A Threshold's ``custom_parameter_getter``: ``count`` or ``v`` of node ``dep``."""
        runs = self.runs[str(dep)]
        return runs if param == "count" else runs * self.inc[str(dep)]

    def condition(self, d: dict) -> gs.Condition:
        """graph-scheduler's condition for the MDF condition ``d`` on this run's nodes."""
        return gs_condition(d, self.nodes, self.getter)

    def scheduler(self, conds: dict, term: dict, mode: str = "standard") -> gs.Scheduler:
        """graph-scheduler's ``Scheduler`` of the graph, walking it in the graph's order."""
        return _InGraphOrder(
            {n: i for i, n in enumerate(self.graph)},
            graph={self.nodes[n]: {self.nodes[s] for s in ss} for n, ss in self.graph.items()},
            conditions=conds,
            termination_conds=term,
            mode=gs.SchedulingMode[mode.upper()],
        )

    def mdf_scheduler(self, conds: dict, term: dict, mode: str = "standard") -> gs.Scheduler:
        """:meth:`scheduler` of MDF conditions: ``conds`` by node id, ``term`` by termination
        key of a model file."""
        return self.scheduler(
            {self.nodes[k]: self.condition(d) for k, d in conds.items()},
            {termination_scale(k): self.condition(d) for k, d in term.items()},
            mode,
        )

    def updates(self, sched: gs.Scheduler, steps: int, limit: int = MAX_STEPS) -> list[Update]:
        """``steps`` updates of ``sched``: each one's time steps and their absolute times (ms);
        :class:`NoEnd` if an update does not end within ``limit`` time steps."""
        clock = sched.get_clock(sched.default_execution_id)
        out = []
        for _ in range(steps):
            self.ran = set()
            time_steps, times = [], []
            for ts in sched.run():
                if len(time_steps) >= limit:
                    raise NoEnd
                time_steps.append({str(n) for n in ts})
                times.append(float(clock.time.absolute.to("ms").m))
                for n in ts:
                    self.runs[str(n)] += 1
                    self.ran.add(str(n))
            out.append((time_steps, times))
        return out


def gs_condition(d: dict, nodes: dict[str, OracleNode], getter: Callable) -> gs.Condition:
    """graph-scheduler's condition for the MDF condition ``d``: the class it names, called with
    its arguments (node ids as ``nodes``, ``TimeScale.X`` as time scales, nested conditions
    built the same way; ``getter`` reads a Threshold's parameter)."""
    cls = getattr(gs, d["type"])
    params = inspect.signature(cls).parameters

    def arg(v: Any) -> Any:
        if isinstance(v, dict):
            return gs_condition(v, nodes, getter)
        if isinstance(v, list):
            return [arg(x) for x in v]
        if isinstance(v, str) and v in nodes:
            return nodes[v]
        if isinstance(v, str) and v.startswith("TimeScale."):
            return TS[v.split(".", 1)[1]]
        return v

    kwargs = {k: arg(v) for k, v in d["kwargs"].items()}
    if "custom_parameter_getter" in params:
        kwargs["custom_parameter_getter"] = getter
        kwargs["custom_parameter_validator"] = lambda dep, p: True
    star = [n for n, p in params.items() if p.kind is p.VAR_POSITIONAL]
    if star:
        listed = [kwargs.pop(k) for k in (star[0], "dependencies", "args") if k in kwargs]
        return cls(*(listed[0] if listed else []), **kwargs)
    if "dependencies" in kwargs and "dependency" in params:
        kwargs["dependency"] = kwargs.pop("dependencies")
    return cls(**kwargs)


#: build(a, b, c, getter) -> (node conditions, termination conditions), graph-scheduler's own
ChainBuild = Callable[..., tuple[dict, dict]]


def oracle_time_steps(build: ChainBuild, steps: int, finish: dict | None = None) -> list[set[str]]:
    """graph-scheduler's time steps over ``steps`` updates of the chain A -> B -> C, one after
    another, with the conditions that ``build(a, b, c, getter)`` makes of the chain's nodes."""
    run = OracleRun({"A": [], "B": ["A"], "C": ["B"]}, finish)
    conds, term = build(*run.nodes.values(), run.getter)
    updates = run.updates(run.scheduler(conds, term), steps, limit=10**9)
    return [s for time_steps, _ in updates for s in time_steps]
