"""``onnx::`` AveragePool and LpPool: sums over each window.

1-D and 2-D inputs are lifted to 3-D and pooled in two separable passes (windows along each
row, then down the columns) sharing one window plan (:func:`_window_plan`: tap ranges, interior
span, border columns, 1/divisor); 3-D pools use one loop nest. 1-D/2-D averages accumulate in
the input's float type (as onnxruntime does), 3-D averages and Lp norms in float64, cast back to
the input dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from ._pool_common import POOL_ATTRS, U, float_in, list_borders, pool_window, window_span
from ._spatial import as5d, lift3, unpack_geometry
from ._spatial_jit import as5d_nb, attr_int, pool_geometry, shaped_like_nb, spatial_nb


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
    qa, qb = window_span(ow, k[2], s[2], d[2], pb[2], W)
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
    inv = np.empty((oh, ow), dtype=np.float64)  # 1 / divisor (Lp: unused)
    r0, r1, c0, c1, qa, nq, borders = _window_plan(k, s, d, pb, o, hi, H, W, count_include_pad, inv)
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
    r0, r1, c0, c1, qa, nq, borders = _window_plan(k, s, d, pb, o, hi, H, W, count_include_pad, inv)
    x0 = qa * sw - pb[2]
    # stride 1: rs rows are W apart like the input's, so one loop over the whole plane sums
    # the interior windows of every row (what falls between rows is overwritten by the
    # borders, and stays inside the plane since the interior windows fit in their rows)
    flat_rows = sw == 1 and ow <= W and nq > 0
    RS = W if flat_rows else ow
    rs = np.empty(H * RS, dtype=x.dtype)
    # output rows whose windows lie wholly inside the input
    ia, ib = window_span(oh, k[1], s[1], d[1], pb[1], H)
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
                    if sw == 1:  # a literal stride lets LLVM vectorize the loop
                        _sum3(rs, dof, xf, o0, o1, o2, 1, nq, m, e > 0)
                    elif sw == 2:
                        _sum3(rs, dof, xf, o0, o1, o2, 2, nq, m, e > 0)
                    else:
                        _sum3(rs, dof, xf, o0, o1, o2, sw, nq, m, e > 0)
        yp = pl * oh * ow
        if flat_cols:  # stride 1 down the columns: all interior output rows in one loop
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


def _sum_pool(
    X: Any,
    p: float,
    count_include_pad: Any,
    op: str,
    *,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> np.ndarray:
    """AveragePool (``p`` 0) or LpPool (``p`` > 0) of ``X`` with the window attributes of
    ``POOL_ATTRS`` (the two ops' common attributes: each op passes them on as given)."""
    X = as_array(X)
    nsp, k, s, d, out, pb, pe = pool_window(
        X, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, op
    )
    hi = tuple(X.shape[2 + i] + pe[i] for i in range(nsp))
    args = (
        as5d(float_in(X)),
        lift3(k, 1),
        lift3(s, 1),
        lift3(d, 1),
        lift3(pb, 0),
        lift3(out, 1),
        lift3(hi, 1),
        bool(count_include_pad),
    )
    if nsp <= 2 and p == 0:
        y = _avgpool2d_rows(*args)
    elif nsp <= 2:
        y = _sumpool2d_rows(*args, float(p))
    else:
        y = _sumpool3d(*args, float(p))
    return y.reshape(X.shape[:2] + out).astype(X.dtype, copy=False)


@numba.njit(cache=True)
def avgpool_jit(X, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, count_include_pad):
    """nopython AveragePool of a float X for the compiled backend, by the kernels
    :func:`average_pool` uses (the geometry from :mod:`._spatial_jit`), in X's dtype."""
    x5 = as5d_nb(X)
    sp = spatial_nb(X)
    if kernel_shape is None:
        raise ValueError("AveragePool needs kernel_shape")
    g, pe = pool_geometry(sp, auto_pad, ceil_mode, dilations, kernel_shape, pads, strides, 0)
    k, s, d, pb, o = unpack_geometry(g)
    hi = (x5.shape[2] + pe[0], x5.shape[3] + pe[1], x5.shape[4] + pe[2])
    cip = attr_int(count_include_pad, 0) != 0
    if sp.size <= 2:
        y = _avgpool2d_rows(x5, k, s, d, pb, o, hi, cip).astype(x5.dtype)
    else:
        y = _sumpool3d(x5, k, s, d, pb, o, hi, cip, 0.0).astype(x5.dtype)
    return shaped_like_nb(y.reshape((x5.shape[0], x5.shape[1], o[0], o[1], o[2])), X)


@onnx_op(
    "AveragePool",
    inputs=("X",),
    since=1,
    attributes={**POOL_ATTRS, "count_include_pad": 0},
    jit=avgpool_jit,
)
def average_pool(X: Any, *, count_include_pad=0, **window: Any) -> tuple[np.ndarray]:
    """Mean over each window; padding counted in the divisor only with count_include_pad."""
    return (_sum_pool(X, 0.0, count_include_pad, "AveragePool", **window),)


@onnx_op("LpPool", inputs=("X",), since=2, attributes={**POOL_ATTRS, "p": 2})
def lp_pool(X: Any, *, p=2, **window: Any) -> tuple[np.ndarray]:
    """``(sum |x|^p)^(1/p)`` over each window (padding contributes zeros)."""
    if float(p) <= 0:
        raise MDFError(f"LpPool: p should be positive, got {p}")
    return (_sum_pool(X, float(p), 0, "LpPool", **window),)
