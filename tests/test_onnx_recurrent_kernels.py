"""RNN/GRU/LSTM recurrence paths: batch 1 (``_recurrent_kernels.matvec``), batches of two entries per
pass (``_matvec2``, with a leftover single entry for odd batches) and, above
``_OWN_RECUR_MAX_BATCH``, BLAS; hidden sizes are odd so the loops' four-row blocks leave a
remainder.

Oracles: onnxruntime (float32, one-node models built with ``onnx.helper``) and, for float64
(which onnxruntime's LSTM does not run), an independent numpy recurrence written here.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx_cases import check_against_ort, ort_run  # noqa: E402

from mdf_engine import onnx_ops  # noqa: E402
from mdf_engine.onnx_ops import _recurrent_inputs, _recurrent_kernels  # noqa: E402

OPSET = 14


def _check(op, inputs, n_out, attrs):
    check_against_ort(op, inputs, attrs, OPSET, n_out, rtol=1e-4, atol=1e-5)


def _arrays(rng, gates, nd, H, I, T, dtype=np.float32, batch=1):
    X = rng.standard_normal((T, batch, I)).astype(dtype)
    W = (0.3 * rng.standard_normal((nd, gates * H, I))).astype(dtype)
    R = (0.3 * rng.standard_normal((nd, gates * H, H))).astype(dtype)
    B = (0.3 * rng.standard_normal((nd, 2 * gates * H))).astype(dtype)
    h0 = rng.standard_normal((nd, batch, H)).astype(dtype)
    return X, W, R, B, h0


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("peepholes", [False, True])
def test_lstm_batch1_against_ort(direction, peepholes):
    rng = np.random.default_rng(11)
    nd, H, I, T = (2 if direction == "bidirectional" else 1), 37, 9, 7
    X, W, R, B, h0 = _arrays(rng, 4, nd, H, I, T)
    c0 = rng.standard_normal((nd, 1, H)).astype(np.float32)
    P = rng.standard_normal((nd, 3 * H)).astype(np.float32) if peepholes else None
    lens = np.array([5], dtype=np.int32)  # shorter than T: the steps past it give zeros
    _check(
        "LSTM",
        [X, W, R, B, lens, h0, c0, P],
        3,
        {"hidden_size": H, "direction": direction, "clip": 2.5},
    )


def test_lstm_batch1_input_forget_against_ort():
    rng = np.random.default_rng(12)
    X, W, R, B, h0 = _arrays(rng, 4, 1, 13, 5, 6)
    _check("LSTM", [X, W, R, B, None, h0], 3, {"hidden_size": 13, "input_forget": 1})


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_batch1_against_ort(lbr):
    rng = np.random.default_rng(13 + lbr)
    X, W, R, B, h0 = _arrays(rng, 3, 2, 37, 9, 7)
    _check(
        "GRU",
        [X, W, R, B, np.array([6], np.int32), h0],
        2,
        {"hidden_size": 37, "direction": "bidirectional", "linear_before_reset": lbr},
    )


def test_rnn_batch1_against_ort():
    rng = np.random.default_rng(15)
    X, W, R, B, h0 = _arrays(rng, 1, 1, 37, 9, 7)
    _check("RNN", [X, W, R, B, None, h0], 2, {"hidden_size": 37})


@pytest.mark.parametrize("batch", [2, 5, _recurrent_kernels.OWN_RECUR_MAX_BATCH + 3])
def test_lstm_batches_against_ort(batch):
    rng = np.random.default_rng(20 + batch)
    H = 11
    X, W, R, B, h0 = _arrays(rng, 4, 2, H, 6, 5, batch=batch)
    lens = rng.integers(1, 6, size=batch).astype(np.int32)
    _check("LSTM", [X, W, R, B, lens, h0], 3, {"hidden_size": H, "direction": "bidirectional"})


@pytest.mark.parametrize("batch", [3, _recurrent_kernels.OWN_RECUR_MAX_BATCH + 1])
def test_gru_batches_against_ort(batch):
    rng = np.random.default_rng(30 + batch)
    X, W, R, B, h0 = _arrays(rng, 3, 1, 11, 6, 5, batch=batch)
    _check("GRU", [X, W, R, B, None, h0], 2, {"hidden_size": 11})


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("batch", [1, 3, _recurrent_kernels.OWN_RECUR_MAX_BATCH + 2])
def test_lstm_float64_matches_numpy_recurrence(batch):
    # the re-associated own loops (batch 1, 3) and BLAS (the largest): all float64-accurate
    rng = np.random.default_rng(16)
    T, I, H = 6, 5, 23
    X = rng.standard_normal((T, batch, I))
    W = 0.4 * rng.standard_normal((1, 4 * H, I))
    R = 0.4 * rng.standard_normal((1, 4 * H, H))
    B = 0.4 * rng.standard_normal((1, 8 * H))
    Y, Yh, Yc = onnx_ops.run("LSTM", [X, W, R, B], {"hidden_size": H}, opset=OPSET)
    assert Y.dtype == np.float64
    h = np.zeros((batch, H))
    c = np.zeros((batch, H))
    for t in range(T):
        z = X[t] @ W[0].T + h @ R[0].T + B[0, : 4 * H] + B[0, 4 * H :]
        i, o, f, g = (z[:, k * H : (k + 1) * H] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        np.testing.assert_allclose(Y[t, 0], h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Yh[0], h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Yc[0], c, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [1, 6, 8, 13])
def test_matvecs_match_float64_product(dtype, rows):
    rng = np.random.default_rng(rows)
    R = rng.standard_normal((rows, 19)).astype(dtype)
    h = rng.standard_normal(19).astype(dtype)
    out = np.full(rows, np.nan, dtype)
    _recurrent_kernels.matvec(R, h, out)
    want = R.astype(np.float64) @ h.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    g = rng.standard_normal(19).astype(dtype)
    out_h, out_g = np.full(rows, np.nan, dtype), np.full(rows, np.nan, dtype)
    _recurrent_kernels.matvec2(R, h, g, out_h, out_g)
    np.testing.assert_allclose(out_h, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        out_g, R.astype(np.float64) @ g.astype(np.float64), rtol=tol, atol=tol
    )


def _offset_copy(a, offset):
    """A copy of ``a`` whose data starts ``offset`` bytes past a 64-byte boundary."""
    buf = np.empty(a.nbytes + 128, dtype=np.uint8)
    start = -buf.ctypes.data % 64 + offset
    out = buf[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def test_misaligned_recurrence_weights_give_the_same_result():
    rng = np.random.default_rng(40)
    X, W, R, B, h0 = _arrays(rng, 4, 1, 16, 5, 17)  # 16 float32 = 64-byte rows; 17 steps
    want = onnx_ops.run("LSTM", [X, W, _offset_copy(R, 0), B, None, h0], {"hidden_size": 16})
    got = onnx_ops.run("LSTM", [X, W, _offset_copy(R, 16), B, None, h0], {"hidden_size": 16})
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    Rm = _offset_copy(R, 16)
    Ra = _recurrent_inputs.aligned(Rm)
    assert Ra.ctypes.data % 32 == 0 and Ra.dtype == R.dtype
    np.testing.assert_array_equal(Ra, R)
    assert _recurrent_inputs.aligned(Ra) is Ra


def test_lstm_zero_length_entry_keeps_its_initial_state():
    # docs/semantics.md: an entry with sequence length 0 runs no step; the other entries are
    # checked against onnxruntime (which gives zeros for the empty entry: not compared)
    rng = np.random.default_rng(11)
    T, B, I, H = 4, 3, 2, 5
    X = rng.standard_normal((T, B, I)).astype(np.float32)
    W = (0.5 * rng.standard_normal((1, 4 * H, I))).astype(np.float32)
    R = (0.5 * rng.standard_normal((1, 4 * H, H))).astype(np.float32)
    h0 = rng.standard_normal((1, B, H)).astype(np.float32)
    c0 = rng.standard_normal((1, B, H)).astype(np.float32)
    lens = np.array([0, 4, 2], dtype=np.int32)
    inputs = [X, W, R, None, lens, h0, c0]
    Y, Yh, Yc = onnx_ops.run("LSTM", inputs, {"hidden_size": H}, OPSET)
    np.testing.assert_array_equal(Yh[0, 0], h0[0, 0])
    np.testing.assert_array_equal(Yc[0, 0], c0[0, 0])
    assert not Y[:, :, 0].any()
    oY, oYh, oYc = ort_run("LSTM", inputs, {"hidden_size": H}, 3, OPSET)
    np.testing.assert_allclose(Y[:, :, 1:], oY[:, :, 1:], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(Yh[:, 1:], oYh[:, 1:], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(Yc[:, 1:], oYc[:, 1:], rtol=1e-5, atol=1e-6)
