"""The im2col machinery of the convolutions (:mod:`.conv`, :mod:`.conv_transpose`): tiles of
input columns gathered for a filter product (:func:`im2col_rows`, :func:`tap_range`), and the two
products that consume them: :func:`gemm_small`, an own loop for thin filters or small products
(see :func:`use_gemm_small`), and :func:`gemm_into`, BLAS through Numba's gemm helper, which can
write into a strided block of the output. The kernels index flat arrays with unsigned offsets
(see :data:`U`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

#: Offsets into flat arrays are made unsigned: Numba then indexes without the negative-index
#: wraparound test that keeps LLVM from vectorizing a loop.
U = np.uint64

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
#: BLAS's fixed cost per call dominates. (One thread, float32: a 32x145x256 product takes
#: 23 us here and 33 us in OpenBLAS, and they are even at about 4 M multiply-adds, so this
#: could be higher; tests/test_onnx_conv_pool_paths.py's BLAS cases are sized for this value.)
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
def tap_range(n_out, base, s, size):
    """Output positions ``[lo, hi)`` along an axis whose input index ``q * s + base`` is
    inside ``[0, size)``."""
    lo = 0 if base >= 0 else (-base + s - 1) // s
    hi = 0 if base >= size else (size - base + s - 1) // s
    lo = min(lo, n_out)
    return lo, max(min(hi, n_out), lo)


@numba.njit(cache=True)
def im2col_rows(x, n, c0, cg, k, s, d, pb, o, r0, r1, cols):
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
        lo[e], hi[e] = tap_range(o2, e * d[2] - pb[2], s[2], W)
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
