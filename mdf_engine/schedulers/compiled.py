"""graph-scheduler's conditions as a table that the compiled backend turns into code.

The compiled backend runs graph-scheduler's algorithm (passes over the consideration queue,
consideration sets that grow while conditions become true, call counts, termination
conditions) inside jitted code. Here a built ``graph_scheduler.Scheduler`` is flattened into a
table: one row per node condition and termination condition (a kind and its owner node), plus
the state those conditions read (threshold values, absolute times);
:mod:`mdf_engine.schedulers.codegen` writes the code that evaluates it.

The conditions come from the scheduler's condition kinds
(:class:`~mdf_engine.schedulers.conditions.Scheduler`, :mod:`mdf_engine.schedulers.kinds`): a
kind's ``code`` says what it means in the compiled loop. A kind that is not compiled, or one
with a time scale the loop does not track, raises :class:`NotCompilable` naming the condition;
the caller falls back to the interpreted backend with a log line.

Counters the table refers to:

* calls in a consideration set execution count like calls in a pass: graph-scheduler resets
  both at the start of every pass and never in between;
* ``useable[a, b]``: calls of node ``a`` since node ``b`` last ran (graph-scheduler's
  ``counts_useable``; reset at the start of every environment state update);
* ``total[s, n]``: calls of node ``n`` in time scale ``s`` (0 pass, 1 environment state update,
  2 environment sequence/life);
* ``clock[0]`` passes in this update, ``clock[1]`` passes ever, ``clock[2]`` updates ever,
  ``clock[3 + s]`` consideration set executions (time steps, empty ones included) in time
  scale ``s``;
* ``clock[6]``: absolute time in ticks (see :class:`AbsoluteTime`);
* ``last_set[n]``: node ``n`` was in the last consideration set (for ``JustRan``).

Absolute time (``TimeInterval``, ``TimeTermination``): when some node or termination condition
is absolute, graph-scheduler gives every consideration set a fixed length of time (the greatest
common divisor of the ``repeat`` intervals, divided by the number of consideration sets; 1 ms
when no condition repeats), yields every set, empty ones included, and has no idle passes. Its
clock is a ``pint`` quantity with exact fractions; here every time is a whole number of ticks, a
tick being the largest fraction of a millisecond that divides all of them, so that comparisons
are exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from math import lcm
from typing import Any

import numpy as np

from ..errors import NotCompilable
from .kinds import All, AllHaveRun, Always, ConditionKind, EveryNCalls, Never
from .kinds import Any as AnyOf
from .time_scales import TimeScale

ESU = TimeScale.ENVIRONMENT_STATE_UPDATE
ES = TimeScale.ENVIRONMENT_SEQUENCE


@dataclass(frozen=True)
class TimeCondition:
    """A TimeInterval (``repeat``, ``start``, ``end``) or TimeTermination (``start`` is its
    ``t``): times in milliseconds until :func:`encode` turns them into ticks."""

    repeat: Fraction | int | None = None
    start: Fraction | int | None = None
    end: Fraction | int | None = None
    start_inclusive: bool = True
    end_inclusive: bool = True
    owner_set: int = 0  # the owner's consideration set: the phase of ``repeat``
    offset: Fraction | int = 0  # owner_set times the length of a set

    def at_set(self, owner_set: int) -> TimeCondition:
        """This condition repeating from consideration set ``owner_set``."""
        return replace(self, owner_set=owner_set)


@dataclass
class AbsoluteTime:
    """graph-scheduler's absolute clock as whole ticks: ``enabled`` when some node or
    termination condition is absolute; each consideration set lasts ``step`` ticks; an update
    starts no earlier than ``first``; ``ticks_per_ms`` converts."""

    enabled: bool = False
    step: int = 0
    first: int = 0
    ticks_per_ms: int = 1
    conditions: list[TimeCondition] = field(default_factory=list)


class ConditionTable:
    """A graph's conditions for the compiled loop: ``rows`` (a kind and its owner node, -1 for
    termination), ``thresholds`` ((node, name, indices) of each value a Threshold reads) and
    ``times`` (each absolute-time condition in milliseconds; :attr:`absolute` has them in
    ticks)."""

    def __init__(self, node_index: dict[str, int]):
        self.node_index = node_index
        self.rows: list[tuple[ConditionKind, int]] = []
        self.thresholds: list[tuple[str, str, Any]] = []  # (node, name, indices) per slot
        self._threshold_keys: dict[tuple, int] = {}
        self.sched_nodes: dict[str, Any] = {}  # node id -> the scheduler's node object
        #: consideration set index of each node (a TimeInterval's offset depends on it)
        self.set_of: dict[int, int] = {}
        #: the absolute-time conditions, in milliseconds, before they become ticks
        self.times: list[TimeCondition] = []
        self.absolute = AbsoluteTime()

    def add(self, cond: ConditionKind, owner: int) -> int:
        """Append ``cond``, the condition of node ``owner`` (-1: a termination condition),
        reserving the state it reads; return its row."""
        cond.register(self, owner)
        self.rows.append((cond, owner))
        return len(self.rows) - 1

    def add_any(self, rows: list[int]) -> int:
        """Append an ``Any`` of the termination conditions at ``rows``; return its row."""
        return self.add(AnyOf(tuple(self.rows[r][0] for r in rows)), -1)

    def node(self, dep: str) -> int:
        """The index of node ``dep``."""
        key = str(dep)
        if key not in self.node_index:
            raise NotCompilable(f"condition names unknown node {key!r}")
        return self.node_index[key]

    def node_ids(self) -> list[str]:
        return list(self.node_index)

    def finish_value(self, node_id: str) -> str | None:
        """The ``is_finished`` value of a node, if it has one
        (:class:`~mdf_engine.schedulers.conditions.SchedNode`)."""
        return getattr(self.sched_nodes.get(node_id), "finish_value", None)

    def threshold_slot(self, node_id: str, name: str, indices: Any) -> int:
        """The slot of the value ``name`` of node ``node_id`` at ``indices`` (one per value,
        however many conditions read it)."""
        key = (node_id, name, _frozen(indices))
        if key not in self._threshold_keys:
            self._threshold_keys[key] = len(self.thresholds)
            self.thresholds.append((node_id, name, indices))
        return self._threshold_keys[key]

    @staticmethod
    def time_condition(**times: Any) -> TimeCondition:
        """A :class:`TimeCondition` from graph-scheduler's time quantities."""
        for k in ("repeat", "start", "end"):
            if k in times:
                times[k] = _ms(times[k])
        return TimeCondition(**times)

    def time_slot(self, tc: TimeCondition) -> int:
        """The slot of ``tc`` (one per distinct condition)."""
        if tc not in self.times:
            self.times.append(tc)
        return self.times.index(tc)


