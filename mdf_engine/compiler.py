"""The compiled backend: a whole graph, scheduler included, as one Numba-jitted function.

A throw-away interpreted warm-up (until every node has run once) gives every port, parameter,
function and output a fixed kind (a float64 scalar or a float64 array of a fixed shape). From
that the compiler writes Python source for a function ``run(nsteps, dt, ...)`` that holds
graph-scheduler's algorithm as unrolled passes and consideration sets
(:mod:`mdf_engine.schedulers.codegen`) with every node's body inlined: incoming edges, input
reads, functions, parameters (Euler steps, conditions), outputs. The source goes to a file in
the cache folder, named by its hash, and is jitted with ``cache=True``; the run itself starts
from the state of a graph that has not run (the warm-up's values are dropped), so a first run
and a run in a later process give the same numbers. :mod:`mdf_engine.compile_cache` records the
layout and that cold state, so a later process skips the warm-up and the code generation too.

When something cannot be compiled (a condition kind, a function with no Numba kernel, a value
that is not numeric, a Numba typing error), the graph runs on the interpreted backend and a log
line says why: results never change silently.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib.util
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .compile_cache import files_digest, graph_key
from .compile_cache import load as cache_load
from .compile_cache import save as cache_save
from .compiled_helpers import index_error
from .errors import MDFError, NotCompilable
from .expressions import to_element_source, to_source
from .generated_source import ConstantTable, check_source
from .plan import CallPlan, GraphPlan, ParameterPlan, ValuePlan
from .registry import REGISTRY

log = logging.getLogger("mdf_engine")

MAX_WARMUP_STEPS = 20
MAX_PASSES_PER_UPDATE = 10_000_000
#: Length of a compiled run's ``err`` row: ``err[0]`` says what stopped it (-2: an update that
#: never ended; -5: integer overflow, -4: int() beyond 64 bits or of NaN, with field and step in ``err[1:3]``;
#: -3: an index out of bounds, with field, step, index, size and axis in
#: ``err[1:6]``; > 0: a NaN/inf under check_finite, with node, step and value in ``err[1:4]``)
ERR_WIDTH = 8
#: Entries of the compiled loop's schedule log by default (a ring buffer: one entry per node
#: run and one per time step; ``time_steps`` and ``order_of_execution`` hold the most recent
#: ones). ``CompiledGraph(schedule_log=N)`` changes it, ``0`` (or ``record_schedule=False``)
#: switches the log off.
SCHEDULE_LOG = 1_000_000
#: A number literal as generated code writes one (a name standing for a fixed value)
_NUMBER = re.compile(r"^-?\d+(\.\d*)?(e[-+]?\d+)?$")


def cache_dir() -> Path:
    """Where generated model code and Numba's cache live (``MDF_ENGINE_CACHE`` overrides)."""
    root = os.environ.get("MDF_ENGINE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mdf_engine"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Slot:
    """Where one value lives in compiled state: scalar ``S[index]``, array ``A<index>``, or a
    tuple of such slots (``kind == "t"``, ``parts``: a tuple or list whose items differ in
    shape, such as PsyNeuLink's ``(v, w, time)``). ``seq`` is ``"list"`` or ``"tuple"`` when
    the model's value is one: a sequence of items of one shape lives in an array slot whose
    first axis are the items, and is read back as the sequence."""

    kind: str  # "s", "a" or "t"
    index: int
    shape: tuple[int, ...] = ()
    seq: str = ""
    parts: list[Slot] = dataclasses.field(default_factory=list)

    @property
    def var(self) -> str:
        """The slot's variable in generated code (a tuple's ``T<k>`` is never emitted: its
        items are read by constant indices, see ``_Generator.index``)."""
        return {"s": "s", "a": "a", "t": "T"}[self.kind] + str(self.index)


def _kind_of(value: Any, what: str) -> tuple[str, tuple[int, ...]]:
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return "s", ()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return ("s", ()) if value.ndim == 0 else ("a", value.shape)
    raise NotCompilable(f"{what} holds a {type(value).__name__}, not a number or numeric array")


@dataclass
class Layout:
    """Where a compiled graph keeps its values, and what its code reports."""

    slots: dict[tuple[str, str], Slot]
    #: node indices of each consideration set when the schedule is fixed, else None
    static: list[list[int]] | None
    #: (kind, name) of each value checked for NaN/inf, indexed by ``err[3]``
    finite_checks: list[tuple[str, str]]
    #: (node, name, first column, shape) of each value ``run_batch`` records
    record_columns: list[tuple[str, str, int, tuple[int, ...]]]
    record_width: int
    #: the field of each bounds-checked subscript of the generated code
    index_fields: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        keys = {id(s): [n, k] for (n, k), s in self.slots.items()}
        return {
            "slots": [
                [n, k, s.kind, s.index, list(s.shape), s.seq, [keys[id(p)] for p in s.parts]]
                for (n, k), s in self.slots.items()
            ],
            "static": self.static,
            "finite_checks": self.finite_checks,
            "record_columns": [[n, k, c, list(sh)] for n, k, c, sh in self.record_columns],
            "record_width": self.record_width,
            "index_fields": self.index_fields,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Layout:
        slots = {(r[0], r[1]): Slot(r[2], int(r[3]), tuple(r[4]), r[5]) for r in d["slots"]}
        for r in d["slots"]:
            slots[(r[0], r[1])].parts = [slots[(n, k)] for n, k in r[6]]
        return cls(
            slots,
            d["static"],
            [tuple(x) for x in d["finite_checks"]],
            [(n, k, int(c), tuple(sh)) for n, k, c, sh in d["record_columns"]],
            int(d["record_width"]),
            [str(f) for f in d.get("index_fields", [])],
        )


class CompiledGraph:
    """Runs a graph with generated Numba code, from its first step on.

    Compiling needs the kind and shape of every value: a throw-away interpreted warm-up (until
    every node has run) provides them the first time; :mod:`mdf_engine.compile_cache` keeps
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
        self._ring = np.zeros(max(self.schedule_log, 1), dtype=np.int64)
        self._logpos = np.zeros(2, dtype=np.int64)
        self._logpos[1] = 1 if self.schedule_log > 0 else 0
        self._decoded: tuple[int, list[set[str]], list[str]] | None = None
        self._interp = None
        self.node_ids = list(plan.nodes)
        self.fallback_reason: str | None = None
        #: (node, parameter) pairs whose value is read from the ``P`` argument (sweeps)
        self.swept: list[tuple[str, str]] = []
        self.sweep_values = np.zeros(1)
        #: (node, port-or-parameter) pairs written to the ``rec`` array at every step (sweeps)
        self.recorded: list[tuple[str, str]] = []
        self._no_rec = np.zeros((0, 0))
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
        self._static_updates = 0
        #: where the schedule log stood when the last evaluate() started (ring position,
        #: static updates)
        self._last_update = (0, 0)
        self._clock: Any = None

    #: see :class:`mdf_engine.backends.base.Runner`
    finished = False
    default_steps = 1
    must_finish = False

    # -- public interface shared with InterpretedGraph ----------------------------------------
    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Compile now (from the cache, or generated after a warm-up), unless already tried:
        the first step then draws no random numbers of the warm-up."""
        if not self._tried:
            self._compile(initializer, dt)

    @property
    def compiled_state(self) -> dict[str, Any]:
        """The compiled run's state arrays (``S`` scalars, ``A`` arrays, ``ever``, ``clock``,
        ...), which the jitted functions update in place; an error before compiling."""
        if self._state is None:
            raise MDFError("the graph is not compiled (yet)")
        return self._state

    def check_error(self, err: np.ndarray) -> None:
        """Raise the MDFError a jitted function reported in its ``err`` row, if any."""
        self._raise_error(err)

    def slot_value(self, node: str, key: str) -> Any:
        """The compiled state's value of the slot ``key`` of ``node`` (a parameter id, or
        ``"out:" + port`` for an output port)."""
        return self._read(self._layout.slots[(node, key)])

    @property
    def interp(self):
        """The interpreted backend that runs the graph when it cannot be compiled."""
        if self._interp is None:
            from .interpreter import InterpretedGraph

            self._interp = InterpretedGraph(self.plan, check_finite=self.check_finite)
        return self._interp

    @property
    def is_compiled(self) -> bool:
        """The whole graph, schedule included, runs as one jitted function."""
        return self._state is not None and self._nodes is None

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
        if self.is_compiled:
            return int(self._state["clock"][2])
        if self._nodes is not None:
            return self._nodes.evaluations
        return self._interp.evaluations if self._interp is not None else 0

    @property
    def time_steps(self) -> list[set[str]]:
        """The node sets of the most recent time steps (see ``schedule_log``)."""
        if not self.is_compiled:
            return self._runner.time_steps
        return self._schedule()[0]

    @property
    def order_of_execution(self) -> list[str]:
        if not self.is_compiled:
            return self._runner.order_of_execution
        return self._schedule()[1]

    @property
    def schedule_truncated(self) -> bool:
        """Older time steps fell out of the schedule log (or it is off)."""
        if self.schedule_log == 0:
            return self.evaluations > 0
        if self._layout is not None and self._layout.static is not None:
            per = sum(len(m) + 1 for m in self._layout.static if m)
            return self._static_updates * per > self.schedule_log
        return int(self._logpos[0]) > self.schedule_log

    def _schedule(self) -> tuple[list[set[str]], list[str]]:
        """The schedule log decoded (once per change): time steps and execution order."""
        if self.schedule_log == 0:
            return [], []
        static = self._layout is not None and self._layout.static is not None
        stamp = self._static_updates if static else int(self._logpos[0])
        if self._decoded is not None and self._decoded[0] == stamp:
            return self._decoded[1], self._decoded[2]
        if static:
            # a fixed schedule is not logged by the compiled loop: its time steps are written
            # out from the number of updates run (as many as the log would keep)
            sets = [
                [self.node_ids[m] for m in members] for members in self._layout.static if members
            ]
            per = max(sum(len(m) + 1 for m in sets), 1)
            updates = min(self._static_updates, self.schedule_log // per)
            steps = [set(m) for _ in range(updates) for m in sets]
            order = [n for _ in range(updates) for m in sets for n in m]
        else:
            n, total = len(self._ring), stamp
            if total <= n:
                entries = self._ring[:total]
            else:  # wrapped: oldest first, starting after the first complete time step
                start = total % n
                entries = np.concatenate([self._ring[start:], self._ring[:start]])
                cut = np.nonzero(entries < 0)[0]
                entries = entries[cut[0] + 1 :] if cut.size else entries[:0]
            steps, order, cur = [], [], set()
            for v in entries.tolist():
                if v < 0:
                    steps.append(cur)
                    cur = set()
                else:
                    cur.add(self.node_ids[v])
                    order.append(self.node_ids[v])
        self._decoded = (stamp, steps, order)
        return steps, order

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        mark = (int(self._logpos[0]), self._static_updates)
        self.run_steps(1, time_increment, initializer, first_without_dt=time_increment is None)
        self._last_update = mark

    def _steps_since(self, mark: tuple[int, int]) -> list[set[str]]:
        """The logged time steps after ``mark`` (those the ring buffer still holds)."""
        if self._layout is not None and self._layout.static is not None:
            sets = [
                {self.node_ids[m] for m in members} for members in self._layout.static if members
            ]
            return [set(m) for _ in range(self._static_updates - mark[1]) for m in sets]
        total, n = int(self._logpos[0]), len(self._ring)
        if self.schedule_log == 0:
            return []
        first = max(mark[0], total - n)
        idx = np.arange(first, total) % n
        entries = self._ring[idx]
        if first > mark[0]:  # the start fell out of the ring: from a time step boundary
            cut = np.nonzero(entries < 0)[0]
            entries = entries[cut[0] + 1 :] if cut.size else entries[:0]
        steps, cur = [], set()
        for v in entries.tolist():
            if v < 0:
                steps.append(cur)
                cur = set()
            else:
                cur.add(self.node_ids[v])
        return steps

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        """The time steps of the last evaluate() and their absolute times in ms (with
        absolute time, the clock ends an update one step after its last step starts)."""
        if not self.is_compiled:
            return self._runner.last_update_steps()
        steps = self._steps_since(self._last_update)
        clock = self._absolute_clock()
        if not clock.enabled:
            return steps, [0.0] * len(steps)
        end, k = int(self._state["clock"][6]), len(steps)
        return steps, [(end - (k - i) * clock.step) / clock.ticks_per_ms for i in range(k)]

    def _absolute_clock(self) -> Any:
        """graph-scheduler's absolute clock in ticks, as the compiled loop keeps it."""
        if self._clock is None:
            from .schedulers.compiled import encode

            self._clock = encode(self.interp.scheduler, self.node_ids)[0].absolute
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
        if self.is_compiled:
            first = self.evaluations == 0
            try:
                self._run_compiled(steps, dt, initializer, first_without_dt)
                return
            except PythonCallFailed as e:
                if not first:
                    raise
                # nothing of this run has been seen yet: run it again, interpreted
                self._give_up(str(e))
        if self._nodes is not None:
            self._check_initializer_keys(initializer)
        for k in range(steps):
            inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
            self._runner.evaluate(time_increment=inc, initializer=initializer)

    def value(self, node: str, name: str) -> Any:
        """The current value of an input port, parameter, function or output port (looked up
        in that order, as the interpreted backend does)."""
        if self._state is None:
            return self.interp.value(node, name)
        slots = self._layout.slots
        slot = slots.get((node, name)) or slots.get((node, "out:" + name))
        if slot is None:
            return self.interp.value(node, name)  # its error names what is missing
        return self._read(slot)

    def outputs(self) -> dict[str, dict[str, Any]]:
        if self._state is None:
            return self.interp.outputs()
        return {
            nid: {
                oid: self._read(self._layout.slots[(nid, "out:" + oid)])
                for oid, _ in self.plan.nodes[nid].outputs
            }
            for nid in self.node_ids
        }

    # -- compilation ------------------------------------------------------------------------
    def _compile(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Make the graph's code ready (from the cache, or generated after a warm-up) and set
        the state of a graph that has not run; on failure log why and stay interpreted."""
        self._tried = True
        try:
            from .psyneulink_files import not_compiled_reason

            why = not_compiled_reason(self.plan, self.interp.scheduler, initializer)
            if why:
                raise NotCompilable(why)
            if not self.swept:
                self.swept, values = self._float_parameters()
                self.sweep_values = np.array(values or [0.0], dtype=np.float64)
            key = graph_key(self.plan, self._options(initializer))
            found = cache_load(cache_dir(), key)
            if found is not None:
                record, arrays = found
                module = _import_generated(cache_dir() / record["module"])
                self._adopt(
                    module,
                    Layout.from_json(record["layout"]),
                    arrays,
                    "cache",
                    record.get("node_by_node"),
                    record.get("python_calls") or [],
                )
            else:
                self._generate(initializer, dt, key)
            self._init_key = _init_key(initializer)
            if self._nodes is None:
                self._run_compiled(0, dt if dt is not None else 0.0, initializer, False)
            else:
                self._jit_node_functions(initializer)
        except NotCompilable as e:
            self._give_up(str(e), quiet=isinstance(e, WarmupStopped))
        except MDFError:
            raise
        except Exception as e:  # numba typing/lowering errors
            lines = [
                ln.strip()
                for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(e)).splitlines()
                if ln.strip()
            ]
            detail = lines[1] if len(lines) > 1 else (lines[0] if lines else "")
            self._give_up(f"Numba could not compile the model ({type(e).__name__}: {detail})")

    def _options(self, initializer: Mapping[str, Any] | None) -> dict[str, Any]:
        """What, besides the graph, changes the generated code."""
        kinds = [
            [k, *_kind_of(initializer[k], f"initializer '{k}'")] for k in sorted(initializer or {})
        ]
        return {
            "initializer": kinds,
            "check_finite": self.check_finite,
            "swept": self.swept,
            "recorded": self.recorded,
            "scheduling_mode": self.plan.scheduling_mode,
        }

    def _generate(self, initializer: Mapping[str, Any] | None, dt: float | None, key: str) -> None:
        from .interpreter import InterpretedGraph

        def warm_up(min_steps: int) -> Any:
            warm = InterpretedGraph(self.plan, check_finite=self.check_finite)
            while (
                len(warm.ever_ran) < len(self.node_ids) or warm.evaluations < min_steps
            ) and warm.evaluations < MAX_WARMUP_STEPS:
                inc = None if (warm.evaluations == 0 or dt is None) else dt
                warm.evaluate(time_increment=inc, initializer=initializer)
            return warm

        try:
            warm = warm_up(1)
            # one step more: a value whose first step differs in kind but not in size (a
            # parameter's scalar initial value, then the (1, 1) arrays PsyNeuLink's functions
            # return) is allocated in the kind it keeps from then on; a value whose size
            # changes keeps its first kind (and a later run reports the change)
            if len(warm.ever_ran) == len(self.node_ids) and warm.evaluations < MAX_WARMUP_STEPS:
                try:
                    later = warm_up(warm.evaluations + 1)
                except MDFError:  # only the optional extra step failed (the real run will
                    later = None  # report it at its step): keep the kinds of the first
                if later is not None and _sizes(later) == _sizes(warm):
                    warm = later
        except MDFError as e:
            raise WarmupStopped(f"the warm-up run stopped: {e}") from None
        if len(warm.ever_ran) < len(self.node_ids):
            never = [n for n in self.node_ids if n not in warm.ever_ran]
            raise NotCompilable(
                f"node '{never[0]}' did not run in {MAX_WARMUP_STEPS} warm-up steps"
            )
        gen = _Generator(self, warm, initializer)
        source = gen.source()
        module = _load_generated(source, gen.constants)
        layout = gen.layout()
        arrays = gen.cold_arrays(InterpretedGraph(self.plan))
        python_calls = sorted({k[0] for k in gen.python_functions})
        self._adopt(module, layout, arrays, "generated", gen.node_by_node, python_calls)
        try:
            cache_save(
                cache_dir(),
                key,
                {
                    "module": Path(module.__file__).name,
                    "layout": layout.to_json(),
                    "node_by_node": gen.node_by_node,
                    "python_calls": python_calls,
                    "kernel_files": gen.kernel_files,
                    "kernel_digest": files_digest(gen.kernel_files),
                },
                arrays,
            )
        except OSError as e:  # a read-only cache folder costs the next process a compile
            log.info("compiled backend: could not write the compile cache (%s)", e)

    def _adopt(
        self,
        module: Any,
        layout: Layout,
        arrays: dict[str, np.ndarray],
        origin: str,
        node_by_node: str | None = None,
        python_calls: list[str] | None = None,
    ) -> None:
        n_arrays = sum(1 for s in layout.slots.values() if s.kind == "a")
        self.python_calls = list(python_calls or [])
        if self.python_calls:
            log.warning(
                "compiled backend: %s %s no Numba kernel; the compiled code calls "
                "%s through Python",
                ", ".join(self.python_calls),
                "has" if len(self.python_calls) == 1 else "have",
                "it" if len(self.python_calls) == 1 else "them",
            )
        if node_by_node is None:
            self._fn = module.run
            self._quiet_fn = module.run_quiet
            self._batch_fn = module.run_batch
        else:
            from .node_by_node import NodeByNodeGraph

            self.fallback_reason = node_by_node
            log.warning(
                "compiled backend: %s; graph-scheduler runs the schedule and calls "
                "the jitted node functions",
                node_by_node,
            )
            self._nodes = NodeByNodeGraph(self, module)
        self._layout = layout
        self._cold = {
            "S": arrays["S"],
            "A": [arrays[f"A{k}"] for k in range(n_arrays)],
            "thr": arrays["thr"],
        }
        self._state = self.cold_state()
        self.origin = origin

    def _float_parameters(self) -> tuple[list[tuple[str, str]], list[float]]:
        """Parameters whose value (or initial value, if stateful) is a float constant: the
        generated code reads them from a table, so models that differ only in such values
        share one compiled function (and Numba's disk cache)."""
        keys, values = [], []
        for nid, np_ in self.plan.nodes.items():
            for pp in np_.parameters:
                vp = pp.initial if (pp.stateful or pp.derivative is not None) else pp.value
                if pp.call is not None or vp is None or vp.expr is not None:
                    continue
                c = vp.const
                if isinstance(c, np.ndarray) and c.ndim == 0 and c.dtype.kind == "f":
                    c = float(c)
                if isinstance(c, float):
                    keys.append((nid, pp.id))
                    values.append(c)
        return keys, values

    def _jit_node_functions(self, initializer: Mapping[str, Any] | None) -> None:
        """Compile (or load) every node function now, on a copy of the state, so that a
        typing error falls back before the run starts."""
        st = self.cold_state()
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        for fn in self._nodes.node_fns:
            fn(0.0, False, st["S"], *st["A"], st["ever"], err, self.sweep_values, 0)
        self._nodes.inputs_fn(st["S"], *st["A"], *_initializer_args(initializer))

    def _check_initializer_keys(self, initializer: Mapping[str, Any] | None) -> None:
        """The compiled code delivers the initializer keys it was generated for, no others."""
        if _init_key(initializer) != self._init_key:
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
        self._check_initializer_keys(initializer)
        st = self._state
        inits = _initializer_args(initializer)
        static = self._layout.static is not None
        logged = self.schedule_log > 0 and not static
        logbuf = self._ring if logged else np.zeros(1, dtype=np.int64)
        logpos = self._logpos if logged else np.zeros(2, dtype=np.int64)
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        updates = int(st["clock"][2])
        fn = self._fn if logged else self._quiet_fn
        self.call_jitted(
            fn,
            n,
            0.0 if dt is None else float(dt),
            dt is not None,
            first_without_dt,
            st["S"],
            *st["A"],
            st["useable"],
            st["total"],
            st["clock"],
            st["last_set"],
            st["ever"],
            st["thr"],
            logbuf,
            logpos,
            err,
            self.sweep_values,
            self._no_rec,
            *inits,
        )
        if static:
            self._static_updates += int(st["clock"][2]) - updates
        self._raise_error(err)

    def call_jitted(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call generated code; a failed bounds check is an MDFError naming the field."""
        try:
            return fn(*args)
        except (IndexError, SystemError) as e:
            # (a parallel batch reports an exception of its threads as a SystemError)
            cause = e if isinstance(e, IndexError) else e.__cause__
            mapped = (
                index_error(cause, self._layout.index_fields)
                if isinstance(cause, IndexError)
                else None
            )
            if mapped is None:
                raise
            raise mapped from None

    def _raise_error(self, err: np.ndarray, prefix: str = "") -> None:
        """Raise the MDFError a compiled run's ``err`` row reports (see :data:`ERR_WIDTH`),
        if any."""
        if err[0] == -5:
            k, step = int(err[1]), int(err[2])
            raise MDFError(
                f"{prefix}integer overflow: a result beyond 64-bit integers at step {step}",
                self._layout.index_fields[k],
            )
        if err[0] == -4:
            k, step = int(err[1]), int(err[2])
            raise MDFError(
                f"{prefix}int() of a value beyond 64-bit integers (or NaN) at step {step}",
                self._layout.index_fields[k],
            )
        if err[0] == -3:
            k, step, i, n, axis = (int(x) for x in err[1:6])
            raise index_error(IndexError(k, axis, i, n, step), self._layout.index_fields, prefix)
        if err[0] == -2:
            raise MDFError(
                f"{prefix}no termination after {MAX_PASSES_PER_UPDATE} passes of one update",
                self.plan.where,
            )
        if err[0] > 0:
            node = self.node_ids[int(err[1])]
            kind, name = self._layout.finite_checks[int(err[3])]
            raise MDFError(
                f"{prefix}non-finite value in {kind} '{name}' at step {int(err[2])}",
                f"{self.plan.where}.nodes.{node}",
            )

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
        n = len(self.node_ids)
        cold = self._cold
        return {
            "S": cold["S"].copy(),
            "A": [a.copy() for a in cold["A"]],
            "useable": np.zeros((n, n), dtype=np.int64),
            "total": np.zeros((3, n), dtype=np.int64),
            "clock": np.zeros(7, np.int64),
            "last_set": np.zeros(n, dtype=np.bool_),
            "ever": np.zeros(n, dtype=np.bool_),
            "thr": cold["thr"].copy(),
        }

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
        column per swept parameter), in one jitted call spread over the cores.

        Returns the recorded values of the last ``keep`` steps (default all), shape
        ``(rows, keep, width)`` (see ``record_layout``)."""
        keep = steps if keep is None else max(1, min(int(keep), steps))
        if not self.is_compiled:
            raise MDFError(f"the compiled backend cannot run this graph: {self.fallback_reason}")
        if _init_key(initializer) != self._init_key:
            raise MDFError("the batch needs the initializer keys it was prepared with")
        values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1, max(1, len(self.swept)))
        cold = self._cold
        width = self._layout.record_width
        from .limits import LIMITS, limit

        size = float(values.shape[0]) * keep * max(width, 1)
        if size > limit("sweep_values"):
            raise MDFError(
                f"recording {width} values at {keep} steps of {values.shape[0]} "
                f"parameter sets needs {size:.3g} numbers; the limit is "
                f"{limit('sweep_values')} (set {LIMITS['sweep_values'][0]} to allow "
                "more)"
            )
        rec = np.zeros((values.shape[0], keep, max(width, 1)), dtype=np.float64)
        err = np.zeros((values.shape[0], ERR_WIDTH), dtype=np.int64)
        inits = _initializer_args(initializer)
        self.call_jitted(
            self._batch_fn,
            steps,
            0.0 if dt is None else float(dt),
            dt is not None,
            first_without_dt,
            cold["S"],
            *cold["A"],
            cold["thr"],
            values,
            rec,
            err,
            *inits,
        )
        for failed in (
            err[:, 0] == -5,
            err[:, 0] == -4,
            err[:, 0] == -3,
            err[:, 0] == -2,
            err[:, 0] > 0,
        ):
            bad = np.nonzero(failed)[0]
            if bad.size:
                self._raise_error(err[bad[0]], f"parameter set {int(bad[0])}: ")
        return rec[:, :, :width]

    @property
    def record_layout(self) -> list[tuple[str, str, int, tuple[int, ...]]]:
        """``(node, name, first column, shape)`` of each recorded value in ``run_batch``."""
        return list(self._layout.record_columns)

    def _read(self, slot: Slot) -> Any:
        if slot.kind == "s":
            return np.float64(self._state["S"][slot.index])
        if slot.kind == "t":
            items = [self._read(p) for p in slot.parts]
        elif slot.seq:
            a = self._state["A"][slot.index]
            items = [np.float64(x) if a.ndim == 1 else x.copy() for x in a]
        else:
            return self._state["A"][slot.index].copy()
        return tuple(items) if slot.seq == "tuple" else items


#: Function namespaces whose kernels compute by their inputs' dtype (integer division,
#: bitwise and logical ops, quantized arithmetic): integer or boolean inputs keep such a graph
#: off the compiled backend, which holds every value as float64.
def _flat(var: str, shape: tuple[int, ...]) -> str:
    """A C-contiguous array of ``shape`` as a 1-D view (itself when it has one axis)."""
    return var if len(shape) == 1 else f"{var}.reshape({int(np.prod(shape))})"


def _sizes(warm: Any) -> dict[tuple[str, str], Any]:
    """The number of elements of every value a warmed-up interpreter holds (per item for a
    list or tuple)."""

    def size(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return tuple(size(x) for x in v)
        return np.size(v) if v is not None else None

    out: dict[tuple[str, str], Any] = {}
    for nid, st in warm.states.items():
        for group, values in (("in", st.inputs_read), ("fn", st.funcs), ("out", st.outputs)):
            for k, v in values.items():
                out[(nid, f"{group}:{k}")] = size(v)
        for k in st.params:
            out[(nid, "par:" + k)] = size(st.lookup(k))
    return out


def _constant_axes(cp: CallPlan, name: str | None, vp: ValuePlan | None) -> list[int] | None:
    """The integers of a registry function's ``axes`` given as a model constant (an integer
    or a list of them), which compiled code passes as a tuple of integer literals (the form
    the reduction kernels type); None for any other argument."""
    if (
        name != "axes"
        or vp is None
        or vp.expr is not None
        or cp.schema is None
        or cp.schema.namespace not in _DTYPE_AWARE
    ):
        return None
    c = np.asarray(vp.const)
    if c.dtype.kind not in "iu" or c.ndim > 1:
        return None
    return [int(x) for x in c.reshape(-1)]


#: a tuple slot's variable, which generated code never holds (see ``Slot.var``)
_TUPLE_VAR = re.compile(r"\bT\d+\b")

_DTYPE_AWARE = ("onnx", "onnx-exp", "onnx-legacy", "onnx-mod", "hexagon")


def _init_key(initializer: Mapping[str, Any] | None) -> tuple:
    return tuple(sorted(initializer)) if initializer else ()


def _initializer_args(initializer: Mapping[str, Any] | None) -> list[Any]:
    """The initializer's values as the generated function takes them (sorted by key)."""
    out = []
    for key in sorted(initializer or {}):
        v = initializer[key]
        kind, _ = _kind_of(v, f"initializer '{key}'")
        out.append(float(np.asarray(v)) if kind == "s" else np.asarray(v, dtype=np.float64))
    return out


_LOADED: dict[str, Any] = {}


def _load_generated(source: str, table: ConstantTable):
    """Write a generated module and its constant table (unless there already) and import it."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    folder = cache_dir()
    path = folder / f"mdf_model_{digest}.py"
    if not path.exists():
        # the table first: a module file is only ever seen next to its table
        tmp = folder / f".tmp_{digest}_{os.getpid()}.npz"
        table.save(tmp)
        os.replace(tmp, path.with_suffix(".npz"))
        tmp = folder / f".tmp_{digest}_{os.getpid()}.py"
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    return _import_generated(path)


def _import_generated(path: Path):
    """Import a generated module (once per process); Numba loads its machine code from the
    cache next to it."""
    digest = path.stem.rsplit("_", 1)[-1]
    if str(path) in _LOADED:
        return _LOADED[str(path)]
    name = f"mdf_engine_generated_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _LOADED[str(path)] = module
    return module


class _Generator:
    """Writes the source of ``run`` for one warmed-up graph."""

    def __init__(self, cg: CompiledGraph, warm: Any, initializer: Mapping[str, Any] | None):
        from .schedulers.codegen import SchedulerSource
        from .schedulers.compiled import encode

        self.cg = cg
        self.swept = {key: k for k, key in enumerate(cg.swept)}
        self.plan = cg.plan
        self.interp = warm
        self.slots: dict[tuple[str, str], Slot] = {}
        self.scalars: list[float] = []
        self.arrays: list[np.ndarray] = []
        self.n_tuples = 0
        self.globals: list[str] = []
        #: every model number, string and array the source names (``c<k>``)
        self.constants = ConstantTable()
        #: the field of each bounds-checked subscript (``_ix1``/``_ix2``'s ``k``)
        self.index_fields: list[str] = []
        self.functions: dict[str, str] = {}
        self.initializer = dict(initializer or {})
        self.kernel_files: list[str] = []
        #: (name, since, namespace, shape) -> global of a function called through Python
        self.python_functions: dict[tuple, str] = {}
        self.node_index = {nid: i for i, nid in enumerate(cg.node_ids)}
        #: why the schedule stays with graph-scheduler (node functions only), or None
        self.node_by_node: str | None = None
        try:
            table, roots, term, queue = encode(self.interp.scheduler, cg.node_ids)
            self.sched = SchedulerSource(
                table, roots, term, queue, len(cg.node_ids), self.constants.number
            )
        except NotCompilable as e:
            self.node_by_node = str(e)
            table, roots, term, queue = None, None, None, None
        self.table, self.roots, self.term, self.queue = table, roots, term, queue
        #: (node, name, indices) of the value each Threshold condition reads
        self.thresholds = table.thresholds if table is not None else []
        self._allocate()
        self.static = self.static_schedule() if table is not None else None
        #: (kind, name) of each value checked for NaN/inf, indexed by ``err[3]``
        self.finite_checks: list[tuple[str, str]] = []
        self.record_columns: list[tuple[str, str, int, tuple[int, ...]]] = []
        self.record_slots: list[Slot] = []  # the slot of each record column
        self.record_width = 0
        for nid, name in cg.recorded:
            key = (nid, "out:" + name) if (nid, "out:" + name) in self.slots else (nid, name)
            if key not in self.slots:
                raise MDFError(f"record '{nid}.{name}': no such port or parameter")
            slot = self.slots[key]
            if slot.kind == "t":
                raise NotCompilable(f"record '{nid}.{name}': a tuple of values of mixed shapes")
            self.record_columns.append((nid, name, self.record_width, slot.shape))
            self.record_slots.append(slot)
            self.record_width += int(np.prod(slot.shape)) if slot.kind == "a" else 1

    # -- state ----------------------------------------------------------------------------
    def _slot(self, key: tuple[str, str], value: Any, what: str) -> Slot:
        if isinstance(value, (list, tuple)):
            return self._seq_slot(key, value, what)
        kind, shape = _kind_of(value, what)
        if kind == "s":
            slot = Slot("s", len(self.scalars))
            self.scalars.append(float(np.asarray(value, dtype=float)))
        else:
            slot = Slot("a", len(self.arrays), shape)
            self.arrays.append(np.array(value, dtype=np.float64))
        self.slots[key] = slot
        return slot

    def _seq_slot(self, key: tuple[str, str], value: list | tuple, what: str) -> Slot:
        """A list or tuple of numbers and numeric arrays: one array slot when every item has
        one shape (the items along its first axis), else a tuple of slots (``part<k>:``)."""
        seq = "tuple" if isinstance(value, tuple) else "list"
        if not value:
            raise NotCompilable(f"{what} holds an empty {seq}")
        flat = not any(isinstance(x, (list, tuple)) for x in value)
        if flat:
            for k, x in enumerate(value):
                _kind_of(x, f"{what}[{k}]")
        if flat and len({np.shape(x) for x in value}) == 1:
            slot = self._slot(key, np.array(value, dtype=np.float64), what)
            if slot.kind == "s":  # (a 0-d array cannot hold a sequence)
                raise NotCompilable(f"{what} holds an empty {seq}")
            slot.seq = seq
            return slot
        parts = [
            self._slot((key[0], f"part{k}:{key[1]}"), x, f"{what}[{k}]")
            for k, x in enumerate(value)
        ]
        slot = Slot("t", self.n_tuples, (), seq, parts)
        self.n_tuples += 1
        self.slots[key] = slot
        return slot

    def _allocate(self) -> None:
        for nid, np_ in self.plan.nodes.items():
            st = self.interp.states[nid]
            w = f"{np_.where}"
            for ip in np_.inputs:
                read = st.inputs_read.get(ip.id)
                slot = self._slot((nid, ip.id), read, f"{w}.input_ports.{ip.id}")
                pend = st.pending[ip.id]
                pslot = self._slot(
                    (nid, "pend:" + ip.id),
                    read if pend is None else pend,
                    f"{w}.input_ports.{ip.id}",
                )
                if pslot.kind != slot.kind or pslot.shape != slot.shape:
                    raise NotCompilable(f"input port {nid}.{ip.id} changes shape")
                self.slots[(nid, "flag:" + ip.id)] = Slot("s", len(self.scalars))
                self.scalars.append(0.0 if pend is None else 1.0)
            for fid, _ in np_.functions:
                self._slot((nid, fid), st.funcs[fid], f"{w}.functions.{fid}")
            for pp in np_.parameters:
                self._slot((nid, pp.id), st.lookup(pp.id), f"{w}.parameters.{pp.id}")
                self.slots[(nid, "unset:" + pp.id)] = Slot("s", len(self.scalars))
                self.scalars.append(0.0)
            for oid, _ in np_.outputs:
                self._slot((nid, "out:" + oid), st.outputs[oid], f"{w}.output_ports.{oid}")
        for key, value in self.initializer.items():
            _kind_of(value, f"initializer '{key}'")
        self._check_call_inputs()

    def _check_call_inputs(self) -> None:
        """Refuse a function call whose inputs were integer or boolean arrays in the warm-up:
        the compiled backend holds every value as float64, and such a function (onnx::Div on
        integers, bitwise and logical ops, ...) would silently compute something else."""
        for nid, np_ in self.plan.nodes.items():
            st = self.interp.states[nid]
            env = {
                **st.inputs_read,
                **{k: st.lookup(k) for k in st.params},
                **{k: v for k, v in st.funcs.items() if v is not None},
            }
            calls = [(f"functions.{fid}", cp) for fid, cp in np_.functions]
            calls += [
                (f"parameters.{pp.id}", pp.call) for pp in np_.parameters if pp.call is not None
            ]
            for where, cp in calls:
                if cp.schema is None or cp.schema.namespace not in _DTYPE_AWARE:
                    continue  # the standard functions are float arithmetic
                fp = dict(env)
                try:
                    for name, vp in cp.args:
                        fp[name] = vp.evaluate(fp)
                except Exception:  # noqa: BLE001 - not knowable: do not compile it
                    raise NotCompilable(
                        f"{np_.where}.{where}: its arguments could not be checked"
                    ) from None
                for name in cp.input_names:
                    if _constant_axes(cp, name, dict(cp.args).get(name)) is not None:
                        continue  # written as a tuple of integer literals
                    v = fp.get(name) if name is not None else None
                    kind = np.asarray(v).dtype.kind if v is not None else "f"
                    if kind in "biu":
                        raise NotCompilable(
                            f"{np_.where}.{where}: {cp.schema.name} gets {np.asarray(v).dtype} "
                            f"input '{name}'; the compiled backend computes in float64"
                        )

    def layout(self) -> Layout:
        return Layout(
            self.slots,
            self.static,
            self.finite_checks,
            self.record_columns,
            self.record_width,
            self.index_fields,
        )

    def cold_arrays(self, fresh: Any) -> dict[str, np.ndarray]:
        """The scalar table ``S``, every array ``A<k>`` and the Threshold values of a graph
        that has not run yet (``fresh``: an interpreter that has not run)."""
        S = np.array(self.scalars, dtype=np.float64) if self.scalars else np.zeros(1)
        A = [np.zeros_like(a) for a in self.arrays]
        for (nid, key), slot in self.slots.items():
            if key.startswith("unset:"):
                S[slot.index] = 1.0
            elif key.startswith("flag:"):
                pend = fresh.states[nid].pending[key[5:]]
                S[slot.index] = 0.0 if pend is None else 1.0
                if pend is not None:
                    target = self.slots[(nid, "pend:" + key[5:])]
                    value = np.asarray(pend, dtype=np.float64)
                    if target.kind == "s":
                        S[target.index] = float(value.reshape(-1)[0]) if value.size else 0.0
                    else:
                        A[target.index][...] = value
        return {
            "S": S,
            **{f"A{k}": a for k, a in enumerate(A)},
            "thr": self.threshold_values(fresh),
        }

    def threshold_values(self, interp: Any) -> np.ndarray:
        """The value each Threshold condition reads, as ``interp`` holds it now."""
        thr = np.zeros(max(1, len(self.thresholds)), dtype=np.float64)
        for k, (nid, name, indices) in enumerate(self.thresholds):
            v = interp.threshold_value(nid, name)
            for i in indices or []:
                v = v[i]
            thr[k] = float(v)
        return thr

    # -- source ---------------------------------------------------------------------------
    def const(self, value: Any) -> str:
        """The name of a model value in the constant table (numbers as float64): generated
        source never holds model text (see :mod:`mdf_engine.generated_source`)."""
        if value is None:  # an attribute left at its default "not given"
            return "None"
        if isinstance(value, (bool, np.bool_)):
            return "True" if value else "False"
        if isinstance(value, (int, float, np.integer, np.floating)):
            return self.constants.number(float(value))
        if isinstance(value, str):
            return self.constants.text(value)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            if value.ndim == 0:
                return self.const(value.item())
            return self.constants.array(value)
        if isinstance(value, (list, tuple)) and all(isinstance(x, (int, float)) for x in value):
            return self.constants.array(np.array([float(x) for x in value]))
        raise NotCompilable(f"constant of type {type(value).__name__}")

    def literal(self, value: Any) -> str:
        """The name of an expression's literal (ints stay ints, for indexing)."""
        if value is None:
            return "None"
        if isinstance(value, str):
            return self.constants.text(value)
        return self.constants.number(value)

    def _kernel_global(self, var: str, helper: str, sch: Any, extra: str = "") -> None:
        """``var = helper(name, since, namespace[, extra])`` with the registry's strings from
        the constant table."""
        args = [
            self.constants.text(sch.name),
            self.constants.number(int(sch.since)),
            self.constants.text(sch.namespace),
        ]
        self.globals.append(f"{var} = {helper}({', '.join(args)}{extra})")

    def function(self, name: str) -> str:
        if name not in self.functions:
            sch = REGISTRY.lookup(name)
            if sch.jit is None:
                raise NotCompilable(f"function '{name}' has no Numba kernel")
            var = f"F{len(self.functions)}"
            self.functions[name] = var
            self._kernel_global(var, "_jit", sch)
        return self.functions[name]

    def value(self, vp: ValuePlan, names: Mapping[str, str]) -> str:
        if vp.expr is None:
            return self.const(vp.const)

        def rename(n: str) -> str:
            if n not in names:
                raise NotCompilable(f"name '{n}' is not compiled")
            return names[n]

        where = vp.expr.where
        self._check_sequence_use(vp, names)
        tuples = self.tuple_of_var

        def index(value: str, indices: list[str]) -> str:
            if value in tuples:
                return self.tuple_item(tuples[value], indices, where)
            k = len(self.index_fields)
            self.index_fields.append(where)
            if len(indices) <= 2:
                return f"_ix{len(indices)}({value}, {', '.join(indices)}, {k}, q_c2, err)"
            checked = [
                f"_ck({i}, {value}.shape[{axis}], {k}, {axis}, q_c2, err)"
                for axis, i in enumerate(indices)
            ]
            return f"{value}[{', '.join(checked)}]"

        def checked(helper: str, operands: list[str]) -> str:
            if helper in ("_floordiv", "_mod", "_ipow"):  # no error: numpy's float64 answers
                return f"{helper}({', '.join(operands)})"
            k = len(self.index_fields)
            self.index_fields.append(where)
            return f"{helper}({', '.join(operands)}, {k}, q_c2, err)"

        src = to_source(vp.expr, rename, self.function, self.literal, index, checked)
        if src not in tuples and _TUPLE_VAR.search(src):
            raise NotCompilable(
                f"{where}: a tuple of values of mixed shapes is used other than by a constant index"
            )
        return src

    def stacked(self, vp: ValuePlan, names: Mapping[str, str]) -> str | None:
        """``np.stack((a1, a2))`` for a list or tuple expression of names of arrays of one
        shape (``np.array`` of arrays does not compile), else None."""
        node = vp.expr.tree.body if vp.expr is not None else None
        if (
            not isinstance(node, (ast.List, ast.Tuple))
            or not node.elts
            or not all(isinstance(e, ast.Name) for e in node.elts)
        ):
            return None
        slots = [self.slot_of_var.get(names.get(e.id, "")) for e in node.elts]
        if any(s is None or s.kind != "a" or s.seq or s.shape != slots[0].shape for s in slots):
            return None
        return "np.stack((" + "".join(f"{s.var}, " for s in slots) + "))"

    @functools.cached_property
    def tuple_of_var(self) -> dict[str, Slot]:
        """The tuple slot behind each ``T<k>`` name."""
        return {s.var: s for s in self.slots.values() if s.kind == "t"}

    def tuple_item(self, slot: Slot, indices: list[str], where: str) -> str:
        """The variable of item ``indices[0]`` of a tuple slot: the index must be a constant
        integer (the items have different shapes, so their place is fixed at compile time)."""
        name = indices[0]
        value = self.constants.values[int(name[1:])] if re.fullmatch(r"c\d+", name) else None
        if len(indices) != 1 or type(value) is not int:
            raise NotCompilable(
                f"{where}: a tuple of values of mixed shapes is indexed by "
                "something other than a constant integer"
            )
        n = len(slot.parts)
        if not -n <= value < n:
            raise NotCompilable(f"{where}: index {value} of a tuple of {n} items")
        return slot.parts[value].var

    def _check_sequence_use(self, vp: ValuePlan, names: Mapping[str, str]) -> None:
        """A list held as an array may only be indexed, passed to a function or copied whole:
        in arithmetic a list concatenates or repeats where an array computes."""
        seqs = {v for v, s in self.slot_of_var.items() if s.seq and s.kind == "a"}
        if not seqs:
            return
        tree = vp.expr.tree.body
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                if (
                    isinstance(child, ast.Name)
                    and names.get(child.id) in seqs
                    and not (
                        (isinstance(node, ast.Subscript) and child is node.value)
                        or (isinstance(node, ast.Call) and child in node.args)
                    )
                ):
                    raise NotCompilable(
                        f"{vp.expr.where}: the {child.id!r} sequence is used "
                        "in an operation that differs for lists and arrays"
                    )

    def seq_assign(
        self, slot: Slot, vp: ValuePlan | None, names: Mapping[str, str], ind: str
    ) -> list[str] | None:
        """Code giving a sequence slot (a tuple slot, or an array slot holding a list) the
        value of a list or tuple expression ``[x, y, ...]`` item by item; None for any other
        slot or value."""
        if vp is None or vp.expr is None or not (slot.seq or slot.kind == "t"):
            return None
        node = vp.expr.tree.body
        n = len(slot.parts) if slot.kind == "t" else slot.shape[0]
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) != n:
            return None
        out = []
        for k, elt in enumerate(node.elts):
            item = ValuePlan(expr=dataclasses.replace(vp.expr, tree=ast.Expression(body=elt)))
            if slot.kind == "t":
                part = slot.parts[k]
                lines = self.seq_assign(part, item, names, ind)
                out += (
                    lines
                    if lines is not None
                    else [self.assign(part, self.value(item, names), ind)]
                )
            elif len(slot.shape) == 1:
                out.append(f"{ind}{slot.var}[{k}] = _scalar({self.value(item, names)})")
            else:
                shape = tuple(slot.shape[1:])
                element = self.element_value(item, names, shape)
                if element is None:
                    out.append(f"{ind}{slot.var}[{k}][...] = {self.value(item, names)}")
                else:  # item by item, element by element (no temporary arrays)
                    out += [
                        f"{ind}for i_ in range({int(np.prod(shape))}):",
                        f"{ind}    {_flat(f'{slot.var}[{k}]', shape)}[i_] = float({element})",
                    ]
        return out

    def call(
        self,
        cp: CallPlan,
        names: Mapping[str, str],
        out: list[str],
        ind: str,
        tag: str,
        slot: Slot | None = None,
        fuse: bool = True,
    ) -> str | None:
        """Code computing a call's value (argument temporaries appended to ``out``); ``slot``
        is where the value goes, whose kind a function without a Numba kernel must return.
        None when the code appended to ``out`` already wrote the value into ``slot`` (a
        sequence item by item, or element-wise when ``fuse``)."""
        fused = self.call_elementwise(cp, names, slot, ind) if fuse else None
        if fused is not None:
            out += fused
            return None
        local = dict(names)
        for k, (argname, vp) in enumerate(cp.args):
            t = f"t_{tag}_{k}"
            axes = _constant_axes(cp, argname, vp)
            src = (
                self.value(vp, local)
                if axes is None
                else "(" + "".join(f"{self.literal(a)}, " for a in axes) + ")"
            )
            src = self.stacked(vp, local) or src
            if (
                axes is None
                and cp.schema is not None
                and cp.schema.namespace in _DTYPE_AWARE
                and vp.expr is None
                and isinstance(vp.const, (int, np.integer))
                and not isinstance(vp.const, (bool, np.bool_))
            ):
                src = self.literal(int(vp.const))  # an integer attribute stays an integer
            if src in self.tuple_of_var:  # a tuple is its items' variables: no copy
                local[argname] = src
                continue
            out.append(f"{ind}{t} = {src}")
            local[argname] = t
        if cp.schema is None:
            lines = self.seq_assign(slot, cp.value, local, ind) if slot is not None else None
            if lines is not None:
                out += lines
                return None
            return self.value(cp.value, local)
        fn = self.function_schema(cp) if cp.schema.jit is not None else None
        args = [local[n] if n is not None else "None" for n in cp.input_names]
        if not cp.schema.variadic:  # trailing optional inputs that were not given
            args += ["None"] * (len(cp.schema.inputs) - len(args))
        # attributes go positionally in the schema's order, defaults for those not given
        unknown = [n for n in cp.attribute_names if n not in cp.schema.attributes]
        if unknown:
            raise NotCompilable(f"function '{cp.schema.name}' has no attribute '{unknown[0]}'")
        aware = cp.schema.namespace in _DTYPE_AWARE  # (whose kernels type ints as literals)
        args += [
            local[a]
            if a in cp.attribute_names
            else self.literal(default)
            if aware and type(default) is int
            else self.const(default)
            for a, default in cp.schema.attributes.items()
        ]
        if fn is None:
            return self.python_call(cp, args, out, ind, tag, slot)
        return f"{fn}({', '.join(args)})"

    def python_call(
        self, cp: CallPlan, args: list[str], out: list[str], ind: str, tag: str, slot: Slot | None
    ) -> str:
        """A function without a Numba kernel, called through Python from the compiled loop
        (Numba's object mode) with the kind of value its slot had in the warm-up."""
        sch = cp.schema
        # one value: a one-output function, or the first output of one whose others the
        # model does not use (MaxPool's Indices, BatchNormalization's running statistics)
        first_only = cp.outputs_wanted == 1 and not cp.keep_tuple
        if (
            slot is None
            or not first_only
            and (sch.extra.get("skips_outputs") or len(sch.outputs) != 1)
        ):
            why = (
                f"{len(sch.outputs)} outputs"
                if len(sch.outputs) != 1
                else "optional outputs"
                if sch.extra.get("skips_outputs")
                else "a value of no fixed kind"
            )
            raise NotCompilable(
                f"function '{sch.name}' has no Numba kernel, and a call "
                f"through Python with {why} is not compiled"
            )
        shape = None if slot.kind == "s" else tuple(slot.shape)
        key = (sch.name, sch.since, sch.namespace, shape)
        if key not in self.python_functions:
            var = f"PY{len(self.python_functions)}"
            self.python_functions[key] = var
            shape_src = (
                "None" if shape is None else "(" + "".join(f"{int(d)}, " for d in shape) + ")"
            )
            self._kernel_global(var, "_python_kernel", sch, f", {shape_src}")
            self.functions[f"{sch.name}@{sch.since}@{sch.namespace}@python"] = var
        var = self.python_functions[key]
        if shape is None:
            typ = "float64"
        else:
            typ = "float64[" + ", ".join([":"] * (len(shape) - 1) + ["::1"]) + "]"
        res = f"r_{tag}"
        out += [f"{ind}with objmode({res}={typ!r}):", f"{ind}    {res} = {var}({', '.join(args)})"]
        return res

    def function_schema(self, cp: CallPlan) -> str:
        sch = cp.schema
        key = f"{sch.name}@{sch.since}@{sch.namespace}"
        if key not in self.functions:  # (call() sends functions without a kernel elsewhere)
            var = f"F{len(self.functions)}"
            self.functions[key] = var
            self._kernel_global(var, "_jit", sch)
        return self.functions[key]

    @functools.cached_property
    def slot_of_var(self) -> dict[str, Slot]:
        """The slot behind each variable name of the generated code (read once every slot is
        allocated)."""
        return {s.var: s for s in self.slots.values()}

    def element(
        self,
        names: Mapping[str, str],
        shape: tuple[int, ...],
        inline: Mapping[str, tuple[ValuePlan, dict]] | None = None,
    ) -> Callable[[str], str | None]:
        """One element of a name's value, for code that loops over the elements of an array
        of ``shape``: ``a3[i_]`` for an array of that shape (of its C-order flat view when it
        has more than one axis), the variable for a scalar, the parenthesised element of an
        ``inline`` argument's value; None for anything else."""
        by_var = self.slot_of_var

        def element(name: str) -> str | None:
            if inline and name in inline:
                vp, earlier = inline[name]
                src = self.element_value(vp, names, shape, earlier)
                return None if src is None else f"({src})"
            var = names.get(name)
            slot = by_var.get(var) if var is not None else None
            if slot is None:
                return var if var is not None and _NUMBER.match(var) else None
            if slot.kind == "t" or slot.seq:  # (a list computes as a list, not element-wise)
                return None
            if slot.kind == "s":
                return var
            return f"{_flat(var, shape)}[i_]" if tuple(slot.shape) == shape else None

        return element

    def element_value(
        self,
        vp: ValuePlan,
        names: Mapping[str, str],
        shape: tuple[int, ...],
        inline: Mapping[str, tuple[ValuePlan, dict]] | None = None,
    ) -> str | None:
        """Source of one element of ``vp``'s value (see :meth:`element`), or None when it is
        not an element-wise expression over scalars and arrays of ``shape``."""
        if vp.expr is None:
            c = np.asarray(vp.const)
            if c.dtype.kind not in "biuf":
                return None
            if c.ndim == 0:
                return self.const(c.item())
            return f"{_flat(self.const(c), shape)}[i_]" if c.shape == shape else None
        return to_element_source(vp.expr, self.element(names, shape, inline), self.literal)

    def call_elementwise(
        self, cp: CallPlan, names: Mapping[str, str], slot: Slot | None, ind: str
    ) -> list[str] | None:
        """A function given by a ``value`` over its arguments, computed one element of its
        array slot at a time with the arguments' element-wise values inlined (no temporary
        arrays: PsyNeuLink's (1, 1) arrays); None when it is not element-wise."""
        if (
            cp.schema is not None
            or slot is None
            or slot.kind != "a"
            or slot.seq
            or cp.value is None
            or cp.value.expr is None
        ):
            return None
        inline: dict[str, tuple[ValuePlan, dict]] = {}
        for argname, vp in cp.args:  # an argument sees the arguments before it
            inline[argname] = (vp, dict(inline))
        value = self.element_value(cp.value, names, tuple(slot.shape), inline)
        return None if value is None else self.element_loop(slot, value, [], ind)

    def element_loop(
        self, slot: Slot, value: str, conditions: list[tuple[str, str]], ind: str
    ) -> list[str]:
        """A loop writing one element of ``slot`` at a time: ``value``, replaced by the value of
        each condition whose test holds, in order (tests and values read the slot's old
        element: each element is written after it was read, and only by its own step).
        Instead of a whole-array expression, it allocates no temporary arrays."""
        size = int(np.prod(slot.shape))
        out = [f"{ind}for i_ in range({size}):", f"{ind}    e_ = float({value})"]
        for test, val in conditions:
            out += [f"{ind}    if {test}:", f"{ind}        e_ = float({val})"]
        return out + [f"{ind}    {_flat(slot.var, tuple(slot.shape))}[i_] = e_"]

    def assign_value(
        self, slot: Slot, vp: ValuePlan, names: Mapping[str, str], ind: str
    ) -> list[str]:
        """Code giving ``slot`` the value of ``vp``: element by element when it is an
        element-wise expression over a 1-D array slot, a matrix product written straight into
        the slot, else as a whole."""
        lines = self.seq_assign(slot, vp, names, ind)
        if lines is not None:
            return lines
        if slot.kind == "a" and vp.expr is not None and not vp.expr.is_bare_name():
            element = self.element_value(vp, names, tuple(slot.shape))
            if element is not None:
                return self.element_loop(slot, element, [], ind)
            product = self.matmul_into(slot, vp, names)
            if product is not None:
                return [f"{ind}{product}"]
        return [self.assign(slot, self.value(vp, names), ind)]

    def matmul_into(self, slot: Slot, vp: ValuePlan, names: Mapping[str, str]) -> str | None:
        """``np.dot(a, b, slot)`` for a value ``a @ b`` of a matrix and a vector or matrix whose
        product has the slot's shape and which are not the slot itself (BLAS writes the
        result in place, without a temporary); None otherwise."""
        operands = vp.expr.matmul_operands() if vp.expr is not None else None
        if operands is None:
            return None
        a, b = (self.slot_of_var.get(names.get(n, "")) for n in operands)
        if (
            a is None
            or b is None
            or a.kind != "a"
            or b.kind != "a"
            or slot.var in (a.var, b.var)
            or len(a.shape) != 2
            or len(b.shape) not in (1, 2)
            or a.shape[1] != b.shape[0]
            or (a.shape[0], *b.shape[1:]) != tuple(slot.shape)
        ):
            return None
        return f"np.dot({a.var}, {b.var}, {slot.var})"

    def fused_parameter(
        self, nid: str, pp: ParameterPlan, slot: Slot, names: dict[str, str], ind: str
    ) -> list[str] | None:
        """A 1-D array parameter whose value (or Euler step) and conditions are element-wise,
        updated element by element in place; None when it is not such a parameter."""
        if (
            slot.kind != "a"
            or len(slot.shape) != 1
            or (nid, pp.id) in self.swept
            or pp.call is not None
        ):
            return None
        shape = tuple(slot.shape)
        conditions = []
        for _cid, test, val in pp.conditions:
            t, v = self.element_value(test, names, shape), self.element_value(val, names, shape)
            if t is None or v is None:
                return None
            conditions.append((t, v))
        if pp.value is not None and pp.value.expr is not None:
            value = self.element_value(pp.value, names, shape)
            return None if value is None else self.element_loop(slot, value, conditions, ind)
        if pp.value is None and pp.derivative is not None and pp.initial is not None:
            d = self.element_value(pp.derivative, names, shape)
            first = self.element_value(pp.initial, names, shape)
            if d is None or first is None:
                return None
            return [
                f"{ind}if has_dt:",
                *self.element_loop(slot, f"{slot.var}[i_] + ({d}) * dt", conditions, ind + "    "),
                f"{ind}else:",
                *self.element_loop(slot, first, conditions, ind + "    "),
            ]
        return None

    def assign(self, slot: Slot, expr: str, ind: str) -> str:
        if slot.kind == "t" or expr in self.tuple_of_var:
            src = self.tuple_of_var.get(expr)
            if slot.kind != "t" or src is None or len(src.parts) != len(slot.parts):
                raise NotCompilable(
                    "a tuple of values of mixed shapes is assigned to a value of another kind"
                )
            return "\n".join(self.assign(d, s.var, ind) for d, s in zip(slot.parts, src.parts))
        if slot.kind == "s":
            return f"{ind}{slot.var} = _scalar({expr})"
        return f"{ind}{slot.var}[...] = {expr}"

    def node_body(self, nid: str, ind: str) -> list[str]:
        np_ = self.plan.nodes[nid]
        i = self.node_index[nid]
        out = [f"{ind}# node {i}"]
        for ep in self.plan.incoming[nid]:
            s = self.node_index[ep.sender]
            sender = self.slots[(ep.sender, "out:" + ep.sender_port)]
            src = sender.var
            if getattr(ep, "matrix", None) is not None:  # a PsyNeuLink projection
                m = np.asarray(ep.matrix, dtype=float)
                if (
                    sender.kind != "a"
                    or sender.seq
                    or len(sender.shape) not in (1, 2)
                    or m.ndim != 2
                    or sender.shape[-1] != m.shape[0]
                ):
                    raise NotCompilable(
                        f"edge '{ep.id}': its projection matrix does not "
                        "compile for this sender value"
                    )
                src = f"np.dot({src}, {self.const(m)})"
            val = f"{self.const(ep.weight)} * {src}" if ep.has_weight else src
            out.append(f"{ind}if q_ev{s}:")
            out += self.set_input(nid, ep.receiver_port, val, ind + "    ")
        names: dict[str, str] = {}
        for ip in np_.inputs:
            slot, pend = self.slots[(nid, ip.id)], self.slots[(nid, "pend:" + ip.id)]
            flag = self.slots[(nid, "flag:" + ip.id)].var
            out.append(f"{ind}if {flag} != 0.0:")
            out.append(self.assign(slot, pend.var, ind + "    "))
            out.append(f"{ind}else:")
            out.append(self.assign(slot, self.const(self.fallback(ip, slot)), ind + "    "))
            out.append(f"{ind}{flag} = 0.0")
            names[ip.id] = slot.var
        for pp in np_.parameters:
            names[pp.id] = self.slots[(nid, pp.id)].var
        for pp in np_.parameters:
            out += self.first_value(nid, pp, names, ind)
        for k, (fid, cp) in enumerate(np_.functions):
            slot = self.slots[(nid, fid)]
            expr = self.call(cp, names, out, ind, f"{i}_{k}", slot)
            if expr is not None:  # (None: the call wrote a sequence into its slot)
                out.append(self.assign(slot, expr, ind))
            names[fid] = slot.var
        for pp in np_.parameters:
            out += self.parameter(nid, i, pp, names, ind)
        for oid, vp in np_.outputs:
            out += self.assign_value(self.slots[(nid, "out:" + oid)], vp, names, ind)
        for k, (tn, name, indices) in enumerate(self.thresholds):
            if tn != nid:
                continue
            key = (nid, name) if (nid, name) in self.slots else (nid, "out:" + name)
            v = self.slots[key].var
            for idx in indices or []:
                v += f"[{int(idx)}]"
            out.append(f"{ind}q_th{k} = _scalar({v})")
        if self.cg.check_finite:
            checked = [("parameter", pp.id, self.slots[(nid, pp.id)]) for pp in np_.parameters]
            checked += [("output port", o, self.slots[(nid, "out:" + o)]) for o, _ in np_.outputs]
            for kind, name, slot in checked:
                k = len(self.finite_checks)
                self.finite_checks.append((kind, name))
                out.append(f"{ind}if err[0] == 0 and not np.all(np.isfinite({slot.var})):")
                out.append(f"{ind}    err[0] = 1; err[1] = {i}; err[2] = q_c2; err[3] = {k}")
        out.append(f"{ind}q_ev{i} = True")
        return out

    def fallback(self, ip: Any, slot: Slot) -> Any:
        """An unset port's value, in the kind of its slot (a size-1 array read by a scalar
        slot is its one element; a scalar read by an array slot fills the shape)."""
        fb = np.asarray(ip.fallback(), dtype=float)
        if slot.kind == "s":
            if fb.size != 1:
                raise NotCompilable(
                    f"input port '{ip.id}' default has shape {fb.shape} but receives scalars"
                )
            return fb.reshape(()).item()
        if fb.shape == slot.shape:
            return fb
        if fb.size == 1:
            return np.full(slot.shape, fb.reshape(()).item())
        if fb.size == int(np.prod(slot.shape)):  # PsyNeuLink's (2,) default of (1, 2) values
            return fb.reshape(slot.shape)
        raise NotCompilable(
            f"input port '{ip.id}' default has shape {fb.shape}, values {slot.shape}"
        )

    def set_input(self, nid: str, port: str, val: str, ind: str) -> list[str]:
        ip = next(p for p in self.plan.nodes[nid].inputs if p.id == port)
        pend = self.slots[(nid, "pend:" + port)]
        flag = self.slots[(nid, "flag:" + port)].var
        if ip.reduce == "overwrite":
            return [self.assign(pend, val, ind), f"{ind}{flag} = 1.0"]
        op = "+" if ip.reduce == "add" else "*"
        return [
            f"{ind}if {flag} != 0.0:",
            self.assign(pend, f"{pend.var} {op} {val}", ind + "    "),
            f"{ind}else:",
            self.assign(pend, val, ind + "    "),
            f"{ind}{flag} = 1.0",
        ]

    def first_value(
        self, nid: str, pp: ParameterPlan, names: dict[str, str], ind: str
    ) -> list[str]:
        """Code giving a never-evaluated parameter its first current value (the reference's
        get_current_value): the initial value of a stateful one (or 0), else its value with
        its own name read as 0."""
        if pp.value is None and pp.initial is None:
            return []
        slot = self.slots[(nid, pp.id)]
        flag = self.slots[(nid, "unset:" + pp.id)].var
        if (nid, pp.id) in self.swept:
            expr = f"P[{self.swept[(nid, pp.id)]}]"
        elif pp.stateful:
            expr = self.value(pp.initial, names) if pp.initial is not None else "0.0"
        else:
            own = {**names, pp.id: "0.0"}
            lines = self.seq_assign(slot, pp.value, own, ind + "    ")
            if lines is not None:
                return [f"{ind}if {flag} != 0.0:", *lines]
            expr = self.value(pp.value, own)
        return [f"{ind}if {flag} != 0.0:", self.assign(slot, expr, ind + "    ")]

    def parameter(
        self, nid: str, i: int, pp: ParameterPlan, names: dict[str, str], ind: str
    ) -> list[str]:
        slot = self.slots[(nid, pp.id)]
        out: list[str] = []
        node = self.plan.nodes[nid]
        tmp = f"p_{i}_{node.parameters.index(pp)}"
        swept = self.swept.get((nid, pp.id))
        unset = self.slots[(nid, "unset:" + pp.id)].var
        if (
            swept is None
            and pp.value is not None
            and pp.value.expr is None
            and not pp.conditions
            and not pp.stateful
        ):
            # a constant: its slot holds it from the first evaluation on (first_value)
            return [f"{ind}{unset} = 0.0"]
        fused = self.fused_parameter(nid, pp, slot, names, ind)
        if (
            fused is None
            and swept is None
            and not pp.conditions
            and pp.value is not None
            and slot.kind == "a"
        ):
            product = self.matmul_into(slot, pp.value, names)
            fused = [f"{ind}{product}"] if product is not None else None
        if fused is None and swept is None and not pp.conditions:
            fused = self.seq_assign(slot, pp.value, names, ind)
        if fused is not None:
            return [*fused, f"{ind}{unset} = 0.0"]
        if swept is not None and not pp.stateful and pp.derivative is None:
            out.append(f"{ind}{tmp} = P[{swept}]")
        elif pp.value is not None:
            out.append(f"{ind}{tmp} = {self.value(pp.value, names)}")
        elif pp.call is not None:
            expr = self.call(
                pp.call,
                names,
                out,
                ind,
                f"{i}_{len(node.functions) + node.parameters.index(pp)}",
                slot,
                fuse=not pp.conditions,
            )
            if expr is None:
                if pp.conditions:
                    raise NotCompilable(f"parameter {nid}.{pp.id}: a sequence with conditions")
                return [*out, f"{ind}{unset} = 0.0"]
            out.append(f"{ind}{tmp} = {expr}")
        elif pp.derivative is not None:
            if pp.initial is None:
                raise NotCompilable(
                    f"parameter {nid}.{pp.id} has a time_derivative but no default_initial_value"
                )
            out.append(f"{ind}if has_dt:")
            out.append(f"{ind}    {tmp} = {slot.var} + ({self.value(pp.derivative, names)}) * dt")
            out.append(f"{ind}else:")
            first = f"P[{swept}]" if swept is not None else self.value(pp.initial, names)
            out.append(f"{ind}    {tmp} = {first}")
        elif pp.conditions:
            # set only by its conditions: the previous value, 0 before the first evaluation
            # (the reference: None, then 0.0 under the first condition)
            out.append(f"{ind}if {unset} != 0.0:")
            out.append(f"{ind}    {tmp} = 0.0 * {slot.var}")
            out.append(f"{ind}else:")
            out.append(f"{ind}    {tmp} = {slot.var}")
        else:
            raise NotCompilable(f"parameter {nid}.{pp.id} has only a default_initial_value")
        for k, (_cid, test, val) in enumerate(pp.conditions):
            out.append(
                f"{ind}{tmp} = _where({self.value(test, names)}, "
                f"{self.value(val, names)}, {tmp})  # condition {k}"
            )
        out.append(self.assign(slot, tmp, ind))
        out.append(f"{ind}{unset} = 0.0")
        return out

    def source(self) -> str:
        if self.node_by_node is not None:
            return self.module_source([], [], [])
        init_keys = sorted(self.initializer)
        init_args = [f"I{k}" for k in range(len(init_keys))]
        sig = [
            "nsteps",
            "dt",
            "dt_given",
            "first_without_dt",
            "S",
            *[f"a{k}" for k in range(len(self.arrays))],
            "useable",
            "total",
            "clock",
            "last_set",
            "ever",
            "thr",
            "logbuf",
            "logpos",
            "err",
            "P",
            "rec",
            *init_args,
        ]
        body: list[str] = []
        ind = "    "
        for slot in self.slots.values():
            if slot.kind == "s":
                body.append(f"{ind}{slot.var} = S[{slot.index}]")
        body += self.sched.load(ind)
        body.append(f"{ind}for step in range(nsteps):")
        ind2 = ind * 2
        body.append(f"{ind2}has_dt = dt_given and not (step == 0 and first_without_dt)")
        for k, key in enumerate(init_keys):
            targets = self._initializer_targets(key)
            for nid, port in targets:
                body += self.set_input(nid, port, init_args[k], ind2)
        if self.static is not None:
            body += self.static_step(self.static, ind2)
        else:
            body += self.scheduled_step(ind2)
        body.append(f"{ind2}q_c2 += 1")
        if self.record_columns:
            # (rec keeps the last rec.shape[0] steps: a sweep of final values passes one row)
            body.append(f"{ind2}q_rec = step - nsteps + rec.shape[0]")
            body.append(f"{ind2}if q_rec >= 0:")
            for (_nid, _name, col, _shape), slot in zip(self.record_columns, self.record_slots):
                if slot.kind == "s":
                    body.append(f"{ind2}    rec[q_rec, {col}] = {slot.var}")
                else:
                    size = int(np.prod(slot.shape))
                    body.append(
                        f"{ind2}    rec[q_rec, {col}:{col + size}] = "
                        f"np.ascontiguousarray({slot.var}).reshape({size})"
                    )
        body += self.write_back(ind)
        return self.module_source(sig, body, init_args)

    def static_schedule(self) -> list[list[int]] | None:
        """The fixed order of one update when every node runs under ``Always`` (or after one
        call of a node of an earlier consideration set) and the update ends when all have run
        (graph-scheduler's defaults): one time step per consideration set. None when the
        conditions make the order depend on the run."""
        ints, _floats, children = self.table.arrays()
        starts, qnodes = self.queue
        set_of = {
            int(qnodes[k]): q
            for q in range(len(starts) - 1)
            for k in range(starts[q], starts[q + 1])
        }
        for owner, r in enumerate(self.roots):
            row = ints[r]
            if row[0] == 0:
                continue  # Always
            # EveryNCalls(dep, 1) on a node of an earlier consideration set: dep has run once
            # in this update by the time the owner's set is considered, every update
            if (
                row[0] == 5
                and row[3] == 1
                and set_of.get(int(row[1]), 1 << 30) < set_of.get(owner, -1)
            ):
                continue
            return None
        t = ints[self.term]
        kids = {int(-1 - children[t[4] + k]) for k in range(t[5])}
        if t[0] != 10 or t[2] != 1 or kids != set(range(len(self.cg.node_ids))):
            return None
        return [
            sorted(int(m) for m in qnodes[starts[q] : starts[q + 1]])
            for q in range(len(starts) - 1)
        ]

    def static_step(self, sets: list[list[int]], ind: str) -> list[str]:
        """One update of a graph with a fixed schedule, with no condition evaluated (and no
        log: :meth:`CompiledGraph._expand_static_log` writes it from the update count)."""
        out = [f"{ind}q_c0 = 1", f"{ind}q_c1 += 1"]
        for members in sets:
            for m in members:
                indexed = len(self.index_fields)
                out += self.node_body(self.cg.node_ids[m], ind)
                if self.cg.check_finite or len(self.index_fields) > indexed:
                    out.append(f"{ind}if err[0] != 0:")
                    out += self.write_back(ind + "    ")
                    out.append(f"{ind}    return")
        return out

    def write_back(self, ind: str) -> list[str]:
        """Code storing the scalar and scheduler locals into the state arrays (before every
        return)."""
        return [
            f"{ind}S[{slot.index}] = {slot.var}" for slot in self.slots.values() if slot.kind == "s"
        ] + self.sched.store(ind)

    def scheduled_step(self, ind2: str) -> list[str]:
        """One update run by graph-scheduler's algorithm, written out by
        :class:`~mdf_engine.schedulers.codegen.SchedulerSource` with every node's body."""

        def body(m: int, ind: str) -> list[str]:
            indexed = len(self.index_fields)
            out = self.node_body(self.cg.node_ids[m], ind)
            if self.cg.check_finite or len(self.index_fields) > indexed:
                out += [f"{ind}if err[0] != 0:", *self.write_back(ind + "    "), f"{ind}    return"]
            return out

        def give_up(ind: str) -> list[str]:
            return [*self.write_back(ind), f"{ind}return"]

        return self.sched.update(body, give_up, MAX_PASSES_PER_UPDATE, ind2)

    def module_source(self, sig: list[str], body: list[str], init_args: list[str]) -> str:
        header = [
            '"""Generated by mdf_engine.compiler for one MDF graph. Do not edit."""',
            "import math",
            "import numpy as np",
            "from numba import njit, prange",
            "from numba import objmode",
            "from mdf_engine.compiled_helpers import _ck, _floordiv, _iadd, _imul, _int, _ipow, _isub, "
            "_ix1, _ix2, _mod, _scalar, _where",
            "from mdf_engine.compiler import _jit, _python_kernel",
        ]
        # globals are collected while the body is generated; the digest of the code the
        # generated function calls is part of the source, so a changed kernel gets new code
        # (Numba's cache of a caller does not notice changes in the functions it calls)
        header.insert(1, f"# kernels: {self.kernel_digest()}")
        if self.node_by_node is not None:
            functions = self.node_functions_source()
            return self._finish(header, functions)
        run = [
            "",
            "",
            "@njit(cache=True, error_model='numpy')",
            f"def run({', '.join(sig)}):",
            *body,
            "",
        ]
        # without the time-step log (long runs, sweeps): the same code with the log switched
        # off where Numba can see it; compiled only when first called
        quiet = [
            ln.replace("q_log = logpos[1] == 1", "q_log = False").replace(
                "def run(", "def run_quiet("
            )
            for ln in run
        ]
        return self._finish(header, run + quiet + self.batch_source(init_args))

    def _finish(self, header: list[str], functions: list[str]) -> str:
        """The module: header, the constant table's names, kernel globals, ``functions``;
        checked to hold nothing but what the engine makes."""
        # the table's digest is part of the source: a module file (named by the source's
        # hash) and Numba's cache of it belong to one table
        lines = [
            *header[:2],
            f"# constants: {self.constants.digest()}",
            *header[2:],
            *self.constants.header(),
            *self.globals,
            *functions,
            "",
        ]
        source = "\n".join(lines)
        check_source(source)
        return source

    def node_functions_source(self) -> list[str]:
        """Node by node (the schedule stays with graph-scheduler): ``node_<i>(dt, has_dt, S,
        a0.., ever, err, P, q_c2)`` runs node ``i`` on the compiled state; ``inputs(S, a0..,
        I0..)`` delivers the initializer."""
        arrays = [f"a{k}" for k in range(len(self.arrays))]
        out: list[str] = []
        for i, nid in enumerate(self.cg.node_ids):
            sig = ["dt", "has_dt", "S", *arrays, "ever", "err", "P", "q_c2"]
            body = self.node_body(nid, "    ")
            out += [
                "",
                "",
                "@njit(cache=True, error_model='numpy')",
                f"def node_{i}({', '.join(sig)}):",
                *self._with_locals(body),
            ]
        body = []
        init_keys = sorted(self.initializer)
        for k, key in enumerate(init_keys):
            for nid, port in self._initializer_targets(key):
                body += self.set_input(nid, port, f"I{k}", "    ")
        sig = ["S", *arrays, *[f"I{k}" for k in range(len(init_keys))]]
        out += [
            "",
            "",
            "@njit(cache=True, error_model='numpy')",
            f"def inputs({', '.join(sig)}):",
            *self._with_locals(body),
            "    return",
        ]
        return out

    @staticmethod
    def _with_locals(body: list[str]) -> list[str]:
        """``body`` with the scalar slots and ``ever`` flags it uses loaded into locals before
        and stored back after."""
        text = "\n".join(body)
        scalars = sorted({int(m) for m in re.findall(r"\bs(\d+)\b", text)})
        ever = sorted({int(m) for m in re.findall(r"\bq_ev(\d+)\b", text)})
        return (
            [f"    s{k} = S[{k}]" for k in scalars]
            + [f"    q_ev{m} = ever[{m}]" for m in ever]
            + body
            + [f"    S[{k}] = s{k}" for k in scalars]
            + [f"    ever[{m}] = q_ev{m}" for m in ever]
        )

    def kernel_digest(self) -> str:
        """A hash of the source files of the folders holding every jitted function this graph
        calls, and of the helpers every generated function uses."""
        from . import compiled_helpers

        files = {Path(__file__), Path(compiled_helpers.__file__)}
        for key in self.functions:
            name, _, rest = key.partition("@")
            since, _, namespace = rest.partition("@")
            namespace, _, python = namespace.partition("@")
            try:
                if python:
                    fn = _schema(name, int(since), namespace).kernel
                else:
                    fn = (
                        _jit(name, int(since), namespace or None)
                        if rest
                        else _jit(name, REGISTRY.lookup(name).since)
                    )
            except (NotCompilable, KeyError, ValueError, MDFError):
                continue
            module = sys.modules.get(getattr(getattr(fn, "py_func", fn), "__module__", ""))
            if module is not None and getattr(module, "__file__", None):
                # the whole family folder: kernels call helpers in sibling modules
                files.update(Path(module.__file__).parent.glob("*.py"))
        self.kernel_files = sorted(str(f) for f in files)
        return files_digest(self.kernel_files)

    def batch_source(self, init_args: list[str]) -> list[str]:
        """``run_batch``: ``run`` from a cold state once per row of the parameter table, the
        rows spread over threads (each row owns its state)."""
        n = len(self.cg.node_ids)
        arrays = [f"a{k}" for k in range(len(self.arrays))]
        sig = [
            "nsteps",
            "dt",
            "dt_given",
            "first_without_dt",
            "S0",
            *[f"{a}_0" for a in arrays],
            "thr0",
            "PT",
            "REC",
            "ERR",
            *init_args,
        ]
        ind, ind2 = "    ", "        "
        body = [f"{ind}for b in prange(PT.shape[0]):", f"{ind2}S = S0.copy()"]
        body += [f"{ind2}{a} = {a}_0.copy()" for a in arrays]
        body += [
            f"{ind2}useable = np.zeros(({n}, {n}), dtype=np.int64)",
            f"{ind2}total = np.zeros((3, {n}), dtype=np.int64)",
            f"{ind2}clock = np.zeros(7, dtype=np.int64)",
            f"{ind2}last_set = np.zeros({n}, dtype=np.bool_)",
            f"{ind2}ever = np.zeros({n}, dtype=np.bool_)",
            f"{ind2}thr = thr0.copy()",
            f"{ind2}logbuf = np.zeros(1, dtype=np.int64)",
            f"{ind2}logpos = np.zeros(2, dtype=np.int64)",
            f"{ind2}err = np.zeros({ERR_WIDTH}, dtype=np.int64)",
            f"{ind2}run_quiet(nsteps, dt, dt_given, first_without_dt, S, "
            f"{', '.join(arrays + [''])}"
            f"useable, total, clock, last_set, ever, thr, logbuf, logpos, err, PT[b], "
            f"REC[b], {', '.join(init_args + [''])})",
            f"{ind2}ERR[b, :] = err",
        ]
        return [
            "",
            "",
            "@njit(cache=True, parallel=True, error_model='numpy')",
            f"def run_batch({', '.join(sig)}):",
            *body,
            "",
        ]

    def _initializer_targets(self, key: str) -> list[tuple[str, str]]:
        by_id = [
            (nid, ip.id)
            for nid, np_ in self.plan.nodes.items()
            for ip in np_.inputs
            if ip.id == key
        ]
        if "." in key and not by_id:  # NODE.PORT, unless the key is a port id ('fc1.weight')
            nid, port = key.split(".", 1)
            return [(nid, port)]
        return by_id


# -- helpers the generated code imports --------------------------------------------------------


def _jit(name: str, since: int, namespace: str | None = None):
    """The Numba kernel of a registered function version (name, since and origin)."""
    for sch in REGISTRY.versions(name):
        if (
            sch.since == since
            and sch.jit is not None
            and (namespace is None or sch.namespace == namespace)
        ):
            return sch.jit
    raise NotCompilable(f"function '{name}' has no Numba kernel")


def _schema(name: str, since: int, namespace: str):
    for sch in REGISTRY.versions(name):
        if sch.since == since and sch.namespace == namespace:
            return sch
    raise NotCompilable(f"function '{name}' (since {since}) is not registered")


class WarmupStopped(NotCompilable):
    """The interpreted warm-up of a graph raised an MDFError (the run itself may stop before
    the step that failed, so the graph runs interpreted)."""


class PythonCallFailed(MDFError):
    """A function called through Python from the compiled loop failed there, or returned
    another kind of value than in the warm-up."""


def _python_kernel(name: str, since: int, namespace: str, shape: tuple[int, ...] | None):
    """A registered function's Python kernel as the compiled loop calls it (object mode):
    positional inputs then attributes in schema order in, a float64 value of the kind the
    warm-up saw out (a float for ``shape`` None, else a C-contiguous array of ``shape``)."""
    sch = _schema(name, since, namespace)
    n_attrs = len(sch.attributes)

    def call(*args: Any) -> Any:
        cut = len(args) - n_attrs
        attrs = dict(zip(sch.attributes, args[cut:]))
        try:
            value = np.asarray(sch.call(list(args[:cut]), attrs)[0], dtype=np.float64)
        except Exception as e:  # noqa: BLE001 - e.g. an attribute it cannot take as a float
            raise PythonCallFailed(
                f"{name} failed in the compiled backend ({type(e).__name__}: "
                f"{e}); use backend='interpreted'"
            ) from e
        if shape is None:
            if value.size != 1:
                raise PythonCallFailed(
                    f"{name} returned shape {value.shape} where the compiled "
                    "backend expects a number; use backend='interpreted'"
                )
            return float(value.reshape(-1)[0])
        if value.shape != shape:
            raise PythonCallFailed(
                f"{name} returned shape {value.shape}, not {shape} as in the "
                "compiled backend's warm-up; use backend='interpreted'"
            )
        return np.ascontiguousarray(value)

    return call
