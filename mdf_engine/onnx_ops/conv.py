"""Convolution operators: ``Conv``, ``ConvTranspose``, ``ConvInteger`` and ``QLinearConv``.

Every rank (1-D, 2-D, 3-D) is lifted to 3-D (see ``_spatial``). ``Conv`` has three kernels:
direct accumulation (depthwise-like groups and tiny problems), and im2col tiles that stay in
cache multiplied straight into their block of the output, by :func:`gemm_small` for thin
filters or small products (see :func:`use_gemm_small`) or by BLAS (Numba's gemm helper,
which can write into a strided block). A bias is an extra filter column over a row of ones.
``ConvTranspose`` does the reverse: a product of the transposed filters with the input (BLAS,
or :func:`gemm_small` for few input channels), then a col2im scatter-add. The kernels index
flat arrays with unsigned offsets (see :data:`U`). The integer convolutions subtract the zero
points and convolve exactly in float64 (products of 8-bit values summed in float64 are
exact), then round back to int32 / 8-bit.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np
from numba import types

from ..errors import MDFError
from . import as_array, onnx_op
from ._blas import blas_threads_for
from ._spatial import (
    auto_pad_name,
    float_kind,
    geometry_array,
    ints,
    lift3,
    unpack_geometry,
    window_geometry,
)

#: Offsets into flat arrays are made unsigned: Numba then indexes without the negative-index
#: wraparound test that keeps LLVM from vectorizing a loop.
U = np.uint64

CONV_ATTRS = {
    "auto_pad": "NOTSET",
    "dilations": None,
    "group": 1,
    "kernel_shape": None,
    "pads": None,
    "strides": None,
}


#: Target number of elements of one im2col tile for :func:`gemm_small` (128 KB of float32:
#: it stays in L2 while it is read once per pair of filters); BLAS tiles are 8 times wider.
TILE_ELEMS = 32768

_GEMM_SIG = types.intc(
    types.char,
    types.char,
    types.char,
    types.intp,
    types.intp,
    types.intp,
    types.voidptr,
    types.voidptr,
    types.intp,
    types.voidptr,
    types.intp,
    types.voidptr,
    types.voidptr,
    types.intp,
)
#: Numba's own BLAS entry (the helper its ``np.dot`` calls; it loads scipy's BLAS on first use):
#: ``(kind 's'|'d', transa, transb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc)``,
#: column-major. Used here because ``np.dot`` cannot write into a strided block of the output.
_xxgemm = types.ExternalFunction("numba_xxgemm", _GEMM_SIG)


@numba.njit(cache=True)
def gemm_into(w, cols, out, ldc):
    """``out[m, t] = sum_r w[m, r] * cols[r, t]`` for C-contiguous ``w`` (M, K) and ``cols``
    (K, T), written into a row-major block whose rows are ``ldc`` elements apart (``out``'s
    data pointer is the block's first element). Returns BLAS's status (0 = ok)."""
    M, K = w.shape
    T = cols.shape[1]
    ab = np.zeros(2, dtype=w.dtype)
    ab[0] = 1
    kind = ord("s") if w.itemsize == 4 else ord("d")
    # row-major out = w @ cols is column-major out^T = cols^T @ w^T
    return _xxgemm(
        kind,
        ord("n"),
        ord("n"),
        T,
        M,
        K,
        ab.ctypes.data,
        cols.ctypes.data,
        T,
        w.ctypes.data,
        K,
        ab[1:].ctypes.data,
        out.ctypes.data,
        ldc,
    )


#: Filters with at most this many weights (after the bias column) are multiplied by
#: :func:`gemm_small` rather than BLAS, which is slow for such a thin inner dimension...
SMALL_K = 32
#: ... and so are products of at most this many multiply-adds per image and group, where
#: BLAS's fixed cost per call dominates.
SMALL_MACS = 1 << 18


@numba.njit(cache=True)
def use_gemm_small(mg: int, ka: int, pixels: int) -> bool:
    """Whether the product of ``mg`` filters of ``ka`` weights with ``pixels`` im2col columns
    runs in :func:`gemm_small` (else BLAS)."""
    return ka <= SMALL_K or mg * ka * pixels <= SMALL_MACS


@numba.njit(cache=True, fastmath={"contract"})
def gemm_small(w, cols, out, row0, col0):
    """``out[row0 + m, col0 + t] = sum_r w[m, r] * cols[r, t]`` for a thin ``w`` (M, K),
    ``cols`` (K, T) and a C-contiguous 2-D ``out``: two output rows at a time, four
    ``cols`` rows per pass over them, each pass a unit-stride loop LLVM vectorizes."""
    M, K = w.shape
    T = cols.shape[1]
    for m in range(0, M, 2):
        two = m + 1 < M
        m1 = m + 1 if two else m
        d0 = out[row0 + m, col0 : col0 + T]
        d1 = out[row0 + m1, col0 : col0 + T]
        w0 = w[m]
        w1 = w[m1]
        d0[:] = 0
        d1[:] = 0
        r = 0
        while r + 4 <= K:
            c0 = cols[r]
            c1 = cols[r + 1]
            c2 = cols[r + 2]
            c3 = cols[r + 3]
            a0, a1, a2, a3 = w0[r], w0[r + 1], w0[r + 2], w0[r + 3]
            b0, b1, b2, b3 = w1[r], w1[r + 1], w1[r + 2], w1[r + 3]
            for q in range(T):
                x0, x1, x2, x3 = c0[q], c1[q], c2[q], c3[q]
                d0[q] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3
                d1[q] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3
            r += 4
        while r < K:
            c0 = cols[r]
            a0, b0 = w0[r], w1[r]
            for q in range(T):
                d0[q] += a0 * c0[q]
                d1[q] += b0 * c0[q]
            r += 1
        if not two:  # d1 aliased d0 (the odd last row): recompute it alone
            d0[:] = 0
            for r in range(K):
                c0 = cols[r]
                a0 = w0[r]
                for q in range(T):
                    d0[q] += a0 * c0[q]


@numba.njit(cache=True)
def _tap_range(n_out, base, s, size):
    """Output positions ``[lo, hi)`` along an axis whose input index ``q * s + base`` is
    inside ``[0, size)``."""
    lo = 0 if base >= 0 else (-base + s - 1) // s
    hi = 0 if base >= size else (size - base + s - 1) // s
    lo = min(lo, n_out)
    return lo, max(min(hi, n_out), lo)


@numba.njit(cache=True)
def _im2col_rows(x, n, c0, cg, k, s, d, pb, o, r0, r1, cols):
    """Fill ``cols[(c, kd, kh, kw), (r - r0) * o2 + q]`` for output rows ``r0 <= r < r1``
    (``r = od * o1 + oh``) of image ``n``, channels ``c0 .. c0 + cg``: each row segment is
    copied in one loop over the taps inside the input, the padding zeroed around it. Flat
    arrays with unsigned offsets: no view to reference-count per segment, and no
    negative-index wraparound test to keep LLVM from vectorizing the copy."""
    C, D, H, W = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    o2 = o[2]
    k2 = k[2]
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    T = cols.shape[1]
    lo = np.empty(k2, dtype=np.int64)
    hi = np.empty(k2, dtype=np.int64)
    for e in range(k2):
        lo[e], hi[e] = _tap_range(o2, e * d[2] - pb[2], s[2], W)
    for c in range(cg):
        plane = (n * C + c0 + c) * D
        for a in range(k[0]):
            for b in range(k[1]):
                row0 = ((c * k[0] + a) * k[1] + b) * k2  # the k2 rows of taps (c, a, b, *)
                col = 0
                for r in range(r0, r1):
                    i = r // o[1]
                    j = r - i * o[1]
                    zi = i * s[0] - pb[0] + a * d[0]
                    yj = j * s[1] - pb[1] + b * d[1]
                    if zi < 0 or zi >= D or yj < 0 or yj >= H:
                        for e in range(k2):
                            dst = (row0 + e) * T + col
                            for q in range(o2):
                                cf[U(dst + q)] = 0
                    else:
                        xrow = ((plane + zi) * H + yj) * W
                        for e in range(k2):
                            dst = (row0 + e) * T + col
                            le = lo[e]
                            he = hi[e]
                            for q in range(le):
                                cf[U(dst + q)] = 0
                            src = xrow + le * s[2] + e * d[2] - pb[2]
                            if s[2] == 1:
                                for t in range(he - le):
                                    cf[U(dst + le + t)] = xf[U(src + t)]
                            else:
                                for t in range(he - le):
                                    cf[U(dst + le + t)] = xf[U(src + t * s[2])]
                            for q in range(he, o2):
                                cf[U(dst + q)] = 0
                    col += o2


@numba.njit(cache=True)
def conv3d(x, w2, bias, has_bias, group, k, s, d, pb, o):
    """Grouped 3-D convolution by im2col tiles. ``x`` (N, C, D, H, W), ``w2``
    (M, C/group * prod(k)) filters, ``bias`` (M,); returns (N, M, od*oh*ow).

    The output rows are cut into tiles of about :data:`TILE_ELEMS` (BLAS: 8x) im2col
    elements; each tile is gathered (plus a row of ones when there is a bias, the bias being
    the filters' extra column) and multiplied straight into its block of the output by
    :func:`gemm_small` or BLAS (see :func:`use_gemm_small`)."""
    N, C = x.shape[0], x.shape[1]
    M = w2.shape[0]
    cg = C // group
    mg = M // group
    kk = cg * k[0] * k[1] * k[2]
    ka = kk + 1 if has_bias else kk
    nrows = o[0] * o[1]
    p = nrows * o[2]
    out = np.empty((N * M, p), dtype=x.dtype)
    thin = use_gemm_small(mg, ka, p)
    # BLAS packs its operands per call: it gets wider tiles
    rpt = max(1, min(nrows, (TILE_ELEMS if thin else 8 * TILE_ELEMS) // (ka * o[2])))
    buf = np.empty(ka * rpt * o[2], dtype=x.dtype)
    wa = np.empty((mg, ka), dtype=x.dtype)
    for g in range(group):
        wa[:, :kk] = w2[g * mg : (g + 1) * mg]
        if has_bias:
            wa[:, kk] = bias[g * mg : (g + 1) * mg]
        for n in range(N):
            for r0 in range(0, nrows, rpt):
                r1 = min(r0 + rpt, nrows)
                T = (r1 - r0) * o[2]
                cols = buf[: ka * T].reshape((ka, T))
                _im2col_rows(x, n, g * cg, cg, k, s, d, pb, o, r0, r1, cols)
                if has_bias:
                    cols[kk] = 1
                if thin:
                    gemm_small(wa, cols, out, n * M + g * mg, r0 * o[2])
                elif gemm_into(wa, cols, out[n * M + g * mg :, r0 * o[2] :], p) != 0:
                    raise RuntimeError("Conv: the BLAS matrix product failed")
    return out


@numba.njit(cache=True)
def conv_direct(x, w, bias, group, k, s, d, pb, o):
    """Grouped 3-D convolution by direct accumulation, for depthwise and small problems:
    ``x`` (N, C, D, H, W), ``w`` (M, C/group * kd * kh * kw) filters (or the same values
    shaped (M, C/group, kd, kh, kw)), ``bias`` (M,); each output row is
    the bias plus one multiply-add loop per (channel, tap) over the taps inside the input
    (flat arrays, unsigned offsets: see :func:`_im2col_rows`). Returns (N, M, od, oh, ow)."""
    N, C, D, H, W = x.shape
    M = w.shape[0]
    cg = C // group
    mg = M // group
    o2 = o[2]
    out = np.empty((N, M, o[0], o[1], o2), dtype=x.dtype)
    xf = x.reshape(-1)
    wf = w.reshape(-1)
    of = out.reshape(-1)
    lo = np.empty(k[2], dtype=np.int64)
    hi = np.empty(k[2], dtype=np.int64)
    for e in range(k[2]):
        lo[e], hi[e] = _tap_range(o2, e * d[2] - pb[2], s[2], W)
    for n in range(N):
        for m in range(M):
            c0 = (m // mg) * cg
            bm = bias[m]
            for i in range(o[0]):
                for j in range(o[1]):
                    ro = (((n * M + m) * o[0] + i) * o[1] + j) * o2
                    for q in range(o2):
                        of[U(ro + q)] = bm
                    for c in range(cg):
                        for a in range(k[0]):
                            zi = i * s[0] - pb[0] + a * d[0]
                            if zi < 0 or zi >= D:
                                continue
                            for b in range(k[1]):
                                yj = j * s[1] - pb[1] + b * d[1]
                                if yj < 0 or yj >= H:
                                    continue
                                xr = (((n * C + c0 + c) * D + zi) * H + yj) * W
                                wo = (((m * cg + c) * k[0] + a) * k[1] + b) * k[2]
                                for e in range(k[2]):
                                    wv = wf[wo + e]
                                    src = xr + lo[e] * s[2] + e * d[2] - pb[2]
                                    dst = ro + lo[e]
                                    if s[2] == 1:
                                        for t in range(hi[e] - lo[e]):
                                            of[U(dst + t)] += wv * xf[U(src + t)]
                                    else:
                                        for t in range(hi[e] - lo[e]):
                                            of[U(dst + t)] += wv * xf[U(src + t * s[2])]
    return out


@numba.njit(cache=True)
def convtranspose3d(x, wt, bias, group, k, s, d, pb, o):
    """Grouped 3-D transposed convolution. ``x`` (N, C, D, H, W); ``wt`` (group, Mg*prod(k), Cg)
    transposed filters; output (N, M, o0, o1, o2), output cell ``t`` taking full-result cell
    ``t + pb`` (``pb`` may be negative). One product per image and group (BLAS, or
    :func:`gemm_small` for few input channels) gives every (filter, tap) row over the input
    cells; col2im then adds each row segment into the
    output over the input columns whose target lies inside it (flat arrays, unsigned offsets:
    see :func:`_im2col_rows`)."""
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
        lo[e], hi[e] = _tap_range(W, e * d[2] - pb[2], s[2], o[2])
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


def _hashable(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


#: The Conv attributes that shape its geometry, in the order of the memo key.
_GEOMETRY_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides) -> tuple:
    """The attributes of :data:`_GEOMETRY_ATTRS` as a memo key (lists made tuples)."""
    return (
        auto_pad,
        _hashable(dilations),
        group,
        _hashable(kernel_shape),
        _hashable(pads),
        _hashable(strides),
    )


def _conv_geometry(X: np.ndarray, W: np.ndarray, key: tuple, op: str):
    """``(group, geometry, direct, shape5, out_shape)`` of a Conv with the attributes ``key``
    (:func:`_geometry_key`): the kernel geometry (kernel, strides, dilations, pads at the
    beginning, output shape, each lifted to 3-D, then the group, as one array: see
    ``_spatial.geometry_array``), whether direct accumulation serves it, X's 5-D view and the
    output's shape. Memoized per shapes and attributes: a model calls the same Conv at every
    step, and working this out is a third of a small Conv's time."""
    try:
        return _memo_geometry(X.shape, W.shape, key, op)
    except TypeError:  # an attribute given as an array cannot be a memo key
        return _conv_geometry_of(X.shape, W.shape, dict(zip(_GEOMETRY_ATTRS, key)), op)


@functools.lru_cache(maxsize=256)
def _memo_geometry(xshape: tuple, wshape: tuple, key: tuple, op: str):
    return _conv_geometry_of(xshape, wshape, dict(zip(_GEOMETRY_ATTRS, key)), op)


def _conv_geometry_of(xshape, wshape, attrs: dict, op: str):
    if len(xshape) < 3 or len(xshape) > 5 or len(wshape) != len(xshape):
        raise MDFError(
            f"{op}: expected X (N, C, D1..Dk) and W of the same rank (k = 1..3), "
            f"got X {tuple(xshape)} and W {tuple(wshape)}"
        )
    nsp = len(xshape) - 2
    group = int(attrs["group"])
    kernel = ints(attrs["kernel_shape"], nsp, 0, "kernel_shape", op)
    if attrs["kernel_shape"] is None or len(attrs["kernel_shape"]) == 0:
        kernel = tuple(int(v) for v in wshape[2:])
    strides = ints(attrs["strides"], nsp, 1, "strides", op)
    dil = ints(attrs["dilations"], nsp, 1, "dilations", op)
    C, M = xshape[1], wshape[0]
    if group < 1 or C % group or M % group or wshape[1] * group != C:
        raise MDFError(
            f"{op}: X has {C} channels and W {tuple(wshape)} for group={group}; "
            "expected C == W.shape[1] * group and M divisible by group"
        )
    out_sp, pb, _ = window_geometry(
        xshape[2:], kernel, strides, dil, attrs["pads"], attrs["auto_pad"], 0, op
    )
    if tuple(wshape[2:]) != tuple(kernel):
        raise MDFError(
            f"{op}: kernel_shape {list(kernel)} differs from W's spatial shape {list(wshape[2:])}"
        )
    geo = (lift3(kernel, 1), lift3(strides, 1), lift3(dil, 1), lift3(pb, 0), lift3(out_sp, 1))
    direct = _use_direct(xshape[0], M, M // group, math.prod(wshape[1:]), math.prod(out_sp))
    shape5 = tuple(xshape[:2]) + (1,) * (5 - len(xshape)) + tuple(xshape[2:])
    return group, geometry_array(geo, group), direct, shape5, (xshape[0], M) + out_sp


@numba.njit(cache=True)
def conv3d_g(x, w2, bias, has_bias, g):
    """:func:`conv3d` with the geometry array of :func:`_conv_geometry`."""
    k, s, d, pb, o = unpack_geometry(g)
    return conv3d(x, w2, bias, has_bias, g[15], k, s, d, pb, o)


@numba.njit(cache=True)
def conv_direct_g(x, w2, bias, g):
    """:func:`conv_direct` with the geometry array of :func:`_conv_geometry`."""
    k, s, d, pb, o = unpack_geometry(g)
    return conv_direct(x, w2, bias, g[15], k, s, d, pb, o)


def _bias(B: Any, m: int, dtype: np.dtype, op: str) -> np.ndarray:
    """The bias input as a contiguous (m,) array of ``dtype`` (zeros when it is omitted)."""
    if B is None:
        return np.zeros(m, dtype)
    bias = np.ascontiguousarray(B, dtype=dtype)
    if bias.shape != (m,):
        raise MDFError(f"{op}: bias B should have shape ({m},), got {bias.shape}")
    return bias


def _conv_float(X, W, B, key, op) -> np.ndarray:
    """Conv on float32/float64 arrays with the attributes ``key`` (:func:`_geometry_key`);
    returns the output with X's float dtype."""
    group, g, direct, shape5, out_shape = _conv_geometry(X, W, key, op)
    M = out_shape[1]
    x5 = X.reshape(shape5)
    bias = _bias(B, M, X.dtype, op)
    w2 = np.ascontiguousarray(W, dtype=X.dtype).reshape(M, -1)
    if direct:
        y = conv_direct_g(x5, w2, bias, g)
    else:
        macs = x5.shape[0] * M * w2.shape[1] * math.prod(out_shape[2:])
        try:
            with blas_threads_for(macs):
                y = conv3d_g(x5, w2, bias, B is not None, g)
        except RuntimeError as e:  # BLAS unavailable (Numba's helper loads scipy's)
            raise MDFError(f"{op}: {e}; the BLAS product needs scipy installed") from e
    return y.reshape(out_shape)


#: Convolutions with at most this many multiply-adds run by direct accumulation.
DIRECT_MAX_MACS = 1 << 14


def _use_direct(n: int, m: int, mg: int, taps: int, pixels: int) -> bool:
    """Direct accumulation for depthwise-like groups (a few filters per group, where a BLAS
    product per group is too thin) and for tiny problems; im2col + BLAS otherwise."""
    return mg <= 4 or n * m * taps * pixels <= DIRECT_MAX_MACS


@onnx_op("Conv", inputs=("X", "W", "B"), optional=("B",), attributes=CONV_ATTRS, since=1)
def conv(
    X: Any,
    W: Any,
    B: Any = None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> tuple[np.ndarray]:
    """N-D (1-3) convolution with groups, dilations, strides, pads / auto_pad, optional bias."""
    X = as_array(X)
    dt = X.dtype
    Xf = float_kind(X)
    key = _geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides)
    y = _conv_float(Xf, np.asarray(W, dtype=Xf.dtype), B, key, "Conv")
    return (y if y.dtype == dt else y.astype(dt),)


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
        _hashable(dilations),
        group,
        _hashable(kernel_shape),
        _hashable(output_padding),
        _hashable(output_shape),
        _hashable(pads),
        _hashable(strides),
    )
    try:
        g, shape5, w3_shape, out_shape = _convt_plan(*key)
    except TypeError:  # an attribute given as an array cannot be a memo key
        g, shape5, w3_shape, out_shape = _convt_plan.__wrapped__(*key)
    bias = _bias(B, out_shape[1], X.dtype, "ConvTranspose")
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


def _zero_point(zp: Any, default_dtype) -> np.ndarray:
    if zp is None:
        return np.zeros((), default_dtype)
    return np.asarray(zp)


def _int_conv(x, w, xzp, wzp, B, key, op) -> np.ndarray:
    """Exact integer convolution of (x - xzp) and (w - wzp) (+ int32 B) as float64."""
    x = as_array(x)
    w = np.asarray(w)
    xzp = _zero_point(xzp, x.dtype)
    wzp = _zero_point(wzp, w.dtype)
    if xzp.size != 1:
        raise MDFError(f"{op}: x_zero_point should be a scalar, got shape {xzp.shape}")
    xf = x.astype(np.float64) - float(xzp.reshape(-1)[0])
    wz = wzp.astype(np.float64).reshape(-1)
    if wz.size not in (1, w.shape[0]):
        raise MDFError(f"{op}: w_zero_point should be a scalar or have {w.shape[0]} values")
    wf = w.astype(np.float64) - wz.reshape((-1,) + (1,) * (w.ndim - 1))
    bias = None if B is None else np.asarray(B).astype(np.float64)
    return _conv_float(xf, wf, bias, key, op)


@onnx_op(
    "ConvInteger",
    inputs=("x", "w", "x_zero_point", "w_zero_point"),
    optional=("x_zero_point", "w_zero_point"),
    attributes=CONV_ATTRS,
    since=10,
)
def conv_integer(
    x: Any,
    w: Any,
    x_zero_point: Any = None,
    w_zero_point: Any = None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> tuple[np.ndarray]:
    """Integer convolution with zero points; the int32 accumulator is the output."""
    key = _geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides)
    y = _int_conv(x, w, x_zero_point, w_zero_point, None, key, "ConvInteger")
    return (y.astype(np.int32),)


@onnx_op(
    "QLinearConv",
    since=10,
    attributes=CONV_ATTRS,
    inputs=(
        "x",
        "x_scale",
        "x_zero_point",
        "w",
        "w_scale",
        "w_zero_point",
        "y_scale",
        "y_zero_point",
        "B",
    ),
    optional=("B",),
)
def qlinear_conv(
    x: Any,
    x_scale: Any,
    x_zero_point: Any,
    w: Any,
    w_scale: Any,
    w_zero_point: Any,
    y_scale: Any,
    y_zero_point: Any,
    B: Any = None,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> tuple[np.ndarray]:
    """Quantized convolution: int32 accumulation, requantized to y's 8-bit type."""
    key = _geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides)
    acc = _int_conv(x, w, x_zero_point, w_zero_point, B, key, "QLinearConv")
    M = acc.shape[1]
    ws = np.asarray(w_scale, np.float32).reshape(-1)
    if ws.size not in (1, M):
        raise MDFError(f"QLinearConv: w_scale should be a scalar or have {M} values")
    mult = (
        np.float32(np.asarray(x_scale).reshape(-1)[0])
        * ws
        / np.float32(np.asarray(y_scale).reshape(-1)[0])
    ).astype(np.float32)
    shape = (1, -1) + (1,) * (acc.ndim - 2)
    scaled = (acc.astype(np.float32) * mult.reshape(shape)).astype(np.float32)
    yzp = np.asarray(y_zero_point)
    info = np.iinfo(yzp.dtype)
    y = np.rint(scaled).astype(np.float64) + float(yzp.reshape(-1)[0])
    return (np.clip(y, info.min, info.max).astype(yzp.dtype),)
