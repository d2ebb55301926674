"""A small interpreter for ONNX graphs: runs a ``GraphProto`` node by node through ``onnx_ops.run``.

Used by the control-flow operators (``If``, ``Loop``, ``Scan``) for their bodies, and by anyone
who wants to evaluate an ONNX model file with mdf_engine's kernels::

    from mdf_engine.onnx_ops.graph import run_graph, run_model
    outputs = run_graph(model.graph, {"X": x}, opset=13)      # {output name: value}
    outputs = run_model("model.onnx", {"X": x})                # opset from the model

Rules followed (ONNX IR semantics):

* initializers are values of the graph; a feed with the same name overrides the initializer;
* an empty input name ``''`` is an omitted optional input (passed to the kernel as ``None``), an
  empty output name is an output nobody wants;
* a name not produced in this graph is looked up in ``outer_scope`` (the enclosing graph's
  values), which is how control-flow bodies see their parent's tensors;
* a node whose attribute is a subgraph gets that attribute as a *callable* bound to the current
  scope and opset (see :func:`bind_subgraph`), so nested control flow sees the right names;
* nodes are run in the order given; if a node needs a value that a later node produces, the
  nodes are topologically sorted first.

Only the standard ``ai.onnx`` domain is run. Values are numpy arrays, Python lists of arrays
(sequences) or ``None`` (an empty optional).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import MDFError

__all__ = [
    "run_graph",
    "run_model",
    "bind_subgraph",
    "attribute_value",
    "tensor_array",
    "graph_input_names",
    "graph_output_names",
]


def tensor_array(t: Any) -> np.ndarray:
    """An ONNX ``TensorProto`` (from a file: any content) as a numpy array, or an MDFError:
    negative or huge dims are refused before anything is allocated (the element limit of
    :func:`mdf_engine.limits.check_elements`), and data that does not fill its dims, or of
    an unknown type, is named instead of failing inside onnx."""
    from onnx import numpy_helper

    from ..limits import check_elements

    name = t.name[:80] or "(unnamed)"
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise MDFError(f"ONNX tensor {name!r} has negative dims {dims[:8]}")
    check_elements(dims, f"ONNX tensor {name!r}")
    try:
        return numpy_helper.to_array(t)
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        raise MDFError(
            f"ONNX tensor {name!r}: its data does not fit its dims and type: {e}"
        ) from None


def attribute_value(attr: Any) -> Any:
    """An ONNX ``AttributeProto`` as a kernel keyword value (strings decoded, tensors as arrays,
    subgraphs left as ``GraphProto``)."""
    from onnx import AttributeProto, helper

    if attr.type == AttributeProto.TENSOR:
        return tensor_array(attr.t)
    if attr.type == AttributeProto.TENSORS:
        return [tensor_array(t) for t in attr.tensors]
    if attr.type == AttributeProto.SPARSE_TENSOR:
        return _sparse_to_dense(attr.sparse_tensor)
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8") for v in value]
    return value


def _sparse_to_dense(sp: Any) -> np.ndarray:
    from ..limits import check_elements

    values = tensor_array(sp.values)
    idx = tensor_array(sp.indices).astype(np.int64)
    dims = tuple(sp.dims)
    if any(d < 0 for d in dims):
        raise MDFError(f"ONNX sparse tensor has negative dims {list(dims)[:8]}")
    check_elements(dims, "ONNX sparse tensor")
    dense = np.zeros(int(np.prod(dims)) if dims else 1, dtype=values.dtype)
    try:
        if idx.ndim == 2:  # [nnz, rank] coordinates
            idx = np.ravel_multi_index(idx.T, dims)
        dense[idx.reshape(-1)] = values.reshape(-1)
    except (ValueError, IndexError) as e:
        raise MDFError(
            f"ONNX sparse tensor: indices do not fit its dims {list(dims)[:8]}: {e}"
        ) from None
    return dense.reshape(dims)


def graph_input_names(graph: Any) -> list[str]:
    """Names of the graph's real inputs (those that are not also initializers)."""
    inits = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in inits]


def graph_output_names(graph: Any) -> list[str]:
    return [o.name for o in graph.output]


def bind_subgraph(graph: Any, opset: int | None, scope: Mapping[str, Any] | None) -> Callable:
    """A subgraph as a callable ``body(*inputs) -> list of outputs`` (positional, in the order of
    the graph's declared inputs and outputs), seeing ``scope`` as its outer scope."""
    in_names = [i.name for i in graph.input]
    out_names = graph_output_names(graph)

    def body(*inputs: Any) -> list[Any]:
        if len(inputs) != len(in_names):
            raise MDFError(
                f"subgraph '{graph.name}' takes {len(in_names)} inputs, got {len(inputs)}"
            )
        res = run_graph(graph, dict(zip(in_names, inputs)), opset, outer_scope=scope)
        return [res[n] for n in out_names]

    body.graph = graph  # type: ignore[attr-defined]
    return body


