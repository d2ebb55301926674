"""Pooling operators: ``AveragePool``, ``MaxPool`` (with ``Indices``), ``LpPool``,
``MaxUnpool``, the global pools, ``MaxRoiPool`` and ``RoiAlign``.

Windows (kernel, strides, dilations, pads / auto_pad, ceil_mode) are resolved by ``_spatial``;
1-D and 2-D inputs are lifted to 3-D. 1-D/2-D pools run in two separable passes (windows along
each row, then down the columns; MaxPool without Indices: down the columns, then along the
rows) whose interior windows are branch-free loops over flat arrays that LLVM vectorizes; 3-D
pools (and windows lying wholly in the padding) use one loop nest over ``(N, C, D, H, W)``.
1-D/2-D averages accumulate in the input's float type (as onnxruntime does), 3-D averages and
Lp norms in float64, cast back to the input dtype; MaxPool keeps the input dtype (floats, and
8-bit ints computed exactly in float32). MaxPool's window geometry is memoized per input shape
and attributes and handed to its kernels as one int array (see :func:`_maxpool_plan`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import as_array, onnx_op
from ._spatial import as5d, geometry_array, ints, lift3, unpack_geometry, window_geometry

#: Offsets into flat arrays are made unsigned: Numba then indexes without the negative-index
#: wraparound test that keeps LLVM from vectorizing a loop.
U = np.uint64


@numba.njit(cache=True)
def _maxpool3d(x, k, s, d, pb, o, storage_order, yf, idf, want_idx):
    """MaxPool of a (N, C, D, H, W) input by one loop nest, into the flat outputs ``yf`` and
    (with ``want_idx``) ``idf``. Serves 3-D pools and those with a window wholly in the
    padding (it gets the plane's first value and the index before the plane's first)."""
    N, C, D, H, W = x.shape
    y = yf.reshape((N, C, o[0], o[1], o[2]))
    idx = idf.reshape((N, C, o[0], o[1], o[2])) if want_idx else idf.reshape((1, 1, 1, 1, 1))
    for n in range(N):
        for c in range(C):
            base = (n * C + c) * D * H * W
            for i in range(o[0]):
                for j in range(o[1]):
                    for q in range(o[2]):
                        best = x[n, c, 0, 0, 0]
                        bi = -1
                        for a in range(k[0]):
                            zi = i * s[0] - pb[0] + a * d[0]
                            if zi < 0 or zi >= D:
                                continue
                            for b in range(k[1]):
                                yj = j * s[1] - pb[1] + b * d[1]
                                if yj < 0 or yj >= H:
                                    continue
                                for e in range(k[2]):
                                    xq = q * s[2] - pb[2] + e * d[2]
                                    if xq < 0 or xq >= W:
                                        continue
                                    v = x[n, c, zi, yj, xq]
                                    if bi < 0 or v > best:
                                        best = v
                                        if storage_order == 0:
                                            bi = (zi * H + yj) * W + xq
                                        else:
                                            bi = zi + D * (yj + H * xq)
                        y[n, c, i, j, q] = best
                        if want_idx:
                            idx[n, c, i, j, q] = base + bi


@numba.njit(cache=True)
def _span(n_out, k, s, d, pb, size):
    """Outputs ``[lo, hi)`` along an axis whose whole window (``k`` taps ``d`` apart from
    ``q * s - pb``) lies inside ``[0, size)``; the others are borders."""
    first = -pb
    lo = 0 if first >= 0 else (-first + s - 1) // s
    last = (k - 1) * d - pb
    hi = 0 if last >= size else (size - last + s - 1) // s
    lo = min(lo, n_out)
    return lo, max(min(hi, n_out), lo)


@numba.njit(cache=True)
def _clip_taps(start, k, d, size):
    """First and last+1 tap of a window from ``start`` inside ``[0, size)``."""
    a = 0
    while a < k and start + a * d < 0:
        a += 1
    b = k
    while b > a and start + (b - 1) * d >= size:
        b -= 1
    return a, b


@numba.njit(cache=True)
def _some_window_in_padding(k, s, d, pb, o, H, W):
    """Whether a 2-D window (rows of ``H``, columns of ``W``) lies wholly in the padding."""
    for q in range(o[2]):
        e0, e1 = _clip_taps(q * s[2] - pb[2], k[2], d[2], W)
        if e1 <= e0:
            return True
    for i in range(o[1]):
        b0, b1 = _clip_taps(i * s[1] - pb[1], k[1], d[1], H)
        if b1 <= b0:
            return True
    return False


@numba.njit(cache=True, inline="always")
def _maxpool2d_values(x, k, s, d, pb, o, yf, step):
    """MaxPool's values only (a node without the Indices output) of a (N, C, 1, H, W) input
    with no window wholly in the padding, into the flat ``yf``. Per output row: the maxima
    down the columns of its vertical window (whole input rows, unit stride, into a one-row
    buffer that stays in L1), then the windows along that buffer: the border ones clipped,
    the interior ones by one select loop. ``step`` is a constant of the caller: 1 or 2 for
    windows of at most three adjacent taps with that stride, read at literal offsets (LLVM
    vectorizes the strided loads as interleaved groups), 0 for any other window (three taps
    per pass, :func:`_row_max3`). Same select order as :func:`_maxpool2d_rows`.

    The row loop runs for every output row of every plane, so it is kept lean: tap ranges
    worked out beforehand, no array variable reassigned (reference counting), and only the
    code of one ``step`` (more code in the loop measurably slows it down)."""
    N, C, _, H, W = x.shape
    oh, ow = o[1], o[2]
    sh, dh = s[1], d[1]
    kw, sw, dw, pw = k[2], s[2], d[2], pb[2]
    r0s, r1s = _tap_ranges(oh, k[1], sh, dh, pb[1], H)
    c0s, c1s = _tap_ranges(ow, kw, sw, dw, pw, W)
    qa, qb = _span(ow, kw, sw, dw, pw, W)
    x0 = qa * sw - pw
    cv = np.empty(W, dtype=x.dtype)
    xf = x.reshape(-1)
    dW = dh * W
    none = np.empty(1, dtype=np.int64)
    for pl in range(N * C):
        base = pl * H * W
        for i in range(oh):
            b0 = r0s[i]
            nb = r1s[i] - b0
            r0 = base + (i * sh - pb[1] + b0 * dh) * W
            yr = (pl * oh + i) * ow
            if nb == 1:
                for t in range(W):
                    cv[U(t)] = xf[U(r0 + t)]
            elif nb == 2:
                for t in range(W):
                    a = xf[U(r0 + t)]
                    b = xf[U(r0 + dW + t)]
                    cv[U(t)] = b if b > a else a
            else:
                for t in range(W):
                    a = xf[U(r0 + t)]
                    b = xf[U(r0 + dW + t)]
                    c = xf[U(r0 + 2 * dW + t)]
                    m = b if b > a else a
                    cv[U(t)] = c if c > m else m
                for b in range(3, nb):   # taller windows: one row more per pass
                    ro = r0 + b * dW
                    for t in range(W):
                        a = xf[U(ro + t)]
                        m = cv[U(t)]
                        cv[U(t)] = a if a > m else m
            for q in range(qa):
                _border_window(yf, yr, cv, sw, dw, pw, q, c0s, c1s)
            for q in range(qb, ow):
                _border_window(yf, yr, cv, sw, dw, pw, q, c0s, c1s)
            if qb > qa:
                if step > 0:
                    _dense_windows(yf, yr + qa, cv, x0, step, kw, qb - qa)
                else:
                    for e in range(0, kw, 3):
                        e1 = e + 1 if e + 1 < kw else e
                        e2 = e + 2 if e + 2 < kw else e
                        _row_max3(yf, none, yr + qa, cv, x0 + e * dw, x0 + e1 * dw,
                                  x0 + e2 * dw, sw, 0, 0, 0, 0, qb - qa, e > 0, False)


@numba.njit(cache=True)
def _maxpool_y1(x, g, yf):
    """MaxPool values (see :func:`_maxpool2d_values`) of adjacent taps (at most three) with
    stride 1 into the flat ``yf``; ``g`` is a plan's geometry (see :func:`_maxpool_plan`)."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool2d_values(x, k, s, d, pb, o, yf, 1)


