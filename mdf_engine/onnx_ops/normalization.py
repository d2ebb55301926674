"""Normalization operators: ``BatchNormalization`` (inference and, from opset 14, training
mode), ``InstanceNormalization``, ``LRN``, ``MeanVarianceNormalization`` and
``LpNormalization``.

Statistics are accumulated in float64 by Numba kernels and the results cast back to the input
dtype. Tensors are viewed as ``(N, C, L)`` (channel statistics) or, after moving the reduced
axes last, as rows ``(R, L)`` (per-row statistics). The opset <= 8 forms of BatchNormalization
(``is_test``, ``consumed_inputs``, ``spatial``) live in ``variants/legacy_nn.py``, not here.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import as_array, onnx_op
from ._jitb_norm import (
    instancenorm_like_jit,
    lp_rows,
    lpnorm_like_jit,
    lrn_core,
    lrn_like_jit,
    mvn_like_jit,
    standardize_rows,
)

#: the twins' registry keywords (``jit_like``: see ``_jitb_norm``)
LIKE = {"jit_like": True}


def _float_in(X: np.ndarray) -> np.ndarray:
    if X.dtype in (np.float32, np.float64):
        return np.ascontiguousarray(X)
    return np.ascontiguousarray(X, dtype=np.float32)


@numba.njit(cache=True)
def _affine_channels(x, a, b):
    """``y[n, c, l] = x[n, c, l] * a[c] + b[c]`` for x (N, C, L)."""
    N, C, L = x.shape
    y = np.empty_like(x)
    for n in range(N):
        for c in range(C):
            ac = a[c]
            bc = b[c]
            for t in range(L):
                y[n, c, t] = x[n, c, t] * ac + bc
    return y


@numba.njit(cache=True)
def _channel_moments(x):
    """Mean and population variance of each channel of x (N, C, L), in float64."""
    N, C, L = x.shape
    mean = np.zeros(C)
    var = np.zeros(C)
    cnt = N * L
    for c in range(C):
        s = 0.0
        for n in range(N):
            for t in range(L):
                s += x[n, c, t]
        m = s / cnt
        q = 0.0
        for n in range(N):
            for t in range(L):
                dv = x[n, c, t] - m
                q += dv * dv
        mean[c] = m
        var[c] = q / cnt
    return mean, var


def _bn_view(X: np.ndarray) -> np.ndarray:
    if X.ndim < 2:
        raise MDFError(f"BatchNormalization: X should be (N, C, ...), got shape {X.shape}")
    return X.reshape(X.shape[0], X.shape[1], -1)


def _param(v: Any, n: int, name: str, op: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size == 1 and n != 1:
        a = np.full(n, a[0])
    if a.size != n:
        raise MDFError(f"{op}: {name} should have {n} values, got {np.shape(v)}")
    return a


@numba.njit(cache=True)
def _bn_coefficients(x, scale, B, mean, var, eps):
    """``a = scale / sqrt(var + eps)`` and ``b = B - mean * a`` per channel, worked out in
    float64 and rounded to x's dtype (the parameters may be x's dtype or float64)."""
    C = x.shape[1]
    a = np.empty(C, dtype=x.dtype)
    b = np.empty(C, dtype=x.dtype)
    for c in range(C):
        ac = float(scale[c]) / np.sqrt(float(var[c]) + eps)
        a[c] = ac
        b[c] = float(B[c]) - float(mean[c]) * ac
    return a, b


@numba.njit(cache=True)
def _bn_apply(x, scale, B, mean, var, eps):
    """Inference batch normalization of x (N, C, L): ``y = x * a[c] + b[c]`` with the
    coefficients of :func:`_bn_coefficients`."""
    a, b = _bn_coefficients(x, scale, B, mean, var, eps)
    return _affine_channels(x, a, b)


@numba.njit(cache=True)
def _affine_into(x, a, b, y, r):
    """:func:`_affine_channels` of x (N, C, L) written into ``y`` (the same shape), and, unless
    ``r`` is empty, the engine's ONNX Relu of each value into ``r`` in the same pass (``v``
    above zero, else ``v * 0``: bit for bit the Relu node's value, -0.0 and NaN included)."""
    N, C, L = x.shape
    relu = r.size > 0
    for n in range(N):
        for c in range(C):
            ac = a[c]
            bc = b[c]
            if relu:
                for t in range(L):
                    v = x[n, c, t] * ac + bc
                    y[n, c, t] = v
                    r[n, c, t] = v if v > 0 else v * 0
            else:
                for t in range(L):
                    y[n, c, t] = x[n, c, t] * ac + bc


