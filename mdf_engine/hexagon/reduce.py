"""Hexagon reductions and index selections: Sum_f/Prod_f/Min_f/Max_f/Prod_int32 (``dims`` list,
``true_rank``; VALID padding squeezes the reduced dims to the front), QuantizedMean_8 (input range
unless one is given), QuantizedSum_8to32 (``sum (q - z)`` in int32 with range ±2**31 * step),
ArgMax_8 (indices as quint8 in [0, 255], dim[axis] < 256), ArgMin_8 / ArgMax_8toInt32 /
ArgMax_ftoInt32 (int32 indices, first on ties) and TopK_f / TopK_8 (k largest along depth,
descending, lower index first on ties; int32 indices [judgement: the _8 entry says quint8]; range
copied).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .elementwise_float import wrap32
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    O1,
    OUT_RANGE,
    PADDING,
    Q_IN,
    as4d,
    codes,
    deq8,
    fval,
    ilist,
    ival,
    padding_code,
    q8_of_real,
    q8_triple,
    quantize_u8,
    scalar,
    step_u8,
    zero_code,
)


def reduce_4d(a: np.ndarray, dims, true_rank, padding, fn) -> np.ndarray:
    """Reduce over the listed dims (indices into the last ``true_rank`` of b,h,w,d)."""
    r = 4 if true_rank is None else ival(true_rank)
    if not 1 <= r <= 4:
        raise MDFError(f"true rank must be 1..4, got {r}")
    d = None if dims is None else ilist(dims)
    if d is None or any(v < 0 for v in d):
        axes = (0, 1, 2, 3)
    else:
        if any(v >= r for v in d):
            raise MDFError(f"reduction dims {d} out of range for rank {r}")
        axes = tuple(sorted({4 - r + v for v in d}))
    out = fn(a, axis=axes, keepdims=True)
    if padding_code(padding) == PADDING["VALID"]:
        kept = [n for i, n in enumerate(out.shape) if i not in axes]
        out = out.reshape([1] * (4 - len(kept)) + kept)
    return out


for _name, _fn, _dt in (
    ("Sum_f", np.sum, F32),
    ("Prod_f", np.prod, F32),
    ("Min_f", np.min, F32),
    ("Max_f", np.max, F32),
    ("Prod_int32", np.prod, np.int32),
):

    def _red_kernel(x, dims=None, true_rank=None, *, padding="NA", _fn=_fn, _dt=_dt):
        a = as4d(x, _dt)
        if _dt is np.int32:
            return (wrap32(reduce_4d(a.astype(np.int64), dims, true_rank, padding, _fn)),)
        return (reduce_4d(a, dims, true_rank, padding, _fn).astype(_dt),)

    _red_kernel.__doc__ = (
        f"{_name}: reduce over dims (all if none or any < 0); VALID padding "
        "squeezes the reduced dims to the front."
    )
    hexop(_name, ("input", "dims", "true_rank"), outputs=O1, optional=("dims", "true_rank"))(
        _red_kernel
    )


def _axes(axes) -> list[int]:
    ax = ilist(axes)
    if not 1 <= len(ax) <= 4 or any(not 0 <= a <= 3 for a in ax):
        raise MDFError(f"reduction axes must be 1..4 values in 0..3, got {ax}")
    return ax


@hexop("QuantizedMean_8", Q_IN + ("axes",) + OUT_RANGE, optional=OUT_RANGE)
def quantized_mean_8(q, q_min, q_max, axes, out_min=None, out_max=None, *, padding="NA"):
    """Mean over the axes (kept with size 1); the input range unless an output range is given."""
    r = reduce_4d(
        deq8(q, q_min, q_max).astype(np.float64), np.array(_axes(axes)), None, padding, np.mean
    ).astype(F32)
    if out_min is not None or out_max is not None:
        return q8_of_real(r, out_min, out_max)
    return q8_triple(quantize_u8(r, fval(q_min), fval(q_max)), fval(q_min), fval(q_max))


@hexop("QuantizedSum_8to32", Q_IN + ("axes",))
def quantized_sum_8to32(q, q_min, q_max, axes, *, padding="NA"):
    """sum (q - z) over the axes into qint32, range ±2**31 * step."""
    mn, mx = fval(q_min), fval(q_max)
    v = codes(q).astype(np.int64) - zero_code(mn, mx)
    out = reduce_4d(v, np.array(_axes(axes)), None, padding, np.sum)
    st = step_u8(mn, mx)
    return (
        np.clip(out, INT32_MIN, INT32_MAX).astype(np.int32),
        scalar(F32(INT32_MIN) * st),
        scalar(F32(INT32_MAX) * st),
    )


def _arg(fn, q, axis):
    a = codes(q)
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


@hexop("ArgMax_8toInt32", ("input", "axis", "input_min", "input_max"), outputs=("output",))
def argmax_8_to_int32(q, axis, q_min, q_max, *, padding="NA"):
    """Index of the largest code along axis (0..3 = b,h,w,d; negative counts from the end),
    the axis kept with size 1; first index on ties."""
    a = as4d(q)
    ax = ival(axis)
    if not -4 <= ax <= 3:
        raise MDFError(f"ArgMax_8toInt32: axis must be in -4..3, got {ax}")
    return (np.argmax(a, axis=ax % 4, keepdims=True).astype(np.int32),)


@hexop("ArgMax_ftoInt32", ("input", "axis"), outputs=O1)
def argmax_f_to_int32(x, axis, *, padding="NA"):
    """Index of the largest value along axis (0..3, negative from the end); first on ties."""
    a = as4d(x, F32)
    ax = ival(axis)
    if not -4 <= ax <= 3:
        raise MDFError(f"ArgMax_ftoInt32: axis must be in -4..3, got {ax}")
    return (np.argmax(a, axis=ax % 4, keepdims=True).astype(np.int32),)


@hexop("TopK_f", ("input", "k"), outputs=("values", "indices"))
def topk_f(x, k, *, padding="NA"):
    """The k largest values along depth, descending (lower index first on ties), and indices
    (int32); if the depth is smaller than k, all of it, sorted."""
    a = as4d(x, F32)
    kk = ival(k)
    if kk < 1:
        raise MDFError(f"TopK_f: k must be >= 1, got {kk}")
    idx = np.argsort(-a, axis=3, kind="stable")[..., :kk]
    return np.take_along_axis(a, idx, axis=3), idx.astype(np.int32)


@hexop(
    "TopK_8",
    ("input", "k", "input_min", "input_max"),
    outputs=("output", "indices", "output_min", "output_max"),
)
def topk_8(q, k, q_min, q_max, *, padding="NA"):
    """The k largest codes along depth (descending; all of the depth if it is smaller than k)
    and their int32 indices; range copied."""
    a = codes(q)
    kk = ival(k)
    if kk < 1:
        raise MDFError(f"TopK_8: k must be >= 1, got {kk}")
    idx = np.argsort(-a.astype(np.int16), axis=3, kind="stable")[..., :kk]
    return (np.take_along_axis(a, idx, axis=3), idx.astype(np.int32), scalar(q_min), scalar(q_max))
