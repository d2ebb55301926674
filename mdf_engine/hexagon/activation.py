"""Hexagon activations: quantized ReLU/ReluX/Clamp (range copied, codes clamped), Sigmoid and Tanh
(fixed output ranges [0, 1] and [-1, 127/128]), Softmax (along depth, output range [0, 1]), and
the float references Relu_f, ReluX_f, Clamp_f, Tanh_f, Sigmoid_f, Softmax_f."""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import F32, as4d, dequantize_u8, fval, q8_triple, quantize_u8, zero_code

Q_IN = ("input", "input_min", "input_max")
TANH_RANGE = (F32(-1.0), F32(127.0 / 128.0))
SIGMOID_RANGE = (F32(0.0), F32(1.0))
SOFTMAX_RANGE = (F32(0.0), F32(1.0))


def _codes(q) -> np.ndarray:
    return as4d(q).astype(np.uint8)


@hexop("QuantizedRelu_8", Q_IN)
def quantized_relu_8(q, q_min, q_max, *, padding="NA"):
    """max(x, 0): codes below the zero code become the zero code; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    return q8_triple(np.maximum(_codes(q), np.uint8(zero_code(mn, mx))), mn, mx)


@hexop("QuantizedReluX_8", Q_IN + ("max_value",))
def quantized_relux_8(q, q_min, q_max, x_max, *, padding="NA"):
    """min(max(x, 0), X): codes clamped to [zero code, code of X]; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    hi = quantize_u8(np.float32(fval(x_max)), mn, mx).reshape(())
    if fval(x_max) <= 0:
        raise MDFError(f"QuantizedReluX_8: X must be > 0, got {fval(x_max)}")
    return q8_triple(np.clip(_codes(q), np.uint8(zero_code(mn, mx)), hi), mn, mx)


@hexop("QuantizedClamp_8", Q_IN + ("clamp_min", "clamp_max"))
def quantized_clamp_8(q, q_min, q_max, lo, hi, *, padding="NA"):
    """min(max(x, lo), hi) on codes; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    if fval(lo) > fval(hi):
        raise MDFError(f"QuantizedClamp_8: clamp min {fval(lo)} > clamp max {fval(hi)}")
    qlo = quantize_u8(np.float32(fval(lo)), mn, mx).reshape(())
    qhi = quantize_u8(np.float32(fval(hi)), mn, mx).reshape(())
    return q8_triple(np.clip(_codes(q), qlo, qhi), mn, mx)


def _fixed(fn, q, q_min, q_max, rng):
    real = dequantize_u8(_codes(q), fval(q_min), fval(q_max)).astype(np.float64)
    return q8_triple(quantize_u8(fn(real).astype(F32), *rng), *rng)


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@hexop("QuantizedSigmoid_8", Q_IN)
def quantized_sigmoid_8(q, q_min, q_max, *, padding="NA"):
    """(1 + tanh(x/2))/2 into the fixed range [0, 1]."""
    return _fixed(_sigmoid, q, q_min, q_max, SIGMOID_RANGE)


@hexop("QuantizedTanh_8", Q_IN)
def quantized_tanh_8(q, q_min, q_max, *, padding="NA"):
    """tanh into the fixed range [-1, 127/128] (step 1/128, zero code 128)."""
    return _fixed(np.tanh, q, q_min, q_max, TANH_RANGE)


def _softmax_depth(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@hexop("QuantizedSoftmax_8", Q_IN + ("beta",), optional=("beta",))
def quantized_softmax_8(q, q_min, q_max, beta=None, *, padding="NA"):
    """softmax(beta * x) along depth, output range [0, 1]."""
    b = 1.0 if beta is None else float(fval(beta))
    real = dequantize_u8(_codes(q), fval(q_min), fval(q_max)).astype(np.float64)
    return q8_triple(quantize_u8(_softmax_depth(b * real).astype(F32), *SOFTMAX_RANGE),
                     *SOFTMAX_RANGE)


def _f(x) -> np.ndarray:
    return as4d(x, F32)


@hexop("Relu_f", ("input",), outputs=("output",))
def relu_f(x, *, padding="NA"):
    """max(0, x) in float."""
    return (np.maximum(_f(x), F32(0.0)),)


@hexop("ReluX_f", ("input", "max_value"), outputs=("output",))
def relux_f(x, limit, *, padding="NA"):
    """min(max(0, x), limit) in float."""
    return (np.minimum(np.maximum(_f(x), F32(0.0)), fval(limit)),)


@hexop("Clamp_f", ("input", "clamp_min", "clamp_max"), outputs=("output",))
def clamp_f(x, lo, hi, *, padding="NA"):
    """min(max(x, lo), hi) in float."""
    return (np.minimum(np.maximum(_f(x), fval(lo)), fval(hi)),)


@hexop("Tanh_f", ("input",), outputs=("output",))
def tanh_f(x, *, padding="NA"):
    """tanh in float."""
    return (np.tanh(_f(x)),)


@hexop("Sigmoid_f", ("input",), outputs=("output",))
def sigmoid_f(x, *, padding="NA"):
    """(1 + tanh(x/2))/2 in float."""
    return (_sigmoid(_f(x)).astype(F32),)


@hexop("Softmax_f", ("input",), outputs=("output",))
def softmax_f(x, *, padding="NA"):
    """Softmax of 1-D data (shape [1,1,1,n]), as the document restricts it."""
    a = _f(x)
    if a.shape[0] * a.shape[1] * a.shape[2] != 1:
        raise MDFError(f"Softmax_f only supports 1-D data [1,1,1,n], got shape {a.shape}")
    return (_softmax_depth(a.astype(np.float64)).astype(F32),)
