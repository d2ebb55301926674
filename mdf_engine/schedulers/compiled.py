"""graph-scheduler's conditions as a table that the compiled backend turns into code.

The compiled backend runs graph-scheduler's algorithm (passes over the consideration queue,
consideration sets that grow while conditions become true, call counts, termination
conditions) inside jitted code. Here a built ``graph_scheduler.Scheduler`` is flattened into a
table: one row per condition node, children listed before their parents;
:mod:`mdf_engine.schedulers.codegen` writes the code that evaluates it.

A condition is compilable when it is one of the kinds in :data:`OPCODES` with time scales the
loop tracks; :func:`encode` raises :class:`NotCompilable` naming the condition otherwise, and the
caller falls back to the interpreted backend with a log line.

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

from dataclasses import dataclass, field
from fractions import Fraction
from math import lcm
from typing import Any

import graph_scheduler
import numpy as np
from graph_scheduler import TimeScale

from ..errors import NotCompilable

OPCODES = {
    "Always": 0,
    "Never": 1,
    "All": 2,
    "And": 2,
    "Any": 3,
    "Or": 3,
    "Not": 4,
    "EveryNCalls": 5,
    "AfterNCalls": 6,
    "AtNCalls": 7,
    "BeforeNCalls": 8,
    "AfterCall": 9,
    "AllHaveRun": 10,
    "JustRan": 11,
    "AtPass": 12,
    "AfterPass": 13,
    "AfterNPasses": 14,
    "EveryNPasses": 15,
    "BeforePass": 16,
    "AtEnvironmentStateUpdate": 17,
    "AfterEnvironmentStateUpdate": 18,
    "AfterNEnvironmentStateUpdates": 19,
    "BeforeEnvironmentStateUpdate": 20,
    "Threshold": 21,
    "AfterNCallsCombined": 22,
    "AtEnvironmentSequence": 23,
    "AfterEnvironmentSequence": 24,
    "AfterNEnvironmentSequences": 25,
    "AtConsiderationSetExecution": 26,
    "BeforeConsiderationSetExecution": 27,
    "AfterConsiderationSetExecution": 28,
    "AfterNConsiderationSetExecutions": 29,
    "TimeInterval": 30,
    "TimeTermination": 31,
}
COMPARATORS = {"<": 0, "<=": 1, ">": 2, ">=": 3, "==": 4, "!=": 5}
_SCALE_ROW = {
    TimeScale.CONSIDERATION_SET_EXECUTION: 0,
    TimeScale.PASS: 0,
    TimeScale.ENVIRONMENT_STATE_UPDATE: 1,
    TimeScale.ENVIRONMENT_SEQUENCE: 2,
    TimeScale.LIFE: 2,
}

# row layout of the int table
OP, A, B, N, FIRST_CHILD, N_CHILDREN = range(6)


class ConditionTable:
    """Flattened conditions: ``ints`` (rows of OP, A, B, N, first child, #children), ``floats``
    (threshold, atol, rtol), ``children`` (row indices), ``order`` (evaluation order per root)."""

    def __init__(self, node_index: dict[str, int]):
        self.node_index = node_index
        self.ints: list[list[int]] = []
        self.floats: list[list[float]] = []
        self.children: list[int] = []
        self.thresholds: list[tuple[str, str, Any]] = []  # (node, name, indices) per slot
        self.sched_nodes: dict[str, Any] = {}  # node id -> the scheduler's node object
        #: consideration set index of each node (a TimeInterval's offset depends on it)
        self.set_of: dict[int, int] = {}
        #: the absolute-time conditions, in milliseconds, before they become ticks
        self.times: list[TimeCondition] = []
        self.absolute = AbsoluteTime()

    def add(self, cond: graph_scheduler.Condition, owner: int) -> int:
        """Append ``cond`` (and its children); return its row."""
        if type(cond).__name__ in _FINISHED:
            return self._add_finished(cond)
        name = _known_name(cond)
        op = OPCODES[name]
        kids: list[int] = []
        a = b = n = 0
        fl = [0.0, 0.0, 0.0]
        args = list(getattr(cond, "args", ()))
        kw = dict(getattr(cond, "kwargs", {}))
        closure_scale = _closure_time_scale(cond)
        if closure_scale is not None and "time_scale" not in kw:
            # several classes keep ``time_scale`` only in their function's closure
            kw["time_scale"] = closure_scale
            if op in (12, 13, 14, 15, 16, 17, 18, 19, 20, 26, 27, 28, 29) and len(args) > 1:
                args = args[:1]
        if op in (2, 3):
            kids = [self.add(c, owner) for c in args]
        elif op == 4:
            kids = [self.add(args[0], owner)]
        elif op == 5:
            a, n, b = self._node(args[0]), int(args[1]), owner
        elif op in (6, 7, 8, 9):
            a, n = self._node(args[0]), int(args[1])
            b = self._scale(
                getattr(
                    cond, "time_scale", kw.get("time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE)
                )
            )
        elif op == 10:
            deps = args or list(self.node_index)
            kids = [-1 - self._node(d) for d in deps]
            b = self._scale(getattr(cond, "time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE))
        elif op == 11:
            a = self._node(args[0])
        elif op in (12, 13, 14, 15, 16):
            n = int(args[0])
            ts = (
                args[1]
                if len(args) > 1
                else kw.get("time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE)
            )
            if ts not in (
                TimeScale.ENVIRONMENT_STATE_UPDATE,
                TimeScale.ENVIRONMENT_SEQUENCE,
                TimeScale.LIFE,
            ):
                raise NotCompilable(f"{name} at time scale {ts}")
            b = 0 if ts is TimeScale.ENVIRONMENT_STATE_UPDATE else 1
        elif op in (17, 18, 19, 20):
            n = int(args[0])
            ts = args[1] if len(args) > 1 else kw.get("time_scale", TimeScale.ENVIRONMENT_SEQUENCE)
            if ts not in (TimeScale.ENVIRONMENT_SEQUENCE, TimeScale.LIFE):
                raise NotCompilable(f"{name} at time scale {ts}")
        elif op in (23, 24, 25):
            n = int(args[0])
        elif op in (26, 27, 28, 29):
            n = int(args[0])
            ts = (
                args[1]
                if len(args) > 1
                else kw.get("time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE)
            )
            if ts in (TimeScale.CONSIDERATION_SET_EXECUTION, TimeScale.PASS):
                # graph-scheduler itself cannot count these (TimeScaleError)
                raise NotCompilable(f"{name} at time scale {ts}")
            b = self._scale(ts)
        elif op in (30, 31):
            a = self._time_condition(cond, owner)
        elif op == 21:
            comparator = kw.get("comparator")
            if comparator not in COMPARATORS:
                raise NotCompilable(f"Threshold comparator {comparator!r}")
            a = len(self.thresholds)
            self.thresholds.append((str(kw["dependency"]), kw["parameter"], kw.get("indices")))
            b = COMPARATORS[comparator]
            fl = [float(kw["threshold"]), float(kw.get("atol", 0)), float(kw.get("rtol", 0))]
        elif op == 22:
            deps = list(args[:-1]) if args and isinstance(args[-1], int) else list(args)
            n = int(kw.get("n", args[-1] if args and isinstance(args[-1], int) else 0))
            kids = [-1 - self._node(d) for d in deps]
            b = self._scale(kw.get("time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE))
        return self._row(op, a, b, n, kids, fl)

    def _time_condition(self, cond: Any, owner: int) -> int:
        """Record a TimeInterval/TimeTermination; return its slot in :attr:`times`."""
        if type(cond).__name__ == "TimeTermination":
            tc = TimeCondition(start=_ms(cond.t), start_inclusive=bool(cond.kwargs["inclusive"]))
        else:
            kw = cond.kwargs
            tc = TimeCondition(
                repeat=_ms(cond.repeat),
                start=_ms(cond.start),
                end=_ms(cond.end),
                start_inclusive=bool(kw.get("start_inclusive", True)),
                end_inclusive=bool(kw.get("end_inclusive", True)),
            )
            if tc.repeat is not None:
                if owner < 0 or owner not in self.set_of:
                    # graph-scheduler itself fails on it (the offset comes from the owner)
                    raise NotCompilable("TimeInterval with a repeat outside a node condition")
                if tc.repeat == 0:
                    raise NotCompilable("TimeInterval(repeat=0)")
                tc.owner_set = self.set_of[owner]
        self.times.append(tc)
        return len(self.times) - 1

    def _node(self, dep: Any) -> int:
        key = str(dep)
        if key not in self.node_index:
            raise NotCompilable(f"condition names unknown node {key!r}")
        return self.node_index[key]

    def add_any(self, rows: list[int]) -> int:
        """Append an ``Any`` row over existing ``rows``; return its row."""
        return self._row(OPCODES["Any"], 0, 0, 0, rows)

    def _row(
        self, op: int, a: int, b: int, n: int, kids: list[int], fl: list[float] | None = None
    ) -> int:
        row = len(self.ints)
        first = len(self.children)
        self.children.extend(kids)
        self.ints.append([op, a, b, n, first, len(kids)])
        self.floats.append(fl or [0.0, 0.0, 0.0])
        return row

    def _add_finished(self, cond: Any) -> int:
        """WhenFinished/Any/All as rows: a node is finished when it ran in this environment
        state update (its call count there is >= 1) and, if it has an ``is_finished`` value
        (:class:`~mdf_engine.schedulers.conditions.SchedNode`), that value is non-zero."""
        deps = list(getattr(cond, "args", ())) or list(self.node_index)
        deps = [self.sched_nodes.get(str(d), d) for d in deps]
        rows = []
        for d in deps:
            ran = self._row(OPCODES["AfterNCalls"], self._node(d), 1, 1, [])
            value = getattr(d, "finish_value", None)
            if value is None:
                rows.append(ran)
                continue
            slot = len(self.thresholds)
            self.thresholds.append((str(d), value, None))
            flag = self._row(OPCODES["Threshold"], slot, COMPARATORS["!="], 0, [])
            rows.append(self._row(OPCODES["All"], 0, 0, 0, [ran, flag]))
        if type(cond).__name__ == "WhenFinishedAny":
            return self._row(OPCODES["Any"], 0, 0, 0, rows)
        return self._row(OPCODES["All"], 0, 0, 0, rows)

    @staticmethod
    def _scale(ts: Any) -> int:
        if ts not in _SCALE_ROW:
            raise NotCompilable(f"call counts at time scale {ts}")
        return _SCALE_ROW[ts]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ints = np.array(self.ints or [[0] * 6], dtype=np.int64).reshape(-1, 6)
        floats = np.array(self.floats or [[0.0] * 3], dtype=np.float64).reshape(-1, 3)
        children = np.array(self.children or [0], dtype=np.int64)
        return ints, floats, children


@dataclass
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


def _absolute_time(scheduler: graph_scheduler.Scheduler, table: ConditionTable) -> AbsoluteTime:
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
        scheduler.mode is graph_scheduler.SchedulingMode.EXACT_TIME
        or len(scheduler.consideration_queue) == 1
    )
    for tc in table.times:
        tc.offset = tc.start if exact and tc.start is not None else tc.owner_set * interval
    values = [interval, first] + [
        v for tc in table.times for v in (tc.repeat, tc.start, tc.end, tc.offset) if v is not None
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
        for tc in table.times
    ]
    return AbsoluteTime(bool(absolute), tick(interval), tick(first), ticks, conds)


def encode(scheduler: graph_scheduler.Scheduler, node_ids: list[str]):
    """Encode a built graph-scheduler ``Scheduler``: returns (table, node roots, termination
    root, consideration queue as (starts, nodes))."""
    index = {nid: i for i, nid in enumerate(node_ids)}
    table = ConditionTable(index)
    table.sched_nodes = {str(n): n for n in scheduler.nodes}
    table.set_of = {
        index[str(n)]: q for q, cs in enumerate(scheduler.consideration_queue) for n in cs
    }
    roots = np.zeros(len(node_ids), dtype=np.int64)
    for nid in node_ids:
        cond = (
            scheduler.conditions.conditions_basic.get(_find(scheduler, nid))
            if _find(scheduler, nid) in scheduler.conditions.conditions_basic
            else None
        )
        if cond is None:
            cond = graph_scheduler.Always()
        roots[index[nid]] = table.add(cond, index[nid])
    term = scheduler.termination_conds
    for ts in term:
        if ts not in (TimeScale.ENVIRONMENT_STATE_UPDATE, TimeScale.ENVIRONMENT_SEQUENCE):
            raise NotCompilable(f"termination at time scale {ts.name}")
    term_root = table.add(term[TimeScale.ENVIRONMENT_STATE_UPDATE], -1)
    seq = term.get(TimeScale.ENVIRONMENT_SEQUENCE)
    if seq is not None and type(seq).__name__ != "Never":
        # graph-scheduler runs passes while neither termination holds
        term_root = table.add_any([term_root, table.add(seq, -1)])
    table.absolute = _absolute_time(scheduler, table)
    starts, nodes = [0], []
    for cs in scheduler.consideration_queue:
        nodes.extend(sorted(index[str(n)] for n in cs))
        starts.append(len(nodes))
    return table, roots, term_root, (np.array(starts, np.int64), np.array(nodes, np.int64))


_FINISHED = ("WhenFinished", "WhenFinishedAny", "WhenFinishedAll")


def _known_name(cond: Any) -> str:
    """The compiled kind of ``cond``: its class, or the nearest base class with an opcode
    (``AtEnvironmentStateUpdateStart`` is an ``AtPass``, ``...NStart`` an ``All``)."""
    for cls in type(cond).__mro__:
        if cls.__name__ in OPCODES and cls.__module__.startswith("graph_scheduler"):
            return cls.__name__
        if cls.__name__ in ("Condition", "CompositeCondition"):
            break
    raise NotCompilable(f"{type(cond).__name__} is not compiled")


def _closure_time_scale(cond: Any) -> Any:
    """The ``time_scale`` a condition's function closes over, if any."""
    func = getattr(cond, "func", None)
    code = getattr(func, "__code__", None)
    if code is None or not func.__closure__:
        return None
    for name, cell in zip(code.co_freevars, func.__closure__):
        if name == "time_scale":
            try:
                return cell.cell_contents
            except ValueError:
                return None
    return None


def _find(scheduler, nid: str):
    for n in scheduler.nodes:
        if str(n) == nid:
            return n
    return nid
