"""``onnx::`` NonZero, Unique and Compress: the selections whose output shape depends on the
values of the input (the indices of the nonzero elements, the distinct values or rows with their
indices and counts, the slices a boolean condition keeps).

NonZero runs a Numba kernel; Compress is a boolean mask (numpy); Unique along an axis sorts rows
in Python.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._index_common import flat_view, index_axis


@numba.njit(cache=True)
def _nonzero_core(x, shape):
    nd = shape.size
    cnt = 0
    for k in range(x.size):
        if x[k] != 0:
            cnt += 1
    out = np.empty((nd, cnt), dtype=np.int64)
    c = 0
    for k in range(x.size):
        if x[k] != 0:
            rem = k
            for d in range(nd - 1, -1, -1):
                out[d, c] = rem % shape[d]
                rem //= shape[d]
            c += 1
    return out


@onnx_op("NonZero", inputs=("X",), since=9)
def nonzero(X):
    """Indices of the nonzero elements, as an int64 (rank, count) tensor in C order."""
    x = np.asarray(X)
    if x.ndim == 0:
        return (np.zeros((0, 1 if x != 0 else 0), dtype=np.int64),)
    flat = flat_view(x)
    if flat.dtype.kind == "b":
        flat = flat.view(np.uint8)
    return (_nonzero_core(flat, np.array(x.shape, dtype=np.int64)),)


# ---------------------------------------------------------------- Unique


@numba.njit(cache=True)
def _unique_core(x, sort_values):
    """Unique values of the 1-D ``x``: (order of groups, first index, inverse, counts)."""
    n = x.size
    order = np.argsort(x, kind="mergesort")
    group = np.empty(n, dtype=np.int64)
    g = -1
    for t in range(n):
        if t == 0 or x[order[t]] != x[order[t - 1]]:
            g += 1
        group[order[t]] = g
    ng = g + 1
    first = np.full(ng, n, dtype=np.int64)
    counts = np.zeros(ng, dtype=np.int64)
    for k in range(n):
        gi = group[k]
        counts[gi] += 1
        if k < first[gi]:
            first[gi] = k
    if sort_values:
        rank = np.arange(ng)
    else:
        # renumber groups by first occurrence
        by_first = np.argsort(first, kind="mergesort")
        rank = np.empty(ng, dtype=np.int64)
        for r in range(ng):
            rank[by_first[r]] = r
    inv = np.empty(n, dtype=np.int64)
    for k in range(n):
        inv[k] = rank[group[k]]
    first_r = np.empty(ng, dtype=np.int64)
    counts_r = np.empty(ng, dtype=np.int64)
    for gi in range(ng):
        first_r[rank[gi]] = first[gi]
        counts_r[rank[gi]] = counts[gi]
    return first_r, inv, counts_r


def _unique_rows(rows: np.ndarray, sort_values: bool):
    keys = [tuple(r) for r in rows.tolist()]
    first: dict[tuple, int] = {}
    for k, key in enumerate(keys):
        first.setdefault(key, k)
    groups = sorted(first) if sort_values else list(first)
    rank = {key: r for r, key in enumerate(groups)}
    firsts = np.array([first[key] for key in groups], dtype=np.int64)
    inv = np.array([rank[key] for key in keys], dtype=np.int64)
    counts = np.bincount(inv, minlength=len(groups)).astype(np.int64)
    return firsts, inv, counts


@onnx_op(
    "Unique",
    inputs=("X",),
    attributes={"axis": None, "sorted": 1},
    outputs=("Y", "indices", "inverse_indices", "counts"),
    since=11,
)
def unique(X, *, axis=None, sorted=1):
    """Unique elements (or slices along ``axis``), sorted ascending or in order of first
    occurrence, with first indices, inverse indices and counts (int64)."""
    x = np.asarray(X)
    if axis is None:
        flat = flat_view(x)
        if flat.dtype.kind in "OUS":
            firsts, inv, counts = _unique_rows(flat.reshape(-1, 1), bool(sorted))
        else:
            keys = flat if flat.dtype.kind in "biuf" else flat.astype(np.float64)
            firsts, inv, counts = _unique_core(keys, bool(sorted))
        return flat[firsts], firsts, inv, counts
    ax = index_axis(axis, x.ndim, "Unique")
    moved = np.moveaxis(x, ax, 0)
    rows = moved.reshape(moved.shape[0], -1)
    firsts, inv, counts = _unique_rows(rows, bool(sorted))
    y = np.moveaxis(moved[firsts], 0, ax)
    return np.ascontiguousarray(y), firsts, inv, counts


# ---------------------------------------------------------------- Compress


def _compress(input: Any, condition: Any, axis: Any) -> np.ndarray:
    x = np.asarray(input)
    cond = np.asarray(condition).astype(bool).reshape(-1)
    if axis is None:
        flat = x.reshape(-1)
        if cond.size > flat.size:
            raise MDFError(f"Compress: condition has {cond.size} entries for {flat.size} elements")
        return flat[: cond.size][cond]
    ax = index_axis(axis, x.ndim, "Compress")
    if cond.size > x.shape[ax]:
        raise MDFError(f"Compress: condition has {cond.size} entries for axis length {x.shape[ax]}")
    sel = np.nonzero(cond)[0]
    return np.take(x, sel, axis=ax)


@onnx_op(
    "Compress",
    inputs=("input", "condition"),
    attributes={"axis": None},
    outputs=("output",),
    since=9,
)
def compress(input, condition, *, axis=None):
    """The slices along ``axis`` (or elements of the flattened input) where ``condition``
    is true; a condition shorter than the axis selects nothing beyond its end."""
    return (_compress(input, condition, axis),)
