"""``onnx::Conv``: N-D (1-3) convolution with groups, dilations, strides, pads / auto_pad and an
optional bias, and the float convolution that the integer forms (:mod:`.conv_integer`) reuse.

Every rank (1-D, 2-D, 3-D) is lifted to 3-D (see ``_spatial``). ``Conv`` has four kernels:
direct accumulation (depthwise-like groups and tiny problems, :func:`conv_direct`), one matrix
product per image for a 1x1 convolution without stride, padding or groups
(:func:`conv_pointwise`: vector tiles reading the input in place), vector tiles over shifted slices of the padded (and, for strides,
phase-split) input for the others up to ``SHIFT_MAX_MACS`` multiply-adds
(:func:`~._conv_threads.conv_shift`), and above that im2col tiles that stay in cache multiplied
straight into their block of the output (:func:`conv3d`), by :func:`~._im2col.gemm_small` for
thin filters or small products or by BLAS (see :mod:`._im2col`); in :func:`conv3d` a bias is an
extra filter column over a row of ones. The geometry of a call is memoized per shapes and
attributes, and :func:`prepare_conv` binds a Conv with constant weights once for the
interpreter's fast path. Called from Python, the tile kernels share a large convolution with
worker threads (:mod:`._conv_threads`: bitwise the one-thread values; the compiled backend's
``conv_jit`` runs on its calling thread); :mod:`._conv_relu` binds a Conv with its Relu.
ConvTranspose lives in :mod:`.conv_transpose`.
"""

from __future__ import annotations

import functools
import math
from contextlib import nullcontext
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from ._blas import blas_threads_for
from ._conv_bn import conv_shift_bn_into, finish
from ._conv_shift import conv_shift_into, use_shift
from ._conv_threads import (
    conv_pointwise_shared,
    conv_pointwise_tiles,
    conv_shift_g,
    conv_shift_shared,
    conv_threads,
)
from ._im2col import (
    TILE_ELEMS,
    U,
    gemm_into,
    gemm_small,
    im2col_rows,
    tap_range,
    use_gemm_small,
)
from ._spatial import (
    float_kind,
    geometry_array,
    hashable,
    ints,
    lift3,
    unpack_geometry,
    window_geometry,
)
from ._spatial_jit import (
    as5d_nb,
    attr_int,
    attr_ints,
    pad_mode,
    shaped_like_nb,
    spatial_nb,
    window_nb,
)

CONV_ATTRS = {
    "auto_pad": "NOTSET",
    "dilations": None,
    "group": 1,
    "kernel_shape": None,
    "pads": None,
    "strides": None,
}


@numba.njit(cache=True)
def conv3d(x, w2, bias, has_bias, group, k, s, d, pb, o, own_macs=0):
    """Grouped 3-D convolution by im2col tiles. ``x`` (N, C, D, H, W), ``w2``
    (M, C/group * prod(k)) filters, ``bias`` (M,); returns (N, M, od*oh*ow).

    The output rows are cut into tiles of about :data:`TILE_ELEMS` (BLAS: 8x) im2col
    elements; each tile is gathered (plus a row of ones when there is a bias, the bias being
    the filters' extra column) and multiplied straight into its block of the output by
    :func:`gemm_small` or BLAS (see :func:`use_gemm_small`; products of at most ``own_macs``
    multiply-adds per image and group also go to :func:`gemm_small`)."""
    N, C = x.shape[0], x.shape[1]
    M = w2.shape[0]
    cg = C // group
    mg = M // group
    kk = cg * k[0] * k[1] * k[2]
    ka = kk + 1 if has_bias else kk
    nrows = o[0] * o[1]
    p = nrows * o[2]
    out = np.empty((N * M, p), dtype=x.dtype)
    thin = use_gemm_small(mg, ka, p) or mg * ka * p <= own_macs
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
                im2col_rows(x, n, g * cg, cg, k, s, d, pb, o, r0, r1, cols)
                if has_bias:
                    cols[kk] = 1
                if thin:
                    gemm_small(wa, cols, out, n * M + g * mg, r0 * o[2])
                elif gemm_into(wa, cols, out[n * M + g * mg :, r0 * o[2] :], p) != 0:
                    raise RuntimeError("Conv: the BLAS matrix product failed")
    return out


