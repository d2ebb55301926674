"""A drop-in for ``modeci_mdf.execution_engine.EvaluableGraph``: change one import and an
existing script runs on mdf_engine.

    from mdf_engine.compat import EvaluableGraph
    eg = EvaluableGraph(graph)          # a modeci_mdf.mdf.Graph or an mdf_engine Graph
    eg.evaluate(time_increment=None, array_format="numpy", initializer=None)
    eg.enodes["A"].evaluable_outputs["out"].curr_value
    eg.enodes["A"].evaluable_parameters["p"].curr_value
    eg.order_of_execution
"""

from __future__ import annotations

from typing import Any

from .errors import MDFError
from .loader import from_dict, modeci_element_to_dict
from .model import Graph, Model
from .simulation import Simulation


class _Value:
    """An object with a live ``curr_value`` (the reference's Evaluable* objects)."""

    __slots__ = ("_sim", "_node", "_id")

    def __init__(self, sim: Simulation, node: str, id: str):
        self._sim, self._node, self._id = sim, node, id

    @property
    def curr_value(self) -> Any:
        return self._sim.value(self._node, self._id)


class EvaluableNode:
    """Per-node views: ``evaluable_inputs/parameters/functions/outputs[id].curr_value``."""

    def __init__(self, sim: Simulation, node: Any):
        self.node = node
        self._sim = sim
        self.evaluable_inputs = {p.id: _Value(sim, node.id, p.id) for p in node.input_ports}
        self.evaluable_parameters = {p.id: _Value(sim, node.id, p.id) for p in node.parameters}
        self.evaluable_functions = {f.id: _Value(sim, node.id, f.id) for f in node.functions}
        self.evaluable_outputs = {o.id: _Value(sim, node.id, o.id) for o in node.output_ports}

    def get_output(self, id: str | None = None) -> Any:
        if id is not None:
            return self.evaluable_outputs[id].curr_value
        outs = tuple(o.curr_value for o in self.evaluable_outputs.values())
        return outs[0] if len(outs) == 1 else outs


class EvaluableGraph:
    """Same constructor and ``evaluate`` as modeci-mdf's, running on mdf_engine."""

    def __init__(self, graph: Any, verbose: bool = False, backend: str = "interpreted"):
        if isinstance(graph, Graph):
            model = Model(id="model", graphs=[graph])
        elif type(graph).__module__.startswith("modeci_mdf"):
            body = modeci_element_to_dict(Graph, graph)
            model = from_dict({"model": {"graphs": {graph.id: body}}},
                              source="<modeci_mdf.mdf.Graph>")
        else:
            raise MDFError(f"EvaluableGraph needs a Graph, got {type(graph).__name__}")
        self.verbose = verbose
        self.graph = model.graphs[0]
        self.sim = Simulation(model, backend=backend)
        self.enodes = {n.id: EvaluableNode(self.sim, n) for n in self.graph.nodes}
        senders = {e.sender for e in self.graph.edges}
        self.output_enodes = [self.enodes[n.id] for n in self.graph.nodes if n.id not in senders]

    def evaluate(self, time_increment: float | None = None, array_format: str = "numpy",
                 initializer: dict[str, Any] | None = None) -> None:
        if array_format != "numpy":
            raise MDFError(f"array_format '{array_format}' is not supported (only 'numpy')")
        self.sim.evaluate(initializer=initializer, time_increment=time_increment)

    @property
    def order_of_execution(self) -> list[str]:
        return self.sim.order_of_execution