@numba.njit(cache=True)
def _bn_into_nb(X, scale, B, mean, var, epsilon, Y, R):
    """Inference BatchNormalization of a float X written into ``Y`` (and, when ``R`` is not
    empty, its Relu into ``R``): C-contiguous arrays of X's size (a compiled value's slot)."""
    C = X.shape[1]
    L = X.size // max(1, X.shape[0] * C)
    if Y.size != X.size or (R.size > 0 and R.size != X.size):
        raise ValueError("a value of another shape than its compiled slot")
    x3 = np.ascontiguousarray(X).reshape((X.shape[0], C, L))
    for v in (scale, B, mean, var):
        if v.size != C:
            raise ValueError("BatchNormalization: a parameter has not one value per channel")
    s, b = np.asarray(scale).reshape(-1), np.asarray(B).reshape(-1)
    m, v = np.asarray(mean).reshape(-1), np.asarray(var).reshape(-1)
    ca, cb = _bn_coefficients(x3, s, b, m, v, float(epsilon))
    r3 = R.reshape((X.shape[0], C, L)) if R.size > 0 else R.reshape((0, 0, 0))
    _affine_into(x3, ca, cb, Y.reshape((X.shape[0], C, L)), r3)


def _bn_params(vals: tuple, names: tuple, C: int, dt: np.dtype) -> tuple:
    """The four parameter vectors: as given when they are all (C,) arrays of x's dtype (the
    common case, no conversion), else as float64 (a size-1 parameter repeated)."""
    for v in vals:
        if type(v) is not np.ndarray or v.dtype != dt or v.shape != (C,):
            return tuple(_param(v, C, n, "BatchNormalization") for v, n in zip(vals, names))
    return tuple(np.ascontiguousarray(v) for v in vals)


def _bn_infer(X, scale, B, mean, var, epsilon) -> np.ndarray:
    X = as_array(X)
    xf = _float_in(X)
    x3 = _bn_view(xf)
    s, b, m, v = _bn_params(
        (scale, B, mean, var), ("scale", "B", "mean", "var"), x3.shape[1], xf.dtype
    )
    y = _bn_apply(x3, s, b, m, v, float(epsilon)).reshape(X.shape)
    return y if y.dtype == X.dtype else y.astype(X.dtype)


def prepare_bn_relu(consts: list[tuple[bool, Any]], attrs: dict[str, Any]):
    """An inference BatchNormalization and the Relu of its value bound once (the ``prepare=``
    protocol of the interpreter's fused pairs, ``interpreter_fused.py``): ``consts`` is
    ``(known, value)`` per input X, scale, B, mean, var, ``attrs`` the call's attributes.
    Returns ``run(X, *constants) -> (Y, R)``: ``Y`` the node's value as :func:`_bn_infer`
    gives it and ``R`` the engine's Relu of ``Y``, both bit for bit, computed in one pass; None
    when a parameter is not a known constant or the call is in training mode."""
    if attrs.get("training_mode", 0) or len(consts) != 5 or not all(k for k, _v in consts[1:]):
        return None
    vals = tuple(v for _k, v in consts[1:])
    eps = float(attrs.get("epsilon", 1e-5))
    memo: dict[tuple, tuple] = {}

    def run(X: Any, *_rest: Any) -> tuple[np.ndarray, np.ndarray]:
        if type(X) is not np.ndarray or X.dtype not in (np.float32, np.float64) or X.ndim < 2:
            from .activations import relu  # (activations imports no normalization)

            y = _bn_infer(X, *vals, eps)
            return y, relu(y)[0]
        x3 = _bn_view(np.ascontiguousarray(X))
        coef = memo.get((x3.shape[1], X.dtype))
        if coef is None:
            names = ("scale", "B", "mean", "var")
            s, b, m, v = _bn_params(vals, names, x3.shape[1], X.dtype)
            coef = memo[(x3.shape[1], X.dtype)] = _bn_coefficients(x3, s, b, m, v, eps)
        y = np.empty(X.shape, X.dtype)
        r = np.empty(X.shape, X.dtype)
        _affine_into(x3, coef[0], coef[1], y.reshape(x3.shape), r.reshape(x3.shape))
        return y, r

    return run


