"""The one runner protocol every backend implements, and the factory that picks a runner.

A *runner* holds one graph's whole run state (every port, parameter and function value, the
scheduler's clock, the log of time steps) and advances it one reference
``EvaluableGraph.evaluate()`` call at a time. :class:`~mdf_engine.simulation.Simulation` is the
only caller: it creates the runner with :func:`make_runner`, drives it through the methods below
and nothing else, and resets by creating a fresh runner (a new runner *is* the initial state).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..errors import MDFError
from ..plan import GraphPlan

#: The backends :func:`make_runner` knows ("auto" is resolved by the Simulation before).
RUNNER_BACKENDS = ("interpreted", "compiled", "hexagon", "actr")


@runtime_checkable
class Runner(Protocol):
    """What a backend offers :class:`~mdf_engine.simulation.Simulation`.

    Attributes: ``evaluations`` (evaluate() calls completed), ``order_of_execution`` (node ids
    in the order they ran, over the runner's life), ``time_steps`` (the sets of node ids of
    every time step, over the runner's life), ``finished`` (True once the model says it is done
    -- an ACT-R goal reached; a run stops stepping then; always False for plain graphs) and
    ``default_steps`` (how many steps a run given no step count takes; ``None``: until
    ``finished``, failing if it never is)."""

    evaluations: int
    order_of_execution: list[str]
    time_steps: list[set[str]]
    finished: bool
    default_steps: int | None

    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Get ready for the first step (compile, quantize, ...) without running a step of the
        model, so that whatever this costs or draws happens before the run is seeded."""

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        """One reference ``evaluate()``: ``initializer`` sets input ports, then every time step
        of the schedule runs its nodes; ``time_increment`` moves ``time_derivative`` states."""

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        """``steps`` evaluate() calls (fewer if ``finished`` becomes true): the first without
        a time increment if ``first_without_dt``, the rest with ``dt``."""

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        """The time steps of the last evaluate() and their absolute times in ms."""

    def value(self, node: str, name: str) -> Any:
        """The current value of an input port, parameter, function or output port of
        ``node`` (looked up in that order); an MDFError if there is none."""

    def outputs(self) -> dict[str, dict[str, Any]]:
        """``{node: {output port: current value}}``."""


class WrappingRunner:
    """A runner that steps another runner's graph its own way (quantized, ACT-R cycles): what
    the graph has run and holds is read from that runner, ``inner``."""

    @property
    def inner(self) -> Any:
        """The runner whose graph this one steps."""
        raise NotImplementedError

    @property
    def evaluations(self) -> int:
        return self.inner.evaluations

    @property
    def order_of_execution(self) -> list[str]:
        return self.inner.order_of_execution

    @property
    def time_steps(self) -> list[set[str]]:
        return self.inner.time_steps

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        return self.inner.last_update_steps()

    def value(self, node: str, name: str) -> Any:
        return self.inner.value(node, name)

    def outputs(self) -> dict[str, dict[str, Any]]:
        return self.inner.outputs()


def make_runner(
    backend: str,
    plan: GraphPlan,
    model: Any = None,
    check_finite: bool = False,
    max_cycles: int | None = None,
    schedule_log: int | None = None,
    actr_inner: str = "interpreted",
) -> Runner:
    """A fresh runner of ``backend`` for ``plan`` (``model``: the Model the plan's graph
    belongs to, which the hexagon backend quantizes; ``max_cycles``: the ACT-R backend's
    bound on a run to termination; ``schedule_log``: the compiled backend's schedule-log
    length, None for its default; ``actr_inner``: the backend of the graph the ACT-R backend
    cycles, ``"interpreted"`` or ``"compiled"``)."""
    if backend == "compiled" and _calls_actr(plan):  # chunks and productions: own kernels
        from ..actr.compiled import CompiledActrGraph

        return CompiledActrGraph(plan, check_finite=check_finite)
    if backend == "compiled":
        from .compiled import CompiledGraph

        extra = {} if schedule_log is None else {"schedule_log": schedule_log}
        return CompiledGraph(plan, check_finite=check_finite, **extra)
    if backend == "interpreted":
        from ..interpreter import InterpretedGraph
        from ..schedulers.choice import note_declined, use_own_scheduler

        # (graph-scheduler's cost grows with the square of the nodes: a large graph runs on
        # the engine's own scheduler, tested equal to it; MDF_ENGINE_SCHEDULER chooses)
        own = use_own_scheduler(len(plan.nodes))
        interp = InterpretedGraph(plan, check_finite=check_finite, own_scheduler=own)
        note_declined(interp.scheduler, len(plan.nodes), own)
        return interp
    if backend == "hexagon":
        from .hexagon import HexagonRunner

        return HexagonRunner(model, plan, check_finite=check_finite)
    if backend == "actr":
        from .actr import ActrRunner

        return ActrRunner(plan, check_finite=check_finite, max_cycles=max_cycles, inner=actr_inner)
    raise MDFError(f"unknown backend '{backend}' (choose from {', '.join(RUNNER_BACKENDS)})")


def _calls_actr(plan: GraphPlan) -> bool:
    """Whether a parameter of ``plan`` calls an ``actr`` function (see :mod:`mdf_engine.actr`)."""
    return any(
        p.call is not None and p.call.schema is not None and p.call.schema.namespace == "actr"
        for n in plan.nodes.values()
        for p in n.parameters
    )


def uses_namespace(model: Any, namespace: str) -> bool:
    """Whether any parameter or function of ``model`` calls a function registered in
    ``namespace`` (``"actr"``: an ACT-R production system, run by the ``actr`` backend)."""
    from ..plan import load_function_libraries
    from ..registry import REGISTRY

    calls = [
        p.function
        for g in model.graphs
        for n in g.nodes
        for p in list(n.parameters) + list(n.functions)
        if p.function
    ]
    load_function_libraries(calls)  # only the libraries these names need
    return any(
        f in REGISTRY and any(s.namespace == namespace for s in REGISTRY.versions(f)) for f in calls
    )
