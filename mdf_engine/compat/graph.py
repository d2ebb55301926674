"""``EvaluableGraph``, ``EvaluableNode`` and ``main`` of ``modeci_mdf.execution_engine``,
running on mdf_engine (the interpreted backend by default).

An :class:`EvaluableGraph` takes a ``modeci_mdf.mdf.Graph`` or an mdf_engine
:class:`~mdf_engine.model.Graph`. Its ``enodes`` hold :class:`EvaluableNode` objects whose
``evaluable_inputs/parameters/functions/outputs`` are the element classes of
:mod:`mdf_engine.compat.elements`, bound to the engine's live values. ``scheduler.execution_list``
reads as graph-scheduler's: ``{None: [set of nodes run in each consideration-set execution]}``,
accumulated over every ``evaluate()``, with the caller's node objects in the sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import MDFError
from ..loader import from_dict, load
from ..loader.modeci import modeci_element_to_dict
from ..model import Graph, Model, Node
from ..simulation import Simulation
from .elements import (
    EvaluableFunction,
    EvaluableInput,
    EvaluableOutput,
    EvaluableParameter,
    combine,
    field,
)
from .expressions import FORMAT_DEFAULT, FORMAT_NUMPY, check_array_format


def _is_modeci(obj: Any) -> bool:
    return type(obj).__module__.startswith("modeci_mdf")


def _ids_for_node_objects(x: Any) -> Any:
    """Condition kwargs may hold node objects (``dependency=A``); files hold their ids."""
    if isinstance(x, dict):
        return {k: _ids_for_node_objects(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_ids_for_node_objects(v) for v in x]
    if hasattr(x, "input_ports") and hasattr(x, "output_ports") and hasattr(x, "id"):
        return x.id
    return x


def _as_model(graph: Any, what: str) -> Model:
    """Our typed model holding ``graph`` (a modeci-mdf Graph/Node or one of ours)."""
    if isinstance(graph, Graph):
        return Model(id="model", graphs=[graph])
    if isinstance(graph, Node):
        return Model(id="model", graphs=[Graph(id=f"{graph.id}_graph", nodes=[graph])])
    if _is_modeci(graph) and type(graph).__name__ in ("Graph", "Node"):
        cls = Graph if type(graph).__name__ == "Graph" else Node
        body = _ids_for_node_objects(modeci_element_to_dict(cls, graph))
        g = {graph.id: body} if cls is Graph else {f"{graph.id}_graph": {"nodes": {graph.id: body}}}
        return from_dict({"model": {"graphs": g}}, source=f"<modeci_mdf.mdf.{cls.__name__}>")
    raise MDFError(
        f"{what} needs a Graph (modeci_mdf.mdf or mdf_engine), got {type(graph).__name__}"
    )


class _Runtime:
    """The engine behind bound elements: live values, and input values sent between calls."""

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.pending: dict[tuple[str, str], Any] = {}
        self._keys: dict[tuple[str, str], str] = {}

    def value(self, node: str, name: str) -> Any:
        return self.sim.value(node, name)

    def send(self, node: str, port: str, value: Any, reduce: str) -> None:
        self.pending[node, port] = combine(self.pending.get((node, port)), value, reduce)

    def sent(self, node: str, port: str) -> Any:
        return self.pending.get((node, port))

    def has_run(self, node: str) -> bool:
        return node in self.sim.order_of_execution

    def evaluate(
        self, initializer: Mapping[str, Any] | None, ports: set[str], time_increment: float | None
    ) -> None:
        # as in the reference, initializer keys that are not input port ids are ignored
        init = {k: v for k, v in (initializer or {}).items() if k in ports}
        for (node, port), value in self.pending.items():
            if (node, port) not in self._keys:
                self._keys[node, port] = self._initializer_key(node, port)
            init[self._keys[node, port]] = value
        self.pending = {}
        self.sim.evaluate(initializer=init, time_increment=time_increment)

    def _initializer_key(self, node: str, port: str) -> str:
        """The initializer key that names this node's port and nothing else: ``NODE.PORT``,
        else the port id alone (``interpreter.initializer_targets`` reads keys)."""
        from ..interpreter import initializer_targets

        for key in (f"{node}.{port}", port):
            try:
                if initializer_targets(self.sim.plan, key) == [(node, port)]:
                    return key
            except MDFError:
                continue
        raise MDFError(
            f"cannot send a value to input port '{port}' of node '{node}' alone (ids with "
            "'.' that name other ports too); pass it with evaluate(initializer=...)"
        )


class EvaluableNode:
    """A node and its ``evaluable_inputs``, ``evaluable_parameters`` (declared order),
    ``evaluable_functions`` (evaluation order) and ``evaluable_outputs``.

    Built on its own (``EvaluableNode(node)``), ``evaluate()`` runs the node once with the
    values sent to its inputs; inside an :class:`EvaluableGraph` the graph runs it."""

    def __init__(self, node: Any, verbose: bool = False, *, runtime: _Runtime | None = None):
        self.verbose = verbose
        self.node = node
        self._own = runtime is None
        if runtime is None:
            runtime = _Runtime(Simulation(_as_model(node, "EvaluableNode"), backend="interpreted"))
        self._runtime = runtime
        nid = str(node.id)
        plan = runtime.sim.plan.nodes[nid]
        funcs = {str(f.id): f for f in node.functions}
        self.evaluable_inputs = {str(p.id): EvaluableInput(p, verbose) for p in node.input_ports}
        self.evaluable_parameters = {
            str(p.id): EvaluableParameter(p, verbose) for p in node.parameters
        }
        self.evaluable_functions = {
            fid: EvaluableFunction(funcs[fid], verbose) for fid, _ in plan.functions
        }
        self.evaluable_outputs = {str(o.id): EvaluableOutput(o, verbose) for o in node.output_ports}
        for group in (
            self.evaluable_inputs,
            self.evaluable_parameters,
            self.evaluable_functions,
            self.evaluable_outputs,
        ):
            for e in group.values():
                e.bind(runtime, nid)

    def evaluate(
        self, time_increment: float | None = None, array_format: str = FORMAT_DEFAULT
    ) -> None:
        """Run the node once (a standalone node only)."""
        if not self._own:
            raise MDFError(
                f"node '{self.node.id}' belongs to an EvaluableGraph; call the "
                "graph's evaluate() instead"
            )
        check_array_format(array_format)
        self._runtime.evaluate(None, set(), time_increment)

    def get_output(self, id: str | None = None) -> Any:
        """One output port's value; with no id, the tuple of all (the bare value if one)."""
        if id is not None:
            out = self.evaluable_outputs.get(id)
            return None if out is None else out.curr_value
        outs = tuple(o.curr_value for o in self.evaluable_outputs.values())
        return outs[0] if len(outs) == 1 else outs


