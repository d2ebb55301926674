"""``onnx::GRU``, the gated recurrent unit (gate order z, r, h; ``linear_before_reset``), with its
Numba time loop. The shared building blocks are in :mod:`._recurrent_kernels` and the argument
handling (and the list of supported attributes) in :mod:`._recurrent_inputs`.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from . import _recurrent_jit as rj
from . import onnx_op
from ._recurrent_inputs import RecurrentInputs, schema
from ._recurrent_kernels import apply_activation, longest, recur, time_index


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
    for k in range(longest(lens)):
        recur(Rzr, h, zr)
        for b in range(B):
            if k >= lens[b]:
                continue
            t = time_index(lens[b], k, reverse)
            g, x = zr[b], xw[t, b]
            for j in range(2 * H):
                g[j] += x[j] + bias[j]
            apply_activation(g, codes[0], alphas[0], betas[0], clip, sc, bt)
            if not lbr:
                for j in range(H):
                    rh[b, j] = g[H + j] * h[b, j]
        if lbr:
            recur(Rh, h, hh)
        else:
            recur(Rh, rh, hh)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h
                continue
            t = time_index(lens[b], k, reverse)
            g, x, c = zr[b], xw[t, b], hh[b]
            if lbr:
                for j in range(H):
                    c[j] = x[2 * H + j] + bias[2 * H + j] + g[H + j] * (c[j] + rbh[j])
            else:
                for j in range(H):
                    c[j] += x[2 * H + j] + bias[2 * H + j] + rbh[j]
            apply_activation(c, codes[1], alphas[1], betas[1], clip, sc, bt)
            hb, yb = h[b], Y[t, b]
            for j in range(H):
                v = (one - g[j]) * c[j] + g[j] * hb[j]
                hb[j] = v
                yb[j] = v
    return Y, h


@numba.njit(cache=True)
def gru_jit(
    X,
    W,
    R,
    B,
    sequence_lens,
    initial_h,
    alpha,
    beta,
    activations,
    clip,
    direction,
    hidden,
    linear_before_reset,
    layout,
):
    """nopython GRU (default activations Sigmoid, Tanh), omitted inputs ``None``;
    returns ``(Y, Y_h)`` (see :mod:`._recurrent_jit`)."""
    H = int(hidden)
    x, Wc, Rc, Bc, lens, h0, nd = rj.inputs(
        X, W, R, B, sequence_lens, initial_h, direction, hidden, layout, 3
    )
    cl = 0.0 if clip is None else float(clip)
    codes, alphas, betas = rj.activation_tables(activations, alpha, beta, (2, 1), nd)
    Y = np.empty((x.shape[0], nd, x.shape[1], H), dtype=x.dtype)
    Yh = np.empty((nd, x.shape[1], H), dtype=x.dtype)
    for d in range(nd):
        rb = Bc[d, 3 * H :]
        bias = Bc[d, : 3 * H].copy()
        bias[: 2 * H] += rb[: 2 * H]
        y, h = _gru_dir(
            rj.project(x, Wc[d]),
            bias,
            Rc[d],
            np.ascontiguousarray(rb[2 * H :]),
            h0[d],
            lens,
            rj.is_reverse(direction, d),
            linear_before_reset != 0,
            codes[d],
            alphas[d],
            betas[d],
            cl,
            rj.work_bits(x, 2 * H),
        )
        Y[:, d] = y
        Yh[d] = h
    return rj.output_y(Y, layout), rj.output_state(Yh, layout)


@onnx_op("GRU", **schema(gru_jit, ("Y", "Y_h"), {"linear_before_reset": 0}))
def gru(
    X: Any,
    W: Any,
    R: Any,
    B: Any = None,
    sequence_lens: Any = None,
    initial_h: Any = None,
    **attrs: Any,
) -> tuple:
    """ONNX GRU (gate order z, r, h); returns ``Y``, ``Y_h``."""
    p = RecurrentInputs("GRU", 3, X, W, R, B, sequence_lens, initial_h, attrs, ("Sigmoid", "Tanh"))
    H = p.H
    outs = []
    for d, rev in enumerate(p.dirs):
        wb, rb = p.B[d, : 3 * H], p.B[d, 3 * H :]
        bias = wb.copy()
        bias[: 2 * H] += rb[: 2 * H]
        outs.append(
            _gru_dir(
                p.project(d),
                bias,
                p.R[d],
                np.ascontiguousarray(rb[2 * H :]),
                p.h0[d],
                p.lens,
                rev,
                bool(attrs.get("linear_before_reset", 0)),
                *p.acts[d],
                p.clip,
                p.bits(2 * H),
            )
        )
    return p.finish(outs)
