"""``onnx::OneHot``: a new axis of length ``depth`` holding ``values[1]`` at each index and
``values[0]`` elsewhere (negative indices count from the end; indices outside ``[-depth, depth)``
give an all-off row).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from . import onnx_op
from ._index_common import flat_view
from ._jita_onehot import onehot_core, onehot_like_jit


@onnx_op(
    "OneHot",
    inputs=("indices", "depth", "values"),
    attributes={"axis": -1},
    outputs=("output",),
    since=9,
    jit=onehot_like_jit,
    jit_like=True,
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
    check_elements(outer * d * inner, "OneHot's result")
    idx = flat_view(ind)
    idx = np.trunc(idx).astype(np.int64) if idx.dtype.kind == "f" else idx.astype(np.int64)
    if vals.dtype.kind in "biuf":
        out = np.empty(outer * d * inner, dtype=vals.dtype)
        onehot_core(idx, outer, d, inner, vals[0], vals[1], out)
    else:  # strings, or dtypes Numba does not know: build a mask, then select
        mask = onehot_core(idx, outer, d, inner, 0, 1, np.empty(outer * d * inner, np.uint8))
        out = np.where(mask.astype(bool), vals[1], vals[0]).astype(vals.dtype)
    return (out.reshape(ind.shape[:a] + (d,) + ind.shape[a:]),)
