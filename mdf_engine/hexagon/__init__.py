"""The quantized Hexagon NN backend: the operators of Qualcomm's hexagon_nn op list, computed
bit-faithfully to its quantization rules (hexagon-digest §1.3) on plain numpy arrays, with Numba
inner loops.

Tensors are 4-D BHWD arrays; a quantized tensor is a triple ``(data, min, max)`` with ``min`` and
``max`` float32 scalars of shape (1,1,1,1). Every op is registered as ``hexagon::Op`` (so an MDF
parameter can call it with ``function="hexagon::Op"``) with the document's input and output order
and one attribute, ``padding`` (``"SAME"``, ``"VALID"``, ``"NA"``, ... or the NN_PAD_* number).

* :func:`run` ``(op_name, inputs, padding=None, **attrs) -> list of arrays``
* :func:`names` -- every registered hexagon op (the 253 of the document)
* :func:`op_status` -- tier and implementation status of one op (see docs/hexagon_ops_table.md)
* :func:`quantize` ``(model, calibration_inputs) -> Model`` -- post-training quantization of a
  float graph of onnx:: ops into hexagon:: chains (see :mod:`.quantize_pass`)
* :func:`run_quantized` ``(model, initializer, calibration_inputs=None)`` -- quantize and run once;
  the entry point of ``mdf run --backend hexagon``

Modules, one family each: graph I/O and checks (graph, checks, state: Variable/Assign/PPrint),
conversion (quantize, requantize, 16-bit conversions, casts), elementwise (quint8), elementwise16,
elementwise_float, activation, normalization, reduce, layout moves (layout, slicing, padding,
space), convolution (conv, conv_variants: grouped/dilated/transposed/16-bit, matmul, pool),
image (resize, image, roi), detection (boxes, detection), lookup, and the d32 variants. Shared
quantization arithmetic lives in :mod:`.quant`, the op list in :mod:`.oplist`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..registry import REGISTRY
from . import (  # noqa: F401  (importing registers the ops)
    activation,
    boxes,
    checks,
    conv,
    conv_variants,
    conversion,
    d32,
    detection,
    elementwise,
    elementwise16,
    elementwise_float,
    graph,
    image,
    layout,
    lookup,
    matmul,
    normalization,
    pads,
    pool,
    reduce,
    resize,
    roi,
    slicing,
    space,
    state,
)
from .oplist import ALL_OPS, TIER1, TIER2
from .quant import adjust_range, dequantize_u8, quantize_u8, zero_code
from .quantize_pass import calibrate, quantize, run_quantized


def run(op_name: str, inputs: Sequence[Any], padding: Any = None, **attrs: Any) -> list[np.ndarray]:
    """Run hexagon op ``op_name`` on positional ``inputs`` (document order; None = an omitted
    optional input); returns the outputs in document order."""
    name = op_name if op_name.startswith("hexagon::") else "hexagon::" + op_name
    schema = REGISTRY.lookup(name)
    if padding is not None:
        attrs["padding"] = padding
    return list(schema.call(list(inputs), attrs))


def names() -> list[str]:
    """Every registered hexagon op name (without the ``hexagon::`` prefix)."""
    return [n.split("::", 1)[1] for n in REGISTRY.names("hexagon")]


def op_status(op: str) -> dict[str, str]:
    """``{"op", "tier", "status", "status_text"}`` of one document op."""
    schema = REGISTRY.lookup("hexagon::" + op)
    tier = "1" if op in TIER1 else "2" if op in TIER2 else "d32" if op in d32_OPS else "-"
    if schema.extra.get("unsupported"):
        status, text = "unsupported", "unsupported"
    elif op in d32.ALIASES:
        status, text = "mapped", f"mapped -> {d32.ALIASES[op]}"
    elif op in d32_OPS and not op.startswith("PPrint"):
        status, text = "mapped", "mapped (plain layout)"
    else:
        status, text = "implemented", "implemented"
    return {"op": op, "tier": tier, "status": status, "status_text": text}


#: The 28 layout-specific (d32 / aix) ops of the document.
d32_OPS = frozenset(o for o in ALL_OPS if "d32" in o)

__all__ = [
    "ALL_OPS",
    "adjust_range",
    "calibrate",
    "dequantize_u8",
    "names",
    "op_status",
    "quantize",
    "quantize_u8",
    "run",
    "run_quantized",
    "zero_code",
]
