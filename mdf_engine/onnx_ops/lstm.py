"""``onnx::LSTM``, the long short-term memory layer (gate order i, o, f, c; peepholes i, o, f;
``input_forget``), with its Numba time loop. The shared building blocks are in
:mod:`._recurrent_kernels` and the argument handling (and the list of supported attributes) in
:mod:`._recurrent_inputs`.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import _recurrent_jit as rj
from . import onnx_op
from ._recurrent_inputs import RecurrentInputs, schema
from ._recurrent_kernels import apply_activation, longest, recur, time_index


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
    for k in range(longest(lens)):
        recur(R, h, rh)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h and c
                continue
            t = time_index(lens[b], k, reverse)
            g, x, cb = rh[b], xw[t, b], c[b]
            for j in range(4 * H):
                g[j] += x[j] + bias[j]
            gi, go, gf, gc = g[:H], g[H : 2 * H], g[2 * H : 3 * H], g[3 * H :]
            if fused:
                apply_activation(g[: 3 * H], codes[0], alphas[0], betas[0], clip, sc, bt)
            else:
                if has_p:
                    for j in range(H):
                        gi[j] += P[j] * cb[j]
                        gf[j] += P[2 * H + j] * cb[j]
                apply_activation(gi, codes[0], alphas[0], betas[0], clip, sc, bt)
                if input_forget:
                    for j in range(H):
                        gf[j] = one - gi[j]
                else:
                    apply_activation(gf, codes[0], alphas[0], betas[0], clip, sc, bt)
            apply_activation(gc, codes[1], alphas[1], betas[1], clip, sc, bt)
            for j in range(H):
                cn = gf[j] * cb[j] + gi[j] * gc[j]
                cb[j] = cn
                hc[j] = cn
            if not fused:  # the output gate sees the new cell state through its peephole
                if has_p:
                    for j in range(H):
                        go[j] += P[H + j] * cb[j]
                apply_activation(go, codes[0], alphas[0], betas[0], clip, sc, bt)
            apply_activation(hc, codes[2], alphas[2], betas[2], 0.0, sc, bt)
            hb, yb = h[b], Y[t, b]
            for j in range(H):
                v = go[j] * hc[j]
                hb[j] = v
                yb[j] = v
    return Y, h, c


@numba.njit(cache=True)
def lstm_jit(
    X,
    W,
    R,
    B,
    sequence_lens,
    initial_h,
    initial_c,
    P,
    alpha,
    beta,
    activations,
    clip,
    direction,
    hidden,
    input_forget,
    layout,
):
    """nopython LSTM (default activations Sigmoid, Tanh, Tanh), omitted inputs
    ``None``; returns ``(Y, Y_h, Y_c)`` (see :mod:`._recurrent_jit`)."""
    H = int(hidden)
    x, Wc, Rc, Bc, lens, h0, nd = rj.inputs(
        X, W, R, B, sequence_lens, initial_h, direction, hidden, layout, 4
    )
    dt, T, Bt = x.dtype, x.shape[0], x.shape[1]
    c0 = rj.state(initial_c, nd, Bt, H, layout, dt)
    cl = 0.0 if clip is None else float(clip)
    codes, alphas, betas = rj.activation_tables(activations, alpha, beta, (2, 1, 1), nd)
    Y = np.empty((T, nd, Bt, H), dtype=dt)
    Yh = np.empty((nd, Bt, H), dtype=dt)
    Yc = np.empty((nd, Bt, H), dtype=dt)
    for d in range(nd):
        bias = Bc[d, : 4 * H] + Bc[d, 4 * H :]
        if P is None:
            Pd = bias  # not read without peepholes
        else:
            Pd = rj.weights(P[d], dt)
        y, h, c = _lstm_dir(
            rj.project(x, Wc[d]),
            bias,
            Rc[d],
            h0[d],
            c0[d],
            Pd,
            P is not None,
            lens,
            rj.is_reverse(direction, d),
            input_forget != 0,
            codes[d],
            alphas[d],
            betas[d],
            cl,
            rj.work_bits(x, 3 * H),
        )
        Y[:, d] = y
        Yh[d] = h
        Yc[d] = c
    return rj.output_y(Y, layout), rj.output_state(Yh, layout), rj.output_state(Yc, layout)


@onnx_op(
    "LSTM",
    **schema(lstm_jit, ("Y", "Y_h", "Y_c"), {"input_forget": 0}, ("initial_c", "P")),
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
    **attrs: Any,
) -> tuple:
    """ONNX LSTM (gate order i, o, f, c; peepholes i, o, f); returns ``Y``, ``Y_h``, ``Y_c``."""
    p = RecurrentInputs(
        "LSTM", 4, X, W, R, B, sequence_lens, initial_h, attrs, ("Sigmoid", "Tanh", "Tanh")
    )
    H = p.H
    c0 = p.state(initial_c, "initial_c", "LSTM")
    nd = len(p.dirs)
    if P is not None:
        P = np.asarray(P, dtype=p.dtype)
        if P.shape != (nd, 3 * H):
            raise MDFError(f"LSTM: P must have shape {(nd, 3 * H)}, got {P.shape}")
    outs = []
    for d, rev in enumerate(p.dirs):
        bias = p.B[d, : 4 * H] + p.B[d, 4 * H :]
        Pd = bias if P is None else np.ascontiguousarray(P[d])  # not read without peepholes
        outs.append(
            _lstm_dir(
                p.project(d),
                bias,
                p.R[d],
                p.h0[d],
                c0[d],
                Pd,
                P is not None,
                p.lens,
                rev,
                bool(attrs.get("input_forget", 0)),
                *p.acts[d],
                p.clip,
                p.bits(3 * H),
            )
        )
    return p.finish(outs)
