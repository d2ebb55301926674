"""``onnx::RNN``, the simple recurrent layer: ``Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb)`` per
direction, with its Numba time loop. The shared building blocks are in :mod:`._recurrent_kernels`
and the argument handling (and the list of supported attributes) in :mod:`._recurrent_inputs`.
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
def _rnn_dir(xw, bias, R, h0, lens, reverse, codes, alphas, betas, clip, bt):
    T, B, H = xw.shape[0], xw.shape[1], R.shape[1]
    Y = np.zeros((T, B, H), dtype=xw.dtype)
    h = h0.copy()
    pre = np.zeros((B, H), dtype=xw.dtype)
    sc = np.empty(H, dtype=xw.dtype)
    for k in range(longest(lens)):
        recur(R, h, pre)
        for b in range(B):
            if k >= lens[b]:  # past this entry's length: keep its h
                continue
            t = time_index(lens[b], k, reverse)
            p, x = pre[b], xw[t, b]
            for j in range(H):
                p[j] += x[j] + bias[j]
            apply_activation(p, codes[0], alphas[0], betas[0], clip, sc, bt)
            h[b] = p
            Y[t, b] = p
    return Y, h


@numba.njit(cache=True)
def rnn_jit(
    X, W, R, B, sequence_lens, initial_h, alpha, beta, activations, clip, direction, hidden, layout
):
    """nopython RNN (default activation Tanh), omitted inputs ``None``; returns
    ``(Y, Y_h)`` (see :mod:`._recurrent_jit`)."""
    H = int(hidden)
    x, Wc, Rc, Bc, lens, h0, nd = rj.inputs(
        X, W, R, B, sequence_lens, initial_h, direction, hidden, layout, 1
    )
    cl = 0.0 if clip is None else float(clip)
    codes, alphas, betas = rj.activation_tables(activations, alpha, beta, (1,), nd)
    Y = np.empty((x.shape[0], nd, x.shape[1], H), dtype=x.dtype)
    Yh = np.empty((nd, x.shape[1], H), dtype=x.dtype)
    for d in range(nd):
        y, h = _rnn_dir(
            rj.project(x, Wc[d]),
            Bc[d, :H] + Bc[d, H:],
            Rc[d],
            h0[d],
            lens,
            rj.is_reverse(direction, d),
            codes[d],
            alphas[d],
            betas[d],
            cl,
            rj.work_bits(x, H),
        )
        Y[:, d] = y
        Yh[d] = h
    return rj.output_y(Y, layout), rj.output_state(Yh, layout)


@onnx_op("RNN", **schema(rnn_jit, ("Y", "Y_h"), {}))
def rnn(
    X: Any,
    W: Any,
    R: Any,
    B: Any = None,
    sequence_lens: Any = None,
    initial_h: Any = None,
    **attrs: Any,
) -> tuple:
    """ONNX RNN: ``Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb)``; returns ``Y``, ``Y_h``."""
    p = RecurrentInputs("RNN", 1, X, W, R, B, sequence_lens, initial_h, attrs, ("Tanh",))
    H = p.H
    return p.finish(
        [
            _rnn_dir(
                p.project(d),
                p.B[d, :H] + p.B[d, H:],
                p.R[d],
                p.h0[d],
                p.lens,
                rev,
                *p.acts[d],
                p.clip,
                p.bits(H),
            )
            for d, rev in enumerate(p.dirs)
        ]
    )
