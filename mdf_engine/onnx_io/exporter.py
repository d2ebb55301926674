"""MDF -> ONNX: a stateless MDF graph as one ONNX ``ModelProto``.

What is exported (see docs/onnx_io.md for the name mapping):

* parameters and node functions calling ``onnx::Op`` become ONNX ``Op`` nodes (their constant
  arguments that are ONNX attributes become attributes);
* the standard functions ONNX can express (linear, logistic, exponential, sin, cos, MatMul,
  Relu, and the trigonometric additions) and plain arithmetic expressions
  (``+ - * / ** @ //``, unary ``-``, comparisons, ``exp/log/sqrt/...`` calls) become small chains
  of ONNX nodes;
* input ports with no incoming edge become graph inputs ``NODE_PORT``; output ports with no
  outgoing edge become graph outputs ``NODE_PORT``;
* constant parameters become initializers ``NODE_PARAM``; an edge becomes an ``Identity`` (weight
  1) or ``Mul`` node (its weight an initializer) named after the edge id.

Stateful models (a parameter whose value refers to itself, a ``time_derivative``, a
``default_initial_value`` or conditions) are refused with an :class:`MDFError` naming the
parameter's path.
"""

from __future__ import annotations

import ast
import os
from typing import Any

import numpy as np

from ..errors import MDFError
from ..expressions import looks_numeric
from ..model import Graph, Model, Node
from ..results import atomic_write_bytes
from .translate import Builder, Translator, Val
from .vocabulary import ELEM, OPSET_FLOOR, STD_FORMULAS

__all__ = [
    "export",
    "to_onnx",
    "choose_opset",
    "port_type",
    "subscripted_calls",
    "function_value",
]


def _ordered_nodes(g: Graph, where: str) -> list[Node]:
    deps = {n.id: {e.sender for e in g.edges if e.receiver == n.id} for n in g.nodes}
    order: list[Node] = []
    done: set[str] = set()
    pending = list(g.nodes)
    while pending:
        ready = [n for n in pending if deps[n.id] <= done]
        if not ready:
            raise MDFError("the graph has a cycle of edges; ONNX graphs must be acyclic", where)
        for n in ready:
            order.append(n)
            done.add(n.id)
            pending.remove(n)
    return order


def _refuse_stateful(model: Model, g: Graph, where: str) -> None:
    for n in g.nodes:
        for p in n.parameters:
            path = f"{where}.nodes.{n.id}.parameters.{p.id}"
            if p.is_stateful() or p.conditions:
                why = (
                    "a time_derivative"
                    if p.time_derivative is not None
                    else "a default_initial_value"
                    if p.default_initial_value is not None
                    else "conditions"
                    if p.conditions
                    else "a value that refers to itself"
                )
                raise MDFError(
                    f"parameter '{n.id}.{p.id}' is stateful ({why}); export it "
                    "with --step or --steps N (onnx_io.step_export)",
                    path,
                )
    cs = g.conditions
    if cs is not None and (cs.node_specific or cs.termination):
        raise MDFError(
            "graphs with scheduling conditions are exported with --step or "
            "--steps N (onnx_io.step_export)",
            f"{where}.conditions",
        )


def choose_opset(model: Model, g: Graph) -> int:
    """The opset an export of ``g`` writes (docs/onnx_io.md: the model's, else the newest
    ``since`` of the ``onnx::`` operators used, at least OPSET_FLOOR)."""
    from ..plan import load_function_libraries
    from ..registry import REGISTRY

    if model.onnx_opset_version:
        return int(model.onnx_opset_version)
    load_function_libraries(
        [f.function for n in g.nodes for f in list(n.parameters) + list(n.functions) if f.function]
    )
    newest = OPSET_FLOOR
    for n in g.nodes:
        for f in list(n.parameters) + list(n.functions):
            if f.function and f.function.startswith("onnx::") and f.function in REGISTRY:
                newest = max(newest, REGISTRY.lookup(f.function).since)
    return newest


def port_type(port: Any, default: str) -> tuple[int, list[int] | None]:
    """(ONNX element type, shape or None) of an input port (its ``type``, else ``default``)."""
    t = (port.type or "").lower()
    elem = None
    for key, code in (
        ("float64", 11),
        ("double", 11),
        ("float32", 1),
        ("float", None),
        ("int64", 7),
        ("int32", 7),
        ("int", 7),
        ("bool", 9),
    ):
        if key in t:
            elem = code
            break
    if elem is None:
        elem = ELEM[default]
    shape = None
    if port.shape is not None:
        shape = [int(s) for s in port.shape]
    elif port.default_value is not None:
        shape = list(np.shape(port.default_value))
    return elem, shape


