"""ONNX -> MDF: every ONNX node becomes an MDF node calling ``onnx::Op``.

Mapping (see docs/onnx_io.md):

* each ONNX node becomes one MDF node (id from the ONNX node name, else ``<OpType>_<k>``) with one
  parameter that calls ``onnx::<OpType>``; its ONNX attributes become constant arguments;
* each ONNX value gets one identifier (:class:`~mdf_engine.onnx_io.names.NamePool`), used as the id
  of the producer's output port and of every consumer's input port;
* initializers (and ``Constant`` nodes that feed other nodes) become constant parameters of the
  nodes that use them (arrays keep their dtype in memory);
* graph inputs become input ports (with shape and type) of every node that reads them, all with
  the same id, so one Simulation initializer key feeds them all;
* an output port per ONNX output: ``value: f`` for a one-output call, ``f[k]`` for the k-th
  output of a function returning several;
* ``model.metadata["onnx"]`` records which ports hold the ONNX graph's inputs and outputs
  (:func:`run_onnx` uses it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from ..model import Edge, Graph, InputPort, Model, Node, OutputPort, Parameter
from ..onnx_ops._common import ONNX_DTYPES
from ..sidecar import MIN_ELEMENTS
from .names import NamePool, identifier

__all__ = [
    "import_model",
    "import_graph",
    "Imported",
    "run_onnx",
    "load_proto",
    "portable",
    "save_imported",
    "set_inputs",
    "read_feeds",
]

#: ONNX TensorProto element types by numpy dtype name, and back: the ONNX operators' one table
#: (``onnx_ops._common.ONNX_DTYPES``) less what an MDF value does not hold (strings, complex).
_NP_TO_ONNX = {
    np.dtype(t).name: code for code, t in ONNX_DTYPES.items() if np.dtype(t).kind not in "USc"
}
_ONNX_TO_NP = {v: k for k, v in _NP_TO_ONNX.items()}


def load_proto(source: Any) -> Any:
    """An ``onnx.ModelProto`` from a path or a ModelProto (MDFError for anything else)."""
    import onnx

    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = str(source)
        if not os.path.exists(path):
            raise MDFError("no ONNX file at this path", source=path)
        try:
            return onnx.load(path)
        except Exception as e:  # onnx raises DecodeError and friends
            raise MDFError(
                f"not a readable ONNX model: {type(e).__name__}: {e}", source=path
            ) from None
    raise MDFError(f"expected an ONNX file path or onnx.ModelProto, got {type(source).__name__}")


def _opset_of(proto: Any) -> int:
    """The model's ai.onnx opset (other domains are refused where a node uses them)."""
    opset = None
    for o in proto.opset_import:
        if o.domain in ("", "ai.onnx"):
            opset = o.version
    if opset is None:
        raise MDFError("the ONNX model imports no ai.onnx opset")
    return opset


def _constant_value(node: Any) -> np.ndarray | None:
    """The tensor a ``Constant`` node produces, when given by one of its value attributes."""
    from ..onnx_ops.graph import attribute_value

    for a in node.attribute:
        v = attribute_value(a)
        if a.name == "value":
            return np.asarray(v)
        if a.name == "value_float":
            return np.array(v, dtype=np.float32)
        if a.name == "value_floats":
            return np.array(v, dtype=np.float32)
        if a.name == "value_int":
            return np.array(v, dtype=np.int64)
        if a.name == "value_ints":
            return np.array(v, dtype=np.int64)
    return None


def _multi_output(schema: Any, attrs: Mapping[str, Any], n_outputs: int) -> bool:
    """Whether the kernel returns a tuple of several outputs (to be indexed ``f[k]``)."""
    op = schema.op
    if op == "Split":
        return n_outputs > 1
    if op == "BatchNormalization":
        return bool(attrs.get("training_mode", 0)) or (schema.since < 14 and n_outputs > 1)
    return len(schema.outputs) > 1


def _value_info(vi: Any) -> tuple[tuple[int, ...] | None, str | None]:
    t = vi.type.tensor_type
    dtype = _ONNX_TO_NP.get(t.elem_type)
    shape = None
    if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
        shape = tuple(int(d.dim_value) for d in t.shape.dim)
    return shape, dtype


