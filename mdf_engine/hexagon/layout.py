"""Hexagon layout moves that keep every value: Flatten/Reshape (float and quantized; a shape
[1,1,1,n] left-padded with 1s, -1 inferred), transposes (perm over the last n of b,h,w,d; _8 and
_16 move codes of any width), AxisShuffle / QuantizedChannelShuffle_8 ([..,g*n,..] ->
[..,n*g,..]), concatenation (Concat_f/ConcatV2_f/_int32 along an axis; QuantizedConcat_8 along
depth in the union of the input ranges, inputs on another range re-quantized), Pack (same-shape
inputs appended along the rightmost size-1 dim, as the document describes), QuantizedTile_8,
Split (``num_outputs`` equal parts, a tuple) and ExpandDims (``output_shape``): the count / shape
the hexagon node carries is an attribute here. Quantized moves copy the input range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    O1,
    adjust_range,
    as4d,
    codes,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
    scalar,
)


def _flat(x) -> np.ndarray:
    a = as4d(x)
    return a.reshape(1, 1, 1, a.size)


def _new_shape(x: np.ndarray, shape) -> tuple[int, ...]:
    dims = ilist(shape)
    if not 1 <= len(dims) <= 4:
        raise MDFError(f"reshape: the shape must have 1..4 values, got {dims}")
    dims = [1] * (4 - len(dims)) + dims
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise MDFError(f"reshape: at most one dim may be -1 and none other negative, got {dims}")
    known = int(np.prod([d for d in dims if d != -1]))
    if -1 in dims:
        if known == 0 or x.size % known:
            raise MDFError(f"reshape: {x.size} elements do not fit shape {dims}")
        dims[dims.index(-1)] = x.size // known
    if int(np.prod(dims)) != x.size:
        raise MDFError(f"reshape: {x.size} elements cannot take shape {dims}")
    return tuple(dims)


@hexop("Flatten", ("input",), outputs=("output",))
def flatten(x, *, padding="NA"):
    """[b,h,w,d] -> [1,1,1,b*h*w*d] (a view)."""
    return (_flat(x),)


@hexop("QuantizedFlatten", ("input", "input_min", "input_max"))
def quantized_flatten(q, q_min, q_max, *, padding="NA"):
    """Flatten of a quantized tensor; range copied."""
    return _flat(q), scalar(q_min), scalar(q_max)


@hexop("Reshape", ("input", "shape"), outputs=("output",))
def reshape(x, shape, *, padding="NA"):
    """Reshape to 1..4 dims left-padded with 1s, at most one -1 (a view)."""
    a = as4d(x)
    return (a.reshape(_new_shape(a, shape)),)


@hexop("QuantizedReshape", ("input", "shape", "input_min", "input_max"))
def quantized_reshape(q, shape, q_min, q_max, *, padding="NA"):
    """Reshape of quint8 or qint32 data; range copied."""
    a = as4d(q)
    return a.reshape(_new_shape(a, shape)), scalar(q_min), scalar(q_max)


def _transpose(x, perm) -> np.ndarray:
    a = as4d(x)
    p = ilist(perm)
    n = len(p)
    if not 1 <= n <= 4 or sorted(p) != list(range(n)):
        raise MDFError(f"transpose: perm must be a permutation of 0..n-1 (n <= 4), got {p}")
    return np.ascontiguousarray(a.transpose(list(range(4 - n)) + [4 - n + v for v in p]))


@hexop("Transpose_f", ("input", "perm"), outputs=O1)
def transpose_f(x, perm, *, padding="NA"):
    """Transpose by perm applied to the last n dims."""
    return (_transpose(as4d(x, F32), perm),)


@hexop("Transpose_int32", ("input", "perm"), outputs=O1)
def transpose_int32(x, perm, *, padding="NA"):
    """Transpose by perm applied to the last n dims."""
    return (_transpose(as4d(x, np.int32), perm),)


@hexop("Transpose_8", ("input", "perm", "input_min", "input_max"))
def transpose_8(q, perm, q_min, q_max, *, padding="NA"):
    """Transpose by perm (2..4 values, applied to the last n dims); range copied."""
    a = as4d(q)
    p = ilist(perm)
    n = len(p)
    if not 1 <= n <= 4 or sorted(p) != list(range(n)):
        raise MDFError(f"Transpose_8: perm must be a permutation of 0..n-1 (n <= 4), got {p}")
    full = list(range(4 - n)) + [4 - n + v for v in p]
    return np.ascontiguousarray(a.transpose(full)), scalar(q_min), scalar(q_max)


@hexop("Transpose_16", ("input", "perm", "input_min", "input_max"))
def transpose_16(q, perm, q_min, q_max, *, padding="NA"):
    """Transpose of 8/16-bit codes (qu8, qu16, qi16), dtype kept; range copied."""
    return _transpose(as4d(q), perm), scalar(q_min), scalar(q_max)


def axis_shuffle(a: np.ndarray, axis: int, groups: int) -> np.ndarray:
    ax = axis % 4 if -4 <= axis <= 3 else None
    if ax is None:
        raise MDFError(f"axis shuffle: axis must be in -4..3, got {axis}")
    n = a.shape[ax]
    if groups < 1 or n % groups:
        raise MDFError(f"axis shuffle: {groups} groups do not divide dim of size {n}")
    shp = a.shape[:ax] + (groups, n // groups) + a.shape[ax + 1 :]
    return np.ascontiguousarray(np.swapaxes(a.reshape(shp), ax, ax + 1).reshape(a.shape))


for _name, _dt, _q in (
    ("AxisShuffle_8", np.uint8, True),
    ("AxisShuffle_16", None, True),
    ("AxisShuffle_f", F32, False),
    ("AxisShuffle_int32", np.int32, False),
):

    def _as_kernel(x, axis, groups, *rng, padding="NA", _dt=_dt, _q=_q):
        out = axis_shuffle(as4d(x, _dt), ival(axis), ival(groups))
        return (out, scalar(rng[0]), scalar(rng[1])) if _q else (out,)

    _as_kernel.__doc__ = (
        "[..,a*b,..] -> [..,a,b,..] -> swap -> [..,b*a,..] along axis "
        "(a = groups)" + ("; range copied." if _q else ".")
    )
    hexop(
        _name,
        ("input", "axis", "groups") + (("input_min", "input_max") if _q else ()),
        outputs=("output", "output_min", "output_max") if _q else ("output",),
    )(_as_kernel)


@hexop("QuantizedChannelShuffle_8", ("groups", "input", "input_min", "input_max"))
def quantized_channel_shuffle_8(groups, q, q_min, q_max, *, padding="NA"):
    """Channel shuffle of the depth: [.., g*n] -> [.., g, n] -> [.., n, g]; range copied."""
    return q8_triple(axis_shuffle(codes(q), 3, ival(groups)), fval(q_min), fval(q_max))


def _concat(axis, xs, dtype):
    ax = ival(axis)
    if not 0 <= ax <= 3:
        raise MDFError(f"concat axis must be 0..3 (b,h,w,d), got {ax}")
    try:
        return (np.concatenate([as4d(x, dtype) for x in xs], axis=ax),)
    except ValueError as e:
        raise MDFError(f"concat: inputs do not fit along axis {ax}: {e}") from None


@hexop("Concat_f", ("axis", "inputs"), outputs=O1, variadic=True)
def concat_f(axis, *xs, padding="NA"):
    """Concatenate float tensors along axis (input 0)."""
    return _concat(axis, xs, F32)


@hexop("ConcatV2_f", ("inputs",), outputs=O1, variadic=True)
def concat_v2_f(*args, padding="NA"):
    """Concatenate float tensors along axis (the last input)."""
    return _concat(args[-1], args[:-1], F32)


@hexop("ConcatV2_int32", ("inputs",), outputs=O1, variadic=True)
def concat_v2_int32(*args, padding="NA"):
    """Concatenate int32 tensors along axis (the last input)."""
    return _concat(args[-1], args[:-1], np.int32)


def concat_q8(axis: int, tensors, mins, maxs):
    """Concatenate quint8 tensors along axis in the union of their ranges (adjusted)."""
    if not tensors or not (len(tensors) == len(mins) == len(maxs)):
        raise MDFError("QuantizedConcat_8 needs axis, n data, n mins, n maxes (3n+1 inputs)")
    lo = min(fval(m) for m in mins)
    hi = max(fval(m) for m in maxs)
    mn, mx = adjust_range(lo, hi)
    parts = []
    for t, m, M in zip(tensors, mins, maxs):
        a = codes(t)
        if fval(m) == mn and fval(M) == mx:
            parts.append(a)
        else:
            parts.append(quantize_u8(dequantize_u8(a, fval(m), fval(M)), mn, mx))
    try:
        out = np.concatenate(parts, axis=axis)
    except ValueError as e:
        raise MDFError(f"QuantizedConcat_8: inputs do not fit along axis {axis}: {e}") from None
    return q8_triple(out, mn, mx)


def split_triples(rest):
    """Concat inputs ``x1..xn, min1..minn, max1..maxn`` as three lists (n each)."""
    if len(rest) % 3:
        raise MDFError(
            f"quantized concat needs 3n+1 inputs (axis, n data, n min, n max), got {len(rest) + 1}"
        )
    n = len(rest) // 3
    return rest[:n], rest[n : 2 * n], rest[2 * n :]


@hexop("QuantizedConcat_8", ("axis", "inputs"), variadic=True)
def quantized_concat_8(axis, *rest, padding="NA"):
    """Concatenation along depth (axis 3, the only one the document supports)."""
    ax = ival(axis)
    if ax not in (3, -1):
        raise MDFError(f"QuantizedConcat_8 only supports axis 3 (depth), got {ax}")
    return concat_q8(3, *split_triples(rest))


def pack(xs, dtype) -> np.ndarray:
    if not xs:
        raise MDFError("Pack needs at least one input")
    arrs = [as4d(x, dtype) for x in xs]
    shape = arrs[0].shape
    if any(a.shape != shape for a in arrs):
        raise MDFError(f"Pack inputs must have the same shape, got {[a.shape for a in arrs]}")
    ones = [i for i, n in enumerate(shape) if n == 1]
    if not ones:
        raise MDFError(f"Pack needs a dimension of size 1 to stack along, shape is {shape}")
    out = list(shape)
    out[ones[-1]] = len(arrs)
    return np.concatenate([a.reshape(-1) for a in arrs]).reshape(out)


@hexop("Pack_f", ("inputs",), outputs=("output",), variadic=True)
def pack_f(*xs, padding="NA"):
    """Stack same-shape float tensors along the rightmost size-1 dim (memory append)."""
    return (pack(xs, F32),)


@hexop("Pack_int32", ("inputs",), outputs=("output",), variadic=True)
def pack_int32(*xs, padding="NA"):
    """Stack same-shape int32 tensors along the rightmost size-1 dim (memory append)."""
    return (pack(xs, np.int32),)


@hexop("QuantizedTile_8", ("input", "multiples", "input_min", "input_max"))
def quantized_tile_8(q, multiples, q_min, q_max, *, padding="NA"):
    """Replicate along each dim by the multiples (left-filled with 1s); range copied."""
    m = ilist(multiples)
    if len(m) > 4 or any(v < 1 for v in m):
        raise MDFError(f"QuantizedTile_8: multiples must be <= 4 values >= 1, got {m}")
    return q8_triple(np.tile(codes(q), [1] * (4 - len(m)) + m), fval(q_min), fval(q_max))


def split_parts(op: str, dim: Any, x: Any, n: Any) -> tuple[np.ndarray, ...]:
    """The N equal parts of x along dimension ``dim`` (0..3 = b,h,w,d)."""
    a = as4d(x)
    d = ival(dim)
    if not 0 <= d <= 3:
        raise MDFError(f"hexagon::{op}: split dimension must be 0..3 (b,h,w,d), got {d}")
    if n is None:
        raise MDFError(f"hexagon::{op} needs attribute 'num_outputs' (how many parts)")
    k = int(n)
    if k < 1 or a.shape[d] % k:
        raise MDFError(
            f"hexagon::{op}: dimension {d} of size {a.shape[d]} does not split into {k} equal parts"
        )
    return tuple(np.ascontiguousarray(p) for p in np.split(a, k, axis=d))


@hexop("Split_f", ("dim", "input"), outputs=("outputs",), num_outputs=None)
def split_f(dim, x, *, num_outputs=None, padding="NA"):
    """N equal float parts along ``dim``."""
    return tuple(p.astype(F32) for p in split_parts("Split_f", dim, x, num_outputs))


@hexop("Split_int32", ("dim", "input"), outputs=("outputs",), num_outputs=None)
def split_int32(dim, x, *, num_outputs=None, padding="NA"):
    """N equal int32 parts along ``dim``."""
    return tuple(p.astype(np.int32) for p in split_parts("Split_int32", dim, x, num_outputs))


@hexop(
    "QuantizedSplit_8",
    ("dim", "input", "input_min", "input_max"),
    outputs=("outputs", "output_min", "output_max"),
    num_outputs=None,
)
def quantized_split_8(dim, x, mn, mx, *, num_outputs=None, padding="NA"):
    """N equal quint8 parts along ``dim``, then the input range (copied)."""
    parts = split_parts("QuantizedSplit_8", dim, x, num_outputs)
    return parts + (scalar(fval(mn)), scalar(fval(mx)))


def expand_dims(op: str, x: Any, shape: Any) -> np.ndarray:
    a = as4d(x)
    if shape is None:
        raise MDFError(f"hexagon::{op} needs attribute 'output_shape' (the node's output shape)")
    dims = ilist(shape)
    if len(dims) > 4 or any(v < 0 for v in dims):
        raise MDFError(f"hexagon::{op}: output_shape must be up to 4 sizes >= 0, got {dims}")
    if int(np.prod(dims)) != a.size:
        raise MDFError(
            f"hexagon::{op}: output_shape {dims} holds {int(np.prod(dims))} elements, "
            f"the input {a.size}"
        )
    return a.reshape([1] * (4 - len(dims)) + dims)


@hexop("ExpandDims_f", ("input",), outputs=("output",), output_shape=None)
def expand_dims_f(x, *, output_shape=None, padding="NA"):
    """The input reshaped to the declared ``output_shape``."""
    return (expand_dims("ExpandDims_f", x, output_shape).astype(F32),)


@hexop("ExpandDims_int32", ("input",), outputs=("output",), output_shape=None)
def expand_dims_int32(x, *, output_shape=None, padding="NA"):
    """The input reshaped to the declared ``output_shape``."""
    return (expand_dims("ExpandDims_int32", x, output_shape).astype(np.int32),)
