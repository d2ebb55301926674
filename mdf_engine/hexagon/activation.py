"""Hexagon activations: quantized ReLU/ReluX/Clamp (range copied, codes clamped), Sigmoid and Tanh
(fixed output ranges [0, 1] and [-1, 127/128]), Softmax (along depth, output range [0, 1]),
Softmax_uint8 (float output), PRelu (QuantizedPRelu_8 with float alphas, _V2 with quint8 alphas
and an optional output range; both in the adjusted data range otherwise [judgement]) and the float
references Relu_f, ReluX_f, Clamp_f, Tanh_f, Sigmoid_f, Softmax_f.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    OUT_RANGE,
    Q_IN,
    as4d,
    codes,
    deq8,
    dequantize_u8,
    fval,
    q8_of_real,
    q8_triple,
    quantize_u8,
    real_u8,
    zero_code,
)

TANH_RANGE = (F32(-1.0), F32(127.0 / 128.0))


SIGMOID_RANGE = (F32(0.0), F32(1.0))


SOFTMAX_RANGE = (F32(0.0), F32(1.0))


@hexop("QuantizedRelu_8", Q_IN)
def quantized_relu_8(q, q_min, q_max, *, padding="NA"):
    """max(x, 0): codes below the zero code become the zero code; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    return q8_triple(np.maximum(codes(q), np.uint8(zero_code(mn, mx))), mn, mx)


@hexop("QuantizedReluX_8", Q_IN + ("max_value",))
def quantized_relux_8(q, q_min, q_max, x_max, *, padding="NA"):
    """min(max(x, 0), X): codes clamped to [zero code, code of X]; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    hi = quantize_u8(np.float32(fval(x_max)), mn, mx).reshape(())
    if fval(x_max) <= 0:
        raise MDFError(f"QuantizedReluX_8: X must be > 0, got {fval(x_max)}")
    return q8_triple(np.clip(codes(q), np.uint8(zero_code(mn, mx)), hi), mn, mx)


@hexop("QuantizedClamp_8", Q_IN + ("clamp_min", "clamp_max"))
def quantized_clamp_8(q, q_min, q_max, lo, hi, *, padding="NA"):
    """min(max(x, lo), hi) on codes; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    if fval(lo) > fval(hi):
        raise MDFError(f"QuantizedClamp_8: clamp min {fval(lo)} > clamp max {fval(hi)}")
    qlo = quantize_u8(np.float32(fval(lo)), mn, mx).reshape(())
    qhi = quantize_u8(np.float32(fval(hi)), mn, mx).reshape(())
    return q8_triple(np.clip(codes(q), qlo, qhi), mn, mx)


def _fixed(fn, q, q_min, q_max, rng):
    real = dequantize_u8(codes(q), fval(q_min), fval(q_max)).astype(np.float64)
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
    real = dequantize_u8(codes(q), fval(q_min), fval(q_max)).astype(np.float64)
    return q8_triple(
        quantize_u8(_softmax_depth(b * real).astype(F32), *SOFTMAX_RANGE), *SOFTMAX_RANGE
    )


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


@hexop("Softmax_uint8", Q_IN + ("beta",), outputs=("output",), optional=("beta",))
def softmax_uint8(q, q_min, q_max, beta=None, *, padding="NA"):
    """softmax(beta * x) along depth of quint8 input, as float."""
    b = 1.0 if beta is None else float(fval(beta))
    r = b * deq8(q, q_min, q_max).astype(np.float64)
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    return ((e / e.sum(axis=-1, keepdims=True)).astype(F32),)


@hexop("QuantizedPRelu_8", Q_IN + ("alphas",))
def quantized_prelu_8(q, q_min, q_max, alphas, *, padding="NA"):
    """x if x > 0 else alpha * x (alphas broadcast along depth)."""
    r = deq8(q, q_min, q_max)
    a = np.asarray(alphas, dtype=F32).reshape(-1)
    if a.size not in (1, r.shape[3]):
        raise MDFError(f"QuantizedPRelu_8: {a.size} alphas for depth {r.shape[3]}")
    return q8_of_real(np.where(r > 0, r, r * a).astype(F32))


@hexop(
    "QuantizedPRelu_8_V2",
    Q_IN + ("alphas", "alpha_min", "alpha_max") + OUT_RANGE,
    optional=OUT_RANGE,
)
def quantized_prelu_8_v2(
    q, q_min, q_max, alphas, a_min, a_max, out_min=None, out_max=None, *, padding="NA"
):
    """x if x > 0 else alpha * x with quint8 alphas (broadcast along depth)."""
    r = dequantize_u8(as4d(q), fval(q_min), fval(q_max))
    al = real_u8(np.asarray(alphas).astype(np.uint8), fval(a_min), fval(a_max)).reshape(-1)
    if al.size not in (1, r.shape[3]):
        raise MDFError(f"QuantizedPRelu_8_V2: {al.size} alphas for depth {r.shape[3]}")
    return q8_of_real(np.where(r > 0, r, r * al), out_min, out_max)
