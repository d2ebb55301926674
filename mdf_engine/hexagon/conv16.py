"""The 16-bit Hexagon convolutions: QuantizedConv2d_16x16to32 and
QuantizedTransposeConv2d_16x16p32to16.

Operands are quint8 or quint16 codes (by dtype); quint16 is ``real = min + q * (max-min)/65536``
with zero code ``round(-min / step)``. Products of zero-shifted codes are summed exactly (int64).

* QuantizedConv2d_16x16to32 (SAME/VALID, filter ``[fh,fw,din,dout]``): a qint32 accumulator of
  step ``step_x * step_w``; when a sum does not fit in int32, the accumulator is shifted right
  (rounded) by the fewest bits that make it fit and the step grows by the same power of 2. The
  range is ``(INT32_MIN, INT32_MAX) * step``, as for the 8-bit product ops.
* QuantizedTransposeConv2d_16x16p32to16 (filter ``[O,H,W,I]``, explicit pads, TF
  conv2d_transpose): the real result plus the qint32 bias, quantized to quint16 on the given
  output range (-inf/+inf = the data's own min/max).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import CONV_IN, _geometry
from .quant import (
    F32,
    as4d,
    dequantize_q32,
    fval,
    ilist,
    product_range,
    scalar,
    shape_of,
    step_u8,
    zero_code,
)


def code_step(q: np.ndarray, mn, mx) -> tuple[np.ndarray, float, int]:
    """(codes as int64, step, zero code) of quint8 or quint16 data."""
    a = as4d(q)
    lo, hi = float(fval(mn)), float(fval(mx))
    if a.dtype == np.uint8:
        return a.astype(np.int64), float(step_u8(lo, hi)), zero_code(lo, hi)
    if a.dtype == np.uint16:
        step = (hi - lo) / 65536.0
        if step <= 0:
            raise MDFError("quint16 range must have max > min")
    else:
        raise MDFError(f"16-bit conv operands are quint8 or quint16 arrays, got {a.dtype}")
    z = int(np.floor(-lo / step + 0.5))
    return a.astype(np.int64), step, z


def conv_int(
    x: np.ndarray, w: np.ndarray, sh: int, sw: int, pt: int, pl: int, oh: int, ow: int
) -> np.ndarray:
    """Exact integer convolution of zero-shifted codes x [b,h,w,c], w [fh,fw,c,o]."""
    nb, ih, iw, c = x.shape
    fh, fw, _, o = w.shape
    ph = max(0, (oh - 1) * sh + fh - ih - pt)
    pw = max(0, (ow - 1) * sw + fw - iw - pl)
    xp = np.pad(x, ((0, 0), (pt, ph), (pl, pw), (0, 0)))
    out = np.zeros((nb, oh, ow, o), np.int64)
    for a in range(fh):
        for b in range(fw):
            win = xp[:, a : a + (oh - 1) * sh + 1 : sh, b : b + (ow - 1) * sw + 1 : sw, :]
            out += np.einsum("nijc,co->nijo", win, w[a, b])
    return out


@hexop("QuantizedConv2d_16x16to32", CONV_IN, padding="VALID")
def quantized_conv2d_16x16to32(x, w, x_min, x_max, w_min, w_max, stride, *, padding="VALID"):
    """Convolution of quint8/quint16 operands to a qint32 accumulator (module doc)."""
    xc, sx, zx = code_step(x, x_min, x_max)
    wc, sw_, zw = code_step(w, w_min, w_max)
    if xc.shape[3] != wc.shape[2]:
        raise MDFError(f"conv input depth {xc.shape[3]} must equal filter depth {wc.shape[2]}")
    sh, sw, pt, pl, oh, ow = _geometry(xc, wc, stride, padding)
    acc = conv_int(xc - zx, wc - zw, sh, sw, pt, pl, oh, ow)
    shift = 0
    peak = int(np.max(np.abs(acc))) if acc.size else 0
    while (peak >> shift) > 2**31 - 1:
        shift += 1
    if shift:
        acc = (acc + (1 << (shift - 1))) >> shift
    lo, hi = product_range(F32(sx * 2**shift), F32(sw_))
    return acc.astype(np.int32), scalar(lo), scalar(hi)


TC16_IN = (
    "input",
    "filter",
    "input_min",
    "input_max",
    "filter_min",
    "filter_max",
    "pad",
    "stride",
    "bias",
    "bias_min",
    "bias_max",
    "output_min",
    "output_max",
)


@hexop("QuantizedTransposeConv2d_16x16p32to16", TC16_IN)
def quantized_transpose_conv2d_16x16p32to16(
    x,
    w,
    x_min,
    x_max,
    w_min,
    w_max,
    pad,
    stride,
    bias,
    b_min,
    b_max,
    out_min,
    out_max,
    *,
    padding="NA",
):
    """Transposed convolution of quint16 operands, qint32 bias, quint16 output (module doc)."""
    xc, sx, zx = code_step(x, x_min, x_max)
    wc, sw_, zw = code_step(w, w_min, w_max)
    o, kh, kw, ci = wc.shape
    if xc.shape[3] != ci:
        raise MDFError(
            f"transposed conv: input depth {xc.shape[3]} must equal the filter's I = "
            f"{ci} (filter is [O,H,W,I])"
        )
    pt, pb, pl, pr = ilist(pad)
    _, sh, sw, _ = shape_of(stride)
    n, ih, iw, _ = xc.shape
    fh, fw = (ih - 1) * sh + kh, (iw - 1) * sw + kw
    if min(pt, pb, pl, pr) < 0 or pt + pb >= fh or pl + pr >= fw:
        raise MDFError(f"transposed conv: pads {[pt, pb, pl, pr]} must be >= 0 and leave an output")
    xz, wz = xc - zx, wc - zw
    full = np.zeros((n, fh, fw, o), np.int64)
    for a in range(kh):
        for c in range(kw):
            full[:, a : a + (ih - 1) * sh + 1 : sh, c : c + (iw - 1) * sw + 1 : sw, :] += np.einsum(
                "bijk,ok->bijo", xz, wz[:, a, c, :]
            )
    acc = full[:, pt : fh - pb, pl : fw - pr, :]
    b = dequantize_q32(as4d(bias).astype(np.int64), fval(b_min), fval(b_max)).reshape(-1)
    if b.size not in (1, o):
        raise MDFError(f"bias must have {o} values, got {b.size}")
    r = acc.astype(np.float64) * (sx * sw_) + b.astype(np.float64)
    lo = float(fval(out_min)) if out_min is not None else -np.inf
    hi = float(fval(out_max)) if out_max is not None else np.inf
    lo = float(r.min()) if np.isinf(lo) else lo
    hi = float(r.max()) if np.isinf(hi) else hi
    if not hi > lo:
        hi = lo + 1e-4
    step = (hi - lo) / 65536.0
    q = np.clip(np.floor((r - lo) / step + 0.5), 0, 65535).astype(np.uint16)
    return q, scalar(lo), scalar(hi)