def _frozen(v: Any) -> Any:
    """``v`` with its lists made tuples (a key)."""
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    return v


def _ms(q: Any) -> Fraction | None:
    """A pint time quantity as an exact number of milliseconds."""
    if q is None:
        return None
    return _exact(q.m) * _exact((1 * q.u).to("ms").m)


def _exact(x: Any) -> Fraction:
    """``x`` (an int, a fraction, possibly of numpy integers, or a float as written) exactly."""
    if isinstance(x, Fraction):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, float) or hasattr(x, "dtype") and x.dtype.kind == "f":
        return Fraction(repr(float(x)))
    return Fraction(int(x))


def _absolute_time(scheduler: Any, table: ConditionTable) -> AbsoluteTime:
    """The clock that graph-scheduler runs for ``scheduler`` (see the module docstring), with
    every time condition of ``table`` in ticks."""
    try:
        absolute = scheduler.get_absolute_conditions()
        interval = (
            _ms(scheduler._get_absolute_consideration_set_execution_unit())
            if absolute
            else Fraction(1)
        )
    except Exception as e:  # a graph-scheduler without these methods
        raise NotCompilable(f"absolute time ({type(e).__name__}: {e})") from None
    first = Fraction(0)
    if absolute:
        points = [[_ms(p) for p in c.absolute_fixed_points] for c in absolute.values()]
        first = min(min(p) if p else Fraction(0) for p in points)
    # graph-scheduler's TimeInterval counts ``repeat`` from ``start`` in exact time (its mode
    # EXACT_TIME, or a single consideration set), else from the owner's place in the pass
    exact = (
        getattr(scheduler.mode, "name", scheduler.mode) == "EXACT_TIME"
        or len(scheduler.consideration_queue) == 1
    )
    times = [
        replace(tc, offset=tc.start if exact and tc.start is not None else tc.owner_set * interval)
        for tc in table.times
    ]
    values = [interval, first] + [
        v for tc in times for v in (tc.repeat, tc.start, tc.end, tc.offset) if v is not None
    ]
    ticks = lcm(*(Fraction(v).denominator for v in values))

    def tick(v: Any) -> int | None:
        return None if v is None else int(Fraction(v) * ticks)

    conds = [
        TimeCondition(
            tick(tc.repeat),
            tick(tc.start),
            tick(tc.end),
            tc.start_inclusive,
            tc.end_inclusive,
            tc.owner_set,
            tick(tc.offset),
        )
        for tc in times
    ]
    return AbsoluteTime(bool(absolute), tick(interval), tick(first), ticks, conds)


