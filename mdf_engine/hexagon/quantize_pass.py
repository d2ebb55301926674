"""Post-training quantization of a float MDF graph onto Hexagon ops, and the ``--backend hexagon``
entry point.

``quantize(model, calibration_inputs) -> Model``
    Runs the float model with :class:`mdf_engine.Simulation` once per calibration input (each an
    initializer dict ``{port_id: array}``; ``None`` = the model's own defaults), records every
    input port and parameter of every node, and takes per-tensor ranges (min/max over all runs,
    widened by ``adjust_range`` for an exact zero). It then rewrites each parameter that calls
    one of ``onnx::Conv, Gemm, MatMul, Add, Relu, Clip, MaxPool, AveragePool, GlobalAveragePool,
    Concat, Reshape, Flatten, Softmax`` into a chain of ``hexagon::`` parameters, e.g. for Conv::

        Quantize -> [QuantizedPad_8] -> QuantizedConv2d_8x8to32 -> QuantizedBiasAdd_32p32to32
                 -> Requantize_32to8 (to the calibrated range)

    Gemm/MatMul use QuantizedMatMul_8x8to32 the same way; Relu/Clip become QuantizedRelu_8 /
    QuantizedClamp_8, pools QuantizedMaxPool_8 / QuantizedAvgPool_8, Add QuantizedAdd_8p8to8,
    Concat QuantizedConcat_8(_d32), Softmax QuantizedSoftmax_8, Flatten/Reshape QuantizedReshape.
    Weights are quantized once, at pass time, into constant uint8 codes; biases into qint32 codes
    on the accumulator's step. Quantized tensors stay quantized inside a node: ONNX's NCHW
    tensors are kept as NHWC codes (Transpose_8 where a layout change is needed). Each rewritten
    parameter keeps its id and becomes the Dequantize of its chain (back in the float layout and
    shape), so output ports, edges and any parameter the pass does not rewrite see floats as
    before; a receiving node re-quantizes with the same calibrated range, which is lossless.

``run_quantized(model, initializer=None, calibration_inputs=None) -> {node: {port: value}}``
    What ``mdf run --backend hexagon`` calls: quantizes ``model`` (calibrating on
    ``calibration_inputs``, or on ``initializer`` itself when none are given), evaluates the
    quantized model once with ``initializer`` and returns every node's output ports.

A multi-output op (onnx MaxPool gives (Y, Indices)) keeps only its first output: ``p[0]`` is
the dequantized Y and ``p[1]`` is None in the quantized model.

Limits (MDFError says which): Conv with group > 1 or dilation, non-constant weights, ONNX pads
on pools that are neither zero nor TF-SAME, ceil_mode pools, Gemm with transA, axis-specific
Softmax/Flatten other than the last/second axis.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..model import Model
from .quantize_ops import NodeRewriter


# -- calibration -------------------------------------------------------------------------------
def calibrate(
    model: Any,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None,
    graph: str | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """Run the float model on each input; ``{(node, name): {"min", "max", "shape"}}`` over every
    numeric input port and parameter value seen."""
    from ..simulation import Simulation

    if calibration_inputs is None:
        inputs: list[Mapping[str, Any] | None] = [None]
    elif isinstance(calibration_inputs, Mapping):
        inputs = [calibration_inputs]
    else:
        inputs = list(calibration_inputs)
    if not inputs:
        raise MDFError("quantize needs at least one calibration input")
    stats: dict[tuple[str, str], dict[str, Any]] = {}
    for init in inputs:
        sim = Simulation(model, graph=graph)
        sim.evaluate(initializer=init)
        for node in sim.graph.nodes:
            names = [p.id for p in node.input_ports] + [p.id for p in node.parameters]
            for name in names:
                try:
                    v = sim.value(node.id, name)
                except MDFError:
                    continue
                if isinstance(v, tuple):  # a multi-output function: name[i] per output
                    for i, vi in enumerate(v):
                        _record(stats, node.id, f"{name}[{i}]", vi)
                else:
                    _record(stats, node.id, name, v)
    return stats


def _record(stats: dict, node: str, name: str, v: Any) -> None:
    if v is None or isinstance(v, (str, dict, tuple, list)):
        return
    a = np.asarray(v)
    if a.dtype.kind not in "fiub" or a.size == 0:
        return
    s = stats.setdefault((node, name), {"min": np.inf, "max": -np.inf, "shape": a.shape})
    s["min"] = min(s["min"], float(np.nanmin(a)))
    s["max"] = max(s["max"], float(np.nanmax(a)))
    if s["shape"] != a.shape:
        raise MDFError(
            f"calibration: {node}.{name} changes shape between inputs "
            f"({s['shape']} vs {a.shape}); quantize needs fixed shapes"
        )


def quantize(
    model: Any,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None = None,
    graph: str | None = None,
) -> Model:
    """A copy of ``model`` whose supported onnx:: parameters run as quantized hexagon chains."""
    from ..loader import load

    src = load(model)
    stats = calibrate(src, calibration_inputs, graph)
    out = copy.deepcopy(src)
    g = out.get_graph(graph)
    for node in g.nodes:
        node.parameters = NodeRewriter(node, stats).rewrite()
    return out


def run_quantized(
    model: Any,
    initializer: Mapping[str, Any] | None = None,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None = None,
    graph: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Quantize ``model`` (calibrated on ``calibration_inputs``, else on ``initializer``), run it
    once with ``initializer``; returns ``{node: {output port: value}}``."""
    from ..simulation import Simulation

    cal = calibration_inputs if calibration_inputs is not None else [initializer]
    qmodel = quantize(model, cal, graph)
    sim = Simulation(qmodel, graph=graph)
    sim.evaluate(initializer=initializer)
    return sim.outputs
