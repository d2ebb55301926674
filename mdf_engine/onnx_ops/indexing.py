"""``onnx::`` indexing operators: Gather, GatherElements, GatherND, Scatter, ScatterElements,
ScatterND, NonZero, Unique, Compress, ReverseSequence and OneHot.

The index loops run in Numba kernels on C-ordered flat buffers: the Python wrappers only
normalise axes, reshape to an (outer, n, inner) or flat layout and check shapes; the kernels
wrap negative indices and raise ``IndexError`` (re-raised as :class:`MDFError`) for indices
out of range. Compress is a boolean mask (numpy), Unique along an axis sorts rows in Python.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op


def _axis(a: Any, ndim: int, op: str) -> int:
    a = int(a)
    if not -ndim <= a < ndim:
        raise MDFError(f"{op}: axis {a} is out of range for rank {ndim}")
    return a % ndim


def _flat(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).reshape(-1)


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(x: np.ndarray) -> np.ndarray:
    """For pure data movement: a dtype Numba does not know (bfloat16, ...) seen as unsigned
    ints of the same size; other arrays unchanged."""
    if x.dtype.kind not in "biufc" and x.dtype.itemsize in _UINT_OF_SIZE:
        return x.view(_UINT_OF_SIZE[x.dtype.itemsize])
    return x


def _c_strides(shape: tuple[int, ...]) -> np.ndarray:
    st = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def _guard(op: str, fn, *args):
    try:
        return fn(*args)
    except IndexError as e:
        raise MDFError(f"{op}: an index is out of range ({e})") from e


# ---------------------------------------------------------------- Gather


@numba.njit(cache=True)
def _gather_core(x, idx, outer, n, inner):
    m = idx.size
    out = np.empty(outer * m * inner, dtype=x.dtype)
    for t in range(m):
        j = idx[t]
        if j < 0:
            j += n
        if j < 0 or j >= n:
            raise IndexError("Gather index out of range")
    for o in range(outer):
        for t in range(m):
            j = idx[t]
            if j < 0:
                j += n
            src = (o * n + j) * inner
            dst = (o * m + t) * inner
            for i in range(inner):
                out[dst + i] = x[src + i]
    return out


@onnx_op("Gather", inputs=("data", "indices"), attributes={"axis": 0}, outputs=("output",))
def gather(data, indices, *, axis=0):
    """Take the slices of ``data`` at ``indices`` along ``axis`` (negative indices wrap)."""
    x = np.asarray(data)
    ind = np.asarray(indices)
    ax = _axis(axis, x.ndim, "Gather")
    outer = math.prod(x.shape[:ax])
    inner = math.prod(x.shape[ax + 1 :])
    flat = _flat(x)
    if flat.dtype.kind in "OUS":
        res = np.take(x, np.where(ind < 0, ind + x.shape[ax], ind), axis=ax)
        return (res,)
    res = _guard(
        "Gather", _gather_core, _bits(flat), _flat(ind).astype(np.int64), outer, x.shape[ax], inner
    ).view(flat.dtype)
    return (res.reshape(x.shape[:ax] + ind.shape + x.shape[ax + 1 :]),)


# ---------------------------------------------------------------- GatherElements / ScatterElements


@numba.njit(cache=True)
def _elements_offsets(idx, ishape, dshape, axis):
    """Flat offsets into the C-ordered data for each element of the indices tensor."""
    nd = ishape.size
    dstr = np.ones(nd, dtype=np.int64)
    for i in range(nd - 2, -1, -1):
        dstr[i] = dstr[i + 1] * dshape[i + 1]
    n = dshape[axis]
    offs = np.empty(idx.size, dtype=np.int64)
    for k in range(idx.size):
        rem = k
        off = 0
        for d in range(nd - 1, -1, -1):
            c = rem % ishape[d]
            rem //= ishape[d]
            if d == axis:
                j = idx[k]
                if j < 0:
                    j += n
                if j < 0 or j >= n:
                    raise IndexError("index out of range")
                c = j
            off += c * dstr[d]
        offs[k] = off
    return offs


@numba.njit(cache=True)
def _take_flat(x, offs):
    out = np.empty(offs.size, dtype=x.dtype)
    for k in range(offs.size):
        out[k] = x[offs[k]]
    return out


@numba.njit(cache=True)
def _scatter_flat(out, offs, upd, reduction):
    """out[offs[k]] (op)= upd[k]; reduction 0 none, 1 add, 2 mul, 3 max, 4 min."""
    for k in range(offs.size):
        o = offs[k]
        v = upd[k]
        if reduction == 0:
            out[o] = v
        elif reduction == 1:
            out[o] += v
        elif reduction == 2:
            out[o] *= v
        elif reduction == 3:
            if v > out[o]:
                out[o] = v
        else:
            if v < out[o]:
                out[o] = v
    return out


_REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def _reduction(r: Any, op: str, allowed: tuple[str, ...]) -> int:
    r = str(r)
    if r not in allowed:
        raise MDFError(f"{op}: reduction must be one of {', '.join(allowed)}, got '{r}'")
    return _REDUCTIONS[r]


def _elem_offsets(op: str, x: np.ndarray, ind: np.ndarray, axis: Any) -> tuple[np.ndarray, int]:
    if ind.ndim != x.ndim:
        raise MDFError(f"{op}: indices must have the rank of data ({x.ndim}), got {ind.ndim}")
    ax = _axis(axis, x.ndim, op)
    offs = _guard(
        op,
        _elements_offsets,
        _flat(ind).astype(np.int64),
        np.array(ind.shape, dtype=np.int64),
        np.array(x.shape, dtype=np.int64),
        ax,
    )
    return offs, ax


@onnx_op(
    "GatherElements",
    inputs=("data", "indices"),
    attributes={"axis": 0},
    outputs=("output",),
    since=11,
)
def gatherelements(data, indices, *, axis=0):
    """``out[i..] = data[i.. with the axis coordinate replaced by indices[i..]]``."""
    x = np.asarray(data)
    ind = np.asarray(indices)
    offs, _ = _elem_offsets("GatherElements", x, ind, axis)
    return (_take_flat(_bits(_flat(x)), offs).view(x.dtype).reshape(ind.shape),)


def _scatter_elements(
    op: str, data: Any, indices: Any, updates: Any, axis: Any, reduction: int
) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    upd = np.asarray(updates)
    if upd.shape != ind.shape:
        raise MDFError(f"{op}: updates shape {upd.shape} must equal indices shape {ind.shape}")
    offs, _ = _elem_offsets(op, x, ind, axis)
    out = np.array(x, order="C", copy=True).reshape(-1)
    _scatter_flat(out, offs, _flat(upd).astype(x.dtype, copy=False), reduction)
    return out.reshape(x.shape)


@onnx_op(
    "Scatter",
    inputs=("data", "indices", "updates"),
    attributes={"axis": 0},
    outputs=("output",),
    since=9,
)
def scatter(data, indices, updates, *, axis=0):
    """Deprecated alias of ScatterElements without reduction."""
    return (_scatter_elements("Scatter", data, indices, updates, axis, 0),)


@onnx_op(
    "ScatterElements",
    inputs=("data", "indices", "updates"),
    attributes={"axis": 0},
    outputs=("output",),
    since=11,
)
def scatterelements_v11(data, indices, updates, *, axis=0):
    """A copy of ``data`` with ``updates`` written at ``indices`` along ``axis``."""
    return (_scatter_elements("ScatterElements", data, indices, updates, axis, 0),)


@onnx_op(
    "ScatterElements",
    inputs=("data", "indices", "updates"),
    attributes={"axis": 0, "reduction": "none"},
    outputs=("output",),
    since=16,
)
def scatterelements_v16(data, indices, updates, *, axis=0, reduction="none"):
    """ScatterElements with ``reduction`` none, add or mul (in index order for duplicates)."""
    r = _reduction(reduction, "ScatterElements", ("none", "add", "mul"))
    return (_scatter_elements("ScatterElements", data, indices, updates, axis, r),)


@onnx_op(
    "ScatterElements",
    inputs=("data", "indices", "updates"),
    attributes={"axis": 0, "reduction": "none"},
    outputs=("output",),
    since=18,
)
def scatterelements(data, indices, updates, *, axis=0, reduction="none"):
    """ScatterElements with ``reduction`` none, add, mul, max or min."""
    r = _reduction(reduction, "ScatterElements", ("none", "add", "mul", "max", "min"))
    return (_scatter_elements("ScatterElements", data, indices, updates, axis, r),)


# ---------------------------------------------------------------- GatherND / ScatterND


@numba.njit(cache=True)
def _nd_offsets(idx2, dshape, b, nbatch):
    """Flat data offsets (in units of ``inner`` blocks) of each index tuple.

    ``idx2`` is (nbatch * per_batch, q); tuple t belongs to batch t // per_batch."""
    rows, q = idx2.shape
    per = rows // nbatch if nbatch > 0 else 0
    # block = product of dshape[b + q:], strides over dshape[b : b + q] in blocks
    st = np.ones(q, dtype=np.int64)
    for i in range(q - 2, -1, -1):
        st[i] = st[i + 1] * dshape[b + i + 1]
    slab = 1
    for i in range(q):
        slab *= dshape[b + i]
    offs = np.empty(rows, dtype=np.int64)
    for t in range(rows):
        bi = t // per if per > 0 else 0
        off = bi * slab
        for i in range(q):
            j = idx2[t, i]
            n = dshape[b + i]
            if j < 0:
                j += n
            if j < 0 or j >= n:
                raise IndexError("index out of range")
            off += j * st[i]
        offs[t] = off
    return offs