@numba.njit(cache=True)
def _maxpool_y2(x, g, yf):
    """:func:`_maxpool_y1` for stride 2."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool2d_values(x, k, s, d, pb, o, yf, 2)


@numba.njit(cache=True)
def _maxpool_y0(x, g, yf):
    """:func:`_maxpool_y1` for any other 2-D window."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool2d_values(x, k, s, d, pb, o, yf, 0)


@numba.njit(cache=True)
def _maxpool_yi(x, g, storage_order, yf, idf):
    """MaxPool values and flat indices of a 1-D/2-D input with no window wholly in the
    padding (:func:`_maxpool2d_rows`) into ``yf`` and ``idf``."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool2d_rows(x, k, s, d, pb, o, storage_order, yf, idf)


@numba.njit(cache=True)
def _maxpool_3d(x, g, storage_order, yf, idf, want_idx):
    """MaxPool of any other input (:func:`_maxpool3d`)."""
    k, s, d, pb, o = unpack_geometry(g)
    _maxpool3d(x, k, s, d, pb, o, storage_order, yf, idf, want_idx)


@numba.njit(cache=True)
def _tap_ranges(n_out, k, s, d, pb, size):
    """First and last+1 tap inside ``[0, size)`` of each window along an axis."""
    t0 = np.empty(n_out, dtype=np.int64)
    t1 = np.empty(n_out, dtype=np.int64)
    for i in range(n_out):
        t0[i], t1[i] = _clip_taps(i * s - pb, k, d, size)
    return t0, t1


@numba.njit(cache=True, inline="always")
def _border_window(yf, yr, src, sw, dw, pw, q, c0s, c1s):
    """``yf[yr + q]`` = the first maximum of the taps ``c0s[q]`` to ``c1s[q]`` of the
    window ``q`` of the row ``src``."""
    lo = q * sw - pw
    best = src[lo + c0s[q] * dw]
    for e in range(c0s[q] + 1, c1s[q]):
        v = src[lo + e * dw]
        best = v if v > best else best
    yf[yr + q] = best


@numba.njit(cache=True, inline="always")
def _dense_windows(dst, off, src, so, step, kw, n):
    """``dst[off + t]`` = the first maximum of the ``kw`` (at most 3) adjacent taps from
    ``src[so + t * step]``, for t < n (branch-free selects, unsigned offsets: see
    :data:`U`)."""
    if kw == 3:
        for t in range(n):
            j = so + t * step
            a = src[U(j)]
            b = src[U(j + 1)]
            c = src[U(j + 2)]
            r = b if b > a else a
            dst[U(off + t)] = c if c > r else r
    elif kw == 2:
        for t in range(n):
            j = so + t * step
            a = src[U(j)]
            b = src[U(j + 1)]
            dst[U(off + t)] = b if b > a else a
    else:
        for t in range(n):
            dst[U(off + t)] = src[U(so + t * step)]


@numba.njit(cache=True)
def _maxpool2d_rows(x, k, s, d, pb, o, storage_order, yf, idf):
    """MaxPool of a (N, C, 1, H, W) input in two passes: the maximum (and its flat index) of
    each horizontal window of every input row, then of each vertical window of those. The
    windows wholly inside the input run as branch-free select loops over the outputs, three
    taps per loop and no per-tap bounds test; the border windows are clipped.
    Picks the first maximum in row-major window order, like :func:`_maxpool3d`. Writes the
    flat outputs ``yf`` and ``idf``; no window may lie wholly in the padding."""
    N, C, _, H, W = x.shape
    oh, ow = o[1], o[2]
    kh, kw = k[1], k[2]
    sh, sw = s[1], s[2]
    dh, dw = d[1], d[2]
    rv = np.empty((H, ow), dtype=x.dtype)
    ri = np.empty((H, ow), dtype=np.int64)
    qa, qb = _span(ow, kw, sw, dw, pb[2], W)
    borders = list_borders(qa, qb, ow)
    # flat spatial index of (r, col): r * W + col, or r + H * col (storage_order=1)
    rstep = W if storage_order == 0 else 1
    cstep = 1 if storage_order == 0 else H
    nq = qb - qa
    x0 = qa * sw - pb[2]
    tstep = sw * cstep   # index step between neighbouring interior windows
    # flat arrays and offsets instead of row views (each view costs reference counting)
    xf = x.reshape(-1)
    rvf = rv.reshape(-1)
    rif = ri.reshape(-1)
    for pl in range(N * C):
        base = pl * H * W
        for r in range(H):
            ro = base + r * W
            rbase = base + r * rstep
            for q in borders:
                lo = q * sw - pb[2]
                e0, e1 = _clip_taps(lo, kw, dw, W)
                bx = lo + e0 * dw
                best = xf[ro + bx]
                for e in range(e0 + 1, e1):
                    v = xf[ro + lo + e * dw]
                    if v > best:
                        best = v
                        bx = lo + e * dw
                rvf[r * ow + q] = best
                rif[r * ow + q] = rbase + bx * cstep
            if nq > 0:
                i0 = rbase + x0 * cstep
                for e in range(0, kw, 3):
                    e1 = e + 1 if e + 1 < kw else e
                    e2 = e + 2 if e + 2 < kw else e
                    o0 = ro + x0 + e * dw
                    o1 = ro + x0 + e1 * dw
                    o2 = ro + x0 + e2 * dw
                    j0 = i0 + e * dw * cstep
                    j1 = i0 + e1 * dw * cstep
                    j2 = i0 + e2 * dw * cstep
                    dof = r * ow + qa
                    # a literal stride lets LLVM vectorize the (inlined) loop
                    if sw == 1:
                        _row_max3(rvf, rif, dof, xf, o0, o1, o2, 1, j0, j1, j2, tstep, nq,
                                  e > 0, True)
                    elif sw == 2:
                        _row_max3(rvf, rif, dof, xf, o0, o1, o2, 2, j0, j1, j2, tstep, nq,
                                  e > 0, True)
                    else:
                        _row_max3(rvf, rif, dof, xf, o0, o1, o2, sw, j0, j1, j2, tstep, nq,
                                  e > 0, True)
        for i in range(oh):
            top = i * sh - pb[1]
            b0, b1 = _clip_taps(top, kh, dh, H)
            yo = (pl * oh + i) * ow
            for b in range(b0, b1, 3):
                r0 = top + b * dh
                r1 = r0 + dh if b + 1 < b1 else r0
                r2 = r0 + 2 * dh if b + 2 < b1 else r0
                _col_max3(yf, idf, yo, rvf, rif, r0 * ow, r1 * ow, r2 * ow, ow, b > b0,
                          True)


@numba.njit(cache=True, inline="always")
def _row_max3(best, bidx, off, src, o0, o1, o2, step, i0, i1, i2, istep, n, update,
              want_idx):
    """For t < n: the first maximum of the taps ``src[o0/o1/o2 + t*step]`` (flat indices
    ``i0/i1/i2 + t*istep``), or of ``best[off + t]`` and those taps when ``update``, into
    ``best[off + t]``, ``bidx[off + t]``. Branch-free selects (random data would mispredict
    half of the branches); unsigned offsets, which Numba indexes without a negative-index
    wraparound test, so LLVM vectorizes the loop. Without ``want_idx`` (a constant in the
    caller) no index is computed."""
    for t in range(n):
        j = t * step
        a = src[U(o0 + j)]
        b = src[U(o1 + j)]
        c = src[U(o2 + j)]
        k = U(off + t)
        if not want_idx:
            m = best[k] if update else a
            m = a if a > m else m
            m = b if b > m else m
            best[k] = c if c > m else m
            continue
        o = t * istep
        if update:
            m = best[k]
            im = bidx[k]
            g = a > m
            m = a if g else m
            im = i0 + o if g else im
        else:
            m = a
            im = i0 + o
        g = b > m
        m = b if g else m
        im = i1 + o if g else im
        g = c > m
        best[k] = c if g else m
        bidx[k] = i2 + o if g else im


@numba.njit(cache=True, inline="always")
def _col_max3(best, bidx, off, vals, idxs, o0, o1, o2, n, update, want_idx):
    """:func:`_row_max3` down three unit-stride rows ``vals[o0/o1/o2 + t]`` whose indices are
    stored in ``idxs``."""
    if not want_idx:  # the values alone: the row loop with unit stride
        _row_max3(best, bidx, off, vals, o0, o1, o2, 1, 0, 0, 0, 0, n, update, False)
        return
    for t in range(n):
        a = vals[U(o0 + t)]
        b = vals[U(o1 + t)]
        c = vals[U(o2 + t)]
        k = U(off + t)
        ka = idxs[U(o0 + t)]   # every load unconditional, so that the choices are selects
        kb = idxs[U(o1 + t)]
        kc = idxs[U(o2 + t)]
        if update:
            m = best[k]
            im = bidx[k]
            g = a > m
            m = a if g else m
            im = ka if g else im
        else:
            m = a
            im = ka
        g = b > m
        m = b if g else m
        im = kb if g else im
        g = c > m
        best[k] = c if g else m
        bidx[k] = kc if g else im


@numba.njit(cache=True)
def list_borders(lo, hi, n):
    """The positions of ``[0, n)`` outside ``[lo, hi)`` (the border windows)."""
    out = np.empty(n - (hi - lo), dtype=np.int64)
    t = 0
    for q in range(lo):
        out[t] = q
        t += 1
    for q in range(hi, n):
        out[t] = q
        t += 1
    return out


@numba.njit(cache=True)
def _sumpool3d(x, k, s, d, pb, o, hi, count_include_pad, p):
    """Average (``p == 0``) or Lp (``p > 0``) pooling, accumulated in float64.

    ``hi`` is the end of the padded extent on each axis: with ``count_include_pad`` the divisor
    counts the taps inside ``[-pb, hi)``, else only the taps inside the input."""
    N, C, D, H, W = x.shape
    y = np.empty((N, C, o[0], o[1], o[2]), dtype=np.float64)
    for n in range(N):
        for c in range(C):
            for i in range(o[0]):
                for j in range(o[1]):
                    for q in range(o[2]):
                        acc = 0.0
                        cnt = 0
                        for a in range(k[0]):
                            zi = i * s[0] - pb[0] + a * d[0]
                            if zi >= hi[0]:
                                continue
                            zin = 0 <= zi < D
                            for b in range(k[1]):
                                yj = j * s[1] - pb[1] + b * d[1]
                                if yj >= hi[1]:
                                    continue
                                yin = zin and 0 <= yj < H
                                for e in range(k[2]):
                                    xq = q * s[2] - pb[2] + e * d[2]
                                    if xq >= hi[2]:
                                        continue
                                    if yin and 0 <= xq < W:
                                        v = float(x[n, c, zi, yj, xq])
                                        if p > 0:
                                            acc += abs(v) ** p
                                        else:
                                            acc += v
                                        cnt += 1
                                    elif count_include_pad:
                                        cnt += 1
                        if p > 0:
                            y[n, c, i, j, q] = acc ** (1.0 / p)
                        else:
                            y[n, c, i, j, q] = acc / cnt if cnt > 0 else np.nan
    return y


@numba.njit(cache=True)
def _axis_taps(n_out, k, s, d, pb, size, hi):
    """Per output position along one axis: first and last+1 tap inside ``[0, size)``, and the
    number of taps before ``hi`` (the padded end: the divisor with count_include_pad)."""
    t0 = np.empty(n_out, dtype=np.int64)
    t1 = np.empty(n_out, dtype=np.int64)
    npad = np.empty(n_out, dtype=np.int64)
    for i in range(n_out):
        lo = i * s - pb
        a = 0
        while a < k and lo + a * d < 0:
            a += 1
        b = k
        while b > a and lo + (b - 1) * d >= size:
            b -= 1
        t0[i] = a
        t1[i] = b
        c = 0
        for t in range(k):
            if lo + t * d < hi:
                c += 1
        npad[i] = c
    return t0, t1, npad


@numba.njit(cache=True)
def _window_plan(k, s, d, pb, o, hi, H, W, count_include_pad, inv):
    """The window layout the 2-D sum pools share: the taps inside the input of each output row
    (``r0[i]:r1[i]``) and column (``c0[q]:c1[q]``), the columns ``qa .. qa + nq`` whose
    windows lie wholly inside a row, the others (``borders``); and ``inv`` (oh, ow), in the
    caller's dtype, filled with 1 / the divisor of each output (taps inside the input, or with
    ``count_include_pad`` the taps up to the padded end)."""
    oh, ow = o[1], o[2]
    r0, r1, rpad = _axis_taps(oh, k[1], s[1], d[1], pb[1], H, hi[1])
    c0, c1, cpad = _axis_taps(ow, k[2], s[2], d[2], pb[2], W, hi[2])
    for i in range(oh):
        for q in range(ow):
            cnt = rpad[i] * cpad[q] if count_include_pad else (r1[i] - r0[i]) * (c1[q] - c0[q])
            inv[i, q] = 1.0 / cnt if cnt > 0 else np.nan
    qa, qb = _span(ow, k[2], s[2], d[2], pb[2], W)
    return r0, r1, c0, c1, qa, qb - qa, list_borders(qa, qb, ow)


@numba.njit(cache=True)
def _sumpool2d_rows(x, k, s, d, pb, o, hi, count_include_pad, p):
    """:func:`_sumpool3d` for a (N, C, 1, H, W) input (used for LpPool; AveragePool takes
    :func:`_avgpool2d_rows`) in two passes (window sums of each input row, then of those down
    the columns), accumulated in float64 and stored in x's dtype; the
    divisor per output is the product of the per-axis tap counts. The windows wholly inside a
    row are summed three taps per loop over the outputs (vectorized by LLVM for strides 1
    and 2); the border windows are clipped."""
    N, C, _, H, W = x.shape
    oh, ow = o[1], o[2]
    kw, sw, dw = k[2], s[2], d[2]
    y = np.empty((N, C, 1, oh, ow), dtype=x.dtype)
    inv = np.empty((oh, ow), dtype=np.float64)   # 1 / divisor (Lp: unused)
    r0, r1, c0, c1, qa, nq, borders = _window_plan(k, s, d, pb, o, hi, H, W,
                                                   count_include_pad, inv)
    x0 = qa * sw - pb[2]
    rs = np.empty((H, ow), dtype=np.float64)
    tv = np.empty(W, dtype=np.float64)
    acc = np.empty(ow, dtype=np.float64)
    for n in range(N):
        for c in range(C):
            xc = x[n, c, 0]
            for r in range(H):
                row = xc[r]
                if p == 0:
                    for t in range(W):
                        tv[t] = row[t]
                elif p == 2:
                    for t in range(W):
                        v = float(row[t])
                        tv[t] = v * v
                else:
                    for t in range(W):
                        tv[t] = abs(float(row[t])) ** p
                rr = rs[r]
                for q in borders:
                    lo = q * sw - pb[2]
                    a = 0.0
                    for e in range(c0[q], c1[q]):
                        a += tv[lo + e * dw]
                    rr[q] = a
                if nq > 0:
                    for e in range(0, kw, 3):
                        m = min(3, kw - e)
                        o0 = x0 + e * dw
                        o1 = o0 + dw if m > 1 else o0
                        o2 = o0 + 2 * dw if m > 2 else o0
                        # a literal stride lets LLVM vectorize the (inlined) loop
                        if sw == 1:
                            _sum3(rr, qa, tv, o0, o1, o2, 1, nq, m, e > 0)
                        elif sw == 2:
                            _sum3(rr, qa, tv, o0, o1, o2, 2, nq, m, e > 0)
                        else:
                            _sum3(rr, qa, tv, o0, o1, o2, sw, nq, m, e > 0)
            rsf = rs.reshape(-1)
            for i in range(oh):
                top = i * s[1] - pb[1]
                for b in range(r0[i], r1[i], 3):
                    m = min(3, r1[i] - b)
                    v0 = (top + b * d[1]) * ow
                    v1 = v0 + d[1] * ow if m > 1 else v0
                    v2 = v0 + 2 * d[1] * ow if m > 2 else v0
                    _sum3(acc, 0, rsf, v0, v1, v2, 1, ow, m, b > r0[i])
                yv = y[n, c, 0, i]
                if p > 0:
                    ip = 1.0 / p
                    for q in range(ow):
                        yv[q] = math.sqrt(acc[q]) if p == 2 else acc[q] ** ip
                else:
                    iv = inv[i]
                    for q in range(ow):
                        yv[q] = acc[q] * iv[q]
    return y


@numba.njit(cache=True)
def _avgpool2d_rows(x, k, s, d, pb, o, hi, count_include_pad):
    """AveragePool of a (N, C, 1, H, W) float input in x's own float type (as onnxruntime
    accumulates): window sums of each input row, three taps per loop over the interior
    windows, then of those down the columns, times 1 / (product of the per-axis tap
    counts)."""
    N, C, _, H, W = x.shape
    oh, ow = o[1], o[2]
    kw, sw, dw = k[2], s[2], d[2]
    y = np.empty((N, C, 1, oh, ow), dtype=x.dtype)
    inv = np.empty((oh, ow), dtype=x.dtype)
    r0, r1, c0, c1, qa, nq, borders = _window_plan(k, s, d, pb, o, hi, H, W,
                                                   count_include_pad, inv)
    x0 = qa * sw - pb[2]
    # stride 1: rs rows are W apart like the input's, so one loop over the whole plane sums
    # the interior windows of every row (what falls between rows is overwritten by the
    # borders, and stays inside the plane since the interior windows fit in their rows)
    flat_rows = sw == 1 and ow <= W and nq > 0
    RS = W if flat_rows else ow
    rs = np.empty(H * RS, dtype=x.dtype)
    # output rows whose windows lie wholly inside the input
    ia, ib = _span(oh, k[1], s[1], d[1], pb[1], H)
    flat_cols = s[1] == 1 and RS == ow and ib > ia
    # flat arrays and offsets instead of row views (each view costs reference counting)
    xf = x.reshape(-1)
    yf = y.reshape(-1)
    invf = inv.reshape(-1)
    for pl in range(N * C):
        xo = pl * H * W
        if flat_rows:
            span = (H - 1) * W + nq
            for e in range(0, kw, 3):
                m = min(3, kw - e)
                o0 = xo + x0 + e * dw
                o1 = o0 + dw if m > 1 else o0
                o2 = o0 + 2 * dw if m > 2 else o0
                _sum3(rs, qa, xf, o0, o1, o2, 1, span, m, e > 0)
        for r in range(H):
            ro = xo + r * W
            for q in borders:
                lo = ro + q * sw - pb[2]
                a = 0.0
                for e in range(c0[q], c1[q]):
                    a += xf[lo + e * dw]
                rs[r * RS + q] = a
            if nq > 0 and not flat_rows:
                dof = r * RS + qa
                for e in range(0, kw, 3):
                    m = min(3, kw - e)
                    o0 = ro + x0 + e * dw
                    o1 = o0 + dw if m > 1 else o0
                    o2 = o0 + 2 * dw if m > 2 else o0
                    if sw == 1:   # a literal stride lets LLVM vectorize the loop
                        _sum3(rs, dof, xf, o0, o1, o2, 1, nq, m, e > 0)
                    elif sw == 2:
                        _sum3(rs, dof, xf, o0, o1, o2, 2, nq, m, e > 0)
                    else:
                        _sum3(rs, dof, xf, o0, o1, o2, sw, nq, m, e > 0)
        yp = pl * oh * ow
        if flat_cols:   # stride 1 down the columns: all interior output rows in one loop
            top = ia - pb[1]
            for b in range(0, k[1], 3):
                m = min(3, k[1] - b)
                v0 = (top + b * d[1]) * ow
                v1 = v0 + d[1] * ow if m > 1 else v0
                v2 = v0 + 2 * d[1] * ow if m > 2 else v0
                _sum3(yf, yp + ia * ow, rs, v0, v1, v2, 1, (ib - ia) * ow, m, b > 0)
        for i in range(oh):
            if flat_cols and ia <= i < ib:
                continue
            top = i * s[1] - pb[1]
            yo = yp + i * ow
            for b in range(r0[i], r1[i], 3):
                m = min(3, r1[i] - b)
                v0 = (top + b * d[1]) * RS
                v1 = v0 + d[1] * RS if m > 1 else v0
                v2 = v0 + 2 * d[1] * RS if m > 2 else v0
                _sum3(yf, yo, rs, v0, v1, v2, 1, ow, m, b > r0[i])
        for t in range(oh * ow):
            yf[U(yp + t)] *= invf[U(t)]
    return y


@numba.njit(cache=True, inline="always")
def _sum3(dst, off, src, o0, o1, o2, step, n, m, update):
    """For t < n: ``dst[off + t] (+)= src[o0 + j] (+ src[o1 + j] (+ src[o2 + j]))`` with
    ``j = t * step``: the first ``m`` (1-3) sources, added to ``dst`` when ``update``
    (unsigned offsets: see :data:`U`; one loop per case, none with a test inside, so that
    LLVM vectorizes them)."""
    if m == 3:
        if update:
            for t in range(n):
                j = t * step
                dst[U(off + t)] += src[U(o0 + j)] + src[U(o1 + j)] + src[U(o2 + j)]
        else:
            for t in range(n):
                j = t * step
                dst[U(off + t)] = src[U(o0 + j)] + src[U(o1 + j)] + src[U(o2 + j)]
    elif m == 2:
        if update:
            for t in range(n):
                j = t * step
                dst[U(off + t)] += src[U(o0 + j)] + src[U(o1 + j)]
        else:
            for t in range(n):
                j = t * step
                dst[U(off + t)] = src[U(o0 + j)] + src[U(o1 + j)]
    elif update:
        for t in range(n):
            dst[U(off + t)] += src[U(o0 + t * step)]
    else:
        for t in range(n):
            dst[U(off + t)] = src[U(o0 + t * step)]


def _float_in(X: np.ndarray) -> np.ndarray:
    if X.dtype.kind == "f" and X.dtype != np.float16:
        return np.ascontiguousarray(X)
    return np.ascontiguousarray(X, dtype=np.float32)


def _window(X: np.ndarray, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, op):
    if X.ndim < 3 or X.ndim > 5:
        raise MDFError(f"{op}: expected X of shape (N, C, D1[, D2[, D3]]), got {X.shape}")
    nsp = X.ndim - 2
    if kernel_shape is None or len(kernel_shape) != nsp:
        raise MDFError(f"{op}: kernel_shape should have {nsp} values, got {kernel_shape}")
    k = ints(kernel_shape, nsp, 1, "kernel_shape", op)
    s = ints(strides, nsp, 1, "strides", op)
    d = ints(dilations, nsp, 1, "dilations", op)
    out, pb, pe = window_geometry(X.shape[2:], k, s, d, pads, auto_pad, int(ceil_mode), op)
    return nsp, k, s, d, out, pb, pe


def _sum_pool(X, p, count_include_pad, kernel_shape, strides, dilations, pads, auto_pad,
              ceil_mode, op):
    X = as_array(X)
    nsp, k, s, d, out, pb, pe = _window(X, kernel_shape, strides, dilations, pads, auto_pad,
                                        ceil_mode, op)
    hi = tuple(X.shape[2 + i] + pe[i] for i in range(nsp))
    xf = _float_in(X)
    if nsp <= 2 and p == 0:
        y = _avgpool2d_rows(as5d(xf), lift3(k, 1), lift3(s, 1), lift3(d, 1), lift3(pb, 0),
                            lift3(out, 1), lift3(hi, 1), bool(count_include_pad))
        return y.reshape(X.shape[:2] + out).astype(X.dtype, copy=False)
    if nsp <= 2:
        y = _sumpool2d_rows(as5d(xf), lift3(k, 1), lift3(s, 1), lift3(d, 1), lift3(pb, 0),
                            lift3(out, 1), lift3(hi, 1), bool(count_include_pad), float(p))
        return y.reshape(X.shape[:2] + out).astype(X.dtype, copy=False)
    y = _sumpool3d(as5d(_float_in(X)), lift3(k, 1), lift3(s, 1), lift3(d, 1), lift3(pb, 0),
                   lift3(out, 1), lift3(hi, 1), bool(count_include_pad), float(p))
    return y.reshape(X.shape[:2] + out).astype(X.dtype)


POOL_ATTRS = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": None,
              "kernel_shape": REQUIRED, "pads": None, "strides": None}


@onnx_op("AveragePool", inputs=("X",), since=1,
         attributes={**POOL_ATTRS, "count_include_pad": 0})
def average_pool(X: Any, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=None,
                 pads=None, strides=None, count_include_pad=0) -> tuple[np.ndarray]:
    """Mean over each window; padding counted in the divisor only with count_include_pad."""
    return (_sum_pool(X, 0.0, count_include_pad, kernel_shape, strides, dilations, pads,
                      auto_pad, ceil_mode, "AveragePool"),)


@onnx_op("LpPool", inputs=("X",), since=2, attributes={**POOL_ATTRS, "p": 2})
def lp_pool(X: Any, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=None,
            pads=None, strides=None, p=2) -> tuple[np.ndarray]:
    """``(sum |x|^p)^(1/p)`` over each window (padding contributes zeros)."""
    if float(p) <= 0:
        raise MDFError(f"LpPool: p should be positive, got {p}")
    return (_sum_pool(X, float(p), 0, kernel_shape, strides, dilations, pads, auto_pad,
                      ceil_mode, "LpPool"),)


def _hashable(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


@functools.lru_cache(maxsize=256)
def _maxpool_plan(shape: tuple, kernel_shape, strides, dilations, pads, auto_pad,
                  ceil_mode) -> tuple:
    """``(geometry, shape5, out_shape, size, values_kernel)`` of a MaxPool of an input of
    ``shape``: ``geometry`` holds the kernel, strides, dilations, pads at the beginning and
    output shape lifted to 3-D, then 1 when the two-pass 2-D kernels serve (1-D/2-D, no
    window wholly in the padding), else 0; ``shape5`` is the input's 5-D view, ``size`` the
    output's number of elements and ``values_kernel`` the values-only kernel for these
    windows (None: the 3-D one). Memoized: a model runs the same MaxPool at every step, and
    working this out costs more than a small pool itself. The kernels take the geometry as
    one array rather than five tuples: Numba types every tuple argument at each call, which
    costs more than a small pool itself."""
    if len(shape) < 3 or len(shape) > 5:
        raise MDFError(f"MaxPool: expected X of shape (N, C, D1[, D2[, D3]]), got {shape}")
    nsp = len(shape) - 2
    if kernel_shape is None or len(kernel_shape) != nsp:
        raise MDFError(f"MaxPool: kernel_shape should have {nsp} values, got {kernel_shape}")
    k = ints(kernel_shape, nsp, 1, "kernel_shape", "MaxPool")
    s = ints(strides, nsp, 1, "strides", "MaxPool")
    d = ints(dilations, nsp, 1, "dilations", "MaxPool")
    out, pb, _ = window_geometry(shape[2:], k, s, d, pads, auto_pad, int(ceil_mode), "MaxPool")
    geo = (lift3(k, 1), lift3(s, 1), lift3(d, 1), lift3(pb, 0), lift3(out, 1))
    shape5 = tuple(shape[:2]) + (1,) * (5 - len(shape)) + tuple(shape[2:])
    rows = nsp <= 2 and not _some_window_in_padding(*geo, shape5[3], shape5[4])
    g = geometry_array(geo, rows)
    out_shape = tuple(shape[:2]) + out
    kernel = None
    if rows:
        kw, sw, dw = geo[0][2], geo[1][2], geo[2][2]
        dense = dw == 1 and kw <= 3
        kernel = _maxpool_y1 if dense and sw == 1 else _maxpool_y2 if dense and sw == 2 \
            else _maxpool_y0
    return g, shape5, out_shape, math.prod(out_shape), kernel


@onnx_op("MaxPool", inputs=("X",), outputs=("Y", "Indices"), since=1,
         attributes={**POOL_ATTRS, "storage_order": 0}, skips_outputs=True)
def max_pool(X: Any, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=None,
             pads=None, strides=None, storage_order=0,
             outputs_wanted: int | None = None) -> tuple[np.ndarray, ...]:
    """Max over each window, and the flat index (over N, C and the unpadded spatial axes,
    row-major, or column-major in the spatial axes when storage_order=1) of the maximum.
    With ``outputs_wanted=1`` (a node without the Indices output) only Y is computed."""
    X = as_array(X)
    key = (X.shape, _hashable(kernel_shape), _hashable(strides), _hashable(dilations),
           _hashable(pads), auto_pad, ceil_mode)
    try:
        g, shape5, shape, size, values = _maxpool_plan(*key)
    except TypeError:   # an attribute given as an array cannot be a memo key
        g, shape5, shape, size, values = _maxpool_plan.__wrapped__(*key)
    dt = X.dtype
    if dt == np.float32 or dt == np.float64 or (dt.kind in "iu" and dt.itemsize > 2):
        x5 = np.ascontiguousarray(X).reshape(shape5)
    else:   # float16, 8/16-bit ints: exact in float32, and no kernels of their own to compile
        x5 = np.ascontiguousarray(X, dtype=np.float32).reshape(shape5)
    yf = np.empty(size, dtype=x5.dtype)
    if outputs_wanted == 1:
        if values is not None:
            values(x5, g, yf)
        else:
            _maxpool_3d(x5, g, 0, yf, _NO_INDEX, False)
        return (yf.reshape(shape).astype(dt, copy=False),)
    idf = np.empty(size, dtype=np.int64)
    if values is not None:
        _maxpool_yi(x5, g, int(storage_order), yf, idf)
    else:
        _maxpool_3d(x5, g, int(storage_order), yf, idf, True)
    return yf.reshape(shape).astype(dt, copy=False), idf.reshape(shape)


_NO_INDEX = np.empty(1, dtype=np.int64)


@numba.njit(cache=True, fastmath={"reassoc"})
def _sum_run(xf, o, n):
    """``sum(xf[o:o + n])`` in float64, reassociated into vector partial sums."""
    acc = 0.0
    for t in range(n):
        acc += xf[U(o + t)]
    return acc


@numba.njit(cache=True)
def _global(x, mode, p):
    """Reduce the last axis of (R, L): 0 mean, 1 max, 2 Lp norm (one loop per mode, with no
    test inside, so that LLVM vectorizes it; flat unsigned offsets, see :data:`U`)."""
    R, L = x.shape
    y = np.empty(R, dtype=np.float64)
    xf = x.reshape(-1)
    for r in range(R):
        o = r * L
        if mode == 1:
            m = xf[o]
            for t in range(1, L):
                v = xf[U(o + t)]
                m = v if v > m else m
            y[r] = m
        elif mode == 0:
            y[r] = _sum_run(xf, o, L) / L
        else:
            acc = 0.0
            for t in range(L):
                acc += abs(float(xf[U(o + t)])) ** p
            y[r] = acc ** (1.0 / p)
    return y


def _global_pool(X: Any, mode: int, p: float, op: str) -> np.ndarray:
    X = as_array(X)
    if X.ndim < 3:
        raise MDFError(f"{op}: expected X of shape (N, C, D1, ...), got {X.shape}")
    flat = np.ascontiguousarray(X.reshape(X.shape[0] * X.shape[1], -1))
    if flat.dtype.kind not in "iu" and flat.dtype not in (np.float32, np.float64):
        flat = flat.astype(np.float32)
    y = _global(flat, mode, p)
    return y.reshape(X.shape[:2] + (1,) * (X.ndim - 2)).astype(X.dtype)


@onnx_op("GlobalAveragePool", inputs=("X",), since=1)
def global_average_pool(X: Any) -> tuple[np.ndarray]:
    """Mean over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 0, 1.0, "GlobalAveragePool"),)


