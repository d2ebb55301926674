"""A Conv whose value only an inference BatchNormalization reads (and, optionally, that
normalization's only reader a Relu), in one kernel call of the compiled backend (issue 22,
goal 5: onnxruntime folds the normalization into the convolution and fuses the Relu).

The plan stage decides the pairs (``plan.fusion.conv_bn_pairs``, ``bn_relu_pairs``); the
generated code of the Conv node calls ``conv.conv_jit`` with its value's slot ``Y`` and ``BN
= (scale, B, mean, var, epsilon, BNY, R, relu)``: the normalization's parameters, its value's
slot ``BNY``, the Relu's slot ``R`` and whether there is one (else ``R`` is ``BNY``, unwritten). Every value stays readable and is bit for
bit what its own node computes: the convolution as its kernel gives it, the normalization by
the same coefficients (:func:`~.normalization._bn_coefficients`) and the same float operations
(``v * a[c] + b[c]`` in the value's dtype) as the BatchNormalization kernel, the Relu as the
engine's. The weights are not folded (that changes the rounding). With the shifted-slice
kernel the normalization and the Relu are written as each block of values leaves the vector
tiles (:func:`shift_item_bn`); the other kernels write the convolution, then one pass writes
both (:func:`finish`).
"""

from __future__ import annotations

import numba
import numpy as np

from ._conv_shift import into_slot, item_run, relu_value, shift_setup
from ._im2col import U
from ._spatial_jit import shaped_like_nb
from .normalization import _bn_coefficients, _bn_into_nb


@numba.njit(cache=True)
def finish(y, X, Y, BN):
    """A Conv kernel's result ``y`` shaped like X's axes (``shaped_like_nb``), or written into
    ``Y`` (``into_slot``); then, given ``BN`` (see :func:`conv_shift_bn_into`), its
    normalization and Relu written in one pass."""
    out = into_slot(shaped_like_nb(y, X), Y)
    if BN is None:
        return out
    scale, B, mean, var, eps, BNY, R, relu = BN
    if relu:
        _bn_into_nb(out, scale, B, mean, var, eps, BNY, R)
    else:
        _bn_into_nb(out, scale, B, mean, var, eps, BNY, np.empty((0, 0, 0), dtype=out.dtype))
    return out


@numba.njit(cache=True)
def shift_item_bn(xps, offs, w, bias, of, bf, rf, ca, cb, acc, group, mg, o, Q, T, rows, item):
    """:func:`~._conv_shift.shift_item`, also writing each value's normalization ``v *
    ca[c] + cb[c]`` into ``bf`` and (``rf`` not empty) its Relu into ``rf`` (flat arrays of the
    output's size)."""
    M = w.shape[0]
    Hq, Wq = Q[1], Q[2]
    n, g, m, nf, t0, tc = item_run(xps, offs, w, bias, acc, group, mg, Q, T, rows, item)
    relu = rf.size > 0
    for j in range(nf):
        aj = acc[j]
        ch = g * mg + m + j
        ac = ca[ch]
        bc = cb[ch]
        base = (n * M + ch) * o[0] * o[1] * o[2]
        for rho in range(t0 // Wq, (t0 + tc + Wq - 1) // Wq):
            z = rho // Hq
            i = rho - z * Hq
            if i >= o[1]:
                continue
            src = rho * Wq - t0
            dst = base + (z * o[1] + i) * o[2]
            if relu:
                for q in range(o[2]):
                    v = aj[U(src + q)]
                    of[U(dst + q)] = v
                    u = v * ac + bc
                    bf[U(dst + q)] = u
                    rf[U(dst + q)] = relu_value(u)
            else:
                for q in range(o[2]):
                    v = aj[U(src + q)]
                    of[U(dst + q)] = v
                    bf[U(dst + q)] = v * ac + bc


@numba.njit(cache=True)
def conv_shift_bn_into(x, w, bias, g, Y, BN):
    """The convolution by shifted slices of ``x`` (as ``_conv_shift.conv_shift_into``) into
    ``Y``, and by ``BN`` = (scale, B, mean, var, epsilon, BNY, R, relu) its normalization into
    ``BNY`` and, when ``relu``, the Relu of that into ``R``: C-contiguous arrays of the
    output's size (``R`` is not written when not ``relu``)."""
    group, o = g[15], g[12:15]
    N, M = x.shape[0], w.shape[0]
    size = N * M * o[0] * o[1] * o[2]
    scale, B, mean, var, eps, BNY, R, relu = BN
    if Y.size != size or BNY.size != size or R.size != size:
        raise ValueError("a value of another shape than its compiled slot")
    for v in (scale, B, mean, var):
        if v.size != M:
            raise ValueError("BatchNormalization: a parameter has not one value per channel")
    s, b = np.asarray(scale).reshape(-1), np.asarray(B).reshape(-1)
    mu, va = np.asarray(mean).reshape(-1), np.asarray(var).reshape(-1)
    y3 = Y.reshape((N, M, size // max(1, N * M)))
    ca, cb = _bn_coefficients(y3, s, b, mu, va, float(eps))
    xps, offs, Q, T, rows, total, acc = shift_setup(x, w, g)
    wc = np.ascontiguousarray(w)
    bc = np.ascontiguousarray(bias)
    of, bf = Y.reshape(-1), BNY.reshape(-1)
    rf = R.reshape(-1) if relu else np.empty(0, dtype=x.dtype)
    for i in range(total):
        shift_item_bn(
            xps, offs, wc, bc, of, bf, rf, ca, cb, acc, group, M // group, o, Q, T, rows, i
        )
    return Y
