"""``onnx::`` TopK: the K largest (or smallest) elements along one axis and their indices,
sorted, equal values by lower index first (``k`` an attribute at opset 1, input ``K`` from 10,
``largest``/``sorted`` from 11). The output shape depends on the value of K, so there is no
``jit=`` form."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import axis_index


@numba.njit(cache=True)
def _topk_core(x2, k, largest):
    """Top ``k`` of each row, sorted, equal values by lower index first. Small ``k``: one pass
    with an insertion-sorted buffer; otherwise a stable sort of the row."""
    rows, n = x2.shape
    vals = np.empty((rows, k), dtype=x2.dtype)
    idx = np.empty((rows, k), dtype=np.int64)
    if k == 0:
        return vals, idx
    if k <= 16 and k * 8 < n:
        for r in range(rows):
            row = x2[r]
            bv = vals[r]
            bi = idx[r]
            cnt = 0
            for j in range(n):
                v = row[j]
                if cnt == k:
                    w = bv[k - 1]
                    if not ((v > w) if largest else (v < w)):
                        continue
                    p = k - 1
                else:
                    p = cnt
                    cnt += 1
                # shift worse entries right; equal values stay ahead (lower index first)
                while p > 0 and ((v > bv[p - 1]) if largest else (v < bv[p - 1])):
                    bv[p] = bv[p - 1]
                    bi[p] = bi[p - 1]
                    p -= 1
                bv[p] = v
                bi[p] = j
        return vals, idx
    for r in range(rows):
        row = x2[r]
        if largest:
            # stable ascending sort of the reversed row, read backwards: descending values,
            # ties in increasing original index
            order = np.argsort(row[::-1], kind="mergesort")
            for t in range(k):
                j = n - 1 - order[n - 1 - t]
                idx[r, t] = j
                vals[r, t] = row[j]
        else:
            order = np.argsort(row, kind="mergesort")
            for t in range(k):
                idx[r, t] = order[t]
                vals[r, t] = row[order[t]]
    return vals, idx


def _topk(X: Any, k: int, axis: int, largest: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(X)
    ax = axis_index(axis, x.ndim, "TopK")
    n = x.shape[ax]
    if not 0 <= k <= n:
        raise MDFError(f"TopK: K must be between 0 and the axis length {n}, got {k}")
    moved = np.moveaxis(x, ax, -1)
    x2 = np.ascontiguousarray(moved).reshape(-1, n)
    vals, idx = _topk_core(x2, k, bool(largest))
    shape = moved.shape[:-1] + (k,)
    vals = np.moveaxis(vals.reshape(shape), -1, ax)
    idx = np.moveaxis(idx.reshape(shape), -1, ax)
    return np.ascontiguousarray(vals), np.ascontiguousarray(idx)


@onnx_op("TopK", inputs=("X",), attributes={"axis": -1, "k": None}, outputs=("Values", "Indices"))
def topk_v1(X, *, axis=-1, k=None):
    """The ``k`` largest elements along ``axis`` (``k`` an attribute, opset 1)."""
    if k is None:
        raise MDFError("TopK (opset 1) needs the attribute 'k'")
    return _topk(X, int(k), axis, 1)


@onnx_op(
    "TopK", inputs=("X", "K"), attributes={"axis": -1}, outputs=("Values", "Indices"), since=10
)
def topk_v10(X, K, *, axis=-1):
    """The ``K`` largest elements along ``axis``, sorted, ties by lower index."""
    return _topk(X, int(np.asarray(K).reshape(-1)[0]), axis, 1)


@onnx_op(
    "TopK",
    inputs=("X", "K"),
    attributes={"axis": -1, "largest": 1, "sorted": 1},
    outputs=("Values", "Indices"),
    since=11,
)
def topk(X, K, *, axis=-1, largest=1, sorted=1):
    """The ``K`` largest (or smallest) elements along ``axis``; always returned sorted (allowed
    for ``sorted=0``), equal values ordered by lower index first."""
    return _topk(X, int(np.asarray(K).reshape(-1)[0]), axis, largest)
