"""Nopython twins of Reshape, Squeeze, Unsqueeze, Flatten, Expand, Tile, Transpose, Concat,
Shape, Size, ConstantOfShape, Cast and CastLike (the ``jit_like`` convention and the helpers:
:mod:`._shape_jit`). Each checks its arguments as its Python kernel does, with the same
messages, and raises ``ValueError`` where that one raises ``MDFError``."""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ._common import ONNX_DTYPES
from ._shape_jit import (
    _dims,
    _flat,
    _ints,
    _shaped,
    c_strides,
    check_like,
    copy_view,
    norm_axis,
    prod,
)

SHAPE_CHANGED = "the result's shape is not the compiled backend's warm-up's"


@numba.njit(cache=True)
def reshape_like_jit(data, shape, allowzero, like):
    """Reshape (opset 14; ``allowzero`` 0 for opset 5's)."""
    xd = _dims(data)
    tgt = _ints(shape).copy()
    infer = -1
    known = 1
    for i in range(len(tgt)):
        if tgt[i] == 0 and allowzero == 0:
            if i >= len(xd):
                raise ValueError("Reshape: a 0 in shape has no input dim to copy")
            tgt[i] = xd[i]
        if tgt[i] == -1:
            if infer >= 0:
                raise ValueError("Reshape: at most one dimension may be -1")
            infer = i
        elif tgt[i] < 0:
            raise ValueError("Reshape: cannot reshape into a negative dimension")
        else:
            known *= tgt[i]
    size = prod(xd)
    if infer >= 0:
        if known == 0 or size % known != 0:
            raise ValueError("Reshape: cannot reshape the input into that shape")
        tgt[infer] = size // known
    elif known != size:
        raise ValueError("Reshape: cannot reshape the input into that shape")
    check_like(tgt, like, "Reshape: " + SHAPE_CHANGED)
    return _shaped(_flat(data), like)


@numba.njit(cache=True)
def reshape5_like_jit(data, shape, like):
    """Reshape of opsets 5-13 (no ``allowzero``)."""
    return reshape_like_jit(data, shape, 0, like)


@numba.njit(cache=True)
def _axes_mask(ax, r, op, repeats):
    """The axes ``ax`` (negative from the end) marked in a mask of rank ``r``; an axis out of
    range raises, and a repeated one unless ``repeats``."""
    mask = np.zeros(r, np.bool_)
    for a in ax:
        k = norm_axis(a, r)
        if k < 0:
            raise ValueError(op + ": an axis is out of range")
        if mask[k] and not repeats:
            raise ValueError(op + ": repeated axes")
        mask[k] = True
    return mask


@numba.njit(cache=True)
def _relabelled(data, want, like, op):
    """``data``'s elements in ``like``'s shape, which must be ``want``."""
    check_like(want, like, op + ": " + SHAPE_CHANGED)
    return _shaped(_flat(data), like)


@numba.njit(cache=True)
def squeeze_like_jit(data, axes, like):
    """Squeeze (``axes`` an input from opset 13, an attribute before; None: every 1)."""
    xd = _dims(data)
    ax = _ints(axes)
    drop = _axes_mask(ax, len(xd), "Squeeze", True) if len(ax) else xd == 1
    for k in range(len(xd)):
        if drop[k] and xd[k] != 1:
            raise ValueError("Squeeze: an axis to squeeze has a length other than 1")
    return _relabelled(data, xd[~drop], like, "Squeeze")


@numba.njit(cache=True)
def unsqueeze_like_jit(data, axes, like):
    """Unsqueeze (``axes`` positions in the output)."""
    xd = _dims(data)
    ones = _axes_mask(_ints(axes), len(xd) + len(_ints(axes)), "Unsqueeze", False)
    want = np.ones(len(ones), np.int64)
    j = 0
    for i in range(len(ones)):
        if not ones[i]:
            want[i] = xd[j]
            j += 1
    return _relabelled(data, want, like, "Unsqueeze")


@numba.njit(cache=True)
def flatten_like_jit(input, axis, like):
    """Flatten with ``axis`` given as a value (its result is always 2-D)."""
    xd = _dims(input)
    nd = len(xd)
    ax = np.int64(axis)
    if ax < -nd or ax > nd:
        raise ValueError("Flatten: axis is out of range")
    if ax < 0:
        ax += nd
    want = np.ones(2, np.int64)
    for i in range(nd):
        want[0 if i < ax else 1] *= xd[i]
    check_like(want, like, "Flatten: " + SHAPE_CHANGED)
    return _shaped(_flat(input), like)


