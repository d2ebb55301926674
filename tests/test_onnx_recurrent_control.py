"""RNN/GRU/LSTM beyond the ONNX node cases, and the control-flow operators and graph interpreter.

Oracle: onnxruntime, running one-node (or small) ONNX models built with ``onnx.helper``; for
callable bodies, an independent numpy loop written in the test.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx_cases import check_against_ort, ort_model_run, ort_run  # noqa: E402

from mdf_engine import onnx_ops  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_ops.graph import run_graph, run_model  # noqa: E402

OPSET = 14


def _check_against_ort(op, inputs, n_out, attrs, rtol=1e-4, atol=1e-5):
    check_against_ort(op, inputs, attrs, OPSET, n_out, rtol, atol)


def _weights(rng, gates, nd, H, I, T, Bt, layout=0, with_states=True):
    X = rng.standard_normal((T, Bt, I) if layout == 0 else (Bt, T, I)).astype(np.float32)
    W = (0.5 * rng.standard_normal((nd, gates * H, I))).astype(np.float32)
    R = (0.5 * rng.standard_normal((nd, gates * H, H))).astype(np.float32)
    B = (0.3 * rng.standard_normal((nd, 2 * gates * H))).astype(np.float32)
    sshape = (nd, Bt, H) if layout == 0 else (Bt, nd, H)
    h0 = rng.standard_normal(sshape).astype(np.float32) if with_states else None
    return X, W, R, B, h0


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_seq_lens_peepholes_clip(direction):
    rng = np.random.default_rng(1)
    nd, H, I, T, Bt = (2 if direction == "bidirectional" else 1), 5, 3, 6, 4
    X, W, R, B, h0 = _weights(rng, 4, nd, H, I, T, Bt)
    c0 = rng.standard_normal((nd, Bt, H)).astype(np.float32)
    P = rng.standard_normal((nd, 3 * H)).astype(np.float32)
    lens = np.array([6, 3, 1, 5], dtype=np.int32)
    _check_against_ort(
        "LSTM",
        [X, W, R, B, lens, h0, c0, P],
        3,
        {"hidden_size": H, "direction": direction, "clip": 1.5},
    )


def test_lstm_input_forget_and_activations():
    rng = np.random.default_rng(2)
    X, W, R, B, h0 = _weights(rng, 4, 1, 4, 3, 5, 2)
    _check_against_ort(
        "LSTM",
        [X, W, R, B, None, h0],
        3,
        {
            "hidden_size": 4,
            "input_forget": 1,
            "activations": ["HardSigmoid", "LeakyRelu", "ScaledTanh"],
            "activation_alpha": [0.3, 0.05, 0.9],
            "activation_beta": [0.4, 1.2],
        },
    )


def test_lstm_layout1_bidirectional():
    # onnxruntime runs only layout 0: the oracle is its layout-0 result, transposed
    rng = np.random.default_rng(3)
    X, W, R, B, h0 = _weights(rng, 4, 2, 3, 2, 4, 3)
    c0 = rng.standard_normal((2, 3, 3)).astype(np.float32)
    attrs = {"hidden_size": 3, "direction": "bidirectional"}
    Y, Yh, Yc = ort_run("LSTM", [X, W, R, B, None, h0, c0], attrs, 3, OPSET)
    got = onnx_ops.run(
        "LSTM",
        [X.transpose(1, 0, 2), W, R, B, None, h0.transpose(1, 0, 2), c0.transpose(1, 0, 2)],
        {**attrs, "layout": 1},
        opset=OPSET,
    )
    np.testing.assert_allclose(got[0], Y.transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], Yh.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], Yc.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset_seq_lens(lbr, direction):
    rng = np.random.default_rng(4 + lbr)
    nd = 2 if direction == "bidirectional" else 1
    X, W, R, B, h0 = _weights(rng, 3, nd, 4, 3, 5, 3)
    lens = np.array([5, 2, 4], dtype=np.int32)
    _check_against_ort(
        "GRU",
        [X, W, R, B, lens, h0],
        2,
        {"hidden_size": 4, "direction": direction, "linear_before_reset": lbr, "clip": 2.0},
    )


def test_gru_activations_with_params():
    rng = np.random.default_rng(6)
    X, W, R, B, h0 = _weights(rng, 3, 1, 3, 2, 4, 2)
    _check_against_ort(
        "GRU",
        [X, W, R, B, None, h0],
        2,
        {
            "hidden_size": 3,
            "activations": ["Sigmoid", "Affine"],
            "activation_alpha": [0.7],
            "activation_beta": [0.1],
        },
    )


@pytest.mark.parametrize("act", ["Relu", "Tanh", "Sigmoid"])
def test_rnn_reverse_seq_lens(act):
    rng = np.random.default_rng(7)
    X, W, R, B, h0 = _weights(rng, 1, 2, 4, 3, 5, 3)
    lens = np.array([3, 5, 1], dtype=np.int32)
    _check_against_ort(
        "RNN",
        [X, W, R, B, lens, h0],
        2,
        {"hidden_size": 4, "direction": "bidirectional", "activations": [act, "Tanh"]},
    )


def test_rnn_float64_matches_numpy_recurrence():
    rng = np.random.default_rng(8)
    T, Bt, I, H = 4, 2, 3, 3
    X = rng.standard_normal((T, Bt, I))
    W = rng.standard_normal((1, H, I))
    R = rng.standard_normal((1, H, H))
    B = rng.standard_normal((1, 2 * H))
    Y, Yh = onnx_ops.run("RNN", [X, W, R, B], {"hidden_size": H})
    h = np.zeros((Bt, H))
    for t in range(T):
        h = np.tanh(X[t] @ W[0].T + h @ R[0].T + B[0, :H] + B[0, H:])
        np.testing.assert_allclose(Y[t, 0], h, rtol=1e-12)
    assert Y.dtype == np.float64
    np.testing.assert_allclose(Yh[0], h, rtol=1e-12)


def test_recurrent_errors_are_mdferrors():
    X = np.zeros((2, 1, 3), np.float32)
    with pytest.raises(MDFError, match="W must have shape"):
        onnx_ops.run(
            "RNN",
            [X, np.zeros((1, 4, 2), np.float32), np.zeros((1, 4, 4), np.float32)],
            {"hidden_size": 4},
        )
    with pytest.raises(MDFError, match="unknown activation"):
        onnx_ops.run(
            "RNN",
            [X, np.zeros((1, 4, 3), np.float32), np.zeros((1, 4, 4), np.float32)],
            {"hidden_size": 4, "activations": ["Swish"]},
        )


# ------------------------------------------------------------------------ control flow
def _needs(*ops):
    missing = [o for o in ops if o not in onnx_ops.names()]
    return pytest.mark.skipif(bool(missing), reason=f"ops not registered yet: {missing}")


def test_loop_with_callable_body():
    def body(i, cond, acc):
        acc2 = acc * 2.0 + i
        return [np.array(float(acc2.sum()) < 100.0), acc2, acc2 + 1.0]

    got = onnx_ops.run("Loop", [np.array(10, np.int64), np.array(True), np.ones(2)], {"body": body})
    acc, trace = np.ones(2), []
    for i in range(10):
        acc = acc * 2.0 + i
        trace.append(acc + 1.0)
        if not acc.sum() < 100.0:
            break
    np.testing.assert_array_equal(got[0], acc)
    np.testing.assert_array_equal(got[1], np.stack(trace))


def test_scan_with_callable_body_axes_and_directions():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 2))

    def body(s, xt):
        s2 = s + xt
        return [s2, s2 * 10.0]

    state, ys = onnx_ops.run(
        "Scan",
        [np.zeros(3), np.swapaxes(x, 0, 1)[:, :, 0].T.copy()],
        {
            "body": body,
            "num_scan_inputs": 1,
            "scan_input_axes": [1],
            "scan_input_directions": [1],
            "scan_output_axes": [-1],
        },
        opset=11,
    )
    xs = x[:, :, 0]  # [3, 5]; scanning axis 1 in reverse
    s, trace = np.zeros(3), []
    for t in range(4, -1, -1):
        s = s + xs[:, t]
        trace.append(s * 10.0)
    np.testing.assert_allclose(state, s)
    np.testing.assert_allclose(ys, np.stack(trace, axis=-1))


def test_if_with_callables():
    a = onnx_ops.run(
        "If",
        [np.array(False)],
        {"then_branch": lambda: [np.ones(2)], "else_branch": lambda: [np.zeros(3)]},
    )
    np.testing.assert_array_equal(a[0], np.zeros(3))


def _body_graph(nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, "body", inputs, outputs, initializer=list(inits))


def _vi(name, dtype=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


@_needs("Add", "Mul", "Identity")
def test_loop_graph_with_outer_scope_against_ort():
    # body: acc_out = acc * factor (outer scope) + i_float ; scan out = acc_out ; cond passes
    body = _body_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Mul", ["acc", "factor"], ["m"]),
            helper.make_node("Add", ["m", "one"], ["acc_out"]),
            helper.make_node("Identity", ["acc_out"], ["scan_out"]),
        ],
        [
            _vi("i", TensorProto.INT64, []),
            _vi("cond_in", TensorProto.BOOL, []),
            _vi("acc", shape=[2]),
        ],
        [
            _vi("cond_out", TensorProto.BOOL, []),
            _vi("acc_out", shape=[2]),
            _vi("scan_out", shape=[2]),
        ],
        [numpy_helper.from_array(np.array([1.0, -1.0], np.float32), "one")],
    )
    node = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc_final", "trace"], body=body)
    g = helper.make_graph(
        [node],
        "outer",
        [
            _vi("M", TensorProto.INT64, []),
            _vi("cond", TensorProto.BOOL, []),
            _vi("acc0", shape=[2]),
            _vi("factor", shape=[2]),
        ],
        [_vi("acc_final", shape=[2]), _vi("trace", shape=[None, 2])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {
        "M": np.array(4, np.int64),
        "cond": np.array(True),
        "acc0": np.array([0.5, 2.0], np.float32),
        "factor": np.array([1.5, 0.5], np.float32),
    }
    want = ort_model_run(model, feeds)
    got = run_model(model, feeds)
    np.testing.assert_allclose(got["acc_final"], want[0], rtol=1e-6)
    np.testing.assert_allclose(got["trace"], want[1], rtol=1e-6)


@_needs("Add", "Identity")
def test_scan_graph_reverse_output_against_ort():
    body = _body_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Identity", ["s2"], ["y"])],
        [_vi("s", shape=[2]), _vi("x", shape=[2])],
        [_vi("s2", shape=[2]), _vi("y", shape=[2])],
    )
    node = helper.make_node(
        "Scan",
        ["s0", "xs"],
        ["sf", "ys"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_output_directions=[1],
        scan_output_axes=[1],
    )
    g = helper.make_graph(
        [node],
        "outer",
        [_vi("s0", shape=[2]), _vi("xs", shape=[2, 4])],
        [_vi("sf", shape=[2]), _vi("ys", shape=[2, 4])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {
        "s0": np.array([1.0, 2.0], np.float32),
        "xs": np.arange(8, dtype=np.float32).reshape(2, 4),
    }
    want = ort_model_run(model, feeds)
    got = run_model(model, feeds)
    np.testing.assert_allclose(got["sf"], want[0])
    np.testing.assert_allclose(got["ys"], want[1])


def test_if_graph_sees_outer_scope_and_sequences():
    then_g = _body_graph(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["seq"])],
        [],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)],
    )
    else_g = _body_graph(
        [helper.make_node("SequenceConstruct", ["b"], ["seq2"])],
        [],
        [helper.make_tensor_sequence_value_info("seq2", TensorProto.FLOAT, None)],
    )
    nodes = [
        helper.make_node("If", ["c"], ["s"], then_branch=then_g, else_branch=else_g),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
    ]
    g = helper.make_graph(
        nodes,
        "outer",
        [_vi("c", TensorProto.BOOL, []), _vi("a", shape=[2]), _vi("b", shape=[3])],
        [_vi("y", shape=[None])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0, 5.0], np.float32)
    for c in (True, False):
        feeds = {"c": np.array(c), "a": a, "b": b}
        np.testing.assert_array_equal(run_model(model, feeds)["y"], ort_model_run(model, feeds)[0])


def test_run_graph_initializer_overridden_by_feed_and_missing_input():
    g = helper.make_graph(
        [
            helper.make_node("SequenceConstruct", ["w"], ["s"]),
            helper.make_node("SequenceLength", ["s"], ["n"]),
        ],
        "g",
        [_vi("w", shape=[1])],
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        initializer=[numpy_helper.from_array(np.array([7.0], np.float32), "w")],
    )
    assert int(run_graph(g, {}, 13)["n"]) == 1
    g2 = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["s"])],
        "g2",
        [_vi("x", shape=[1])],
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
    )
    with pytest.raises(MDFError, match="'x' was not given"):
        run_graph(g2, {}, 13)
    np.testing.assert_array_equal(run_graph(g2, {"x": np.ones(1)}, 13)["s"][0], np.ones(1))
