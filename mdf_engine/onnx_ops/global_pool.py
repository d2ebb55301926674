"""``onnx::`` GlobalAveragePool, GlobalMaxPool and GlobalLpPool: one value per (batch, channel)
over all spatial positions, kept as size-1 spatial dimensions."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from ._pool_common import U
from ._spatial_jit import shaped_like_nb


@numba.njit(cache=True, fastmath={"reassoc"})
def _sum_run(xf, o, n):
    """``sum(xf[o:o + n])`` in float64, reassociated into vector partial sums."""
    acc = 0.0
    for t in range(n):
        acc += xf[U(o + t)]
    return acc


@numba.njit(cache=True)
def _global(x, mode, p):
    """Reduce the last axis of (R, L): 0 mean, 1 max, 2 Lp norm (one loop per mode, with no
    test inside, so that LLVM vectorizes it; flat unsigned offsets, see :data:`U`)."""
    R, L = x.shape
    y = np.empty(R, dtype=np.float64)
    xf = x.reshape(-1)
    for r in range(R):
        o = r * L
        if mode == 1:
            m = xf[o]
            for t in range(1, L):
                v = xf[U(o + t)]
                m = v if v > m else m
            y[r] = m
        elif mode == 0:
            y[r] = _sum_run(xf, o, L) / L
        else:
            acc = 0.0
            for t in range(L):
                acc += abs(float(xf[U(o + t)])) ** p
            y[r] = acc ** (1.0 / p)
    return y


def _global_pool(X: Any, mode: int, p: float, op: str) -> np.ndarray:
    X = as_array(X)
    if X.ndim < 3:
        raise MDFError(f"{op}: expected X of shape (N, C, D1, ...), got {X.shape}")
    flat = np.ascontiguousarray(X.reshape(X.shape[0] * X.shape[1], -1))
    if flat.dtype.kind not in "iu" and flat.dtype not in (np.float32, np.float64):
        flat = flat.astype(np.float32)
    y = _global(flat, mode, p)
    return y.reshape(X.shape[:2] + (1,) * (X.ndim - 2)).astype(X.dtype)


@numba.njit(cache=True)
def _global_nb(X, mode):
    """nopython :func:`_global_pool` of a float X (mean or max), in X's dtype."""
    R = X.shape[0] * X.shape[1]
    flat = np.ascontiguousarray(X).reshape((R, X.size // R))
    y = _global(flat, mode, 1.0).astype(X.dtype)
    return shaped_like_nb(y.reshape((X.shape[0], X.shape[1], 1, 1, 1)), X)


@numba.njit(cache=True)
def global_average_pool_jit(X):
    """nopython GlobalAveragePool (compiled backend)."""
    return _global_nb(X, 0)


@numba.njit(cache=True)
def global_max_pool_jit(X):
    """nopython GlobalMaxPool (compiled backend)."""
    return _global_nb(X, 1)


@onnx_op("GlobalAveragePool", inputs=("X",), since=1, jit=global_average_pool_jit)
def global_average_pool(X: Any) -> tuple[np.ndarray]:
    """Mean over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 0, 1.0, "GlobalAveragePool"),)


@onnx_op("GlobalMaxPool", inputs=("X",), since=1, jit=global_max_pool_jit)
def global_max_pool(X: Any) -> tuple[np.ndarray]:
    """Max over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 1, 1.0, "GlobalMaxPool"),)


@onnx_op("GlobalLpPool", inputs=("X",), attributes={"p": 2}, since=2)
def global_lp_pool(X: Any, *, p=2) -> tuple[np.ndarray]:
    """Lp norm over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 2, float(p), "GlobalLpPool"),)
