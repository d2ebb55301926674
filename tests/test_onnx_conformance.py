"""Conformance of ``mdf_engine.onnx_ops`` against the ONNX package's backend node test cases.

Every single-node case whose op is in the spec's families runs through ``onnx_ops.run`` with the
case's opset and is compared with the case's expected outputs (the oracle). Skipped cases are
listed, each with a reason, in tests/data/onnx_conformance_skips.tsv.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_cases import compare, load_skips, node_cases

from mdf_engine import onnx_ops

PART1 = set(
    "Abs Acos Acosh Add And ArgMax ArgMin Asin Asinh Atan Atanh BitShift Cast Ceil Celu Clip "
    "Compress Concat Constant ConstantOfShape Cos Cosh CumSum DepthToSpace Det Div Einsum Elu "
    "Equal Erf Exp Expand EyeLike Flatten Floor Gather GatherElements GatherND Gemm Greater "
    "GreaterOrEqual HardSigmoid Hardmax Identity IsInf IsNaN LeakyRelu Less LessOrEqual Log "
    "LogSoftmax MatMul MatMulInteger Max Mean Min Mod Mul Neg NonZero Not OneHot Or PRelu Pad Pow "
    "Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean "
    "ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape ReverseSequence Round Scatter "
    "ScatterElements ScatterND Selu Shape Shrink Sigmoid Sign Sin Sinh Size Slice Softmax "
    "Softplus Softsign SpaceToDepth Split Sqrt Squeeze Sub Sum Tan Tanh ThresholdedRelu Tile TopK "
    "Transpose Unique Unsqueeze Where Xor".split()
)
PART2 = set(
    "AveragePool BatchNormalization ConcatFromSequence Conv ConvInteger ConvTranspose "
    "DequantizeLinear Dropout DynamicQuantizeLinear GRU GlobalAveragePool GlobalLpPool "
    "GlobalMaxPool If InstanceNormalization LRN LSTM Loop LpNormalization LpPool MaxPool "
    "MaxRoiPool MaxUnpool MeanVarianceNormalization Multinomial NegativeLogLikelihoodLoss "
    "NonMaxSuppression QLinearConv QLinearMatMul QuantizeLinear RNN RandomNormal "
    "RandomNormalLike RandomUniform RandomUniformLike Resize RoiAlign Scan SequenceAt "
    "SequenceConstruct SequenceEmpty SequenceErase SequenceInsert SequenceLength "
    "SoftmaxCrossEntropyLoss SplitToSequence StringNormalizer TfIdfVectorizer Upsample".split()
)
#: The opset-14/15 entries of modeci-mdf 0.4.15's ONNX function table beyond PART1/PART2.
PART3 = set(
    "CastLike Optional OptionalHasElement OptionalGetElement Bernoulli HardSwish Trilu".split()
)
assert len(PART1) == 113 and len(PART2) == 49 and len(PART3) == 7
OUT_OF_DENOMINATOR = ("era", "random")

REQUIRED_RATE = 1.0  # every plain-dtype case of the spec's ops


def _cases(ops: set[str]):
    return [c for c in node_cases() if c.domain in ("", "ai.onnx") and c.op in ops]


def _run_case(case) -> None:
    got = onnx_ops.run(
        case.op, case.inputs, case.attributes, opset=case.opset, num_outputs=case.n_outputs
    )
    compare(case, got)


def _outcome(case, skips) -> str:
    if case.name in skips:
        return "era" if skips[case.name][0] in OUT_OF_DENOMINATOR else "fail"
    if case.op not in onnx_ops.names():
        return "fail"
    try:
        with np.errstate(all="ignore"):
            _run_case(case)
    except Exception:
        return "fail"
    return "pass"


ALL_CASES = _cases(PART1 | PART2 | PART3)


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_node_case(case):
    skips = load_skips()
    if case.name in skips:
        pytest.skip(f"{skips[case.name][0]}: {skips[case.name][1]}")
    if case.op not in onnx_ops.names():
        pytest.skip(f"{case.op} is not registered yet")
    with np.errstate(all="ignore"):
        _run_case(case)


@pytest.mark.parametrize("part,ops", [("part1", PART1), ("part2", PART2), ("part3", PART3)])
def test_every_op_is_registered(part, ops):
    missing = sorted(ops - set(onnx_ops.names()))
    assert not missing, f"{part}: not registered: {missing}"


@pytest.mark.parametrize("part,ops", [("part1", PART1), ("part2", PART2), ("part3", PART3)])
def test_pass_rate(part, ops):
    skips = load_skips()
    outcomes = [_outcome(c, skips) for c in _cases(ops)]
    counted = [o for o in outcomes if o != "era"]
    rate = counted.count("pass") / max(1, len(counted))
    print(
        f"{part}: {counted.count('pass')}/{len(counted)} pass ({rate:.1%}), "
        f"{outcomes.count('era')} out of era"
    )
    assert rate >= REQUIRED_RATE