def import_model(source: Any, model_id: str | None = None) -> Model:
    """An MDF :class:`Model` (one graph) from an ONNX file path or ``onnx.ModelProto``; an
    MDFError names the file."""
    from ..simulation import name_file
    from .step_import import import_stateful, stateful_metadata  # stateful exports: their state

    try:
        proto = load_proto(source)
        if (meta := stateful_metadata(proto)) is not None:
            return import_stateful(proto, meta, model_id)
        return import_graph(proto, model_id).model
    except MDFError as e:
        raise name_file(e, source) from None


@dataclass
class Imported:
    """An imported ONNX graph: the model, the MDF node id of each ONNX node name, and the
    ``(node, output port)`` holding each ONNX value that a node computes."""

    model: Model
    node_ids: dict[str, str]
    producer: dict[str, tuple[str, str]]


def import_graph(proto: Any, model_id: str | None = None) -> Imported:
    """The stateless import of ``proto``'s graph (ONNX nodes as MDF nodes), with where each
    ONNX node and value went (the stateful importer closes state loops with them)."""
    from onnx import AttributeProto

    from ..onnx_ops import schema as onnx_schema
    from ..onnx_ops.graph import attribute_value, tensor_array, topological_order

    opset = _opset_of(proto)
    g = proto.graph
    pool = NamePool()  # ids of ports and parameters (they share one scope per node)
    node_pool = NamePool()  # ids of nodes and edges
    # String attribute values must never be read as names of ports or parameters.
    for n in g.node:
        for a in n.attribute:
            if a.type == AttributeProto.STRING:
                pool.taken.add(a.s.decode("utf-8", "replace"))
    # Nor may a port be named like an argument of a call: the engine binds a call's arguments
    # one after the other, so ``B: A, A: B`` would read the argument A instead of the port A.
    for n in g.node:
        if n.domain in ("", "ai.onnx"):
            try:
                pool.taken.update(onnx_schema(n.op_type, opset).argument_names)
            except MDFError:
                pass  # reported with the node below
    consts: dict[str, np.ndarray] = {t.name: tensor_array(t) for t in g.initializer}
    inputs = [i for i in g.input if i.name not in consts]
    input_names = {i.name for i in inputs}
    graph_outputs = [o.name for o in g.output]
    nodes_in = topological_order(list(g.node), set(consts) | input_names, {})
    # Constant nodes whose outputs only feed other nodes become constants on the consumers.
    kept = []
    for n in nodes_in:
        if (
            n.op_type == "Constant"
            and n.domain in ("", "ai.onnx")
            and n.output[0] not in graph_outputs
        ):
            v = _constant_value(n)
            if v is not None:
                consts[n.output[0]] = v
                continue
        kept.append(n)

    producer: dict[str, tuple[str, str]] = {}
    node_ids: dict[str, str] = {}
    mdf_nodes: list[Node] = []
    edges: list[Edge] = []
    in_info = {i.name: _value_info(i) for i in inputs}
    for k, on in enumerate(kept):
        where = f"ONNX node '{on.name or on.op_type}' ({on.op_type})"
        if on.domain not in ("", "ai.onnx"):
            raise MDFError(f"{where}: domain '{on.domain}' is not supported")
        try:
            sch = onnx_schema(on.op_type, opset)
        except MDFError as e:
            raise MDFError(f"{where}: {e.message}") from None
        nid = node_pool.get(on.name or f"{on.op_type}_{k}", "node", "node")
        node_ids[on.name] = nid
        node = Node(id=nid)
        fid = pool.fresh(on.op_type.lower(), "f")
        args: dict[str, Any] = {}
        port_of: dict[str, str] = {}
        n_in = len(on.input)
        if n_in > len(sch.inputs) and not sch.variadic:
            raise MDFError(
                f"{where}: {n_in} inputs given, onnx::{on.op_type} at opset {opset} "
                f"takes {len(sch.inputs)}"
            )
        for i, vname in enumerate(on.input):
            arg = sch.inputs[i] if i < len(sch.inputs) else f"{sch.inputs[-1]}{i}"
            if not vname:
                continue
            vid = pool.get(vname)
            if vname in consts:
                if vid not in port_of.values() and node.get("parameters", vid) is None:
                    node.parameters.append(Parameter(id=vid, value=consts[vname]))
            elif vname in port_of:
                pass
            else:
                port_of[vname] = vid
                if vname in input_names:
                    shape, dtype = in_info[vname]
                    node.input_ports.append(InputPort(id=vid, shape=shape, type=dtype))
                elif vname in producer:
                    node.input_ports.append(InputPort(id=vid))
                    snode, sport = producer[vname]
                    edges.append(
                        Edge(
                            id=node_pool.fresh(f"{snode}_{sport}_{nid}", "e"),
                            sender=snode,
                            sender_port=sport,
                            receiver=nid,
                            receiver_port=vid,
                        )
                    )
                else:
                    raise MDFError(f"{where}: no value named '{vname}'")
            args[arg] = vid
        attrs: dict[str, Any] = {}
        for a in on.attribute:
            if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
                raise MDFError(
                    f"{where}: subgraph attribute '{a.name}' (control flow) cannot "
                    "be imported as MDF nodes"
                )
            if a.name not in sch.attributes:
                raise MDFError(
                    f"{where}: onnx::{on.op_type} at opset {opset} has no attribute "
                    f"'{a.name}' (known: {', '.join(sch.attributes) or 'none'})"
                )
            attrs[a.name] = attribute_value(a)
        outs = list(on.output)
        if (
            "num_outputs" in sch.attributes
            and attrs.get("num_outputs") is None
            and attrs.get("split") is None
        ):
            attrs["num_outputs"] = len(outs)
        args.update(attrs)
        node.parameters.append(Parameter(id=fid, function=f"onnx::{on.op_type}", args=args))
        multi = _multi_output(sch, attrs, len(outs))
        for j, oname in enumerate(outs):
            if not oname:
                continue
            oid = pool.get(oname)
            node.output_ports.append(OutputPort(id=oid, value=f"{fid}[{j}]" if multi else fid))
            producer[oname] = (nid, oid)
        mdf_nodes.append(node)

    onnx_inputs = {i.name: pool.get(i.name) for i in inputs}
    onnx_outputs: dict[str, str] = {}
    for oname in graph_outputs:
        if oname not in producer:  # an output that is a graph input or a constant
            vid = pool.get(oname)
            nid = node_pool.fresh(f"output_{oname}", "node")
            node = Node(id=nid)
            if oname in consts:
                node.parameters.append(Parameter(id=vid + "_value", value=consts[oname]))
                src = vid + "_value"
            elif oname in input_names:
                shape, dtype = in_info[oname]
                node.input_ports.append(InputPort(id=vid, shape=shape, type=dtype))
                src = vid
            else:
                raise MDFError(f"ONNX graph output '{oname}' is never computed")
            out_id = pool.fresh(f"{vid}_out", "v")
            node.output_ports.append(OutputPort(id=out_id, value=src))
            mdf_nodes.append(node)
            producer[oname] = (nid, out_id)
        onnx_outputs[oname] = ".".join(producer[oname])
    graph = Graph(id=identifier(g.name or "onnx_graph", "graph"), nodes=mdf_nodes, edges=edges)
    mid = model_id or identifier(g.name or "onnx_model", "model")
    model = Model(
        id=mid,
        graphs=[graph],
        onnx_opset_version=opset,
        metadata={"onnx": {"inputs": onnx_inputs, "outputs": onnx_outputs}},
    )
    return Imported(model, node_ids, producer)


