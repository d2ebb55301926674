"""One small MDF model per ``onnx_ops`` family, run on both backends and checked against oracles.

Each family is a chain of parameters in one node, built with the model API: constant parameters
(lists, so the model survives JSON) and ``function: onnx::<Op>`` parameters whose ``args`` name
the op's inputs (other parameters) and attributes (values). Every intermediate result is an
output port. The model runs two steps on the interpreted and on the compiled backend, and the
results are compared with

* modeci-mdf's reference engine (``reference_run``), for the families it can run; it calls each
  ``onnx::`` function through onnxruntime;
* always, the same chain written as one ONNX graph and run in onnxruntime (float32 data, as the
  reference does for most ops). For the families the reference engine cannot run this is the
  only oracle; :data:`NO_REFERENCE` says why for each.

The compiled backend compiles the whole graph only when every op has a nopython (``jit=``)
kernel and every value is a number or array; otherwise it falls back to the interpreted backend
for the graph, with a log line. :data:`COMPILES` lists the families that must compile (the test
checks that they did, and that the others say why they did not).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pytest

from mdf_engine import Simulation, onnx_ops
from mdf_engine.model import Graph, Model, Node, OutputPort, Parameter

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402
from reference_engine import reference_run  # noqa: E402


@dataclass
class Family:
    """Constants and a chain of ``(id, op, args)`` steps; ``outs`` maps a step id to its number
    of outputs when it has more than one."""

    consts: dict
    steps: list
    opset: int = 13
    outs: dict = field(default_factory=dict)
    hidden: set = field(default_factory=set)  # steps with no output port (sequences)
    rtol: float = 2e-5
    atol: float = 2e-6


def _r(seed: int, *shape: int, lo: float = -2.0, hi: float = 2.0) -> list:
    """Random values rounded to 3 decimals (exact enough in float32 and float64), as lists."""
    return np.random.default_rng(seed).uniform(lo, hi, shape).round(3).tolist()


FAMILIES: dict[str, Family] = {
    "elementwise": Family(
        {"x": _r(1, 3, 4), "y": _r(2, 4), "p": _r(3, 3, 4, lo=0.1, hi=2.0)},
        [
            ("add", "Add", {"A": "x", "B": "y"}),
            ("sub", "Sub", {"A": "add", "B": "x"}),
            ("mul", "Mul", {"A": "sub", "B": "y"}),
            ("div", "Div", {"A": "mul", "B": "p"}),
            ("pw", "Pow", {"X": "p", "Y": "x"}),
            ("ex", "Exp", {"input": "x"}),
            ("lg", "Log", {"input": "p"}),
            ("sq", "Sqrt", {"X": "p"}),
            ("ab", "Abs", {"X": "x"}),
            ("ng", "Neg", {"X": "x"}),
            ("fl", "Floor", {"X": "div"}),
            ("ce", "Ceil", {"X": "div"}),
            ("sn", "Sin", {"input": "x"}),
            ("cs", "Cos", {"input": "x"}),
            ("th", "Tanh", {"input": "x"}),
            ("er", "Erf", {"input": "x"}),
            ("rc", "Reciprocal", {"X": "p"}),
            ("sg", "Sign", {"input": "x"}),
            ("md", "Mod", {"A": "x", "B": "p", "fmod": 1}),
        ],
    ),
    "logic": Family(
        {"x": _r(4, 3, 4), "y": _r(5, 4)},
        [
            ("gt", "Greater", {"A": "x", "B": "y"}),
            ("le", "LessOrEqual", {"A": "x", "B": "y"}),
            ("an", "And", {"A": "gt", "B": "le"}),
            ("orr", "Or", {"A": "gt", "B": "le"}),
            ("no", "Not", {"X": "gt"}),
            ("xo", "Xor", {"A": "gt", "B": "no"}),
            ("wh", "Where", {"condition": "gt", "X": "x", "Y": "y"}),
        ],
    ),
    "activations": Family(
        {"x": _r(6, 2, 5), "s": _r(7, 5, lo=0.0, hi=0.5)},
        [
            ("re", "Relu", {"X": "x"}),
            ("lr", "LeakyRelu", {"X": "x", "alpha": 0.25}),
            ("el", "Elu", {"X": "x", "alpha": 0.5}),
            ("se", "Selu", {"X": "x"}),
            ("sg", "Sigmoid", {"X": "x"}),
            ("hs", "HardSigmoid", {"X": "x", "alpha": 0.25}),
            ("sp", "Softplus", {"X": "x"}),
            ("ss", "Softsign", {"input": "x"}),
            ("pr", "PRelu", {"X": "x", "slope": "s"}),
            ("tr", "ThresholdedRelu", {"X": "x", "alpha": 0.5}),
            ("sh", "Shrink", {"input": "x", "lambd": 0.75, "bias": 0.25}),
            ("cl", "Clip", {"input": "x", "min": "lo", "max": "hi"}),
            ("sm", "Softmax", {"input": "x", "axis": 0}),
            ("ls", "LogSoftmax", {"input": "x", "axis": 1}),
            ("hm", "Hardmax", {"input": "x"}),
        ],
    ),
    "variadic": Family(
        {"a": _r(8, 2, 3), "b": _r(9, 3), "c": _r(10, 2, 1)},
        [
            ("su", "Sum", {"data_0": "a", "data_1": "b", "data_2": "c"}),
            ("mx", "Max", {"data_0": "a", "data_1": "b"}),
            ("mn", "Min", {"data_0": "a", "data_1": "c"}),
            ("me", "Mean", {"data_0": "su", "data_1": "mx", "data_2": "mn"}),
        ],
    ),
    "reductions": Family(
        {"x": _r(11, 3, 4, 2, lo=0.1), "ax": [1]},
        [
            ("rs", "ReduceSum", {"data": "x", "axes": "ax"}),
            ("rm", "ReduceMean", {"data": "x", "axes": [0, 2], "keepdims": 0}),
            ("rx", "ReduceMax", {"data": "x", "axes": [1]}),
            ("rn", "ReduceMin", {"data": "x", "keepdims": 0}),
            ("rp", "ReduceProd", {"data": "x", "axes": [2]}),
            ("l1", "ReduceL1", {"data": "x", "axes": [0]}),
            ("l2", "ReduceL2", {"data": "x", "axes": [1]}),
            ("lse", "ReduceLogSumExp", {"data": "x", "axes": [1]}),
            ("lsu", "ReduceLogSum", {"data": "x", "axes": [2]}),
            ("ssq", "ReduceSumSquare", {"data": "x", "axes": [0]}),
            ("am", "ArgMax", {"data": "x", "axis": 1}),
            ("ai", "ArgMin", {"data": "x", "axis": 2, "keepdims": 0}),
            ("cu", "CumSum", {"x": "x", "axis": "one", "reverse": 1}),
            ("tk", "TopK", {"X": "x", "K": "k", "axis": 1}),
        ],
        outs={"tk": 2},
    ),
    "linalg": Family(
        {"a": _r(12, 3, 4), "b": _r(13, 4, 2), "c": _r(14, 2), "sq": _r(15, 2, 3, 3)},
        [
            ("mm", "MatMul", {"A": "a", "B": "b"}),
            ("ge", "Gemm", {"A": "a", "B": "b", "C": "c", "alpha": 0.5, "beta": 2.0}),
            ("gt", "Gemm", {"A": "b", "B": "a", "transA": 1, "transB": 1}),
            ("de", "Det", {"X": "sq"}),
            ("ei", "Einsum", {"Inputs": "a", "Inputs1": "b", "equation": "ij,jk->ki"}),
        ],
    ),
    "shape": Family(
        {"x": _r(16, 2, 3, 4), "shp": [4, -1], "spl": [1, 3]},
        [
            ("rs", "Reshape", {"data": "x", "shape": "shp"}),
            ("tr", "Transpose", {"data": "x", "perm": [2, 0, 1]}),
            ("fl", "Flatten", {"input": "x", "axis": 2}),
            ("us", "Unsqueeze", {"data": "x", "axes": "zero"}),
            ("sq", "Squeeze", {"data": "us", "axes": "zero"}),
            ("cc", "Concat", {"inputs": "x", "inputs1": "x", "axis": 1}),
            ("sp", "Split", {"input": "x", "split": "spl", "axis": 2}),
            ("sh", "Shape", {"data": "x"}),
            ("sz", "Size", {"data": "x"}),
            ("id", "Identity", {"input": "x"}),
            ("ti", "Tile", {"input": "x", "repeats": "rep"}),
            ("ex", "Expand", {"input": "col", "shape": "eshape"}),
            ("d2s", "DepthToSpace", {"input": "img", "blocksize": 2}),
            ("s2d", "SpaceToDepth", {"input": "d2s", "blocksize": 2}),
        ],
        outs={"sp": 2},
    ),
    "indexing": Family(
        {
            "x": _r(17, 3, 4),
            "idx": [[0, 2], [1, 1]],
            "ie": [[1, 0, 2, 2], [0, 1, 1, 0]],
            "nd": [[0, 1], [2, 3]],
            "st": [0, 1],
            "en": [3, 4],
            "ax": [0, 1],
            "stp": [2, 1],
            "cond": [True, False, True],
            "pads": [1, 0, 0, 2],
            "lens": [3, 1, 2, 2],
        },
        [
            ("ga", "Gather", {"data": "x", "indices": "idx", "axis": 1}),
            ("ge", "GatherElements", {"data": "x", "indices": "ie", "axis": 0}),
            ("gn", "GatherND", {"data": "x", "indices": "nd"}),
            ("se", "ScatterElements", {"data": "x", "indices": "ie", "updates": "ge", "axis": 0}),
            ("sn", "ScatterND", {"data": "x", "indices": "nd", "updates": "upd"}),
            (
                "sl",
                "Slice",
                {"data": "x", "starts": "st", "ends": "en", "axes": "ax", "steps": "stp"},
            ),
            ("co", "Compress", {"input": "x", "condition": "cond", "axis": 0}),
            ("pa", "Pad", {"data": "x", "pads": "pads", "mode": "reflect"}),
            (
                "rv",
                "ReverseSequence",
                {"input": "x", "sequence_lens": "lens", "batch_axis": 1, "time_axis": 0},
            ),
            ("oh", "OneHot", {"indices": "st", "depth": "dep", "values": "onoff"}),
            ("nz", "NonZero", {"X": "cond"}),
            ("un", "Unique", {"X": "uq"}),
        ],
        outs={"un": 4},
    ),
    "creation": Family(
        {"x": _r(18, 3, 4), "shp": [2, 3]},
        [
            ("cs", "ConstantOfShape", {"input": "shp"}),
            ("ey", "EyeLike", {"input": "x", "k": 1}),
            ("ra", "Range", {"start": "r0", "limit": "r1", "delta": "r2"}),
            ("ca", "Cast", {"input": "x", "to": 6}),
            ("cb", "Cast", {"input": "ca", "to": 1}),
        ],
    ),
    "conv": Family(
        {
            "x": _r(19, 1, 2, 6, 5),
            "w": _r(20, 3, 2, 3, 3),
            "b": _r(21, 3),
            "wt": _r(22, 2, 2, 3, 3),
        },
        [
            ("cv", "Conv", {"X": "x", "W": "w", "B": "b", "pads": [1, 1, 1, 1]}),
            ("cs", "Conv", {"X": "x", "W": "w", "strides": [2, 2], "dilations": [1, 2]}),
            ("ct", "ConvTranspose", {"X": "x", "W": "wt", "strides": [2, 2], "pads": [1, 1, 0, 0]}),
        ],
    ),
    "pool": Family(
        {"x": _r(23, 1, 2, 6, 7)},
        [
            (
                "mp",
                "MaxPool",
                {"X": "x", "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            ),
            (
                "ap",
                "AveragePool",
                {"X": "x", "kernel_shape": [2, 3], "count_include_pad": 1, "pads": [0, 1, 0, 1]},
            ),
            ("lp", "LpPool", {"X": "x", "kernel_shape": [2, 2], "p": 2}),
            ("ga", "GlobalAveragePool", {"X": "x"}),
            ("gm", "GlobalMaxPool", {"X": "x"}),
            ("gl", "GlobalLpPool", {"X": "x", "p": 3}),
        ],
        outs={"mp": 2},
    ),
    "normalization": Family(
        {
            "x": _r(24, 2, 3, 4, 2),
            "s": _r(25, 3),
            "b": _r(26, 3),
            "m": _r(27, 3),
            "v": _r(28, 3, lo=0.2, hi=1.5),
        },
        [
            (
                "bn",
                "BatchNormalization",
                {"X": "x", "scale": "s", "B": "b", "mean": "m", "var": "v", "epsilon": 1e-3},
            ),
            ("inn", "InstanceNormalization", {"input": "x", "scale": "s", "B": "b"}),
            ("lrn", "LRN", {"X": "x", "size": 3, "alpha": 0.5}),
            ("mvn", "MeanVarianceNormalization", {"X": "x"}),
            ("lpn", "LpNormalization", {"input": "x", "axis": 1, "p": 2}),
        ],
    ),
    "quantize": Family(
        {
            "x": _r(29, 2, 3, 4, lo=-3, hi=3),
            "sc": 0.05,
            "zp": 128,
            "sb": 0.04,
            "zb": 120,
            "w": _r(30, 4, 2, lo=-2, hi=2),
            "ys": 0.1,
            "yz": 100,
        },
        [
            ("z8", "Cast", {"input": "zp", "to": 2}),
            ("zb8", "Cast", {"input": "zb", "to": 2}),
            ("yz8", "Cast", {"input": "yz", "to": 2}),
            ("q", "QuantizeLinear", {"x": "x", "y_scale": "sc", "y_zero_point": "z8"}),
            ("dq", "DequantizeLinear", {"x": "q", "x_scale": "sc", "x_zero_point": "z8"}),
            ("qw", "QuantizeLinear", {"x": "w", "y_scale": "sb", "y_zero_point": "zb8"}),
            (
                "qm",
                "QLinearMatMul",
                {
                    "a": "q",
                    "a_scale": "sc",
                    "a_zero_point": "z8",
                    "b": "qw",
                    "b_scale": "sb",
                    "b_zero_point": "zb8",
                    "y_scale": "ys",
                    "y_zero_point": "yz8",
                },
            ),
            (
                "mi",
                "MatMulInteger",
                {"A": "q", "B": "qw", "a_zero_point": "z8", "b_zero_point": "zb8"},
            ),
            ("dy", "DynamicQuantizeLinear", {"x": "x"}),
        ],
        outs={"dy": 3},
    ),
    "resize": Family(
        {"x": _r(31, 1, 1, 3, 4), "sc": [1.0, 1.0, 2.0, 1.5], "sz": [1, 1, 5, 3]},
        [
            ("rl", "Resize", {"X": "x", "scales": "sc", "mode": "linear"}),
            (
                "rn",
                "Resize",
                {
                    "X": "x",
                    "sizes": "sz",
                    "mode": "nearest",
                    "coordinate_transformation_mode": "asymmetric",
                },
            ),
            (
                "rc",
                "Resize",
                {
                    "X": "x",
                    "scales": "sc",
                    "mode": "cubic",
                    "coordinate_transformation_mode": "align_corners",
                },
            ),
        ],
    ),
    "recurrent": Family(
        {
            "x": _r(32, 4, 2, 3),
            "w": _r(33, 1, 8, 3, lo=-0.5, hi=0.5),
            "r": _r(34, 1, 8, 2, lo=-0.5, hi=0.5),
            "b": _r(35, 1, 16, lo=-0.5, hi=0.5),
            "wg": _r(36, 2, 6, 3, lo=-0.5, hi=0.5),
            "rg": _r(37, 2, 6, 2, lo=-0.5, hi=0.5),
            "wr": _r(38, 1, 2, 3, lo=-0.5, hi=0.5),
            "rr": _r(39, 1, 2, 2, lo=-0.5, hi=0.5),
        },
        [
            ("ls", "LSTM", {"X": "x", "W": "w", "R": "r", "B": "b", "hidden_size": 2}),
            (
                "gr",
                "GRU",
                {
                    "X": "x",
                    "W": "wg",
                    "R": "rg",
                    "hidden_size": 2,
                    "direction": "bidirectional",
                    "linear_before_reset": 1,
                },
            ),
            ("rn", "RNN", {"X": "x", "W": "wr", "R": "rr", "hidden_size": 2}),
        ],
        outs={"ls": 3, "gr": 2, "rn": 2},
    ),
    "losses": Family(
        {"s": _r(40, 4, 3), "lab": [0, 2, 1, 2], "wt": [0.5, 1.0, 2.0]},
        [
            ("ce", "SoftmaxCrossEntropyLoss", {"scores": "s", "labels": "lab", "weights": "wt"}),
            ("lsm", "LogSoftmax", {"input": "s", "axis": 1}),
            (
                "nl",
                "NegativeLogLikelihoodLoss",
                {"input": "lsm", "target": "lab", "reduction": "sum"},
            ),
        ],
        outs={"ce": 2},
    ),
    "detection": Family(
        {
            "boxes": [
                [
                    [0, 0, 1, 1],
                    [0, 0.1, 1, 1.1],
                    [0, -0.1, 1, 0.9],
                    [0, 10, 1, 11],
                    [0, 10.1, 1, 11.1],
                    [0, 100, 1, 101],
                ]
            ],
            "scores": [[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]],
            "mx": [3],
            "iou": [0.5],
            "x": _r(41, 1, 2, 6, 6),
            "rois": [[0.5, 0.5, 4.0, 3.5], [1.0, 2.0, 5.0, 5.5]],
            "bi": [0, 0],
        },
        [
            (
                "nms",
                "NonMaxSuppression",
                {
                    "boxes": "boxes",
                    "scores": "scores",
                    "max_output_boxes_per_class": "mx",
                    "iou_threshold": "iou",
                },
            ),
            (
                "ra",
                "RoiAlign",
                {
                    "X": "x",
                    "rois": "rois",
                    "batch_indices": "bi",
                    "output_height": 2,
                    "output_width": 3,
                },
            ),
        ],
        opset=16,
    ),
    "sequences": Family(
        {"a": _r(42, 2, 3), "b": _r(43, 1, 3), "zero": 0},
        [
            ("sc", "SequenceConstruct", {"inputs": "a", "inputs1": "b"}),
            ("si", "SequenceInsert", {"input_sequence": "sc", "tensor": "b", "position": "zero"}),
            ("sa", "SequenceAt", {"input_sequence": "si", "position": "one"}),
            ("sl", "SequenceLength", {"input_sequence": "si"}),
            ("se", "SequenceErase", {"input_sequence": "si"}),
            ("cf", "ConcatFromSequence", {"input_sequence": "se", "axis": 0}),
            ("ts", "SplitToSequence", {"input": "a", "axis": 1, "keepdims": 0}),
            ("cn", "ConcatFromSequence", {"input_sequence": "ts", "axis": 0, "new_axis": 1}),
        ],
        hidden={"sc", "si", "se", "ts"},
    ),
    "strings": Family(
        {"t": ["Hello", "the", "World", "THE"], "ids": [[1, 2, 3, 2, 3], [3, 1, 1, 2, 0]]},
        [
            (
                "sn",
                "StringNormalizer",
                {"X": "t", "case_change_action": "LOWER", "locale": "C", "stopwords": ["the"]},
            ),
            (
                "tf",
                "TfIdfVectorizer",
                {
                    "X": "ids",
                    "mode": "TF",
                    "min_gram_length": 1,
                    "max_gram_length": 2,
                    "max_skip_count": 1,
                    "ngram_counts": [0, 3],
                    "ngram_indexes": [0, 1, 2, 3, 4],
                    "pool_int64s": [1, 2, 3, 2, 3, 3, 1],
                },
            ),
        ],
    ),
}
# One small graph through the compiled backend (a cold compile of a generated graph costs
# minutes on a loaded 2-core machine, growing with its ops): the two bugs this test found there.
# Selu and HardSigmoid (same kernel factory) once shared a Numba symbol, so a cached graph
# calling both ran Selu twice; variadic Max did not type for inputs of different ranks.
FAMILIES["compiled_mix"] = Family(
    {"x": _r(45, 3, 4), "y": _r(46, 4)},
    [
        ("add", "Add", {"A": "x", "B": "y"}),
        ("se", "Selu", {"X": "x"}),
        ("hs", "HardSigmoid", {"X": "x", "alpha": 0.25}),
        ("mx", "Max", {"data_0": "add", "data_1": "y", "data_2": "hs"}),
    ],
)
# constants shared by several families (scalars and small index/shape tensors)
_SHARED = {
    "lo": -0.5,
    "hi": 0.75,
    "one": [1],
    "k": [2],
    "zero": [0],
    "rep": [1, 2, 1],
    "col": [[1.5], [-2.0], [0.25]],
    "eshape": [2, 3, 4],
    "img": _r(44, 1, 8, 2, 3),
    "upd": [9.0, -9.0],
    "dep": [5],
    "onoff": [-1.0, 3.0],
    "uq": [2.0, 1.0, 2.0, 3.0, 1.0, 2.0],
    "r0": 1.0,
    "r1": 4.0,
    "r2": 0.5,
}

#: families the reference engine cannot run, and why (onnxruntime alone is the oracle there)
NO_REFERENCE = {
    "variadic": "modeci-mdf binds only the first input name of a variadic op (data_0)",
    "shape": "variadic Concat and multi-output Split cannot be expressed to modeci-mdf's binder",
    "linalg": "modeci-mdf evaluates string attributes as expressions (Einsum's equation)",
    "sequences": "modeci-mdf cannot convert sequence values (skl2onnx has no sequence type)",
    "strings": "modeci-mdf evaluates string attributes as expressions (mode='TF')",
    "indexing": "modeci-mdf evaluates string attributes as expressions (Pad mode='reflect')",
    "resize": "modeci-mdf evaluates string attributes as expressions (mode='linear')",
    "recurrent": "modeci-mdf evaluates string attributes as expressions (direction)",
    "normalization": "modeci-mdf's BatchNormalization binding fails (KeyError training_mode)",
    "quantize": "modeci-mdf makes scalar parameters shape (1,) tensors (scales, zero points)",
    "detection": "modeci-mdf runs RoiAlign at opset 10 (output_half_pixel), not the model's 16",
    "compiled_mix": "variadic Max (see variadic)",
}
#: families whose whole graph compiles to one Numba function (all ops have jit kernels)
#: (RNN/GRU/LSTM have Numba kernels; shape's Split, DepthToSpace/SpaceToDepth and creation's
#: EyeLike too, since helper jitA; normalization's and resize's since jitB)
COMPILES = {"compiled_mix", "recurrent", "shape", "creation", "normalization", "resize"}
#: families not run on the compiled backend: all their ops have jit kernels, so it would
#: compile each whole family (minutes cold on 2 cores); ``compiled_mix`` takes ops of each
#: through it, and test_onnx_elementwise_mdf.py::test_jit_in_nopython checks their jit kernels
#: against the Python ones from nopython code. Every other family falls back to the
#: interpreter on the compiled backend (an op without a jit kernel, or a tuple/list value),
#: which the test checks.
NOT_COMPILED = {"elementwise", "logic", "activations", "variadic"}
#: families that compile with some ops called through Python (no restart on the interpreter:
#: quantize's Casts to uint8, which a number slot holds as int64, go through Python)
PYTHON_CALLED = {"quantize", "indexing"}


def _consts(fam: Family) -> dict:
    names = {v for _, _, args in fam.steps for v in args.values() if isinstance(v, str)}
    return {**{k: v for k, v in _SHARED.items() if k in names}, **fam.consts}


def build_model(name: str, fam: Family) -> Model:
    params = [Parameter(id=k, value=v) for k, v in _consts(fam).items()]
    ports = []
    for sid, op, args in fam.steps:
        params.append(Parameter(id=sid, function=f"onnx::{op}", args=dict(args)))
        n = 0 if sid in fam.hidden else fam.outs.get(sid, 1)
        for k in range(n):
            ports.append(OutputPort(id=f"{sid}_{k}", value=sid if n == 1 else f"{sid}[{k}]"))
    node = Node(id=name, parameters=params, output_ports=ports)
    return Model(id=f"m_{name}", graphs=[Graph(id="g", nodes=[node])], onnx_opset_version=fam.opset)


def _tensor(v) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind == "U":
        return a.astype(object)
    return a


def ort_outputs(fam: Family) -> dict[str, np.ndarray]:
    """The chain as one ONNX graph in onnxruntime: {port id: value}."""
    consts = {k: _tensor(v) for k, v in _consts(fam).items()}
    nodes, outputs = [], []
    for sid, op, args in fam.steps:
        sch = onnx_ops.schema(op, opset=fam.opset)
        names = [args.get(n, "") for n in sch.inputs]
        if sch.variadic:
            names += [v for k, v in args.items() if k not in sch.inputs and k not in sch.attributes]
        while names and names[-1] == "":
            names.pop()
        attrs = {k: v for k, v in args.items() if k in sch.attributes}
        n = fam.outs.get(sid, 1)
        outs = [sid] if n == 1 else [f"{sid}_{k}" for k in range(n)]
        nodes.append(helper.make_node(op, names, outs, **attrs))
        if sid not in fam.hidden:
            outputs += [(o, f"{sid}_{k}") for k, o in enumerate(outs)]
    inputs = [
        helper.make_tensor_value_info(
            k,
            helper.np_dtype_to_tensor_dtype(v.dtype) if v.dtype != object else TensorProto.STRING,
            v.shape,
        )
        for k, v in consts.items()
    ]
    graph = helper.make_graph(nodes, "g", inputs, [onnx.ValueInfoProto(name=o) for o, _ in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", fam.opset)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    vals = sess.run([o for o, _ in outputs], consts)
    return {port: v for (_, port), v in zip(outputs, vals)}


def _compare(got: dict, want: dict, fam: Family, who: str) -> None:
    for port, w in want.items():
        g = np.asarray(got[port])
        w = np.asarray(w)
        assert g.shape == w.shape, f"{who} {port}: shape {g.shape} != {w.shape}"
        if w.dtype.kind in "OUS":
            assert g.tolist() == w.tolist(), f"{who} {port}"
        elif w.dtype.kind == "f" or g.dtype.kind == "f":
            np.testing.assert_allclose(
                g.astype(float),
                w.astype(float),
                rtol=fam.rtol,
                atol=fam.atol,
                err_msg=f"{who} {port}",
            )
        else:
            assert g.dtype.kind == w.dtype.kind or {g.dtype.kind, w.dtype.kind} <= {"i", "u"}, (
                f"{who} {port}: {g.dtype} vs {w.dtype}"
            )
            np.testing.assert_array_equal(g, w, err_msg=f"{who} {port}")


def _run(model: Model, backend: str) -> tuple[dict, Simulation]:
    sim = Simulation(model, backend=backend)
    sim.evaluate()
    sim.evaluate()  # the compiled backend compiles after a first interpreted step
    return sim.outputs[model.graphs[0].nodes[0].id], sim


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_model(name, caplog):
    fam = FAMILIES[name]
    model = build_model(name, fam)
    with caplog.at_level(logging.INFO):  # (a first run's fallback is an INFO line)
        interp, _ = _run(model, "interpreted")
        comp, sim = (interp, None) if name in NOT_COMPILED else _run(model, "compiled")
    if sim is None:
        pass
    elif name in COMPILES or name in PYTHON_CALLED:
        assert sim.runner.is_compiled, sim.runner.fallback_reason
        assert "running on the interpreted backend" not in caplog.text
        assert name in COMPILES or "through Python" in caplog.text
        assert name in PYTHON_CALLED or not sim.runner.python_calls, sim.runner.python_calls
    elif sim.runner.is_compiled:
        # ops without a Numba kernel, called through Python from the compiled loop
        assert sim.runner.python_calls and "through Python" in caplog.text
    else:
        assert sim.runner.fallback_reason
        assert "running on the interpreted backend" in caplog.text
    # the two backends agree to rounding (a Numba reduction may add in another order)
    assert set(interp) == set(comp)
    for port in interp:
        got, want = np.asarray(comp[port]), np.asarray(interp[port])
        if want.dtype.kind in "biufc":
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=port)
        else:  # (strings, objects: equal as they are)
            np.testing.assert_array_equal(got, want, err_msg=port)
    _compare(interp, ort_outputs(fam), fam, "onnxruntime")
    if name not in NO_REFERENCE:
        ref = reference_run(model.to_dict(), 2)["outputs"][name]
        _compare(interp, ref, fam, "reference engine")


def test_reference_limits_are_real():
    """Each family listed in NO_REFERENCE fails in the reference engine or gives results that
    differ from onnxruntime's (so the list does not hide a family it could check)."""
    for name in NO_REFERENCE:
        fam = FAMILIES[name]
        try:
            ref = reference_run(build_model(name, fam).to_dict(), 1)["outputs"][name]
        except Exception:
            continue
        with pytest.raises(AssertionError):
            _compare(ref, ort_outputs(fam), fam, "reference engine vs onnxruntime")


