"""A Conv followed by a Relu, computed in one pass (issue 22, goal 5: onnxruntime fuses them).

:func:`prepare_conv_relu` binds a Conv whose weights and bias are constants, as
:func:`~.conv.prepare_conv` does for the interpreter's fast path, into ``run(X) -> (Y, R)``:
``Y`` the Conv's own value (the node's value stays readable) and ``R`` the engine's ONNX Relu
of ``Y``, bit for bit (the Relu node's value). The vector-tile kernels (convolutions by shifted
slices and 1x1 ones, :mod:`._conv_threads`) write ``R`` beside ``Y`` while each block of values
is still in cache, shared with worker threads like the Conv alone; the other kernels (direct
accumulation, im2col) compute ``Y`` as the Conv alone does and then the Relu kernel on it. The
plan stage decides when a Conv's only reader is a Relu (helper interp's ``plan/fusion.py``);
nothing here changes the graph.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..errors import MDFError
from ._blas import blas_threads_for
from ._conv_threads import conv_pointwise_shared, conv_shift_shared, conv_threads
from ._recycle import Recycler
from .activations import relu
from .conv import (
    _GEOMETRY_ATTRS,
    _conv_geometry,
    bias_vector,
    calls_blas,
    conv,
    conv3d_g,
    conv_direct_g,
    geometry_key,
)


def _relu_into(y: np.ndarray, relu_out: np.ndarray | None) -> np.ndarray:
    """The engine's Relu of ``y``, in ``relu_out`` when given (of y's shape and dtype)."""
    r = relu(y)[0]
    if relu_out is None:
        return r
    if relu_out.shape != r.shape or relu_out.dtype != r.dtype:
        raise ValueError(f"Conv: relu_out should be a {r.dtype} array of {r.shape}")
    relu_out[...] = r
    return relu_out


def prepare_conv_relu(consts: list[tuple[bool, Any]], attrs: dict[str, Any]):
    """A Conv and the Relu of its output bound once: ``consts`` is ``(known, value)`` per input
    X, W, B and ``attrs`` the Conv's attributes (as for :func:`~.conv.prepare_conv`). Returns
    ``run(X, W=None, B=None, *, relu_out=None) -> (Y, R)``, or None when W or B is not a known
    float array. ``R`` is ``relu_out`` when given: an array of Y's shape and dtype (on the tile
    kernels, C-contiguous: a Concat's part along its first axis longer than one qualifies)
    that the Relu is written into."""
    w_known, W = consts[1]
    b_known, B = consts[2] if len(consts) > 2 else (True, None)
    if not (w_known and b_known) or not isinstance(W, np.ndarray) or W.dtype.kind != "f":
        return None
    key = geometry_key(*(attrs[k] for k in _GEOMETRY_ATTRS))
    try:
        hash(key)
    except TypeError:
        return None
    memo: dict[tuple, tuple] = {}
    # the values and Relus of the tile kernels, handed out again once nothing refers to them
    ys, rs = Recycler(), Recycler()

    def run(
        X: Any, W_: Any = None, B_: Any = None, *, relu_out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if type(X) is not np.ndarray or X.dtype.kind != "f" or X.dtype.itemsize < 4:
            y = conv(X, W, B, **attrs)[0]
            return y, _relu_into(y, relu_out)
        plan = memo.get((X.shape, X.dtype))
        if plan is None:
            group, g, method, shape5, out_shape = _conv_geometry(X, W, key, "Conv")
            M = out_shape[1]
            w2 = np.ascontiguousarray(W, dtype=X.dtype).reshape(M, -1)
            bias = bias_vector(B, M, X.dtype, "Conv")
            pixels = math.prod(out_shape[2:])
            macs = shape5[0] * M * w2.shape[1] * pixels
            blas = calls_blas(method, group, M, w2.shape[1], pixels, B is not None)
            # the kernel's own output shape: (N, M, od, oh, ow), or (N, M, pixels) for a 1x1
            inner = (M, *(int(v) for v in g[12:15])) if method == "shift" else (M, pixels)
            yshape = (shape5[0], *inner)
            plan = (g, method, shape5, out_shape, w2, bias, macs, blas, yshape)
            memo[(X.shape, X.dtype)] = plan
        g, method, shape5, out_shape, w2, bias, macs, blas, yshape = plan
        X = np.ascontiguousarray(X)
        if method in ("shift", "pointwise"):
            r = rs.empty(out_shape, X.dtype) if relu_out is None else relu_out
            if r.shape != out_shape:
                raise ValueError(f"Conv: relu_out should be an array of {out_shape}")
            n = conv_threads(macs)
            y = ys.empty(yshape, X.dtype)
            if method == "shift":
                y = conv_shift_shared(X.reshape(shape5), w2, bias, g, n, r, y)
            else:
                x3 = X.reshape(shape5[0], shape5[1], -1)
                y = conv_pointwise_shared(x3, w2, bias, B is not None, n, r, y)
            return y.reshape(out_shape), r
        if method == "direct":
            y = conv_direct_g(X.reshape(shape5), w2, bias, g)
        else:
            try:
                with blas_threads_for(macs) if blas else nullcontext():
                    y = conv3d_g(X.reshape(shape5), w2, bias, B is not None, g)
            except RuntimeError as e:  # BLAS unavailable (Numba's helper loads scipy's)
                raise MDFError(f"Conv: {e}; the BLAS product needs scipy installed") from e
        y = y.reshape(out_shape)
        return y, _relu_into(y, relu_out)

    return run
