"""``onnx::ConvTranspose``: the transposed convolution (the gradient of Conv with respect to its
input), 1-3 spatial dims, with groups, dilations, strides, pads / auto_pad, ``output_padding``
and ``output_shape``.

The kernel does the reverse of Conv's: a product of the transposed filters with the input (BLAS,
or :func:`~._im2col.gemm_small` for few input channels), then a col2im scatter-add. The plan of a
call (geometry, views, output shape) is memoized per shapes and attributes, like Conv's.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from ._blas import blas_threads_for
from ._im2col import U, gemm_small, tap_range, use_gemm_small
from ._spatial import (
    auto_pad_name,
    float_kind,
    geometry_array,
    hashable,
    ints,
    lift3,
    unpack_geometry,
)
from .conv import CONV_ATTRS, bias_vector


@numba.njit(cache=True)
def convtranspose3d(x, wt, bias, group, k, s, d, pb, o):
    """Grouped 3-D transposed convolution. ``x`` (N, C, D, H, W); ``wt`` (group, Mg*prod(k), Cg)
    transposed filters; output (N, M, o0, o1, o2), output cell ``t`` taking full-result cell
    ``t + pb`` (``pb`` may be negative). One product per image and group (BLAS, or
    :func:`gemm_small` for few input channels) gives every (filter, tap) row over the input
    cells; col2im then adds each row segment into the
    output over the input columns whose target lies inside it (flat arrays, unsigned offsets:
    see :func:`im2col_rows`)."""
    N, C = x.shape[0], x.shape[1]
    D, H, W = x.shape[2], x.shape[3], x.shape[4]
    mg = wt.shape[1] // (k[0] * k[1] * k[2])
    cg = C // group
    M = mg * group
    P = D * H * W
    out = np.empty((N, M, o[0], o[1], o[2]), dtype=x.dtype)
    of = out.reshape(-1)
    plane = o[0] * o[1] * o[2]
    for n in range(N):
        for m in range(M):
            bm = bias[m]
            ob = (n * M + m) * plane
            for t in range(plane):
                of[U(ob + t)] = bm
    lo = np.empty(k[2], dtype=np.int64)
    hi = np.empty(k[2], dtype=np.int64)
    for e in range(k[2]):
        lo[e], hi[e] = tap_range(W, e * d[2] - pb[2], s[2], o[2])
    cols = np.empty((wt.shape[1], P), dtype=x.dtype)
    for n in range(N):
        for g in range(group):
            xin = x[n, g * cg : (g + 1) * cg].reshape((cg, P))
            if use_gemm_small(wt.shape[1], cg, P):
                gemm_small(wt[g], xin, cols, 0, 0)
            else:
                cols = np.dot(wt[g], xin)
            cf = cols.reshape(-1)
            row = 0
            for m in range(mg):
                ob = (n * M + g * mg + m) * plane
                for a in range(k[0]):
                    for b in range(k[1]):
                        for e in range(k[2]):
                            base = e * d[2] - pb[2]
                            n_in = hi[e] - lo[e]
                            for i in range(D):
                                zi = i * s[0] + a * d[0] - pb[0]
                                if zi < 0 or zi >= o[0]:
                                    continue
                                for j in range(H):
                                    yj = j * s[1] + b * d[1] - pb[1]
                                    if yj < 0 or yj >= o[1]:
                                        continue
                                    src = row * P + (i * H + j) * W + lo[e]
                                    dst = ob + (zi * o[1] + yj) * o[2] + lo[e] * s[2] + base
                                    if s[2] == 1:
                                        for t in range(n_in):
                                            of[U(dst + t)] += cf[U(src + t)]
                                    else:
                                        for t in range(n_in):
                                            of[U(dst + t * s[2])] += cf[U(src + t)]
                            row += 1
    return out


@onnx_op(
    "ConvTranspose",
    inputs=("X", "W", "B"),
    optional=("B",),
    since=1,
    attributes={**CONV_ATTRS, "output_padding": None, "output_shape": None},
)
def conv_transpose(
    X: Any,
    W: Any,
    B: Any = None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    output_padding=None,
    output_shape=None,
    pads=None,
    strides=None,
) -> tuple[np.ndarray]:
    """Transposed convolution (the gradient of Conv with respect to its input)."""
    X = as_array(X)
    dt = X.dtype
    X = float_kind(X)
    W = np.ascontiguousarray(W, dtype=X.dtype)
    key = (
        X.shape,
        W.shape,
        auto_pad,
        hashable(dilations),
        group,
        hashable(kernel_shape),
        hashable(output_padding),
        hashable(output_shape),
        hashable(pads),
        hashable(strides),
    )
    try:
        g, shape5, w3_shape, out_shape = _convt_plan(*key)
    except TypeError:  # an attribute given as an array cannot be a memo key
        g, shape5, w3_shape, out_shape = _convt_plan.__wrapped__(*key)
    bias = bias_vector(B, out_shape[1], X.dtype, "ConvTranspose")
    with blas_threads_for(W.size * math.prod(X.shape[2:]) * X.shape[0]):
        y = convtranspose3d_g(X.reshape(shape5), W.reshape(w3_shape), bias, g)
    y = y.reshape(out_shape)
    return (y if y.dtype == dt else y.astype(dt),)


@functools.lru_cache(maxsize=256)
def _convt_plan(
    xshape,
    wshape,
    auto_pad,
    dilations,
    group,
    kernel_shape,
    output_padding,
    output_shape,
    pads,
    strides,
) -> tuple:
    """``(geometry, shape5, w3_shape, out_shape)`` of a ConvTranspose: the geometry array
    (kernel, strides, dilations, pads at the beginning, output shape, each lifted to 3-D,
    then the group; see ``_spatial.geometry_array``), X's 5-D view, W's view as (group,
    C/group, M/group * prod(kernel)) and the output's shape. Memoized like Conv's."""
    op = "ConvTranspose"
    if len(xshape) < 3 or len(xshape) > 5 or len(wshape) != len(xshape):
        raise MDFError(
            f"{op}: expected X (N, C, D1..Dk) and W of the same rank (k = 1..3), "
            f"got X {tuple(xshape)} and W {tuple(wshape)}"
        )
    nsp = len(xshape) - 2
    group = int(group)
    kernel = ints(kernel_shape, nsp, 0, "kernel_shape", op)
    if kernel_shape is None or len(kernel_shape) == 0:
        kernel = tuple(int(v) for v in wshape[2:])
    s = ints(strides, nsp, 1, "strides", op)
    d = ints(dilations, nsp, 1, "dilations", op)
    C = xshape[1]
    if group < 1 or C % group or wshape[0] != C:
        raise MDFError(f"{op}: W should have shape (C={C}, M/group, k...), got {tuple(wshape)}")
    mg = wshape[1]
    M = mg * group
    opad = ints(output_padding, nsp, 0, "output_padding", op)
    mode = auto_pad_name(auto_pad)
    pads_t = ints(pads, 2 * nsp, 0, "pads", op)
    ins = xshape[2:]
    full = [s[i] * (ins[i] - 1) + opad[i] + (kernel[i] - 1) * d[i] + 1 for i in range(nsp)]
    if output_shape is not None and len(output_shape) > 0:
        want = [int(v) for v in output_shape][-nsp:]
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        want = [ins[i] * s[i] for i in range(nsp)]
    else:
        want = None
    if want is not None:
        pb = []
        for i in range(nsp):
            total = full[i] - want[i]
            half = total // 2
            pb.append(half if mode == "SAME_UPPER" else total - half)
        out_sp = tuple(want)
    else:
        pb = [0 if mode == "VALID" else pads_t[i] for i in range(nsp)]
        pe = [0 if mode == "VALID" else pads_t[nsp + i] for i in range(nsp)]
        out_sp = tuple(full[i] - pb[i] - pe[i] for i in range(nsp))
    if min(out_sp) < 1:
        raise MDFError(f"{op}: the output shape {out_sp} is empty")
    if tuple(wshape[2:]) != tuple(kernel):
        raise MDFError(
            f"{op}: kernel_shape {list(kernel)} differs from W's spatial shape {list(wshape[2:])}"
        )
    geo = (lift3(kernel, 1), lift3(s, 1), lift3(d, 1), lift3(tuple(pb), 0), lift3(out_sp, 1))
    shape5 = tuple(xshape[:2]) + (1,) * (5 - len(xshape)) + tuple(ins)
    w3_shape = (group, C // group, mg * math.prod(kernel))
    return geometry_array(geo, group), shape5, w3_shape, (xshape[0], M) + out_sp


@numba.njit(cache=True)
def convtranspose3d_g(x, w3, bias, g):
    """:func:`convtranspose3d` with the geometry array of :func:`_convt_plan` and the filters
    ``w3`` (group, C/group, M/group * prod(kernel)), transposed here."""
    G, cg, R = w3.shape
    wt = np.empty((G, R, cg), dtype=w3.dtype)
    for a in range(G):
        for c in range(cg):
            for r in range(R):
                wt[a, r, c] = w3[a, c, r]
    k, s, d, pb, o = unpack_geometry(g)
    return convtranspose3d(x, wt, bias, g[15], k, s, d, pb, o)