@numba.njit(cache=True)
def _bn_infer_nb(X, scale, B, mean, var, epsilon):
    """nopython :func:`_bn_infer` of a float X with (C,) parameters, in X's dtype."""
    C = X.shape[1]
    x3 = np.ascontiguousarray(X).reshape((X.shape[0], C, X.size // max(1, X.shape[0] * C)))
    for v in (scale, B, mean, var):
        if v.size != C:
            raise ValueError("BatchNormalization: a parameter has not one value per channel")
    s, b = np.asarray(scale).reshape(-1), np.asarray(B).reshape(-1)
    m, v = np.asarray(mean).reshape(-1), np.asarray(var).reshape(-1)
    return _bn_apply(x3, s, b, m, v, float(epsilon)).reshape(X.shape)


@numba.njit(cache=True)
def bn9_jit(X, scale, B, mean, var, epsilon, momentum, Y=None, R=None):
    """nopython inference BatchNormalization (opset 9; compiled backend): ``(Y,)``, as the
    kernel gives (the compiled backend takes a several-output kernel's outputs from a tuple).
    Given ``Y`` (a C-contiguous array of X's shape and dtype: the value's compiled slot) the
    value is written into it, and given ``R`` too the Relu of the value into ``R`` in the same
    pass (a fused BatchNormalization -> Relu pair, ``plan.fusion.bn_relu_pairs``)."""
    if Y is None:
        return (_bn_infer_nb(X, scale, B, mean, var, epsilon),)
    if R is None:
        _bn_into_nb(X, scale, B, mean, var, epsilon, Y, np.empty((0, 0, 0), dtype=X.dtype))
    else:
        _bn_into_nb(X, scale, B, mean, var, epsilon, Y, R)
    return (Y,)


@numba.njit(cache=True)
def _copy_relu_into(y, Y, R):
    """``y`` copied into ``Y`` and its Relu into ``R`` (when not None; see :func:`_affine_into`)."""
    if Y.size != y.size or (R is not None and R.size != y.size):
        raise ValueError("a value of another shape than its compiled slot")
    yf, Yf = y.reshape(-1), Y.reshape(-1)
    for i in range(yf.size):
        Yf[i] = yf[i]
    if R is not None:
        Rf = R.reshape(-1)
        for i in range(yf.size):
            v = yf[i]
            Rf[i] = v if v > 0 else v * 0


@numba.njit(cache=True)
def bn14_jit(X, scale, B, input_mean, input_var, epsilon, momentum, training_mode, Y=None, R=None):
    """nopython BatchNormalization (opset 14; compiled backend): ``(Y, running_mean,
    running_var)``; in inference mode the running statistics are the inputs (the model uses Y
    alone), in training mode Y is normalized by the batch statistics and the running ones are
    updated as :func:`batch_normalization_14` does. ``Y`` and ``R`` as for :func:`bn9_jit`
    (the value written into ``Y``, its Relu into ``R``)."""
    dt = input_mean.dtype
    if not training_mode:
        if Y is None:
            y = _bn_infer_nb(X, scale, B, input_mean, input_var, epsilon)
        else:
            y = bn9_jit(X, scale, B, input_mean, input_var, epsilon, momentum, Y, R)[0]
        return y, input_mean.reshape(-1).astype(dt), input_var.reshape(-1).astype(dt)
    C = X.shape[1]
    x3 = np.ascontiguousarray(X).reshape((X.shape[0], C, X.size // max(1, X.shape[0] * C)))
    bm, bv = _channel_moments(x3)
    a = np.asarray(scale).reshape(-1) / np.sqrt(bv + float(epsilon))
    b = np.asarray(B).reshape(-1) - bm * a
    y = _affine_channels(x3, a.astype(X.dtype), b.astype(X.dtype)).reshape(X.shape)
    mom = float(momentum)
    rm = input_mean.reshape(-1) * mom + bm * (1 - mom)
    rv = input_var.reshape(-1) * mom + bv * (1 - mom)
    if Y is not None:
        _copy_relu_into(y, Y, R)
        return Y, rm.astype(dt), rv.astype(dt)
    return y, rm.astype(dt), rv.astype(dt)


@onnx_op(
    "BatchNormalization",
    inputs=("X", "scale", "B", "mean", "var"),
    jit=bn9_jit,
    since=9,
    outputs=("Y", "mean", "var", "saved_mean", "saved_var"),
    attributes={"epsilon": 1e-5, "momentum": 0.9},
)
def batch_normalization_9(
    X: Any, scale: Any, B: Any, mean: Any, var: Any, *, epsilon=1e-5, momentum=0.9
) -> tuple[np.ndarray]:
    """Inference batch normalization: ``(X - mean) / sqrt(var + epsilon) * scale + B``."""
    return (_bn_infer(X, scale, B, mean, var, epsilon),)


@onnx_op(
    "BatchNormalization",
    inputs=("X", "scale", "B", "input_mean", "input_var"),
    since=14,
    jit=bn14_jit,
    outputs=("Y", "running_mean", "running_var"),
    attributes={"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0},
)
def batch_normalization_14(
    X: Any,
    scale: Any,
    B: Any,
    input_mean: Any,
    input_var: Any,
    *,
    epsilon=1e-5,
    momentum=0.9,
    training_mode=0,
) -> tuple:
    """Batch normalization; with training_mode=1 the batch statistics normalize X and the
    running statistics are updated: ``running = input * momentum + batch * (1 - momentum)``."""
    if not training_mode:
        return (_bn_infer(X, scale, B, input_mean, input_var, epsilon),)
    X = as_array(X)
    xf = _float_in(X)
    x3 = _bn_view(xf)
    C = x3.shape[1]
    op = "BatchNormalization"
    bm, bv = _channel_moments(x3)
    a = _param(scale, C, "scale", op) / np.sqrt(bv + float(epsilon))
    b = _param(B, C, "B", op) - bm * a
    y = _affine_channels(x3, a.astype(xf.dtype), b.astype(xf.dtype))
    mom = float(momentum)
    pdt = np.asarray(input_mean).dtype
    rm = _param(input_mean, C, "input_mean", op) * mom + bm * (1 - mom)
    rv = _param(input_var, C, "input_var", op) * mom + bv * (1 - mom)
    return (y.reshape(X.shape).astype(X.dtype, copy=False), rm.astype(pdt), rv.astype(pdt))


@onnx_op(
    "InstanceNormalization",
    inputs=("input", "scale", "B"),
    since=6,
    attributes={"epsilon": 1e-5},
    jit=instancenorm_like_jit,
    **LIKE,
)
def instance_normalization(input: Any, scale: Any, B: Any, *, epsilon=1e-5) -> tuple[np.ndarray]:
    """Per (image, channel) standardization over the spatial axes, then ``* scale[c] + B[c]``."""
    X = as_array(input)
    if X.ndim < 3:
        raise MDFError(f"InstanceNormalization: input should be (N, C, D1, ...), got {X.shape}")
    N, C = X.shape[:2]
    xf = _float_in(X)
    op = "InstanceNormalization"
    sc = np.tile(_param(scale, C, "scale", op), N)
    bi = np.tile(_param(B, C, "B", op), N)
    y = standardize_rows(xf.reshape(N * C, -1), float(epsilon), sc, bi)
    return (y.reshape(X.shape).astype(X.dtype, copy=False),)


def _rows_over(X: np.ndarray, axes: list[int]) -> tuple[np.ndarray, tuple, list[int]]:
    """X with ``axes`` moved last and flattened: (rows, L), plus how to undo it."""
    keep = [i for i in range(X.ndim) if i not in axes]
    perm = keep + axes
    xt = np.ascontiguousarray(X.transpose(perm))
    return xt.reshape(int(np.prod([X.shape[i] for i in keep])), -1), xt.shape, perm


def _norm_axes(axes: Any, ndim: int, op: str) -> list[int]:
    out = sorted({int(a) + ndim if int(a) < 0 else int(a) for a in axes})
    if any(a < 0 or a >= ndim for a in out):
        raise MDFError(f"{op}: axes {list(axes)} out of range for a {ndim}-D input")
    return out


@onnx_op(
    "MeanVarianceNormalization",
    inputs=("X",),
    since=9,
    attributes={"axes": (0, 2, 3)},
    jit=mvn_like_jit,
    **LIKE,
)
def mean_variance_normalization(X: Any, *, axes=(0, 2, 3)) -> tuple[np.ndarray]:
    """``(X - mean) / sqrt(var)`` with mean and variance over ``axes``."""
    X = as_array(X)
    ax = _norm_axes(axes, X.ndim, "MeanVarianceNormalization")
    rows, shape, perm = _rows_over(_float_in(X), ax)
    R = rows.shape[0]
    y = standardize_rows(rows, 0.0, np.ones(R), np.zeros(R))
    return (y.reshape(shape).transpose(np.argsort(perm)).astype(X.dtype, copy=False),)


@onnx_op(
    "LpNormalization",
    inputs=("input",),
    since=1,
    attributes={"axis": -1, "p": 2},
    jit=lpnorm_like_jit,
    **LIKE,
)
def lp_normalization(input: Any, *, axis=-1, p=2) -> tuple[np.ndarray]:
    """``x / ||x||_p`` along ``axis`` (p = 1 or 2); a zero vector stays zero."""
    X = as_array(input)
    if int(p) not in (1, 2):
        raise MDFError(f"LpNormalization: p should be 1 or 2, got {p}")
    ax = _norm_axes([axis], X.ndim, "LpNormalization")
    rows, shape, perm = _rows_over(_float_in(X), ax)
    y = lp_rows(rows, int(p))
    return (y.reshape(shape).transpose(np.argsort(perm)).astype(X.dtype, copy=False),)


@onnx_op(
    "LRN",
    inputs=("X",),
    since=1,
    attributes={"alpha": 1e-4, "beta": 0.75, "bias": 1.0, "size": REQUIRED},
    jit=lrn_like_jit,
    **LIKE,
)
def lrn(X: Any, *, alpha=1e-4, beta=0.75, bias=1.0, size=None) -> tuple[np.ndarray]:
    """Local response normalization across channels:
    ``x / (bias + alpha / size * sum of x^2 over the size neighbouring channels) ** beta``."""
    if size is None or int(size) < 1:
        raise MDFError(f"LRN: attribute 'size' should be a positive int, got {size}")
    X = as_array(X)
    if X.ndim < 3:
        raise MDFError(f"LRN: X should be (N, C, D1, ...), got shape {X.shape}")
    xf = _float_in(X)
    y = lrn_core(
        xf.reshape(X.shape[0], X.shape[1], -1), float(alpha), float(beta), float(bias), int(size)
    )
    return (y.reshape(X.shape).astype(X.dtype, copy=False),)