class _NodeHandle:
    """A hashable stand-in for a node object that is not hashable (mdf_engine's dataclasses),
    for the sets of ``execution_list``: ``.id`` and the node's fields."""

    __slots__ = ("node",)

    def __init__(self, node: Any):
        self.node = node

    def __getattr__(self, name: str) -> Any:
        return getattr(self.node, name)

    def __repr__(self) -> str:
        return f"Node(id={self.node.id!r})"


class CompatScheduler:
    """``EvaluableGraph.scheduler``: ``execution_list`` as graph-scheduler's (``{None: [set of
    node objects per consideration-set execution]}``), accumulated over all evaluate() calls.
    Other attributes (``get_clock``, ``conditions``, ...) are the interpreted backend's
    graph-scheduler Scheduler's."""

    def __init__(self, sim: Simulation, nodes: Mapping[str, Any]):
        self._sim = sim
        self._nodes = dict(nodes)
        self._steps: list[set[str]] = []

    def record_update(self) -> None:
        """Append the time steps of the simulation's last evaluate() to the list."""
        self._steps.extend(self._sim.time_steps)

    @property
    def execution_list(self) -> dict[Any, list[set]]:
        return {None: [{self._nodes[n] for n in ts} for ts in self._steps]}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        inner = getattr(self._sim.runner, "scheduler", None)
        if inner is None:
            raise AttributeError(
                f"'{name}': the {self._sim.backend} backend has no graph-scheduler Scheduler"
            )
        return getattr(inner, name)


