"""Numba inner loops of the Hexagon backend: 8x8->32 convolution, depthwise convolution, matrix
product, pooling and the int32 -> uint8 requantization, all in integer arithmetic where the
hardware uses it (products and sums of zero-point-shifted codes accumulate in int32).

Tensors are BHWD (NHWC). Spatial padding is implicit: a padded tap holds the input's zero code,
so it contributes (z - z) * w = 0 and is simply skipped: each loop over a window runs over
the taps inside the input only (:func:`taps`).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def taps(o, stride, pad, k, size):  # pragma: no cover - compiled
    """The taps ``[lo, hi)`` of a window of ``k`` taps at output position ``o`` that fall inside
    an input axis of ``size`` (the others are padding, holding the zero code: they are
    skipped); tap ``t`` reads input index ``o * stride - pad + t``."""
    start = o * stride - pad
    lo = max(0, -start)
    return lo, max(lo, min(k, size - start))


@numba.njit(cache=True, inline="always")
def window(i, j, sh, sw, pad_t, pad_l, kh, kw, ih, iw):  # pragma: no cover - compiled
    """The window of output ``(i, j)`` inside the input: its taps ``[a0, a1)`` down and
    ``[b0, b1)`` across (:func:`taps`), and the input row and column of tap 0, so that tap
    ``(a, b)`` reads ``(y0 + a, x0 + b)``."""
    y0 = i * sh - pad_t
    x0 = j * sw - pad_l
    a0, a1 = taps(i, sh, pad_t, kh, ih)
    b0, b1 = taps(j, sw, pad_l, kw, iw)
    return a0, a1, b0, b1, y0, x0


@numba.njit(cache=True, inline="always")
def to_u8(v):  # pragma: no cover - compiled
    """The uint8 code of a float32 ``v`` in code units: rounded half up, clamped to [0, 255]."""
    r = np.floor(v + np.float32(0.5)) if v >= 0 else np.float32(0.0)
    return 255 if r > 255 else np.uint8(r)


@numba.njit(cache=True)
def conv2d_u8(x, w, zx, zw, sh, sw, pad_t, pad_l, oh, ow):  # pragma: no cover - compiled
    """acc[b,i,j,o] = sum over (fh,fw,c) of (x - zx) * (w - zw), int32; w is [fh,fw,din,dout]."""
    nb, ih, iw, din = x.shape
    fh, fw, _, dout = w.shape
    wz = np.empty((fh, fw, din, dout), dtype=np.int32)
    for a in range(fh):
        for b in range(fw):
            for c in range(din):
                for o in range(dout):
                    wz[a, b, c, o] = np.int32(w[a, b, c, o]) - zw
    out = np.zeros((nb, oh, ow, dout), dtype=np.int32)
    xs = np.empty(din, dtype=np.int32)
    for n in range(nb):
        for i in range(oh):
            for j in range(ow):
                acc = out[n, i, j]
                a0, a1, b0, b1, y0, x0 = window(i, j, sh, sw, pad_t, pad_l, fh, fw, ih, iw)
                for a in range(a0, a1):
                    for b in range(b0, b1):
                        for c in range(din):
                            xs[c] = np.int32(x[n, y0 + a, x0 + b, c]) - zx
                        for c in range(din):
                            v = xs[c]
                            if v == 0:
                                continue
                            for o in range(dout):
                                acc[o] += v * wz[a, b, c, o]
    return out


@numba.njit(cache=True)
def depthwise_u8(x, w, zx, zw, sh, sw, pad_t, pad_l, oh, ow):  # pragma: no cover - compiled
    """Depthwise: w is [fh,fw,din,mult]; output channel c*mult+m uses input channel c only."""
    nb, ih, iw, din = x.shape
    fh, fw, _, mult = w.shape
    out = np.zeros((nb, oh, ow, din * mult), dtype=np.int32)
    for n in range(nb):
        for i in range(oh):
            for j in range(ow):
                a0, a1, b0, b1, y0, x0 = window(i, j, sh, sw, pad_t, pad_l, fh, fw, ih, iw)
                for a in range(a0, a1):
                    for b in range(b0, b1):
                        for c in range(din):
                            v = np.int32(x[n, y0 + a, x0 + b, c]) - zx
                            for m in range(mult):
                                out[n, i, j, c * mult + m] += v * (np.int32(w[a, b, c, m]) - zw)
    return out


@numba.njit(cache=True)
def matmul_u8(a, b, za, zb):  # pragma: no cover - compiled
    """acc[m,n] = sum_k (a[m,k] - za) * (b[k,n] - zb), int32."""
    m_, k_ = a.shape
    n_ = b.shape[1]
    bz = np.empty((k_, n_), dtype=np.int32)
    for k in range(k_):
        for n in range(n_):
            bz[k, n] = np.int32(b[k, n]) - zb
    out = np.zeros((m_, n_), dtype=np.int32)
    for m in range(m_):
        row = out[m]
        for k in range(k_):
            v = np.int32(a[m, k]) - za
            if v == 0:
                continue
            for n in range(n_):
                row[n] += v * bz[k, n]
    return out


@numba.njit(cache=True)
def pool_u8(x, kind, kh, kw, sh, sw, pad_t, pad_l, oh, ow, zx, step):  # pragma: no cover
    """Pooling over in-bounds taps. kind 0 = max (codes), 1 = average (integer mean of codes,
    rounded half up), 2 = L2 (sqrt of the mean of squared real values, re-quantized)."""
    nb, ih, iw, d = x.shape
    out = np.empty((nb, oh, ow, d), dtype=np.uint8)
    for n in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(d):
                    mx = 0
                    s = 0
                    s2 = 0.0
                    cnt = 0
                    a0, a1, b0, b1, y0, x0 = window(i, j, sh, sw, pad_t, pad_l, kh, kw, ih, iw)
                    for a in range(a0, a1):
                        for b in range(b0, b1):
                            v = np.int32(x[n, y0 + a, x0 + b, c])
                            if v > mx:
                                mx = v
                            s += v
                            r = np.float64(v - zx) * step
                            s2 += r * r
                            cnt += 1
                    if kind == 0:
                        out[n, i, j, c] = mx
                    elif kind == 1:
                        out[n, i, j, c] = (s + cnt // 2) // cnt
                    else:
                        q = np.sqrt(s2 / cnt) / step + zx
                        q = np.floor(q + 0.5)
                        out[n, i, j, c] = 255 if q > 255 else (0 if q < 0 else np.uint8(q))
    return out


@numba.njit(cache=True)
def pool_f(x, kind, kh, kw, sh, sw, pad_t, pad_l, oh, ow):  # pragma: no cover - compiled
    """Float pooling over in-bounds taps: kind 0 max, 1 average, 2 L2 (sqrt of mean square)."""
    nb, ih, iw, d = x.shape
    out = np.empty((nb, oh, ow, d), dtype=x.dtype)
    for n in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(d):
                    mx = -np.inf
                    s = 0.0
                    cnt = 0
                    a0, a1, b0, b1, y0, x0 = window(i, j, sh, sw, pad_t, pad_l, kh, kw, ih, iw)
                    for a in range(a0, a1):
                        for b in range(b0, b1):
                            v = x[n, y0 + a, x0 + b, c]
                            if v > mx:
                                mx = v
                            s += v * v if kind == 2 else v
                            cnt += 1
                    if kind == 0:
                        out[n, i, j, c] = mx
                    elif kind == 1:
                        out[n, i, j, c] = s / cnt
                    else:
                        out[n, i, j, c] = np.sqrt(s / cnt)
    return out


@numba.njit(cache=True)
def requantize_q32(q, step_in, mn, step_out):  # pragma: no cover - compiled
    """uint8 codes of int32 codes: clamp(round((q * step_in - mn) / step_out), 0, 255), float32."""
    flat = q.reshape(-1)
    out = np.empty(flat.size, dtype=np.uint8)
    for i in range(flat.size):
        v = (np.float32(flat[i]) * step_in - mn) / step_out
        out[i] = to_u8(v)
    return out


@numba.njit(cache=True)
def requantize_affine(acc, gain, offset, mn, step_out):  # pragma: no cover - compiled
    """uint8 codes of acc[..., c] * gain[c] + offset[c] (float32) in the range starting at mn."""
    d = acc.shape[-1]
    flat = acc.reshape(-1)
    out = np.empty(flat.size, dtype=np.uint8)
    for i in range(flat.size):
        c = i % d
        v = (np.float32(flat[i]) * gain[c] + offset[c] - mn) / step_out
        out[i] = to_u8(v)
    return out


@numba.njit(cache=True)
def affine_minmax(acc, gain, offset):  # pragma: no cover - compiled
    """(min, max) of acc[..., c] * gain[c] + offset[c] in float32."""
    d = acc.shape[-1]
    flat = acc.reshape(-1)
    lo = np.float32(np.inf)
    hi = np.float32(-np.inf)
    for i in range(flat.size):
        c = i % d
        v = np.float32(flat[i]) * gain[c] + offset[c]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    return lo, hi
