"""``onnx::`` shape operators: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Tile, Expand,
Shape, Size and Identity -- ops that relabel the dims of a tensor or repeat it.

These ops only move or relabel data, so they are numpy calls rather than Numba loops (numpy's
copy/stride machinery is already optimal for them). Reshape, Flatten, Squeeze, Unsqueeze,
Transpose and Identity return numpy *views* of their input where numpy can (no copy); kernels
never write into their inputs, and neither may a caller write into these outputs. Expand returns
a fresh array (not a read-only broadcast view).

Opset versions: Squeeze/Unsqueeze take ``axes`` as an attribute before 13 and as an input from
13; Reshape gains ``allowzero`` at 14; Shape gains ``start``/``end`` at 15. The early forms of
Reshape, Flatten, Squeeze and Unsqueeze (attributes where these take inputs) are adapters in
``variants/legacy_shape.py``. Concat/Split, Slice, Pad, Cast/CastLike and
DepthToSpace/SpaceToDepth have modules of their own.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from . import _reshape_jit as J
from . import onnx_op
from ._axes import int_values, norm_axis

#: nopython twins told their result's shape (``jit_like``: see ``_shape_jit``)
LIKE = {"jit_like": True}

# ---------------------------------------------------------------- Reshape / Flatten


def _reshape(data: Any, shape: Any, allowzero: int) -> np.ndarray:
    x = np.asarray(data)
    target = int_values(shape)
    if not allowzero:
        for i, s in enumerate(target):
            if s == 0:
                if i >= x.ndim:
                    raise MDFError(f"Reshape: a 0 at position {i} has no input dim to copy")
                target[i] = x.shape[i]
    if target.count(-1) > 1:
        raise MDFError("Reshape: at most one dimension may be -1")
    try:
        return x.reshape(target)
    except ValueError as e:
        raise MDFError(f"Reshape: cannot reshape {x.shape} into {tuple(target)}") from e


#: Reshape's inputs and output
RESHAPE = {"inputs": ("data", "shape"), "outputs": ("reshaped",), **LIKE}


@onnx_op("Reshape", since=5, jit=J.reshape5_like_jit, **RESHAPE)
def reshape_v5(data, shape):
    """Reshape to ``shape`` (0 copies the input dim, -1 is inferred); a view when possible."""
    return (_reshape(data, shape, 0),)


@onnx_op("Reshape", attributes={"allowzero": 0}, since=14, jit=J.reshape_like_jit, **RESHAPE)
def reshape(data, shape, *, allowzero=0):
    """Reshape; with ``allowzero`` a 0 in ``shape`` means an empty dim, not a copied one."""
    return (_reshape(data, shape, allowzero),)


@onnx_op(
    "Flatten",
    inputs=("input",),
    attributes={"axis": 1},
    outputs=("output",),
    jit=J.flatten_like_jit,
    **LIKE,
)
def flatten(input, *, axis=1):
    """2-D view: dims before ``axis`` become the rows, the rest the columns."""
    x = np.asarray(input)
    ax = int(axis)
    if not -x.ndim <= ax <= x.ndim:
        raise MDFError(f"Flatten: axis {ax} is out of range [-{x.ndim}, {x.ndim}]")
    ax = ax + x.ndim if ax < 0 else ax
    rows = math.prod(x.shape[:ax])
    cols = math.prod(x.shape[ax:])
    return (x.reshape(rows, cols),)


# ---------------------------------------------------------------- Squeeze / Unsqueeze


def _squeeze(data: Any, axes: Any) -> np.ndarray:
    x = np.asarray(data)
    if axes is None or np.size(axes) == 0:
        return x.reshape([s for s in x.shape if s != 1])
    ax = sorted({norm_axis(a, x.ndim, "Squeeze") for a in int_values(axes)})
    bad = [a for a in ax if x.shape[a] != 1]
    if bad:
        raise MDFError(f"Squeeze: axis {bad[0]} has length {x.shape[bad[0]]}, not 1")
    return x.reshape([s for i, s in enumerate(x.shape) if i not in ax])


#: Squeeze's and Unsqueeze's fields (``axes`` an attribute before opset 13, an input from 13)
SQUEEZE = {"outputs": ("squeezed",), "jit": J.squeeze_like_jit, **LIKE}
UNSQUEEZE = {"outputs": ("expanded",), "jit": J.unsqueeze_like_jit, **LIKE}


@onnx_op("Squeeze", inputs=("data",), attributes={"axes": None}, since=11, **SQUEEZE)
def squeeze_v11(data, *, axes=None):
    """Remove the length-1 dims in ``axes`` (attribute; all length-1 dims when absent)."""
    return (_squeeze(data, axes),)


@onnx_op("Squeeze", inputs=("data", "axes"), optional=("axes",), since=13, **SQUEEZE)
def squeeze(data, axes=None):
    """Remove the length-1 dims in ``axes`` (input; all length-1 dims when absent)."""
    return (_squeeze(data, axes),)


def _unsqueeze(data: Any, axes: Any) -> np.ndarray:
    x = np.asarray(data)
    ax = int_values(axes)
    r = x.ndim + len(ax)
    norm = sorted({norm_axis(a, r, "Unsqueeze") for a in ax})
    if len(norm) != len(ax):
        raise MDFError(f"Unsqueeze: repeated axes in {ax}")
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return x.reshape(shape)


@onnx_op("Unsqueeze", inputs=("data",), attributes={"axes": None}, **UNSQUEEZE)
def unsqueeze_v1(data, *, axes=None):
    """Insert length-1 dims at ``axes`` (attribute, positions in the output)."""
    return (_unsqueeze(data, axes),)


@onnx_op("Unsqueeze", inputs=("data", "axes"), since=13, **UNSQUEEZE)
def unsqueeze(data, axes):
    """Insert length-1 dims at ``axes`` (input, positions in the output)."""
    return (_unsqueeze(data, axes),)


# ---------------------------------------------------------------- Transpose / Concat


@onnx_op(
    "Transpose",
    inputs=("data",),
    attributes={"perm": None},
    outputs=("transposed",),
    jit=J.transpose_like_jit,
    **LIKE,
)
def transpose(data, *, perm=None):
    """Permute the dims (reverse them when ``perm`` is absent); a strided view."""
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    if perm is None or len(perm) == 0:
        return (x.T,)
    p = int_values(perm)
    if len(p) != x.ndim or len(set(p)) != x.ndim or min(p) < 0 or max(p) >= x.ndim:
        raise MDFError(f"Transpose: perm {p} is not a permutation of 0..{x.ndim - 1}")
    return (np.transpose(x, p),)


# ---------------------------------------------------------------- Tile / Expand


#: Tile's and Expand's output
OUTPUT = {"outputs": ("output",), **LIKE}


@onnx_op("Tile", inputs=("input", "repeats"), since=6, jit=J.tile_like_jit, **OUTPUT)
def tile(input, repeats):
    """Repeat the input ``repeats[i]`` times along each dim i."""
    x = np.asarray(input)
    r = int_values(repeats)
    if len(r) != x.ndim:
        raise MDFError(f"Tile: repeats has {len(r)} entries for a tensor of rank {x.ndim}")
    check_elements([x.size, *r], "Tile")
    return (np.tile(x, r),)


@onnx_op("Expand", inputs=("input", "shape"), since=8, jit=J.expand_like_jit, **OUTPUT)
def expand(input, shape):
    """Broadcast the input against ``shape`` (both ways: the result may exceed ``shape``)."""
    x = input if isinstance(input, np.ndarray) else np.asarray(input)
    want = int_values(shape)
    r = max(len(want), x.ndim)
    a = (1,) * (r - x.ndim) + x.shape
    w = [1] * (r - len(want)) + want
    target = []
    for da, dw in zip(a, w):
        if da != dw and da != 1 and dw != 1:
            raise MDFError(f"Expand: {x.shape} cannot broadcast with {tuple(want)}")
        target.append(da if dw == 1 else dw)
    check_elements(target, "Expand")
    out = np.empty(target, dtype=x.dtype)
    out[...] = x
    return (out,)


# ---------------------------------------------------------------- Shape / Size / Identity


@onnx_op("Shape", inputs=("data",), outputs=("shape",), jit=J.shape_jit)
def shape_v1(data):
    """The input's shape as a 1-D int64 tensor."""
    return (np.array(np.shape(data), dtype=np.int64),)


@onnx_op(
    "Shape",
    inputs=("data",),
    attributes={"start": 0, "end": None},
    outputs=("shape",),
    since=15,
    jit=J.shape15_jit,
)
def shape(data, *, start=0, end=None):
    """The dims ``start:end`` of the input's shape (clamped; negative from the end), int64."""
    s = np.shape(data)
    r = len(s)
    b = int(start)
    b = min(max(b + r if b < 0 else b, 0), r)
    e = r if end is None else int(end)
    e = min(max(e + r if e < 0 else e, 0), r)
    return (np.array(s[b:e], dtype=np.int64),)


@onnx_op("Size", inputs=("data",), outputs=("size",), jit=J.size_jit)
def size(data):
    """The number of elements, as a 0-d int64 tensor."""
    return (np.array(np.size(data), dtype=np.int64),)


@numba.njit(cache=True)
def identity_jit(input):
    """nopython Identity (returns its argument)."""
    return input


@onnx_op("Identity", inputs=("input",), outputs=("output",), jit=identity_jit)
def identity(input):
    """The input itself (no copy); sequences and optionals pass through unchanged."""
    return (input,)
