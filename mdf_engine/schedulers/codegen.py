"""Python source for graph-scheduler's algorithm over one graph, to be jitted with the model.

The compiled backend turns a graph's condition table (:mod:`mdf_engine.schedulers.compiled`)
into straight-line code: every condition becomes a boolean expression over a few local
counters, every consideration set an unrolled block, and only the counters some condition
reads are kept. With the scheduler's state in locals instead of arrays, Numba keeps it in
registers, so a scheduled update costs about what a hand-written loop of the same logic costs.

What one update does (graph-scheduler's ``Scheduler.run`` for one environment state update):

* counts of this update start from zero; so do the "calls since" counts of ``EveryNCalls``;
* passes run while the termination condition does not hold; each pass starts its own counts
  from zero and walks the consideration queue;
* before each consideration set the termination condition is checked again (an update can end
  in the middle of a pass); inside a set, members whose condition holds are marked as run,
  repeatedly, until no more become runnable (a node runs at most once per set); then the
  marked nodes execute, in queue order, and the set is one time step of the log;
* a pass in which nothing ran is an empty time step; ``JustRan`` sees the last set;
* with absolute time, the clock first moves on to the earliest time a condition names, every
  consideration set is a time step (empty ones too) that moves it on by one set's length, and
  there are no idle passes.

Counter names in the generated code (``q_`` keeps them apart from the model's names):
``q_u{a}_{b}`` calls of node ``a`` since node ``b`` ran, ``q_t{s}_{n}`` calls of ``n`` in time
scale ``s`` (0 pass, 1 environment state update, 2 environment sequence / life), ``q_c0`` /
``q_c1`` / ``q_c2`` passes in this update / passes ever / updates ever, ``q_k{s}`` time steps
(consideration set executions) in time scale ``s``, ``q_at`` absolute time in ticks,
``q_ls{n}`` node ``n``
was in the last set, ``q_ev{n}`` node ``n`` has ever run, ``q_th{k}`` the value Threshold
``k`` compares, ``q_x{n}`` node ``n`` is marked in the current set.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from ..errors import NotCompilable
from .compiled import ConditionTable, TimeCondition
from .time_scales import TimeScale

#: an AllHaveRun over more nodes than this counts the nodes that have run (:meth:`all_ran`)
ALL_RAN_TERMS = 8

_NAME = re.compile(r"\bq_\w+")
_ASSIGN = re.compile(r"^\s*(q_\w+)\s*(?:=|\+=|-=)")


def _assigned(lines: list[str]) -> set[str]:
    """The scheduler locals that ``lines`` assign."""
    return {m.group(1) for ln in lines if (m := _ASSIGN.match(ln))}


#: a count in a time scale: its row of ``q_t``/``q_k`` (0 pass, 1 update, 2 sequence/life)
_SCALE_ROW = {
    TimeScale.CONSIDERATION_SET_EXECUTION: 0,
    TimeScale.PASS: 0,
    TimeScale.ENVIRONMENT_STATE_UPDATE: 1,
    TimeScale.ENVIRONMENT_SEQUENCE: 2,
    TimeScale.LIFE: 2,
}


def _log_entry(entry: str, ind: str) -> list[str]:
    """Code writing ``entry`` into the schedule log. The log is a ring buffer: ``q_lp``
    counts every entry ever written (``logpos[0]``), the buffer keeps the last ``q_logn`` of
    them, and ``q_li`` (``q_lp % q_logn``, taken once per run) is where the next goes, wrapped
    by a comparison: a ``%`` per entry (an integer division, ~25 cycles) cost PsyNeuLink's
    LCA model a tenth of its trial."""
    return [
        f"{ind}logbuf[q_li] = {entry}",
        f"{ind}q_lp += 1",
        f"{ind}q_li += 1",
        f"{ind}if q_li == q_logn:",
        f"{ind}    q_li = 0",
    ]


def _number_literal(v: float | int) -> str:
    """A number literal that is valid Python source (inf and nan included)."""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(float(v))


class SchedulerSource:
    """Writes the code of one scheduled update for a graph's condition table."""

    def __init__(
        self,
        table: ConditionTable,
        roots: np.ndarray,
        term: int,
        queue: tuple[np.ndarray, np.ndarray],
        n_nodes: int,
        number: Callable[[float | int], str] | None = None,
    ):
        #: the source of a number from the model (a threshold, a count, a time): by default
        #: a literal; the compiled backend names an entry of its constant table
        self.num = number or _number_literal
        self.table = table
        self.roots = [int(r) for r in roots]
        self.term = int(term)
        self.n = n_nodes
        self.clock = table.absolute
        starts, qnodes = queue
        self.sets = [
            sorted(int(m) for m in qnodes[starts[q] : starts[q + 1]])
            for q in range(len(starts) - 1)
        ]
        #: counters some condition reads: ("u", a, b), ("t", scale, node), ("ls", node)
        self.used: set[tuple] = set()
        self._indexed: tuple[int, tuple[dict, dict]] | None = None
        #: ``useable`` holds only the counters some condition reads, in their sorted order
        #: (:meth:`useable_count` of them), instead of a row and column per node: a graph of
        #: 10,000 nodes would hold 800 MB (and touch most of it, with huge pages)
        self.compact_useable = False
        #: (row of the counts, nodes) of each counter of nodes that have run (:meth:`all_ran`)
        self.all_ran_sets: list[tuple[int, frozenset[int]]] = []
        self._exprs = {r: self.condition(r) for r in {*self.roots, self.term}}
        self.n_thresholds = len(table.thresholds)
        if self.clock.enabled:
            self.used.add(("at",))

    # -- conditions ---------------------------------------------------------------------------
    def condition(self, row: int) -> str:
        """A boolean expression that holds when the condition at ``row`` of the table holds
        (its kind writes it, through the counter names below)."""
        cond, owner = self.table.rows[row]
        return cond.code(self, owner)

    def node(self, node_id: str) -> int:
        """The index of node ``node_id``."""
        return self.table.node(node_id)

    def all_nodes(self) -> list[int]:
        return list(range(len(self.table.node_index)))

    def calls(self, ts: TimeScale, node: int) -> str:
        """The calls of ``node`` in time scale ``ts``."""
        if ts not in _SCALE_ROW:
            raise NotCompilable(f"call counts at time scale {ts}")
        return self._t(_SCALE_ROW[ts], node)

    def calls_since(self, node: int, since: int) -> str:
        """The calls of ``node`` since node ``since`` last ran (in this update)."""
        return self._u(node, since)

    def ran_in_update(self, node: int, owner: int) -> str:
        """Whether ``node`` has executed in this update, as the condition of ``owner`` (-1: a
        termination condition) sees it (``WhenFinished``): a node is counted when it is
        chosen in a consideration set but executes after the set is complete, so while the
        set of ``owner`` is chosen, a member of it chosen already (``q_x``) has not executed
        in this set (graph-scheduler asks the node, which the executor updates when it runs
        it)."""
        calls = self._t(1, node)
        if owner < 0 or self.table.set_of.get(node) != self.table.set_of.get(owner):
            return f"({calls} >= 1)"
        return f"(({calls} >= 1 and not q_x{node}) or {calls} >= 2)"

    def all_ran(self, ts: TimeScale, deps: list[int]) -> str:
        """Whether every node of ``deps`` has run at least once in time scale ``ts``.

        Over a few nodes it is their call counts, each ``>= 1``. Over many (graph-scheduler's
        default end of an update, ``AllHaveRun()``, reads every node) with counts that start
        from zero in an update or a pass, it is one counter of the nodes that have run
        (``q_ar{k}``, raised when a node's count leaves zero): the check before each
        consideration set then costs one comparison instead of one per node, which made
        the code of a graph of thousands of nodes quadratic in size."""
        if ts not in _SCALE_ROW:
            raise NotCompilable(f"call counts at time scale {ts}")
        row = _SCALE_ROW[ts]
        unique = sorted(set(deps))
        ran = [f"{self._t(row, d)} >= 1" for d in unique]
        if len(unique) <= ALL_RAN_TERMS or row == 2:
            return "(" + " and ".join(ran) + ")" if ran else "True"
        k = len(self.all_ran_sets)
        self.all_ran_sets.append((row, frozenset(unique)))
        self.used.add(("ar", k))
        return f"(q_ar{k} >= {len(unique)})"

    def just_ran(self, node: int) -> str:
        """Whether ``node`` ran in the last consideration set."""
        self.used.add(("ls", node))
        return f"q_ls{node}"

    def passes(self, ts: TimeScale) -> str:
        """The passes in this update (``ts`` the update) or ever."""
        return "q_c0" if ts is TimeScale.ENVIRONMENT_STATE_UPDATE else "q_c1"

    def updates(self) -> str:
        """The environment state updates so far."""
        return "q_c2"

    def set_executions(self, ts: TimeScale, name: str) -> str:
        """The consideration set executions in time scale ``ts`` (an update or longer)."""
        if ts in (TimeScale.CONSIDERATION_SET_EXECUTION, TimeScale.PASS):
            # graph-scheduler itself cannot count these (TimeScaleError)
            raise NotCompilable(f"{name} at time scale {ts}")
        row = _SCALE_ROW[ts]
        self.used.add(("k", row))
        return f"q_k{row}"

    def clock_time(self) -> str:
        """Absolute time in ticks."""
        self.used.add(("at",))
        return "q_at"

    def time(self, tc: TimeCondition) -> TimeCondition:
        """``tc`` (in milliseconds) in ticks of the absolute clock."""
        return self.clock.conditions[self.table.time_slot(tc)]

    def threshold(self, node_id: str, name: str, indices: object) -> str:
        """The value a Threshold compares (its slot in the table)."""
        return f"q_th{self.table.threshold_slot(node_id, name, indices)}"

    def compare(self, x: str, comparator: str, t: float, atol: float, rtol: float) -> str:
        """``x comparator t``; ``==`` and ``!=`` within ``atol + rtol * |t|``."""
        if comparator in ("==", "!="):
            tol = atol + rtol * abs(t)
            close = f"(abs({x} - {self.num(t)}) <= {self.num(tol)})"
            return close if comparator == "==" else f"(not {close})"
        return f"({x} {comparator} {self.num(t)})"

    def _u(self, a: int, b: int) -> str:
        self.used.add(("u", a, b))
        return f"q_u{a}_{b}"

    def _t(self, scale: int, node: int) -> str:
        self.used.add(("t", scale, node))
        return f"q_t{scale}_{node}"

    # -- state held in locals -----------------------------------------------------------------
    def _counters(self, kind: str) -> list[tuple]:
        """The counters of ``kind`` some condition reads, sorted."""
        return self._index()[0].get(kind, [])

    def _of_node(self, kind: str, pos: int, m: int) -> list[tuple]:
        """The counters of ``kind`` whose element ``pos`` is node ``m``, sorted (a lookup:
        scanning every counter for every node made the code of a graph of thousands of nodes
        quadratic to write)."""
        return self._index()[1].get((kind, pos, m), [])

    def _index(self) -> tuple[dict[str, list[tuple]], dict[tuple, list[tuple]]]:
        """The counters by kind, and by (kind, position, node); made again only when a
        condition has added a counter since."""
        if self._indexed is None or self._indexed[0] != len(self.used):
            by_kind: dict[str, list[tuple]] = {}
            by_node: dict[tuple, list[tuple]] = {}
            for c in sorted(self.used):
                by_kind.setdefault(c[0], []).append(c)
                for pos in range(1, len(c)):
                    by_node.setdefault((c[0], pos, c[pos]), []).append(c)
            self._indexed = (len(self.used), (by_kind, by_node))
        return self._indexed[1]

    def held(self) -> list[tuple[str, str]]:
        """(local, state array element) of every scheduler value kept in a local during
        ``run``: loaded at the start, stored back before every return."""
        pairs = [
            ("q_c0", "clock[0]"),
            ("q_c1", "clock[1]"),
            ("q_c2", "clock[2]"),
            ("q_lp", "logpos[0]"),
        ]
        pairs += [(f"q_k{s}", f"clock[{3 + s}]") for _, s in self._counters("k")]
        pairs += [("q_at", "clock[6]") for _ in self._counters("at")]
        us = self._counters("u")
        if self.compact_useable:  # (the k-th counter some condition reads)
            pairs += [(f"q_u{a}_{b}", f"useable[{k}]") for k, (_, a, b) in enumerate(us)]
        else:
            pairs += [(f"q_u{a}_{b}", f"useable[{a}, {b}]") for _, a, b in us]
        pairs += [(f"q_t{s}_{m}", f"total[{s}, {m}]") for _, s, m in self._counters("t")]
        pairs += [(f"q_ls{m}", f"last_set[{m}]") for _, m in self._counters("ls")]
        pairs += [(f"q_ev{m}", f"ever[{m}]") for m in range(self.n)]
        pairs += [(f"q_th{k}", f"thr[{k}]") for k in range(self.n_thresholds)]
        return pairs

    def useable_count(self) -> int:
        """How many "calls since" counters some condition reads."""
        return len(self._counters("u"))

    def load(self, ind: str) -> list[str]:
        """Locals from the state arrays, at the start of ``run`` (and the log's switch and
        length, which are only read)."""
        # (a counter of nodes that have run starts from zero with the counts it follows:
        # at the start of every update or pass, never in the middle of one)
        ran = [f"{ind}q_ar{k} = 0" for k in range(len(self.all_ran_sets))]
        return (
            [f"{ind}{local} = {held}" for local, held in self.held()]
            + ran
            + [
                f"{ind}q_log = logpos[1] == 1",
                f"{ind}q_logn = logbuf.shape[0]",
                f"{ind}q_li = q_lp % q_logn",
            ]
        )

    def store(self, ind: str) -> list[str]:
        """The locals back into the state arrays, before every return."""
        return [f"{ind}{held} = {local}" for local, held in self.held()]

    def _mark(self, m: int, ind: str) -> list[str]:
        """Node ``m`` runs in this set: its calls count at every time scale, the calls of
        others since ``m`` ran start again, and ``m``'s call counts for every node."""
        out = []
        for k, (row, nodes) in enumerate(self.all_ran_sets):
            if m in nodes:  # (before its count leaves zero)
                out += [f"{ind}if q_t{row}_{m} == 0:", f"{ind}    q_ar{k} += 1"]
        out += [f"{ind}q_t{s}_{m} += 1" for _, s, _m in self._of_node("t", 2, m)]
        out += [f"{ind}q_u{a}_{b} = 0" for _, a, b in self._of_node("u", 2, m)]
        out += [f"{ind}q_u{a}_{b} += 1" for _, a, b in self._of_node("u", 1, m)]
        return out

    def _reset(self, scales: tuple[int, ...], useable: bool, ind: str) -> list[str]:
        out = [f"{ind}q_t{s}_{m} = 0" for _, s, m in self._counters("t") if s in scales]
        out += [f"{ind}q_k{s} = 0" for _, s in self._counters("k") if s in scales]
        out += [f"{ind}q_ar{k} = 0" for k, (s, _) in enumerate(self.all_ran_sets) if s in scales]
        if useable:
            out += [f"{ind}q_u{a}_{b} = 0" for _, a, b in self._counters("u")]
        return out

    def _set_ran(self, members: list[int], ind: str) -> list[str]:
        """A set ran: it is the last set (``JustRan``) and a time step of the log."""
        inside = set(members)
        out = [
            f"{ind}q_ls{m} = {f'q_x{m}' if m in inside else 'False'}"
            for _, m in self._counters("ls")
        ]
        out += [f"{ind}q_k{s} += 1" for _, s in self._counters("k")]
        out.append(f"{ind}if q_log:")
        for m in members:
            out += [f"{ind}    if q_x{m}:", *_log_entry(str(m), ind + "        ")]
        return out + _log_entry("-1", ind + "    ")

    def _idle_pass(self, ind: str) -> list[str]:
        """A pass in which nothing ran: no node just ran, and the log gets an empty step."""
        out = [f"{ind}q_ls{m} = False" for _, m in self._counters("ls")]
        out += [f"{ind}q_k{s} += 1" for _, s in self._counters("k")]
        return [*out, f"{ind}if q_log:", *_log_entry("-1", ind + "    ")]

    # -- one update ---------------------------------------------------------------------------
    def update(
        self,
        body: Callable[[int, str], list[str]],
        give_up: Callable[[str], list[str]],
        max_passes: int,
        ind: str,
        step: Callable[[str], list[str]] | None = None,
    ) -> list[str]:
        """One environment state update. ``body(m, ind)`` is the code of node ``m``;
        ``give_up(ind)`` the code that stores the state and returns (after an update that
        never ends, ``err[0] = -2``); ``step(ind)``, if given, the code after each time step
        (after the bodies of its nodes; an idle pass is an empty time step)."""
        after = step or (lambda _ind: [])
        i1, i2 = ind + "    ", ind + "        "
        term = self._exprs[self.term]
        term_reads = set(_NAME.findall(term))
        out = [*self._reset((1,), True, ind), f"{ind}q_c0 = 0"]
        if self.clock.enabled:
            out += [f"{ind}if q_at < {self.clock.first}:", f"{ind}    q_at = {self.clock.first}"]
        out.append(f"{ind}while not {term}:")
        reset = self._reset((0,), False, i1)
        out += [*reset, f"{i1}q_any = False", f"{i1}q_stop = False"]
        # what changed since the termination condition was last found false: a set's check
        # is written out only when the condition reads something that changed
        changed = _assigned(reset)
        for q, members in enumerate(m for m in self.sets if m):
            block: list[str] = []
            j1 = i2
            if changed & term_reads:
                block += [f"{i2}q_stop = {term}", f"{i2}if not q_stop:"]
                j1 = i2 + "    "
                changed = set()
            j2, j3 = j1 + "    ", j1 + "        "
            block += [f"{j1}q_x{m} = False" for m in members]
            if len(members) == 1:
                m = members[0]
                block += [
                    f"{j1}if {self._exprs[self.roots[m]]}:",
                    f"{j2}q_x{m} = True",
                    *self._mark(m, j2),
                ]
            else:
                # a member marked as run can make another one runnable: repeat until stable
                block += [f"{j1}q_more = True", f"{j1}while q_more:", f"{j2}q_more = False"]
                for m in members:
                    block += [
                        f"{j2}if not q_x{m} and {self._exprs[self.roots[m]]}:",
                        f"{j3}q_x{m} = True",
                        f"{j3}q_more = True",
                        *self._mark(m, j3),
                    ]
            if self.clock.enabled:
                # with absolute time every set is a time step and moves the clock on
                block += self._set_ran(members, j1)
                for m in members:
                    block += [f"{j1}if q_x{m}:", *body(m, j2)]
                block += after(j1)
                block.append(f"{j1}q_at += {self.clock.step}")
            else:
                ran = " or ".join(f"q_x{m}" for m in members)
                block += [f"{j1}if {ran}:", f"{j2}q_any = True", *self._set_ran(members, j2)]
                for m in members:
                    block += [f"{j2}if q_x{m}:", *body(m, j3)]
                block += after(j2)
            changed |= _assigned(block)
            # a set that follows a stop is skipped
            out += [f"{i1}# consideration set {q}: nodes {members}", f"{i1}if not q_stop:", *block]
        if not self.clock.enabled:
            out += [f"{i1}if not q_any:", *self._idle_pass(i2), *after(i2)]
        out += [
            f"{i1}q_c0 += 1",
            f"{i1}q_c1 += 1",
            f"{i1}if q_c0 > {max_passes}:",
            f"{i2}err[0] = -2",
            *give_up(i2),
        ]
        return out
