"""Hexagon transposed convolution (TF conv2d_transpose semantics with explicit padding):
``out[b, i*s_h + a - pad_top, j*s_w + c - pad_left, o] += (x[b,i,j,k] - z_x) (w[o,a,c,k] - z_w)``
in integer arithmetic, output size ``(in - 1) * s + k - pad_before - pad_after``; then bias,
optional channel scales and requantization to the output range (-inf/+inf = no clipping, i.e.
the data range). Weights are [O, H, W, I]; groups > 1 is not supported here.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import _u8
from .more import _finish_conv
from .quant import F32, fval, ilist, ival, shape_of, step_u8, zero_code

TC_IN = ("input", "filter", "input_min", "input_max", "filter_min", "filter_max", "pad",
         "stride", "bias", "bias_min", "bias_max", "output_min", "output_max", "channel_scale",
         "groups")
OPT = ("channel_scale", "groups")


def transpose_conv_acc(x, w, x_min, x_max, w_min, w_max, pad, stride):
    xa, wa = _u8(x, "input"), _u8(w, "filter")
    o, kh, kw, ci = wa.shape
    if xa.shape[3] != ci:
        raise MDFError(f"transposed conv: input depth {xa.shape[3]} must equal the filter's I = "
                       f"{ci} (filter is [O,H,W,I], got {wa.shape})")
    pt, pb, pl, pr = ilist(pad)
    if min(pt, pb, pl, pr) < 0:
        raise MDFError(f"transposed conv: pads must be >= 0, got {[pt, pb, pl, pr]}")
    _, sh, sw, _ = shape_of(stride)
    n, ih, iw, _ = xa.shape
    fh, fw = (ih - 1) * sh + kh, (iw - 1) * sw + kw
    if pt + pb >= fh or pl + pr >= fw:
        raise MDFError("transposed conv: the pads remove the whole output")
    xz = xa.astype(np.int64) - zero_code(fval(x_min), fval(x_max))
    wz = wa.astype(np.int64) - zero_code(fval(w_min), fval(w_max))
    full = np.zeros((n, fh, fw, o), np.int64)
    for a in range(kh):
        for c in range(kw):
            contrib = np.einsum("bijk,ok->bijo", xz, wz[:, a, c, :])
            full[:, a:a + (ih - 1) * sh + 1:sh, c:c + (iw - 1) * sw + 1:sw, :] += contrib
    acc = full[:, pt:fh - pb, pl:fw - pr, :]
    step = F32(step_u8(fval(x_min), fval(x_max)) * step_u8(fval(w_min), fval(w_max)))
    return np.ascontiguousarray(np.clip(acc, -2 ** 31, 2 ** 31 - 1).astype(np.int32)), step


def _tconv(x, w, x_min, x_max, w_min, w_max, pad, stride, bias, b_min, b_max, out_min, out_max,
           scale=None, groups=None, *, low):
    if groups is not None and ival(groups) != 1:
        raise MDFError("transposed conv with groups > 1 is not supported")
    acc, step = transpose_conv_acc(x, w, x_min, x_max, w_min, w_max, pad, stride)
    return _finish_conv(acc, step, bias, b_min, b_max, out_min, out_max, scale, low)


@hexop("QuantizedTransposeConv2d_8x8p32to8", TC_IN, optional=OPT)
def quantized_transpose_conv2d_8x8p32to8(*args, padding="NA"):
    """Transposed convolution, qint32 bias, channel scales in (1/32, 1]."""
    return _tconv(*args, low=1.0 / 32)


@hexop("QuantizedTransposeConv2d_8x8p8to8", TC_IN, optional=OPT)
def quantized_transpose_conv2d_8x8p8to8(*args, padding="NA"):
    """Transposed convolution, quint8 bias, channel scales in (0, 1]."""
    return _tconv(*args, low=0.0)