@numba.njit(cache=True)
def _gather_blocks(x, offs, inner):
    out = np.empty(offs.size * inner, dtype=x.dtype)
    for t in range(offs.size):
        s = offs[t] * inner
        for i in range(inner):
            out[t * inner + i] = x[s + i]
    return out


@numba.njit(cache=True)
def _scatter_blocks(out, offs, upd, inner, reduction):
    for t in range(offs.size):
        s = offs[t] * inner
        for i in range(inner):
            v = upd[t * inner + i]
            o = s + i
            if reduction == 0:
                out[o] = v
            elif reduction == 1:
                out[o] += v
            elif reduction == 2:
                out[o] *= v
            elif reduction == 3:
                if v > out[o]:
                    out[o] = v
            else:
                if v < out[o]:
                    out[o] = v
    return out


def _nd_layout(op: str, x: np.ndarray, ind: np.ndarray, b: int):
    if ind.ndim < 1:
        raise MDFError(f"{op}: indices must have rank >= 1")
    q = ind.shape[-1]
    if b < 0 or b >= min(x.ndim, ind.ndim) or q > x.ndim - b:
        raise MDFError(f"{op}: batch_dims {b} and index depth {q} do not fit data rank {x.ndim}")
    if x.shape[:b] != ind.shape[:b]:
        raise MDFError(f"{op}: batch dims of data {x.shape[:b]} and indices {ind.shape[:b]} differ")
    nbatch = math.prod(x.shape[:b])
    inner = math.prod(x.shape[b + q :])
    idx2 = np.ascontiguousarray(ind, dtype=np.int64).reshape(-1, q)
    offs = _guard(op, _nd_offsets, idx2, np.array(x.shape, dtype=np.int64), b, nbatch)
    return offs, inner, q


