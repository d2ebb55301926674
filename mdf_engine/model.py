"""The typed MDF model, and the one place that knows MDF's field names.

Each MDF element is a dataclass whose fields are the element's JSON/YAML keys. Children that MDF
files write as dicts keyed by id (``nodes``, ``edges``, ``parameters``, ...) are lists here, in file
order; the field's metadata says which class they hold. :func:`to_dict` writes the layout that
modeci-mdf 0.4.x writes (``{model_id: {..., "graphs": {graph_id: {...}}}}``), and the loader reads it
back through the same field table.

This module is also the Python modelling API::

    node = Node(id="A", parameters=[Parameter(id="x", value="x + 1")],
                output_ports=[OutputPort(id="out", value="x")])
    model = Model(id="m", graphs=[Graph(id="g", nodes=[node])])
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any


def _children(cls_name: str, keyed: bool = True) -> Any:
    """A list field of child elements of class ``cls_name``, written as a dict keyed by id."""
    return field(default_factory=list, metadata={"children": cls_name, "keyed": keyed})


def _mapping(cls_name: str) -> Any:
    """A dict field ``key -> element of class cls_name`` (conditions)."""
    return field(default_factory=dict, metadata={"mapping": cls_name})


def _child(cls_name: str) -> Any:
    return field(default=None, metadata={"child": cls_name})


@dataclass
class InputPort:
    """A port through which a node receives values (from edges or an initializer)."""

    id: str
    shape: tuple[int, ...] | None = None
    type: str | None = None
    default_value: Any = None
    reduce: str = "overwrite"
    metadata: dict | None = None


@dataclass
class OutputPort:
    """A port whose ``value`` expression is what the node sends along its edges."""

    id: str
    value: Any = None
    shape: tuple[int, ...] | None = None
    type: str | None = None
    metadata: dict | None = None


@dataclass
class ParameterCondition:
    """When ``test`` holds after a parameter update, the parameter takes ``value`` instead."""

    id: str
    test: str = ""
    value: Any = None


@dataclass
class Parameter:
    """A node parameter: a constant, an expression (``value``), a ``function`` call with
    ``args``, or a state integrated from ``time_derivative``."""

    id: str
    value: Any = None
    function: str | None = None
    args: dict[str, Any] | None = None
    time_derivative: str | None = None
    default_initial_value: Any = None
    conditions: list[ParameterCondition] = _children("ParameterCondition", keyed=False)
    metadata: dict | None = None

    def is_stateful(self) -> bool:
        """True for a parameter that keeps a value from one step to the next."""
        from .expressions import names_in

        if self.time_derivative is not None or self.default_initial_value is not None:
            return True
        return isinstance(self.value, str) and self.id in names_in(self.value)


@dataclass
class Function:
    """A node function (the older form): ``function`` + ``args``, or a ``value`` expression."""

    id: str
    function: str | None = None
    args: dict[str, Any] | None = None
    value: Any = None
    metadata: dict | None = None


@dataclass
class Node:
    """A unit of computation: input ports, functions, parameters and output ports."""

    id: str
    input_ports: list[InputPort] = _children("InputPort")
    functions: list[Function] = _children("Function")
    parameters: list[Parameter] = _children("Parameter")
    output_ports: list[OutputPort] = _children("OutputPort")
    metadata: dict | None = None

    def get(self, kind: str, id: str) -> Any:
        for item in getattr(self, kind):
            if item.id == id:
                return item
        return None


@dataclass
class Edge:
    """A connection from a sender's output port to a receiver's input port, with a weight."""

    id: str
    sender: str = ""
    receiver: str = ""
    sender_port: str = ""
    receiver_port: str = ""
    parameters: dict[str, Any] | None = None
    metadata: dict | None = None

    @property
    def weight(self) -> Any:
        return (self.parameters or {}).get("weight", 1)


@dataclass
class Condition:
    """A graph-scheduler condition: its class name and keyword arguments (which may nest
    conditions and name nodes by id)."""

    type: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    metadata: dict | None = None


@dataclass
class ConditionSet:
    """Per-node conditions and termination conditions keyed by time scale."""

    node_specific: dict[str, Condition] = _mapping("Condition")
    termination: dict[str, Condition] = _mapping("Condition")
    metadata: dict | None = None


@dataclass
class Graph:
    """Nodes joined by edges, scheduled under conditions."""

    id: str
    nodes: list[Node] = _children("Node")
    edges: list[Edge] = _children("Edge")
    conditions: ConditionSet | None = _child("ConditionSet")
    parameters: dict[str, Any] | None = None
    metadata: dict | None = None

    def get_node(self, id: str) -> Node | None:
        for n in self.nodes:
            if n.id == id:
                return n
        return None

    def node_port(self, key: str, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
        """Every way ``key`` reads as ``NODE.ID`` with ``ID`` an element of one of ``kinds``
        (``"parameters"``, ``"output_ports"``, ...) of node ``NODE``: ids may hold dots, so
        ``A.B.o`` can be node ``A``'s ``B.o`` and node ``A.B``'s ``o``."""
        found = []
        at = key.find(".")
        while at > -1:
            node = self.get_node(key[:at])
            if node is not None and any(node.get(k, key[at + 1 :]) for k in kinds):
                found.append((key[:at], key[at + 1 :]))
            at = key.find(".", at + 1)
        return found


@dataclass
class Model:
    """An MDF model: one or more graphs."""

    id: str
    graphs: list[Graph] = _children("Graph")
    format: str | None = "ModECI MDF v0.4"
    generating_application: str | None = "Python mdf_engine"
    onnx_opset_version: int | None = None
    metadata: dict | None = None

    def get_graph(self, id: str | None = None) -> Graph:
        """The graph ``id`` (the first one when None); an MDFError names the model's file."""
        from .errors import MDFError

        source = getattr(self, "_source", None)  # (set by the loader on a model from a file)
        if not self.graphs:
            raise MDFError("the model has no graphs", "graphs", source)
        if id is None:
            return self.graphs[0]
        for g in self.graphs:
            if g.id == id:
                return g
        raise MDFError(
            f"no graph '{id}' (graphs: {', '.join(g.id for g in self.graphs)})", "graphs", source
        )

    def to_dict(self) -> dict:
        return to_dict(self)


