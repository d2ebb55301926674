"""Hexagon convolution, depthwise convolution and the fused "supernodes" (conv + bias + requantize).

QuantizedConv2d_8x8to32 / QuantizedDepthwiseConv2d_8x8to32 accumulate
``sum (x - z_x) * (w - z_w)`` in int32 and return a qint32 triple whose range is
``(INT32_MIN, INT32_MAX) * step_x * step_w``. Spatial padding (SAME/VALID only) pads with the input
zero code. The supernodes add a bias (quint8 or qint32), optionally scale each output channel, and
quantize to the specified output range (-inf/+inf = the data's own min/max), adjusted for an
exact zero; values are clipped to that range (an output min of 0 acts as a fused ReLU).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import _kernels as K
from ._registry import hexop
from .quant import (
    F32,
    PADDING,
    as4d,
    auto_or_given,
    dequantize_q32,
    fval,
    out_size_and_pad,
    padding_code,
    product_range,
    q8_triple,
    real_u8,
    scalar,
    shape_of,
    step_u8,
    zero_code,
)

CONV_IN = ("input", "filter", "input_min", "input_max", "filter_min", "filter_max", "stride")
SUPER_IN = CONV_IN + ("bias", "bias_min", "bias_max", "output_min", "output_max", "channel_scale")


def conv_geometry(x: np.ndarray, w: np.ndarray, stride, padding) -> tuple[int, ...]:
    """(stride h, stride w, pad top, pad left, out h, out w) of a SAME/VALID convolution."""
    pad = padding_code(padding)
    if pad not in (PADDING["SAME"], PADDING["VALID"]):
        raise MDFError(f"convolution needs padding SAME or VALID, got {padding!r}")
    _, sh, sw, _ = shape_of(stride)
    oh, pt = out_size_and_pad(x.shape[1], w.shape[0], sh, pad)
    ow, pl = out_size_and_pad(x.shape[2], w.shape[1], sw, pad)
    return sh, sw, pt, pl, oh, ow


def checked_u8(a, what: str) -> np.ndarray:
    """``a`` as contiguous 4-D uint8 codes; MDFError naming ``what`` if values are outside 0..255."""
    a = as4d(a)
    if a.dtype != np.uint8:
        if a.size and (a.min() < 0 or a.max() > 255):
            raise MDFError(f"{what} must hold quint8 codes 0..255")
        a = a.astype(np.uint8)
    return np.ascontiguousarray(a)


def conv_acc(x, w, x_min, x_max, w_min, w_max, stride, padding, depthwise=False):
    """int32 accumulator and the product step of a (depthwise) 8x8 convolution."""
    x = checked_u8(x, "conv input")
    w = checked_u8(w, "conv filter")
    if x.shape[3] != w.shape[2]:
        raise MDFError(
            f"conv input depth {x.shape[3]} must equal filter depth {w.shape[2]} "
            f"(filter is [fh, fw, din, dout], got {w.shape})"
        )
    sh, sw, pt, pl, oh, ow = conv_geometry(x, w, stride, padding)
    zx, zw = zero_code(fval(x_min), fval(x_max)), zero_code(fval(w_min), fval(w_max))
    fn = K.depthwise_u8 if depthwise else K.conv2d_u8
    acc = fn(x, w, zx, zw, sh, sw, pt, pl, oh, ow)
    return acc, F32(step_u8(fval(x_min), fval(x_max)) * step_u8(fval(w_min), fval(w_max)))


def _conv_8x8to32(x, w, x_min, x_max, w_min, w_max, stride, padding, depthwise):
    acc, _ = conv_acc(x, w, x_min, x_max, w_min, w_max, stride, padding, depthwise)
    lo, hi = product_range(step_u8(fval(x_min), fval(x_max)), step_u8(fval(w_min), fval(w_max)))
    return acc, scalar(lo), scalar(hi)


@hexop("QuantizedConv2d_8x8to32", CONV_IN, padding="VALID")
def quantized_conv2d_8x8to32(x, w, x_min, x_max, w_min, w_max, stride, *, padding="VALID"):
    """2-D convolution of quint8 input [b,h,w,din] and filter [fh,fw,din,dout] into qint32."""
    return _conv_8x8to32(x, w, x_min, x_max, w_min, w_max, stride, padding, False)


@hexop("QuantizedDepthwiseConv2d_8x8to32", CONV_IN, padding="VALID")
def quantized_depthwise_conv2d_8x8to32(
    x, w, x_min, x_max, w_min, w_max, stride, *, padding="VALID"
):
    """Depthwise convolution, filter [fh,fw,din,mult] -> depth din*mult, into qint32."""
    return _conv_8x8to32(x, w, x_min, x_max, w_min, w_max, stride, padding, True)


def bias_real(bias, b_min, b_max, qint32_bias: bool) -> np.ndarray:
    """Float32 values of a quint8 or qint32 bias [1,1,1,d] as a flat vector."""
    b = as4d(bias)
    if qint32_bias:
        return dequantize_q32(b.astype(np.int64), fval(b_min), fval(b_max)).reshape(-1)
    return real_u8(checked_u8(b, "bias"), fval(b_min), fval(b_max)).reshape(-1)


def requantize_channels(acc, gain, offset, out_min, out_max):
    """Quantize acc*gain[c]+offset[c] to the given range (±inf = data range), as a Q8 triple."""
    gain = np.ascontiguousarray(gain, dtype=F32)
    offset = np.ascontiguousarray(offset, dtype=F32)
    acc = np.ascontiguousarray(acc)
    lo, hi = K.affine_minmax(acc, gain, offset) if acc.size else (F32(0), F32(0))
    mn, mx = auto_or_given(lo, hi, out_min, out_max)
    q = K.requantize_affine(acc, gain, offset, F32(mn), step_u8(mn, mx)).reshape(acc.shape)
    return q8_triple(q, mn, mx)


def channel_scales(scale, depth: int, low: float) -> np.ndarray:
    if scale is None:
        return np.ones(depth, dtype=F32)
    s = np.asarray(scale, dtype=F32).reshape(-1)
    if s.size == 1:
        s = np.full(depth, s[0], dtype=F32)
    if s.size != depth:
        raise MDFError(f"channel scales must have {depth} values (one per output channel)")
    if np.any(s <= low) or np.any(s > 1.0):
        raise MDFError(f"channel scales must lie in ({low:g}, 1.0], got {s.min():g}..{s.max():g}")
    return s


def supernode(
    x,
    w,
    x_min,
    x_max,
    w_min,
    w_max,
    stride,
    bias,
    b_min,
    b_max,
    out_min,
    out_max,
    scale=None,
    *,
    padding,
    depthwise,
    qint32_bias,
):
    """Convolution + bias + optional channel scale + requantize to 8 bits."""
    acc, step = conv_acc(x, w, x_min, x_max, w_min, w_max, stride, padding, depthwise)
    return finish_conv(acc, step, bias, b_min, b_max, qint32_bias, out_min, out_max, scale, 0.0)


def finish_conv(
    acc, step, bias, b_min, b_max, qint32_bias: bool, out_min, out_max, scale, low: float
):
    """A quantized convolution's end, as the supernodes and the conv variants share it: the
    int32 accumulator ``acc`` (of real step ``step``) plus the bias (one value, or one per output
    channel), times the channel scales (in ``(low, 1]``), quantized to the output range."""
    d = acc.shape[3]
    b = bias_real(bias, b_min, b_max, qint32_bias)
    if b.size == 1:
        b = np.full(d, b[0], dtype=F32)
    if b.size != d:
        raise MDFError(f"bias must have {d} values (shape [1,1,1,{d}]), got {b.size}")
    s = channel_scales(scale, d, low)
    return requantize_channels(acc, step * s, b * s, out_min, out_max)


def _register_supernodes() -> None:
    for name, dw, q32 in (
        ("Supernode_8x8p8to8", False, False),
        ("Supernode_8x8p32to8", False, True),
        ("DepthwiseSupernode_8x8p8to8", True, False),
        ("DepthwiseSupernode_8x8p32to8", True, True),
    ):

        def kernel(*args, padding="SAME", _dw=dw, _q32=q32):
            return supernode(*args, padding=padding, depthwise=_dw, qint32_bias=_q32)

        kernel.__doc__ = (
            f"{name}: {'depthwise ' if dw else ''}convolution + "
            f"{'qint32' if q32 else 'quint8'} bias + requantize to the output range "
            "(-inf/+inf = auto)."
        )
        inputs = SUPER_IN if not dw else SUPER_IN[:-1]
        hexop(name, inputs, optional=("channel_scale",), padding="SAME")(kernel)


_register_supernodes()
