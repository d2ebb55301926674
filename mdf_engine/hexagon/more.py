"""Further Hexagon ops: grouped and dilated convolution (conv + qint32 bias + channel scales +
requantize, like the supernodes), quantized division and reciprocal, strided slices, channel /
axis shuffles, nearest-neighbour resize, SpaceToBatchND / BatchToSpaceND, and the 16-bit data
movement ops (Transpose_16, SpaceToDepth_16, DepthToSpace_16, AxisShuffle_16), which move codes
without looking at them.

Dilation inserts taps holding the filter's zero code, which contribute nothing; grouped
convolution convolves each group of input channels with its own block of output channels.
Division and reciprocal quantize the real result in the given (Div) or data range; a zero divisor
is an error.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .conv import _u8, bias_real, channel_scales, conv_acc, requantize_channels
from .qmisc import depth_to_space, space_to_depth
from .quant import (
    F32,
    as4d,
    auto_or_given,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    shape_of,
    zero_code,
)

GROUP_IN = ("input", "filter", "bias", "input_min", "input_max", "filter_min", "filter_max",
            "bias_min", "bias_max", "stride", "groups", "output_min", "output_max",
            "channel_scale")


def _finish_conv(acc, step, bias, b_min, b_max, out_min, out_max, scale, low):
    d = acc.shape[3]
    b = as4d(bias)
    br = bias_real(b, b_min, b_max, b.dtype != np.uint8)
    if br.size == 1:
        br = np.full(d, br[0], dtype=F32)
    if br.size != d:
        raise MDFError(f"bias must have {d} values (shape [1,1,1,{d}]), got {br.size}")
    s = channel_scales(scale, d, low)
    return requantize_channels(acc, step * s, br * s, out_min, out_max)


@hexop("QuantizedGroupedConv2d_8x8p32to8", GROUP_IN, optional=("channel_scale",),
       padding="SAME")
def quantized_grouped_conv2d(x, w, bias, x_min, x_max, w_min, w_max, b_min, b_max, stride,
                             groups, out_min, out_max, scale=None, *, padding="SAME"):
    """Grouped convolution: filter [fh,fw,din/g,dout]; group i maps input channels
    i*din/g.. to output channels i*dout/g..; qint32 bias; channel scales in (1/32, 1]."""
    xa, wa = _u8(x, "input"), _u8(w, "filter")
    g = ival(groups)
    din, dout = xa.shape[3], wa.shape[3]
    if g < 1 or din % g or dout % g or wa.shape[2] * g != din:
        raise MDFError(f"grouped conv: {g} groups do not divide input depth {din} / output depth "
                       f"{dout} with filter depth {wa.shape[2]}")
    ci, co = din // g, dout // g
    parts = []
    for i in range(g):
        acc, step = conv_acc(np.ascontiguousarray(xa[..., i * ci:(i + 1) * ci]),
                             np.ascontiguousarray(wa[..., i * co:(i + 1) * co]),
                             x_min, x_max, w_min, w_max, stride, padding)
        parts.append(acc)
    return _finish_conv(np.concatenate(parts, axis=3), step, bias, b_min, b_max, out_min,
                        out_max, scale, 1.0 / 32)


@hexop("QuantizedDilatedConv2d_8x8p32to8",
       ("input", "filter", "bias", "input_min", "input_max", "filter_min", "filter_max",
        "bias_min", "bias_max", "stride", "dilation", "output_min", "output_max",
        "channel_scale"), optional=("channel_scale",), padding="SAME")
def quantized_dilated_conv2d(x, w, bias, x_min, x_max, w_min, w_max, b_min, b_max, stride,
                             dilation, out_min, out_max, scale=None, *, padding="SAME"):
    """Dilated convolution (stride must be 1); the bias is quint8 or qint32 by its dtype."""
    if shape_of(stride) != (1, 1, 1, 1):
        raise MDFError(f"dilated conv supports only stride 1x1x1x1, got {shape_of(stride)}")
    dh, dw = ilist(dilation)[-2:] if len(ilist(dilation)) >= 2 else (ilist(dilation)[0],) * 2
    if dh < 1 or dw < 1:
        raise MDFError(f"dilation factors must be >= 1, got {(dh, dw)}")
    wa = _u8(w, "filter")
    fh, fw, cin, cout = wa.shape
    zw = zero_code(fval(w_min), fval(w_max))
    wd = np.full(((fh - 1) * dh + 1, (fw - 1) * dw + 1, cin, cout), zw, dtype=np.uint8)
    wd[::dh, ::dw] = wa
    acc, step = conv_acc(x, wd, x_min, x_max, w_min, w_max, stride, padding)
    return _finish_conv(acc, step, bias, b_min, b_max, out_min, out_max, scale, 0.0)


@hexop("QuantizedDiv_8", ("a", "b", "a_min", "a_max", "b_min", "b_max", "output_min",
                          "output_max"), optional=("output_min", "output_max"))
def quantized_div_8(a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *,
                    padding="NA"):
    """a / b with b [1,1,1,d] of a's depth; output in the static range if given, else the
    data range (adjusted)."""
    x, y = as4d(a), as4d(b)
    if y.shape[:3] != (1, 1, 1) or y.shape[3] != x.shape[3]:
        raise MDFError(f"QuantizedDiv_8: b must be [1,1,1,{x.shape[3]}], got {y.shape}")
    rb = real_u8(y, fval(b_min), fval(b_max))
    if np.any(rb == 0):
        raise MDFError("QuantizedDiv_8: division by zero (a divisor code equals the zero code)")
    r = (real_u8(x, fval(a_min), fval(a_max)) / rb).astype(F32)
    lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
    mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedRecip_8", ("input", "input_min", "input_max"))
def quantized_recip_8(q, q_min, q_max, *, padding="NA"):
    """1 / x in the data range of the result (adjusted); a zero input is an error."""
    r = real_u8(as4d(q), fval(q_min), fval(q_max))
    if np.any(r == 0):
        raise MDFError("QuantizedRecip_8: reciprocal of zero")
    out = (F32(1) / r).astype(F32)
    mn, mx = auto_or_given(out.min(), out.max(), None, None)
    return q8_triple(quantize_u8(out, mn, mx), mn, mx)


def strided_slice(a: np.ndarray, begin, end, step, masks=(0, 0, 0)) -> np.ndarray:
    b, e, s = ilist(begin), ilist(end), ilist(step)
    k = len(b)
    if not (1 <= k <= 4 and len(e) == k and len(s) == k):
        raise MDFError(f"strided slice: begin {b}, end {e}, step {s} must have equal length 1..4")
    b = [0] * (4 - k) + b
    e = list(a.shape[:4 - k]) + e
    s = [1] * (4 - k) + s
    bm, em, sm = masks
    out = a
    for d in range(4):
        n = a.shape[d]
        st, lo, hi = s[d], b[d], e[d]
        if sm >> d & 1:
            st, hi = 1, lo + 1
        else:
            if st == 0:
                raise MDFError("strided slice: step cannot be 0")
            if bm >> d & 1:
                lo = 0 if st > 0 else n - 1
            if em >> d & 1:
                hi = n if st > 0 else -1
        idx = np.arange(lo, hi, st)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= n:
            raise MDFError(f"strided slice: dim {d} (size {n}) sampled at {lo}..{hi} step {st} "
                           "is empty or out of range")
        out = np.take(out, idx, axis=d)
    keep = [n for d, n in enumerate(out.shape) if not (sm >> d & 1)]
    return np.ascontiguousarray(out.reshape([1] * (4 - len(keep)) + keep))


def _masks(bm, em, sm):
    given = [m is not None for m in (bm, em, sm)]
    if any(given) and not all(given):
        raise MDFError("strided slice: the 3 masks must be all present or all absent")
    return tuple(0 if m is None else ival(m) for m in (bm, em, sm))


MASKS = ("begin_mask", "end_mask", "shrink_mask")
for _name, _dt in (("StridedSlice_f", F32), ("StridedSlice_int32", np.int32),
                   ("StridedSlice_uint8", np.uint8)):
    def _ss_kernel(x, begin, end, step, bm=None, em=None, sm=None, *, padding="NA", _dt=_dt):
        return (strided_slice(as4d(x, _dt), begin, end, step, _masks(bm, em, sm)),)
    _ss_kernel.__doc__ = "Strided slice with begin/end/shrink masks (bits 0..3 = b,h,w,d)."
    hexop(_name, ("input", "begin", "end", "step") + MASKS, outputs=("output",),
          optional=MASKS)(_ss_kernel)


@hexop("QuantizedStridedSlice_8", ("input", "begin", "end", "step") + MASKS +
       ("input_min", "input_max"))
def quantized_strided_slice_8(q, begin, end, step, bm, em, sm, q_min, q_max, *, padding="NA"):
    """Strided slice of quint8 data; range copied."""
    out = strided_slice(as4d(q).astype(np.uint8), begin, end, step, _masks(bm, em, sm))
    return q8_triple(out, fval(q_min), fval(q_max))


def axis_shuffle(a: np.ndarray, axis: int, groups: int) -> np.ndarray:
    ax = axis % 4 if -4 <= axis <= 3 else None
    if ax is None:
        raise MDFError(f"axis shuffle: axis must be in -4..3, got {axis}")
    n = a.shape[ax]
    if groups < 1 or n % groups:
        raise MDFError(f"axis shuffle: {groups} groups do not divide dim of size {n}")
    shp = a.shape[:ax] + (groups, n // groups) + a.shape[ax + 1:]
    return np.ascontiguousarray(np.swapaxes(a.reshape(shp), ax, ax + 1).reshape(a.shape))


for _name, _dt, _q in (("AxisShuffle_8", np.uint8, True), ("AxisShuffle_16", None, True),
                       ("AxisShuffle_f", F32, False), ("AxisShuffle_int32", np.int32, False)):
    def _as_kernel(x, axis, groups, *rng, padding="NA", _dt=_dt, _q=_q):
        out = axis_shuffle(as4d(x, _dt), ival(axis), ival(groups))
        return (out, scalar(rng[0]), scalar(rng[1])) if _q else (out,)
    _as_kernel.__doc__ = ("[..,a*b,..] -> [..,a,b,..] -> swap -> [..,b*a,..] along axis "
                          "(a = groups)" + ("; range copied." if _q else "."))
    hexop(_name, ("input", "axis", "groups") + (("input_min", "input_max") if _q else ()),
          outputs=("output", "output_min", "output_max") if _q else ("output",))(_as_kernel)


@hexop("QuantizedChannelShuffle_8", ("groups", "input", "input_min", "input_max"))
def quantized_channel_shuffle_8(groups, q, q_min, q_max, *, padding="NA"):
    """Channel shuffle of the depth: [.., g*n] -> [.., g, n] -> [.., n, g]; range copied."""
    return q8_triple(axis_shuffle(as4d(q).astype(np.uint8), 3, ival(groups)), fval(q_min),
                     fval(q_max))


@hexop("ResizeNearestNeighbor_8", ("input", "new_dims", "input_min", "input_max",
                                   "align_corners"), optional=("align_corners",))
def resize_nearest_neighbor_8(q, dims, q_min, q_max, align_corners=None, *, padding="NA"):
    """tf.resize_nearest_neighbor: source = min(floor(dst*scale) (round if align_corners),
    size-1), scale = in/out or (in-1)/(out-1) with align_corners; range copied."""
    a = as4d(q).astype(np.uint8)
    hw = ilist(dims)
    if len(hw) != 2 or min(hw) < 1:
        raise MDFError(f"resize dims must be (h_out, w_out) >= 1, got {hw}")
    ac = align_corners is not None and ival(align_corners) != 0
    for axis, n_out in ((1, hw[0]), (2, hw[1])):
        n_in = a.shape[axis]
        scale = (n_in - 1) / (n_out - 1) if ac and n_out > 1 else n_in / n_out
        src = np.arange(n_out) * scale
        src = np.floor(src + 0.5) if ac else np.floor(src)
        a = np.take(a, np.minimum(src.astype(np.int64), n_in - 1), axis=axis)
    return q8_triple(a, fval(q_min), fval(q_max))


def _block_hw(block) -> tuple[int, int]:
    b = ilist(block)
    if len(b) not in (1, 2) or min(b) < 1:
        raise MDFError(f"block must be blocksizeH or [blocksizeH, blocksizeW] >= 1, got {b}")
    return (b[0], 1) if len(b) == 1 else (b[0], b[1])


def _tblr(p) -> tuple[int, int, int, int]:
    v = ilist(p)
    if len(v) == 2:
        v = v + [0, 0]
    if len(v) != 4 or min(v) < 0:
        raise MDFError(f"pads/crops must be [t,b] or [[t,b],[l,r]] of values >= 0, got {v}")
    return tuple(v)


def space_to_batch(a: np.ndarray, block, pads, fill=0) -> np.ndarray:
    bh, bw = _block_hw(block)
    t, b, l, r = _tblr(pads)
    a = np.pad(a, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=fill)
    n, h, w, d = a.shape
    if h % bh or w % bw:
        raise MDFError(f"SpaceToBatchND: padded size {h}x{w} must be a multiple of {bh}x{bw}")
    return (a.reshape(n, h // bh, bh, w // bw, bw, d).transpose(2, 4, 0, 1, 3, 5)
            .reshape(bh * bw * n, h // bh, w // bw, d))


def batch_to_space(a: np.ndarray, block, crops) -> np.ndarray:
    bh, bw = _block_hw(block)
    t, b, l, r = _tblr(crops)
    n, h, w, d = a.shape
    if n % (bh * bw):
        raise MDFError(f"BatchToSpaceND: batches {n} must be a multiple of {bh * bw}")
    out = (a.reshape(bh, bw, n // (bh * bw), h, w, d).transpose(2, 3, 0, 4, 1, 5)
           .reshape(n // (bh * bw), h * bh, w * bw, d))
    if t + b >= out.shape[1] or l + r >= out.shape[2]:
        raise MDFError("BatchToSpaceND: crops leave an empty result")
    return np.ascontiguousarray(out[:, t:out.shape[1] - b, l:out.shape[2] - r])


@hexop("SpaceToBatchND_f", ("input", "block", "paddings"), outputs=("output",))
def space_to_batch_nd_f(x, block, pads, *, padding="NA"):
    """Zero-pad h, w then move bh x bw blocks into the batch dimension."""
    return (space_to_batch(as4d(x, F32), block, pads),)


@hexop("BatchToSpaceND_f", ("input", "block", "crops"), outputs=("output",))
def batch_to_space_nd_f(x, block, crops, *, padding="NA"):
    """The inverse of SpaceToBatchND, then crop."""
    return (batch_to_space(as4d(x, F32), block, crops),)


@hexop("SpaceToBatchND_8", ("input", "block", "paddings", "input_min", "input_max"))
def space_to_batch_nd_8(q, block, pads, q_min, q_max, *, padding="NA"):
    """SpaceToBatchND of quint8 data, padding with the zero code; range copied."""
    z = zero_code(fval(q_min), fval(q_max))
    return q8_triple(space_to_batch(as4d(q).astype(np.uint8), block, pads, z), fval(q_min),
                     fval(q_max))


@hexop("BatchToSpaceND_8", ("input", "block", "crops", "input_min", "input_max"))
def batch_to_space_nd_8(q, block, crops, q_min, q_max, *, padding="NA"):
    """BatchToSpaceND of quint8 data; range copied."""
    return q8_triple(batch_to_space(as4d(q).astype(np.uint8), block, crops), fval(q_min),
                     fval(q_max))


@hexop("Transpose_16", ("input", "perm", "input_min", "input_max"))
def transpose_16(q, perm, q_min, q_max, *, padding="NA"):
    """Transpose of 8/16-bit codes (qu8, qu16, qi16), dtype kept; range copied."""
    from .floatops import _transpose

    return _transpose(as4d(q), perm), scalar(q_min), scalar(q_max)


@hexop("SpaceToDepth_16", ("input", "block_size", "input_min", "input_max"))
def space_to_depth_16(q, block, q_min, q_max, *, padding="NA"):
    """SpaceToDepth of 8/16-bit codes, dtype kept; range copied."""
    return space_to_depth(as4d(q), block), scalar(q_min), scalar(q_max)


@hexop("DepthToSpace_16", ("input", "block_size", "input_min", "input_max", "crops"),
       optional=("crops",))
def depth_to_space_16(q, block, q_min, q_max, crops=None, *, padding="NA"):
    """DepthToSpace of 8/16-bit codes, dtype kept; range copied."""
    return depth_to_space(as4d(q), block, crops), scalar(q_min), scalar(q_max)


