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
    calls = [ln.strip() for ln in source.splitlines() if re.match(r"\s+F\d+\(.*\)$", ln)]
    # (each in run and run_quiet) the first Conv writes its value, its BN's and that one's
    # Relu's (the shifted-slice kernel), the second its value and its BN's (direct kernel);
    # the BN of the sum writes its value and its Relu's
    assert sum(c.endswith(", True))") for c in calls) == 2
    assert sum(c.endswith(", False))") for c in calls) == 2
    assert sum(re.search(r", a\d+, a\d+\)$", c) is not None for c in calls) == 2
    # the MaxPool (its Indices unread) writes its values into its slot's one item: no result
    # array, no copy of it into the slot
    assert sum(re.search(r", a\d+\[0\]\)$", c) is not None for c in calls) == 2
    assert not re.search(r"_put\(a\d+\[0\], r_", source)


def test_conv_kernel_writes_into_a_slot_as_it_returns_a_new_array():
    """The compiled Conv kernel with and without its slot, on each of its kernels (direct,
    shifted slices, 1x1 products)."""
    from mdf_engine.onnx_ops.conv import conv_jit

    rng = np.random.default_rng(3)
    for cin, cout, k, size in [(2, 3, 3, 5), (4, 8, 3, 12), (16, 8, 1, 9)]:
        x = rng.standard_normal((1, cin, size, size)).astype(np.float32)
        w = rng.standard_normal((cout, cin, k, k)).astype(np.float32)
        b = rng.standard_normal(cout).astype(np.float32)
        p = np.array([k // 2] * 4)
        one = np.array([1, 1])
        args = (x, w, b, None, one, 1, np.array([k, k]), p, one)
        y = conv_jit(*args)
        into = np.full_like(y, np.nan)
        assert conv_jit(*args, into) is into
        assert into.tobytes() == y.tobytes()
