"""Random ONNX operators: RandomNormal(Like), RandomUniform(Like), Multinomial, Bernoulli and
Dropout.

Reproducibility: with a ``seed`` attribute every call gives the same output; the draws come from
numpy's MT19937 ``RandomState(int(seed))`` stream (the stream the ONNX backend Dropout cases were
generated with, so seeded training-mode Dropout masks agree with them). Without a seed each call
draws from a fresh ``numpy.random.default_rng()`` seeded from OS entropy. Kernels keep no state
between calls. Values are drawn in float64 and converted to the requested ``dtype`` (ONNX
TensorProto codes: 1 float32, 10 float16, 11 float64; Multinomial 6 int32, 7 int64).

Dropout: in inference (no ``training_mode`` or false, or opset < 12 where only inference exists
here) the output is the input and the mask is all true; in training mode elements are dropped
with probability ``ratio`` (kept where a uniform draw is >= ratio) and kept ones are scaled by
``1 / (1 - ratio)``; the mask (bool) says which were kept.

Compiled loops (``backends/compiled/draws.py``): RandomNormal(Like), RandomUniform(Like) and
Bernoulli with constant attributes draw in nopython code through the Numba twins below
(:func:`_draw_normal`, :func:`_draw_uniform`, :func:`_draw_bernoulli`), from the very ``numpy.random.Generator`` the
interpreted kernels draw from (``backends/compiled/draws.compiled_stream``): Numba's
``Generator.normal``/``uniform`` are numpy's algorithms on the same bit generator, so the numbers
and the stream's state after them are numpy's, bit for bit (tests/test_random_compiled.py); a
float32 output is the float64 draw rounded, as ``astype`` rounds it. A call with a ``seed``
attribute gives the same values at every call: the compiled loop holds them as a constant (a
seeded Bernoulli, whose values follow its input, is called through Python). Multinomial is
called through Python from the compiled loop; Dropout in inference has a nopython twin
(``_jita_dropout``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import objmode

from ..errors import MDFError
from ..randomness import generator
from . import _jita_dropout as D
from . import onnx_op

_FLOAT_DTYPES = {1: np.float32, 10: np.float16, 11: np.float64}
_INT_DTYPES = {6: np.int32, 7: np.int64}


def _rng(seed: Any) -> Any:
    """A generator with ``uniform``/``normal`` methods: seeded MT19937 or OS-entropy PCG64."""
    if seed is None:
        return generator()  # OS entropy, or the run's --seed stream
    return np.random.RandomState(int(seed) & 0xFFFFFFFF)


def _float_dtype(dtype: Any, op: str, like: np.ndarray | None = None) -> Any:
    if dtype is None:
        if like is not None and like.dtype.kind == "f":
            return like.dtype
        return np.float32
    d = _FLOAT_DTYPES.get(int(dtype))
    if d is None:
        raise MDFError(
            f"{op}: dtype must be 1 (float32), 10 (float16) or 11 (float64), got {dtype}"
        )
    return d


def _shape(shape: Any, op: str) -> tuple[int, ...]:
    if shape is None:
        raise MDFError(f"{op} needs attribute 'shape'")
    s = tuple(int(v) for v in np.asarray(shape).reshape(-1))
    if any(v < 0 for v in s):
        raise MDFError(f"{op}: shape must not have negative sizes, got {s}")
    return s


@numba.njit(cache=True)
def _draw_normal(rng, shape, like, mean, scale):
    """Normal draws of ``shape`` from the generator ``rng[0]`` (a one-item typed list), each
    a float64 ``mean + scale * z`` stored in ``like``'s dtype (numpy's order: C order)."""
    g = rng[0]
    out = np.empty(shape, like.dtype)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = g.normal(mean, scale)
    return out


@numba.njit(cache=True)
def _draw_uniform(rng, shape, like, low, high):
    """Uniform draws in ``[low, high)`` of ``shape`` from ``rng[0]``, in ``like``'s dtype."""
    g = rng[0]
    out = np.empty(shape, like.dtype)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = g.uniform(low, high)
    return out


#: how each compiled draw checks its constant arguments: numpy's own draw of them, once
_NORMAL = (_draw_normal, ("mean", "scale"), lambda g, a, b: g.normal(a, b))
_UNIFORM = (_draw_uniform, ("low", "high"), lambda g, a, b: g.uniform(a, b))


