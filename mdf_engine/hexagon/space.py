"""Hexagon space/depth/batch rearrangements: SpaceToDepth / DepthToSpace (TF semantics, block
scalar or [bh, bw]; DepthToSpace takes optional crops [top, bottom, left, right]) for float,
quint8 and 16-bit codes, and SpaceToBatchND / BatchToSpaceND (block [bh] or [bh, bw], pads/crops
[t,b] or [[t,b],[l,r]]; the quint8 form pads with the zero code). Quantized forms copy the range.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    as4d,
    codes,
    fval,
    ilist,
    q8_triple,
    scalar,
    zero_code,
)


def _block(block) -> tuple[int, int]:
    b = ilist(block)
    if len(b) not in (1, 2) or min(b) < 1:
        raise MDFError(f"block size must be a scalar or [bh, bw] >= 1, got {b}")
    return (b[0], b[0]) if len(b) == 1 else (b[0], b[1])


def space_to_depth(a: np.ndarray, block) -> np.ndarray:
    bh, bw = _block(block)
    n, h, w, d = a.shape
    if h % bh or w % bw:
        raise MDFError(f"SpaceToDepth: height {h} and width {w} must be multiples of {bh}, {bw}")
    return (
        a.reshape(n, h // bh, bh, w // bw, bw, d)
        .transpose(0, 1, 3, 2, 4, 5)
        .reshape(n, h // bh, w // bw, bh * bw * d)
    )


def depth_to_space(a: np.ndarray, block, crops=None) -> np.ndarray:
    bh, bw = _block(block)
    n, h, w, d = a.shape
    if d % (bh * bw):
        raise MDFError(f"DepthToSpace: depth {d} must be a multiple of {bh * bw}")
    out = (
        a.reshape(n, h, w, bh, bw, d // (bh * bw))
        .transpose(0, 1, 3, 2, 4, 5)
        .reshape(n, h * bh, w * bw, d // (bh * bw))
    )
    if crops is not None:
        t, b, l, r = ilist(crops)
        if min(t, b, l, r) < 0 or t + b >= out.shape[1] or l + r >= out.shape[2]:
            raise MDFError(f"DepthToSpace: crops {[t, b, l, r]} must be >= 0 and leave data")
        out = out[:, t : out.shape[1] - b, l : out.shape[2] - r]
    return np.ascontiguousarray(out)


@hexop("SpaceToDepth_f", ("input", "block_size"), outputs=("output",))
def space_to_depth_f(x, block, *, padding="NA"):
    """[b,h,w,d] -> [b,h/bh,w/bw,bh*bw*d] (TF space_to_depth)."""
    return (space_to_depth(as4d(x, F32), block),)


@hexop("SpaceToDepth_8", ("input", "block_size", "input_min", "input_max"))
def space_to_depth_8(q, block, q_min, q_max, *, padding="NA"):
    """SpaceToDepth of quint8 data; range copied."""
    return q8_triple(space_to_depth(codes(q), block), fval(q_min), fval(q_max))


@hexop("SpaceToDepth_16", ("input", "block_size", "input_min", "input_max"))
def space_to_depth_16(q, block, q_min, q_max, *, padding="NA"):
    """SpaceToDepth of 8/16-bit codes, dtype kept; range copied."""
    return space_to_depth(as4d(q), block), scalar(q_min), scalar(q_max)


@hexop("DepthToSpace_f", ("input", "block_size", "crops"), outputs=("output",), optional=("crops",))
def depth_to_space_f(x, block, crops=None, *, padding="NA"):
    """[b,h,w,d] -> [b,h*bh,w*bw,d/(bh*bw)], then the optional crops [top,bottom,left,right]."""
    return (depth_to_space(as4d(x, F32), block, crops),)


@hexop(
    "DepthToSpace_8",
    ("input", "block_size", "input_min", "input_max", "crops"),
    optional=("crops",),
)
def depth_to_space_8(q, block, q_min, q_max, crops=None, *, padding="NA"):
    """DepthToSpace of quint8 data; range copied."""
    return q8_triple(depth_to_space(codes(q), block, crops), fval(q_min), fval(q_max))


@hexop(
    "DepthToSpace_16",
    ("input", "block_size", "input_min", "input_max", "crops"),
    optional=("crops",),
)
def depth_to_space_16(q, block, q_min, q_max, crops=None, *, padding="NA"):
    """DepthToSpace of 8/16-bit codes, dtype kept; range copied."""
    return depth_to_space(as4d(q), block, crops), scalar(q_min), scalar(q_max)


def _block_hw(block) -> tuple[int, int]:
    b = ilist(block)
    if len(b) not in (1, 2) or min(b) < 1:
        raise MDFError(f"block must be blocksizeH or [blocksizeH, blocksizeW] >= 1, got {b}")
    return (b[0], 1) if len(b) == 1 else (b[0], b[1])


def _tblr(p) -> tuple[int, int, int, int]:
    v = ilist(p)
    if len(v) == 2:
        v = v + [0, 0]
    if len(v) != 4 or min(v) < 0:
        raise MDFError(f"pads/crops must be [t,b] or [[t,b],[l,r]] of values >= 0, got {v}")
    return tuple(v)


def space_to_batch(a: np.ndarray, block, pads, fill=0) -> np.ndarray:
    bh, bw = _block_hw(block)
    t, b, l, r = _tblr(pads)
    a = np.pad(a, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=fill)
    n, h, w, d = a.shape
    if h % bh or w % bw:
        raise MDFError(f"SpaceToBatchND: padded size {h}x{w} must be a multiple of {bh}x{bw}")
    return (
        a.reshape(n, h // bh, bh, w // bw, bw, d)
        .transpose(2, 4, 0, 1, 3, 5)
        .reshape(bh * bw * n, h // bh, w // bw, d)
    )


def batch_to_space(a: np.ndarray, block, crops) -> np.ndarray:
    bh, bw = _block_hw(block)
    t, b, l, r = _tblr(crops)
    n, h, w, d = a.shape
    if n % (bh * bw):
        raise MDFError(f"BatchToSpaceND: batches {n} must be a multiple of {bh * bw}")
    out = (
        a.reshape(bh, bw, n // (bh * bw), h, w, d)
        .transpose(2, 3, 0, 4, 1, 5)
        .reshape(n // (bh * bw), h * bh, w * bw, d)
    )
    if t + b >= out.shape[1] or l + r >= out.shape[2]:
        raise MDFError("BatchToSpaceND: crops leave an empty result")
    return np.ascontiguousarray(out[:, t : out.shape[1] - b, l : out.shape[2] - r])


@hexop("SpaceToBatchND_f", ("input", "block", "paddings"), outputs=("output",))
def space_to_batch_nd_f(x, block, pads, *, padding="NA"):
    """Zero-pad h, w then move bh x bw blocks into the batch dimension."""
    return (space_to_batch(as4d(x, F32), block, pads),)


@hexop("BatchToSpaceND_f", ("input", "block", "crops"), outputs=("output",))
def batch_to_space_nd_f(x, block, crops, *, padding="NA"):
    """The inverse of SpaceToBatchND, then crop."""
    return (batch_to_space(as4d(x, F32), block, crops),)


@hexop("SpaceToBatchND_8", ("input", "block", "paddings", "input_min", "input_max"))
def space_to_batch_nd_8(q, block, pads, q_min, q_max, *, padding="NA"):
    """SpaceToBatchND of quint8 data, padding with the zero code; range copied."""
    z = zero_code(fval(q_min), fval(q_max))
    return q8_triple(space_to_batch(codes(q), block, pads, z), fval(q_min), fval(q_max))


@hexop("BatchToSpaceND_8", ("input", "block", "crops", "input_min", "input_max"))
def batch_to_space_nd_8(q, block, crops, q_min, q_max, *, padding="NA"):
    """BatchToSpaceND of quint8 data; range copied."""
    return q8_triple(batch_to_space(codes(q), block, crops), fval(q_min), fval(q_max))
