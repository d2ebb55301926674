"""The opset-14/15 operators of modeci-mdf 0.4.15's ONNX table that the backend node cases do not
fully cover: Optional on its own, the three ops inside an imported MDF model, and Bernoulli.

Oracles: onnxruntime on the same ONNX graph; for Bernoulli (whose stored node cases are one
unrecorded random draw) the spec's definition: P(y = 1) = p, so a seeded sample's mean lies
within a few standard errors of p, and p = 0 / p = 1 give 0 / 1 exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

from mdf_engine import onnx_ops  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_io import run_onnx  # noqa: E402
from mdf_engine.onnx_ops.graph import run_graph  # noqa: E402


def _ort(mp, feeds):
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _optional_graph():
    """has = OptionalHasElement(Optional(x)); empty = OptionalHasElement(Optional<type>());
    y = OptionalGetElement(Optional(x)) + 1."""
    tensor_type = helper.make_tensor_type_proto(TensorProto.FLOAT, [3])
    nodes = [
        helper.make_node("Optional", ["x"], ["ox"]),
        helper.make_node("Optional", [], ["none"], type=tensor_type),
        helper.make_node("OptionalHasElement", ["ox"], ["has"]),
        helper.make_node("OptionalHasElement", ["none"], ["empty"]),
        helper.make_node("OptionalGetElement", ["ox"], ["gx"]),
        helper.make_node("Add", ["gx", "one"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "optional",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [
            helper.make_tensor_value_info("has", TensorProto.BOOL, []),
            helper.make_tensor_value_info("empty", TensorProto.BOOL, []),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
        ],
        initializer=[helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_optional_ops_match_onnxruntime():
    mp = _optional_graph()
    onnx.checker.check_model(mp, full_check=True)
    x = np.array([1.0, -2.0, 3.5], np.float32)
    expected = _ort(mp, {"x": x})
    got = run_graph(mp.graph, {"x": x}, 18)
    for name, exp in expected.items():
        assert np.asarray(got[name]).dtype == exp.dtype, name
        np.testing.assert_array_equal(got[name], exp, err_msg=name)


def test_optional_get_element_of_empty_optional_is_an_mdf_error():
    with pytest.raises(MDFError, match="empty"):
        onnx_ops.run("OptionalGetElement", [None], opset=18)


def _tensor_ops_model():
    """Trilu (lower, k = -1), HardSwish and CastLike (to float64) in one opset-15 graph."""
    nodes = [
        helper.make_node("Trilu", ["x", "k"], ["lower"], upper=0),
        helper.make_node("HardSwish", ["lower"], ["hs"]),
        helper.make_node("CastLike", ["hs", "like"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "tensor_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 4, 5])],
        initializer=[
            helper.make_tensor("k", TensorProto.INT64, [], [-1]),
            helper.make_tensor("like", TensorProto.DOUBLE, [0], []),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


def test_trilu_hardswish_castlike_imported_as_mdf_match_onnxruntime():
    mp = _tensor_ops_model()
    onnx.checker.check_model(mp, full_check=True)
    x = (4 * np.random.default_rng(5).standard_normal((2, 4, 5))).astype(np.float32)
    (expected,) = _ort(mp, {"x": x}).values()
    got = run_onnx(mp, {"x": x})["y"]
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "dtype,np_dtype", [(None, np.float32), (11, np.float64), (7, np.int64), (9, np.bool_)]
)
def test_bernoulli_follows_its_definition(dtype, np_dtype):
    """P(y = 1) = p: p = 0 and 1 are exact; a seeded sample of 20,000 at p = 0.3 has a mean
    within 5 standard errors of 0.3; the same seed gives the same draw."""
    p = np.concatenate([np.zeros(10), np.ones(10), np.full(20000, 0.3)]).astype(np.float32)
    attrs = {"seed": 7.0} if dtype is None else {"seed": 7.0, "dtype": dtype}
    (y,) = onnx_ops.run("Bernoulli", [p], attrs, opset=15)
    assert y.dtype == np_dtype and y.shape == p.shape
    yf = y.astype(np.float64)
    assert set(np.unique(yf)) <= {0.0, 1.0}
    assert not yf[:10].any() and yf[10:20].all()
    stderr = np.sqrt(0.3 * 0.7 / 20000)
    assert abs(yf[20:].mean() - 0.3) < 5 * stderr
    (again,) = onnx_ops.run("Bernoulli", [p], attrs, opset=15)
    np.testing.assert_array_equal(again, y)


def test_bernoulli_rejects_probabilities_outside_0_1():
    with pytest.raises(MDFError, match=r"\[0, 1\]"):
        onnx_ops.run("Bernoulli", [np.array([0.5, 1.5], np.float32)], opset=15)