def run_onnx(source: Any, feeds: Mapping[str, Any], backend: str = "interpreted") -> dict:
    """Import an ONNX model and run it once in our engine; results keyed by the ONNX graph's
    output names (``feeds`` keyed by its input names)."""
    from ..simulation import name_file

    try:
        return _run_onnx(source, feeds, backend)
    except MDFError as e:
        raise name_file(e, source) from None


def _run_onnx(source: Any, feeds: Mapping[str, Any], backend: str) -> dict:
    from ..simulation import Simulation

    model = source if isinstance(source, Model) else import_model(source)
    meta = (model.metadata or {}).get("onnx")
    if not meta:
        raise MDFError(
            "the model carries no ONNX input/output map (metadata 'onnx'); import "
            "it with mdf_engine.onnx_io.import_model"
        )
    unknown = [k for k in feeds if k not in meta["inputs"]]
    if unknown:
        raise MDFError(
            f"feed '{unknown[0]}' is not an input of the ONNX graph (inputs: "
            f"{', '.join(meta['inputs']) or 'none'})"
        )
    missing = [k for k in meta["inputs"] if k not in feeds]
    if missing:
        raise MDFError(f"no feed for ONNX graph input '{missing[0]}'")
    init = {}
    for k, v in feeds.items():
        try:
            init[meta["inputs"][k]] = np.asarray(v)
        except (ValueError, TypeError, OverflowError) as e:  # a ragged list
            raise MDFError(f"feed '{k}' is not an array: {e}") from None
    sim = Simulation(model, backend=backend)
    sim.evaluate(initializer=init)
    out = {}
    for name, where in meta["outputs"].items():
        nid, port = where.split(".", 1)
        out[name] = sim.value(nid, port)
    return out


