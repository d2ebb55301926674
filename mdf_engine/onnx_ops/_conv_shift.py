"""Direct convolution for stride 1 without im2col (issue 22, goal 5): the "shifted plane" kernel
that :mod:`.conv` uses for every Conv whose strides are all 1 (any kernel size, dilations,
pads, groups; 1-D to 3-D lifted to 3-D).

With stride 1, output pixel ``(z, i, q)`` reads input ``(z + a*d0, i + b*d1, q + e*d2)`` of the
zero-padded input for tap ``(a, b, e)``. Laid out flat, with the padded plane's row width
``Wp`` and plane size ``Hp * Wp``, output position ``t = (z * Hp + i) * Wp + q`` reads the
padded input at ``t + off(a, b, e)`` where ``off = a*d0*Hp*Wp + b*d1*Wp + e*d2``: every tap of
every channel is one contiguous slice of the padded input, shifted. The convolution is then a
product of the filters ``(M, cg * taps)`` with those slices, accumulated in the input's dtype
(float32 stays float32, as onnxruntime accumulates) into a small buffer of a few padded rows
(it stays in L1), four filters and four taps per pass of a unit-stride loop that LLVM
vectorizes; the columns ``q >= ow`` (and rows ``i >= oh``) of the padded grid are computed
and dropped (``Wp / ow`` extra work, 1.06-1.13 for a 3x3 on 32 or 16 columns). Each output
value is the bias plus the sum over (channel, tap) in that order, four taps at a time.
"""

from __future__ import annotations

import numba
import numpy as np

from ._conv_simd import WIDE, tile_1_1, tile_1_wide, tile_4_1, tile_4_wide
from ._im2col import U

#: Input values (all channels of a group) that one chunk of padded positions reads, about: the
#: chunk's slice of the padded input stays in L2 while every filter runs over it.
CHUNK_INPUT = 1 << 17


@numba.njit(cache=True)
def pad_image(x, n, c0, cg, pb, Dp, Hp, Wp, slack=0):
    """Channels ``c0 .. c0 + cg`` of image ``n`` of ``x`` (N, C, D, H, W), zero-padded to
    (cg, Dp, Hp, Wp) with ``pb`` before each axis, as a flat array followed by ``slack``
    zeros (what the vector tiles of :mod:`._conv_simd` read past the last position)."""
    D, H, W = x.shape[2], x.shape[3], x.shape[4]
    out = np.zeros(cg * Dp * Hp * Wp + slack, dtype=x.dtype)
    xf = x.reshape(-1)
    C = x.shape[1]
    for c in range(cg):
        for z in range(D):
            zp = z + pb[0]
            if zp >= Dp:
                break
            for i in range(H):
                ip = i + pb[1]
                if ip >= Hp:
                    break
                src = (((n * C + c0 + c) * D + z) * H + i) * W
                dst = ((c * Dp + zp) * Hp + ip) * Wp + pb[2]
                m = min(W, Wp - pb[2])
                for q in range(m):
                    out[U(dst + q)] = xf[U(src + q)]
    return out


@numba.njit(cache=True)
def _filters(xp, offs, w, acc, m, nf, K, t0, tc):
    """``acc[f, :tc] = sum_r w[m + f, r] * xp[t0 + offs[r] + t]`` for ``nf`` (4 or 1) filters
    by the tiles of :mod:`._conv_simd`: groups of :data:`~._conv_simd.WIDE` vectors, then
    single vectors for the rest (``acc`` holds up to one vector more than ``tc``)."""
    vl = 64 // xp.itemsize
    gw = WIDE * vl
    nw = tc // gw
    n1 = (tc - nw * gw + vl - 1) // vl
    if nf == 4:
        if nw > 0:
            tile_4_wide(xp, offs, w, acc, m, K, t0, 0, nw)
        if n1 > 0:
            tile_4_1(xp, offs, w, acc, m, K, t0 + nw * gw, nw * gw, n1)
    else:
        if nw > 0:
            tile_1_wide(xp, offs, w, acc, m, K, t0, 0, nw)
        if n1 > 0:
            tile_1_1(xp, offs, w, acc, m, K, t0 + nw * gw, nw * gw, n1)


