"""ONNX loss operators NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (Numba kernels).

Both take class scores shaped ``[N, C]`` or ``[N, C, d1, ..., dk]`` and integer targets shaped
``[N]`` or ``[N, d1, ..., dk]``, an optional per-class ``weight`` and an optional ``ignore_index``
(targets equal to it contribute nothing, not even weight to the mean's denominator).
``reduction`` is ``none`` (per-element losses), ``sum`` or ``mean`` (sum divided by the summed
weights of the counted elements). SoftmaxCrossEntropyLoss also returns ``log_prob``, the
log-softmax of the scores over axis 1. Sums are accumulated in float64 and the result is given in
the scores' dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op


@numba.njit(cache=True)
def _nll_core(x3, t2, w, has_w, ignore, has_ignore):
    """Per-element losses [N, D] and the summed weights; ``bad`` = first out-of-range target+1."""
    N, C, D = x3.shape
    loss = np.zeros((N, D), dtype=x3.dtype)
    wsum = 0.0
    bad = 0
    for n in range(N):
        for d in range(D):
            c = t2[n, d]
            if has_ignore and c == ignore:
                continue
            if c < 0 or c >= C:
                bad = 1
                continue
            wt = w[c] if has_w else 1.0
            loss[n, d] = -x3[n, c, d] * wt
            wsum += wt
    return loss, wsum, bad


@numba.njit(cache=True)
def _log_softmax_axis1(x3):
    N, C, D = x3.shape
    out = np.empty_like(x3)
    for n in range(N):
        for d in range(D):
            m = x3[n, 0, d]
            for c in range(1, C):
                if x3[n, c, d] > m:
                    m = x3[n, c, d]
            s = 0.0
            for c in range(C):
                s += math.exp(x3[n, c, d] - m)
            ls = math.log(s) + m
            for c in range(C):
                out[n, c, d] = x3[n, c, d] - ls
    return out


def _as3(x: np.ndarray, op: str) -> np.ndarray:
    if x.ndim < 2:
        raise MDFError(f"{op}: scores must be [N, C, ...] with rank >= 2, got shape {x.shape}")
    return np.ascontiguousarray(x.reshape(x.shape[0], x.shape[1], -1))


def _nll(
    x: np.ndarray, target: Any, weight: Any, ignore_index: Any, reduction: str, op: str
) -> np.ndarray:
    t = np.asarray(target)
    if t.dtype.kind not in "iu":
        raise MDFError(f"{op}: target must be integer, got {t.dtype}")
    if t.shape != (x.shape[0], *x.shape[2:]):
        raise MDFError(f"{op}: target shape {t.shape} must be {(x.shape[0], *x.shape[2:])}")
    if reduction not in ("none", "sum", "mean"):
        raise MDFError(f"{op}: reduction must be none, sum or mean, got '{reduction}'")
    x3 = _as3(x, op)
    t2 = np.ascontiguousarray(t.reshape(x.shape[0], -1).astype(np.int64))
    has_w = weight is not None
    w = np.asarray(weight, dtype=np.float64).reshape(-1) if has_w else np.ones(1)
    if has_w and w.shape[0] != x.shape[1]:
        raise MDFError(f"{op}: weight must have {x.shape[1]} entries (one per class)")
    has_ig = ignore_index is not None
    loss, wsum, bad = _nll_core(x3, t2, w, has_w, int(ignore_index) if has_ig else 0, has_ig)
    if bad:
        raise MDFError(
            f"{op}: target values must be class indices in [0, {x.shape[1] - 1}]"
            + (f" or ignore_index {ignore_index}" if has_ig else "")
        )
    if reduction == "none":
        return loss.reshape(t.shape)
    total = loss.sum(dtype=np.float64)
    if reduction == "sum":
        return np.asarray(total, dtype=x.dtype)
    return np.asarray(total / wsum if wsum != 0 else 0.0, dtype=x.dtype)


def _float(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


@onnx_op(
    "NegativeLogLikelihoodLoss",
    inputs=("input", "target", "weight"),
    optional=("weight",),
    attributes={"ignore_index": None, "reduction": "mean"},
    outputs=("loss",),
    since=12,
)
def negative_log_likelihood_loss(
    input: Any,
    target: Any,
    weight: Any = None,
    *,
    ignore_index: Any = None,
    reduction: str = "mean",
) -> tuple:
    """``loss[n, d...] = -input[n, target[n, d...], d...] * weight[target]``, then reduced."""
    return (
        _nll(_float(input), target, weight, ignore_index, reduction, "NegativeLogLikelihoodLoss"),
    )


@onnx_op(
    "SoftmaxCrossEntropyLoss",
    inputs=("scores", "labels", "weights"),
    optional=("weights",),
    attributes={"ignore_index": None, "reduction": "mean"},
    outputs=("output", "log_prob"),
    since=12,
)
def softmax_cross_entropy_loss(
    scores: Any,
    labels: Any,
    weights: Any = None,
    *,
    ignore_index: Any = None,
    reduction: str = "mean",
) -> tuple:
    """NegativeLogLikelihoodLoss of ``log_softmax(scores, axis=1)``; returns the loss and
    ``log_prob``."""
    x = _float(scores)
    op = "SoftmaxCrossEntropyLoss"
    log_prob = _log_softmax_axis1(_as3(x, op)).reshape(x.shape)
    return (_nll(log_prob, labels, weights, ignore_index, reduction, op), log_prob)
