"""The public way to run a model: ``Simulation(model).run(steps=N, dt=DT)``.

``run(steps=N, dt=DT)`` is exactly N calls of the reference ``evaluate()``: the first without a
time increment (which initialises every ``time_derivative`` state), the rest with ``dt``. With
``dt=None`` every call is made without a time increment. ``duration=T`` gives the steps of the
reference scripts' loop ``t = 0; while t <= T: ...; t += dt``.

State: a simulation keeps its state between calls. A later ``run`` continues from where the last
call left it (every one of its steps gets ``dt``, as repeated ``evaluate(time_increment=dt)``
calls do), so ``run(steps=10)`` twice equals ``run(steps=20)``; ``reset()`` returns to the
initial state (the next ``run`` starts with the initialising step again). ``set(...)`` changes
parameter values and resets.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import MDFError
from .limits import check_steps
from .loader import load
from .model import Model
from .plan import plan_graph
from .results import Results
from .run_arguments import check_dt, check_run_arguments

log = logging.getLogger("mdf_engine")

BACKENDS = ("auto", "interpreted", "compiled", "hexagon", "actr")
#: Under ``backend="auto"``, a first ``run`` of at least this many steps picks the compiled
#: backend (a first compile costs seconds, a cached one under a second); shorter runs and
#: step-by-step ``evaluate`` calls stay interpreted.
AUTO_COMPILE_STEPS = 5000


def name_file(error: MDFError, source: Any) -> MDFError:
    """``error`` with ``source`` (a model file) named in its message if it names no file yet:
    errors found while planning or running (an unknown condition type, an operator failing at
    run time, a --check-finite stop) are raised deep inside, where the file is not known."""
    from .extras import MissingExtra

    if isinstance(error, MissingExtra):  # about the installation, not the model
        return error
    if source and not error.source and isinstance(source, (str, os.PathLike)):
        error.source = str(source)
        error.args = (f"{source}: {error.args[0] if error.args else error.message}",)
    return error


@contextlib.contextmanager
def _naming(model: Any) -> Iterator[None]:
    try:
        yield
    except MDFError as e:
        raise name_file(e, getattr(model, "_source", None)) from None


def steps_for_duration(duration: float, dt: float) -> int:
    """How many evaluate() calls the reference loop ``t=0; while t<=T: ...; t+=dt`` makes
    (with the same float accumulation)."""
    from .limits import check_steps, steps_estimate

    check_steps(steps_estimate(duration, dt), f"a duration of {duration} with dt {dt}")
    n, t = 0, 0.0
    while t <= duration:
        n += 1
        t += dt
    return n


class Simulation:
    """A model (or file) ready to run on one graph with one backend.

    ``backend``: ``"interpreted"``, ``"compiled"`` or ``"auto"`` (the default), which picks
    the compiled backend when the first call is a ``run`` of at least
    :data:`AUTO_COMPILE_STEPS` steps and the interpreted one otherwise; ``backend`` then names
    the choice.

    ``scheduling_mode``: ``"standard"`` or ``"exact_time"`` (graph-scheduler's and
    PsyNeuLink's ``SchedulingMode.EXACT_TIME``: every node in one consideration set, each time
    step at its absolute time). An MDF file does not record the mode; PsyNeuLink runs made in
    exact time need it given here.

    After each :meth:`evaluate`, :attr:`time_steps` lists the sets of node ids run in each of
    its time steps, in order, and :attr:`time_step_times` each step's absolute time in ms (as
    graph-scheduler's clock has it: 0 throughout when no condition is in absolute time), to
    compare with graph-scheduler's or PsyNeuLink's ``execution_list`` and
    ``execution_timestamps``.

    ``seed``: see :mod:`mdf_engine.randomness`.

    ``schedule_log``: how many entries (one per node run, one per time step) of the schedule
    the compiled backend keeps for ``order_of_execution`` (the most recent ones; ``0``
    switches the log off; default ``backends.compiled.schedule_log.SCHEDULE_LOG``).

    Backends ``"hexagon"`` (the graph quantized onto hexagon:: ops) and ``"actr"`` (an ACT-R
    production system, one step per production cycle; ``"auto"`` picks it for a model that
    calls ``actr`` functions, and a run given no step count then runs until the goal is
    reached, at most ``max_cycles`` cycles; ``actr_inner="compiled"`` cycles the compiled
    graph, :mod:`mdf_engine.actr.compiled`): see :mod:`mdf_engine.backends`."""

    def __init__(
        self,
        model: Any,
        graph: str | None = None,
        backend: str = "auto",
        check_finite: bool = False,
        scheduling_mode: str = "standard",
        seed: int | None = None,
        schedule_log: int | None = None,
        max_cycles: int | None = None,
        actr_inner: str = "interpreted",
    ):
        self.model: Model = load(model)
        self.max_cycles = max_cycles
        if actr_inner not in ("interpreted", "compiled"):
            raise MDFError(f"unknown actr_inner '{actr_inner}' (choose interpreted or compiled)")
        #: the backend of the graph the actr backend cycles (its production-cycle kernels:
        #: "compiled")
        self.actr_inner = actr_inner
        #: seeds the stream of unseeded random operators when the simulation starts (and again
        #: after reset()), so runs are reproducible (see :mod:`mdf_engine.randomness`)
        self.seed = seed
        self.graph = self.model.get_graph(graph)
        if backend not in BACKENDS:
            raise MDFError(f"unknown backend '{backend}' (choose from {', '.join(BACKENDS)})")
        if backend == "auto" and _is_actr(self.model):
            backend = "actr"
        self.backend = backend
        self.check_finite = check_finite
        #: entries of the compiled backend's schedule log (None: its default; 0: off)
        self.schedule_log = schedule_log
        source = getattr(self.model, "_source", None)
        self.scheduling_mode = scheduling_mode
        self._last_steps: tuple[list[builtins.set[str]], list[float]] = ([], [])
        self._undecided = backend == "auto"
        self.runner: Any = None
        self._again: Any = None  # (the runner's replay of a repeated evaluate(), if it has one)
        cs = self.graph.conditions
        with _naming(self.model):
            self.plan = plan_graph(self.model, self.graph, source, scheduling_mode)
            if backend != "auto" or (cs is not None and (cs.node_specific or cs.termination)):
                # under "auto" a graph with conditions starts interpreted, which checks them
                # now; a first long run then switches to the compiled backend before anything
                # has run
                self._start("interpreted" if backend == "auto" else backend)
        self.time = 0.0
        self._warned_dt = False

    def _start(self, backend: str) -> None:
        """Create the graph runner of ``backend``."""
        from .backends import make_runner

        self.runner = make_runner(
            backend,
            self.plan,
            self.model,
            self.check_finite,
            self.max_cycles,
            self.schedule_log,
            actr_inner=self.actr_inner,
        )
        self._again = getattr(self.runner, "evaluate_again", None)

    def _reader(self) -> Any:
        """The runner, or (``auto`` before its first run) a graph that has not run."""
        if self.runner is not None:
            return self.runner
        from .interpreter import InterpretedGraph

        return InterpretedGraph(self.plan)

    def _decide(self, steps: int) -> None:
        """Under ``auto``, the first call picks the backend for the simulation's life."""
        if self._undecided:
            self._undecided = False
            self.backend = "compiled" if steps >= AUTO_COMPILE_STEPS else "interpreted"
            if self.backend == "compiled" or self.runner is None:
                self._start(self.backend)

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        """Return to the initial state: time 0, every state at its initial value, nothing
        recorded; the next ``run`` starts with the initialising step."""
        if self.runner is not None:
            self._start(self.backend)
        self.time = 0.0

    def set(self, values: Mapping[str, Any] | None = None, /, **params: Any) -> None:
        """Set parameter values, ``sim.set({"NODE.PARAM": value})`` (or ``NODE__PARAM=value``
        keywords), then :meth:`reset`. A constant parameter takes the value; a stateful one
        (``time_derivative``, ``default_initial_value``, a value referring to itself) takes it
        as its initial value; a parameter computed by a function cannot be set."""
        items = dict(values or {})
        items.update({k.replace("__", ".", 1): v for k, v in params.items()})
        source = getattr(self.model, "_source", None)
        self.model = copy.deepcopy(self.model)  # never change the caller's Model object
        if source is not None:
            self.model._source = source  # type: ignore[attr-defined]
        self.graph = self.model.get_graph(self.graph.id)
        for key, v in items.items():
            found = self.graph.node_port(key, ("parameters",))
            if len(found) > 1:
                raise MDFError(
                    f"set '{key}': ambiguous, it names {_either(found)}",
                    source=getattr(self.model, "_source", None),
                )
            node_id, pid = found[0] if found else (key, "")
            node = self.graph.get_node(node_id) if pid else None
            par = node.get("parameters", pid) if node is not None else None
            if par is None:
                raise MDFError(
                    f"set '{key}': graph '{self.graph.id}' has no parameter "
                    f"NODE.PARAM of that name",
                    source=getattr(self.model, "_source", None),
                )
            if par.function is not None:
                raise MDFError(
                    f"set '{key}': the parameter is computed by a function and cannot be set",
                    source=getattr(self.model, "_source", None),
                )
            value = v.tolist() if hasattr(v, "tolist") else v
            if par.is_stateful():
                par.default_initial_value = value
            else:
                par.value = value
        self.plan = plan_graph(
            self.model, self.graph, getattr(self.model, "_source", None), self.scheduling_mode
        )
        self.reset()

    # -- one step --------------------------------------------------------------------------
    def evaluate(
        self, initializer: Mapping[str, Any] | None = None, time_increment: float | None = None
    ) -> None:
        """One reference ``EvaluableGraph.evaluate()`` call."""
        again = self._again
        if again is not None and time_increment is None:
            # a repeated call the compiled runner replays (backends/compiled/quick.py): no
            # layers of Python between it and the generated code (issue 22, goal 5)
            try:
                steps = again(initializer)
            except MDFError as e:
                raise name_file(e, getattr(self.model, "_source", None)) from None
            if steps is not None:
                self._last_steps = steps
                return
        check_dt(time_increment, "time_increment")
        with _naming(self.model):
            self._evaluate(initializer, time_increment)

    def _evaluate(
        self, initializer: Mapping[str, Any] | None, time_increment: float | None
    ) -> None:
        self._decide(1)
        if not _evaluations(self.runner):
            self._seed_stream(initializer, time_increment)
        self.runner.evaluate(time_increment=time_increment, initializer=initializer)
        self._last_steps = self.runner.last_update_steps()
        if time_increment is not None:
            self.time += time_increment

    @property
    def time_steps(self) -> list[builtins.set[str]]:  # (builtins: the class has a method set)
        """The sets of node ids run in each time step of the last :meth:`evaluate`, in order
        (a :meth:`run` does not set them)."""
        return [set(s) for s in self._last_steps[0]]

    @property
    def time_step_times(self) -> list[float]:
        """The absolute time in ms of each entry of :attr:`time_steps`."""
        return list(self._last_steps[1])

    def value(self, node: str, name: str) -> Any:
        """Current value of a port, parameter or function of ``node`` by id."""
        runner = self.runner
        return (runner if runner is not None else self._reader()).value(node, name)

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return self._reader().outputs()

    @property
    def order_of_execution(self) -> list[str]:
        return self._reader().order_of_execution

    # -- many steps ------------------------------------------------------------------------
    def run(
        self,
        steps: int | None = None,
        dt: float | None = None,
        initializer: Mapping[str, Any] | None = None,
        record: Iterable[str] | None = None,
        progress: bool = False,
        duration: float | None = None,
        record_fired: bool = False,
    ) -> Results:
        """Run ``steps`` reference evaluate() calls (or the steps of ``duration``), continuing
        from the current state. ``record`` lists ``NODE.PORT`` values kept after every step;
        ``record_fired`` keeps the ids of the nodes that ran in each step (``Results.fired``)."""
        try:  # (as _naming, without a context manager's ~1 us per call)
            return self._run(steps, dt, initializer, record, progress, duration, record_fired)
        except MDFError as e:
            raise name_file(e, getattr(self.model, "_source", None)) from None

    def _run(
        self,
        steps: int | None,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        record: Iterable[str] | None,
        progress: bool,
        duration: float | None,
        record_fired: bool,
    ) -> Results:
        if duration is not None:
            if steps is not None:
                raise MDFError("give steps or duration, not both")
            steps = steps_for_duration(duration, dt)
        given = steps is not None
        if steps is None:
            steps = self.runner.default_steps if self.runner is not None else 1
        if record is not None and not isinstance(record, str):
            record = list(record)  # (an iterator is read once)
        check_run_arguments(steps, dt, initializer, record)
        check_steps(steps)
        steps = int(steps)
        if steps < 0:
            raise MDFError(f"steps must be >= 0, got {steps}")
        self._decide(steps)
        if dt is None and steps >= 2 and not self._warned_dt:
            self._warn_without_dt(steps, dt)
        keys = self._record_keys(record) if record else []
        res = Results(
            graph=self.graph.id, steps=0, outputs={}, traces={f"{n}.{p}": [] for n, p in keys}
        )
        bar = _progress_bar(steps) if progress else None
        done = 0
        before = _evaluations(self.runner)
        fresh = not before  # only a simulation that has not run starts with the initial step
        if fresh:
            self._seed_stream(initializer, dt)
        try:
            if not keys and not record_fired:
                try:
                    if bar is None and steps > 0:  # one run_steps call
                        self.runner.run_steps(steps, dt, initializer, first_without_dt=fresh)
                    # with a progress bar: about a hundred chunks, each one run_steps call
                    size = max(1, steps // 100)
                    for start in range(0, steps if bar is not None else 0, size):
                        n = min(size, steps - start)
                        self.runner.run_steps(
                            n, dt, initializer, first_without_dt=start == 0 and fresh
                        )
                        if bar is not None:
                            bar.update(n)
                        if self.runner.finished:  # an ACT-R goal reached
                            break
                except KeyboardInterrupt:
                    after = _evaluations(self.runner)
                    done = after - before if after is not None and before is not None else 0
                    self.time += dt * max(0, done - fresh) if dt is not None else 0.0
                    raise
                after = _evaluations(self.runner)
                done = after - before if after is not None and before is not None else steps
                self.time += dt * max(0, done - fresh) if dt is not None else 0.0
            else:
                ran = len(self.order_of_execution) if record_fired else 0
                for k in range(steps):
                    inc = None if ((k == 0 and fresh) or dt is None) else dt
                    self._evaluate(initializer, inc)
                    if record_fired:
                        order = self.order_of_execution
                        res.fired.append(list(dict.fromkeys(order[ran:])))
                        ran = len(order)
                    done += 1
                    res.times.append(self.time)
                    res.record({f"{n}.{p}": _snapshot(self.value(n, p)) for n, p in keys}, steps)
                    if bar is not None:
                        bar.update(1)
                    if self.runner.finished:
                        break
        except KeyboardInterrupt:
            res.completed = False
            res.interrupted_at_step = done
            res.note = f"interrupted: last completed step {done} of {steps}"
            log.warning(res.note)
        finally:
            if bar is not None:
                bar.close()
        res.steps = done
        if not given and self.runner.must_finish and not self.runner.finished:
            raise MDFError(f"the {self.backend} model did not terminate within {steps} steps")
        res.outputs = self.runner.outputs()
        self._last_steps = ([], [])
        res.finish()
        return res

    def _seed_stream(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """At the first step: seed the random stream (after any compile warm-up, whose
        throw-away steps would otherwise take draws from it). The runner prepares with the
        run's ``dt`` either way: a compiled graph's warm-up then takes an Euler step, so a
        value written as an integer (``time: 0``) is held in the float kind it turns into."""
        self.runner.prepare(initializer, dt)
        if self.seed is None:
            return
        from .randomness import seed

        seed(self.seed)

    def _warn_without_dt(self, steps: int, dt: float | None) -> None:
        """One warning when time_derivative states will not move: several steps, no dt."""
        if dt is not None or steps < 2 or self._warned_dt:
            return
        states = [
            f"{n.id}.{p.id}"
            for n in self.graph.nodes
            for p in n.parameters
            if p.time_derivative is not None
        ]
        self._warned_dt = True  # (warned once; a graph without such states never warns)
        if states:
            source = getattr(self.model, "_source", None) or self.model.id
            more = f" (+{len(states) - 3} more)" if len(states) > 3 else ""
            log.warning(
                f"{source}: no dt given, so the time_derivative states "
                f"{', '.join(states[:3])}{more} keep their initial values; "
                "pass dt= (mdf run --dt DT)"
            )

    def _record_keys(self, record: Iterable[str] | None) -> list[tuple[str, str]]:
        keys = []
        for r in record or []:
            if "." not in r:
                raise MDFError(f"record '{r}': expected NODE.PORT")
            kinds = ("output_ports", "parameters", "input_ports", "functions")
            found = self.graph.node_port(r, kinds)
            if len(found) > 1:
                raise MDFError(f"record '{r}': ambiguous, it names {_either(found)}")
            if not found:
                n, p = r.split(".", 1)
                if self.graph.get_node(n) is None:
                    raise MDFError(f"record '{r}': no node '{n}'")
                raise MDFError(f"record '{r}': node '{n}' has no port or parameter '{p}'")
            keys.append(found[0])
        return keys


def _either(found: list[tuple[str, str]]) -> str:
    return " and ".join(f"node '{n}' {p!r}" for n, p in found)


def _is_actr(model: Model) -> bool:
    """Whether ``model`` calls ``actr`` functions (an ACT-R production system)."""
    from .backends import uses_namespace

    return uses_namespace(model, "actr")


def _evaluations(runner: Any) -> int | None:
    """How many evaluate() calls ``runner`` has completed (None if it cannot tell)."""
    n = getattr(runner, "evaluations", None)
    return int(n) if n is not None else None


def _snapshot(v: Any) -> Any:
    import numpy as np

    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (dict, list)):  # ACT-R chunks and productions: kept as they were
        return copy.deepcopy(v)
    return v


def _progress_bar(total: int):
    """A progress bar on a terminal, else None (see :mod:`mdf_engine.progress`)."""
    from .progress import progress

    bar = progress(total, True, unit="step")
    return bar if bar.shown else None
