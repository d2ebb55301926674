"""The compiled backend of ACT-R graphs: production cycles as Numba kernels over integer tables.

:func:`mdf_engine.backends.make_runner` gives ``backend="compiled"`` graphs that call ``actr``
functions this runner (the generated-module backend has no values that are dicts). It keeps
the :class:`~mdf_engine.backends.base.Runner` protocol of the interpreted backend exactly: one
``evaluate`` is one reference ``evaluate()`` (``goal_input`` and ``dm_input`` given by the
initializer, as the ACT-R scripts' loop gives them), and ``value``/``outputs`` give the same
Python values (dicts of strings, lists of productions with their ``bindings``, booleans) as the
interpreter, decoded from the kernels' integer state when they are read.

How: the layout is checked (:mod:`.layout`, which also gives the schedule of a cycle), the
constant parameters are taken from the plan as the interpreter takes them,
:class:`.tables.Tables` interns the model text into integer tables, and :func:`.kernels.cycles` runs retrieval, goal update, pattern matching,
conflict resolution and firing. A graph outside the layout, or whose values the kernels cannot
read, runs on the interpreted backend, with a log line saying why (``fallback_reason``).
:meth:`CompiledActrGraph.run_cycles` runs the scripts' feedback loop itself inside the kernel
(the ``actr`` backend uses it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..plan import GraphPlan
from . import kernels as K
from .layout import DATA, check_layout, cycle_schedule
from .tables import DM_IN, FIRST_GOAL, GOAL_IN, GOAL_STATE, NotCompilable, Tables

log = logging.getLogger("mdf_engine")

#: node -> {port, parameter: what of a cycle it holds}; "const": as the interpreter has it
NAMES: dict[str, dict[str, str]] = {
    "declarative_memory": {
        "dm_input": "dm_in",
        "chunks": "const",
        "chunk_types": "const",
        "retrieve_chunk": "dm_out",
        "dm_output": "dm_out",
    },
    "retrieval_buffer": {"retrieval_input": "dm_out", "retrieval_output": "dm_out"},
    "goal_buffer": {
        "goal_input": "goal_in",
        "first_goal": "const",
        "change_goal": "change",
        "goal_state": "goal",
        "goal_output": "goal",
    },
    "procedural_memory": {"productions": "const", "pm_output": "const"},
    "pattern_matching": {
        "pattern_input_from_pm": "const",
        "pattern_input_from_goal": "goal",
        "pattern_input_from_retrieval": "dm_out",
        "pattern_matching_function": "matched",
        "pattern_output": "matched",
    },
    "conflict_resolution": {
        "conflict_input": "matched",
        "conflict_resolution_function": "chosen",
        "conflict_output_to_fire_prod": "chosen",
        "conflict_output_to_check": "chosen",
    },
    "fire_production": {
        "fire_prod_input": "chosen",
        "update_goal": "out_goal",
        "update_retrieval": "out_retrieval",
        "fire_prod_output_to_goal": "out_goal",
        "fire_prod_output_to_retrieval": "out_retrieval",
    },
    "check_termination": {
        "check_input": "chosen",
        "check_termination": "check",
        "check_output": "check",
    },
}
#: the input ports an evaluate() sets, and the node of each
INPUTS = {"goal_input": "goal_buffer", "dm_input": "declarative_memory"}


class CompiledActrGraph:
    """A :class:`~mdf_engine.backends.base.Runner` running an ACT-R graph's cycles as Numba
    kernels (the interpreted backend when it cannot: ``fallback_reason``)."""

    finished = False
    default_steps = 1
    must_finish = False

    def __init__(self, plan: GraphPlan, check_finite: bool = False):
        self.plan = plan
        self.check_finite = check_finite
        self.fallback_reason: str | None = None
        self.tables: Tables | None = None
        self.state: dict[str, np.ndarray] = {}
        self._evaluations = 0
        #: the interpreted graphs: running it (not compiled), and before its first cycle
        self._interp: Any = None
        self._unrun_graph: Any = None
        self._tried = False
        self._reset = 0
        self._order: list[str] = []
        self._const: dict[tuple[str, str], Any] = {}
        self._cycle: tuple[list[set[str]], list[float]] = ([], [])
        self._given: tuple[Any, Any] | None = None
        self._view: dict[str, Any] | None = None

    # -- what the runner is -----------------------------------------------------------------
    @property
    def is_compiled(self) -> bool:
        """The cycles run as Numba kernels."""
        return self.tables is not None

    @property
    def mode(self) -> str:
        return "compiled" if self.is_compiled else "interpreted"

    @property
    def interp(self) -> Any:
        """The interpreted backend that runs the graph when it cannot be compiled."""
        if self._interp is None:
            from ..interpreter import InterpretedGraph

            self._interp = InterpretedGraph(self.plan, check_finite=self.check_finite)
        return self._interp

    def kernel_arguments(self) -> tuple[Any, ...]:
        """Everything :func:`.kernels.cycles` is given but the last three arguments: integer
        arrays and integers only."""
        t, s = self.tables, self.state
        kind, arg = t.sym.arrays()
        return (
            s["D"], s["S"], s["M"], s["gpos"], s["bvar"], s["bval"], kind, arg,
            t.dm_rows, t.dm_flags, t.ret_rows, t.test_rows, t.test_start, t.never,
            t.tg_key, t.tg_val, t.tg_ref, t.tg_n, t.tr_key, t.tr_val, t.tr_ref, t.tr_n,
            t.n_chunks, self._reset, t.NAME, t.BUFFER,
        )  # fmt: skip

    # -- compiling ----------------------------------------------------------------------------
    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Build the tables (once)."""
        if self._tried:
            return
        self._tried = True
        try:
            self._build()
        except NotCompilable as e:
            self._give_up(f"ACT-R graph not compiled: {e}")
        except MDFError as e:  # the interpreter reports it when it reaches it
            self._give_up(f"ACT-R graph not compiled: {e}", quiet=True)

    def _give_up(self, reason: str, quiet: bool = False) -> None:
        self.fallback_reason = reason
        self.tables = None
        (log.info if quiet else log.warning)(
            "compiled backend: %s; running on the interpreted backend", reason
        )

    def _build(self) -> None:
        reset, initial = check_layout(self.plan)
        self._reset = int(reset)
        steps, times, order = cycle_schedule()
        self._cycle = ([set(x) for x in steps], list(times))
        self._order = list(order)
        for node, par in DATA:  # the values the interpreter holds: the planned constants
            pp = next(p for p in self.plan.nodes[node].parameters if p.id == par)
            if pp.value is None or pp.value.expr is not None or pp.conditions:
                raise NotCompilable(f"{node}.{par} is not a constant")
            self._const[(node, par)] = pp.value.const
        pm = self._const[("procedural_memory", "productions")]
        self._const[("procedural_memory", "pm_output")] = pm
        self._const[("pattern_matching", "pattern_input_from_pm")] = pm
        first = self._const[("goal_buffer", "first_goal")]
        tables = Tables(
            self._const[("declarative_memory", "chunks")],
            self._const[("declarative_memory", "chunk_types")],
            pm,
            first,
            first if initial is None else initial,
        )
        self.state = K.state(tables.width, len(tables.productions), tables.n_vars)
        tables.write(self.state["D"], FIRST_GOAL, tables.first_goal)
        tables.write(self.state["D"], GOAL_STATE, tables.initial_goal)
        self.tables = tables

    def _fit(self) -> None:
        """Widen the state when new input text made the dicts wider."""
        D = self.state["D"]
        width = self.tables.width
        if D.shape[1] >= 1 + 2 * width:
            return
        new = K.state(width, len(self.tables.productions), self.tables.n_vars)
        new["D"][:, : D.shape[1]] = D
        new["S"][:] = self.state["S"]
        new["M"][:] = self.state["M"]
        self.state = new

    # -- cycles -------------------------------------------------------------------------------
    def _inputs(self, initializer: Mapping[str, Any] | None) -> tuple[Any, Any]:
        """``goal_input`` and ``dm_input`` of the initializer (other keys must name input
        ports, which the graph's edges then set, as in the interpreter)."""
        got: dict[str, Any] = {}
        from ..interpreter import initializer_targets

        for key, value in (initializer or {}).items():
            for _node, port in initializer_targets(self.plan, key):
                if port in INPUTS:
                    got[port] = value
        missing = [p for p in INPUTS if p not in got]
        if missing:
            raise MDFError(
                f"an ACT-R cycle needs its {missing[0]} (a dict: the last cycle's pattern, {{}} "
                "at first) in the initializer",
                f"{self.plan.nodes[INPUTS[missing[0]]].where}.input_ports.{missing[0]}",
            )
        return got["goal_input"], got["dm_input"]

    def _load_inputs(self, goal: Any, request: Any) -> None:
        t = self.tables
        items = []
        for port, value in (("goal_input", goal), ("dm_input", request)):
            try:
                items.append(t.encode_input(value, port))
            except MDFError as e:
                where = self.plan.nodes[INPUTS[port]].where
                raise MDFError(e.message, f"{where}.{e.path}") from None
        self._fit()
        t.write(self.state["D"], GOAL_IN, items[0])
        t.write(self.state["D"], DM_IN, items[1])

    def _run(self, count: int, feed: bool) -> int:
        """Up to ``count`` cycles from the loaded inputs; the cycles run."""
        S = self.state["S"]
        ran, resume = 0, 0
        try:
            while True:
                K.cycles(*self.kernel_arguments(), count - ran, resume, int(feed))
                ran += int(S[K.RAN])
                status = int(S[K.STATUS])
                if status == K.OK:
                    return ran
                if status != K.CHOOSE:
                    node = self.plan.nodes["declarative_memory"]
                    error = self.tables.dm_errors[int(S[K.STATUS_ARG])]
                    raise MDFError(error.message, f"{node.where}.parameters.retrieve_chunk")
                self._view = None
                matched = self._decode("matched")
                call = self.plan.nodes["conflict_resolution"].parameters[0].call
                chosen = call.evaluate({"conflict_input": matched})
                S[K.CHOSEN] = next(i for i, p in enumerate(matched) if p is chosen)
                resume = 1
        finally:
            self._evaluations += ran
            self._view = None

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        """One reference ``evaluate()``: one production cycle on the initializer's
        ``goal_input`` and ``dm_input``."""
        self.prepare(initializer, time_increment)
        if not self.is_compiled:
            self.interp.evaluate(time_increment=time_increment, initializer=initializer)
            return
        goal, request = self._inputs(initializer)
        self._load_inputs(goal, request)
        self._given = (goal, request)
        self._run(1, feed=False)

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        """``steps`` evaluate() calls, each with ``initializer`` (as the interpreter does)."""
        for _ in range(steps):
            self.evaluate(initializer=initializer)

    def run_cycles(self, count: int, goal: Any, request: Any) -> bool:
        """The ACT-R scripts' loop: up to ``count`` cycles, the first on ``goal`` and
        ``request``, each later one on the patterns the last one fired, ending after the cycle
        in which no production fired; whether that happened."""
        self.prepare(None, None)
        if not self.is_compiled:
            raise MDFError(f"the compiled backend cannot run this graph: {self.fallback_reason}")
        if count <= 0:
            return False
        self._load_inputs(goal, request)
        self._given = None
        self._run(count, feed=True)
        return bool(self.state["S"][K.DONE])

    # -- what the graph holds -----------------------------------------------------------------
    @property
    def _unrun(self) -> Any:
        """The graph before its first cycle, as the interpreter holds it."""
        if self._unrun_graph is None:
            from ..interpreter import InterpretedGraph

            self._unrun_graph = InterpretedGraph(self.plan)
        return self._unrun_graph

    @property
    def _reader(self) -> Any:
        if not self.is_compiled:
            return self._interp if self._interp is not None else self._unrun
        return None if self._evaluations else self._unrun

    @property
    def evaluations(self) -> int:
        """evaluate() calls (cycles) completed so far."""
        if not self.is_compiled:
            return self._interp.evaluations if self._interp is not None else 0
        return self._evaluations

    @property
    def order_of_execution(self) -> list[str]:
        r = self._reader
        return r.order_of_execution if r is not None else self._order * self.evaluations

    @property
    def time_steps(self) -> list[set[str]]:
        r = self._reader
        if r is not None:
            return r.time_steps
        return [set(s) for _ in range(self.evaluations) for s in self._cycle[0]]

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        r = self._reader
        if r is not None:
            return r.last_update_steps()
        return [set(s) for s in self._cycle[0]], list(self._cycle[1])

    def value(self, node: str, name: str) -> Any:
        """Current value of a port, parameter or function of ``node``, as the interpreter
        gives it."""
        r = self._reader
        if r is not None:
            return r.value(node, name)
        if node not in NAMES:
            raise MDFError(f"no node '{node}'")
        what = NAMES[node].get(name)
        if what is None:
            raise MDFError(f"node '{node}' has no port, parameter or function '{name}'")
        return self._const[(node, name)] if what == "const" else self._decode(what)

    def outputs(self) -> dict[str, dict[str, Any]]:
        """``{node: {output port: current value}}``."""
        r = self._reader
        if r is not None:
            return r.outputs()
        return {
            nid: {pid: self.value(nid, pid) for pid, _ in np_.outputs}
            for nid, np_ in self.plan.nodes.items()
        }

    def _decode(self, what: str) -> Any:
        """A value of the last cycle, decoded once per cycle (one object, as the
        interpreter passes one object along its edges)."""
        if self._view is None:
            self._view = {}
        view = self._view
        if what not in view:
            view[what] = self._compute(what)
        return view[what]

    def _compute(self, what: str) -> Any:
        t, D, S, M = self.tables, self.state["D"], self.state["S"], self.state["M"]
        if what in ("goal_in", "dm_in"):
            if self._given is not None:
                return self._given[0 if what == "goal_in" else 1]
            return t.read(D, GOAL_IN if what == "goal_in" else DM_IN)
        if what == "dm_out":
            c = int(S[K.RETRIEVED])
            return {} if c < 0 else dict(t.retrieved[c])
        rows = {"change": 2, "goal": GOAL_STATE, "out_goal": 4, "out_retrieval": 5}
        if what in rows:
            return t.read(D, rows[what])
        if what == "matched":
            return [
                {**t.productions[p], "bindings": t.bindings(p, M[i, 1:])}
                for i in range(int(S[K.MATCHES]))
                for p in [int(M[i, 0])]
            ]
        c = int(S[K.CHOSEN])
        if what == "chosen":
            return {} if c < 0 else self._decode("matched")[c]
        return c < 0  # check
