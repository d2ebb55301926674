"""The two-pass kernels of 1-D/2-D MaxPool (see :mod:`.maxpool`) for inputs with no window wholly
in the padding: without Indices, down the columns then along the rows
(:func:`maxpool2d_values`, dense taps of stride 1 or 2 in three-tap blocks); with Indices, along
each row then down the columns (:func:`maxpool2d_rows`). Interior windows are branch-free loops
over flat arrays that LLVM vectorizes; border windows clip their taps. Indices name the first
maximum in row-major window order (column-major in the spatial axes with ``storage_order=1``).
"""

from __future__ import annotations

import numba
import numpy as np

from ._pool_common import U, clip_taps, list_borders, window_span


@numba.njit(cache=True, inline="always")
def maxpool2d_values(x, k, s, d, pb, o, yf, step, p0, p1):
    """MaxPool's values only (a node without the Indices output) of the planes ``p0`` to
    ``p1`` (a plane: one image's channel) of a (N, C, 1, H, W) input with no window wholly in
    the padding, into the flat ``yf``. Per output row: the maxima
    down the columns of its vertical window (whole input rows, unit stride, into a one-row
    buffer that stays in L1), then the windows along that buffer: the border ones clipped,
    the interior ones by one select loop. ``step`` is a constant of the caller: 1 or 2 for
    windows of at most three adjacent taps with that stride, read at literal offsets (LLVM
    vectorizes the strided loads as interleaved groups), 0 for any other window (three taps
    per pass, :func:`_row_max3`). Same select order as :func:`~._maxpool_rows.maxpool2d_rows`.

    The row loop runs for every output row of every plane, so it is kept lean: tap ranges
    worked out beforehand, no array variable reassigned (reference counting), and only the
    code of one ``step`` (more code in the loop measurably slows it down)."""
    N, C, _, H, W = x.shape
    oh, ow = o[1], o[2]
    sh, dh = s[1], d[1]
    kw, sw, dw, pw = k[2], s[2], d[2], pb[2]
    r0s, r1s = _tap_ranges(oh, k[1], sh, dh, pb[1], H)
    c0s, c1s = _tap_ranges(ow, kw, sw, dw, pw, W)
    qa, qb = window_span(ow, kw, sw, dw, pw, W)
    x0 = qa * sw - pw
    cv = np.empty(W, dtype=x.dtype)
    xf = x.reshape(-1)
    dW = dh * W
    none = np.empty(1, dtype=np.int64)
    for pl in range(p0, p1):
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
                for b in range(3, nb):  # taller windows: one row more per pass
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
                        _row_max3(
                            yf,
                            none,
                            yr + qa,
                            cv,
                            x0 + e * dw,
                            x0 + e1 * dw,
                            x0 + e2 * dw,
                            sw,
                            0,
                            0,
                            0,
                            0,
                            qb - qa,
                            e > 0,
                            False,
                        )


@numba.njit(cache=True)
def _tap_ranges(n_out, k, s, d, pb, size):
    """First and last+1 tap inside ``[0, size)`` of each window along an axis."""
    t0 = np.empty(n_out, dtype=np.int64)
    t1 = np.empty(n_out, dtype=np.int64)
    for i in range(n_out):
        t0[i], t1[i] = clip_taps(i * s - pb, k, d, size)
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
def maxpool2d_rows(x, k, s, d, pb, o, storage_order, yf, idf):
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
    qa, qb = window_span(ow, kw, sw, dw, pb[2], W)
    borders = list_borders(qa, qb, ow)
    # flat spatial index of (r, col): r * W + col, or r + H * col (storage_order=1)
    rstep = W if storage_order == 0 else 1
    cstep = 1 if storage_order == 0 else H
    nq = qb - qa
    x0 = qa * sw - pb[2]
    tstep = sw * cstep  # index step between neighbouring interior windows
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
                e0, e1 = clip_taps(lo, kw, dw, W)
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
                        _row_max3(
                            rvf, rif, dof, xf, o0, o1, o2, 1, j0, j1, j2, tstep, nq, e > 0, True
                        )
                    elif sw == 2:
                        _row_max3(
                            rvf, rif, dof, xf, o0, o1, o2, 2, j0, j1, j2, tstep, nq, e > 0, True
                        )
                    else:
                        _row_max3(
                            rvf, rif, dof, xf, o0, o1, o2, sw, j0, j1, j2, tstep, nq, e > 0, True
                        )
        for i in range(oh):
            top = i * sh - pb[1]
            b0, b1 = clip_taps(top, kh, dh, H)
            yo = (pl * oh + i) * ow
            for b in range(b0, b1, 3):
                r0 = top + b * dh
                r1 = r0 + dh if b + 1 < b1 else r0
                r2 = r0 + 2 * dh if b + 2 < b1 else r0
                _col_max3(yf, idf, yo, rvf, rif, r0 * ow, r1 * ow, r2 * ow, ow, b > b0, True)


@numba.njit(cache=True, inline="always")
def _row_max3(best, bidx, off, src, o0, o1, o2, step, i0, i1, i2, istep, n, update, want_idx):
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
        ka = idxs[U(o0 + t)]  # every load unconditional, so that the choices are selects
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