def to_onnx(
    model: Any, graph: str | None = None, dtype: str | None = None, opset: int | None = None
) -> Any:
    """A stateless MDF graph as an ``onnx.ModelProto``. Floats are written in ``dtype``
    (``float32``/``float64``; None: float64 if an input port's type says so, else float32)."""
    import onnx
    from onnx import helper

    from ..loader import load
    from ..plan import load_function_libraries, plan_graph

    model = load(model)
    g = model.get_graph(graph)
    where = f"graphs.{g.id}"
    if dtype is None:
        types = [(ip.type or "").lower() for n in g.nodes for ip in n.input_ports]
        dtype = "float64" if any(t in ("float64", "double") for t in types) else "float32"
    if dtype not in ("float32", "float64"):
        raise MDFError(f"dtype must be float32 or float64, got {dtype!r}")
    _refuse_stateful(model, g, where)
    load_function_libraries(
        [f.function for n in g.nodes for f in list(n.parameters) + list(n.functions) if f.function]
    )
    plan_graph(model, g)  # every expression and call is checked as the engine would
    opset = opset or choose_opset(model, g)
    b = Builder(dtype, opset)
    order = _ordered_nodes(g, where)
    out_edges = {(e.sender, e.sender_port) for e in g.edges}
    port_value: dict[tuple[str, str], Val] = {}
    graph_inputs: list[Any] = []
    graph_outputs: list[tuple[str, Val]] = []
    for node in order:
        nw = f"{where}.nodes.{node.id}"
        scope: dict[str, Val] = {}
        tr = Translator(b, node, nw, scope)
        for ip in node.input_ports:
            vname = f"{node.id}_{ip.id}"
            incoming = [e for e in g.edges if e.receiver == node.id and e.receiver_port == ip.id]
            if not incoming:
                name = b.fresh(vname)
                elem, shape = port_type(ip, dtype)
                graph_inputs.append(helper.make_tensor_value_info(name, elem, shape))
                scope[ip.id] = Val(name, {1: "float", 11: "float", 7: "int", 9: "bool"}[elem])
                continue
            if len(incoming) > 1 and ip.reduce == "overwrite":
                raise MDFError(
                    f"input port '{ip.id}' receives {len(incoming)} edges; only "
                    "reduce add/multiply can be exported",
                    f"{nw}.input_ports.{ip.id}",
                )
            sent = []
            for e in incoming:
                src = port_value[(e.sender, e.sender_port)]
                w = e.weight
                if isinstance(w, (int, float)) and not isinstance(w, bool) and w == 1:
                    # an unweighted edge: an Identity named after the edge
                    src = tr.materialize(src, f"{e.id}_in")
                    out = b.fresh(vname if len(incoming) == 1 else f"{e.id}_out")
                    b.node("Identity", [src.name], [out], e.id)
                    sent.append((e, Val(out, src.kind)))
                    continue
                wv = tr.expr(w, f"{e.id}_weight", f"edges.{e.id}.weight")
                wname = tr.materialize(wv, f"{e.id}_weight", "float")
                src = tr.as_kind(src, "float", f"{e.id}_in")
                out = b.fresh(vname if len(incoming) == 1 else f"{e.id}_out")
                b.node("Mul", [src.name, wname.name], [out], e.id)
                sent.append((None, Val(out, "float")))
            if len(sent) == 1:
                scope[ip.id] = sent[0][1]
            else:
                names = [
                    tr.as_kind(v, "float", f"{vname}_{k}").name for k, (_, v) in enumerate(sent)
                ]
                out = b.fresh(vname)
                b.node("Sum" if ip.reduce == "add" else "Mul", names, [out], f"{node.id}/{ip.id}")
                if ip.reduce == "multiply" and len(names) > 2:
                    raise MDFError(
                        "reduce multiply of more than 2 edges cannot be exported",
                        f"{nw}.input_ports.{ip.id}",
                    )
                scope[ip.id] = Val(out, "float")
        # constants first: the engine knows every constant parameter from the first step
        for p in node.parameters:
            if p.function is None and not (
                isinstance(p.value, str) and looks_numeric(p.value) is None
            ):
                scope[p.id] = Val(
                    const=_list_array(p.value, f"{nw}.parameters.{p.id}.value")
                    if isinstance(p.value, list)
                    else (looks_numeric(p.value) if isinstance(p.value, str) else p.value),
                    hint=f"{node.id}_{p.id}",
                    typed=isinstance(p.value, (np.ndarray, np.generic)),
                )
        subscripted = subscripted_calls(node)
        items = [("functions", f) for f in _functions_in_order(node)] + [
            ("parameters", p) for p in node.parameters
        ]
        for kind, item in items:
            w = f"{kind}.{item.id}"
            target = f"{node.id}_{item.id}"
            if item.function is not None:
                scope[item.id] = function_value(tr, item, target, w, subscripted.get(item.id))
            elif isinstance(item.value, str) and looks_numeric(item.value) is None:
                scope[item.id] = tr.expr(item.value, target, f"{w}.value")
        for op_ in node.output_ports:
            target = f"{node.id}_{op_.id}"
            v = tr.expr(op_.value, target, f"output_ports.{op_.id}.value")
            v = tr.materialize(v, target + "_value")
            if v.name != target or v.name in {i.name for i in graph_inputs}:
                out = b.fresh(target)
                b.node("Identity", [v.name], [out], f"{node.id}/{op_.id}")
                v = Val(out, v.kind)
            port_value[(node.id, op_.id)] = v
            if (node.id, op_.id) not in out_edges:
                graph_outputs.append((v.name, v))
    if not graph_outputs:
        raise MDFError("the graph has no output port without outgoing edges to export", where)
    outs = [
        helper.make_tensor_value_info(n, {"float": ELEM[dtype], "int": 7, "bool": 9}[v.kind], None)
        for n, v in graph_outputs
    ]
    gp = helper.make_graph(
        b.nodes,
        g.id,
        graph_inputs,
        outs,
        initializer=b.inits,
        doc_string=f"exported by mdf_engine from MDF model {model.id}",
    )
    mp = helper.make_model(
        gp, opset_imports=[helper.make_opsetid("", opset)], producer_name="mdf_engine"
    )
    mp.ir_version = min(mp.ir_version, 8 if opset <= 16 else 9)
    _fix_output_types(mp)
    try:
        onnx.checker.check_model(mp)
    except Exception as e:
        raise MDFError(f"the exported ONNX model does not check: {e}", where) from None
    return mp