@onnx_op("GlobalMaxPool", inputs=("X",), since=1)
def global_max_pool(X: Any) -> tuple[np.ndarray]:
    """Max over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 1, 1.0, "GlobalMaxPool"),)


@onnx_op("GlobalLpPool", inputs=("X",), attributes={"p": 2}, since=2)
def global_lp_pool(X: Any, *, p=2) -> tuple[np.ndarray]:
    """Lp norm over all spatial axes (kept as size-1 axes)."""
    return (_global_pool(X, 2, float(p), "GlobalLpPool"),)


@numba.njit(cache=True)
def _scatter_flat(y, idx, x):
    for t in range(x.size):
        y[idx[t]] = x[t]


@onnx_op("MaxUnpool", inputs=("X", "I", "output_shape"), optional=("output_shape",), since=9,
         attributes={"kernel_shape": REQUIRED, "pads": None, "strides": None})
def max_unpool(X: Any, I: Any, output_shape: Any = None, *, kernel_shape=None, pads=None,
               strides=None) -> tuple[np.ndarray]:
    """Inverse of MaxPool: zeros, with X's values put at the flat indices I."""
    X = as_array(X)
    I = np.asarray(I, dtype=np.int64)
    if I.shape != X.shape:
        raise MDFError(f"MaxUnpool: I should have X's shape {X.shape}, got {I.shape}")
    nsp = X.ndim - 2
    k = ints(kernel_shape, nsp, 1, "kernel_shape", "MaxUnpool")
    s = ints(strides, nsp, 1, "strides", "MaxUnpool")
    pd = ints(pads, 2 * nsp, 0, "pads", "MaxUnpool")
    default = X.shape[:2] + tuple((X.shape[2 + i] - 1) * s[i] + k[i] - pd[i] - pd[nsp + i]
                                  for i in range(nsp))
    flat_i = I.reshape(-1)
    if flat_i.size and (flat_i.min() < 0 or flat_i.max() >= int(np.prod(default))):
        raise MDFError(f"MaxUnpool: an index in I is outside the unpooled shape {default}")
    shape = default
    if output_shape is not None:
        # I indexes the default unpooled layout; place each value at the same coordinates of
        # the requested (larger) shape.
        shape = tuple(int(v) for v in np.asarray(output_shape).reshape(-1))
        if len(shape) != X.ndim or any(a < b for a, b in zip(shape, default)):
            raise MDFError(f"MaxUnpool: output_shape {shape} should have rank {X.ndim} and be "
                           f"at least the unpooled shape {default}")
        flat_i = np.ravel_multi_index(np.unravel_index(flat_i, default), shape)
    y = np.zeros(int(np.prod(shape)), dtype=X.dtype)
    _scatter_flat(y, flat_i, np.ascontiguousarray(X).reshape(-1))
    return (y.reshape(shape),)


