"""Nopython twins of DepthToSpace and SpaceToDepth (modes DCR and CRD) for the compiled
backend: the Python kernels' reshape-transpose-reshape as one strided copy
(:func:`._shape_jit.copy_view`), so the values are theirs bit for bit; the result's template
comes last (``jit_like``, see :mod:`._shape_jit`). Bad arguments raise ``ValueError`` where the
Python kernels raise ``MDFError``."""

from __future__ import annotations

import numba
import numpy as np

from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, c_strides, check_like, copy_view


@numba.njit(cache=True)
def _crd(mode, op):
    """Whether ``mode`` is CRD (else DCR); anything else raises."""
    if mode == "DCR":
        return False
    if mode == "CRD":
        return True
    raise ValueError(op + ": mode must be DCR or CRD")


@numba.njit(cache=True)
def _nchw(input, blocksize, op):
    xd = _dims(input)
    if len(xd) != 4:
        raise ValueError(op + ": input must be 4-D (N, C, H, W)")
    return xd, np.int64(blocksize)


@numba.njit(cache=True)
def _depth_to_space(input, blocksize, crd, like):
    xd, b = _nchw(input, blocksize, "DepthToSpace")
    n, c, h, w = xd[0], xd[1], xd[2], xd[3]
    if c % (b * b):
        raise ValueError("DepthToSpace: the channels are not divisible by blocksize^2")
    cc = c // (b * b)
    # the input as 6-D, then its axes in the order of the result's (n, cc, h, b, w, b)
    if crd:
        st = c_strides(np.array([n, cc, b, b, h, w]))
        order = np.array([0, 1, 4, 2, 5, 3])
    else:
        st = c_strides(np.array([n, b, b, cc, h, w]))
        order = np.array([0, 3, 4, 1, 5, 2])
    vshape = np.array([n, cc, h, b, w, b])
    check_like(np.array([n, cc, h * b, w * b]), like, "DepthToSpace: " + SHAPE_CHANGED)
    return copy_view(input, 0, vshape, st[order], like)


@numba.njit(cache=True)
def _space_to_depth(input, blocksize, crd, like):
    xd, b = _nchw(input, blocksize, "SpaceToDepth")
    n, c, h, w = xd[0], xd[1], xd[2], xd[3]
    if h % b or w % b:
        raise ValueError("SpaceToDepth: H and W must be multiples of blocksize")
    st = c_strides(np.array([n, c, h // b, b, w // b, b]))
    order = np.array([0, 1, 3, 5, 2, 4]) if crd else np.array([0, 3, 5, 1, 2, 4])
    vshape = np.empty(6, np.int64)
    dims6 = np.array([n, c, h // b, b, w // b, b])
    for i in range(6):
        vshape[i] = dims6[order[i]]
    check_like(np.array([n, c * b * b, h // b, w // b]), like, "SpaceToDepth: " + SHAPE_CHANGED)
    return copy_view(input, 0, vshape, st[order], like)


@numba.njit(cache=True)
def depthtospace1_like_jit(input, blocksize, like):
    """DepthToSpace (opset 1): DCR."""
    return _depth_to_space(input, blocksize, False, like)


@numba.njit(cache=True)
def depthtospace_like_jit(input, blocksize, mode, like):
    """DepthToSpace (opset 11): ``mode`` DCR or CRD."""
    return _depth_to_space(input, blocksize, _crd(mode, "DepthToSpace"), like)


@numba.njit(cache=True)
def spacetodepth1_like_jit(input, blocksize, like):
    """SpaceToDepth (opset 1): DCR."""
    return _space_to_depth(input, blocksize, False, like)


@numba.njit(cache=True)
def spacetodepth_like_jit(input, blocksize, mode, like):
    """SpaceToDepth (opset 28): ``mode`` DCR or CRD."""
    return _space_to_depth(input, blocksize, _crd(mode, "SpaceToDepth"), like)