@numba.njit(cache=True)
def conv_pointwise(x, w2, bias, has_bias, own_macs=0):
    """A 1x1 convolution without stride, padding or groups: per image ``n`` the product of the
    filters ``w2`` (M, C) with ``x[n]`` (C, pixels), straight from the input (no im2col), by
    the vector tiles (:func:`~._conv_threads.conv_pointwise_tiles`: on one thread as fast as
    BLAS on SqueezeNet's 1x1 layers, 2.5x on 16 channels; ``own_macs`` is accepted for the
    callers' signature), on the calling thread (from Python, ``conv_pointwise_shared`` shares
    it with worker threads: :mod:`._conv_threads`). Returns (N, M, pixels)."""
    return conv_pointwise_tiles(x, w2, bias, has_bias)


@numba.njit(cache=True)
def conv_direct(x, w, bias, group, k, s, d, pb, o):
    """Grouped 3-D convolution by direct accumulation, for depthwise and small problems:
    ``x`` (N, C, D, H, W), ``w`` (M, C/group * kd * kh * kw) filters (or the same values
    shaped (M, C/group, kd, kh, kw)), ``bias`` (M,); each output row is
    the bias plus one multiply-add loop per (channel, tap) over the taps inside the input
    (flat arrays, unsigned offsets: see :func:`im2col_rows`). Returns (N, M, od, oh, ow)."""
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
        lo[e], hi[e] = tap_range(o2, e * d[2] - pb[2], s[2], W)
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


#: The Conv attributes that shape its geometry, in the order of the memo key.
_GEOMETRY_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides) -> tuple:
    """The attributes of :data:`_GEOMETRY_ATTRS` as a memo key (lists made tuples)."""
    return (
        auto_pad,
        hashable(dilations),
        group,
        hashable(kernel_shape),
        hashable(pads),
        hashable(strides),
    )


def _conv_geometry(X: np.ndarray, W: np.ndarray, key: tuple, op: str):
    """``(group, geometry, method, shape5, out_shape)`` of a Conv with the attributes ``key``
    (:func:`geometry_key`): the kernel geometry (kernel, strides, dilations, pads at the
    beginning, output shape, each lifted to 3-D, then the group, as one array: see
    ``_spatial.geometry_array``), the kernel that serves it ("direct" accumulation,
    "pointwise" for a 1x1 convolution without stride, padding or groups, which is one matrix
    product per image, else "im2col"), X's 5-D view and the output's shape. Memoized per shapes and attributes: a model calls the same Conv at every
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
    pointwise = (
        group == 1
        and all(v == 1 for v in kernel + strides)
        and not any(pb)
        and tuple(out_sp) == tuple(xshape[2:])
    )
    g = geometry_array(geo, group)
    macs = M // group * math.prod(wshape[1:]) * math.prod(out_sp)
    return (
        group,
        g,
        _method(direct, pointwise, g, macs),
        shape5,
        (xshape[0], M) + out_sp,
    )


def _method(direct: bool, pointwise: bool, g: np.ndarray, macs: int) -> str:
    """The kernel of a Conv (see :func:`_conv_geometry`) of ``macs`` multiply-adds per image
    and group."""
    if direct:
        return "direct"
    if pointwise:
        return "pointwise"
    return "shift" if use_shift(g, macs) else "im2col"


@numba.njit(cache=True)
def conv3d_g(x, w2, bias, has_bias, g, own_macs=0):
    """:func:`conv3d` with the geometry array of :func:`_conv_geometry`."""
    k, s, d, pb, o = unpack_geometry(g)
    return conv3d(x, w2, bias, has_bias, g[15], k, s, d, pb, o, own_macs)


@numba.njit(cache=True)
def conv_direct_g(x, w2, bias, g):
    """:func:`conv_direct` with the geometry array of :func:`_conv_geometry`."""
    k, s, d, pb, o = unpack_geometry(g)
    return conv_direct(x, w2, bias, g[15], k, s, d, pb, o)


def bias_vector(B: Any, m: int, dtype: np.dtype, op: str) -> np.ndarray:
    """The bias input as a contiguous (m,) array of ``dtype`` (zeros when it is omitted)."""
    if B is None:
        return np.zeros(m, dtype)
    bias = np.ascontiguousarray(B, dtype=dtype)
    if bias.shape != (m,):
        raise MDFError(f"{op}: bias B should have shape ({m},), got {bias.shape}")
    return bias


def conv_float(X, W, B, key, op) -> np.ndarray:
    """Conv on float32/float64 arrays with the attributes ``key`` (:func:`geometry_key`);
    returns the output with X's float dtype."""
    group, g, method, shape5, out_shape = _conv_geometry(X, W, key, op)
    M = out_shape[1]
    x5 = X.reshape(shape5)
    bias = bias_vector(B, M, X.dtype, op)
    w2 = np.ascontiguousarray(W, dtype=X.dtype).reshape(M, -1)
    if method == "direct":
        y = conv_direct_g(x5, w2, bias, g)
    elif method == "shift":
        macs = x5.shape[0] * M * w2.shape[1] * math.prod(out_shape[2:])
        y = conv_shift_shared(np.ascontiguousarray(x5), w2, bias, g, conv_threads(macs))
    elif method == "pointwise":
        x3 = np.ascontiguousarray(X).reshape(shape5[0], shape5[1], -1)
        macs = x5.shape[0] * M * w2.shape[1] * x3.shape[2]
        y = conv_pointwise_shared(x3, w2, bias, B is not None, conv_threads(macs))
    else:
        pixels = math.prod(out_shape[2:])
        macs = x5.shape[0] * M * w2.shape[1] * pixels
        blas = calls_blas(method, group, M, w2.shape[1], pixels, B is not None)
        try:
            with blas_threads_for(macs) if blas else nullcontext():
                y = conv3d_g(x5, w2, bias, B is not None, g)
        except RuntimeError as e:  # BLAS unavailable (Numba's helper loads scipy's)
            raise MDFError(f"{op}: {e}; the BLAS product needs scipy installed") from e
    return y.reshape(out_shape)