def portable(model: Model) -> Model:
    """The model with array constants that JSON/YAML would lose the dtype of (anything but
    float64, int64 and bool) written as ``onnx::Cast`` calls, so a saved file computes in the
    same precision. Changes ``model`` in place and returns it."""
    for g in model.graphs:
        for n in g.nodes:
            for p in list(n.parameters):
                v = p.value
                for x in [v, *(p.args or {}).values()]:
                    _check_storable(x, f"{n.id}.{p.id}")
                if (
                    isinstance(v, (np.ndarray, np.generic))
                    and v.dtype.name in _NP_TO_ONNX
                    and v.dtype.name not in ("float64", "int64", "bool")
                ):
                    p.function = "onnx::Cast"
                    p.args = {"input": v.tolist(), "to": _NP_TO_ONNX[v.dtype.name]}
                    p.value = None
                if p.args:
                    for k, a in list(p.args.items()):
                        if (
                            isinstance(a, np.ndarray)
                            and a.dtype.name in _NP_TO_ONNX  # (bfloat16, float8: as floats)
                            and a.dtype.name not in ("float64", "int64", "bool")
                        ):
                            extra = Parameter(
                                id=_fresh_param(n, f"{p.id}_{k}"),
                                function="onnx::Cast",
                                args={"input": a.tolist(), "to": _NP_TO_ONNX[a.dtype.name]},
                            )
                            n.parameters.insert(n.parameters.index(p), extra)
                            p.args[k] = extra.id
    return model


def _check_storable(v: Any, where: str) -> None:
    """A value an MDF file can hold (a complex tensor has no MDF form: refused by name, not
    as an internal error of the JSON/YAML writer)."""
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind == "c":
        raise MDFError(f"'{where}' is an ONNX tensor of type {v.dtype.name}, which MDF cannot hold")


def _fresh_param(node: Node, base: str) -> str:
    taken = {
        x.id
        for x in list(node.parameters)
        + list(node.input_ports)
        + list(node.output_ports)
        + list(node.functions)
    }
    s, k = identifier(base), 1
    out = s
    while out in taken:
        out = f"{s}_{k}"
        k += 1
    return out


def set_inputs(model: Model, feeds: Mapping[str, Any]) -> Model:
    """Give the input ports of the ONNX graph inputs ``feeds`` (keyed by ONNX input name) as
    their ``default_value``, so the model runs without an initializer (``mdf run``). Changes
    ``model`` in place and returns it."""
    meta = (model.metadata or {}).get("onnx") or {}
    inputs = meta.get("inputs", {})
    for name in feeds:
        if name not in inputs:
            raise MDFError(
                f"'{name}' is not an input of the ONNX graph (inputs: "
                f"{', '.join(inputs) or 'none'})"
            )
    by_port = {inputs[k]: np.asarray(v) for k, v in feeds.items()}
    for g in model.graphs:
        for n in g.nodes:
            for p in n.input_ports:
                if p.id in by_port:
                    p.default_value = by_port[p.id]
    return model


def read_feeds(path: str) -> dict[str, np.ndarray]:
    """Arrays keyed by name from a ``.npz`` file (``allow_pickle=False``: numbers only)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError) as e:
        raise MDFError(f"not a readable .npz file of input arrays: {e}", source=path) from None


def save_imported(model: Model, path: str | os.PathLike, min_elements: int = MIN_ELEMENTS) -> int:
    """Write an imported model as JSON/YAML with its large arrays (at least ``min_elements``
    elements) in the sidecar ``<stem>.weights.npz`` beside it (see :mod:`mdf_engine.sidecar`)
    and the small ones made :func:`portable`. Changes ``model`` like :func:`portable`. Returns
    the number of arrays in the sidecar."""
    from ..loader import save
    from ..sidecar import offload_arrays, write_sidecar

    out, arrays = offload_arrays(model, min_elements)
    out = write_sidecar(out, path, arrays)
    save(portable(out), path)
    return len(arrays)