class EvaluableGraph:
    """A graph ready to evaluate, as ``modeci_mdf.execution_engine.EvaluableGraph``:
    ``evaluate(time_increment, array_format, initializer)`` is one reference evaluate() call
    (one run of the scheduler). ``backend`` is mdf_engine's (interpreted or compiled)."""

    def __init__(
        self,
        graph: Any,
        verbose: bool = False,
        backend: str = "interpreted",
        *,
        model: Model | None = None,
    ):
        """``model``: the mdf_engine Model that ``graph`` belongs to, when there is one (its
        ``onnx_opset_version`` and ``generating_application`` are then honoured)."""
        if backend not in ("interpreted", "compiled"):
            raise MDFError(f"backend '{backend}': choose 'interpreted' or 'compiled'")
        self.verbose = verbose
        self.graph = graph
        if model is not None and not any(g is graph for g in model.graphs):
            raise MDFError(f"graph '{graph.id}' is not one of the model's graphs")
        m = model if model is not None else _as_model(graph, "EvaluableGraph")
        self.sim = Simulation(m, graph=str(graph.id), backend=backend)
        self._runtime = _Runtime(self.sim)
        self.enodes = {
            str(n.id): EvaluableNode(n, verbose, runtime=self._runtime) for n in graph.nodes
        }
        receivers = {str(e.receiver) for e in graph.edges}
        senders = {str(e.sender) for e in graph.edges}
        self.root_nodes = [str(n.id) for n in graph.nodes if str(n.id) not in receivers]
        if not self.root_nodes:
            self.root_nodes = [
                str(n.id)
                for n in graph.nodes
                for p in n.input_ports
                if field(p, "default_value") is not None
            ]
        self.output_nodes = [n for n in graph.nodes if str(n.id) not in senders]
        self.output_enodes = [self.enodes[str(n.id)] for n in self.output_nodes]
        self.scheduler = CompatScheduler(
            self.sim, {str(n.id): n if _hashable(n) else _NodeHandle(n) for n in graph.nodes}
        )
        self._ports = {str(p.id) for n in graph.nodes for p in n.input_ports}
        self.ordered_edges = _ordered_edges(graph.edges, self.root_nodes)

    @property
    def order_of_execution(self) -> list[str]:
        """Node ids in the order they ran, over all evaluate() calls."""
        return list(self.sim.order_of_execution)

    def evaluate(
        self,
        time_increment: float | None = None,
        array_format: str = FORMAT_DEFAULT,
        initializer: Mapping[str, Any] | None = None,
    ) -> None:
        """One run of the scheduler; ``initializer`` sets input ports by port id (keys that
        are not input port ids are ignored, as in the reference)."""
        check_array_format(array_format)
        self._runtime.evaluate(initializer, self._ports, time_increment)
        self.scheduler.record_update()
        if self.verbose:
            print(f"Evaluated graph {self.graph.id}: order of execution {self.order_of_execution}")

    def evaluate_edge(
        self,
        edge: Any,
        time_increment: float | None = None,
        array_format: str = FORMAT_DEFAULT,
    ) -> None:
        """Send the sender's output (times the edge's weight) to the receiver's input port;
        the receiver reads it at its next execution."""
        check_array_format(array_format)
        value = self.enodes[str(edge.sender)].evaluable_outputs[str(edge.sender_port)].curr_value
        weight = (field(edge, "parameters") or {}).get("weight", 1)
        if not (type(weight) in (int, float) and weight == 1):
            value = weight * value
        self.enodes[str(edge.receiver)].evaluable_inputs[str(edge.receiver_port)].set_input_value(
            value
        )


def _ordered_edges(edges: Any, roots: list[str]) -> list[Any]:
    """Edges in the order the reference lists them: take the first waiting edge; if its sender
    has been reached, list it (its receiver is then reached), else put it back at the end.
    Edges never reached (a cycle without a root) are left out, where the reference's loop
    never ends."""
    reached, out, todo, stalled = set(roots), [], list(edges), 0
    while todo and stalled < len(todo):
        e = todo.pop(0)
        if str(e.sender) in reached:
            out.append(e)
            reached.add(str(e.receiver))
            stalled = 0
        else:
            todo.append(e)
            stalled += 1
    return out


def _hashable(obj: Any) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def main(
    example_file: str, array_format: str = FORMAT_NUMPY, verbose: bool = False
) -> EvaluableGraph:
    """Load an MDF file, build an :class:`EvaluableGraph` of its first graph, evaluate it once
    and return it (as ``modeci_mdf.execution_engine.main``)."""
    check_array_format(array_format)
    model = load(str(example_file))
    eg = EvaluableGraph(model.graphs[0], verbose, model=model)
    eg.evaluate(array_format=array_format)
    return eg
