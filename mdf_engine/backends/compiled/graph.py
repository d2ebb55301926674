"""The compiled backend's runner: a whole graph, scheduler included, as one Numba-jitted function.

A throw-away interpreted warm-up (until every node has run once) gives every value a fixed
kind (:mod:`.layout`). From that the generator (:mod:`.generator`) writes Python source for a function ``run(nsteps, dt,
...)`` that holds graph-scheduler's algorithm as unrolled passes and consideration sets
(:mod:`mdf_engine.schedulers.codegen`) with every node's body inlined: incoming edges, input
reads, functions, parameters (Euler steps, conditions), outputs. The source goes to a file in
the cache folder, named by its hash, and is jitted with ``cache=True``; the run itself starts
from the state of a graph that has not run (the warm-up's values are dropped), so a first run
and a run in a later process give the same numbers. :mod:`.cache` records the layout and that
cold state, so a later process skips the warm-up and the code generation too (:mod:`.build`).

When something cannot be compiled (a condition kind, a function with no Numba kernel, a value
that is not numeric, a Numba typing error), the graph runs on the interpreted backend and a log
line says why: results never change silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import EVALUATION_ERRORS, MDFError, NotCompilable
from ...plan import GraphPlan
from .batch import run_cold, run_handed_over
from .build import (
    STRICT,
    Built,
    CompileSpec,
    WarmupStopped,
    build,
    check_writer,
    float_parameters,
    from_numba,
    numba_failure,
)
from .draws import stream_for
from .handback import History, hand_back, hand_back_failure
from .handover import Handover, hand_over, run_prefix
from .layout import Layout, Storage, fresh_state
from .quick import QuickEvaluate, evaluate_again, quick_from
from .readback import StateReads
from .runtime import (
    ERR_WIDTH,
    INPUTS_ARGS,
    NODE_ARGS,
    PythonCallFailed,
    RunCall,
    arguments,
    call_checked,
    init_key,
    initializer_args,
    reported_error,
    warn_python_calls,
)
from .schedule_log import SCHEDULE_LOG, ScheduleLog

log = logging.getLogger("mdf_engine")


class CompiledGraph(StateReads):
    """Runs a graph with generated Numba code, from its first step on.

    Compiling needs the kind and shape of every value: a throw-away interpreted warm-up (until
    every node has run) provides them the first time; :mod:`.cache` keeps
    them, with the generated module, for later processes."""

    def __init__(
        self,
        plan: GraphPlan,
        check_finite: bool = False,
        record_schedule: bool = True,
        schedule_log: int = SCHEDULE_LOG,
    ):
        self.plan = plan
        self.check_finite = check_finite
        self.record_schedule = record_schedule
        #: entries the schedule log keeps (the most recent; 0: no log). The compiled loop
        #: writes it in machine code; it is decoded only when ``time_steps`` or
        #: ``order_of_execution`` is read, so a run pays no Python work per pass.
        self.schedule_log = int(schedule_log) if record_schedule else 0
        self._interp = None
        self.node_ids = list(plan.nodes)
        #: the compiled loop's log of time steps
        self.log = ScheduleLog(self.schedule_log, self.node_ids)
        self.fallback_reason: str | None = None
        #: (node, parameter) pairs whose value is read from the ``P`` argument (sweeps)
        self.swept: list[tuple[str, str]] = []
        self.sweep_values = np.zeros(1)
        #: (node, port-or-parameter) pairs written to the ``rec`` array at every step (sweeps)
        self.recorded: list[tuple[str, str]] = []
        self._no_rec = np.zeros((0, 0))
        self._run_call = RunCall()
        self._quick: QuickEvaluate | None = None  # (a repeated evaluate(): quick.py)
        self._reader = None  # (its layout's slots: readback.StateReads)
        self.blas_macs = 0  # (the compiled calls' BLAS threads: runtime.call_checked)
        self._fn = None
        self._quiet_fn = None
        self._batch_fn = None
        self._layout: Layout | None = None
        self._cold: dict[str, Any] | None = None
        self._state: dict[str, Any] | None = None
        self._init_key: tuple | None = None
        self._tried = False
        #: graph-scheduler calling jitted node functions, when the schedule cannot compile
        self._nodes: Any = None
        #: where the compiled code came from: "generated" or "cache" (None until compiled)
        self.origin: str | None = None
        #: functions without a Numba kernel that the compiled code calls through Python
        self.python_calls: list[str] = []
        self._clock: Any = None
        #: tier 0 (:mod:`mdf_engine.backends.vm.tier`) while it runs the first updates
        self.tier0: Any = None
        #: the first updates the interpreter runs (:mod:`.handover`): ``first_steps`` as
        #: built, ``handover`` until handed over; ``handed_over`` until a compiled run ends
        self.first_steps: Handover | None = None
        self.handover: Handover | None = None
        self.handed_over = False
        #: the calls to replay on the interpreter when a later run stops (handback.py)
        self.history = History()

    #: see :class:`mdf_engine.backends.base.Runner`
    finished = False
    default_steps = 1
    must_finish = False

    # -- public interface shared with InterpretedGraph ----------------------------------------
    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Compile now (cached, or after a warm-up) unless tried: step 1 then draws no warm-up."""
        if not self._tried:
            self._compile(initializer, dt)

    @property
    def compiled_state(self) -> dict[str, Any]:
        """The state arrays the jitted functions update in place; an error before compiling."""
        if self._state is None:
            raise MDFError("the graph is not compiled (yet)")
        return self._state

    def check_error(self, err: np.ndarray, prefix: str = "") -> None:
        """Raise the MDFError a jitted function reported in its ``err`` row, if any."""
        self._raise_error(err, prefix)

    @property
    def interp(self) -> Any:
        """The interpreted backend that runs the graph when it cannot be compiled."""
        if self._interp is None:
            from ...schedulers.choice import interpreter_of_declined

            self._interp = interpreter_of_declined(self.plan, self.check_finite)
        return self._interp

    @property
    def is_compiled(self) -> bool:
        """The whole graph, schedule included, runs as one jitted function."""
        return self._state is not None and self._nodes is None

    @property
    def _live(self) -> bool:  # (the compiled state holds the values: handed over)
        return self.is_compiled and self.handover is None

    @property
    def mode(self) -> str:
        """``compiled`` (whole graph), ``node by node`` (graph-scheduler calling jitted node
        functions) or ``interpreted`` (not compiled, or not yet)."""
        if self._state is None:
            return "interpreted"
        return "node by node" if self._nodes is not None else "compiled"

    @property
    def _runner(self) -> Any:
        """What keeps the log of time steps when the compiled loop does not."""
        return self._nodes if self._nodes is not None else self.interp

    @property
    def evaluations(self) -> int:
        """evaluate() calls completed so far."""
        if self._live:
            return int(self._state["clock"][2])
        if self._nodes is not None:
            return self._nodes.evaluations
        return self._interp.evaluations if self._interp is not None else 0

    @property
    def time_steps(self) -> list[set[str]]:
        """The node sets of the most recent time steps (see ``schedule_log``)."""
        if not self._live:
            return self._runner.time_steps
        return self.log.decoded()[0]

    @property
    def order_of_execution(self) -> list[str]:
        """The node ids of the most recent node runs, in order (see ``schedule_log``)."""
        if not self._live:
            return self._runner.order_of_execution
        return self.log.decoded()[1]

    @property
    def schedule_truncated(self) -> bool:
        """Older time steps fell out of the schedule log (or it is off)."""
        return self.log.truncated(self.evaluations)

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        """One reference ``evaluate()`` (see :class:`mdf_engine.backends.base.Runner`)."""
        if time_increment is None and evaluate_again(self, initializer) is not None:
            return
        if self.handover is not None and self.interp.evaluations >= self.handover.steps:
            hand_over(self)  # (before the mark: the log gets the interpreter's steps)
        mark = self.log.here()
        self.run_steps(1, time_increment, initializer, first_without_dt=time_increment is None)
        self.log.mark = mark

    def evaluate_again(self, initializer: Mapping[str, Any] | None) -> tuple | None:
        """A repeated evaluate() replayed (:func:`.quick.evaluate_again`): its time steps and
        their times, or None when the general :meth:`evaluate` must run it."""
        return evaluate_again(self, initializer)

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        """The time steps of the last evaluate() and their absolute times in ms (with
        absolute time, the clock ends an update one step after its last step starts)."""
        if not self._live:
            return self._runner.last_update_steps()
        q = self._quick
        steps = q.one_update(self.log) if q is not None else None
        if steps is None:
            steps = self.log.steps_since(self.log.mark)
        clock = self.absolute_clock()
        if not clock.enabled:
            return steps, [0.0] * len(steps)
        end, k = int(self._state["clock"][6]), len(steps)
        return steps, [(end - (k - i) * clock.step) / clock.ticks_per_ms for i in range(k)]

    def absolute_clock(self) -> Any:
        """graph-scheduler's absolute clock in ticks, as the compiled loop keeps it (from the
        engine's own scheduler where it runs the graph: no graph-scheduler to import)."""
        if self._clock is None:
            from ...schedulers.compiled import encode
            from ...schedulers.own import OwnScheduler

            plan = self.plan
            own = OwnScheduler.make(plan.graph, self.value, plan.where, plan.scheduling_mode)
            scheduler = own if own is not None else self.interp.scheduler
            self._clock = encode(scheduler, self.node_ids)[0].absolute
        return self._clock

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        """``steps`` evaluate() calls: the first without a time increment if
        ``first_without_dt``, the rest with ``dt``."""
        if steps <= 0:
            return
        if not self._tried:
            self._compile(initializer, dt)
        if self.handover is not None:
            steps, first_without_dt = run_prefix(self, steps, dt, initializer, first_without_dt)
            if steps == 0:
                return
        if self.is_compiled:
            try:
                self._run_compiled(steps, dt, initializer, first_without_dt)
                self.handed_over = False
                self.history.add(steps, dt, initializer, first_without_dt)
                return
            except PythonCallFailed as e:
                # the interpreter replays the calls since it held the state, then runs this
                # one (a first run: no calls, it runs again interpreted): handback.py
                hand_back(self, e)
                self._give_up(str(e))
            except EVALUATION_ERRORS as e:  # also Numba's own failure on model values (a broadcast)
                # (the interpreter runs the failing call and names the node: handback.py)
                hand_back_failure(self, e)
                self._give_up(f"{type(e).__name__}: {e}", quiet=True)
        if self._nodes is not None:
            self._check_initializer_keys(initializer)
        for k in range(steps):
            inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
            self._runner.evaluate(time_increment=inc, initializer=initializer)

    # -- compilation ------------------------------------------------------------------------
    def _compile(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Make the graph's code ready (from the cache, or generated after a warm-up) and set
        the state of a graph that has not run; on failure log why and stay interpreted."""
        self._tried = True
        try:
            if not self.swept:
                self.swept, values = float_parameters(self.plan)
                self.sweep_values = np.array(values or [0.0], dtype=np.float64)
            spec = CompileSpec(
                self.plan,
                tuple(self.node_ids),
                self.check_finite,
                tuple(self.swept),
                tuple(self.recorded),
            )

            def check() -> None:  # (on a cache miss only)
                check_writer(self.plan, initializer)

            self._adopt(build(spec, initializer, dt, check))
            self._init_key = init_key(initializer)
            if self._nodes is not None:
                self._jit_node_functions(initializer)
            else:
                from ..vm.tier import start  # (tier 0: no code of the graph compiled)

                self.tier0 = start(self, initializer_args(initializer))
                if self.tier0 is None:
                    self._run_compiled(0, dt if dt is not None else 0.0, initializer, False)
        except NotCompilable as e:
            self._give_up(str(e), quiet=isinstance(e, WarmupStopped))
        except MDFError:
            raise
        except Exception as e:  # numba typing/lowering errors
            if STRICT and not from_numba(e):
                raise  # (tests: a bug of ours is not a fallback)
            self._give_up(numba_failure(e))

    def _adopt(self, built: Built) -> None:
        """Take compiled code: its functions, layout and the state of a graph that has not run."""
        module, layout, arrays = built.module, built.layout, built.arrays
        node_by_node = built.node_by_node
        n_arrays = len({s.index for s in layout.slots.values() if s.kind is Storage.ARRAY})
        self.python_calls = list(built.python_calls)
        warn_python_calls(self.python_calls)
        if node_by_node is None:
            self._fn = module.run
            self._quiet_fn = module.run_quiet
            self._batch_fn = module.run_batch
        else:
            self.fallback_reason = node_by_node
            log.warning(
                "compiled backend: %s; graph-scheduler runs the schedule and calls "
                "the jitted node functions",
                node_by_node,
            )
            from .node_by_node import NodeByNodeGraph  # (imports graph-scheduler)

            self._nodes = NodeByNodeGraph(self, module)
        self._layout = layout
        self.blas_macs = built.blas_macs
        self.first_steps = self.handover = built.handover
        self.log.static = layout.static
        self._cold = {
            "S": arrays["S"],
            "A": [arrays[f"A{k}"] for k in range(n_arrays)],
            "thr": arrays["thr"],
        }
        self._state = self.cold_state()
        self.origin = built.origin

    def _jit_node_functions(self, initializer: Mapping[str, Any] | None) -> None:
        """Compile (or load) every node function now, on a copy of the state, so that a
        typing error falls back before the run starts."""
        st = self.cold_state()
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        values = {**st, "dt": 0.0, "has_dt": False, "err": err, "P": self.sweep_values, "q_c2": 0}
        for fn in self._nodes.node_fns:
            fn(*arguments(NODE_ARGS, values))
        inputs = {**st, "I": initializer_args(initializer)}
        self._nodes.inputs_fn(*arguments(INPUTS_ARGS, inputs))

    def _check_initializer_keys(self, initializer: Mapping[str, Any] | None) -> None:
        """The compiled code delivers the initializer keys it was generated for, no others."""
        if init_key(initializer) != self._init_key:
            raise MDFError(
                "the compiled backend needs the same initializer keys on every step "
                "(use backend='interpreted' to change them)"
            )

    def _give_up(self, reason: str, quiet: bool = False) -> None:
        """Run on the interpreted backend from now on, with a log line saying why (an info
        line when the model itself failed in the warm-up: the run reports that error when it
        reaches it, and one error is one line)."""
        self.fallback_reason = reason
        self._state = None
        self._nodes = None
        self.handover = None
        (log.info if quiet else log.warning)(
            "compiled backend: %s; running on the interpreted backend", reason
        )

    def _run_compiled(
        self,
        n: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool,
    ) -> None:
        """``n`` updates of the whole-graph jitted loop on the current state."""
        self._check_initializer_keys(initializer)
        st = self._state
        inits = initializer_args(initializer)
        static = self._layout.static is not None
        logged = self.schedule_log > 0 and not static
        rc = self._run_call
        logbuf, logpos = (self.log.ring, self.log.pos) if logged else (rc.no_logbuf, rc.no_logpos)
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        updates = int(st["clock"][2])
        fn = self._fn if logged else self._quiet_fn
        fixed = {"logbuf": logbuf, "logpos": logpos, "P": self.sweep_values, "rec": self._no_rec}
        call = {"nsteps": n, "dt": 0.0 if dt is None else float(dt), "dt_given": dt is not None}
        call.update(first_without_dt=first_without_dt, err=err, I=inits)
        call["rng"] = stream_for(self.plan)  # (random operators: draws.py)
        if self.tier0 is not None:  # (None once the generated code runs)
            self.tier0 = self.tier0.call(self, fn, {**st, **fixed, **call}, n)
        else:
            args = rc.args(fn, st, fixed, call)
            self.call_jitted(fn, *args)
            if (
                n == 1
                and dt is None
                and first_without_dt
                and self.handover is None
                and call["rng"] is None  # (a graph that draws takes each call's stream)
            ):
                self._quick = quick_from(st, fn, args, rc.at_err, self._init_key, static)
        if static:
            self.log.static_updates += int(st["clock"][2]) - updates
        if err[0] != 0:  # (the generated code's test)
            self._raise_error(err)

    def call_jitted(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call generated code; a failed bounds check is an MDFError naming the field."""
        return call_checked(fn, args, self._layout.index_fields, self.blas_macs)

    def _raise_error(self, err: np.ndarray | None, prefix: str = "") -> None:
        """Raise the MDFError a compiled run's ``err`` row reports, if any."""
        if err is None:
            return
        layout = self._layout
        error = reported_error(
            err, layout.index_fields, layout.finite_checks, self.node_ids, self.plan.where, prefix
        )
        if error is not None:
            raise error

    # -- batches (sweeps) ----------------------------------------------------------------
    def prepare_batch(
        self,
        swept: list[tuple[str, str]],
        recorded: list[tuple[str, str]],
        dt: float | None,
        initializer: Mapping[str, Any] | None = None,
    ) -> bool:
        """Compile for runs from a cold start where the ``swept`` parameters come from a
        parameter table and the ``recorded`` values are written at every step.

        Returns False (with ``fallback_reason`` set) when the graph cannot be compiled."""
        self.swept = list(swept)
        self.recorded = list(recorded)
        self._compile(initializer, dt)
        return self.is_compiled

    def cold_state(self) -> dict[str, Any]:
        """Compiled state equal to a graph that has not run yet (as a fresh interpreter)."""
        return fresh_state(self._cold, len(self.node_ids))

    def run_batch(
        self,
        values: np.ndarray,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None = None,
        first_without_dt: bool = True,
        keep: int | None = None,
    ) -> np.ndarray:
        """Run ``steps`` evaluate() calls from a cold start once per row of ``values`` (one
        column per swept parameter; :mod:`.batch`). Returns the values recorded at the last
        ``keep`` steps (default all): ``(rows, keep, width)``."""
        keep = steps if keep is None else max(1, min(int(keep), steps))
        if not self.is_compiled:
            raise MDFError(f"the compiled backend cannot run this graph: {self.fallback_reason}")
        if init_key(initializer) != self._init_key:
            raise MDFError("the batch needs the initializer keys it was prepared with")
        values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1, max(1, len(self.swept)))
        run = run_cold if self.first_steps is None else run_handed_over
        return run(self, values, steps, dt, initializer, first_without_dt, keep)

    @property
    def record_layout(self) -> list[tuple[str, str, int, tuple[int, ...]]]:
        """``(node, name, first column, shape)`` of each recorded value in ``run_batch``."""
        return list(self._layout.record_columns)
