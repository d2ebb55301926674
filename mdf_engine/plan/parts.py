"""The parts of a plan: what a backend reads. A :class:`GraphPlan` holds one :class:`NodePlan`
per node (its input ports, parameters, ordered function calls and output values, each a
:class:`ValuePlan` or a bound :class:`CallPlan`) and the :class:`EdgePlan` between them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..expressions import Expr
from ..model import Graph
from ..registry import OpSchema


@dataclass
class ValuePlan:
    """A value: a constant, or an expression over the node's names."""

    const: Any = None
    expr: Expr | None = None
    text: Any = None

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        if self.expr is None:
            return self.const
        return self.expr.evaluate(env)

    @property
    def names(self) -> frozenset[str]:
        return self.expr.names if self.expr is not None else frozenset()


@dataclass
class CallPlan:
    """A call of a registered function with MDF arguments, or a ``value`` over its args."""

    name: str
    schema: OpSchema | None
    args: list[tuple[str, ValuePlan]]
    input_names: list[str | None] = field(default_factory=list)
    attribute_names: list[str] = field(default_factory=list)
    value: ValuePlan | None = None
    #: how many leading outputs are used (None: all); set for onnx_to_mdf's bare ports
    outputs_wanted: int | None = None
    #: give the outputs as a tuple even when there is one (the node indexes them)
    keep_tuple: bool = False

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        fp = dict(env)
        for name, v in self.args:
            fp[name] = v.evaluate(fp)
        if self.schema is None:
            return self.value.evaluate(fp)
        inputs = [fp[n] if n is not None else None for n in self.input_names]
        attrs = {n: fp[n] for n in self.attribute_names}
        out = self.schema.call(inputs, attrs, self.outputs_wanted)
        if self.outputs_wanted is not None:
            out = out[: self.outputs_wanted]
        return out[0] if len(out) == 1 and not self.keep_tuple else out


@dataclass
class ParameterPlan:
    """A parameter: a value, a call, or a state integrated from ``derivative``, with its
    initial value and the conditions that override it."""

    id: str
    stateful: bool
    value: ValuePlan | None = None
    call: CallPlan | None = None
    derivative: ValuePlan | None = None
    initial: ValuePlan | None = None
    conditions: list[tuple[str, ValuePlan, ValuePlan]] = field(default_factory=list)


@dataclass
class InputPlan:
    """An input port: its shape and type, its default value and how it reduces what it receives."""

    id: str
    shape: tuple[int, ...] | None
    type: str | None
    default_value: Any
    reduce: str

    def initial_pending(self) -> Any:
        """What the port holds before anything is sent (the reference's initial curr_value)."""
        if self.reduce != "overwrite":
            return None
        if self.default_value is not None:
            return self.default_value
        fill = 0.0 if (self.type and "float" in self.type) else 0
        return np.full(self.shape or (), fill)

    def fallback(self) -> Any:
        """What a read returns when nothing was sent since the last read."""
        if self.default_value is not None:
            return self.default_value
        return np.full(self.shape or (), 0.0)


@dataclass
class NodePlan:
    """A node: its input ports, its function calls in dependency order, its parameters in
    declared order, and its output values."""

    id: str
    inputs: list[InputPlan]
    functions: list[tuple[str, CallPlan]]
    parameters: list[ParameterPlan]
    outputs: list[tuple[str, ValuePlan]]
    where: str


@dataclass
class EdgePlan:
    """An edge from a sender's output port to a receiver's input port, with its weight."""

    id: str
    sender: str
    sender_port: str
    receiver: str
    receiver_port: str
    weight: Any
    has_weight: bool
    #: PsyNeuLink projection matrix: the receiver gets ``sender_value @ matrix``
    matrix: Any = None


@dataclass
class GraphPlan:
    """A planned graph: its nodes and edges (also by receiver), the opset, and how it is
    scheduled."""

    graph: Graph
    nodes: dict[str, NodePlan]
    edges: list[EdgePlan]
    incoming: dict[str, list[EdgePlan]]
    opset: int | None
    where: str
    #: graph-scheduler's mode: "standard" or "exact_time" (``SchedulingMode.EXACT_TIME``)
    scheduling_mode: str = "standard"
    #: the file was written by PsyNeuLink: its execution rules apply (docs/semantics.md)
    psyneulink: bool = False
