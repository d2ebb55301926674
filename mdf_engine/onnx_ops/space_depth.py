"""``onnx::`` DepthToSpace and SpaceToDepth: move blocks of channels into spatial blocks of a
4-D (N, C, H, W) tensor, and back.

The channel order within a block is ``DCR`` (depth-column-row, the default) or ``CRD``;
DepthToSpace gains ``mode`` at opset 11, SpaceToDepth at 28. Both are numpy reshapes and
transposes (the result is a copy).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import _jita_space as J
from . import onnx_op

#: the nopython twins take the result's template (``jit_like``: ``_jita_space``)
LIKE = {"outputs": ("output",), "jit_like": True}


def _depth_to_space(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    if x.ndim != 4:
        raise MDFError(f"DepthToSpace: input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    if c % (b * b):
        raise MDFError(f"DepthToSpace: channels {c} not divisible by blocksize^2 = {b * b}")
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise MDFError(f"DepthToSpace: mode must be DCR or CRD, got '{mode}'")
    return t.reshape(n, c // (b * b), h * b, w * b)


@onnx_op(
    "DepthToSpace",
    inputs=("input",),
    attributes={"blocksize": None},
    jit=J.depthtospace1_like_jit,
    **LIKE,
)
def depthtospace_v1(input, *, blocksize=None):
    """Move blocks of channels into spatial blocks (DCR order)."""
    if blocksize is None:
        raise MDFError("DepthToSpace needs the attribute 'blocksize'")
    return (_depth_to_space(np.asarray(input), int(blocksize), "DCR"),)


@onnx_op(
    "DepthToSpace",
    inputs=("input",),
    attributes={"blocksize": None, "mode": "DCR"},
    since=11,
    jit=J.depthtospace_like_jit,
    **LIKE,
)
def depthtospace(input, *, blocksize=None, mode="DCR"):
    """Move blocks of channels into spatial blocks, ``mode`` DCR (default) or CRD."""
    if blocksize is None:
        raise MDFError("DepthToSpace needs the attribute 'blocksize'")
    return (_depth_to_space(np.asarray(input), int(blocksize), str(mode)),)


def _space_to_depth(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    if x.ndim != 4:
        raise MDFError(f"SpaceToDepth: input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    if h % b or w % b:
        raise MDFError(f"SpaceToDepth: H={h} and W={w} must be multiples of blocksize {b}")
    t = x.reshape(n, c, h // b, b, w // b, b)
    if mode == "DCR":
        t = t.transpose(0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        t = t.transpose(0, 1, 3, 5, 2, 4)
    else:
        raise MDFError(f"SpaceToDepth: mode must be DCR or CRD, got '{mode}'")
    return t.reshape(n, c * b * b, h // b, w // b)


@onnx_op(
    "SpaceToDepth",
    inputs=("input",),
    attributes={"blocksize": None},
    jit=J.spacetodepth1_like_jit,
    **LIKE,
)
def spacetodepth_v1(input, *, blocksize=None):
    """Move spatial blocks of ``blocksize`` x ``blocksize`` into channels (DCR order)."""
    if blocksize is None:
        raise MDFError("SpaceToDepth needs the attribute 'blocksize'")
    return (_space_to_depth(np.asarray(input), int(blocksize), "DCR"),)


@onnx_op(
    "SpaceToDepth",
    inputs=("input",),
    attributes={"blocksize": None, "mode": "DCR"},
    since=28,
    jit=J.spacetodepth_like_jit,
    **LIKE,
)
def spacetodepth(input, *, blocksize=None, mode="DCR"):
    """SpaceToDepth with the channel order ``mode`` (DCR or CRD; opset 28)."""
    if blocksize is None:
        raise MDFError("SpaceToDepth needs the attribute 'blocksize'")
    return (_space_to_depth(np.asarray(input), int(blocksize), str(mode)),)
