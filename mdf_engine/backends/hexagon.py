"""The hexagon backend: the graph's onnx:: operators quantized onto hexagon:: chains (see
:mod:`mdf_engine.hexagon.quantize_pass`), then run by the interpreted backend.

Quantizing needs calibration data: the pass runs the float graph once on the initializer of the
first step (with none, on the model's own input defaults), as
:func:`mdf_engine.hexagon.run_quantized` does. Until then the runner reports the values of a
float graph that has not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..plan import GraphPlan, plan_graph
from .base import WrappingRunner


class HexagonRunner(WrappingRunner):
    """A :class:`~mdf_engine.backends.base.Runner` for the quantized form of ``model``'s
    graph ``plan.graph``."""

    finished = False
    default_steps = 1
    must_finish = False

    def __init__(self, model: Any, plan: GraphPlan, check_finite: bool = False):
        from ..interpreter import InterpretedGraph

        self.model = model
        self.float_plan = plan
        self.check_finite = check_finite
        #: the interpreted runner of the quantized graph (None until the first step)
        self.quantized: InterpretedGraph | None = None
        self._unrun = InterpretedGraph(plan)

    @property
    def inner(self) -> Any:
        return self.quantized if self.quantized is not None else self._unrun

    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Quantize, calibrated on ``initializer`` (once)."""
        if self.quantized is not None:
            return
        from ..hexagon import quantize
        from ..interpreter import InterpretedGraph

        gid = self.float_plan.graph.id
        qmodel = quantize(self.model, [initializer], gid)
        qplan = plan_graph(
            qmodel,
            qmodel.get_graph(gid),
            getattr(self.model, "_source", None),
            self.float_plan.scheduling_mode,
        )
        self.quantized = InterpretedGraph(qplan, check_finite=self.check_finite)

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        self.prepare(initializer, time_increment)
        self.inner.evaluate(time_increment=time_increment, initializer=initializer)

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        if steps <= 0:
            return
        self.prepare(initializer, dt)
        self.inner.run_steps(steps, dt, initializer, first_without_dt)
