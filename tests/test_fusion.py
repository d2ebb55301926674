"""Fused nodes of the interpreted backend (mdf_engine/plan/fusion.py decides them,
mdf_engine/interpreter_fused.py runs them): a Conv and the Relu that alone reads it, and a
Concat of such Relus that the Relus write in place. Oracles: onnxruntime on the same ONNX
model, and the interpreter's general path (graph-scheduler every update, ``evaluate_node``
every node: the interpreter as it was before any fast path), bit for bit on every node's
outputs after every update."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_nets import _Net  # noqa: E402

from mdf_engine.loader import from_dict  # noqa: E402
from mdf_engine.model import to_dict  # noqa: E402
from mdf_engine.onnx_io import import_model  # noqa: E402
from mdf_engine.plan import plan_graph  # noqa: E402
from mdf_engine.plan.fusion import concat_of_relus, conv_relu_pairs  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402


def _fire_net(batch: int = 1, shared: bool = False):
    """Conv/Relu, max pool, a Fire module (squeeze, 1x1 and 3x3 expands, Concat), a Conv read
    by two nodes when ``shared`` (then not fused), and a Concat of a Relu and a MaxPool."""
    n = _Net(3)
    h = n.node("Relu", [n.conv("input", 3, 8, 3, pad=1)])
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    s = n.node("Relu", [n.conv(h, 8, 4, 1)])
    a = n.node("Relu", [n.conv(s, 4, 6, 1)])
    b = n.node("Relu", [n.conv(s, 4, 6, 3, pad=1, bias=False)])
    h = n.node("Concat", [a, b], axis=1)
    if shared:
        c = n.conv(h, 12, 5, 1)
        h = n.node("Concat", [n.node("Relu", [c]), n.node("Sigmoid", [c])], axis=1)
        h = n.node("Concat", [n.node("Relu", [n.conv(h, 10, 4, 1)]), h], axis=1)
    h = n.node("GlobalAveragePool", [h])
    c = 14 if shared else 12
    return n.model("input", [batch, 3, 10, 10], h, [batch, c, 1, 1], "fire", 13)


def _sim(mp, fast: bool) -> tuple[Simulation, str, str, str]:
    model = import_model(mp)
    sim = Simulation(model, backend="interpreted")
    meta = model.metadata["onnx"]
    node, port = meta["outputs"][mp.graph.output[0].name].split(".", 1)
    if not fast:
        sim.runner._replay = None
        sim.runner._lean = dict.fromkeys(sim.runner._lean)
    return sim, meta["inputs"]["input"], node, port


def _values(sim: Simulation) -> dict:
    r = sim.runner
    return {
        (nid, kind, k): v
        for nid, st in r.states.items()
        for kind in ("params", "outputs")
        for k, v in getattr(st, kind).items()
        if isinstance(v, np.ndarray)
    }


@pytest.mark.parametrize(("batch", "shared", "fused"), [(1, False, 5), (2, False, 5), (1, True, 6)])
def test_fused_nodes_equal_the_general_path_and_onnxruntime(batch, shared, fused):
    mp = _fire_net(batch, shared)
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    fast, key, node, port = _sim(mp, True)
    slow = _sim(mp, False)[0]
    # every Relu after a Conv read by it alone, and the Concats of two such Relus (a batch of 2
    # too: its parts are not contiguous, which the interpreter finds when it runs)
    assert fast.runner.fused == fused
    rng = np.random.default_rng(batch)
    held = []
    for _ in range(5):
        x = rng.standard_normal((batch, 3, 10, 10)).astype(np.float32)
        fast.evaluate(initializer={key: x})
        slow.evaluate(initializer={key: x})
        np.testing.assert_allclose(
            fast.value(node, port), sess.run(None, {"input": x})[0], rtol=1e-4, atol=1e-5
        )
        got, want = _values(fast), _values(slow)
        assert got.keys() == want.keys()
        for k, v in want.items():  # every parameter and output, bit for bit
            assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
            assert got[k].tobytes() == v.tobytes(), k
        # what a user read after an earlier update is never written again
        for old, copies in held:
            for k, v in old.items():
                assert v.tobytes() == copies[k], k
        held.append((got, {k: v.tobytes() for k, v in got.items()}))
    assert fast.runner._replay.steps is not None
    assert fast.order_of_execution == slow.order_of_execution
    assert fast.time_steps == slow.time_steps


def test_a_concat_of_relus_is_their_array_and_follows_a_new_input_shape():
    fast, key, node, port = _sim(_fire_net(), True)
    slow = _sim(_fire_net(), False)[0]
    r = fast.runner
    rng = np.random.default_rng(7)
    for size in (10, 10, 10, 12, 12, 10):
        x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
        fast.evaluate(initializer={key: x})
        slow.evaluate(initializer={key: x})
        np.testing.assert_array_equal(fast.value(node, port), slow.value(node, port))
    concat = next(n for n in r.states if n.startswith("concat"))
    joined = r.states[concat].outputs[concat.removesuffix("_node")]
    parts = [
        r.states[ep.sender].outputs[ep.sender_port] for ep in r.plan.incoming[concat]
    ]  # the Relus' values are the parts of the Concat's (no copy made)
    assert all(p.base is joined for p in parts)


def _edited(mp, edit) -> tuple:
    d = to_dict(import_model(mp))
    graph = next(iter(next(iter(d.values()))["graphs"].values()))
    edit(graph)
    model = from_dict(d)
    return model, plan_graph(model, model.graphs[0])


def _relu_of(graph, k=0) -> str:
    return [n for n in graph["nodes"] if n.startswith("relu")][k]


def _condition(graph):
    graph["conditions"] = {"node_specific": {_relu_of(graph): {"type": "Always", "kwargs": {}}}}


def _weight(graph):
    edge = next(e for e in graph["edges"].values() if e["receiver"] == _relu_of(graph))
    edge["parameters"] = {"weight": 2.0}


def _second_reader(graph):
    relu = _relu_of(graph, 1)
    edge = next(e for e in graph["edges"].values() if e["receiver"] == relu)
    graph["edges"]["extra"] = {**edge, "receiver": "sink", "receiver_port": "x"}
    graph["nodes"]["sink"] = {
        "input_ports": {"x": {}},
        "output_ports": {"y": {"value": "x * 2"}},
    }


@pytest.mark.parametrize("edit", [_condition, _weight, _second_reader])
def test_a_pair_with_a_condition_a_weight_or_another_reader_is_not_fused(edit):
    mp = _fire_net()
    base = conv_relu_pairs(_edited(mp, lambda g: None)[1])
    model, plan = _edited(mp, edit)
    pairs = conv_relu_pairs(plan)
    assert len(pairs) == len(base) - 1
    assert concat_of_relus(plan, pairs) == concat_of_relus(plan, base)
    fast = Simulation(model, backend="interpreted")
    slow = Simulation(model, backend="interpreted")
    slow.runner._replay = None
    slow.runner._lean = dict.fromkeys(slow.runner._lean)
    x = np.random.default_rng(0).standard_normal((1, 3, 10, 10)).astype(np.float32)
    for _ in range(4):
        fast.evaluate(initializer={"input": x})
        slow.evaluate(initializer={"input": x})
    for nid, outs in slow.outputs.items():
        for oid, v in outs.items():
            np.testing.assert_array_equal(fast.outputs[nid][oid], v)


def test_a_failing_fused_conv_names_its_own_parameter():
    from mdf_engine.errors import MDFError

    fast, key, _, _ = _sim(_fire_net(), True)
    slow = _sim(_fire_net(), False)[0]
    x = np.zeros((1, 5, 10, 10), np.float32)  # 5 channels where the first Conv takes 3
    with pytest.raises(MDFError) as got:
        fast.evaluate(initializer={key: x})
    with pytest.raises(MDFError) as want:
        slow.evaluate(initializer={key: x})
    assert got.value.path == want.value.path and "parameters.conv" in got.value.path
    assert got.value.message == want.value.message