def calls_blas(method: str, group: int, m: int, k: int, pixels: int, has_bias: bool) -> bool:
    """Whether the kernel of ``method`` (see :func:`_conv_geometry`) calls BLAS for ``m``
    filters of ``k`` weights over ``pixels`` output pixels, rather than its own loops (which
    run on one thread, so that BLAS's thread count needs no limit around them)."""
    if method in ("direct", "shift", "pointwise"):
        return False
    return not use_gemm_small(m // group, k + 1 if has_bias else k, pixels)


#: Convolutions with at most this many multiply-adds run by direct accumulation.
DIRECT_MAX_MACS = 1 << 14


def _use_direct(n: int, m: int, mg: int, taps: int, pixels: int) -> bool:
    """Direct accumulation for depthwise-like groups (a few filters per group, where a BLAS
    product per group is too thin) and for tiny problems; im2col + BLAS otherwise."""
    return mg <= 4 or n * m * taps * pixels <= DIRECT_MAX_MACS


def prepare_conv(consts: list[tuple[bool, Any]], attrs: dict[str, Any]):
    """A Conv call bound once (see :mod:`mdf_engine.interpreter_lean`): ``consts`` is
    ``(known, value)`` per input X, W, B; when W and B are known float arrays the returned
    ``run(X, W, B)`` keeps the filter matrix in each input dtype and the geometry per input
    shape, and calls the same kernels as :func:`conv` (so the values are the same); other X
    go to :func:`conv`. None when W or B is not known."""
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

    def run(X: Any, W_: Any = None, B_: Any = None) -> tuple[np.ndarray]:
        if type(X) is not np.ndarray or X.dtype.kind != "f" or X.dtype.itemsize < 4:
            return conv(X, W, B, **attrs)
        plan = memo.get((X.shape, X.dtype))
        if plan is None:
            group, g, method, shape5, out_shape = _conv_geometry(X, W, key, "Conv")
            M = out_shape[1]
            w2 = np.ascontiguousarray(W, dtype=X.dtype).reshape(M, -1)
            bias = bias_vector(B, M, X.dtype, "Conv")
            pixels = math.prod(out_shape[2:])
            macs = shape5[0] * M * w2.shape[1] * pixels
            own = macs  # (the kernel's own threads: conv_threads)
            if not calls_blas(method, group, M, w2.shape[1], pixels, B is not None):
                macs = 0  # own loops: the BLAS threads need no limit
            plan = (g, method, shape5, out_shape, w2, bias, macs, own)
            memo[(X.shape, X.dtype)] = plan
        g, method, shape5, out_shape, w2, bias, macs, own = plan
        X = np.ascontiguousarray(X)
        if method == "direct":
            y = conv_direct_g(X.reshape(shape5), w2, bias, g)
        elif method == "shift":
            y = conv_shift_shared(X.reshape(shape5), w2, bias, g, conv_threads(own))
        elif method == "pointwise":
            x3 = X.reshape(shape5[0], shape5[1], -1)
            y = conv_pointwise_shared(x3, w2, bias, B is not None, conv_threads(own))
        else:
            try:
                with blas_threads_for(macs) if macs else nullcontext():
                    y = conv3d_g(X.reshape(shape5), w2, bias, B is not None, g)
            except RuntimeError as e:  # BLAS unavailable (Numba's helper loads scipy's)
                raise MDFError(f"Conv: {e}; the BLAS product needs scipy installed") from e
        return (y.reshape(out_shape),)

    return run


#: In :func:`conv_jit`, products of up to this many multiply-adds (per image and group) run in
#: :func:`gemm_small` rather than BLAS: on one thread they are even up to about 4 M (see
#: ``_im2col.SMALL_MACS``), and nopython code cannot lower BLAS's thread count per call as
#: :func:`~._blas.blas_threads_for` does, so a small product would otherwise wait for OpenBLAS's
#: second thread on a busy machine (the small CNN of benchmarks/cnn_speed.py: 0.33 instead of
#: 0.17 ms per inference at default threading).
JIT_OWN_MACS = 1 << 22


@numba.njit(cache=True)
def conv_jit(X, W, B, auto_pad, dilations, group, kernel_shape, pads, strides, Y=None, BN=None):
    """nopython Conv of a float X (N, C, D1[, D2[, D3]]) for the compiled backend: the
    geometry worked out in nopython (:mod:`._spatial_jit`), then the kernel :func:`conv_float`
    would pick; the output in X's dtype (W and B converted to it), or written into ``Y`` (then
    given ``BN``, a fused BatchNormalization (and Relu) too: :mod:`._conv_bn`)."""
    x5 = as5d_nb(X)
    sp = spatial_nb(X)
    wsp = spatial_nb(W)
    n = sp.size
    k = wsp.copy() if kernel_shape is None else attr_ints(kernel_shape, n, 1)
    grp = attr_int(group, 1)
    N, C = x5.shape[0], x5.shape[1]
    M = W.shape[0]
    if grp < 1 or C % grp != 0 or M % grp != 0 or W.shape[1] * grp != C:
        raise ValueError("Conv: X's channels, W's shape and group do not agree")
    for i in range(n):
        if k[i] != wsp[i]:
            raise ValueError("Conv: kernel_shape differs from W's spatial shape")
    g, _ = window_nb(
        sp,
        k,
        attr_ints(strides, n, 1),
        attr_ints(dilations, n, 1),
        attr_ints(pads, 2 * n, 0),
        pad_mode(auto_pad),
        0,
        grp,
    )
    taps = W.size // M
    w2 = np.ascontiguousarray(W).reshape((M, taps)).astype(x5.dtype)
    has_bias = B is not None
    bias = np.zeros(M, dtype=x5.dtype)
    if B is not None:
        b = np.asarray(B).reshape(-1)
        if b.size != M:
            raise ValueError("Conv: bias B should have one value per filter")
        bias[:] = b
    o0, o1, o2 = g[12], g[13], g[14]
    pixels = o0 * o1 * o2
    if M // grp <= 4 or N * M * taps * pixels <= DIRECT_MAX_MACS:
        return finish(conv_direct_g(x5, w2, bias, g), X, Y, BN)
    if use_shift(g, (M // grp) * taps * pixels):
        if BN is not None:
            return conv_shift_bn_into(x5, w2, bias, g, Y, BN)
        if Y is not None:  # (the compiled value's slot: no new array, no copy)
            return conv_shift_into(x5, w2, bias, g, Y)
        return shaped_like_nb(conv_shift_g(x5, w2, bias, g), X)
    pointwise = grp == 1
    for i in range(15):
        if (i < 6 and g[i] != 1) or (9 <= i < 12 and g[i] != 0):
            pointwise = False
    if pointwise:
        x3 = x5.reshape((N, C, pixels))
        y = conv_pointwise(x3, w2, bias, has_bias, JIT_OWN_MACS).reshape((N, M, o0, o1, o2))
    else:
        y = conv3d_g(x5, w2, bias, has_bias, g, JIT_OWN_MACS).reshape((N, M, o0, o1, o2))
    return finish(y, X, Y, BN)


@onnx_op(
    "Conv",
    inputs=("X", "W", "B"),
    optional=("B",),
    attributes=CONV_ATTRS,
    since=1,
    prepare=prepare_conv,
    jit=conv_jit,
)
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
    key = geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides)
    y = conv_float(Xf, np.asarray(W, dtype=Xf.dtype), B, key, "Conv")
    return (y if y.dtype == dt else y.astype(dt),)