@numba.njit(cache=True)
def _round_away(v):
    """Round half away from zero (C ``round``), as ROI pooling does."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


@numba.njit(cache=True)
def _max_roi_pool(x, rois, ph_n, pw_n, scale):
    N, C, H, W = x.shape
    R = rois.shape[0]
    y = np.zeros((R, C, ph_n, pw_n), dtype=x.dtype)
    for r in range(R):
        b = int(rois[r, 0])
        sw = _round_away(rois[r, 1] * scale)
        sh = _round_away(rois[r, 2] * scale)
        ew = _round_away(rois[r, 3] * scale)
        eh = _round_away(rois[r, 4] * scale)
        rh = max(eh - sh + 1, 1)
        rw = max(ew - sw + 1, 1)
        bh = rh / ph_n
        bw = rw / pw_n
        for ph in range(ph_n):
            hs = min(max(int(math.floor(ph * bh)) + sh, 0), H)
            he = min(max(int(math.ceil((ph + 1) * bh)) + sh, 0), H)
            for pw in range(pw_n):
                ws = min(max(int(math.floor(pw * bw)) + sw, 0), W)
                we = min(max(int(math.ceil((pw + 1) * bw)) + sw, 0), W)
                if he <= hs or we <= ws:
                    continue
                for c in range(C):
                    m = x[b, c, hs, ws]
                    for i in range(hs, he):
                        for j in range(ws, we):
                            if x[b, c, i, j] > m:
                                m = x[b, c, i, j]
                    y[r, c, ph, pw] = m
    return y


@onnx_op("MaxRoiPool", inputs=("X", "rois"), since=1,
         attributes={"pooled_shape": REQUIRED, "spatial_scale": 1.0})
def max_roi_pool(X: Any, rois: Any, *, pooled_shape=None, spatial_scale=1.0
                 ) -> tuple[np.ndarray]:
    """Max over each bin of each region (rois rows: batch index, x1, y1, x2, y2)."""
    X = _float_in(as_array(X))
    rois = np.ascontiguousarray(rois, dtype=np.float64)
    if X.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
        raise MDFError(f"MaxRoiPool: expected X (N, C, H, W) and rois (R, 5), got {X.shape} "
                       f"and {rois.shape}")
    ph, pw = ints(pooled_shape, 2, 1, "pooled_shape", "MaxRoiPool")
    if rois.size and (rois[:, 0].min() < 0 or rois[:, 0].max() >= X.shape[0]):
        raise MDFError("MaxRoiPool: a batch index in rois is outside X")
    return (_max_roi_pool(X, rois, ph, pw, float(spatial_scale)),)


@numba.njit(cache=True)
def _roi_align(x, rois, bidx, oh, ow, sr, scale, offset, clamp_one, use_max):
    N, C, H, W = x.shape
    R = rois.shape[0]
    y = np.zeros((R, C, oh, ow), dtype=np.float64)
    for r in range(R):
        b = bidx[r]
        x0 = rois[r, 0] * scale - offset
        y0 = rois[r, 1] * scale - offset
        rw = rois[r, 2] * scale - offset - x0
        rh = rois[r, 3] * scale - offset - y0
        if clamp_one:
            rw = max(rw, 1.0)
            rh = max(rh, 1.0)
        bh = rh / oh
        bw = rw / ow
        gh = sr if sr > 0 else int(math.ceil(rh / oh))
        gw = sr if sr > 0 else int(math.ceil(rw / ow))
        cnt = max(gh * gw, 1)
        for ph in range(oh):
            for pw in range(ow):
                for c in range(C):
                    acc = 0.0
                    first = True
                    for iy in range(gh):
                        yy = y0 + ph * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = x0 + pw * bw + (ix + 0.5) * bw / gw
                            t1 = t2 = t3 = t4 = 0.0
                            if not (yy < -1.0 or yy > H or xx < -1.0 or xx > W):
                                yc = max(yy, 0.0)
                                xc = max(xx, 0.0)
                                yl = int(yc)
                                xl = int(xc)
                                if yl >= H - 1:
                                    yl = yh = H - 1
                                    yc = float(yl)
                                else:
                                    yh = yl + 1
                                if xl >= W - 1:
                                    xl = xh = W - 1
                                    xc = float(xl)
                                else:
                                    xh = xl + 1
                                ly = yc - yl
                                lx = xc - xl
                                hy = 1.0 - ly
                                hx = 1.0 - lx
                                t1 = hy * hx * x[b, c, yl, xl]
                                t2 = hy * lx * x[b, c, yl, xh]
                                t3 = ly * hx * x[b, c, yh, xl]
                                t4 = ly * lx * x[b, c, yh, xh]
                            if use_max:
                                m = max(max(t1, t2), max(t3, t4))
                                if first or m > acc:
                                    acc = m
                                first = False
                            else:
                                acc += t1 + t2 + t3 + t4
                    y[r, c, ph, pw] = acc if use_max else acc / cnt
    return y


def _roi_align_impl(X, rois, batch_indices, mode, output_height, output_width,
                    sampling_ratio, spatial_scale, half_pixel):
    X = as_array(X)
    rois = np.ascontiguousarray(rois, dtype=np.float64)
    bidx = np.ascontiguousarray(batch_indices, dtype=np.int64).reshape(-1)
    if X.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or bidx.size != rois.shape[0]:
        raise MDFError(f"RoiAlign: expected X (N, C, H, W), rois (R, 4), batch_indices (R,), "
                       f"got {X.shape}, {rois.shape}, {bidx.shape}")
    if bidx.size and (bidx.min() < 0 or bidx.max() >= X.shape[0]):
        raise MDFError("RoiAlign: a batch index is outside X")
    if mode not in ("avg", "max"):
        raise MDFError(f"RoiAlign: mode should be 'avg' or 'max', got '{mode}'")
    y = _roi_align(np.ascontiguousarray(X, dtype=np.float64), rois, bidx, int(output_height),
                   int(output_width), int(sampling_ratio), float(spatial_scale),
                   0.5 if half_pixel else 0.0, not half_pixel, mode == "max")
    return (y.astype(X.dtype),)


ROI_ATTRS = {"mode": "avg", "output_height": 1, "output_width": 1, "sampling_ratio": 0,
             "spatial_scale": 1.0}


@onnx_op("RoiAlign", inputs=("X", "rois", "batch_indices"), since=10, attributes=ROI_ATTRS)
def roi_align_10(X: Any, rois: Any, batch_indices: Any, *, mode="avg", output_height=1,
                 output_width=1, sampling_ratio=0, spatial_scale=1.0) -> tuple[np.ndarray]:
    """Bilinear-sampled average/max over each bin of each region (opset 10: no half-pixel
    offset, regions at least 1x1)."""
    return _roi_align_impl(X, rois, batch_indices, mode, output_height, output_width,
                           sampling_ratio, spatial_scale, False)


@onnx_op("RoiAlign", inputs=("X", "rois", "batch_indices"), since=16,
         attributes={"coordinate_transformation_mode": "half_pixel", **ROI_ATTRS})
def roi_align_16(X: Any, rois: Any, batch_indices: Any, *,
                 coordinate_transformation_mode="half_pixel", mode="avg", output_height=1,
                 output_width=1, sampling_ratio=0, spatial_scale=1.0) -> tuple[np.ndarray]:
    """RoiAlign with coordinate_transformation_mode half_pixel (default) or
    output_half_pixel (the opset-10 behaviour)."""
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise MDFError("RoiAlign: coordinate_transformation_mode should be 'half_pixel' or "
                       f"'output_half_pixel', got '{coordinate_transformation_mode}'")
    return _roi_align_impl(X, rois, batch_indices, mode, output_height, output_width,
                           sampling_ratio, spatial_scale,
                           coordinate_transformation_mode == "half_pixel")