#: Element classes by name, for the field metadata above.
ELEMENTS: dict[str, type] = {
    c.__name__: c
    for c in (
        InputPort,
        OutputPort,
        ParameterCondition,
        Parameter,
        Function,
        Node,
        Edge,
        Condition,
        ConditionSet,
        Graph,
        Model,
    )
}


def element_fields(cls: type) -> list:
    """The dataclass fields of an element class, in MDF's key order."""
    return list(fields(cls))


def field_default(f) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return MISSING


def _plain(value: Any) -> Any:
    """A value as JSON-able data (arrays to nested lists, tuples to lists)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Condition):
        return element_to_dict(value)
    return value


def element_to_dict(obj: Any) -> dict:
    """One element as the dict MDF files hold under its id (the id itself is the key)."""
    out: dict[str, Any] = {}
    for f in element_fields(type(obj)):
        if f.name == "id" and not isinstance(obj, Model):
            continue
        value = getattr(obj, f.name)
        if value is None or (f.name == "reduce" and value == "overwrite"):
            continue
        meta = f.metadata
        if "children" in meta:
            if not value:
                continue
            if meta["keyed"]:
                out[f.name] = {c.id: element_to_dict(c) for c in value}
            else:
                out[f.name] = [{"id": c.id, **element_to_dict(c)} for c in value]
        elif "mapping" in meta:
            if value:
                out[f.name] = {k: element_to_dict(c) for k, c in value.items()}
        elif "child" in meta:
            out[f.name] = element_to_dict(value)
        else:
            out[f.name] = _plain(value)
    return out


def to_dict(model: Model) -> dict:
    """The model in modeci-mdf's layout: ``{model_id: {format, ..., graphs: {...}}}``."""
    body = element_to_dict(model)
    body.pop("id", None)
    return {model.id: body}
