"""Hexagon image resizing: ResizeBilinear_f and QuantizedResizeBilinear_8 (TF resize_bilinear source
mapping, align_corners optional; the quantized form copies the range) and ResizeNearestNeighbor_8
(TF resize_nearest_neighbor; range copied).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    O1,
    as4d,
    codes,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
)


def bilinear(x: np.ndarray, dims, align_corners=None) -> np.ndarray:
    """Bilinear resize of float data [b,h,w,d] to dims (h_out, w_out), TF source mapping."""
    hw = ilist(dims)
    if len(hw) != 2 or min(hw) < 1:
        raise MDFError(f"resize dims must be [1,1,1,2] = (h_out, w_out) >= 1, got {hw}")
    ac = bool(align_corners is not None and fval(align_corners) != 0)
    for axis, n_out in ((1, hw[0]), (2, hw[1])):
        n_in = x.shape[axis]
        scale = (n_in - 1) / (n_out - 1) if ac and n_out > 1 else n_in / n_out
        src = np.arange(n_out) * scale
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        f = (src - i0).reshape([-1 if k == axis else 1 for k in range(4)])
        x = np.take(x, i0, axis=axis) * (1 - f) + np.take(x, i1, axis=axis) * f
    return x


@hexop(
    "QuantizedResizeBilinear_8",
    ("input", "new_dims", "input_min", "input_max", "align_corners"),
    optional=("align_corners",),
)
def quantized_resize_bilinear_8(q, dims, q_min, q_max, align_corners=None, *, padding="NA"):
    """Bilinear resize to (h_out, w_out), TF resize_bilinear source mapping; range copied."""
    mn, mx = fval(q_min), fval(q_max)
    x = bilinear(dequantize_u8(as4d(q), mn, mx).astype(np.float64), dims, align_corners)
    return q8_triple(quantize_u8(x.astype(F32), mn, mx), mn, mx)


@hexop(
    "ResizeBilinear_f",
    ("input", "new_dims", "align_corners"),
    outputs=O1,
    optional=("align_corners",),
)
def resize_bilinear_f(x, dims, align_corners=None, *, padding="NA"):
    """Bilinear resize to (h_out, w_out), TF source mapping."""
    return (bilinear(as4d(x, np.float64), dims, align_corners).astype(F32),)


@hexop(
    "ResizeNearestNeighbor_8",
    ("input", "new_dims", "input_min", "input_max", "align_corners"),
    optional=("align_corners",),
)
def resize_nearest_neighbor_8(q, dims, q_min, q_max, align_corners=None, *, padding="NA"):
    """tf.resize_nearest_neighbor: source = min(floor(dst*scale) (round if align_corners),
    size-1), scale = in/out or (in-1)/(out-1) with align_corners; range copied."""
    a = codes(q)
    hw = ilist(dims)
    if len(hw) != 2 or min(hw) < 1:
        raise MDFError(f"resize dims must be (h_out, w_out) >= 1, got {hw}")
    ac = align_corners is not None and ival(align_corners) != 0
    for axis, n_out in ((1, hw[0]), (2, hw[1])):
        n_in = a.shape[axis]
        scale = (n_in - 1) / (n_out - 1) if ac and n_out > 1 else n_in / n_out
        src = np.arange(n_out) * scale
        src = np.floor(src + 0.5) if ac else np.floor(src)
        a = np.take(a, np.minimum(src.astype(np.int64), n_in - 1), axis=axis)
    return q8_triple(a, fval(q_min), fval(q_max))