def _gathernd(data: Any, indices: Any, batch_dims: int) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    b = int(batch_dims)
    offs, inner, q = _nd_layout("GatherND", x, ind, b)
    out = _gather_blocks(_bits(_flat(x)), offs, inner).view(x.dtype)
    return out.reshape(ind.shape[:-1] + x.shape[b + q :])


@onnx_op("GatherND", inputs=("data", "indices"), outputs=("output",), since=11)
def gathernd_v11(data, indices):
    """Slices of ``data`` addressed by the last dim of ``indices``."""
    return (_gathernd(data, indices, 0),)


@onnx_op(
    "GatherND",
    inputs=("data", "indices"),
    attributes={"batch_dims": 0},
    outputs=("output",),
    since=12,
)
def gathernd(data, indices, *, batch_dims=0):
    """GatherND whose first ``batch_dims`` dims of data and indices are batch dims."""
    return (_gathernd(data, indices, batch_dims),)


def _scatternd(data: Any, indices: Any, updates: Any, reduction: int) -> np.ndarray:
    x = np.asarray(data)
    ind = np.asarray(indices)
    upd = np.asarray(updates)
    offs, inner, q = _nd_layout("ScatterND", x, ind, 0)
    want = ind.shape[:-1] + x.shape[q:]
    if upd.shape != want:
        raise MDFError(f"ScatterND: updates must have shape {want}, got {upd.shape}")
    out = np.array(x, order="C", copy=True).reshape(-1)
    _scatter_blocks(out, offs, _flat(upd).astype(x.dtype, copy=False), inner, reduction)
    return out.reshape(x.shape)


@onnx_op("ScatterND", inputs=("data", "indices", "updates"), outputs=("output",), since=11)
def scatternd_v11(data, indices, updates):
    """A copy of ``data`` with ``updates`` written at the index tuples of ``indices``."""
    return (_scatternd(data, indices, updates, 0),)


@onnx_op(
    "ScatterND",
    inputs=("data", "indices", "updates"),
    attributes={"reduction": "none"},
    outputs=("output",),
    since=16,
)
def scatternd_v16(data, indices, updates, *, reduction="none"):
    """ScatterND with ``reduction`` none, add or mul."""
    return (
        _scatternd(
            data, indices, updates, _reduction(reduction, "ScatterND", ("none", "add", "mul"))
        ),
    )


@onnx_op(
    "ScatterND",
    inputs=("data", "indices", "updates"),
    attributes={"reduction": "none"},
    outputs=("output",),
    since=18,
)
def scatternd(data, indices, updates, *, reduction="none"):
    """ScatterND with ``reduction`` none, add, mul, max or min."""
    return (
        _scatternd(
            data,
            indices,
            updates,
            _reduction(reduction, "ScatterND", ("none", "add", "mul", "max", "min")),
        ),
    )