@onnx_op(
    "RandomNormal",
    attributes={"dtype": 1, "mean": 0.0, "scale": 1.0, "seed": None, "shape": None},
    outputs=("output",),
    since=1,
    python_only=True,
    draw=_NORMAL,
)
def random_normal(
    *, dtype: Any = 1, mean: float = 0.0, scale: float = 1.0, seed: Any = None, shape: Any = None
) -> tuple:
    """Normal draws with ``mean`` and standard deviation ``scale``, of the given ``shape``."""
    s = _shape(shape, "RandomNormal")
    d = _float_dtype(dtype, "RandomNormal")
    return (_rng(seed).normal(float(mean), float(scale), size=s).astype(d),)


@onnx_op(
    "RandomNormalLike",
    inputs=("input",),
    attributes={"dtype": None, "mean": 0.0, "scale": 1.0, "seed": None},
    outputs=("output",),
    since=1,
    python_only=True,
    draw=_NORMAL,
)
def random_normal_like(
    input: Any, *, dtype: Any = None, mean: float = 0.0, scale: float = 1.0, seed: Any = None
) -> tuple:
    """Normal draws shaped like ``input`` (dtype: attribute, else the input's float dtype)."""
    x = np.asarray(input)
    d = _float_dtype(dtype, "RandomNormalLike", x)
    return (_rng(seed).normal(float(mean), float(scale), size=x.shape).astype(d),)


@onnx_op(
    "RandomUniform",
    attributes={"dtype": 1, "high": 1.0, "low": 0.0, "seed": None, "shape": None},
    outputs=("output",),
    since=1,
    python_only=True,
    draw=_UNIFORM,
)
def random_uniform(
    *, dtype: Any = 1, high: float = 1.0, low: float = 0.0, seed: Any = None, shape: Any = None
) -> tuple:
    """Uniform draws in ``[low, high)`` of the given ``shape``."""
    s = _shape(shape, "RandomUniform")
    d = _float_dtype(dtype, "RandomUniform")
    return (_rng(seed).uniform(float(low), float(high), size=s).astype(d),)


@onnx_op(
    "RandomUniformLike",
    inputs=("input",),
    attributes={"dtype": None, "high": 1.0, "low": 0.0, "seed": None},
    outputs=("output",),
    since=1,
    python_only=True,
    draw=_UNIFORM,
)
def random_uniform_like(
    input: Any, *, dtype: Any = None, high: float = 1.0, low: float = 0.0, seed: Any = None
) -> tuple:
    """Uniform draws in ``[low, high)`` shaped like ``input``."""
    x = np.asarray(input)
    d = _float_dtype(dtype, "RandomUniformLike", x)
    return (_rng(seed).uniform(float(low), float(high), size=x.shape).astype(d),)


@numba.njit(cache=True)
def _multinomial_core(logits, u):
    """Class index for each uniform draw ``u[b, s]`` from softmax(logits[b])."""
    B, C = logits.shape
    S = u.shape[1]
    out = np.empty((B, S), dtype=np.int64)
    cdf = np.empty(C, dtype=np.float64)
    for b in range(B):
        m = logits[b, 0]
        for c in range(1, C):
            m = max(m, logits[b, c])
        acc = 0.0
        for c in range(C):
            acc += np.exp(logits[b, c] - m)
            cdf[c] = acc
        for s in range(S):
            target = u[b, s] * acc
            k = np.searchsorted(cdf, target, side="right")
            out[b, s] = min(k, C - 1)
    return out


