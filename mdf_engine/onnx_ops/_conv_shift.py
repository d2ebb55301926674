"""Direct convolution without im2col (issue 22, goal 5): the bodies of the "shifted plane"
kernel that :mod:`.conv` uses for every Conv that is not depthwise-like, tiny or a plain 1x1 (any kernel
size, strides, dilations, pads, groups; 1-D to 3-D lifted to 3-D), and the 1x1 product by the
same vector tiles.

With stride 1, output pixel ``(z, i, q)`` reads input ``(z + a*d0, i + b*d1, q + e*d2)`` of the
zero-padded input for tap ``(a, b, e)``. Laid out flat, with the padded plane's row width
``Wp`` and plane size ``Hp * Wp``, output position ``t = (z * Hp + i) * Wp + q`` reads the
padded input at ``t + off(a, b, e)`` where ``off = a*d0*Hp*Wp + b*d1*Wp + e*d2``: every tap of
every channel is one contiguous slice of the padded input, shifted. With strides ``s`` the
padded input is first split into ``s0 * s1 * s2`` phases (``P[p][zq, iq, jq] = xpad[zq*s0 + p0,
iq*s1 + p1, jq*s2 + p2]``, :func:`phase_into`): tap ``(a, b, e)`` then reads phase ``(a*d0 %
s0, b*d1 % s1, e*d2 % s2)`` shifted by ``(a*d0 // s0, b*d1 // s1, e*d2 // s2)``, again one
contiguous slice (no multiply-add is wasted on the stride). The convolution is then a product
of the filters ``(M, cg * taps)`` with those slices, computed by the register-blocked vector
tiles of :mod:`._conv_simd` (4 filters x 64 float32 positions per group, the sums in registers
across every channel and tap, one fused multiply-add per term in the input's dtype: float32
stays float32, as onnxruntime accumulates) into a buffer of a few rows whose input stays in L2;
the columns ``q >= ow`` (and rows ``i >= oh``) of the grid are computed and dropped (``Wp /
ow`` extra work: 1.04-1.15 on SqueezeNet's and the small CNN's layers). Each output value is the
bias plus the sum over (channel, tap) in that order.

The work is cut into items (a block of four filters, or one, over one chunk of positions of
one image and group: :func:`shift_item`, :func:`pointwise_item`); :mod:`._conv_threads` runs
the items in order on the calling thread or shares them among threads (each output is computed
by one item, the same way either way), and holds the kernels' entry points (``conv_shift``,
``conv_pointwise_tiles``).
"""

from __future__ import annotations

import numba
import numpy as np

from ._conv_simd import VEC_BYTES, WIDE, tile_1_1, tile_1_wide, tile_4_1, tile_4_wide
from ._im2col import U

#: Input values (all channels of a group) that one chunk of padded positions reads, about: the
#: chunk's slice of the padded input stays in L2 while every filter runs over it.
CHUNK_INPUT = 1 << 17


