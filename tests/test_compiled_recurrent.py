"""The recurrent ONNX operators on the compiled backend (issue 22, goal 2): an omitted optional
input written as a parameter with nothing in it (``"sequence_lens": {}``, as pytorch_to_mdf
exports it) is ``None`` in the compiled code, and RNN, GRU and LSTM run as Numba kernels in
the compiled loop, their several outputs kept as a tuple. An ``activations`` attribute given
as a sibling parameter holding a list of strings (pytorch_to_mdf's RNN) is a constant of the
code, and the call goes through the Python kernel (the Numba one has the default activations).

Oracle: onnxruntime running the same one-node ONNX model (the same weights, the omitted inputs
left empty); the compiled run must also equal the interpreted one bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.loader import from_dict

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper, numpy_helper  # noqa: E402

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
T, BATCH, I, H = 4, 2, 3, 5


def _case(op: str, direction: str, seed: int) -> tuple[dict, dict, list[str]]:
    """The op's weights (float32), its attributes, and the names of its inputs in order
    ('' for an omitted one): B and initial_h given, sequence_lens (and LSTM's initial_c and
    P) omitted."""
    rng = np.random.default_rng(seed)
    nd, g = (2 if direction == "bidirectional" else 1), GATES[op]
    arrays = {
        "W": 0.4 * rng.standard_normal((nd, g * H, I)),
        "R": 0.4 * rng.standard_normal((nd, g * H, H)),
        "B": 0.2 * rng.standard_normal((nd, 2 * g * H)),
        "initial_h": rng.standard_normal((nd, BATCH, H)),
    }
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    attrs = {"hidden_size": H, "direction": direction}
    if op == "GRU":
        attrs["linear_before_reset"] = 1
    if op == "RNN":
        attrs["activations"] = ["Relu"]
    names = ["X", "W", "R", "B", "", "initial_h"] + (["", ""] if op == "LSTM" else [])
    return arrays, attrs, names


def _mdf(op: str, arrays: dict, attrs: dict, names: list[str]) -> dict:
    """One node calling ``onnx::<op>``, every omitted input a parameter with nothing in it."""
    inputs = {"GRU": 6, "RNN": 6, "LSTM": 8}[op]
    schema = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][:inputs]
    params = {k: {"value": v.tolist()} for k, v in arrays.items()}
    args = {"X": "x", **{k: v for k, v in attrs.items() if k != "activations"}}
    if "activations" in attrs:  # as pytorch_to_mdf writes it: a sibling parameter
        params["activations"] = {"value": attrs["activations"]}
    for name, given in zip(schema[1:], names[1:]):
        if not given:
            params["_" + name] = {}
        args[name] = name if given else "_" + name
    params["f"] = {"function": f"onnx::{op}", "args": args}
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = {
        "input_ports": {"x": {"shape": [T, BATCH, I], "type": "float32"}},
        "parameters": params,
        "output_ports": {o: {"value": f"f[{k}]"} for k, o in enumerate(outs)},
    }
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"n": node}}}}}


def _onnxruntime(op: str, arrays: dict, attrs: dict, names: list[str], x: np.ndarray) -> list:
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items()]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    g = helper.make_graph(
        [helper.make_node(op, names, outs, **attrs)],
        "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(x.shape))],
        [onnx.ValueInfoProto(name=o) for o in outs],
        initializer=inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})


@pytest.mark.parametrize(
    "op,direction", [("RNN", "reverse"), ("GRU", "forward"), ("LSTM", "bidirectional")]
)
def test_recurrent_op_compiles_with_omitted_inputs(op: str, direction: str) -> None:
    arrays, attrs, names = _case(op, direction, seed=len(op))
    model = from_dict(_mdf(op, arrays, attrs, names))
    xs = np.random.default_rng(3).standard_normal((2, T, BATCH, I)).astype(np.float32)
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(model, backend=backend)
        seen = []
        for x in xs:  # two calls: the compiled loop runs the kernel again on new data
            sim.evaluate(initializer={"x": x})
            seen.append({k: np.asarray(v) for k, v in sim.outputs["n"].items()})
        runs[backend] = (sim, seen)
    sim = runs["compiled"][0]
    assert sim.runner.is_compiled, sim.runner.fallback_reason
    for got, want, x in zip(runs["compiled"][1], runs["interpreted"][1], xs):
        expected = _onnxruntime(op, arrays, attrs, names, x)
        for (port, w), e in zip(want.items(), expected):
            g = got[port]
            assert g.dtype == w.dtype == np.float32 and g.shape == w.shape == e.shape, port
            np.testing.assert_array_equal(g, w, err_msg=port)
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, err_msg=port)
