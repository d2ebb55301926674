"""BatchNormalization -> Relu in one pass (mdf_engine/plan/fusion.py ``bn_relu_pairs``) on
both backends, and the compiled Conv/BatchNormalization kernels writing their values into
their slots (backends/compiled/node_code.py ``kernel_into``). Oracles: onnxruntime on the same
ONNX model, and the interpreter's general path (graph-scheduler every update, every node
evaluated by itself, nothing fused), bit for bit on every node's values after every update;
the compiled backend's values equal those bit for bit too."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_nets import _Net  # noqa: E402

from mdf_engine.onnx_io import import_model  # noqa: E402
from mdf_engine.plan import plan_graph  # noqa: E402
from mdf_engine.plan.fusion import bn_relu_pairs  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402


def _net(opset: int):
    """Conv, BN, Relu (fused), max pool; Conv without bias, BN read by a Relu and a Sigmoid
    (not fused); BN of that Relu, Relu (fused); global average pool."""
    n = _Net(11)
    h = n.node("Relu", [n.bn(n.conv("input", 3, 8, 3, pad=1), 8)])
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    b = n.bn(n.conv(h, 8, 6, 3, pad=1, bias=False), 6)
    h = n.node("Add", [n.node("Relu", [b]), n.node("Sigmoid", [b])])
    h = n.node("Relu", [n.bn(h, 6)])
    h = n.node("GlobalAveragePool", [h])
    return n.model("input", [1, 3, 12, 12], h, [1, 6, 1, 1], "bnnet", opset)


def _values(sim: Simulation) -> dict:
    return {
        (nid, pid): np.asarray(v)
        for nid, ports in sim.outputs.items()
        for pid, v in ports.items()
        if isinstance(v, np.ndarray)
    }


def _equal(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
        assert got[k].tobytes() == v.tobytes(), k


@pytest.mark.parametrize("opset", [13, 15])  # BatchNormalization since 9, then since 14
def test_bn_relu_fused_on_both_backends_equals_the_general_path(opset):
    mp = _net(opset)
    model = import_model(mp)
    plan = plan_graph(model, model.graphs[0])
    assert len(bn_relu_pairs(plan)) == 2  # (the BN read by two nodes is not paired)
    key = model.metadata["onnx"]["inputs"]["input"]
    node, port = model.metadata["onnx"]["outputs"][mp.graph.output[0].name].split(".", 1)
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    fast = Simulation(model, backend="interpreted")
    slow = Simulation(model, backend="interpreted")
    slow.runner._replay = None
    slow.runner._lean = dict.fromkeys(slow.runner._lean)
    comp = Simulation(model, backend="compiled")
    assert fast.runner.fused == 2
    rng = np.random.default_rng(opset)
    held = []
    for _ in range(3):
        x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
        for sim in (fast, slow, comp):
            sim.evaluate(initializer={key: x})
        want = _values(slow)
        np.testing.assert_allclose(
            want[(node, port)], sess.run(None, {"input": x})[0], rtol=1e-4, atol=1e-5
        )
        _equal(_values(fast), want)
        got = _values(comp)
        _equal(got, want)
        for old, copies in held:  # a value read after an earlier update is not written again
            for k, v in old.items():
                assert v.tobytes() == copies[k], k
        held.append((_values(fast), {k: v.tobytes() for k, v in _values(fast).items()}))
    runner = comp.runner
    assert runner.is_compiled, runner.fallback_reason
    source = Path(runner._quiet_fn.py_func.__code__.co_filename).read_text()
    # the Conv and BN kernels write their slots (no new array and copy); a fused BN writes
    # its Relu's slot too, and that Relu's node calls nothing
    assert len(re.findall(r"^\s+F\d+\(.*, a\d+\)$", source, re.M)) >= 2 * 2
    assert len(re.findall(r"^\s+F\d+\(.*, a\d+, a\d+\)$", source, re.M)) == 2 * 2
