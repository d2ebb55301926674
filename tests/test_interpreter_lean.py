"""The interpreted backend's fast paths (mdf_engine/interpreter_lean.py) against onnxruntime and
against the general path: a CNN with conv/BN/ReLU/max pool, a fire module (1x1 and 3x3 convs,
Concat), global average pool and Gemm, imported from ONNX and evaluated several times (the
schedule is replayed from the third update on)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_nets import _Net  # noqa: E402

from mdf_engine.onnx_io import import_model  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402


def _cnn():
    n = _Net(5)
    h = n.node("Relu", [n.bn(n.conv("input", 3, 8, 3, pad=1), 8)])
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    s = n.node("Relu", [n.conv(h, 8, 4, 1)])
    a = n.node("Relu", [n.conv(s, 4, 8, 1)])
    b = n.node("Relu", [n.conv(s, 4, 8, 3, pad=1, bias=False)])
    h = n.node("Concat", [a, b], axis=1)
    h = n.node("Flatten", [n.node("GlobalAveragePool", [h])], axis=1)
    w = (0.2 * n.rng.standard_normal((5, 16))).astype(np.float32)
    h = n.node("Gemm", [h, n.const("fc_w", w), n.const("fc_b", np.ones(5, np.float32))], transB=1)
    return n.model("input", [1, 3, 12, 12], h, [1, 5], "lean_cnn", 13)


def _sim(mp, fast: bool):
    model = import_model(mp)
    sim = Simulation(model, backend="interpreted")
    meta = model.metadata["onnx"]
    node, port = meta["outputs"][mp.graph.output[0].name].split(".", 1)
    if not fast:  # the general path: graph-scheduler every update, evaluate_node every node
        sim.runner._replay = None
        sim.runner._lean = dict.fromkeys(sim.runner._lean)
    return sim, meta["inputs"]["input"], node, port


def test_fast_paths_equal_onnxruntime_and_the_general_path():
    mp = _cnn()
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    fast, key, node, port = _sim(mp, True)
    slow = _sim(mp, False)[0]
    assert all(f is not None for f in fast.runner._lean.values())
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
        fast.evaluate(initializer={key: x})
        slow.evaluate(initializer={key: x})
        got = fast.value(node, port)
        expected = sess.run(None, {"input": x})[0]
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        for nid, outs in slow.outputs.items():  # every node's outputs, bit for bit
            for oid, v in outs.items():
                np.testing.assert_array_equal(fast.outputs[nid][oid], v)
        assert fast.time_steps == slow.time_steps
        assert fast.time_step_times == slow.time_step_times
    assert fast.runner._replay.steps is not None  # the last updates were replayed
    assert fast.order_of_execution == slow.order_of_execution


def test_a_failing_kernel_names_its_parameter_on_the_fast_path():
    mp = _cnn()
    fast, key, _, _ = _sim(mp, True)
    from mdf_engine.errors import MDFError

    with pytest.raises(MDFError, match=r"parameters\.conv"):
        fast.evaluate(initializer={key: np.zeros((1, 5, 12, 12), np.float32)})
