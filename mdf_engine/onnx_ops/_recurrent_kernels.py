"""The Numba building blocks of the recurrent ONNX operators (RNN, GRU, LSTM: the modules
:mod:`.rnn`, :mod:`.gru`, :mod:`.lstm`), shared by their time loops.

For each direction the input projection ``X @ W^T`` is computed for the whole sequence at once
(one BLAS call, see :mod:`._recurrent_inputs`); each op's njit time loop then computes per step
the recurrence ``h R^T`` (:func:`recur`: own vectorized loops over the row-major ``R`` for
batches up to :data:`OWN_RECUR_MAX_BATCH`, BLAS gemm for larger ones), adds the biases and the
projected input in the same pass, then applies the gate activations over contiguous gate slices
(:func:`apply_activation`). Activations are integer codes (:data:`ACT_CODES`) with their
``alpha``/``beta``. Sigmoid and tanh use an own vectorizable exp (see :func:`_exp_split`):
float64 results agree with libm to a few ulp, float32 ones to about 1e-6 relative (1e-7
absolute).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# ------------------------------------------------------------------------------ activations
ACT_CODES = {
    "relu": 0,
    "tanh": 1,
    "sigmoid": 2,
    "affine": 3,
    "leakyrelu": 4,
    "thresholdedrelu": 5,
    "scaledtanh": 6,
    "hardsigmoid": 7,
    "elu": 8,
    "softsign": 9,
    "softplus": 10,
}
#: (number of parameters, default alpha, default beta) per activation code.
ACT_PARAMS = {
    0: (0, 0.0, 0.0),
    1: (0, 0.0, 0.0),
    2: (0, 0.0, 0.0),
    3: (2, 1.0, 0.0),
    4: (1, 0.01, 0.0),
    5: (1, 1.0, 0.0),
    6: (2, 1.0, 1.0),
    7: (2, 0.2, 0.5),
    8: (1, 1.0, 0.0),
    9: (0, 0.0, 0.0),
    10: (0, 0.0, 0.0),
}


@numba.njit(cache=True)
def _act(x: float, code: int, alpha: float, beta: float) -> float:
    if code == 2:
        if x >= 0.0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
    if code == 1:
        return math.tanh(x)
    if code == 0:
        return x if x > 0.0 else 0.0
    if code == 3:
        return alpha * x + beta
    if code == 4:
        return x if x >= 0.0 else alpha * x
    if code == 5:
        return x if x >= alpha else 0.0
    if code == 6:
        return alpha * math.tanh(beta * x)
    if code == 7:
        return min(max(alpha * x + beta, 0.0), 1.0)
    if code == 8:
        return x if x >= 0.0 else alpha * (math.exp(x) - 1.0)
    if code == 9:
        return x / (1.0 + abs(x))
    # softplus, stable for large |x|
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


# ------------------------------------------------------------------------------- time loops
@numba.njit(cache=True)
def longest(lens):
    """The number of time steps a direction's loop runs: the longest entry's length (0 for an
    empty batch)."""
    n = 0
    for b in range(lens.shape[0]):
        n = max(n, lens[b])
    return n


@numba.njit(cache=True)
def time_index(length, k, reverse):
    """The time index of loop step ``k`` for a batch entry of ``length`` steps: ``k`` forwards;
    backwards, each entry starts from its own last valid step (``length - 1``)."""
    return length - 1 - k if reverse else k


# ---------------------------------------------------------------------------------- kernels
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two for an exact n*ln2 subtraction
_LN2_LO = 1.90821492927058770002e-10
_LN2_HI32 = 0.693359375  # the float32 split (few significant bits in the high part)
_LN2_LO32 = -2.12194440e-4


@numba.njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def matvec(R, h, out):
    """``out[j] = sum_k R[j, k] h[k]`` for C-contiguous ``R``, four rows at a time.

    One batch entry's recurrence ``h R^T`` read straight from ``R`` (no transposed copy): the
    four row sums share each load of ``h``, and re-association lets LLVM keep them as vector
    partial sums (so the summation order is not the sequential one; the result is as accurate).
    """
    n, m = R.shape
    F = out.dtype.type
    j = 0
    while j + 4 <= n:
        s0, s1, s2, s3 = F(0.0), F(0.0), F(0.0), F(0.0)
        for k in range(m):
            hk = h[k]
            s0 += R[j, k] * hk
            s1 += R[j + 1, k] * hk
            s2 += R[j + 2, k] * hk
            s3 += R[j + 3, k] * hk
        out[j], out[j + 1], out[j + 2], out[j + 3] = s0, s1, s2, s3
        j += 4
    while j < n:
        s = F(0.0)
        for k in range(m):
            s += R[j, k] * h[k]
        out[j] = s
        j += 1


@numba.njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def matvec2(R, h, g, out_h, out_g):
    """:func:`matvec` for two vectors ``h`` and ``g`` in one pass over ``R`` (each load of
    ``R`` feeds two sums: the recurrence reads ``R`` from cache once per two batch entries)."""
    n, m = R.shape
    F = out_h.dtype.type
    j = 0
    while j + 4 <= n:
        s0, s1, s2, s3 = F(0.0), F(0.0), F(0.0), F(0.0)
        t0, t1, t2, t3 = F(0.0), F(0.0), F(0.0), F(0.0)
        for k in range(m):
            hk, gk = h[k], g[k]
            r0, r1, r2, r3 = R[j, k], R[j + 1, k], R[j + 2, k], R[j + 3, k]
            s0 += r0 * hk
            s1 += r1 * hk
            s2 += r2 * hk
            s3 += r3 * hk
            t0 += r0 * gk
            t1 += r1 * gk
            t2 += r2 * gk
            t3 += r3 * gk
        out_h[j], out_h[j + 1], out_h[j + 2], out_h[j + 3] = s0, s1, s2, s3
        out_g[j], out_g[j + 1], out_g[j + 2], out_g[j + 3] = t0, t1, t2, t3
        j += 4
    while j < n:
        s, t = F(0.0), F(0.0)
        for k in range(m):
            s += R[j, k] * h[k]
            t += R[j, k] * g[k]
        out_h[j], out_g[j] = s, t
        j += 1


#: batch sizes up to this use the own loops of :func:`recur`, larger ones BLAS gemm
OWN_RECUR_MAX_BATCH = 32


@numba.njit(cache=True)
def recur(R, h, out):
    """``out = h @ R^T`` ([B, H] times the C-contiguous [G*H, H] ``R``).

    Up to :data:`OWN_RECUR_MAX_BATCH` batch entries: the own loops, two entries per pass over
    ``R`` (measured 5-10x faster than OpenBLAS sgemm for 2-16 rows, which packs ``R`` on every
    call, and as fast as sgemv for one row, without a transposed copy of ``R``); above that,
    BLAS gemm on the F-contiguous view ``R.T``."""
    B = h.shape[0]
    if B > OWN_RECUR_MAX_BATCH:
        np.dot(h, R.T, out)
        return
    b = 0
    while b + 2 <= B:
        matvec2(R, h[b], h[b + 1], out[b], out[b + 1])
        b += 2
    if b < B:
        matvec(R, h[b], out[b])


@numba.njit(cache=True, fastmath={"contract"})
def _exp_split(x, k, p, bits):
    """``exp(-k |x[i]|) = p[i] * 2**n[i]`` for every ``i``, in ``x``'s dtype, written so LLVM
    vectorizes it; ``2**n[i]`` is left as the exponent field in ``bits[i]`` (int64 for float64
    data, int32 for float32: ``bits.view(x.dtype)`` holds the powers), so the caller multiplies
    it in its own pass.

    ``v = -k |x| = n ln2 + r`` with ``|r| <= ln2 / 2`` (``n`` rounded with the
    add-a-magic-number trick) and a Taylor polynomial for ``exp(r)`` (degree 12 for float64,
    relative error < 2e-16; degree 7 for float32, < 1e-8). Only FMA contraction is allowed as
    a fast-math flag."""
    F = x.dtype.type
    m = x.shape[0]
    if bits.itemsize == 4:
        lo, magic = F(-87.0), F(12582912.0)
        for i in range(m):
            v = -k * abs(x[i])
            v = v if v > lo else lo
            n = (v * F(_LOG2E) + magic) - magic
            r = (v - n * F(_LN2_HI32)) - n * F(_LN2_LO32)
            q = F(1.0 / 5040.0)
            q = q * r + F(1.0 / 720.0)
            q = q * r + F(1.0 / 120.0)
            q = q * r + F(1.0 / 24.0)
            q = q * r + F(1.0 / 6.0)
            q = q * r + F(0.5)
            q = q * r + F(1.0)
            q = q * r + F(1.0)
            p[i] = q
            bits[i] = (np.int32(n) + 127) << 23
    else:
        lo, magic = F(-700.0), F(6755399441055744.0)
        for i in range(m):
            v = -k * abs(x[i])
            v = v if v > lo else lo
            n = (v * F(_LOG2E) + magic) - magic
            r = (v - n * F(_LN2_HI)) - n * F(_LN2_LO)
            q = F(1.0 / 479001600.0)
            q = q * r + F(1.0 / 39916800.0)
            q = q * r + F(1.0 / 3628800.0)
            q = q * r + F(1.0 / 362880.0)
            q = q * r + F(1.0 / 40320.0)
            q = q * r + F(1.0 / 5040.0)
            q = q * r + F(1.0 / 720.0)
            q = q * r + F(1.0 / 120.0)
            q = q * r + F(1.0 / 24.0)
            q = q * r + F(1.0 / 6.0)
            q = q * r + F(0.5)
            q = q * r + F(1.0)
            q = q * r + F(1.0)
            p[i] = q
            bits[i] = np.int64(np.int32(n) + 1023) << 52


@numba.njit(cache=True, error_model="numpy")
def apply_activation(x, code, alpha, beta, clip, scratch, bits):
    """Clip (when ``clip`` > 0) then apply activation ``code`` to every element of the 1-D
    C-contiguous ``x``, in place. ``scratch`` ([>= x.size], ``x``'s dtype) and ``bits``
    ([>= x.size], int32 for float32 data, int64 for float64) are work buffers. The code is
    tested once, outside the element loops; sigmoid and tanh take two passes, the exp parts
    (:func:`_exp_split`) then the result, in the data's precision. The numpy error model (no
    zero-division checks) lets the loops with a division vectorize."""
    n = x.shape[0]
    F = x.dtype.type
    if clip > 0.0:
        cl = F(clip)
        for i in range(n):
            x[i] = min(max(x[i], -cl), cl)
    if code == 2 or code == 1:
        p = scratch[:n]
        b = bits[:n]
        _exp_split(x, F(1.0) if code == 2 else F(2.0), p, b)
        scale = b.view(x.dtype)
        one = F(1.0)
        if code == 2:  # sigmoid(x) = 1/(1+e^-x) = e^x/(1+e^x), with e = exp(-|x|)
            for i in range(n):
                e = p[i] * scale[i]
                s = one / (one + e)
                x[i] = s if x[i] >= 0 else e * s
        else:  # tanh |x| = (1-e)/(1+e), e = exp(-2|x|); a series near 0 avoids cancellation
            c3, c5, c7, c9 = F(-1.0 / 3.0), F(2.0 / 15.0), F(-17.0 / 315.0), F(62.0 / 2835.0)
            thr = F(0.05) if bits.itemsize == 4 else F(0.01)
            for i in range(n):
                xi = x[i]
                ax = abs(xi)
                e = p[i] * scale[i]
                t = (one - e) / (one + e)
                x2 = xi * xi
                small = ax * (one + x2 * (c3 + x2 * (c5 + x2 * (c7 + x2 * c9))))
                t = small if ax < thr else t
                x[i] = t if xi >= 0 else -t
    else:
        for i in range(n):
            x[i] = _act(x[i], code, alpha, beta)
