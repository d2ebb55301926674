"""Direct convolution without im2col (issue 22, goal 5): the "shifted plane" kernel that
:mod:`.conv` uses for every Conv that is not depthwise-like, tiny or a plain 1x1 (any kernel
size, strides, dilations, pads, groups; 1-D to 3-D lifted to 3-D), and the 1x1 product by the
same vector tiles.

With stride 1, output pixel ``(z, i, q)`` reads input ``(z + a*d0, i + b*d1, q + e*d2)`` of the
zero-padded input for tap ``(a, b, e)``. Laid out flat, with the padded plane's row width
``Wp`` and plane size ``Hp * Wp``, output position ``t = (z * Hp + i) * Wp + q`` reads the
padded input at ``t + off(a, b, e)`` where ``off = a*d0*Hp*Wp + b*d1*Wp + e*d2``: every tap of
every channel is one contiguous slice of the padded input, shifted. With strides ``s`` the
padded input is first split into ``s0 * s1 * s2`` phases (``P[p][zq, iq, jq] = xpad[zq*s0 + p0,
iq*s1 + p1, jq*s2 + p2]``, :func:`phase_image`): tap ``(a, b, e)`` then reads phase ``(a*d0 %
s0, b*d1 % s1, e*d2 % s2)`` shifted by ``(a*d0 // s0, b*d1 // s1, e*d2 // s2)``, again one
contiguous slice (no multiply-add is wasted on the stride). The convolution is then a product
of the filters ``(M, cg * taps)`` with those slices, computed by the register-blocked vector
tiles of :mod:`._conv_simd` (4 filters x 64 float32 positions per group, the sums in registers
across every channel and tap, one fused multiply-add per term in the input's dtype: float32
stays float32, as onnxruntime accumulates) into a buffer of a few rows whose input stays in L2;
the columns ``q >= ow`` (and rows ``i >= oh``) of the grid are computed and dropped (``Wp /
ow`` extra work: 1.04-1.15 on SqueezeNet's and the small CNN's layers). Each output value is the
bias plus the sum over (channel, tap) in that order.
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
def phase_image(x, n, c0, cg, s, pb, Q, slack):
    """Channels ``c0 .. c0 + cg`` of image ``n`` of ``x`` (N, C, D, H, W), zero-padded with
    ``pb`` before each axis and split by the strides ``s`` into ``s0 * s1 * s2`` phases: flat,
    ``P[((p0 * s1 + p1) * s2 + p2) * cg + c, zq, iq, jq] = xpad[c, zq*s0 + p0, iq*s1 + p1,
    jq*s2 + p2]`` with each phase plane of shape ``Q`` (Dq, Hq, Wq), then ``slack`` zeros (what
    the vector tiles of :mod:`._conv_simd` read past the last position). With strides 1 it is
    the zero-padded input."""
    D, H, W = x.shape[2], x.shape[3], x.shape[4]
    C = x.shape[1]
    plane = Q[0] * Q[1] * Q[2]
    out = np.zeros(s[0] * s[1] * s[2] * cg * plane + slack, dtype=x.dtype)
    xf = x.reshape(-1)
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
    return out


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


@numba.njit(cache=True)
def conv_shift(x, w, bias, group, k, s, d, pb, o):
    """Grouped convolution of ``x`` (N, C, D, H, W) by the filters ``w`` (M, C/group *
    kd*kh*kw) plus ``bias`` (M,), with strides ``s``, dilations ``d``, pads ``pb`` before each
    axis and output shape ``o`` (see the module docstring). Returns (N, M, od, oh, ow) in x's
    dtype."""
    N, C = x.shape[0], x.shape[1]
    M = w.shape[0]
    cg = C // group
    mg = M // group
    taps = k[0] * k[1] * k[2]
    K = cg * taps
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
    Dq, Hq, Wq = Q[0], Q[1], Q[2]
    plane = Dq * Hq * Wq
    offs = np.empty(K, dtype=np.int64)
    r = 0
    for c in range(cg):
        for a in range(k[0]):
            za = a * d[0]
            for b in range(k[1]):
                yb = b * d[1]
                for e in range(k[2]):
                    xe = e * d[2]
                    ph = ((za % s[0]) * s[1] + yb % s[1]) * s[2] + xe % s[2]
                    shift = ((za // s[0]) * Hq + yb // s[1]) * Wq + xe // s[2]
                    offs[r] = (ph * cg + c) * plane + shift
                    r += 1
    # the last position of the grid that is an output pixel, plus one
    T = ((o[0] - 1) * Hq + o[1] - 1) * Wq + o[2]
    vl = VEC_BYTES // x.itemsize
    nph = s[0] * s[1] * s[2]
    rows = max(1, min((T + Wq - 1) // Wq, CHUNK_INPUT // (nph * cg * Wq)))
    wc = np.ascontiguousarray(w)
    bc = np.ascontiguousarray(bias)
    out = np.empty((N, M, o[0], o[1], o[2]), dtype=x.dtype)
    of = out.reshape(-1)
    acc = np.empty((4, rows * Wq + vl), dtype=x.dtype)
    for n in range(N):
        for g in range(group):
            xp = phase_image(x, n, g * cg, cg, s, pb, Q, WIDE * vl + pb[2])
            for t0 in range(0, T, rows * Wq):
                tc = min(rows * Wq, T - t0)
                m = 0
                while m < mg:
                    nf = 4 if m + 4 <= mg else 1
                    _filters(xp, offs, wc, acc, bc, g * mg + m, nf, K, t0, tc)
                    for j in range(nf):
                        mm = g * mg + m + j
                        aj = acc[j]
                        base = (n * M + mm) * o[0] * o[1] * o[2]
                        for rho in range(t0 // Wq, (t0 + tc + Wq - 1) // Wq):
                            z = rho // Hq
                            i = rho - z * Hq
                            if i >= o[1]:
                                continue
                            src = rho * Wq - t0
                            dst = base + (z * o[1] + i) * o[2]
                            for q in range(o[2]):
                                of[U(dst + q)] = aj[U(src + q)]
                    m += nf
    return out


@numba.njit(cache=True)
def conv_shift_g(x, w, bias, g):
    """:func:`conv_shift` with the geometry array of ``conv._conv_geometry`` (strides 1)."""
    return conv_shift(x, w, bias, g[15], g[0:3], g[3:6], g[6:9], g[9:12], g[12:15])


@numba.njit(cache=True)
def conv_pointwise_tiles(x, w, bias, has_bias):
    """A 1x1 convolution without stride or padding by the vector tiles of :mod:`._conv_simd`:
    per image ``n`` of ``x`` (N, C, P) the product of the filters ``w`` (M, C) with ``x[n]``
    (C, P), read in place (channel ``c`` of pixel ``t`` at ``c * P + t``), written straight
    into the output's rows, the bias added in registers. The pixels run in chunks whose input
    stays in L2; a last partial vector is computed as the vector ending at the last pixel (it
    overlaps the one before, whose values it writes again, equal: the same sums in the same
    order), so that nothing is read past the input. Returns (N, M, P) in x's dtype."""
    N, C, P = x.shape
    M = w.shape[0]
    out = np.empty((N, M, P), dtype=x.dtype)
    vl = VEC_BYTES // x.itemsize
    gw = WIDE * vl
    if P < vl:  # too narrow for a vector: plain loops
        for n in range(N):
            for m in range(M):
                for t in range(P):
                    s = x.dtype.type(0)
                    for c in range(C):
                        s += w[m, c] * x[n, c, t]
                    out[n, m, t] = s + bias[m] if has_bias else s
        return out
    xf = x.reshape(-1)
    acc = out.reshape((N * M, P))
    wc = np.ascontiguousarray(w)
    bc = np.ascontiguousarray(bias) if has_bias else np.zeros(M, dtype=x.dtype)
    offs = np.arange(C) * P
    chunk = max(gw, CHUNK_INPUT // C // gw * gw)
    for n in range(N):
        for p0 in range(0, P, chunk):
            pc = min(chunk, P - p0)
            nw = pc // gw
            n1 = (pc - nw * gw) // vl
            rest = pc - nw * gw - n1 * vl
            t0 = n * C * P + p0
            m = 0
            while m < M:
                r = n * M + m
                if m + 4 <= M:
                    if nw > 0:
                        tile_4_wide(xf, offs, wc, acc, bc, m, r, C, t0, p0, nw)
                    if n1 > 0:
                        tile_4_1(xf, offs, wc, acc, bc, m, r, C, t0 + nw * gw, p0 + nw * gw, n1)
                    if rest > 0:
                        tile_4_1(xf, offs, wc, acc, bc, m, r, C, t0 + pc - vl, p0 + pc - vl, 1)
                    nf = 4
                else:
                    if nw > 0:
                        tile_1_wide(xf, offs, wc, acc, bc, m, r, C, t0, p0, nw)
                    if n1 > 0:
                        tile_1_1(xf, offs, wc, acc, bc, m, r, C, t0 + nw * gw, p0 + nw * gw, n1)
                    if rest > 0:
                        tile_1_1(xf, offs, wc, acc, bc, m, r, C, t0 + pc - vl, p0 + pc - vl, 1)
                    nf = 1
                m += nf
    return out


#: Above this many multiply-adds per image and group, im2col and a BLAS product (which may run
#: on several threads) take a convolution; below it this kernel does, at any stride: on one
#: thread it is faster than im2col + BLAS on every convolution of SqueezeNet and of the small
#: CNN (0.6-0.8x their time, docs/performance.md, helper convk).
SHIFT_MAX_MACS = 1 << 30


@numba.njit(cache=True)
def use_shift(g, macs) -> bool:
    """Whether a convolution of geometry ``g`` (see ``conv._conv_geometry``) and ``macs``
    multiply-adds per image and group runs by :func:`conv_shift`: at most
    :data:`SHIFT_MAX_MACS`, and not a 1x1 convolution without stride or padding (one matrix
    product per image, ``conv.conv_pointwise``)."""
    if macs > SHIFT_MAX_MACS:
        return False
    for i in range(6):
        if g[i] != 1:
            return True
    return g[9] + g[10] + g[11] > 0