@numba.njit(cache=True)
def _broadcast_copy(data, reps, want, like, op):
    """``data`` broadcast (dims of 1 repeated) or tiled (``reps`` > 0) into ``want``."""
    xd = _dims(data)
    r = len(want)
    src_dims = np.ones(r, np.int64)
    src_dims[r - len(xd) :] = xd
    st = c_strides(src_dims)
    if reps:  # tile: axis d as (repeats, n) with strides (0, stride)
        vshape = np.empty(2 * r, np.int64)
        vstr = np.empty(2 * r, np.int64)
        for d in range(r):
            vshape[2 * d] = want[d] // max(src_dims[d], 1) if src_dims[d] else 0
            vshape[2 * d + 1] = src_dims[d]
            vstr[2 * d] = 0
            vstr[2 * d + 1] = st[d]
    else:
        vshape = want.copy()
        vstr = st.copy()
        for d in range(r):
            if src_dims[d] == 1 and want[d] != 1:
                vstr[d] = 0
    check_like(want, like, op)
    return copy_view(data, 0, vshape, vstr, like)


@numba.njit(cache=True)
def expand_like_jit(input, shape, like):
    """Expand: broadcast both ways against ``shape``."""
    xd = _dims(input)
    w = _ints(shape)
    r = max(len(w), len(xd))
    want = np.ones(r, np.int64)
    for d in range(r):
        da = xd[d - (r - len(xd))] if d >= r - len(xd) else 1
        dw = w[d - (r - len(w))] if d >= r - len(w) else 1
        if da != dw and da != 1 and dw != 1:
            raise ValueError("Expand: the input cannot broadcast with the shape")
        want[d] = da if dw == 1 else dw
    return _broadcast_copy(input, False, want, like, "Expand: " + SHAPE_CHANGED)


@numba.njit(cache=True)
def tile_like_jit(input, repeats, like):
    """Tile: ``repeats[i]`` copies along each dim i."""
    xd = _dims(input)
    rep = _ints(repeats)
    if len(rep) != len(xd):
        raise ValueError("Tile: repeats needs one entry per dim of the input")
    want = np.empty(len(xd), np.int64)
    for d in range(len(xd)):
        if rep[d] < 0:
            raise ValueError("Tile: a repeat is negative")
        want[d] = xd[d] * rep[d]
    return _broadcast_copy(input, True, want, like, "Tile: " + SHAPE_CHANGED)


def _permuted(data, perm, like):  # pragma: no cover - replaced by the overload
    """Transpose by a tuple (a view), None (reversed) or an array of ints (a copy)."""


@overload(_permuted)
def _permuted_ov(data, perm, like):
    if perm is None or isinstance(perm, (types.NoneType, types.Omitted)):

        def reversed_dims(data, perm, like):
            check_like(_dims(data)[::-1].copy(), like, "Transpose: " + SHAPE_CHANGED)
            return data.T

        return reversed_dims
    if isinstance(perm, types.BaseTuple):

        def by_tuple(data, perm, like):
            res = np.transpose(data, perm)
            check_like(_dims(res), like, "Transpose: " + SHAPE_CHANGED)
            return res

        return by_tuple
    if not isinstance(perm, types.Array):
        raise TypingError(f"Transpose: perm {perm}")

    def by_values(data, perm, like):
        xd = _dims(data)
        p = _ints(perm)
        nd = len(xd)
        seen = np.zeros(nd, np.bool_)
        if len(p) != nd:
            raise ValueError("Transpose: perm is not a permutation of the input's dims")
        for k in p:
            if k < 0 or k >= nd or seen[k]:
                raise ValueError("Transpose: perm is not a permutation of the input's dims")
            seen[k] = True
        st = c_strides(xd)
        want = np.empty(nd, np.int64)
        vstr = np.empty(nd, np.int64)
        for d in range(nd):
            want[d] = xd[p[d]]
            vstr[d] = st[p[d]]
        check_like(want, like, "Transpose: " + SHAPE_CHANGED)
        return copy_view(data, 0, want, vstr, like)

    return by_values


@numba.njit(cache=True)
def transpose_like_jit(data, perm, like):
    """Transpose: ``perm`` a constant tuple, None, or a value (an int array)."""
    return _permuted(data, perm, like)


@numba.njit(cache=True)
def concat_like_jit(*inputs_axis_like):
    """Concat with ``axis`` a value: the inputs, then ``axis``, then ``like``."""
    arrs = inputs_axis_like[:-2]
    ax = np.int64(inputs_axis_like[-2])
    nd = arrs[0].ndim
    if ax < -nd or ax >= nd:
        raise ValueError("Concat: axis is out of range")
    if ax < 0:
        ax += nd
    want = _dims(arrs[0])
    want[ax] = 0
    for a in arrs:
        want[ax] += a.shape[ax]
    check_like(want, inputs_axis_like[-1], "Concat: " + SHAPE_CHANGED)
    return np.concatenate(arrs, axis=ax)


@numba.njit(cache=True)
def shape_jit(data):
    """Shape (opsets 1-14): the dims as int64[:]."""
    return _dims(data)


@numba.njit(cache=True)
def shape15_jit(data, start, end):
    """Shape (opset 15): dims ``start:end``, clamped, negative from the end."""
    d = _dims(data)
    r = len(d)
    b = np.int64(start)
    b = min(max(b + r if b < 0 else b, 0), r)
    e = r if end is None else np.int64(end)
    e = min(max(e + r if e < 0 else e, 0), r)
    return d[b:e].copy() if e > b else np.empty(0, np.int64)


