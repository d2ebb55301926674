"""Hexagon data movement and graph I/O: INPUT/OUTPUT/Nop/Const, Flatten/Reshape (float and
quantized), Shape_int32, Transpose_8, QuantizedSlice_8, QuantizedPad_8, QuantizedConcat_8 and
ArgMax_8toInt32. Pure data-movement ops return numpy views/copies; quantized ones copy the input
range, except concat (union of the input ranges, inputs on another range re-quantized).

Control values (shape, perm, start/size, pads) are int32 tensors applied to the last n of the
dims b,h,w,d and left-padded (Reshape pads with 1s, Slice with full slices); the pads tensor
[1,1,n,2] gives (before, after) for the first n dims.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    adjust_range,
    as4d,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
    scalar,
    step_u8,
)


@hexop("INPUT", ("inputs",), outputs=("outputs",), variadic=True)
def input_op(*tensors, padding="NA"):
    """The tensors given to execute, passed on unchanged (one output per input)."""
    return tuple(tensors)


@hexop("OUTPUT", ("inputs",), outputs=(), variadic=True)
def output_op(*tensors, padding="NA"):
    """The graph's results: returns its inputs (what execute returns)."""
    return tuple(tensors)


@hexop("Nop", ("inputs",), outputs=("outputs",), variadic=True)
def nop(*tensors, padding="NA"):
    """Copies input i to output i."""
    return tuple(np.array(t, copy=True) for t in tensors)


@hexop("Const", (), outputs=("output",), value=None)
def const(*, value=None, padding="NA"):
    """Constant data (attribute ``value``) as a 4-D tensor."""
    if value is None:
        raise MDFError("hexagon::Const needs attribute 'value' (the constant data)")
    return (as4d(np.array(value)),)


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


@hexop("Shape_int32", ("input",), outputs=("output",))
def shape_int32(x, *, padding="NA"):
    """The 4-D shape {b,h,w,d} as int32 [1,1,1,4]."""
    return (np.array(as4d(x).shape, dtype=np.int32).reshape(1, 1, 1, 4),)


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


@hexop("QuantizedSlice_8", ("input", "start", "size", "input_min", "input_max"))
def quantized_slice_8(q, start, size, q_min, q_max, *, padding="NA"):
    """Slice from start with size (-1 = to the end), left-padded with full slices; range copied."""
    a = as4d(q)
    st, sz = ilist(start), ilist(size)
    if len(st) != len(sz) or len(st) > 4:
        raise MDFError(f"QuantizedSlice_8: start {st} and size {sz} must have the same length <= 4")
    st = [0] * (4 - len(st)) + st
    sz = [-1] * (4 - len(sz)) + sz
    idx = []
    for d, (s, n) in enumerate(zip(st, sz)):
        n = a.shape[d] - s if n == -1 else n
        if s < 0 or n < 0 or s + n > a.shape[d]:
            raise MDFError(f"QuantizedSlice_8: slice [{s}, {s + n}) out of dim {d} of size "
                           f"{a.shape[d]}")
        idx.append(slice(s, s + n))
    return np.ascontiguousarray(a[tuple(idx)]), scalar(q_min), scalar(q_max)


@hexop("QuantizedPad_8", ("input", "input_min", "input_max", "paddings", "pad_value",
                          "pad_code"), optional=("pad_value", "pad_code"))
def quantized_pad_8(q, q_min, q_max, pads, pad_value=None, pad_code=None, *, padding="NA"):
    """Pad with the quantized pad value (default 0.0; ±inf -> code 0/255; a value quantizing to
    -2..257 is clipped, one further out is an error); range copied. ``pad_code`` (input 5, int32)
    if given is used as the code directly [judgement]."""
    a = as4d(q).astype(np.uint8)
    mn, mx = fval(q_min), fval(q_max)
    p = np.asarray(pads).astype(np.int64).reshape(-1, 2)
    if p.shape[0] > 4 or np.any(p < 0):
        raise MDFError(f"QuantizedPad_8: pads must be [1,1,n,2] with n <= 4 and >= 0, got {p}")
    width = [tuple(r) for r in p] + [(0, 0)] * (4 - p.shape[0])
    if pad_code is not None:
        code = ival(pad_code)
        if not 0 <= code <= 255:
            raise MDFError(f"QuantizedPad_8: supplied pad code must be 0..255, got {code}")
    else:
        v = 0.0 if pad_value is None else float(fval(pad_value))
        if np.isinf(v):
            code = 0 if v < 0 else 255
        else:
            r = (F32(v) - F32(mn)) / step_u8(mn, mx)
            code = int(np.sign(r) * np.floor(abs(r) + 0.5))
            if not -2 <= code <= 257:
                raise MDFError(f"QuantizedPad_8: pad value {v} is too far outside the range "
                               f"[{mn}, {mx}] (code {code}, allowed -2..257)")
            code = min(255, max(0, code))
    return q8_triple(np.pad(a, width, constant_values=np.uint8(code)), mn, mx)


def concat_q8(axis: int, tensors, mins, maxs):
    """Concatenate quint8 tensors along axis in the union of their ranges (adjusted)."""
    if not tensors or not (len(tensors) == len(mins) == len(maxs)):
        raise MDFError("QuantizedConcat_8 needs axis, n data, n mins, n maxes (3n+1 inputs)")
    lo = min(fval(m) for m in mins)
    hi = max(fval(m) for m in maxs)
    mn, mx = adjust_range(lo, hi)
    parts = []
    for t, m, M in zip(tensors, mins, maxs):
        a = as4d(t).astype(np.uint8)
        if fval(m) == mn and fval(M) == mx:
            parts.append(a)
        else:
            parts.append(quantize_u8(dequantize_u8(a, fval(m), fval(M)), mn, mx))
    try:
        out = np.concatenate(parts, axis=axis)
    except ValueError as e:
        raise MDFError(f"QuantizedConcat_8: inputs do not fit along axis {axis}: {e}") from None
    return q8_triple(out, mn, mx)


def _split3(rest):
    if len(rest) % 3:
        raise MDFError(f"quantized concat needs 3n+1 inputs (axis, n data, n min, n max), "
                       f"got {len(rest) + 1}")
    n = len(rest) // 3
    return rest[:n], rest[n:2 * n], rest[2 * n:]


@hexop("QuantizedConcat_8", ("axis", "inputs"), variadic=True)
def quantized_concat_8(axis, *rest, padding="NA"):
    """Concatenation along depth (axis 3, the only one the document supports)."""
    ax = ival(axis)
    if ax not in (3, -1):
        raise MDFError(f"QuantizedConcat_8 only supports axis 3 (depth), got {ax}")
    return concat_q8(3, *_split3(rest))


@hexop("ArgMax_8toInt32", ("input", "axis", "input_min", "input_max"), outputs=("output",))
def argmax_8_to_int32(q, axis, q_min, q_max, *, padding="NA"):
    """Index of the largest code along axis (0..3 = b,h,w,d; negative counts from the end),
    the axis kept with size 1; first index on ties."""
    a = as4d(q)
    ax = ival(axis)
    if not -4 <= ax <= 3:
        raise MDFError(f"ArgMax_8toInt32: axis must be in -4..3, got {ax}")
    return (np.argmax(a, axis=ax % 4, keepdims=True).astype(np.int32),)
