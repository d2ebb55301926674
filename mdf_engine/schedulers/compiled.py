"""graph-scheduler's conditions as data that a Numba loop can evaluate.

The compiled backend runs graph-scheduler's algorithm (passes over the consideration queue,
consideration sets that grow while conditions become true, call counts, termination
conditions) inside jitted code. Conditions are flattened into a table: one row per condition
node, children listed before their parents, so that evaluating a condition is one walk over a
slice of rows.

A condition is compilable when it is one of the kinds in :data:`OPCODES` with time scales the
loop tracks; :func:`encode` raises :class:`NotCompilable` naming the condition otherwise, and the
caller falls back to the interpreted backend with a log line.

Counters the loop keeps (all int64):

* calls in a consideration set execution count like calls in a pass: graph-scheduler resets
  both at the start of every pass and never in between;
* ``useable[a, b]``: calls of node ``a`` since node ``b`` last ran (graph-scheduler's
  ``counts_useable``; reset at the start of every environment state update);
* ``total[s, n]``: calls of node ``n`` in time scale ``s`` (0 pass, 1 environment state update,
  2 environment sequence/life);
* ``clock[0]`` passes in this update, ``clock[1]`` passes ever, ``clock[2]`` updates ever;
* ``last_set[n]``: node ``n`` was in the last consideration set (for ``JustRan``).
"""

from __future__ import annotations

from typing import Any

import graph_scheduler
import numpy as np
from graph_scheduler import TimeScale
from numba import njit

OPCODES = {
    "Always": 0, "Never": 1, "All": 2, "And": 2, "Any": 3, "Or": 3, "Not": 4,
    "EveryNCalls": 5, "AfterNCalls": 6, "AtNCalls": 7, "BeforeNCalls": 8, "AfterCall": 9,
    "AllHaveRun": 10, "JustRan": 11, "AtPass": 12, "AfterPass": 13, "AfterNPasses": 14,
    "EveryNPasses": 15, "BeforePass": 16, "AtEnvironmentStateUpdate": 17,
    "AfterEnvironmentStateUpdate": 18, "AfterNEnvironmentStateUpdates": 19,
    "BeforeEnvironmentStateUpdate": 20, "Threshold": 21, "AfterNCallsCombined": 22,
    "AtEnvironmentSequence": 23, "AfterEnvironmentSequence": 24,
    "AfterNEnvironmentSequences": 25,
}
COMPARATORS = {"<": 0, "<=": 1, ">": 2, ">=": 3, "==": 4, "!=": 5}
_SCALE_ROW = {TimeScale.CONSIDERATION_SET_EXECUTION: 0, TimeScale.PASS: 0, TimeScale.ENVIRONMENT_STATE_UPDATE: 1,
              TimeScale.ENVIRONMENT_SEQUENCE: 2, TimeScale.LIFE: 2}

# row layout of the int table
OP, A, B, N, FIRST_CHILD, N_CHILDREN = range(6)


class NotCompilable(Exception):
    """A condition the compiled scheduler does not implement."""


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
            if op in (12, 13, 14, 15, 16, 17, 18, 19, 20) and len(args) > 1:
                args = args[:1]
        if op in (2, 3):
            kids = [self.add(c, owner) for c in args]
        elif op == 4:
            kids = [self.add(args[0], owner)]
        elif op == 5:
            a, n, b = self._node(args[0]), int(args[1]), owner
        elif op in (6, 7, 8, 9):
            a, n = self._node(args[0]), int(args[1])
            b = self._scale(getattr(cond, "time_scale", kw.get("time_scale",
                                                            TimeScale.ENVIRONMENT_STATE_UPDATE)))
        elif op == 10:
            deps = args or list(self.node_index)
            kids = [-1 - self._node(d) for d in deps]
            b = self._scale(getattr(cond, "time_scale", TimeScale.ENVIRONMENT_STATE_UPDATE))
        elif op == 11:
            a = self._node(args[0])
        elif op in (12, 13, 14, 15, 16):
            n = int(args[0])
            ts = args[1] if len(args) > 1 else kw.get("time_scale",
                                                      TimeScale.ENVIRONMENT_STATE_UPDATE)
            if ts not in (TimeScale.ENVIRONMENT_STATE_UPDATE, TimeScale.ENVIRONMENT_SEQUENCE,
                          TimeScale.LIFE):
                raise NotCompilable(f"{name} at time scale {ts}")
            b = 0 if ts is TimeScale.ENVIRONMENT_STATE_UPDATE else 1
        elif op in (17, 18, 19, 20):
            n = int(args[0])
            ts = args[1] if len(args) > 1 else kw.get("time_scale",
                                                      TimeScale.ENVIRONMENT_SEQUENCE)
            if ts not in (TimeScale.ENVIRONMENT_SEQUENCE, TimeScale.LIFE):
                raise NotCompilable(f"{name} at time scale {ts}")
        elif op in (23, 24, 25):
            n = int(args[0])
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
        row = len(self.ints)
        first = len(self.children)
        self.children.extend(kids)
        self.ints.append([op, a, b, n, first, len(kids)])
        self.floats.append(fl)
        return row

    def _node(self, dep: Any) -> int:
        key = str(dep)
        if key not in self.node_index:
            raise NotCompilable(f"condition names unknown node {key!r}")
        return self.node_index[key]

    def add_any(self, rows: list[int]) -> int:
        """Append an ``Any`` row over existing ``rows``; return its row."""
        return self._row(OPCODES["Any"], 0, 0, 0, rows)

    def _row(self, op: int, a: int, b: int, n: int, kids: list[int],
             fl: list[float] | None = None) -> int:
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