class _Scope(Mapping):
    """Local values first, then the outer scope (without copying it)."""

    def __init__(self, local: dict[str, Any], outer: Mapping[str, Any] | None):
        self.local = local
        self.outer = outer or {}

    def __getitem__(self, key: str) -> Any:
        if key in self.local:
            return self.local[key]
        return self.outer[key]

    def __contains__(self, key: object) -> bool:
        return key in self.local or key in self.outer

    def __iter__(self):
        seen = set(self.local)
        yield from self.local
        for k in self.outer:
            if k not in seen:
                yield k

    def __len__(self) -> int:
        return len(set(self.local) | set(self.outer))


def topological_order(nodes: list[Any], known: set[str], scope: Mapping[str, Any]) -> list[Any]:
    """Nodes in an order where each node's inputs are available (stable for sorted graphs)."""
    order, pending, avail = [], list(nodes), set(known)
    while pending:
        progressed = False
        rest = []
        for n in pending:
            if all((not i) or i in avail or i in scope for i in n.input):
                order.append(n)
                avail.update(o for o in n.output if o)
                progressed = True
            else:
                rest.append(n)
        if not progressed:
            missing = sorted(
                {i for n in rest for i in n.input if i and i not in avail and i not in scope}
            )
            raise MDFError(
                f"ONNX graph: no value for {', '.join(missing)} (inputs, initializers "
                "and node outputs were searched)"
            )
        pending = rest
    return order


def run_graph(
    graph: Any,
    feeds: Mapping[str, Any],
    opset: int | None,
    outer_scope: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run an ONNX ``GraphProto`` and return ``{output name: value}`` for its declared outputs.

    ``feeds`` gives the graph inputs by name; ``opset`` is the ``ai.onnx`` opset the nodes are
    evaluated at (None = newest registered); ``outer_scope`` holds the enclosing graph's values
    for subgraphs.
    """
    from onnx import AttributeProto

    from . import run

    local: dict[str, Any] = {}
    for t in graph.initializer:
        local[t.name] = tensor_array(t)
    for sp in graph.sparse_initializer:
        local[sp.values.name] = _sparse_to_dense(sp)
    for name, value in feeds.items():
        local[name] = value
    for i in graph.input:
        if i.name not in local and (outer_scope is None or i.name not in outer_scope):
            raise MDFError(f"ONNX graph '{graph.name}': input '{i.name}' was not given")
    env = _Scope(local, outer_scope)

    nodes = list(graph.node)
    avail = set(local)
    for n in nodes:
        if any(i and i not in avail and i not in env for i in n.input):
            nodes = topological_order(nodes, set(local), env)
            break
        avail.update(n.output)

    for node in nodes:
        if node.domain not in ("", "ai.onnx"):
            raise MDFError(
                f"ONNX node '{node.name or node.op_type}': domain '{node.domain}' is not "
                "supported (only the standard ai.onnx operators are)"
            )
        try:
            args = [env[i] if i else None for i in node.input]
        except KeyError as exc:
            raise MDFError(
                f"ONNX node '{node.name or node.op_type}': no value named {exc.args[0]!r}"
            ) from None
        attrs = {}
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                attrs[a.name] = bind_subgraph(a.g, opset, env)
            elif a.ref_attr_name:
                raise MDFError(
                    f"ONNX node '{node.name}': attribute references are only "
                    "meaningful inside functions"
                )
            else:
                attrs[a.name] = attribute_value(a)
        try:
            outs = run(node.op_type, args, attrs, opset=opset, num_outputs=len(node.output))
        except MDFError as exc:
            raise MDFError(
                f"ONNX node '{node.name or node.op_type}' ({node.op_type}): {exc}"
            ) from exc
        for name, value in zip(node.output, outs):
            if name:
                local[name] = value
    result = {}
    for o in graph.output:
        if o.name not in env:
            raise MDFError(f"ONNX graph '{graph.name}': output '{o.name}' was never computed")
        result[o.name] = env[o.name]
    return result


def run_model(model: Any, feeds: Mapping[str, Any]) -> dict[str, Any]:
    """Run an ONNX ``ModelProto`` (or the path of a .onnx file) at its ``ai.onnx`` opset."""
    import onnx

    if not hasattr(model, "graph"):
        model = onnx.load(str(model))
    opset = max(
        (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=None
    )
    return run_graph(model.graph, feeds, opset)
