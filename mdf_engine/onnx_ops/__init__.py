"""``onnx::`` operators: Numba kernels with their ONNX schemas, and the ONNX-style call.

Each family of operators lives in its own module here (``elementwise``, ``conv``, ...) and
registers its kernels into :data:`mdf_engine.registry.REGISTRY` with the ``register`` decorator
(namespace ``onnx``). The early, experimental and modified forms (``onnx-legacy``/``onnx-exp``/
``onnx-mod``) are adapters in :mod:`.variants`, loaded after the families. Importing this package
imports every family module of :data:`FAMILIES`.

Public calls::

    run(op_type, inputs, attributes=None, opset=None) -> list[np.ndarray]
    names() -> list[str]            # "Add", "Conv", ... (bare op names)
    schema(op_type, opset=None) -> OpSchema
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..registry import REGISTRY, OpSchema, register

__all__ = ["run", "names", "schema", "onnx_op", "DEFAULT_OPSET"]

#: Operators are evaluated with the newest registered version unless an opset is given.
DEFAULT_OPSET: int | None = None


def onnx_op(op: str, **kw: Any):
    """``register`` for the standard ``onnx`` namespace (see :func:`mdf_engine.registry.register`)."""
    return register("onnx", op, **kw)


#: The standard family modules, one op family each, imported in this order by
#: :func:`_load_families`. A module missing from the disk fails that import; a module on the disk
#: missing from this list fails tests/test_registry_counts.py (no op is found by a directory scan).
FAMILIES = (
    "activations",
    "argreduce",
    "avgpool",
    "cast",
    "concat_split",
    "control_flow",
    "conv",
    "conv_integer",
    "conv_transpose",
    "creation",
    "cumsum",
    "detection",
    "elementwise",
    "gather",
    "gather_nd",
    "global_pool",
    "gru",
    "indexing",
    "linalg",
    "logic",
    "losses",
    "lstm",
    "maxpool",
    "maxunpool",
    "normalization",
    "onehot",
    "optional",
    "pad",
    "quantize",
    "random_ops",
    "reduce",
    "resize",
    "reverse_sequence",
    "rnn",
    "roi_pool",
    "sequences",
    "shape",
    "slicing",
    "space_depth",
    "strings",
    "topk",
    "variadic",
)
#: Public modules of this package that register no op: the ONNX graph runner.
NOT_FAMILIES = ("graph",)


def _load_families() -> None:
    """Import every standard family module, then (explicitly, last) the variant forms."""
    for name in FAMILIES:
        importlib.import_module(f"{__name__}.{name}")
    from . import variants

    variants.load()


def schema(op_type: str, opset: int | None = None) -> OpSchema:
    """The registered schema of ``op_type`` (bare ONNX name or ``onnx::Name``) at ``opset``."""
    name = op_type if "::" in op_type else "onnx::" + op_type
    return REGISTRY.lookup(name, opset)


def run(
    op_type: str,
    inputs: Sequence[Any],
    attributes: Mapping[str, Any] | None = None,
    opset: int | None = None,
    num_outputs: int | None = None,
) -> list[Any]:
    """Run one operator ONNX-style: positional inputs (``None`` = omitted optional input),
    attributes by name; returns the outputs as a list.

    ``num_outputs`` is the node's output count, which a graph runner knows and a kernel cannot:
    it is passed to operators with a variadic output that declare a ``num_outputs`` attribute
    (Split), unless the attributes already give one, and to kernels that can skip outputs
    nobody reads (MaxPool without Indices); the result then has at most that many outputs."""
    sch = schema(op_type, opset if opset is not None else DEFAULT_OPSET)
    if num_outputs is not None and "num_outputs" in sch.attributes:
        attrs = dict(attributes or {})
        if attrs.get("num_outputs") is None and attrs.get("split") is None:
            attrs["num_outputs"] = num_outputs
        attributes = attrs
    outs = list(sch.call(list(inputs), attributes, outputs_wanted=num_outputs))
    return outs if num_outputs is None else outs[: max(num_outputs, 1)]


def names() -> list[str]:
    """Bare names of every registered standard ``onnx::`` operator."""
    return sorted(n.split("::", 1)[1] for n in REGISTRY.names("onnx"))


def as_array(x: Any) -> np.ndarray:
    """An input as an ndarray (Python scalars become 0-d arrays, never (1,))."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


_load_families()