def test_random_family_model():
    """Seeded random ops: the same values on both backends and on every step (the seed is an
    attribute), with the moments of their distributions; onnxruntime draws from another
    generator, so only shapes and statistics can be compared with it."""
    fam = Family(
        {"x": np.zeros((200, 50)).tolist()},
        [
            ("rn", "RandomNormal", {"shape": [400, 50], "mean": 1.0, "scale": 2.0, "seed": 3.0}),
            ("ru", "RandomUniform", {"shape": [400, 50], "low": -1.0, "high": 3.0, "seed": 4.0}),
            ("rnl", "RandomNormalLike", {"input": "x", "seed": 5.0}),
            ("rul", "RandomUniformLike", {"input": "x", "seed": 6.0}),
            ("dr", "Dropout", {"data": "x"}),
        ],
        outs={"dr": 2},
    )
    model = build_model("random", fam)
    interp, _ = _run(model, "interpreted")
    comp, _ = _run(model, "compiled")
    for port in interp:
        np.testing.assert_array_equal(comp[port], interp[port])
    want = ort_outputs(fam)
    for port, w in want.items():
        assert np.shape(interp[port]) == w.shape, port
    n = 20000
    rn, ru = interp["rn_0"], interp["ru_0"]
    assert abs(rn.mean() - 1.0) < 4 * 2.0 / np.sqrt(n) and abs(rn.std() - 2.0) < 0.06
    assert ru.min() >= -1.0 and ru.max() < 3.0 and abs(ru.mean() - 1.0) < 4 * 1.16 / np.sqrt(n)
    assert abs(interp["rnl_0"].mean()) < 4 / 100 and abs(interp["rul_0"].mean() - 0.5) < 0.02
    np.testing.assert_array_equal(interp["dr_0"], want["dr_0"])
