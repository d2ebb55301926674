"""Sequence operators against onnxruntime (small models ending in a tensor), random operators by
statistics and reproducibility (no oracle gives exact random values)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx_cases import ort_model_run  # noqa: E402

from mdf_engine import onnx_ops  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_ops.graph import run_model  # noqa: E402


def _vi(name, dtype=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _same_as_ort(model, feeds):
    want = ort_model_run(model, feeds)
    got = run_model(model, feeds)
    for (name, g), w in zip(got.items(), want):
        assert np.asarray(g).dtype == w.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)


A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = -np.arange(9, dtype=np.float32).reshape(3, 3)
C = np.full((1, 3), 7.0, np.float32)


@pytest.mark.parametrize("pos,erase", [(0, -1), (-1, 0), (2, 1), (3, None)])
def test_construct_insert_erase_concat(pos, erase):
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s1"]),
        helper.make_node("SequenceInsert", ["s1", "c", "p"], ["s2"]),
        helper.make_node("SequenceErase", ["s2"] + ([] if erase is None else ["e"]), ["s3"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["y"], axis=0),
        helper.make_node("SequenceLength", ["s3"], ["n"]),
        helper.make_node("SequenceAt", ["s2", "p"], ["at"]),
    ]
    ins = [
        _vi("a", shape=[2, 3]),
        _vi("b", shape=[3, 3]),
        _vi("c", shape=[1, 3]),
        _vi("p", TensorProto.INT64, []),
    ]
    feeds = {"a": A, "b": B, "c": C, "p": np.array(pos if pos < 3 else -1, np.int64)}
    if erase is not None:
        ins.append(_vi("e", TensorProto.INT64, []))
        feeds["e"] = np.array(erase, np.int64)
    outs = [_vi("y", shape=None), _vi("n", TensorProto.INT64, []), _vi("at", shape=None)]
    _same_as_ort(_model(nodes, ins, outs), feeds)


@pytest.mark.parametrize(
    "split,axis,keepdims,new_axis",
    [
        (None, 1, 1, 0),
        (None, 0, 0, 1),
        (np.array(2, np.int64), 1, 1, 0),
        (np.array([1, 3, 2], np.int64), -1, 1, 0),
    ],
)
def test_split_to_sequence_and_back(split, axis, keepdims, new_axis):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    inputs = ["x"] + ([] if split is None else ["s"])
    cat_axis = axis if not new_axis else 0
    nodes = [
        helper.make_node("SplitToSequence", inputs, ["seq"], axis=axis, keepdims=keepdims),
        helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=cat_axis, new_axis=new_axis),
        helper.make_node("SequenceAt", ["seq", "last"], ["z"]),
    ]
    ins = [_vi("x", shape=[4, 6]), _vi("last", TensorProto.INT64, [])]
    feeds = {"x": x, "last": np.array(-1, np.int64)}
    if split is not None:
        ins.append(_vi("s", TensorProto.INT64, list(split.shape)))
        feeds["s"] = split
    _same_as_ort(_model(nodes, ins, [_vi("y", shape=None), _vi("z", shape=None)]), feeds)


def test_sequence_errors_and_empty():
    assert onnx_ops.run("SequenceEmpty", [])[0] == []
    with pytest.raises(MDFError, match="position 5 is outside"):
        onnx_ops.run("SequenceAt", [[A], np.array(5)])
    with pytest.raises(MDFError, match="must be non-negative and sum"):
        onnx_ops.run("SplitToSequence", [A, np.array([1, 1])], {"axis": 1})
    s = [A]
    onnx_ops.run("SequenceInsert", [s, A])
    assert len(s) == 1  # the input list is not modified


# ------------------------------------------------------------------------------- random
def test_random_normal_moments_and_seed():
    a = onnx_ops.run(
        "RandomNormal", [], {"shape": [200, 100], "mean": 2.0, "scale": 3.0, "seed": 5.0}
    )[0]
    b = onnx_ops.run(
        "RandomNormal", [], {"shape": [200, 100], "mean": 2.0, "scale": 3.0, "seed": 5.0}
    )[0]
    c = onnx_ops.run("RandomNormal", [], {"shape": [200, 100], "mean": 2.0, "scale": 3.0})[0]
    d = onnx_ops.run("RandomNormal", [], {"shape": [200, 100], "mean": 2.0, "scale": 3.0})[0]
    assert a.dtype == np.float32 and a.shape == (200, 100)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(c, d)
    n = a.size  # standard errors: mean 3/sqrt(n), std about 3/sqrt(2n)
    for x in (a, c):
        assert abs(x.mean() - 2.0) < 5 * 3.0 / np.sqrt(n)
        assert abs(x.std() - 3.0) < 5 * 3.0 / np.sqrt(2 * n)


def test_random_uniform_like_range_moments_dtype():
    like = np.zeros((300, 100), np.float64)
    u = onnx_ops.run("RandomUniformLike", [like], {"low": -1.0, "high": 3.0, "seed": 1.0})[0]
    assert u.dtype == np.float64 and u.shape == like.shape
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 5 * (4 / np.sqrt(12)) / np.sqrt(u.size)
    assert abs(u.var() - 16 / 12) < 0.05
    v = onnx_ops.run("RandomUniform", [], {"shape": [1000], "dtype": 11})[0]
    assert v.dtype == np.float64 and 0.0 <= v.min() and v.max() < 1.0
    w = onnx_ops.run("RandomNormalLike", [np.zeros((3, 2), np.int32)], {"dtype": 1})[0]
    assert w.dtype == np.float32 and w.shape == (3, 2)


def test_multinomial_frequencies():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    n = 20000
    out = onnx_ops.run(
        "Multinomial", [np.log(p).astype(np.float32)], {"sample_size": n, "seed": 3.0}
    )[0]
    assert out.dtype == np.int32 and out.shape == (2, n)
    for row, probs in zip(out, p):
        freq = np.bincount(row, minlength=3) / n
        se = np.sqrt(probs * (1 - probs) / n)
        assert np.all(np.abs(freq - probs) < 5 * se)
    again = onnx_ops.run("Multinomial", [np.log(p)], {"sample_size": n, "seed": 3.0, "dtype": 7})[0]
    assert again.dtype == np.int64
    np.testing.assert_array_equal(again, out)


def test_dropout_training_statistics_and_mask():
    x = np.ones((400, 250), np.float32)
    y, mask = onnx_ops.run("Dropout", [x, np.array(0.3, np.float32), np.array(True)], opset=13)
    assert mask.dtype == np.bool_
    kept = mask.mean()
    assert abs(kept - 0.7) < 5 * np.sqrt(0.21 / x.size)
    np.testing.assert_allclose(y[mask], 1 / 0.7, rtol=1e-6)
    assert np.all(y[~mask] == 0)
    y2, m2 = onnx_ops.run("Dropout", [x, np.array(0.3, np.float32)], opset=13)
    np.testing.assert_array_equal(y2, x)
    assert m2.all()
    with pytest.raises(MDFError, match="ratio must be in"):
        onnx_ops.run("Dropout", [x, np.array(1.5, np.float32), np.array(True)], opset=13)


def test_random_against_ort_shape_and_dtype():
    node = helper.make_node(
        "RandomUniform", [], ["y"], shape=[3, 4], dtype=TensorProto.DOUBLE, low=2.0, high=5.0
    )
    model = _model([node], [], [_vi("y", TensorProto.DOUBLE, [3, 4])])
    want = ort_model_run(model, {})[0]
    got = run_model(model, {})["y"]
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.min() >= 2.0 and got.max() < 5.0
