"""Hexagon lookup ops: Gather_f/_int32/_8, the partitioned Table_f/_int32/_8,
QuantizedHashtableLookup_8 and LSHProjection.

Gather (op list text): the index tensor's rank is its shape without leading 1s (``index_rank``
can force a larger one); the table's index dimension is its first dim > 1 unless ``index_dim``
says otherwise, and the table's rank is its shape without leading 1s (``4 - index_dim`` when it
has more leading 1s than ``index_dim``). The output is the table shape with the index dim replaced
by the index shape, left-padded with 1s to rank 4. Out-of-range indices: padding SAME raises,
VALID and NA clip to the table.

Table: the table tensor holds P partitions concatenated along the index dim, their sizes given by
``table structure``; with strategy 0 (mod) id ``i`` is row ``i // P`` of partition ``i % P``, with 1
(div) ids are numbered through the partitions in order (TF embedding_lookup partitioning).

Quantized forms copy the table range (hexagon-digest §1.4).
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import F32, O1, as4d, fval, ilist, ival, padding_code, scalar, zero_code


def _strip(shape: tuple[int, ...]) -> tuple[int, ...]:
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return tuple(shape[k:])


def gather(index, table, index_dim=None, index_rank=None, padding="NA", op="Gather"):
    """The Gather rule of the op list on 4-D tensors (see the module doc)."""
    idx, tab = as4d(index), as4d(table)
    if idx.dtype.kind == "f" and np.any(idx != np.round(idx)):
        raise MDFError(f"hexagon::{op}: indices must be integers")
    idx = idx.astype(np.int64)
    lead = len(tab.shape) - len(_strip(tab.shape))
    d = -1 if index_dim is None else ival(index_dim)
    if d > 3 or d < -1:
        raise MDFError(f"hexagon::{op}: index_dim must be -1..3, got {d}")
    if d < 0:  # the first dim > 1 (the last one if all are 1)
        d = min(lead, 3)
    t0 = min(lead, d)  # leading 1s dropped from the table, never past the index dim
    tshape = tab.shape[t0:]
    axis = d - t0
    r = -1 if index_rank is None else ival(index_rank)
    if r > 4:
        raise MDFError(f"hexagon::{op}: index_rank must be -1..4, got {r}")
    ishape = _strip(idx.shape)
    if r > len(ishape):
        ishape = idx.shape[4 - r :]
    out_shape = tshape[:axis] + ishape + tshape[axis + 1 :]
    if len(out_shape) > 4:
        raise MDFError(
            f"hexagon::{op}: output rank {len(out_shape)} > 4 (index {idx.shape}, "
            f"table {tab.shape}, index_dim {d})"
        )
    n = tab.shape[d]
    flat = idx.reshape(-1)
    bad = (flat < 0) | (flat >= n)
    if np.any(bad):
        if padding_code(padding) == 1:
            raise MDFError(f"hexagon::{op}: index {int(flat[bad][0])} out of range 0..{n - 1}")
        flat = np.clip(flat, 0, n - 1)
    taken = np.take(tab.reshape(tshape), flat, axis=axis)
    return taken.reshape((1,) * (4 - len(out_shape)) + out_shape)


@hexop(
    "Gather_f",
    ("index", "table", "index_dim", "index_rank"),
    outputs=O1,
    optional=("index_dim", "index_rank"),
)
def gather_f(index, table, index_dim=None, index_rank=None, *, padding="NA"):
    """Generalised table lookup (module doc) of a float table."""
    return (gather(index, table, index_dim, index_rank, padding, "Gather_f").astype(F32),)


@hexop(
    "Gather_int32",
    ("index", "table", "index_dim", "index_rank"),
    outputs=O1,
    optional=("index_dim", "index_rank"),
)
def gather_int32(index, table, index_dim=None, index_rank=None, *, padding="NA"):
    """Generalised table lookup (module doc) of an int32 table."""
    return (gather(index, table, index_dim, index_rank, padding, "Gather_int32").astype(np.int32),)


@hexop(
    "Gather_8",
    ("index", "table", "table_min", "table_max", "index_dim", "index_rank"),
    optional=("index_dim", "index_rank"),
)
def gather_8(index, table, tmin, tmax, index_dim=None, index_rank=None, *, padding="NA"):
    """Generalised table lookup (module doc) of quint8 codes; range copied."""
    out = gather(index, table, index_dim, index_rank, padding, "Gather_8").astype(np.uint8)
    return out, scalar(fval(tmin)), scalar(fval(tmax))


def table_rows(index, table, structure, strategy, padding, op):
    """Ids mapped onto rows of the concatenated partitions, then gathered."""
    if structure is None:
        return gather(index, table, None, None, padding, op)
    sizes = ilist(structure)
    tab = as4d(table)
    d = len(tab.shape) - len(_strip(tab.shape))
    d = min(d, 3)
    total = tab.shape[d]
    if sum(sizes) != total or min(sizes) < 0:
        raise MDFError(
            f"hexagon::{op}: table structure {sizes} must add up to the table's {total} rows"
        )
    p = len(sizes)
    s = 0 if strategy is None else ival(strategy)
    ids = as4d(index).astype(np.int64)
    if s == 0:
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        part, row = ids % p, ids // p
        if np.any(row >= np.asarray(sizes)[part]) or np.any(ids < 0):
            if padding_code(padding) == 1:
                raise MDFError(f"hexagon::{op}: an id is beyond its partition")
        rows = offsets[part] + np.minimum(row, np.asarray(sizes)[part] - 1)
    elif s == 1:
        rows = ids
    else:
        raise MDFError(f"hexagon::{op}: partition strategy must be 0 (mod) or 1 (div), got {s}")
    return gather(rows, tab, d, None, padding, op)


@hexop(
    "Table_f",
    ("index", "table", "structure", "strategy"),
    outputs=O1,
    optional=("structure", "strategy"),
)
def table_f(index, table, structure=None, strategy=None, *, padding="NA"):
    """Partitioned table lookup of a float table (module doc)."""
    return (table_rows(index, table, structure, strategy, padding, "Table_f").astype(F32),)


@hexop(
    "Table_int32",
    ("index", "table", "structure", "strategy"),
    outputs=O1,
    optional=("structure", "strategy"),
)
def table_int32(index, table, structure=None, strategy=None, *, padding="NA"):
    """Partitioned table lookup of an int32 table (module doc)."""
    return (table_rows(index, table, structure, strategy, padding, "Table_int32").astype(np.int32),)


@hexop(
    "Table_8",
    ("index", "table", "table_min", "table_max", "structure", "strategy"),
    optional=("structure", "strategy"),
)
def table_8(index, table, tmin, tmax, structure=None, strategy=None, *, padding="NA"):
    """Partitioned table lookup of quint8 codes; range copied from the table."""
    out = table_rows(index, table, structure, strategy, padding, "Table_8").astype(np.uint8)
    return out, scalar(fval(tmin)), scalar(fval(tmax))


@hexop(
    "QuantizedHashtableLookup_8",
    ("lookups", "keys", "values", "values_min", "values_max"),
    outputs=("output", "output_min", "output_max", "hits", "hits_min", "hits_max"),
)
def hashtable_lookup_8(lookups, keys, values, vmin, vmax, *, padding="NA"):
    """Row j of the output is the values row whose key equals lookups[j] (hit 1), or the zero
    code (value 0.0) where no key matches (hit 0). Hits are quint8 with range [0, 255], so a
    code is its value."""
    look = np.asarray(lookups).reshape(-1).astype(np.int64)
    k = np.asarray(keys).reshape(-1).astype(np.int64)
    vals = as4d(values)
    if vals.shape[0] != k.size:
        raise MDFError(
            f"hexagon::QuantizedHashtableLookup_8: {k.size} keys but values has "
            f"{vals.shape[0]} rows (values are [k,h,w,d])"
        )
    where = {int(key): i for i, key in enumerate(k)}
    out = np.full((look.size,) + vals.shape[1:], zero_code(fval(vmin), fval(vmax)), np.uint8)
    hits = np.zeros((1, 1, 1, look.size), np.uint8)
    for j, key in enumerate(look):
        i = where.get(int(key))
        if i is not None:
            out[j] = vals[i]
            hits[0, 0, 0, j] = 1
    return out, scalar(fval(vmin)), scalar(fval(vmax)), hits, scalar(0.0), scalar(255.0)


def fnv1a64(data: bytes) -> int:
    """64-bit FNV-1a hash of bytes (the op list does not name LSHProjection's hash)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _sign_bit(seed: float, items: list[bytes], weights: np.ndarray) -> int:
    """1 if the weighted sum over items of hash(seed, item) (as a signed int64, scaled to
    float) is positive."""
    s = struct.pack("<f", seed)
    total = 0.0
    for w, item in zip(weights, items):
        h = fnv1a64(s + item)
        total += float(w) * float(h - (1 << 64) if h >= (1 << 63) else h)
    return 1 if total > 0 else 0


@hexop("LSHProjection", ("hash", "input", "weight", "type"), outputs=O1)
def lsh_projection(hash_fns, data, weight, kind, *, padding="NA"):
    """Locality-sensitive hashing projection. Items are the rows of the input (its first dim
    > 1; each row's raw bytes); bit j of hash function i is the sign of the weighted sum of
    FNV-1a hashes of (seed[i, j] bytes + item bytes). type 2 (dense) outputs every bit
    ([1,1,1,x*y]); types 1 and 3 (sparse) output per function the bits as a number, type 3
    offset by i * 2**y ([1,1,1,x])."""
    h = as4d(hash_fns, F32)
    x, y = h.shape[2], h.shape[3]
    t = ival(kind)
    if t not in (1, 2, 3):
        raise MDFError(f"hexagon::LSHProjection: type must be 1, 2 or 3, got {t}")
    if t != 2 and y > 32:
        raise MDFError(f"hexagon::LSHProjection: sparse projection needs <= 32 bits, got {y}")
    a = np.ascontiguousarray(as4d(data))
    shape = _strip(a.shape) or (1,)
    n = shape[0]
    rows = a.reshape(n, -1)
    items = [rows[i].tobytes() for i in range(n)]
    w = np.asarray(weight, np.float64).reshape(-1)
    if w.size == 1:
        w = np.full(n, w[0])
    if w.size != n:
        raise MDFError(f"hexagon::LSHProjection: {w.size} weights for {n} input items")
    seeds = h.reshape(x, y)
    bits = np.array(
        [[_sign_bit(float(seeds[i, j]), items, w) for j in range(y)] for i in range(x)],
        dtype=np.int32,
    )
    if t == 2:
        return (bits.reshape(1, 1, 1, x * y),)
    val = (bits << np.arange(y, dtype=np.int64)[::-1]).sum(axis=1).astype(np.int64)
    if t == 3:
        val = val + np.arange(x, dtype=np.int64) * (1 << y)
    return (val.astype(np.int32).reshape(1, 1, 1, x),)
