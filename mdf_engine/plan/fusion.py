"""Which nodes a backend may run as one: a Conv whose output only a Relu reads (onnxruntime
fuses them the same way; in an ONNX import they are two MDF nodes), a BatchNormalization whose
output only a Relu reads (:func:`bn_relu_pairs`: the Relu computed in the normalization's
pass), and a Concat whose inputs are all Conv -> Relu pairs' Relus (SqueezeNet's Fire modules),
which the Relus may write in place.

A pair is decided here, once per plan, from the plan alone; running it is the backend's
business (the interpreter: :mod:`mdf_engine.interpreter_lean`). Fusing never changes a value:
the Conv node keeps its own value (the convolution before the Relu) and the Relu node its own;
the fused run only computes the Relu's value right after the convolution, within the Conv node's
execution, and the Relu node takes it when the value it reads is that very convolution output.

A pair ``(conv, relu)`` fuses when:

* the graph is scheduled in the standard mode, is not a PsyNeuLink file (whose nodes read
  held inputs), and neither node has a condition of its own (so nothing decides between them
  whether the Relu runs);
* the Conv node is plain: no functions, no stateful, conditional or integrated parameter, one
  ``onnx::Conv`` call whose value is the only output port (a bare name);
* exactly one edge leaves that output port (the Relu is its only reader), with no weight and
  no projection matrix, and it is the only edge into its port of the Relu node;
* the Relu node is plain in the same way, with one ``onnx::Relu`` call whose input ``X`` is
  that port (a bare name).

A Concat joins such pairs (:func:`concat_of_relus`) when it is plain in the same way, with one
``onnx::Concat`` call with a constant int ``axis`` whose inputs are (bare names of) distinct
input ports of the node, each fed by one plain edge from the Relu node of a different pair, the
only edge leaving that Relu's one output port. The Relus may then compute their values into
the parts of one array that is the Concat's value when it reads exactly those parts (the
interpreter checks that, and the parts' shapes, when it runs).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .parts import CallPlan, GraphPlan, NodePlan


@dataclass(frozen=True)
class ConvRelu:
    """A Conv node and the Relu node that alone reads its output, joined by edge ``edge``."""

    conv: str
    #: the Conv call's parameter, which is the Conv node's output port ``conv_port``
    conv_param: str
    conv_port: str
    relu: str
    relu_param: str
    #: the Relu node's input port that the edge feeds
    relu_port: str
    edge: str


def _bare(text: object, tree: ast.Expression | None) -> str | None:
    """The name an expression is exactly, else None."""
    if tree is None or not isinstance(tree.body, ast.Name):
        return None
    return tree.body.id


def _single_call(node: NodePlan, op: str) -> tuple[str, CallPlan] | None:
    """The one call of ``op`` of a plain node (every other parameter a constant), else None."""
    if node.functions:
        return None
    found = None
    for pp in node.parameters:
        if pp.stateful or pp.derivative is not None or pp.conditions or pp.initial is not None:
            return None
        if pp.call is not None:
            if found is not None or pp.call.schema is None or pp.call.name != op:
                return None
            found = (pp.id, pp.call)
        elif pp.value is None or pp.value.expr is not None:
            return None
    return found


def _only_output(node: NodePlan, name: str) -> str | None:
    """The id of ``node``'s one output port when its value is exactly ``name``, else None."""
    if len(node.outputs) != 1:
        return None
    oid, vp = node.outputs[0]
    if vp.expr is None or _bare(vp.text, vp.expr.tree) != name:
        return None
    return oid


def conv_relu_pairs(plan: GraphPlan) -> list[ConvRelu]:
    """The Conv -> Relu pairs of ``plan`` that may run as one (see the module docstring)."""
    return _relu_pairs(plan, "onnx::Conv", lambda call: True)


def inference_bn(call: CallPlan) -> bool:
    """Whether a BatchNormalization call gives its value ``Y`` alone, in inference mode: no
    ``training_mode`` or a constant 0, and its first output only (not kept as a tuple)."""
    if call.keep_tuple or call.outputs_wanted not in (None, 1):
        return False
    mode = dict(call.args).get("training_mode")
    if mode is None:
        return True
    if mode.expr is not None or isinstance(mode.const, (list, tuple, dict, str)):
        return False
    try:
        return mode.const is not None and float(mode.const) == 0
    except (TypeError, ValueError):
        return False


def bn_relu_pairs(plan: GraphPlan) -> list[ConvRelu]:
    """The BatchNormalization -> Relu pairs of ``plan`` that may run as one: the same rules
    as a Conv -> Relu pair (see the module docstring), with an inference-mode
    BatchNormalization whose value is its output ``Y`` alone in place of the Conv. (The
    fields named ``conv`` are the BatchNormalization node's.) The backends compute the Relu
    in the same pass as the normalization, each value bit for bit what its node computes,
    and both nodes keep their own values."""
    return _relu_pairs(plan, "onnx::BatchNormalization", inference_bn)