def _fix_output_types(mp: Any) -> None:
    """Give graph outputs the element types and shapes ONNX shape inference finds."""
    import onnx

    probe = onnx.ModelProto()
    probe.CopyFrom(mp)
    del probe.graph.output[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(probe)
    except Exception:
        return
    found = {vi.name: vi for vi in inferred.graph.value_info}
    for o in mp.graph.output:
        vi = found.get(o.name)
        if vi is not None and vi.type.tensor_type.elem_type:
            o.type.CopyFrom(vi.type)


def _functions_in_order(node: Node) -> list[Any]:
    """Node functions in dependency order (as the engine's plan evaluates them)."""
    from ..expressions import names_in

    ids = {f.id for f in node.functions}
    pending, done, order = list(node.functions), set(), []
    while pending:
        ready = []
        for f in pending:
            texts = list((f.args or {}).values()) + [f.value]
            needed = set().union(*[names_in(t) for t in texts]) & ids
            if needed <= done:
                ready.append(f)
        if not ready:  # a cycle: the plan has already refused it; keep the declared order
            return order + pending
        for f in ready:
            order.append(f)
            done.add(f.id)
            pending.remove(f)
    return order


def subscripted_calls(node: Node) -> dict[str, int]:
    """For each name used as ``name[k]`` in the node, 1 + the largest k."""
    out: dict[str, int] = {}
    texts = (
        [o.value for o in node.output_ports]
        + [p.value for p in node.parameters]
        + [v for p in list(node.parameters) + list(node.functions) for v in (p.args or {}).values()]
    )
    for t in texts:
        if not isinstance(t, str):
            continue
        try:
            tree = ast.parse(t.strip(), mode="eval")
        except SyntaxError:
            continue
        for s in ast.walk(tree):
            if (
                isinstance(s, ast.Subscript)
                and isinstance(s.value, ast.Name)
                and isinstance(s.slice, ast.Constant)
                and isinstance(s.slice.value, int)
            ):
                out[s.value.id] = max(out.get(s.value.id, 0), s.slice.value + 1)
    return out


def function_value(tr: Translator, item: Any, target: str, what: str, n_sub: int | None) -> Val:
    """The value of a parameter or function ``item`` that calls a function (standard or
    ``onnx::``), with its arguments translated in ``tr``'s scope; ``n_sub`` outputs used."""
    from ..registry import REGISTRY

    fname = item.function
    args = dict(item.args or {})
    args.pop("opset", None)
    if fname.startswith("onnx::"):
        return tr.onnx_call(fname[6:], args, target, what, n_sub)
    name = fname if fname in REGISTRY else fname
    if name in STD_FORMULAS:
        bound = {k: tr.expr(v, f"{target}_{k}", f"{what}.args.{k}") for k, v in args.items()}
        return tr.std(name, bound, target, what)
    raise MDFError(
        f"function '{fname}' has no ONNX export (exported: onnx:: operators and "
        f"{', '.join(sorted(STD_FORMULAS))})",
        f"{tr.where}.{what}",
    )


def export(
    model: Any,
    path: str | os.PathLike,
    graph: str | None = None,
    dtype: str | None = None,
    opset: int | None = None,
) -> Any:
    """Write a stateless MDF graph as an ONNX file (atomically); returns the ModelProto."""
    mp = to_onnx(model, graph=graph, dtype=dtype, opset=opset)
    atomic_write_bytes(path, mp.SerializeToString())
    return mp


def _list_array(value: list, where: str) -> np.ndarray:
    """A parameter's list value as an array (a ragged list is an MDFError naming it)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as e:
        raise MDFError(f"expected a rectangular array of numbers ({e})", where) from None