def encode(scheduler: graph_scheduler.Scheduler, node_ids: list[str]):
    """Encode a built graph-scheduler ``Scheduler``: returns (table, node roots, termination
    root, consideration queue as (starts, nodes))."""
    index = {nid: i for i, nid in enumerate(node_ids)}
    table = ConditionTable(index)
    table.sched_nodes = {str(n): n for n in scheduler.nodes}
    roots = np.zeros(len(node_ids), dtype=np.int64)
    for nid in node_ids:
        cond = scheduler.conditions.conditions_basic.get(_find(scheduler, nid)) \
            if _find(scheduler, nid) in scheduler.conditions.conditions_basic else None
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


@njit(cache=True, inline="always")
def _leaf(r, ints, floats, children, useable, total, clock, last_set, thr):
    op = ints[r, OP]
    a = ints[r, A]
    b = ints[r, B]
    n = ints[r, N]
    first = ints[r, FIRST_CHILD]
    nk = ints[r, N_CHILDREN]
    if op == 0:
        return True
    if op == 1:
        return False
    if op == 5:
        return useable[a, b] >= n
    if op == 6:
        return total[b, a] >= n
    if op == 7:
        return total[b, a] == n
    if op == 8:
        return total[b, a] < n
    if op == 9:
        return total[b, a] > n
    if op == 10:
        for k in range(nk):
            if total[b, -1 - children[first + k]] < 1:
                return False
        return True
    if op == 11:
        return last_set[a]
    if op >= 12 and op <= 16:
        p = clock[0] if b == 0 else clock[1]
        if op == 12:
            return p == n
        if op == 13:
            return p > n
        if op == 14:
            return p >= n
        if op == 15:
            return p % n == 0
        return p < n
    if op >= 17 and op <= 20:
        e = clock[2]
        if op == 17:
            return e == n
        if op == 18:
            return e > n
        if op == 19:
            return e >= n
        return e < n
    if op == 21:
        x = thr[a]
        t = floats[r, 0]
        if b == 0:
            return x < t
        if b == 1:
            return x <= t
        if b == 2:
            return x > t
        if b == 3:
            return x >= t
        close = abs(x - t) <= floats[r, 1] + floats[r, 2] * abs(t)
        return close if b == 4 else not close
    if op >= 23 and op <= 25:
        # one Simulation is one environment sequence: its index is always 0
        if op == 23:
            return n == 0
        if op == 24:
            return 0 > n
        return 0 >= n
    if op == 22:
        s = 0
        for k in range(nk):
            s += total[b, -1 - children[first + k]]
        return s >= n
    return False


@njit(cache=True)
def condition_satisfied(row, ints, floats, children, useable, total, clock, last_set, thr,
                        value, done, stack):
    """Whether the condition at ``row`` holds. Composite conditions (All, Any, Not) are walked
    iteratively with the caller's scratch arrays ``value``, ``done`` (bool, one per row) and
    ``stack`` (int64, two per row); leaves are evaluated directly."""
    op = ints[row, OP]
    if op != 2 and op != 3 and op != 4:
        return _leaf(row, ints, floats, children, useable, total, clock, last_set, thr)
    nrows = ints.shape[0]
    for r in range(nrows):
        done[r] = False
    sp = 0
    stack[sp] = row
    sp += 1
    while sp > 0:
        r = stack[sp - 1]
        op = ints[r, OP]
        first = ints[r, FIRST_CHILD]
        nk = ints[r, N_CHILDREN]
        if op == 2 or op == 3 or op == 4:
            pending = False
            for k in range(nk):
                c = children[first + k]
                if not done[c]:
                    stack[sp] = c
                    sp += 1
                    pending = True
            if pending:
                continue
        sp -= 1
        if done[r]:
            continue
        if op == 2:
            v = True
            for k in range(nk):
                if not value[children[first + k]]:
                    v = False
        elif op == 3:
            v = False
            for k in range(nk):
                if value[children[first + k]]:
                    v = True
        elif op == 4:
            v = not value[children[first]]
        else:
            v = _leaf(r, ints, floats, children, useable, total, clock, last_set, thr)
        value[r] = v
        done[r] = True
    return value[row]


# -- bookkeeping the generated loop calls (compiled once here, not in every model) -------------

@njit(cache=True)
def mark_ran(m, total, useable):
    """Node ``m`` ran: count the call at every time scale; calls of others since ``m`` ran
    start again from zero, and ``m``'s call counts for every node."""
    total[0, m] += 1
    total[1, m] += 1
    total[2, m] += 1
    for r in range(useable.shape[0]):
        useable[r, m] = 0
    for r in range(useable.shape[0]):
        useable[m, r] += 1


@njit(cache=True)
def end_set(execd, last_set, logbuf, logpos):
    """A consideration set ran: remember it for ``JustRan`` and log it as a time step when
    logging is on (``logpos[1] == 1``)."""
    for r in range(execd.shape[0]):
        last_set[r] = execd[r]
    if logpos[1] == 1:
        for r in range(execd.shape[0]):
            if execd[r] and logpos[0] < logbuf.shape[0]:
                logbuf[logpos[0]] = r
                logpos[0] += 1
        if logpos[0] < logbuf.shape[0]:
            logbuf[logpos[0]] = -1
            logpos[0] += 1


@njit(cache=True)
def end_idle_pass(last_set, logbuf, logpos):
    """A pass in which nothing ran: no node just ran; the log gets an empty time step."""
    for r in range(last_set.shape[0]):
        last_set[r] = False
    if logpos[1] == 1 and logpos[0] < logbuf.shape[0]:
        logbuf[logpos[0]] = -1
        logpos[0] += 1