@numba.njit(cache=True)
def phase_into(out, x, n, c0, cg, s, pb, Q):
    """Channels ``c0 .. c0 + cg`` of image ``n`` of ``x`` (N, C, D, H, W), zero-padded with
    ``pb`` before each axis and split by the strides ``s`` into ``s0 * s1 * s2`` phases, written
    into the flat ``out``: ``out[((p0 * s1 + p1) * s2 + p2) * cg + c, zq, iq, jq] = xpad[c, zq*s0
    + p0, iq*s1 + p1, jq*s2 + p2]`` with each phase plane of shape ``Q`` (Dq, Hq, Wq), then
    zeros to the end of ``out`` (what the vector tiles of :mod:`._conv_simd` read past the last
    position). With strides 1 it is the zero-padded input."""
    D, H, W = x.shape[2], x.shape[3], x.shape[4]
    C = x.shape[1]
    out[:] = 0
    xf = x.reshape(-1)
    if s[0] == 1 and s[1] == 1 and s[2] == 1:  # (one phase: the padded input, row by row)
        j0 = pb[2]
        j1 = min(Q[2], W + pb[2])
        z0, z1 = max(pb[0], 0), min(Q[0], D + pb[0])
        i0, i1 = max(pb[1], 0), min(Q[1], H + pb[1])
        for c in range(cg):
            for zq in range(z0, z1):
                for iq in range(i0, i1):
                    src = (((n * C + c0 + c) * D + zq - pb[0]) * H + iq - pb[1]) * W - pb[2]
                    dst = ((c * Q[0] + zq) * Q[1] + iq) * Q[2]
                    for jq in range(j0, j1):
                        out[U(dst + jq)] = xf[U(src + jq)]
        return
    ph = 0
    for p0 in range(s[0]):
        for p1 in range(s[1]):
            for p2 in range(s[2]):
                # the phase's first column inside the input, and how many follow
                j0 = 0 if p2 >= pb[2] else (pb[2] - p2 + s[2] - 1) // s[2]
                j1 = min(Q[2], (W + pb[2] - p2 + s[2] - 1) // s[2])
                for c in range(cg):
                    for zq in range(Q[0]):
                        z = zq * s[0] + p0 - pb[0]
                        if z < 0 or z >= D:
                            continue
                        for iq in range(Q[1]):
                            i = iq * s[1] + p1 - pb[1]
                            if i < 0 or i >= H:
                                continue
                            src = (((n * C + c0 + c) * D + z) * H + i) * W + p2 - pb[2]
                            dst = (((ph * cg + c) * Q[0] + zq) * Q[1] + iq) * Q[2]
                            if s[2] == 1:
                                for jq in range(j0, j1):
                                    out[U(dst + jq)] = xf[U(src + jq)]
                            else:
                                for jq in range(j0, j1):
                                    out[U(dst + jq)] = xf[U(src + jq * s[2])]
                ph += 1


@numba.njit(cache=True)
def _filters(xp, offs, w, acc, bias, m, nf, K, t0, tc):
    """``acc[f, :tc] = sum_r w[m + f, r] * xp[t0 + offs[r] + t] + bias[m + f]`` for ``nf`` (4 or 1) filters
    by the tiles of :mod:`._conv_simd`: groups of :data:`~._conv_simd.WIDE` vectors, then
    single vectors for the rest (``acc`` holds up to one vector more than ``tc``)."""
    vl = VEC_BYTES // xp.itemsize
    gw = WIDE * vl
    nw = tc // gw
    n1 = (tc - nw * gw + vl - 1) // vl
    if nf == 4:
        if nw > 0:
            tile_4_wide(xp, offs, w, acc, bias, m, 0, K, t0, 0, nw)
        if n1 > 0:
            tile_4_1(xp, offs, w, acc, bias, m, 0, K, t0 + nw * gw, nw * gw, n1)
    else:
        if nw > 0:
            tile_1_wide(xp, offs, w, acc, bias, m, 0, K, t0, 0, nw)
        if n1 > 0:
            tile_1_1(xp, offs, w, acc, bias, m, 0, K, t0 + nw * gw, nw * gw, n1)


@numba.njit(cache=True, inline="always")
def relu_value(v):
    """ONNX Relu of one value, as the engine's Relu computes it (``onnx_ops.activations``:
    ``v`` when above zero, else ``v * 0``, so -0.0 and NaN pass as they do there)."""
    return v if v > 0 else v * 0


@numba.njit(cache=True)
def filter_blocks(mg):
    """Blocks of filters of a group of ``mg``: ``mg // 4`` of four filters, then one block per
    filter left over (block ``b`` starts at filter :func:`block_start`)."""
    return mg // 4 + mg % 4


@numba.njit(cache=True)
def block_start(b, mg):
    """The first filter (within its group) of block ``b`` and its filter count (4 or 1)."""
    nq = mg // 4
    if b < nq:
        return 4 * b, 4
    return 4 * nq + b - nq, 1


@numba.njit(cache=True)
def shift_layout(x, group, k, s, d, pb, o):
    """The layout of :func:`shift_items` for ``x`` (N, C, D, H, W), ``group`` and the geometry
    ``k, s, d, pb, o``: the phase planes' shape ``Q``, each filter row's offset into the
    phase-split input (``offs``, in (channel, tap) order), the grid positions ``T`` up to the
    last output pixel and the padded rows per chunk (``rows``)."""
    cg = x.shape[1] // group
    K = cg * k[0] * k[1] * k[2]
    # each phase plane: the output grid plus the taps' reach in that phase
    Q = np.empty(3, dtype=np.int64)
    for ax in range(3):
        Q[ax] = o[ax] + (k[ax] - 1) * d[ax] // s[ax]
    if s[2] == 1:
        # rows share their padding columns: a tap reaching past the end of a row reads the
        # next row's first columns, zeros as long as the reach beyond the row is at most the
        # left pad (the 13x13 layers of SqueezeNet: 14 columns a row instead of 15)
        W = x.shape[4]
        Q[2] = max(pb[2] + W, o[2] + (k[2] - 1) * d[2] - pb[2], o[2])
    Hq, Wq = Q[1], Q[2]
    plane = Q[0] * Hq * Wq
    # each tap's phase and shift, worked out once (not once per channel: integer divisions)
    taps = k[0] * k[1] * k[2]
    tph = np.empty(taps, dtype=np.int64)
    tsh = np.empty(taps, dtype=np.int64)
    r = 0
    for a in range(k[0]):
        za = a * d[0]
        for b in range(k[1]):
            yb = b * d[1]
            for e in range(k[2]):
                xe = e * d[2]
                tph[r] = ((za % s[0]) * s[1] + yb % s[1]) * s[2] + xe % s[2]
                tsh[r] = ((za // s[0]) * Hq + yb // s[1]) * Wq + xe // s[2]
                r += 1
    offs = np.empty(K, dtype=np.int64)
    for c in range(cg):
        for t in range(taps):
            offs[c * taps + t] = (tph[t] * cg + c) * plane + tsh[t]
    # the last position of the grid that is an output pixel, plus one
    T = ((o[0] - 1) * Hq + o[1] - 1) * Wq + o[2]
    nph = s[0] * s[1] * s[2]
    rows = max(1, min((T + Wq - 1) // Wq, CHUNK_INPUT // (nph * cg * Wq)))
    return Q, offs, T, rows


@numba.njit(cache=True)
def shift_items_count(N, group, mg, T, rows, Wq):
    """Items of :func:`shift_item`: images x groups x chunks of positions x filter blocks."""
    return N * group * ((T + rows * Wq - 1) // (rows * Wq)) * filter_blocks(mg)


@numba.njit(cache=True)
def item_run(xps, offs, w, bias, acc, group, mg, Q, T, rows, item):
    """The sums of item ``item`` of :func:`shift_item` into ``acc``; returns where they go:
    the image ``n``, group ``g``, first filter ``m`` (within the group) and filter count
    ``nf`` of its block, and its positions ``t0 .. t0 + tc`` of the grid."""
    blocks = filter_blocks(mg)
    step = rows * Q[2]
    chunks = (T + step - 1) // step
    b = item % blocks
    c = item // blocks
    ng = c // chunks
    t0 = (c - ng * chunks) * step
    tc = min(step, T - t0)
    n = ng // group
    g = ng - n * group
    m, nf = block_start(b, mg)
    _filters(xps[ng], offs, w, acc, bias, g * mg + m, nf, offs.size, t0, tc)
    return n, g, m, nf, t0, tc


@numba.njit(cache=True)
def shift_item(xps, offs, w, bias, of, rf, acc, group, mg, o, Q, T, rows, item):
    """Item ``item`` of a convolution by shifted slices (see the module docstring): block ``b``
    (:func:`block_start`) of the filters of group ``g`` over chunk ``c`` of the positions
    (``rows`` padded rows) of image ``n``, items counted in the order (n, g, c, b), so that in
    that order every block of a chunk runs over it while it is in L2. ``xps[n * group + g]``
    is that image's and group's phase-split input (:func:`phase_into`), ``w`` (M, K) the
    filters, ``of`` the flat (N, M, od, oh, ow) output, ``rf`` the same for its Relu
    (:func:`relu_value`; empty: none), ``acc`` a (4, ``rows * Q[2]`` + one vector) buffer of
    the calling thread; the layout is :func:`shift_layout`'s."""
    M = w.shape[0]
    Hq, Wq = Q[1], Q[2]
    n, g, m, nf, t0, tc = item_run(xps, offs, w, bias, acc, group, mg, Q, T, rows, item)
    for j in range(nf):
        aj = acc[j]
        base = (n * M + g * mg + m + j) * o[0] * o[1] * o[2]
        for rho in range(t0 // Wq, (t0 + tc + Wq - 1) // Wq):
            z = rho // Hq
            i = rho - z * Hq
            if i >= o[1]:
                continue
            src = rho * Wq - t0
            dst = base + (z * o[1] + i) * o[2]
            if rf.size > 0:
                for q in range(o[2]):
                    v = aj[U(src + q)]
                    of[U(dst + q)] = v
                    rf[U(dst + q)] = relu_value(v)
            else:
                for q in range(o[2]):
                    of[U(dst + q)] = aj[U(src + q)]


@numba.njit(cache=True)
def pointwise_items_count(N, M, P, chunk):
    """Items of :func:`pointwise_item`: images x chunks of pixels x filter blocks."""
    return N * ((P + chunk - 1) // chunk) * filter_blocks(M)


@numba.njit(cache=True)
def pointwise_item(xf, offs, w, acc, rf, bias, P, chunk, item):
    """Item ``item`` of a 1x1 convolution by the vector tiles (``conv_pointwise_tiles`` in
    :mod:`._conv_threads`): block ``b`` (:func:`block_start`) of the filters ``w`` (M, C) over
    chunk ``c`` of ``chunk`` pixels (a multiple of the wide tiles) of image ``n``, items counted
    in the order (n, c, b), so that every block runs over a chunk while it is in L2. The input
    ``xf`` is flat (channel ``ch`` of pixel ``t`` at ``(n * C + ch) * P + t``, ``offs`` = ``ch
    * P``); the values go into ``acc`` (N * M, P) and, unless ``rf`` is empty, their Relu into
    ``rf`` (the same shape); ``bias`` (M,). A last partial vector is computed as the vector
    ending at the last pixel (it overlaps the one before, whose values it writes again, equal:
    the same sums in the same order), so that nothing is read past the input."""
    M, C = w.shape
    vl = VEC_BYTES // xf.itemsize
    gw = WIDE * vl
    blocks = filter_blocks(M)
    chunks = (P + chunk - 1) // chunk
    b = item % blocks
    c = item // blocks
    n = c // chunks
    p0 = (c - n * chunks) * chunk
    pc = min(chunk, P - p0)
    nw = pc // gw
    n1 = (pc - nw * gw) // vl
    rest = pc - nw * gw - n1 * vl
    t0 = n * C * P + p0
    m, nf = block_start(b, M)
    r = n * M + m
    if nf == 4:
        if nw > 0:
            tile_4_wide(xf, offs, w, acc, bias, m, r, C, t0, p0, nw)
        if n1 > 0:
            tile_4_1(xf, offs, w, acc, bias, m, r, C, t0 + nw * gw, p0 + nw * gw, n1)
        if rest > 0:
            tile_4_1(xf, offs, w, acc, bias, m, r, C, t0 + pc - vl, p0 + pc - vl, 1)
    else:
        if nw > 0:
            tile_1_wide(xf, offs, w, acc, bias, m, r, C, t0, p0, nw)
        if n1 > 0:
            tile_1_1(xf, offs, w, acc, bias, m, r, C, t0 + nw * gw, p0 + nw * gw, n1)
        if rest > 0:
            tile_1_1(xf, offs, w, acc, bias, m, r, C, t0 + pc - vl, p0 + pc - vl, 1)
    if rf.size > 0:
        for j in range(nf):
            for t in range(p0, p0 + pc):
                rf[r + j, t] = relu_value(acc[r + j, t])


@numba.njit(cache=True)
def shift_prepare(x, M, group, k, s, d, pb, o):
    """What the items of a convolution by shifted slices of ``x`` (N, C, D, H, W) into ``M``
    filters read, made on the calling thread for every way of running them (the threads of
    ``_conv_threads``, a compiled slot, the BatchNormalization epilogue of ``_conv_bn``): the
    phase-split input ``xps`` (:func:`phase_into`, one row per image and group), the layout
    ``offs, Q, T, rows`` (:func:`shift_layout`), the item count and the width of an
    accumulator row (a thread's ``acc`` is (4, width))."""
    N, C = x.shape[0], x.shape[1]
    cg = C // group
    Q, offs, T, rows = shift_layout(x, group, k, s, d, pb, o)
    vl = VEC_BYTES // x.itemsize
    nph = s[0] * s[1] * s[2]
    xps = np.empty((N * group, nph * cg * Q[0] * Q[1] * Q[2] + WIDE * vl + pb[2]), dtype=x.dtype)
    for n in range(N):
        for gi in range(group):
            phase_into(xps[n * group + gi], x, n, gi * cg, cg, s, pb, Q)
    total = shift_items_count(N, group, M // group, T, rows, Q[2])
    return xps, offs, Q, T, rows, total, rows * Q[2] + vl


@numba.njit(cache=True)
def shift_setup(x, w, g):
    """:func:`shift_prepare` for the filters ``w`` (M, K) and the geometry array ``g`` of
    ``conv._conv_geometry``, with the calling thread's accumulator buffer."""
    k, s, d, pb, o = g[0:3], g[3:6], g[6:9], g[9:12], g[12:15]
    xps, offs, Q, T, rows, total, width = shift_prepare(x, w.shape[0], g[15], k, s, d, pb, o)
    acc = np.empty((4, width), dtype=x.dtype)
    return xps, offs, Q, T, rows, total, acc


@numba.njit(cache=True)
def conv_shift_into(x, w, bias, g, y):
    """The convolution by shifted slices of ``x`` (N, C, D, H, W) (geometry array ``g`` of
    ``conv._conv_geometry``; ``w`` (M, K), ``bias`` (M,) in x's dtype) written straight into
    ``y``, a C-contiguous array of the output's size (a compiled value's slot): the items of
    ``_conv_threads.conv_shift`` run in the same order on the calling thread, so the values
    are bit for bit that kernel's."""
    group, o = g[15], g[12:15]
    M = w.shape[0]
    if y.size != x.shape[0] * M * o[0] * o[1] * o[2]:
        raise ValueError("a value of another shape than its compiled slot")
    xps, offs, Q, T, rows, total, acc = shift_setup(x, w, g)
    wc = np.ascontiguousarray(w)
    bc = np.ascontiguousarray(bias)
    of = y.reshape(-1)
    rf = np.empty(0, dtype=x.dtype)
    for i in range(total):
        shift_item(xps, offs, wc, bc, of, rf, acc, group, M // group, o, Q, T, rows, i)
    return y


@numba.njit(cache=True)
def into_slot(y, Y):
    """``y``, or (given ``Y``, a compiled value's slot of y's size) ``Y`` with y copied into it."""
    if Y is None:
        return y
    if Y.size != y.size:
        raise ValueError("a value of another shape than its compiled slot")
    yf, Yf = y.reshape(-1), Y.reshape(-1)
    for i in range(yf.size):
        Yf[i] = yf[i]
    return Y


#: Above this many multiply-adds per image and group, im2col and a BLAS product (which may run
#: on several threads) take a convolution; below it this kernel does, at any stride: on one
#: thread it is faster than im2col + BLAS on every convolution of SqueezeNet and of the small
#: CNN (0.6-0.8x their time, docs/performance.md, helper convk).
SHIFT_MAX_MACS = 1 << 30


@numba.njit(cache=True)
def use_shift(g, macs) -> bool:
    """Whether a convolution of geometry ``g`` (see ``conv._conv_geometry``) and ``macs``
    multiply-adds per image and group runs by ``_conv_threads.conv_shift``: at most
    :data:`SHIFT_MAX_MACS`, and not a 1x1 convolution without stride or padding (one matrix
    product per image, ``conv.conv_pointwise``)."""
    if macs > SHIFT_MAX_MACS:
        return False
    for i in range(6):
        if g[i] != 1:
            return True
    return g[9] + g[10] + g[11] > 0
