"""More quantized Hexagon ops: negation, sqrt, elementwise min/max, comparisons, Select_8,
Softmax_uint8, PRelu, L2Normalize_8, reductions (QuantizedMean_8, QuantizedSum_8to32), ArgMax_8 /
ArgMin_8, QuantizedTile_8, MirrorPad_8 and SpaceToDepth / DepthToSpace (float and quint8).

Output ranges: data movement copies the input range; QuantizedNeg_8 mirrors it ([-max, -min],
codes 255 - q, exact); Min/Max/Minimum/Maximum and Select use the (adjusted) union of the input
ranges unless an output range is given (-inf/+inf = data range); Sqrt, PRelu use the adjusted range
of their results [judgement, hexagon-digest §1.4 'unspecified']; L2Normalize_8 is fixed to [-1, 1];
QuantizedMean_8 keeps the input range unless one is given; QuantizedSum_8to32 accumulates
``sum (q - z)`` in int32 with range ±2**31 * step; ArgMax_8 gives indices as quint8 in [0, 255].
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .floatops import mirror_pad, reduce_4d
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    adjust_range,
    as4d,
    auto_or_given,
    dequantize_u8,
    fval,
    ilist,
    ival,
    q8_triple,
    quantize_u8,
    real_u8,
    scalar,
    step_u8,
    zero_code,
)

Q_IN = ("input", "input_min", "input_max")
BIN_IN = ("a", "b", "a_min", "a_max", "b_min", "b_max")
OUT_RANGE = ("output_min", "output_max")


def _codes(q) -> np.ndarray:
    return as4d(q).astype(np.uint8)


def _real(q, mn, mx) -> np.ndarray:
    return dequantize_u8(_codes(q), fval(mn), fval(mx))


def _auto(r: np.ndarray):
    lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
    mn, mx = adjust_range(lo, hi)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedNeg_8", Q_IN)
def quantized_neg_8(q, q_min, q_max, *, padding="NA"):
    """-x: codes 255 - q in the mirrored range [-max, -min] (exact)."""
    return q8_triple(np.uint8(255) - _codes(q), -fval(q_max), -fval(q_min))


@hexop("QuantizedSqrt_8", Q_IN)
def quantized_sqrt_8(q, q_min, q_max, *, padding="NA"):
    """sqrt(x); the input range must not be negative (min >= 0)."""
    if fval(q_min) < 0:
        raise MDFError(f"QuantizedSqrt_8 needs input min >= 0, got {fval(q_min)}")
    return _auto(np.sqrt(_real(q, q_min, q_max)).astype(F32))


def _binary_real(a, b, a_min, a_max, b_min, b_max):
    x, y = _codes(a), _codes(b)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise MDFError(f"shapes {x.shape} and {y.shape} do not broadcast") from None
    return (real_u8(x, fval(a_min), fval(a_max)), real_u8(y, fval(b_min), fval(b_max)))


def _minmax(fn, a, b, a_min, a_max, b_min, b_max, out_min, out_max):
    ra, rb = _binary_real(a, b, a_min, a_max, b_min, b_max)
    r = fn(ra, rb).astype(F32)
    if out_min is None and out_max is None:
        mn, mx = adjust_range(min(fval(a_min), fval(b_min)), max(fval(a_max), fval(b_max)))
    else:
        lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
        mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


for _name, _fn in (("QuantizedMinimum", np.minimum), ("QuantizedMaximum", np.maximum),
                   ("QuantizedMin_8", np.minimum), ("QuantizedMax_8", np.maximum)):
    def _mm_kernel(a, b, a_min, a_max, b_min, b_max, out_min=None, out_max=None, *,
                   padding="NA", _fn=_fn):
        return _minmax(_fn, a, b, a_min, a_max, b_min, b_max, out_min, out_max)
    _mm_kernel.__doc__ = f"{_name}: elementwise {_fn.__name__} of two quint8 tensors (broadcast)."
    hexop(_name, BIN_IN + OUT_RANGE, optional=OUT_RANGE)(_mm_kernel)


for _name, _fn in (("QuantizedEqual_8", np.equal), ("QuantizedNotEqual_8", np.not_equal),
                   ("QuantizedLess_8", np.less), ("QuantizedLessEqual_8", np.less_equal),
                   ("QuantizedGreater_8", np.greater),
                   ("QuantizedGreaterEqual_8", np.greater_equal)):
    def _cmp_kernel(a, b, a_min, a_max, b_min, b_max, *, padding="NA", _fn=_fn):
        ra, rb = _binary_real(a, b, a_min, a_max, b_min, b_max)
        return (_fn(ra, rb).astype(np.uint8),)
    _cmp_kernel.__doc__ = f"{_name}: compares the real values of A and B -> uint8 0/1 (broadcast)."
    hexop(_name, BIN_IN, outputs=("output",))(_cmp_kernel)


@hexop("Select_8", ("cond", "x", "x_min", "x_max", "y", "y_min", "y_max"))
def select_8(cond, x, x_min, x_max, y, y_min, y_max, *, padding="NA"):
    """X where cond != 0 else Y, in the union of their ranges; all shapes equal."""
    c, a, b = as4d(cond), _codes(x), _codes(y)
    if not c.shape == a.shape == b.shape:
        raise MDFError(f"Select_8 needs equal shapes, got {c.shape}, {a.shape}, {b.shape}")
    mn, mx = adjust_range(min(fval(x_min), fval(y_min)), max(fval(x_max), fval(y_max)))
    r = np.where(c != 0, dequantize_u8(a, fval(x_min), fval(x_max)),
                 dequantize_u8(b, fval(y_min), fval(y_max)))
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("Softmax_uint8", Q_IN + ("beta",), outputs=("output",), optional=("beta",))
def softmax_uint8(q, q_min, q_max, beta=None, *, padding="NA"):
    """softmax(beta * x) along depth of quint8 input, as float."""
    b = 1.0 if beta is None else float(fval(beta))
    r = b * _real(q, q_min, q_max).astype(np.float64)
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    return ((e / e.sum(axis=-1, keepdims=True)).astype(F32),)


@hexop("QuantizedPRelu_8", Q_IN + ("alphas",))
def quantized_prelu_8(q, q_min, q_max, alphas, *, padding="NA"):
    """x if x > 0 else alpha * x (alphas broadcast along depth)."""
    r = _real(q, q_min, q_max)
    a = np.asarray(alphas, dtype=F32).reshape(-1)
    if a.size not in (1, r.shape[3]):
        raise MDFError(f"QuantizedPRelu_8: {a.size} alphas for depth {r.shape[3]}")
    return _auto(np.where(r > 0, r, r * a).astype(F32))


@hexop("L2Normalize_8", Q_IN + ("axis",), optional=("axis",))
def l2_normalize_8(q, q_min, q_max, axis=None, *, padding="NA"):
    """x / sqrt(sum of x^2 along axis (default depth)) into the fixed range [-1, 1]."""
    r = real_u8(_codes(q), fval(q_min), fval(q_max)).astype(np.float64)
    ax = 3 if axis is None else ival(axis) % 4
    norm = np.sqrt((r * r).sum(axis=ax, keepdims=True))
    out = np.divide(r, norm, out=np.zeros_like(r), where=norm > 0)
    return q8_triple(quantize_u8(out.astype(F32), F32(-1), F32(1)), -1.0, 1.0)


def _axes(axes) -> list[int]:
    ax = ilist(axes)
    if not 1 <= len(ax) <= 4 or any(not 0 <= a <= 3 for a in ax):
        raise MDFError(f"reduction axes must be 1..4 values in 0..3, got {ax}")
    return ax


@hexop("QuantizedMean_8", Q_IN + ("axes",) + OUT_RANGE, optional=OUT_RANGE)
def quantized_mean_8(q, q_min, q_max, axes, out_min=None, out_max=None, *, padding="NA"):
    """Mean over the axes (kept with size 1); the input range unless an output range is given."""
    r = reduce_4d(_real(q, q_min, q_max).astype(np.float64), np.array(_axes(axes)), None,
                  padding, np.mean).astype(F32)
    if out_min is None and out_max is None:
        mn, mx = fval(q_min), fval(q_max)
    else:
        lo, hi = (r.min(), r.max()) if r.size else (F32(0), F32(0))
        mn, mx = auto_or_given(lo, hi, out_min, out_max)
    return q8_triple(quantize_u8(r, mn, mx), mn, mx)


@hexop("QuantizedSum_8to32", Q_IN + ("axes",))
def quantized_sum_8to32(q, q_min, q_max, axes, *, padding="NA"):
    """sum (q - z) over the axes into qint32, range ±2**31 * step."""
    mn, mx = fval(q_min), fval(q_max)
    v = _codes(q).astype(np.int64) - zero_code(mn, mx)
    out = reduce_4d(v, np.array(_axes(axes)), None, padding, np.sum)
    st = step_u8(mn, mx)
    return (np.clip(out, INT32_MIN, INT32_MAX).astype(np.int32), scalar(F32(INT32_MIN) * st),
            scalar(F32(INT32_MAX) * st))


def _arg(fn, q, axis):
    a = _codes(q)
    ax = ival(axis)
    if not -4 <= ax <= 4:
        raise MDFError(f"axis must be in -4..4, got {ax}")
    return fn(a, axis=ax % 4, keepdims=True), ax % 4, a


@hexop("ArgMax_8", ("input", "axis", "input_min", "input_max"))
def argmax_8(q, axis, q_min, q_max, *, padding="NA"):
    """Indices of the largest codes along axis as quint8 in [0, 255]; needs dim[axis] < 256."""
    idx, ax, a = _arg(np.argmax, q, axis)
    if a.shape[ax] >= 256:
        raise MDFError(f"ArgMax_8 needs dim[axis] < 256, got {a.shape[ax]}")
    return q8_triple(idx.astype(np.uint8), 0.0, 255.0)


@hexop("ArgMin_8", ("input", "axis", "input_min", "input_max"), outputs=("output",))
def argmin_8(q, axis, q_min, q_max, *, padding="NA"):
    """Indices of the smallest codes along axis, int32 (first on ties)."""
    return (_arg(np.argmin, q, axis)[0].astype(np.int32),)


@hexop("QuantizedTile_8", ("input", "multiples", "input_min", "input_max"))
def quantized_tile_8(q, multiples, q_min, q_max, *, padding="NA"):
    """Replicate along each dim by the multiples (left-filled with 1s); range copied."""
    m = ilist(multiples)
    if len(m) > 4 or any(v < 1 for v in m):
        raise MDFError(f"QuantizedTile_8: multiples must be <= 4 values >= 1, got {m}")
    return q8_triple(np.tile(_codes(q), [1] * (4 - len(m)) + m), fval(q_min), fval(q_max))


@hexop("MirrorPad_8", ("input", "paddings", "input_min", "input_max"), padding="MIRROR_REFLECT")
def mirror_pad_8(q, pads, q_min, q_max, *, padding="MIRROR_REFLECT"):
    """Mirror padding of quint8 data; range copied."""
    return q8_triple(mirror_pad(_codes(q), pads, padding), fval(q_min), fval(q_max))


def _block(block) -> tuple[int, int]:
    b = ilist(block)
    if len(b) not in (1, 2) or min(b) < 1:
        raise MDFError(f"block size must be a scalar or [bh, bw] >= 1, got {b}")
    return (b[0], b[0]) if len(b) == 1 else (b[0], b[1])


def space_to_depth(a: np.ndarray, block) -> np.ndarray:
    bh, bw = _block(block)
    n, h, w, d = a.shape
    if h % bh or w % bw:
        raise MDFError(f"SpaceToDepth: height {h} and width {w} must be multiples of {bh}, {bw}")
    return (a.reshape(n, h // bh, bh, w // bw, bw, d).transpose(0, 1, 3, 2, 4, 5)
            .reshape(n, h // bh, w // bw, bh * bw * d))


def depth_to_space(a: np.ndarray, block, crops=None) -> np.ndarray:
    bh, bw = _block(block)
    n, h, w, d = a.shape
    if d % (bh * bw):
        raise MDFError(f"DepthToSpace: depth {d} must be a multiple of {bh * bw}")
    out = (a.reshape(n, h, w, bh, bw, d // (bh * bw)).transpose(0, 1, 3, 2, 4, 5)
           .reshape(n, h * bh, w * bw, d // (bh * bw)))
    if crops is not None:
        t, b, l, r = ilist(crops)
        if min(t, b, l, r) < 0 or t + b >= out.shape[1] or l + r >= out.shape[2]:
            raise MDFError(f"DepthToSpace: crops {[t, b, l, r]} must be >= 0 and leave data")
        out = out[:, t:out.shape[1] - b, l:out.shape[2] - r]
    return np.ascontiguousarray(out)


@hexop("SpaceToDepth_f", ("input", "block_size"), outputs=("output",))
def space_to_depth_f(x, block, *, padding="NA"):
    """[b,h,w,d] -> [b,h/bh,w/bw,bh*bw*d] (TF space_to_depth)."""
    return (space_to_depth(as4d(x, F32), block),)


@hexop("SpaceToDepth_8", ("input", "block_size", "input_min", "input_max"))
def space_to_depth_8(q, block, q_min, q_max, *, padding="NA"):
    """SpaceToDepth of quint8 data; range copied."""
    return q8_triple(space_to_depth(_codes(q), block), fval(q_min), fval(q_max))


@hexop("DepthToSpace_f", ("input", "block_size", "crops"), outputs=("output",),
       optional=("crops",))
def depth_to_space_f(x, block, crops=None, *, padding="NA"):
    """[b,h,w,d] -> [b,h*bh,w*bw,d/(bh*bw)], then the optional crops [top,bottom,left,right]."""
    return (depth_to_space(as4d(x, F32), block, crops),)


@hexop("DepthToSpace_8", ("input", "block_size", "input_min", "input_max", "crops"),
       optional=("crops",))
def depth_to_space_8(q, block, q_min, q_max, crops=None, *, padding="NA"):
    """DepthToSpace of quint8 data; range copied."""
    return q8_triple(depth_to_space(_codes(q), block, crops), fval(q_min), fval(q_max))