@numba.njit(cache=True)
def conv_shift(x, w, bias, group, k, d, pb, o):
    """Stride-1 grouped convolution of ``x`` (N, C, D, H, W) by the filters ``w``
    (M, C/group * kd*kh*kw) plus ``bias`` (M,), with dilations ``d``, pads ``pb`` before each
    axis and output shape ``o`` (see the module docstring). Returns (N, M, od, oh, ow) in x's
    dtype."""
    N, C = x.shape[0], x.shape[1]
    M = w.shape[0]
    cg = C // group
    mg = M // group
    taps = k[0] * k[1] * k[2]
    K = cg * taps
    Dp = o[0] + (k[0] - 1) * d[0]
    Hp = o[1] + (k[1] - 1) * d[1]
    Wp = o[2] + (k[2] - 1) * d[2]
    plane = Dp * Hp * Wp
    offs = np.empty(K, dtype=np.int64)
    r = 0
    for c in range(cg):
        for a in range(k[0]):
            for b in range(k[1]):
                for e in range(k[2]):
                    offs[r] = c * plane + (a * d[0] * Hp + b * d[1]) * Wp + e * d[2]
                    r += 1
    # the last position of the grid that is an output pixel, plus one
    T = ((o[0] - 1) * Hp + o[1] - 1) * Wp + o[2]
    vl = 64 // x.itemsize
    rows = max(1, min((T + Wp - 1) // Wp, CHUNK_INPUT // (cg * Wp)))
    wc = np.ascontiguousarray(w)
    out = np.empty((N, M, o[0], o[1], o[2]), dtype=x.dtype)
    of = out.reshape(-1)
    acc = np.empty((4, rows * Wp + vl), dtype=x.dtype)
    for n in range(N):
        for g in range(group):
            xp = pad_image(x, n, g * cg, cg, pb, Dp, Hp, Wp, WIDE * vl)
            for t0 in range(0, T, rows * Wp):
                tc = min(rows * Wp, T - t0)
                m = 0
                while m < mg:
                    nf = 4 if m + 4 <= mg else 1
                    _filters(xp, offs, wc, acc, g * mg + m, nf, K, t0, tc)
                    for j in range(nf):
                        mm = g * mg + m + j
                        bv = bias[mm]
                        aj = acc[j]
                        base = (n * M + mm) * o[0] * o[1] * o[2]
                        for rho in range(t0 // Wp, (t0 + tc + Wp - 1) // Wp):
                            z = rho // Hp
                            i = rho - z * Hp
                            if i >= o[1]:
                                continue
                            src = rho * Wp - t0
                            dst = base + (z * o[1] + i) * o[2]
                            for q in range(o[2]):
                                of[U(dst + q)] = aj[U(src + q)] + bv
                    m += nf
    return out


@numba.njit(cache=True)
def conv_shift_g(x, w, bias, g):
    """:func:`conv_shift` with the geometry array of ``conv._conv_geometry`` (strides 1)."""
    return conv_shift(x, w, bias, g[15], g[0:3], g[6:9], g[9:12], g[12:15])


#: Above this many multiply-adds per image and group, im2col and a BLAS product are faster on
#: one thread (SqueezeNet's 3x3 expand convolutions, 5-28 M: 0.39-0.81 ms against 0.53-1.1 ms
#: here); below it this kernel is (the small CNN's 16->32 3x3 on 16x16, 1.2 M: 39 us against
#: 56 us by im2col and the own product).
SHIFT_MAX_MACS = 1 << 22


@numba.njit(cache=True)
def use_shift(g, macs) -> bool:
    """Whether a convolution of geometry ``g`` (see ``conv._conv_geometry``) and ``macs``
    multiply-adds per image and group runs by :func:`conv_shift`: every stride 1, at most
    :data:`SHIFT_MAX_MACS`, and more than one tap (a 1x1 without padding is one matrix
    product per image, ``conv.conv_pointwise``)."""
    if g[3] != 1 or g[4] != 1 or g[5] != 1 or macs > SHIFT_MAX_MACS:
        return False
    return g[0] * g[1] * g[2] > 1 or g[9] + g[10] + g[11] > 0
