"""Recurrent ONNX operators RNN, GRU and LSTM with Numba time-loop kernels.

For each direction the input projection ``X @ W^T`` is computed for the whole sequence at once
(one BLAS call); the njit kernel then runs the time loop: per step the recurrence ``h R^T``
(:func:`_recur`: own vectorized loops over the row-major ``R`` for batches up to 32,
BLAS gemm for larger ones), the biases and the projected input added in the same pass, then
the gate activations over contiguous gate slices. Activations are passed to the kernel as
integer codes with their ``alpha``/``beta``.

Supported: directions forward/reverse/bidirectional, every activation of the ONNX list
(Relu Tanh Sigmoid Affine LeakyRelu ThresholdedRelu ScaledTanh HardSigmoid Elu Softsign
Softplus, names case-insensitive) with ``activation_alpha``/``activation_beta`` consumed in order
by the activations that take parameters, ``clip`` (applied to every gate pre-activation),
``sequence_lens`` (steps past a batch entry's length give zeros in ``Y``; ``Y_h``/``Y_c`` hold the
last valid step, the initial state for a length of 0 (onnxruntime gives zeros there; see
docs/semantics.md); a reverse direction starts from each entry's own last valid step), ``initial_h``,
``initial_c``, peepholes ``P``, LSTM ``input_forget`` (``f = 1 - i``), GRU
``linear_before_reset``, and ``layout`` 0 (``[seq, batch, ...]``) or 1 (``[batch, seq, ...]``).
Computation is in the input's float dtype (float32 or float64). Sigmoid and tanh use an own
vectorizable exp (see :func:`_exp_split`): float64 results agree with libm to a few ulp,
float32 ones to about 1e-6 relative (1e-7 absolute).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import onnx_op

# ------------------------------------------------------------------------------ activations
_ACT_CODES = {
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
_ACT_PARAMS = {
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


# ---------------------------------------------------------------------------------- kernels
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two for an exact n*ln2 subtraction
_LN2_LO = 1.90821492927058770002e-10
_LN2_HI32 = 0.693359375  # the float32 split (few significant bits in the high part)
_LN2_LO32 = -2.12194440e-4


@numba.njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _matvec(R, h, out):
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
def _matvec2(R, h, g, out_h, out_g):
    """:func:`_matvec` for two vectors ``h`` and ``g`` in one pass over ``R`` (each load of
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


#: batch sizes up to this use the own loops of :func:`_recur`, larger ones BLAS gemm
_OWN_RECUR_MAX_BATCH = 32


@numba.njit(cache=True)
def _recur(R, h, out):
    """``out = h @ R^T`` ([B, H] times the C-contiguous [G*H, H] ``R``).

    Up to :data:`_OWN_RECUR_MAX_BATCH` batch entries: the own loops, two entries per pass over
    ``R`` (measured 5-10x faster than OpenBLAS sgemm for 2-16 rows, which packs ``R`` on every
    call, and as fast as sgemv for one row, without a transposed copy of ``R``); above that,
    BLAS gemm on the F-contiguous view ``R.T``."""
    B = h.shape[0]
    if B > _OWN_RECUR_MAX_BATCH:
        np.dot(h, R.T, out)
        return
    b = 0
    while b + 2 <= B:
        _matvec2(R, h[b], h[b + 1], out[b], out[b + 1])
        b += 2
    if b < B:
        _matvec(R, h[b], out[b])


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
def _apply(x, code, alpha, beta, clip, scratch, bits):
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


@numba.njit(cache=True, error_model="numpy")
def _rnn_dir(xw, bias, R, h0, lens, reverse, codes, alphas, betas, clip, bt):
    T, B, H = xw.shape[0], xw.shape[1], R.shape[1]
    Y = np.zeros((T, B, H), dtype=xw.dtype)
    h = h0.copy()
    pre = np.zeros((B, H), dtype=xw.dtype)
    sc = np.empty(H, dtype=xw.dtype)
    maxlen = 0
    for b in range(B):
        maxlen = max(maxlen, lens[b])
    for k in range(maxlen):
        _recur(R, h, pre)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h
                continue
            t = lens[b] - 1 - k if reverse else k
            p, x = pre[b], xw[t, b]
            for j in range(H):
                p[j] += x[j] + bias[j]
            _apply(p, codes[0], alphas[0], betas[0], clip, sc, bt)
            h[b] = p
            Y[t, b] = p
    return Y, h


@numba.njit(cache=True, error_model="numpy")
def _gru_dir(xw, bias, R, rbh, h0, lens, reverse, lbr, codes, alphas, betas, clip, bt):
    T, B, H = xw.shape[0], xw.shape[1], R.shape[1]
    F = xw.dtype.type
    Y = np.zeros((T, B, H), dtype=xw.dtype)
    h = h0.copy()
    Rzr, Rh = R[: 2 * H], R[2 * H :]
    zr = np.zeros((B, 2 * H), dtype=xw.dtype)  # z and r recurrences, then gates
    hh = np.zeros((B, H), dtype=xw.dtype)
    rh = np.zeros((B, H), dtype=xw.dtype)
    sc = np.empty(2 * H, dtype=xw.dtype)
    one = F(1.0)
    maxlen = 0
    for b in range(B):
        maxlen = max(maxlen, lens[b])
    for k in range(maxlen):
        _recur(Rzr, h, zr)
        for b in range(B):
            if k >= lens[b]:
                continue
            t = lens[b] - 1 - k if reverse else k
            g, x = zr[b], xw[t, b]
            for j in range(2 * H):
                g[j] += x[j] + bias[j]
            _apply(g, codes[0], alphas[0], betas[0], clip, sc, bt)
            if not lbr:
                for j in range(H):
                    rh[b, j] = g[H + j] * h[b, j]
        if lbr:
            _recur(Rh, h, hh)
        else:
            _recur(Rh, rh, hh)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h
                continue
            t = lens[b] - 1 - k if reverse else k
            g, x, c = zr[b], xw[t, b], hh[b]
            if lbr:
                for j in range(H):
                    c[j] = x[2 * H + j] + bias[2 * H + j] + g[H + j] * (c[j] + rbh[j])
            else:
                for j in range(H):
                    c[j] += x[2 * H + j] + bias[2 * H + j] + rbh[j]
            _apply(c, codes[1], alphas[1], betas[1], clip, sc, bt)
            hb, yb = h[b], Y[t, b]
            for j in range(H):
                v = (one - g[j]) * c[j] + g[j] * hb[j]
                hb[j] = v
                yb[j] = v
    return Y, h


@numba.njit(cache=True, error_model="numpy")
def _lstm_dir(
    xw, bias, R, h0, c0, P, has_p, lens, reverse, input_forget, codes, alphas, betas, clip, bt
):
    T, B, H = xw.shape[0], xw.shape[1], R.shape[1]
    F = xw.dtype.type
    Y = np.zeros((T, B, H), dtype=xw.dtype)
    h = h0.copy()
    c = c0.copy()
    rh = np.zeros((B, 4 * H), dtype=xw.dtype)  # recurrence, then gates, in order i, o, f, c
    hc = np.empty(H, dtype=xw.dtype)
    sc = np.empty(3 * H, dtype=xw.dtype)
    # without peepholes the i, o, f gates (one activation, contiguous) go through one call
    fused = (not has_p) and (not input_forget)
    one = F(1.0)
    maxlen = 0
    for b in range(B):
        maxlen = max(maxlen, lens[b])
    for k in range(maxlen):
        _recur(R, h, rh)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h and c
                continue
            t = lens[b] - 1 - k if reverse else k
            g, x, cb = rh[b], xw[t, b], c[b]
            for j in range(4 * H):
                g[j] += x[j] + bias[j]
            gi, go, gf, gc = g[:H], g[H : 2 * H], g[2 * H : 3 * H], g[3 * H :]
            if fused:
                _apply(g[: 3 * H], codes[0], alphas[0], betas[0], clip, sc, bt)
            else:
                if has_p:
                    for j in range(H):
                        gi[j] += P[j] * cb[j]
                        gf[j] += P[2 * H + j] * cb[j]
                _apply(gi, codes[0], alphas[0], betas[0], clip, sc, bt)
                if input_forget:
                    for j in range(H):
                        gf[j] = one - gi[j]
                else:
                    _apply(gf, codes[0], alphas[0], betas[0], clip, sc, bt)
            _apply(gc, codes[1], alphas[1], betas[1], clip, sc, bt)
            for j in range(H):
                cn = gf[j] * cb[j] + gi[j] * gc[j]
                cb[j] = cn
                hc[j] = cn
            if not fused:  # the output gate sees the new cell state through its peephole
                if has_p:
                    for j in range(H):
                        go[j] += P[H + j] * cb[j]
                _apply(go, codes[0], alphas[0], betas[0], clip, sc, bt)
            _apply(hc, codes[2], alphas[2], betas[2], 0.0, sc, bt)
            hb, yb = h[b], Y[t, b]
            for j in range(H):
                v = go[j] * hc[j]
                hb[j] = v
                yb[j] = v
    return Y, h, c


# --------------------------------------------------------------------------------- plumbing
def _activations(
    names: Any, alpha: Any, beta: Any, per_dir: int, defaults: tuple[str, ...], n_dir: int, op: str
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per direction: (codes, alphas, betas) arrays of length ``per_dir`` (read-only arrays
    shared between calls: the parsing is memoised on the attribute values)."""
    key = (
        tuple(names) if names else None,
        tuple(alpha) if alpha is not None else None,
        tuple(beta) if beta is not None else None,
        per_dir,
        defaults,
        n_dir,
        op,
    )
    return _parse_activations(*key)


@functools.lru_cache(maxsize=256)
def _parse_activations(
    names: Any, alpha: Any, beta: Any, per_dir: int, defaults: tuple[str, ...], n_dir: int, op: str
) -> list:
    names = list(names) if names else list(defaults) * n_dir
    if len(names) == per_dir and n_dir == 2:
        names = names * 2
    if len(names) != per_dir * n_dir:
        raise MDFError(
            f"{op}: activations must list {per_dir * n_dir} functions "
            f"({per_dir} per direction), got {names}"
        )
    alpha = list(alpha) if alpha is not None else []
    beta = list(beta) if beta is not None else []
    codes, alphas, betas = [], [], []
    ia = ib = 0
    for name in names:
        key = str(name).lower()
        if key not in _ACT_CODES:
            raise MDFError(
                f"{op}: unknown activation '{name}' (known: {', '.join(sorted(_ACT_CODES))})"
            )
        code = _ACT_CODES[key]
        nparam, da, db = _ACT_PARAMS[code]
        a, b = da, db
        if nparam >= 1 and ia < len(alpha):
            a = float(alpha[ia])
            ia += 1
        if nparam >= 2 and ib < len(beta):
            b = float(beta[ib])
            ib += 1
        codes.append(code)
        alphas.append(a)
        betas.append(b)
    out = []
    for d in range(n_dir):
        s = slice(d * per_dir, (d + 1) * per_dir)
        arrays = (
            np.array(codes[s], dtype=np.int64),
            np.array(alphas[s], dtype=np.float64),
            np.array(betas[s], dtype=np.float64),
        )
        for a in arrays:
            a.flags.writeable = False
        out.append(arrays)
    return out


def _aligned(a: np.ndarray, align: int = 32) -> np.ndarray:
    """``a`` (C-contiguous) itself when its data starts on an ``align``-byte boundary, else a
    copy that does. The recurrence loops read ``R`` with 32-byte vector loads; from a base that
    is only 16-byte aligned (numpy's guarantee) every other load splits a cache line, measured
    25-35% slower for H=128 float32."""
    if a.ctypes.data % align == 0:
        return a
    buf = np.empty(a.nbytes + align, dtype=np.uint8)
    start = -buf.ctypes.data % align
    out = buf[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class _Prep:
    """Validated, layout-normalised inputs shared by the three operators."""

    def __init__(
        self,
        op: str,
        gates: int,
        X: Any,
        W: Any,
        R: Any,
        B: Any,
        sequence_lens: Any,
        initial_h: Any,
        hidden_size: Any,
        direction: str,
        layout: int,
    ):
        X = np.asarray(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        self.dtype = X.dtype
        if X.ndim != 3:
            raise MDFError(f"{op}: X must be 3-D, got shape {X.shape}")
        if layout:
            X = X.transpose(1, 0, 2)
        self.X = np.ascontiguousarray(X)
        T, Bt, _ = self.X.shape
        self.dirs = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(
            direction
        )
        if self.dirs is None:
            raise MDFError(
                f"{op}: direction must be forward, reverse or bidirectional, got '{direction}'"
            )
        nd = len(self.dirs)
        self.W = np.asarray(W, dtype=self.dtype)
        self.R = np.ascontiguousarray(R, dtype=self.dtype)
        H = int(hidden_size) if hidden_size is not None else self.R.shape[-1]
        self.H = H
        if self.W.shape != (nd, gates * H, self.X.shape[2]):
            raise MDFError(
                f"{op}: W must have shape {(nd, gates * H, self.X.shape[2])}, got {self.W.shape}"
            )
        if self.R.shape != (nd, gates * H, H):
            raise MDFError(f"{op}: R must have shape {(nd, gates * H, H)}, got {self.R.shape}")
        # rows can all start 32-byte aligned; the copy (10-25 us for 256 KB) pays from ~16 steps
        if T >= 16 and (H * self.R.itemsize) % 32 == 0:
            self.R = _aligned(self.R)
        self.B = (
            np.zeros((nd, 2 * gates * H), self.dtype)
            if B is None
            else np.asarray(B, dtype=self.dtype)
        )
        if self.B.shape != (nd, 2 * gates * H):
            raise MDFError(f"{op}: B must have shape {(nd, 2 * gates * H)}, got {self.B.shape}")
        if sequence_lens is None:
            self.lens = np.full(Bt, T, dtype=np.int64)
        else:
            self.lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
        if sequence_lens is not None and (
            self.lens.shape != (Bt,) or (Bt and not 0 <= self.lens.min() <= self.lens.max() <= T)
        ):
            raise MDFError(
                f"{op}: sequence_lens must hold {Bt} lengths in [0, {T}], got {self.lens.tolist()}"
            )
        self.layout = layout
        self.h0 = self.state(initial_h, "initial_h", op)

    def state(self, s: Any, what: str, op: str) -> np.ndarray:
        nd, Bt = len(self.dirs), self.X.shape[1]
        if s is None:
            return np.zeros((nd, Bt, self.H), self.dtype)
        s = np.asarray(s, dtype=self.dtype)
        if self.layout:
            s = s.transpose(1, 0, 2)
        if s.shape != (nd, Bt, self.H):
            raise MDFError(
                f"{op}: {what} must have shape {(nd, Bt, self.H)} (layout "
                f"{self.layout}), got {s.shape}"
            )
        return np.ascontiguousarray(s)

    def bits(self, n: int) -> np.ndarray:
        """The integer work buffer of :func:`_apply` for ``n`` values at a time."""
        return np.empty(n, dtype=np.int32 if self.dtype == np.float32 else np.int64)

    def project(self, d: int) -> np.ndarray:
        """``X @ W[d]^T`` for every time step at once, as [T, B, G*H] (the kernels add the
        biases while reading it)."""
        T, Bt, I = self.X.shape
        return np.dot(self.X.reshape(T * Bt, I), self.W[d].T).reshape(T, Bt, self.W.shape[1])

    def finish(self, ys: list[np.ndarray], states: list[list[np.ndarray]]) -> tuple:
        if len(ys) == 1:  # one direction: new unit axes are free views
            Y = ys[0][:, None]
            outs = [s[0][None] for s in states]
        else:
            Y = np.stack(ys, axis=1)  # [T, D, B, H]
            outs = [np.stack(s) for s in states]  # [D, B, H]
        if self.layout:
            Y = np.ascontiguousarray(Y.transpose(2, 0, 1, 3))
            outs = [np.ascontiguousarray(o.transpose(1, 0, 2)) for o in outs]
        return (Y, *outs)


_COMMON = {
    "activation_alpha": None,
    "activation_beta": None,
    "activations": None,
    "clip": None,
    "direction": "forward",
    "hidden_size": REQUIRED,
}


@onnx_op(
    "RNN",
    inputs=("X", "W", "R", "B", "sequence_lens", "initial_h"),
    optional=("B", "sequence_lens", "initial_h"),
    attributes={**_COMMON, "layout": 0},
    outputs=("Y", "Y_h"),
    since=7,
)
def rnn(
    X: Any,
    W: Any,
    R: Any,
    B: Any = None,
    sequence_lens: Any = None,
    initial_h: Any = None,
    *,
    activation_alpha: Any = None,
    activation_beta: Any = None,
    activations: Any = None,
    clip: Any = None,
    direction: str = "forward",
    hidden_size: Any = None,
    layout: int = 0,
) -> tuple:
    """ONNX RNN: ``Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb)``; returns ``Y``, ``Y_h``."""
    p = _Prep("RNN", 1, X, W, R, B, sequence_lens, initial_h, hidden_size, direction, layout)
    acts = _activations(
        activations, activation_alpha, activation_beta, 1, ("Tanh",), len(p.dirs), "RNN"
    )
    cl = float(clip) if clip else 0.0
    ys, hs = [], []
    H = p.H
    for d, rev in enumerate(p.dirs):
        Y, h = _rnn_dir(
            p.project(d),
            p.B[d, :H] + p.B[d, H:],
            p.R[d],
            p.h0[d],
            p.lens,
            rev,
            *acts[d],
            cl,
            p.bits(H),
        )
        ys.append(Y)
        hs.append(h)
    return p.finish(ys, [hs])


@onnx_op(
    "GRU",
    inputs=("X", "W", "R", "B", "sequence_lens", "initial_h"),
    optional=("B", "sequence_lens", "initial_h"),
    attributes={**_COMMON, "linear_before_reset": 0, "layout": 0},
    outputs=("Y", "Y_h"),
    since=7,
)
def gru(
    X: Any,
    W: Any,
    R: Any,
    B: Any = None,
    sequence_lens: Any = None,
    initial_h: Any = None,
    *,
    activation_alpha: Any = None,
    activation_beta: Any = None,
    activations: Any = None,
    clip: Any = None,
    direction: str = "forward",
    hidden_size: Any = None,
    linear_before_reset: int = 0,
    layout: int = 0,
) -> tuple:
    """ONNX GRU (gate order z, r, h); returns ``Y``, ``Y_h``."""
    p = _Prep("GRU", 3, X, W, R, B, sequence_lens, initial_h, hidden_size, direction, layout)
    acts = _activations(
        activations, activation_alpha, activation_beta, 2, ("Sigmoid", "Tanh"), len(p.dirs), "GRU"
    )
    cl = float(clip) if clip else 0.0
    H = p.H
    ys, hs = [], []
    for d, rev in enumerate(p.dirs):
        wb, rb = p.B[d, : 3 * H], p.B[d, 3 * H :]
        bias = wb.copy()
        bias[: 2 * H] += rb[: 2 * H]
        Y, h = _gru_dir(
            p.project(d),
            bias,
            p.R[d],
            np.ascontiguousarray(rb[2 * H :]),
            p.h0[d],
            p.lens,
            rev,
            bool(linear_before_reset),
            *acts[d],
            cl,
            p.bits(2 * H),
        )
        ys.append(Y)
        hs.append(h)
    return p.finish(ys, [hs])


@onnx_op(
    "LSTM",
    inputs=("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"),
    optional=("B", "sequence_lens", "initial_h", "initial_c", "P"),
    attributes={**_COMMON, "input_forget": 0, "layout": 0},
    outputs=("Y", "Y_h", "Y_c"),
    since=7,
)
def lstm(
    X: Any,
    W: Any,
    R: Any,
    B: Any = None,
    sequence_lens: Any = None,
    initial_h: Any = None,
    initial_c: Any = None,
    P: Any = None,
    *,
    activation_alpha: Any = None,
    activation_beta: Any = None,
    activations: Any = None,
    clip: Any = None,
    direction: str = "forward",
    hidden_size: Any = None,
    input_forget: int = 0,
    layout: int = 0,
) -> tuple:
    """ONNX LSTM (gate order i, o, f, c; peepholes i, o, f); returns ``Y``, ``Y_h``, ``Y_c``."""
    p = _Prep("LSTM", 4, X, W, R, B, sequence_lens, initial_h, hidden_size, direction, layout)
    acts = _activations(
        activations,
        activation_alpha,
        activation_beta,
        3,
        ("Sigmoid", "Tanh", "Tanh"),
        len(p.dirs),
        "LSTM",
    )
    cl = float(clip) if clip else 0.0
    H = p.H
    c0 = p.state(initial_c, "initial_c", "LSTM")
    nd = len(p.dirs)
    if P is not None:
        P = np.asarray(P, dtype=p.dtype)
        if P.shape != (nd, 3 * H):
            raise MDFError(f"LSTM: P must have shape {(nd, 3 * H)}, got {P.shape}")
    ys, hs, cs = [], [], []
    for d, rev in enumerate(p.dirs):
        bias = p.B[d, : 4 * H] + p.B[d, 4 * H :]
        Pd = bias if P is None else np.ascontiguousarray(P[d])  # not read without peepholes
        Y, h, c = _lstm_dir(
            p.project(d),
            bias,
            p.R[d],
            p.h0[d],
            c0[d],
            Pd,
            P is not None,
            p.lens,
            rev,
            bool(input_forget),
            *acts[d],
            cl,
            p.bits(3 * H),
        )
        ys.append(Y)
        hs.append(h)
        cs.append(c)
    return p.finish(ys, [hs, cs])