@numba.njit(cache=True)
def size_jit(data):
    """Size: the number of elements, an int64."""
    return prod(_dims(data))


@numba.njit(cache=True)
def constantofshape_like_jit(input, value, like):
    """ConstantOfShape: ``like``'s shape and dtype filled with ``value`` (None: 0)."""
    want = _ints(input)
    for s in want:
        if s < 0:
            raise ValueError("ConstantOfShape: dims must be >= 0")
    check_like(want, like, "ConstantOfShape: " + SHAPE_CHANGED)
    return _filled(value, like)


def _filled(value, like):  # pragma: no cover - replaced by the overload
    """``like``'s shape and dtype (a number's) holding ``value``'s one element (None: 0)."""


@overload(_filled)
def _filled_ov(value, like):
    none = value is None or isinstance(value, (types.NoneType, types.Omitted))
    if isinstance(like, (types.Number, types.Boolean)):
        if none:
            return lambda value, like: 0.0  # (float32's 0, held as a float64 number)
        return lambda value, like: _one(value)
    if none:
        return lambda value, like: np.zeros_like(like)

    def filled(value, like):
        out = np.empty_like(like)
        out[...] = _one(value)
        return out

    return filled


@numba.njit(cache=True)
def _one(value):
    v = _flat(value)
    if v.size != 1:
        raise ValueError("ConstantOfShape: value must have one element")
    return v[0]


def _onnx_code(like):  # pragma: no cover - replaced by the overload
    """The ONNX data type number of ``like``'s dtype."""


#: ONNX data type numbers by numpy dtype name (the inverse of ``ONNX_DTYPES``)
_CODES = {np.dtype(t).name: code for code, t in ONNX_DTYPES.items()}


def _given_code(to):  # pragma: no cover - replaced by the overload
    """``to`` as an ONNX data type number (-2 for a type name: not compiled)."""


@overload(_given_code)
def _given_code_ov(to):
    if isinstance(to, (types.Integer, types.Float)):
        return lambda to: np.int64(to)
    return lambda to: -2


@overload(_onnx_code)
def _onnx_code_ov(like):
    if isinstance(like, (types.Number, types.Boolean)):  # a number slot's: float64, int64, bool
        code = (
            9 if isinstance(like, types.Boolean) else 7 if isinstance(like, types.Integer) else 11
        )
    else:
        code = _CODES.get(str(like.dtype), -1)
    return lambda like: code


def _dtype_of(like):  # pragma: no cover - replaced by the overload
    """``like``'s dtype (a number's type)."""


@overload(_dtype_of)
def _dtype_of_ov(like):
    dt = like if isinstance(like, (types.Number, types.Boolean)) else like.dtype
    return lambda like: dt


def _convert(src, out):  # pragma: no cover - replaced by the overload
    """``out[:] = src`` with numpy's ``astype`` rules (nonzero -> True)."""


@overload(_convert)
def _convert_ov(src, out):
    if isinstance(out.dtype, types.Boolean):

        def to_bool(src, out):
            for i in range(src.size):
                out[i] = src[i] != 0

        return to_bool

    def plain(src, out):
        for i in range(src.size):
            out[i] = src[i]

    return plain


@numba.njit(cache=True)
def _cast_into(input, like):
    src = _flat(input)
    check_like(_dims(input), like, "Cast: " + SHAPE_CHANGED)
    out = np.empty(src.size, _dtype_of(like))
    _convert(src, out)
    return _shaped(out, like)


@numba.njit(cache=True)
def cast_like_jit(input, to, like):
    """Cast (opsets 6-18) to ``to``, an ONNX type number that must be ``like``'s dtype's."""
    return _cast_to(input, _given_code(to), like)


def _cast_to(input, code, like):  # pragma: no cover - replaced by the overload
    """``input`` cast to the ONNX type ``code``, which must be ``like``'s."""


@overload(_cast_to)
def _cast_to_ov(input, code, like):
    if isinstance(like, types.Float):

        def to_number(input, code, like):
            if code == 1:  # float32, held as a float64 number: round it so
                return np.float64(_cast_into(input, np.float32(0)))
            if code != 11:
                raise ValueError("Cast: the compiled backend holds this data type as another")
            return _cast_into(input, like)

        return to_number

    def to_like(input, code, like):
        if code != _onnx_code(like):
            raise ValueError("Cast: the compiled backend holds this data type as another")
        return _cast_into(input, like)

    return to_like


@numba.njit(cache=True)
def cast19_like_jit(input, to, saturate, like):
    """Cast (opset 19; ``saturate`` concerns float8 only)."""
    return cast_like_jit(input, to, like)


@numba.njit(cache=True)
def castlike_like_jit(input, target_type, like):
    """CastLike: to ``like``'s dtype (``target_type``'s, as the warm-up held it)."""
    return _cast_into(input, like)


@numba.njit(cache=True)
def castlike19_like_jit(input, target_type, saturate, like):
    """CastLike (opset 19)."""
    return _cast_into(input, like)
