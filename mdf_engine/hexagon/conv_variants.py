"""Hexagon convolution variants: grouped, dilated and transposed convolutions, and the 16-bit
convolutions.

* Grouped (filter [fh,fw,din/g,dout]; group i maps input channels i*din/g.. to output channels
  i*dout/g..) and dilated (stride 1; dilation inserts filter taps holding the filter's zero code,
  which contribute nothing) convolutions: conv + bias (qint32, or quint8 by its dtype) + channel
  scales + requantize to the output range, like the supernodes.
* Transposed (TF conv2d_transpose with explicit padding):
  ``out[b, i*s_h + a - pad_top, j*s_w + c - pad_left, o] += (x[b,i,j,k] - z_x) (w[o,a,c,k] - z_w)``
  in integer arithmetic, output size ``(in - 1) * s + k - pad_before - pad_after``; then bias,
  optional channel scales and requantization to the output range (-inf/+inf = no clipping, i.e.
  the data range). Weights are [O, H, W, I]; groups > 1 is not supported.
* 16-bit: operands are quint8 or quint16 codes (by dtype); quint16 is
  ``real = min + q * (max-min)/65536`` with zero code ``round(-min / step)``; products of
  zero-shifted codes are summed exactly (int64). QuantizedConv2d_16x16to32 gives a qint32
  accumulator of step ``step_x * step_w``; when a sum does not fit in int32 it is shifted right
  (rounded) by the fewest bits that make it fit and the step grows by the same power of 2.
  QuantizedTransposeConv2d_16x16p32to16 adds the qint32 bias to the real result and quantizes it
  to quint16 on the given output range (-inf/+inf = the data's own min/max).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import (
    CONV_IN,
    checked_u8,
    conv_acc,
    conv_geometry,
    finish_conv,
)
from .quant import (
    F32,
    as4d,
    dequantize_q32,
    fval,
    ilist,
    ival,
    product_range,
    scalar,
    shape_of,
    step_u8,
    zero_code,
)

GROUP_IN = (
    "input",
    "filter",
    "bias",
    "input_min",
    "input_max",
    "filter_min",
    "filter_max",
    "bias_min",
    "bias_max",
    "stride",
    "groups",
    "output_min",
    "output_max",
    "channel_scale",
)


def _finish_conv(acc, step, bias, b_min, b_max, out_min, out_max, scale, low):
    """:func:`.conv.finish_conv` with the bias read as quint8 or qint32 by its dtype."""
    qint32_bias = as4d(bias).dtype != np.uint8
    return finish_conv(acc, step, bias, b_min, b_max, qint32_bias, out_min, out_max, scale, low)


@hexop("QuantizedGroupedConv2d_8x8p32to8", GROUP_IN, optional=("channel_scale",), padding="SAME")
def quantized_grouped_conv2d(
    x,
    w,
    bias,
    x_min,
    x_max,
    w_min,
    w_max,
    b_min,
    b_max,
    stride,
    groups,
    out_min,
    out_max,
    scale=None,
    *,
    padding="SAME",
):
    """Grouped convolution: filter [fh,fw,din/g,dout]; group i maps input channels
    i*din/g.. to output channels i*dout/g..; qint32 bias; channel scales in (1/32, 1]."""
    xa, wa = checked_u8(x, "input"), checked_u8(w, "filter")
    g = ival(groups)
    din, dout = xa.shape[3], wa.shape[3]
    if g < 1 or din % g or dout % g or wa.shape[2] * g != din:
        raise MDFError(
            f"grouped conv: {g} groups do not divide input depth {din} / output depth "
            f"{dout} with filter depth {wa.shape[2]}"
        )
    ci, co = din // g, dout // g
    parts = []
    for i in range(g):
        acc, step = conv_acc(
            np.ascontiguousarray(xa[..., i * ci : (i + 1) * ci]),
            np.ascontiguousarray(wa[..., i * co : (i + 1) * co]),
            x_min,
            x_max,
            w_min,
            w_max,
            stride,
            padding,
        )
        parts.append(acc)
    return _finish_conv(
        np.concatenate(parts, axis=3), step, bias, b_min, b_max, out_min, out_max, scale, 1.0 / 32
    )


@hexop(
    "QuantizedDilatedConv2d_8x8p32to8",
    (
        "input",
        "filter",
        "bias",
        "input_min",
        "input_max",
        "filter_min",
        "filter_max",
        "bias_min",
        "bias_max",
        "stride",
        "dilation",
        "output_min",
        "output_max",
        "channel_scale",
    ),
    optional=("channel_scale",),
    padding="SAME",
)
def quantized_dilated_conv2d(
    x,
    w,
    bias,
    x_min,
    x_max,
    w_min,
    w_max,
    b_min,
    b_max,
    stride,
    dilation,
    out_min,
    out_max,
    scale=None,
    *,
    padding="SAME",
):
    """Dilated convolution (stride must be 1); the bias is quint8 or qint32 by its dtype."""
    if shape_of(stride) != (1, 1, 1, 1):
        raise MDFError(f"dilated conv supports only stride 1x1x1x1, got {shape_of(stride)}")
    dh, dw = ilist(dilation)[-2:] if len(ilist(dilation)) >= 2 else (ilist(dilation)[0],) * 2
    if dh < 1 or dw < 1:
        raise MDFError(f"dilation factors must be >= 1, got {(dh, dw)}")
    wa = checked_u8(w, "filter")
    fh, fw, cin, cout = wa.shape
    zw = zero_code(fval(w_min), fval(w_max))
    wd = np.full(((fh - 1) * dh + 1, (fw - 1) * dw + 1, cin, cout), zw, dtype=np.uint8)
    wd[::dh, ::dw] = wa
    acc, step = conv_acc(x, wd, x_min, x_max, w_min, w_max, stride, padding)
    return _finish_conv(acc, step, bias, b_min, b_max, out_min, out_max, scale, 0.0)


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

OPT = ("channel_scale", "groups")
#: the 8-bit transpose convs take the 16-bit op's inputs and two optional ones
TC_IN = TC16_IN + OPT


def _transpose_geometry(x_shape, w_shape, pad, stride) -> tuple[int, ...]:
    """(stride h, stride w, pad top, bottom, left, right) of a transposed convolution of an
    input ``x_shape`` [b,h,w,I] by a filter ``w_shape`` [O,H,W,I], checked: the depths agree,
    the pads are >= 0 and leave an output."""
    ci = w_shape[3]
    if x_shape[3] != ci:
        raise MDFError(
            f"transposed conv: input depth {x_shape[3]} must equal the filter's I = "
            f"{ci} (filter is [O,H,W,I], got {tuple(w_shape)})"
        )
    pt, pb, pl, pr = ilist(pad)
    if min(pt, pb, pl, pr) < 0:
        raise MDFError(f"transposed conv: pads must be >= 0, got {[pt, pb, pl, pr]}")
    _, sh, sw, _ = shape_of(stride)
    full_h, full_w = (x_shape[1] - 1) * sh + w_shape[1], (x_shape[2] - 1) * sw + w_shape[2]
    if pt + pb >= full_h or pl + pr >= full_w:
        raise MDFError("transposed conv: the pads remove the whole output")
    return sh, sw, pt, pb, pl, pr


def _transpose_scatter(xz: np.ndarray, wz: np.ndarray, geometry: tuple[int, ...]) -> np.ndarray:
    """The exact int64 sums of a transposed convolution of zero-shifted codes (module doc):
    each input pixel's products with the filter [O,H,W,I] added over its window at the stride,
    then the pads cropped (``geometry`` from :func:`_transpose_geometry`)."""
    sh, sw, pt, pb, pl, pr = geometry
    o, kh, kw, _ = wz.shape
    n, ih, iw, _ = xz.shape
    fh, fw = (ih - 1) * sh + kh, (iw - 1) * sw + kw
    full = np.zeros((n, fh, fw, o), np.int64)
    for a in range(kh):
        for c in range(kw):
            contrib = np.einsum("bijk,ok->bijo", xz, wz[:, a, c, :])
            full[:, a : a + (ih - 1) * sh + 1 : sh, c : c + (iw - 1) * sw + 1 : sw, :] += contrib
    return full[:, pt : fh - pb, pl : fw - pr, :]


def transpose_conv_acc(x, w, x_min, x_max, w_min, w_max, pad, stride):
    """int32 accumulator and the product step of an 8x8 transposed convolution."""
    xa, wa = checked_u8(x, "input"), checked_u8(w, "filter")
    geometry = _transpose_geometry(xa.shape, wa.shape, pad, stride)
    xz = xa.astype(np.int64) - zero_code(fval(x_min), fval(x_max))
    wz = wa.astype(np.int64) - zero_code(fval(w_min), fval(w_max))
    acc = _transpose_scatter(xz, wz, geometry)
    step = F32(step_u8(fval(x_min), fval(x_max)) * step_u8(fval(w_min), fval(w_max)))
    return np.ascontiguousarray(np.clip(acc, -(2**31), 2**31 - 1).astype(np.int32)), step


def _tconv(
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
    scale=None,
    groups=None,
    *,
    low,
):
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
    sh, sw, pt, pl, oh, ow = conv_geometry(xc, wc, stride, padding)
    acc = conv_int(xc - zx, wc - zw, sh, sw, pt, pl, oh, ow)
    shift = 0
    peak = int(np.max(np.abs(acc))) if acc.size else 0
    while (peak >> shift) > 2**31 - 1:
        shift += 1
    if shift:
        acc = (acc + (1 << (shift - 1))) >> shift
    lo, hi = product_range(F32(sx * 2**shift), F32(sw_))
    return acc.astype(np.int32), scalar(lo), scalar(hi)


@hexop("QuantizedTransposeConv2d_16x16p32to16", TC16_IN)
def quantized_transpose_conv2d_16x16p32to16(*args, padding="NA"):
    """Transposed convolution of quint16 operands, qint32 bias, quint16 output (module doc);
    ``args`` are the inputs of ``TC16_IN``, as for the 8-bit variants."""
    x, w, x_min, x_max, w_min, w_max, pad, stride, bias, b_min, b_max, out_min, out_max = args
    xc, sx, zx = code_step(x, x_min, x_max)
    wc, sw_, zw = code_step(w, w_min, w_max)
    acc = _transpose_scatter(xc - zx, wc - zw, _transpose_geometry(xc.shape, wc.shape, pad, stride))
    o = wc.shape[0]
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