def encode(scheduler: Any, node_ids: list[str]):
    """Encode the conditions of a :class:`~mdf_engine.schedulers.conditions.Scheduler`:
    returns (table, node roots, termination root, consideration queue as (starts, nodes))."""
    kinds = getattr(scheduler, "kinds", None)
    if kinds is None:
        raise TypeError("encode() needs the scheduler of make_scheduler (it keeps the kinds)")
    index = {nid: i for i, nid in enumerate(node_ids)}
    table = ConditionTable(index)
    table.sched_nodes = {str(n): n for n in scheduler.nodes}
    table.set_of = {
        index[str(n)]: q for q, cs in enumerate(scheduler.consideration_queue) for n in cs
    }
    senders = {str(n): sorted(str(d) for d in deps) for n, deps in scheduler.graph.items()}
    roots = np.zeros(len(node_ids), dtype=np.int64)
    for nid in node_ids:
        cond = kinds.nodes.get(nid) or default_condition(senders.get(nid, []))
        roots[index[nid]] = table.add(cond, index[nid])
    term = kinds.termination
    for ts in term:
        if ts not in (ESU, ES):
            raise NotCompilable(f"termination at time scale {ts.name}")
    term_root = table.add(term.get(ESU, AllHaveRun()), -1)
    seq = term.get(ES)
    if seq is not None and not isinstance(seq, Never):
        # graph-scheduler runs passes while neither termination holds
        term_root = table.add_any([term_root, table.add(seq, -1)])
    table.absolute = _absolute_time(scheduler, table)
    starts, nodes = [0], []
    for cs in scheduler.consideration_queue:
        nodes.extend(sorted(index[str(n)] for n in cs))
        starts.append(len(nodes))
    return table, roots, term_root, (np.array(starts, np.int64), np.array(nodes, np.int64))


def default_condition(senders: list[str]) -> ConditionKind:
    """graph-scheduler's condition for a node the file gives none: ``Always`` without
    senders, else ``EveryNCalls(sender, 1)`` (``All`` of them for several)."""
    if not senders:
        return Always()
    if len(senders) == 1:
        return EveryNCalls(senders[0], 1)
    return All(tuple(EveryNCalls(d, 1) for d in senders))


def static_sets(
    table: ConditionTable, roots: Any, term: int, queue: Any, composite: bool = True
) -> list[list[int]] | None:
    """The consideration sets of a fixed schedule (every node once per update, in queue
    order), or None when the conditions make the order depend on the run. Fixed means: every
    node's condition is ``Always`` or ``EveryNCalls(sender, 1)`` with the sender in an earlier
    consideration set (or, if ``composite``, ``All`` of such conditions: graph-scheduler's
    default for several senders), and the update ends when every node has run once
    (``AllHaveRun`` in the update: graph-scheduler's default)."""
    starts, qnodes = queue
    set_of = {
        int(qnodes[k]): q for q in range(len(starts) - 1) for k in range(starts[q], starts[q + 1])
    }

    def fixed(cond: ConditionKind, owner: int) -> bool:
        if isinstance(cond, Always):
            return True
        if isinstance(cond, EveryNCalls) and cond.n == 1:
            sender = table.node_index.get(cond.dependency)
            return set_of.get(sender, 1 << 30) < set_of.get(owner, -1)
        if composite and isinstance(cond, All):
            return all(fixed(c, owner) for c in cond.args)
        return False

    if not all(fixed(table.rows[int(r)][0], owner) for owner, r in enumerate(roots)):
        return None
    end = table.rows[term][0]
    if not (
        isinstance(end, AllHaveRun)
        and end.time_scale is ESU
        and {table.node_index[d] for d in end.dependencies or table.node_ids()}
        == set(range(len(table.node_index)))
    ):
        return None
    return [
        sorted(int(m) for m in qnodes[starts[q] : starts[q + 1]]) for q in range(len(starts) - 1)
    ]
