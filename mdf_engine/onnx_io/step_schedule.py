"""One ``evaluate()`` (one environment state update) of a graph as ONNX nodes.

Two forms, chosen when the graph is exported:

* **fixed schedule** (no conditions, or only conditions that make every node run once per
  update in consideration-set order, with the default termination ``AllHaveRun``): the node
  executions are written one after the other, with no counter at all;
* **scheduled**: graph-scheduler's algorithm as the compiled backend runs it
  (:mod:`mdf_engine.schedulers.codegen`): an ONNX ``Loop`` over passes while the termination
  condition does not hold; in each pass, every consideration set checks the termination
  condition, marks the members whose condition holds (repeatedly, as marking one can make
  another runnable), updates the call counters and runs the marked nodes. A node's new values
  are kept with ``Where(ran, new, old)``. Conditions are the boolean expressions over counters
  that :class:`~mdf_engine.schedulers.codegen.SchedulerSource` writes, translated to ONNX.

Conditions the compiled scheduler cannot count (``NWhen``, custom functions, graph-structure
conditions, ...) are refused with an :class:`MDFError` naming them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..schedulers.compiled import static_sets as fixed_sets
from .state_layout import Layout
from .step_nodes import Flags, NodeEmitter, flag_or, where
from .step_translate import StepTranslator
from .translate import Builder, Val
from .vocabulary import ELEM

__all__ = ["UpdateEmitter", "emit_loop", "static_sets", "MAX_PASSES"]

#: the most passes one exported update makes (the compiled backend's limit)
MAX_PASSES = 10_000_000


def static_sets(
    table: Any, roots: Any, term: int, queue: Any, n_nodes: int
) -> list[list[int]] | None:
    """The consideration sets of a fixed schedule (each node once per update, in queue order),
    or None when the conditions make the order depend on the run
    (:func:`mdf_engine.schedulers.compiled.static_sets`)."""
    return fixed_sets(table, roots, term, queue, composite=True)


#: counters that restart with every update: conditions reading only these give every update
#: the same schedule (q_c0 passes, q_t0/q_t1 calls in this pass/update, q_u calls since,
#: q_k0/q_k1 consideration sets in this pass/update)
_PER_UPDATE = re.compile(r"q_c0|q_t[01]_\d+|q_u\d+_\d+|q_k[01]")
#: the most node executions per update written out straight (else: the Loop over passes)
MAX_UNROLLED = 500


def repeating_schedule(sched: Any, time_steps: list, node_ids: list[str]) -> list[list[int]] | None:
    """The time steps of every update, when the conditions read only counters that restart
    with each update (so every update runs the same schedule), taken from one update that
    graph-scheduler ran (``time_steps``); else None."""
    if sched.clock.enabled:
        return None
    texts = [sched.condition(r) for r in {*sched.roots, sched.term}]
    names = {m for t in texts for m in re.findall(r"\bq_\w+", t)}
    if any(not _PER_UPDATE.fullmatch(n) for n in names):
        return None
    index = {nid: i for i, nid in enumerate(node_ids)}
    sets = [sorted(index[str(n)] for n in ts) for ts in time_steps if ts]
    if sum(len(m) for m in sets) > MAX_UNROLLED:
        return None
    return sets


def counters(sched: Any, kind: str) -> list[tuple]:
    """The counters of ``kind`` (``t`` calls, ``u`` calls since, ``k`` set executions, ``ls``
    last set) that some condition of ``sched`` (a SchedulerSource) reads, sorted."""
    return sorted(c for c in sched.used if c[0] == kind)


def kind_elem(b: Builder, kind: str) -> int:
    return {"float": ELEM[b.dtype.name], "int": 7, "bool": 9}[kind]


def emit_loop(
    tr: StepTranslator,
    trip: str,
    cond: str,
    carried: list[tuple[Val, str, str]],
    body: Callable[[Val, list[Val]], tuple[Any, list[Val], list[Val]]],
    scan_kinds: list[str],
    name: str,
) -> tuple[list[Val], list[Val]]:
    """An ONNX ``Loop``: ``carried`` are (initial value, kind, base name); ``body(iter,
    values)`` returns (condition or None for always, new values, scan values). Returns the
    final values and the scan outputs (stacked on a new first axis)."""
    from onnx import helper

    b = tr.b
    saved, b.nodes = b.nodes, []
    it = Val(b.fresh(name + "_iter"), "int")
    cin = b.fresh(name + "_cond_in")
    ins = [Val(b.fresh(f"{base}_in"), kind) for _, kind, base in carried]
    cond_out, outs, scans = body(it, ins)
    produced = {o for n in b.nodes for o in n.output}
    used: set[str] = set()

    def out(v: Val, kind: str, base: str) -> str:
        v = tr.as_kind(v, kind, base)
        if v.name not in produced or v.name in used:
            o = b.fresh(base)
            b.node("Identity", [v.name], [o], name + "/" + base)
            v = Val(o, kind)
        used.add(v.name)
        return v.name

    # no condition: the body passes its condition input through
    names = [cin if cond_out is None else out(cond_out, "bool", name + "_cond_out")]
    names += [out(v, kind, f"{base}_out") for v, (_, kind, base) in zip(outs, carried)]
    names += [out(v, kind, f"{name}_scan{k}") for k, (v, kind) in enumerate(zip(scans, scan_kinds))]
    nodes, b.nodes = b.nodes, saved
    inputs = [
        helper.make_tensor_value_info(it.name, 7, []),
        helper.make_tensor_value_info(cin, 9, []),
    ]
    inputs += [
        helper.make_tensor_value_info(v.name, kind_elem(b, kind), None)
        for v, (_, kind, _) in zip(ins, carried)
    ]
    kinds = ["bool"] + [k for _, k, _ in carried] + scan_kinds
    outputs = [
        helper.make_tensor_value_info(n, kind_elem(b, k), None) for n, k in zip(names, kinds)
    ]
    g = helper.make_graph(nodes, name + "_body", inputs, outputs)
    init = [tr.as_kind(v, kind, f"{base}_init").name for v, kind, base in carried]
    finals = [b.fresh(f"{base}_final") for _, _, base in carried]
    scan_out = [b.fresh(f"{name}_series{k}") for k in range(len(scans))]
    b.node("Loop", [trip, cond, *init], finals + scan_out, name, body=g)
    return (
        [Val(f, k) for f, (_, k, _) in zip(finals, carried)],
        [Val(s, k) for s, k in zip(scan_out, scan_kinds)],
    )


class UpdateEmitter:
    """Writes one update of the graph: :meth:`update` maps the state values to new ones."""

    def __init__(
        self,
        b: Builder,
        plan: Any,
        lay: Layout,
        node_ids: list[str],
        sets: list[list[int]] | None,
        sched: Any = None,
        thresholds: list | None = None,
    ):
        self.b = b
        self.plan = plan
        self.lay = lay
        self.node_ids = node_ids
        self.sets = sets
        self.sched = sched
        self.thresholds = thresholds or []
        self.nodes = NodeEmitter(b, plan, lay)
        self.tr = StepTranslator(b, SimpleNamespace(id="schedule"), plan.where, {})
        self._ints: dict[int, Val] = {}
        self._consts: dict[str, Val] = {}
        self._texts: dict[int, str] = {}  # condition row -> its expression over counters

    # -- small helpers ------------------------------------------------------------------------
    def _op(self, op: str, ins: list[Val], name: str, kind: str, **attrs: Any) -> Val:
        out = self.b.fresh(name)
        self.b.node(op, [v.name for v in ins], [out], name, **attrs)
        return Val(out, kind)

    def _int(self, v: int) -> Val:
        if v not in self._ints:
            self._ints[v] = self.tr.materialize(Val(const=np.int64(v)), f"k_{v}", "int")
        return self._ints[v]

    def _add(self, v: Val, flag: Any, name: str, amount: int = 1) -> Val:
        """``v + amount`` where ``flag`` (a Python bool or a boolean value)."""
        if flag is False:
            return v
        if flag is True:
            return self._op("Add", [v, self._int(amount)], name, "int")
        x = self._op("Cast", [flag], name + "_n", "int", to=7)
        if amount != 1:
            x = self._op("Mul", [x, self._int(amount)], name + "_m", "int")
        return self._op("Add", [v, x], name, "int")

    def _sel(self, c: Any, a: Val, b_: Val, name: str) -> Val:
        """``Where`` that keeps the element kind of ``b_`` (Python-bool conditions fold)."""
        if c is True:
            return a
        if c is False:
            return b_
        a = self.tr.as_kind(a, b_.kind, name + "_a")
        if b_.kind == "bool":  # onnxruntime has no boolean Where
            keep = self._op(
                "And", [self._op("Not", [c], name + "_not", "bool"), b_], name + "_keep", "bool"
            )
            if a is self._consts.get("false"):
                return keep
            take = self._op("And", [c, a], name + "_take", "bool")
            return self._op("Or", [take, keep], name, "bool")
        return self._op("Where", [c, a, b_], name, b_.kind)

    def _false(self) -> Val:
        if "false" not in self._consts:
            self._consts["false"] = self.tr.materialize(Val(const=np.bool_(False)), "false", "bool")
        return self._consts["false"]

    def _cond(self, row: int, S: dict) -> Val:
        if row not in self._texts:
            self._texts[row] = self.sched.condition(row)
        text = self._texts[row]
        scope = {k[1]: v for k, v in S.items() if k[0] == "q"}
        tree = ast.parse(text, mode="eval").body
        return self.tr.as_kind(self.tr.emit(tree, "cond", scope, "conditions"), "bool", "cond")

    # -- one update ---------------------------------------------------------------------------
    def update(
        self, S: dict[tuple, Val], dt: Val | None, ext: dict, started: Any = None
    ) -> dict[tuple, Val]:
        """The state after one evaluate() (``dt`` None: no time increment, ever).
        ``started``: whether an update was made before (a Python bool when the caller knows
        it, which leaves the first-update logic out; else it is read from the state)."""
        S = dict(S)
        evals = S[("evals",)]
        if started is None:
            started = self._op("Greater", [evals, self._int(0)], "started", "bool")
        has_dt: Any = False if dt is None else started
        if self.sets is not None:
            # a schedule known at export: node executions one after the other; a node that
            # runs in the update has run before it unless this is the first update
            ran: set[str] = set()
            runs = {self.node_ids[m] for members in self.sets for m in members}
            pnl = self.plan.psyneulink
            for members in self.sets:
                # PsyNeuLink files: nodes of one time step read the values from before it
                frozen = pnl and len(members) > 1
                before, ran_before = dict(S), set(ran)
                for m in members:
                    nid = self.node_ids[m]
                    seen = ran_before if frozen else ran
                    ever = {
                        n: True if n in seen else (started if n in runs else False)
                        for n in self.node_ids
                    }
                    # inputs are read once per update; PsyNeuLink's trial input at every run
                    pend = {key: pnl or key[0] not in ran for key in ext}
                    fl = Flags(dt, has_dt, ever, ext, pend)
                    writes, _ = self.nodes.run(nid, before if frozen else S, fl)
                    S.update(writes)
                    ran.add(nid)
        else:
            S = self._scheduled(S, dt, has_dt, ext)
            S[("q", "q_c2")] = self._add(S[("q", "q_c2")], True, "updates")
        S[("evals",)] = self._add(evals, True, "evaluations")
        if dt is not None:
            step = self.tr.as_kind(
                where(self.tr, has_dt, dt, Val(const=0.0), "dt_given"), "float", "time_inc"
            )
            S[("time",)] = self._op("Add", [S[("time",)], step], "time", "float")
        return S

    def _scheduled(self, S: dict, dt: Val | None, has_dt: Any, ext: dict) -> dict:
        sch = self.sched
        for _, s, m in counters(sch, "t"):
            if s == 1:
                S[("q", f"q_t1_{m}")] = self._int(0)
        for _, s in counters(sch, "k"):
            if s == 1:
                S[("q", "q_k1")] = self._int(0)
        for _, a, b in counters(sch, "u"):
            S[("q", f"q_u{a}_{b}")] = self._int(0)
        S[("q", "q_c0")] = self._int(0)
        clock = sch.clock
        if clock.enabled:
            S[("q", "q_at")] = self._op(
                "Max", [S[("q", "q_at")], self._int(clock.first)], "clock_start", "int"
            )
        keys = [k for k in S if k not in (("evals",), ("time",))]
        ext_keys = sorted(ext)
        cond0 = self._op("Not", [self._cond(sch.term, S)], "running", "bool")
        carried = [
            (S[k], self.lay.state[k].kind, "pass_" + self.lay.state[k].name[7:]) for k in keys
        ]
        carried += [(Val(const=True), "bool", f"pass_pending{j}") for j in range(len(ext_keys))]

        def body(_it: Val, vals: list[Val]) -> tuple[Any, list[Val], list[Val]]:
            Sb = dict(zip(keys, vals))
            pend = dict(zip(ext_keys, vals[len(keys) :]))
            self._pass(Sb, pend, dt, has_dt, ext)
            cont = self._op("Not", [self._cond(sch.term, Sb)], "running", "bool")
            return cont, [Sb[k] for k in keys] + [pend[k] for k in ext_keys], []

        trip = self._int(MAX_PASSES).name
        finals, _ = emit_loop(self.tr, trip, cond0.name, carried, body, [], "passes")
        S.update(zip(keys, finals))
        return S

    def _pass(self, S: dict, pend: dict, dt: Val | None, has_dt: Any, ext: dict) -> None:
        sch = self.sched
        for _, s, m in counters(sch, "t"):
            if s == 0:
                S[("q", f"q_t0_{m}")] = self._int(0)
        if ("k", 0) in sch.used:
            S[("q", "q_k0")] = self._int(0)
        any_ran: Any = False
        stop: Any = False
        for q, members in enumerate(m for m in sch.sets if m):
            stop = flag_or(self.tr, stop, self._cond(sch.term, S), f"stop{q}")
            go = self._op("Not", [stop], f"go{q}", "bool")
            x: dict[int, Any] = {m: False for m in members}
            for m in members:  # chosen in this set (WhenFinished of a member reads it)
                S[("q", f"q_x{m}")] = self._false()
            for _rep in range(1 if len(members) == 1 else len(members)):
                for m in members:
                    c = self._op("And", [self._cond(sch.roots[m], S), go], f"may{m}", "bool")
                    if x[m] is not False:
                        c = self._op(
                            "And",
                            [c, self._op("Not", [x[m]], f"new{m}", "bool")],
                            f"cand{m}",
                            "bool",
                        )
                    self._mark(S, m, c)
                    x[m] = c if x[m] is False else self._op("Or", [x[m], c], f"x{m}", "bool")
                    S[("q", f"q_x{m}")] = x[m]
            if sch.clock.enabled:
                self._set_ran(S, members, x, go)
            else:
                ran = x[members[0]]
                for m in members[1:]:
                    ran = self._op("Or", [ran, x[m]], f"set{q}_ran", "bool")
                any_ran = flag_or(self.tr, any_ran, ran, "any_ran")
                self._set_ran(S, members, x, ran)
            # PsyNeuLink files: nodes of one time step read the values from before it
            before = dict(S) if self.plan.psyneulink and len(members) > 1 else None
            for m in members:
                self._run(S, pend, m, x[m], dt, has_dt, ext, before)
            if sch.clock.enabled:
                S[("q", "q_at")] = self._add(S[("q", "q_at")], go, "clock", sch.clock.step)
        if not sch.clock.enabled:
            idle = self._op("Not", [any_ran], "idle", "bool") if any_ran is not False else True
            for _, m in counters(sch, "ls"):
                S[("q", f"q_ls{m}")] = self._sel(
                    idle, self._false(), S[("q", f"q_ls{m}")], f"ls{m}"
                )
            for _, s in counters(sch, "k"):
                S[("q", f"q_k{s}")] = self._add(S[("q", f"q_k{s}")], idle, f"k{s}")
        S[("q", "q_c0")] = self._add(S[("q", "q_c0")], True, "c0")
        S[("q", "q_c1")] = self._add(S[("q", "q_c1")], True, "c1")

    def _mark(self, S: dict, m: int, x: Val) -> None:
        sch = self.sched
        for _, s, mm in counters(sch, "t"):
            if mm == m:
                S[("q", f"q_t{s}_{m}")] = self._add(S[("q", f"q_t{s}_{m}")], x, f"t{s}_{m}")
        for _, a, b in counters(sch, "u"):
            if b == m:
                S[("q", f"q_u{a}_{b}")] = self._sel(
                    x, self._int(0), S[("q", f"q_u{a}_{b}")], f"u{a}_{b}"
                )
        for _, a, b in counters(sch, "u"):
            if a == m:
                S[("q", f"q_u{a}_{b}")] = self._add(S[("q", f"q_u{a}_{b}")], x, f"u{a}_{b}")

    def _set_ran(self, S: dict, members: list[int], x: dict, ran: Any) -> None:
        sch = self.sched
        for _, m in counters(sch, "ls"):
            now = x[m] if m in members else self._false()
            S[("q", f"q_ls{m}")] = self._sel(ran, now, S[("q", f"q_ls{m}")], f"ls{m}")
        for _, s in counters(sch, "k"):
            S[("q", f"q_k{s}")] = self._add(S[("q", f"q_k{s}")], ran, f"k{s}")

    def _run(
        self,
        S: dict,
        pend: dict,
        m: int,
        x: Val,
        dt: Val | None,
        has_dt: Any,
        ext: dict,
        before: dict | None = None,
    ) -> None:
        """Node ``m`` runs where ``x``; it reads ``before`` (the state before its time step)
        when given, else ``S``."""
        nid = self.node_ids[m]
        read = S if before is None else before
        ever = {n: read[("q", f"q_ev{i}")] for i, n in enumerate(self.node_ids)}
        pnl = self.plan.psyneulink
        fl = Flags(dt, has_dt, ever, ext, {k: True for k in pend} if pnl else pend)
        writes, values = self.nodes.run(nid, read, fl)
        tr = self.nodes.translator(nid, {})
        for k, v in writes.items():
            S[k] = where(tr, x, v, S[k], "keep")
        for k, (tn, name, indices) in enumerate(self.thresholds):
            if tn != nid or name not in values:
                continue
            v = tr.as_kind(values[name], "float", f"th{k}")
            for idx in indices or []:
                v = tr.op("Gather", [v, self._int(int(idx))], f"th{k}_at", "float")
            shape = tr.materialize(Val(const=np.zeros(0, np.int64)), "scalar_shape", "int")
            v = tr.op("Reshape", [v, shape], f"th{k}_value", "float")
            S[("q", f"q_th{k}")] = where(tr, x, v, S[("q", f"q_th{k}")], f"th{k}")
        for key in pend:
            if key[0] == nid and not pnl:
                pend[key] = self._op(
                    "And", [pend[key], self._op("Not", [x], "unread", "bool")], "pending", "bool"
                )
        S[("q", f"q_ev{m}")] = self._op("Or", [S[("q", f"q_ev{m}")], x], f"ev{m}", "bool")