# ---------------------------------------------------------------- NonZero


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
    flat = _flat(x)
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
        flat = _flat(x)
        if flat.dtype.kind in "OUS":
            firsts, inv, counts = _unique_rows(flat.reshape(-1, 1), bool(sorted))
        else:
            keys = flat if flat.dtype.kind in "biuf" else flat.astype(np.float64)
            firsts, inv, counts = _unique_core(keys, bool(sorted))
        return flat[firsts], firsts, inv, counts
    ax = _axis(axis, x.ndim, "Unique")
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
    ax = _axis(axis, x.ndim, "Compress")
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


# ---------------------------------------------------------------- ReverseSequence


@numba.njit(cache=True)
def _reverse_seq_core(x, lens):
    """x is (batch, time, inner); reverse the first lens[b] time steps of each batch."""
    nb, nt, inner = x.shape
    out = x.copy()
    for b in range(nb):
        L = lens[b]
        if L > nt or L < 0:
            raise IndexError("sequence length out of range")
        for t in range(L):
            for i in range(inner):
                out[b, t, i] = x[b, L - 1 - t, i]
    return out


@onnx_op(
    "ReverseSequence",
    inputs=("input", "sequence_lens"),
    attributes={"batch_axis": 1, "time_axis": 0},
    outputs=("Y",),
    since=10,
)
def reversesequence(input, sequence_lens, *, batch_axis=1, time_axis=0):
    """Reverse the first ``sequence_lens[b]`` steps along ``time_axis`` of each batch entry."""
    x = np.asarray(input)
    ba, ta = int(batch_axis), int(time_axis)
    if {ba, ta} != {0, 1} or x.ndim < 2:
        raise MDFError("ReverseSequence: batch_axis and time_axis must be 0 and 1 (either order)")
    t = x if ba == 0 else np.swapaxes(x, 0, 1)
    shp = t.shape
    t3 = np.ascontiguousarray(t).reshape(shp[0], shp[1], -1)
    lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
    if lens.size != shp[0]:
        raise MDFError(f"ReverseSequence: sequence_lens needs {shp[0]} entries, got {lens.size}")
    if t3.dtype.kind in "OUS":
        out = t3.copy()
        for b, L in enumerate(lens.tolist()):
            out[b, :L] = t3[b, :L][::-1]
    else:
        out = _guard("ReverseSequence", _reverse_seq_core, _bits(t3), lens).view(t3.dtype)
    out = out.reshape(shp)
    return (np.ascontiguousarray(out if ba == 0 else np.swapaxes(out, 0, 1)),)


# ---------------------------------------------------------------- OneHot


@numba.njit(cache=True)
def _onehot_core(idx, outer, depth, inner, off, on, out):
    for k in range(out.size):
        out[k] = off
    for o in range(outer):
        for i in range(inner):
            j = idx[o * inner + i]
            if j < 0:
                j += depth
            if 0 <= j < depth:
                out[(o * depth + j) * inner + i] = on
    return out


@onnx_op(
    "OneHot",
    inputs=("indices", "depth", "values"),
    attributes={"axis": -1},
    outputs=("output",),
    since=9,
)
def onehot(indices, depth, values, *, axis=-1):
    """One-hot encoding: a new ``depth``-long axis at ``axis`` holding ``values[1]`` at each
    index and ``values[0]`` elsewhere; indices in [-depth, -1] wrap, others give all-off."""
    ind = np.asarray(indices)
    d = int(np.asarray(depth).reshape(-1)[0])
    if d < 1:
        raise MDFError(f"OneHot: depth must be >= 1, got {d}")
    vals = np.asarray(values).reshape(-1)
    if vals.size != 2:
        raise MDFError(f"OneHot: values must hold [off, on], got {vals.size} values")
    r = ind.ndim + 1
    a = int(axis)
    if not -r <= a < r:
        raise MDFError(f"OneHot: axis {a} is out of range for output rank {r}")
    a %= r
    outer = math.prod(ind.shape[:a])
    inner = math.prod(ind.shape[a:])
    idx = _flat(ind)
    idx = np.trunc(idx).astype(np.int64) if idx.dtype.kind == "f" else idx.astype(np.int64)
    if vals.dtype.kind in "biuf":
        out = np.empty(outer * d * inner, dtype=vals.dtype)
        _onehot_core(idx, outer, d, inner, vals[0], vals[1], out)
    else:  # strings, or dtypes Numba does not know: build a mask, then select
        mask = _onehot_core(idx, outer, d, inner, 0, 1, np.empty(outer * d * inner, np.uint8))
        out = np.where(mask.astype(bool), vals[1], vals[0]).astype(vals.dtype)
    return (out.reshape(ind.shape[:a] + (d,) + ind.shape[a:]),)