@onnx_op(
    "Multinomial",
    inputs=("input",),
    attributes={"dtype": 6, "sample_size": 1, "seed": None},
    outputs=("output",),
    since=7,
    python_only=True,
)
def multinomial(input: Any, *, dtype: Any = 6, sample_size: int = 1, seed: Any = None) -> tuple:
    """``sample_size`` class indices per batch row, drawn from the distribution whose
    unnormalised log-probabilities are the row (``[batch, classes]``)."""
    x = np.asarray(input, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 1:
        raise MDFError(f"Multinomial: input must be [batch, classes], got shape {x.shape}")
    d = _INT_DTYPES.get(int(dtype))
    if d is None:
        raise MDFError(f"Multinomial: dtype must be 6 (int32) or 7 (int64), got {dtype}")
    n = int(sample_size)
    if n < 1:
        raise MDFError(f"Multinomial: sample_size must be >= 1, got {n}")
    u = _rng(seed).uniform(0.0, 1.0, size=(x.shape[0], n))
    return (_multinomial_core(np.ascontiguousarray(x), u).astype(d),)


_BERNOULLI_DTYPES = {
    **_FLOAT_DTYPES,
    **_INT_DTYPES,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    9: np.bool_,
    12: np.uint32,
    13: np.uint64,
}


def _bad_probabilities() -> None:
    raise MDFError("Bernoulli: input probabilities must lie in [0, 1]")


@numba.njit(cache=True)
def _draw_bernoulli(rng, shape, like, p):
    """0/1 of ``shape`` in ``like``'s dtype, 1 where a uniform draw from ``rng[0]`` is below
    the probability ``p`` (the interpreted kernel's ``uniform(0, 1) < p``; a probability
    outside [0, 1], or NaN, raises its MDFError before any draw)."""
    flat_p = np.asarray(p).ravel()
    for i in range(flat_p.size):
        if not (flat_p[i] >= 0.0 and flat_p[i] <= 1.0):
            with objmode():
                _bad_probabilities()
    g = rng[0]
    out = np.empty(shape, like.dtype)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = g.uniform(0.0, 1.0) < flat_p[i]
    return out


#: the input is drawn against, never a constant checked once
_BERNOULLI = (_draw_bernoulli, ("input",), None)


@onnx_op(
    "Bernoulli",
    inputs=("input",),
    attributes={"dtype": None, "seed": None},
    outputs=("output",),
    since=15,
    python_only=True,
    draw=_BERNOULLI,
)
def bernoulli(input: Any, *, dtype: Any = None, seed: Any = None) -> tuple:
    """0/1 draws, 1 with the probability given by each element of ``input`` (in [0, 1]); of
    type ``dtype`` (ONNX code), else the input's float type."""
    p = np.asarray(input)
    if p.dtype.kind != "f":
        raise MDFError(f"Bernoulli: input must be a float tensor of probabilities, got {p.dtype}")
    if p.size and not (np.all(p >= 0.0) and np.all(p <= 1.0)):
        raise MDFError("Bernoulli: input probabilities must lie in [0, 1]")
    d = p.dtype if dtype is None else _BERNOULLI_DTYPES.get(int(dtype))
    if d is None:
        raise MDFError(f"Bernoulli: dtype {dtype} is not a numeric ONNX type supported here")
    u = _rng(seed).uniform(0.0, 1.0, size=p.shape)
    return ((u < p).astype(d),)


@numba.njit(cache=True)
def _dropout_core(x, u, ratio):
    """Keep where ``u >= ratio``, scaling kept values by 1 / (1 - ratio)."""
    flat = x.ravel()
    uf = u.ravel()
    out = np.zeros(flat.shape, dtype=x.dtype)
    mask = np.zeros(flat.shape, dtype=np.bool_)
    scale = 1.0 / (1.0 - ratio) if ratio < 1.0 else 0.0
    for i in range(flat.shape[0]):
        if uf[i] >= ratio:
            mask[i] = True
            out[i] = flat[i] * scale
    return out.reshape(x.shape), mask.reshape(x.shape)


def _dropout(x: np.ndarray, ratio: float, training: bool, seed: Any) -> tuple:
    if not 0.0 <= ratio <= 1.0:
        raise MDFError(f"Dropout: ratio must be in [0, 1], got {ratio}")
    if not training or ratio == 0.0:
        return (x.copy(), np.ones(x.shape, dtype=bool))
    u = _rng(seed).uniform(0.0, 1.0, size=x.shape)
    return _dropout_core(np.ascontiguousarray(x), u, float(ratio))


@onnx_op(
    "Dropout",
    inputs=("data", "ratio", "training_mode"),
    optional=("ratio", "training_mode"),
    attributes={"seed": None},
    outputs=("output", "mask"),
    since=12,
    jit=D.dropout_jit,
)
def dropout(data: Any, ratio: Any = None, training_mode: Any = None, *, seed: Any = None) -> tuple:
    """ONNX Dropout (opset >= 12): identity unless ``training_mode`` is true."""
    r = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
    training = training_mode is not None and bool(np.asarray(training_mode).reshape(-1)[0])
    return _dropout(np.asarray(data), r, training, seed)


@onnx_op(
    "Dropout",
    inputs=("data",),
    attributes={"ratio": 0.5},
    outputs=("output", "mask"),
    since=10,
    jit=D.dropout10_jit,
)
def dropout_10(data: Any, *, ratio: float = 0.5) -> tuple:
    """ONNX Dropout opset 10-11 (inference): the input, and an all-true bool mask."""
    return _dropout(np.asarray(data), float(ratio), False, None)


@onnx_op(
    "Dropout",
    inputs=("data",),
    attributes={"ratio": 0.5, "is_test": 0},
    outputs=("output", "mask"),
    since=1,
    jit=D.dropout1_jit,
)
def dropout_1(data: Any, *, ratio: float = 0.5, is_test: int = 0) -> tuple:
    """ONNX Dropout before opset 10 (inference; ``is_test`` accepted): the input, and a mask of
    ones in the input's dtype (before opset 10 the mask had the data's type)."""
    x = np.asarray(data)
    return (x.copy(), np.ones(x.shape, dtype=x.dtype))
