"""The public way to run a model: ``Simulation(model).run(steps=N, dt=DT)``.

``run(steps=N, dt=DT)`` is exactly N calls of the reference ``evaluate()``: the first without a
time increment (which initialises every ``time_derivative`` state), the rest with ``dt``. With
``dt=None`` every call is made without a time increment. ``duration=T`` gives the steps of the
reference scripts' loop ``t = 0; while t <= T: ...; t += dt``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import MDFError
from .loader import load
from .model import Model
from .plan import plan_graph
from .results import Results

log = logging.getLogger("mdf_engine")

BACKENDS = ("auto", "interpreted", "compiled")
#: Under ``backend="auto"``, a first ``run`` of at least this many steps picks the compiled
#: backend (a first compile costs seconds, a cached one under a second); shorter runs and
#: step-by-step ``evaluate`` calls stay interpreted.
AUTO_COMPILE_STEPS = 5000


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
    the choice. ``schedule_log``: how many entries (one per node run, one per time step) of
    the schedule the compiled backend keeps for ``order_of_execution`` (the most recent ones;
    ``0`` switches the log off; default ``compiler.SCHEDULE_LOG``)."""

    def __init__(self, model: Any, graph: str | None = None, backend: str = "auto",
                 check_finite: bool = False, schedule_log: int | None = None):
        self.model: Model = load(model)
        self.graph = self.model.get_graph(graph)
        if backend not in BACKENDS:
            raise MDFError(f"unknown backend '{backend}' (choose from {', '.join(BACKENDS)})")
        self.backend = backend
        self.check_finite = check_finite
        #: entries of the compiled backend's schedule log (None: its default; 0: off)
        self.schedule_log = schedule_log
        source = getattr(self.model, "_source", None)
        self.plan = plan_graph(self.model, self.graph, source)
        self._undecided = backend == "auto"
        self.runner: Any = None
        cs = self.graph.conditions
        if backend != "auto" or (cs is not None and (cs.node_specific or cs.termination)):
            # under "auto" a graph with conditions starts interpreted, which checks them now;
            # a first long run then switches to the compiled backend before anything has run
            self._start("interpreted" if backend == "auto" else backend)
        self.time = 0.0

    def _start(self, backend: str) -> None:
        """Create the graph runner of ``backend``."""
        if backend == "compiled":
            from .compiler import CompiledGraph

            extra = {} if self.schedule_log is None else {"schedule_log": self.schedule_log}
            self.runner = CompiledGraph(self.plan, check_finite=self.check_finite, **extra)
        else:
            from .interpreter import InterpretedGraph

            self.runner = InterpretedGraph(self.plan, check_finite=self.check_finite)

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

    # -- one step --------------------------------------------------------------------------
    def evaluate(self, initializer: Mapping[str, Any] | None = None,
                 time_increment: float | None = None) -> None:
        """One reference ``EvaluableGraph.evaluate()`` call."""
        self._decide(1)
        self.runner.evaluate(time_increment=time_increment, initializer=initializer)
        if time_increment is not None:
            self.time += time_increment

    def value(self, node: str, name: str) -> Any:
        """Current value of a port, parameter or function of ``node`` by id."""
        return self._reader().value(node, name)

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return self._reader().outputs()

    @property
    def order_of_execution(self) -> list[str]:
        return self._reader().order_of_execution

    # -- many steps ------------------------------------------------------------------------
    def run(self, steps: int | None = None, dt: float | None = None,
            initializer: Mapping[str, Any] | None = None, record: Iterable[str] | None = None,
            progress: bool = False, duration: float | None = None) -> Results:
        """Run ``steps`` reference evaluate() calls (or the steps of ``duration``)."""
        if duration is not None:
            if steps is not None:
                raise MDFError("give steps or duration, not both")
            steps = steps_for_duration(duration, dt)
        from .limits import check_steps

        check_steps(1 if steps is None else steps)
        steps = 1 if steps is None else int(steps)
        if steps < 0:
            raise MDFError(f"steps must be >= 0, got {steps}")
        self._decide(steps)
        keys = self._record_keys(record)
        res = Results(graph=self.graph.id, steps=0, outputs={},
                      traces={f"{n}.{p}": [] for n, p in keys})
        bar = _progress_bar(steps) if progress else None
        done = 0
        before = _evaluations(self.runner)
        try:
            if hasattr(self.runner, "run_steps") and not keys:
                try:
                    # with a progress bar: about a hundred chunks, each one run_steps call
                    size = steps if bar is None else max(1, steps // 100)
                    for start in range(0, steps, size):
                        n = min(size, steps - start)
                        self.runner.run_steps(n, dt, initializer, first_without_dt=start == 0)
                        if bar is not None:
                            bar.update(n)
                except KeyboardInterrupt:
                    after = _evaluations(self.runner)
                    done = after - before if after is not None and before is not None else 0
                    self.time += dt * max(0, done - 1) if dt is not None else 0.0
                    raise
                done = steps
                self.time += dt * max(0, steps - 1) if dt is not None else 0.0
            else:
                for k in range(steps):
                    inc = None if (k == 0 or dt is None) else dt
                    self.evaluate(initializer=initializer, time_increment=inc)
                    done += 1
                    res.times.append(self.time)
                    for n, p in keys:
                        res.traces[f"{n}.{p}"].append(_snapshot(self.value(n, p)))
                    if bar is not None:
                        bar.update(1)
        except KeyboardInterrupt:
            res.completed = False
            res.interrupted_at_step = done
            res.note = f"interrupted: last completed step {done} of {steps}"
            log.warning(res.note)
        finally:
            if bar is not None:
                bar.close()
        res.steps = done
        res.outputs = self.outputs
        return res

    def _record_keys(self, record: Iterable[str] | None) -> list[tuple[str, str]]:
        keys = []
        for r in record or []:
            if "." not in r:
                raise MDFError(f"record '{r}': expected NODE.PORT")
            n, p = r.split(".", 1)
            node = self.graph.get_node(n)
            if node is None:
                raise MDFError(f"record '{r}': no node '{n}'")
            if not any(node.get(k, p) for k in ("output_ports", "parameters", "input_ports",
                                                 "functions")):
                raise MDFError(f"record '{r}': node '{n}' has no port or parameter '{p}'")
            keys.append((n, p))
        return keys


def _evaluations(runner: Any) -> int | None:
    """How many evaluate() calls ``runner`` has completed (None if it cannot tell)."""
    n = getattr(runner, "evaluations", None)
    return int(n) if n is not None else None


def _snapshot(v: Any) -> Any:
    import numpy as np

    if isinstance(v, np.ndarray):
        return v.copy()
    return v


def _progress_bar(total: int):
    """A progress bar on a terminal, else None (see :mod:`mdf_engine.progress`)."""
    from .progress import progress

    bar = progress(total, True, unit="step")
    return bar if bar.shown else None
