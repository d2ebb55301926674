"""``onnx::`` MaxPool (with ``Indices``) and MaxUnpool.

1-D and 2-D inputs are lifted to 3-D. 1-D/2-D MaxPool runs in two separable passes (without
Indices: down the columns, then along the rows; with Indices: along each row, then down the
columns) whose interior windows are branch-free loops over flat arrays that LLVM vectorizes;
3-D pools (and windows lying wholly in the padding) use one loop nest over ``(N, C, D, H, W)``.
MaxPool keeps the input dtype (floats, and 8-bit ints computed exactly in float32). Its window
geometry is memoized per input shape and attributes and handed to its kernels as one int array
(see :func:`_maxpool_plan`). MaxUnpool scatters values back to the positions Indices name.
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
from ._pool_common import POOL_ATTRS, U, clip_taps, list_borders, window_span
from ._spatial import geometry_array, ints, lift3, unpack_geometry, window_geometry


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
def _some_window_in_padding(k, s, d, pb, o, H, W):
    """Whether a 2-D window (rows of ``H``, columns of ``W``) lies wholly in the padding."""
    for q in range(o[2]):
        e0, e1 = clip_taps(q * s[2] - pb[2], k[2], d[2], W)
        if e1 <= e0:
            return True
    for i in range(o[1]):
        b0, b1 = clip_taps(i * s[1] - pb[1], k[1], d[1], H)
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
    qa, qb = window_span(ow, kw, sw, dw, pw, W)
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


def _hashable(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


@functools.lru_cache(maxsize=256)
def _maxpool_plan(
    shape: tuple, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode
) -> tuple:
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
        kernel = (
            _maxpool_y1 if dense and sw == 1 else _maxpool_y2 if dense and sw == 2 else _maxpool_y0
        )
    return g, shape5, out_shape, math.prod(out_shape), kernel


@onnx_op(
    "MaxPool",
    inputs=("X",),
    outputs=("Y", "Indices"),
    since=1,
    attributes={**POOL_ATTRS, "storage_order": 0},
    skips_outputs=True,
)
def max_pool(
    X: Any,
    *,
    auto_pad="NOTSET",
    ceil_mode=0,
    dilations=None,
    kernel_shape=None,
    pads=None,
    strides=None,
    storage_order=0,
    outputs_wanted: int | None = None,
) -> tuple[np.ndarray, ...]:
    """Max over each window, and the flat index (over N, C and the unpadded spatial axes,
    row-major, or column-major in the spatial axes when storage_order=1) of the maximum.
    With ``outputs_wanted=1`` (a node without the Indices output) only Y is computed."""
    X = as_array(X)
    key = (
        X.shape,
        _hashable(kernel_shape),
        _hashable(strides),
        _hashable(dilations),
        _hashable(pads),
        auto_pad,
        ceil_mode,
    )
    try:
        g, shape5, shape, size, values = _maxpool_plan(*key)
    except TypeError:  # an attribute given as an array cannot be a memo key
        g, shape5, shape, size, values = _maxpool_plan.__wrapped__(*key)
    dt = X.dtype
    if dt == np.float32 or dt == np.float64 or (dt.kind in "iu" and dt.itemsize > 2):
        x5 = np.ascontiguousarray(X).reshape(shape5)
    else:  # float16, 8/16-bit ints: exact in float32, and no kernels of their own to compile
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


@numba.njit(cache=True)
def _scatter_flat(y, idx, x):
    for t in range(x.size):
        y[idx[t]] = x[t]


@onnx_op(
    "MaxUnpool",
    inputs=("X", "I", "output_shape"),
    optional=("output_shape",),
    since=9,
    attributes={"kernel_shape": REQUIRED, "pads": None, "strides": None},
)
def max_unpool(
    X: Any, I: Any, output_shape: Any = None, *, kernel_shape=None, pads=None, strides=None
) -> tuple[np.ndarray]:
    """Inverse of MaxPool: zeros, with X's values put at the flat indices I."""
    X = as_array(X)
    I = np.asarray(I, dtype=np.int64)
    if I.shape != X.shape:
        raise MDFError(f"MaxUnpool: I should have X's shape {X.shape}, got {I.shape}")
    nsp = X.ndim - 2
    k = ints(kernel_shape, nsp, 1, "kernel_shape", "MaxUnpool")
    s = ints(strides, nsp, 1, "strides", "MaxUnpool")
    pd = ints(pads, 2 * nsp, 0, "pads", "MaxUnpool")
    default = X.shape[:2] + tuple(
        (X.shape[2 + i] - 1) * s[i] + k[i] - pd[i] - pd[nsp + i] for i in range(nsp)
    )
    flat_i = I.reshape(-1)
    if flat_i.size and (flat_i.min() < 0 or flat_i.max() >= int(np.prod(default))):
        raise MDFError(f"MaxUnpool: an index in I is outside the unpooled shape {default}")
    shape = default
    if output_shape is not None:
        # I indexes the default unpooled layout; place each value at the same coordinates of
        # the requested (larger) shape.
        shape = tuple(int(v) for v in np.asarray(output_shape).reshape(-1))
        if len(shape) != X.ndim or any(a < b for a, b in zip(shape, default)):
            raise MDFError(
                f"MaxUnpool: output_shape {shape} should have rank {X.ndim} and be "
                f"at least the unpooled shape {default}"
            )
        flat_i = np.ravel_multi_index(np.unravel_index(flat_i, default), shape)
    y = np.zeros(int(np.prod(shape)), dtype=X.dtype)
    _scatter_flat(y, flat_i, np.ascontiguousarray(X).reshape(-1))
    return (y.reshape(shape),)
