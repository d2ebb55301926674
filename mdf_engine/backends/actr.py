"""The ACT-R backend: an ACT-R production system (the graph layout of modeci-mdf's
``actr_to_mdf``, see :mod:`mdf_engine.actr`) run cycle by cycle.

One step is one production cycle: one ``evaluate`` of the graph with ``goal_input`` and
``dm_input`` set to the previous cycle's ``fire_production`` outputs (``{}`` at first). The
model is ``finished`` once ``check_termination`` says so; a run without a step count runs until
then, at most ``max_cycles`` cycles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..plan import GraphPlan
from .base import WrappingRunner

#: The input ports the backend sets itself at every cycle.
CYCLE_INPUTS = ("goal_input", "dm_input")
#: The nodes whose values the cycle reads.
NEEDED_NODES = ("check_termination", "fire_production")


class ActrRunner(WrappingRunner):
    """A :class:`~mdf_engine.backends.base.Runner` stepping ACT-R production cycles over a
    graph runner of backend ``inner`` (interpreted by default)."""

    #: a run given no step count runs until the goal is reached
    must_finish = True

    def __init__(
        self,
        plan: GraphPlan,
        check_finite: bool = False,
        max_cycles: int | None = None,
        inner: str = "interpreted",
    ):
        from .base import make_runner

        missing = [n for n in NEEDED_NODES if n not in plan.nodes]
        if missing:
            raise MDFError(
                f"the actr backend runs ACT-R production graphs (nodes "
                f"{', '.join(NEEDED_NODES)}): this graph has no node '{missing[0]}'",
                plan.where,
            )
        self.plan = plan
        self.graph = make_runner(inner, plan, check_finite=check_finite)
        #: the most cycles a run without a step count takes
        self.default_steps = 1000 if max_cycles is None else int(max_cycles)
        self.finished = False
        self.goal: Any = {}
        self.retrieval: Any = {}

    # -- the state of the graph, as its runner has it ----------------------------------------
    @property
    def inner(self) -> Any:
        return self.graph

    # -- cycles ------------------------------------------------------------------------------
    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        self.graph.prepare(self._cycle_inputs(initializer), dt)

    def _cycle_inputs(self, initializer: Mapping[str, Any] | None) -> dict[str, Any]:
        given = dict(initializer or {})
        clash = [k for k in CYCLE_INPUTS if k in given]
        if clash:
            raise MDFError(
                f"initializer key '{clash[0]}': the ACT-R backend sets "
                f"{' and '.join(CYCLE_INPUTS)} itself at every cycle"
            )
        given.update(goal_input=self.goal, dm_input=self.retrieval)
        return given

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        """One production cycle."""
        self.graph.evaluate(
            time_increment=time_increment, initializer=self._cycle_inputs(initializer)
        )
        done = self.graph.value("check_termination", "check_output")
        if not isinstance(done, (bool, int, float, np.generic)) and np.size(done) != 1:
            raise MDFError(
                f"expected one truth value, got {type(done).__name__} of size {np.size(done)}",
                "nodes.check_termination.output_ports.check_output",
            )
        self.finished = bool(np.asarray(done).reshape(-1)[0])
        self.goal = self.graph.value("fire_production", "fire_prod_output_to_goal")
        self.retrieval = self.graph.value("fire_production", "fire_prod_output_to_retrieval")

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        """Up to ``steps`` cycles, ending after the cycle that reaches the goal (inside the
        kernel when the graph runner is the compiled one and nothing else is initialized)."""
        loop = getattr(self.graph, "run_cycles", None)
        if loop is not None and not initializer and steps > 0:
            self.graph.prepare(None, dt)
            if self.graph.is_compiled:
                self.finished = loop(steps, self.goal, self.retrieval)
                self.goal = self.graph.value("fire_production", "fire_prod_output_to_goal")
                self.retrieval = self.graph.value(
                    "fire_production", "fire_prod_output_to_retrieval"
                )
                return
        for k in range(steps):
            inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
            self.evaluate(time_increment=inc, initializer=initializer)
            if self.finished:
                return