def conv_bn_pairs(plan: GraphPlan) -> list[ConvRelu]:
    """The Conv -> BatchNormalization pairs of ``plan`` (the same rules as a Conv -> Relu
    pair, with an inference-mode BatchNormalization whose input ``X`` is the edge's port in
    place of the Relu; the fields named ``relu`` are its). The compiled backend computes the
    normalization (and, when it is paired with a Relu too, the Relu) of each value as its
    convolution kernel writes it, each value bit for bit what its node computes."""
    return _relu_pairs(
        plan, "onnx::Conv", lambda call: True, "onnx::BatchNormalization", inference_bn
    )


def _relu_pairs(
    plan: GraphPlan,
    op: str,
    accept,
    reader_op: str = "onnx::Relu",
    reader_accept=lambda call: True,
) -> list[ConvRelu]:
    """The pairs of a node of one call of ``op`` (that ``accept`` takes) and the node of one
    call of ``reader_op`` (that ``reader_accept`` takes; a Relu) that alone reads its output
    as its input ``X``."""
    if plan.scheduling_mode != "standard" or plan.psyneulink:
        return []
    conds = plan.graph.conditions
    own = set(conds.node_specific) if conds is not None else set()
    readers: dict[tuple[str, str], list] = {}
    for ep in plan.edges:
        readers.setdefault((ep.sender, ep.sender_port), []).append(ep)
    pairs = []
    for nid, node in plan.nodes.items():
        if nid in own:
            continue
        first = _single_call(node, op)
        if first is None or not accept(first[1]):
            continue
        port = _only_output(node, first[0])
        edges = readers.get((nid, port), []) if port is not None else []
        if len(edges) != 1:
            continue
        ep = edges[0]
        if ep.has_weight or ep.matrix is not None or ep.receiver == nid or ep.receiver in own:
            continue
        if sum(e.receiver_port == ep.receiver_port for e in plan.incoming[ep.receiver]) != 1:
            continue
        relu = _single_call(plan.nodes[ep.receiver], reader_op)
        if relu is None or relu[1].input_names[:1] != ["X"] or not reader_accept(relu[1]):
            continue
        x = dict(relu[1].args).get("X")
        if x is None or x.expr is None or _bare(x.text, x.expr.tree) != ep.receiver_port:
            continue
        pairs.append(ConvRelu(nid, first[0], port, ep.receiver, relu[0], ep.receiver_port, ep.id))
    return pairs


@dataclass(frozen=True)
class ConcatOfRelus:
    """A Concat node whose inputs, in order, are the Relu nodes ``relus`` of fused pairs."""

    concat: str
    param: str
    #: the Concat node's input ports, in the call's order
    ports: tuple[str, ...]
    relus: tuple[str, ...]
    axis: int


def concat_of_relus(plan: GraphPlan, pairs: list[ConvRelu]) -> list[ConcatOfRelus]:
    """The Concat nodes of ``plan`` whose inputs are all Relus of ``pairs`` (see the module
    docstring)."""
    if not pairs:
        return []
    conds = plan.graph.conditions
    own = set(conds.node_specific) if conds is not None else set()
    relu_of = {p.relu: p for p in pairs}
    readers: dict[tuple[str, str], int] = {}
    for ep in plan.edges:
        readers[ep.sender, ep.sender_port] = readers.get((ep.sender, ep.sender_port), 0) + 1
    found = []
    for nid, node in plan.nodes.items():
        call = _single_call(node, "onnx::Concat") if nid not in own else None
        if call is None or _only_output(node, call[0]) is None:
            continue
        args = dict(call[1].args)
        axis = args.get("axis")
        if axis is None or axis.expr is not None or type(axis.const) is not int:
            continue
        ports = []
        for name in call[1].input_names:
            vp = args.get(name) if name is not None else None
            ports.append(None if vp is None or vp.expr is None else _bare(vp.text, vp.expr.tree))
        inputs = {ip.id for ip in node.inputs}
        if len(ports) < 2 or None in ports or len(set(ports)) != len(ports):
            continue
        if not set(ports) <= inputs:
            continue
        relus = []
        for port in ports:
            edges = [e for e in plan.incoming[nid] if e.receiver_port == port]
            ep = edges[0] if len(edges) == 1 else None
            if ep is None or ep.has_weight or ep.matrix is not None or ep.sender not in relu_of:
                break
            sender = plan.nodes[ep.sender]
            if len(sender.outputs) != 1 or readers[ep.sender, ep.sender_port] != 1:
                break
            relus.append(ep.sender)
        if len(relus) == len(ports) and len(set(relus)) == len(relus):
            found.append(ConcatOfRelus(nid, call[0], tuple(ports), tuple(relus), axis.const))
    return found
