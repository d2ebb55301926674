"""Hexagon slices: Slice_f/_int32/_8 and QuantizedSlice_8 (start and size over the last n of
b,h,w,d, size -1 = the rest) and StridedSlice_f/_int32/_uint8 and QuantizedStridedSlice_8 (begin,
end, step with begin/end/shrink masks, bits 0..3 = b,h,w,d; output dim ``ceil((end-begin)/step)``,
shrunk dims squeezed to the front). Quantized slices copy the input range.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    O1,
    as4d,
    codes,
    fval,
    ilist,
    ival,
    q8_triple,
    scalar,
)


def slice_4d(a: np.ndarray, start, size, op: str = "slice") -> np.ndarray:
    """``a[start : start + size]`` per dimension (size -1: to the end), start and size
    left-padded to four dimensions with full slices; errors named ``op``."""
    st, sz = ilist(start), ilist(size)
    if len(st) != len(sz) or len(st) > 4:
        raise MDFError(f"{op}: start {st} and size {sz} must have the same length <= 4")
    st = [0] * (4 - len(st)) + st
    sz = [-1] * (4 - len(sz)) + sz
    idx = []
    for d, (s, n) in enumerate(zip(st, sz)):
        n = a.shape[d] - s if n == -1 else n
        if s < 0 or n < 0 or s + n > a.shape[d]:
            raise MDFError(f"{op}: [{s}, {s + n}) is outside dim {d} of size {a.shape[d]}")
        idx.append(slice(s, s + n))
    return np.ascontiguousarray(a[tuple(idx)])


for _name, _dt in (("Slice_f", F32), ("Slice_int32", np.int32), ("Slice_8", np.uint8)):

    def _slice_kernel(x, start, size, *, padding="NA", _dt=_dt):
        return (slice_4d(as4d(x, _dt), start, size),)

    _slice_kernel.__doc__ = "Slice from start with size (-1 = rest), left-padded full slices."
    hexop(_name, ("input", "start", "size"), outputs=O1)(_slice_kernel)


@hexop("QuantizedSlice_8", ("input", "start", "size", "input_min", "input_max"))
def quantized_slice_8(q, start, size, q_min, q_max, *, padding="NA"):
    """Slice from start with size (-1 = to the end), left-padded with full slices; range copied."""
    a = slice_4d(as4d(q), start, size, "QuantizedSlice_8")
    return a, scalar(q_min), scalar(q_max)


def strided_slice(a: np.ndarray, begin, end, step, masks=(0, 0, 0)) -> np.ndarray:
    b, e, s = ilist(begin), ilist(end), ilist(step)
    k = len(b)
    if not (1 <= k <= 4 and len(e) == k and len(s) == k):
        raise MDFError(f"strided slice: begin {b}, end {e}, step {s} must have equal length 1..4")
    b = [0] * (4 - k) + b
    e = list(a.shape[: 4 - k]) + e
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
            raise MDFError(
                f"strided slice: dim {d} (size {n}) sampled at {lo}..{hi} step {st} "
                "is empty or out of range"
            )
        out = np.take(out, idx, axis=d)
    keep = [n for d, n in enumerate(out.shape) if not (sm >> d & 1)]
    return np.ascontiguousarray(out.reshape([1] * (4 - len(keep)) + keep))


def _masks(bm, em, sm):
    given = [m is not None for m in (bm, em, sm)]
    if any(given) and not all(given):
        raise MDFError("strided slice: the 3 masks must be all present or all absent")
    return tuple(0 if m is None else ival(m) for m in (bm, em, sm))


MASKS = ("begin_mask", "end_mask", "shrink_mask")


for _name, _dt in (
    ("StridedSlice_f", F32),
    ("StridedSlice_int32", np.int32),
    ("StridedSlice_uint8", np.uint8),
):

    def _ss_kernel(x, begin, end, step, bm=None, em=None, sm=None, *, padding="NA", _dt=_dt):
        return (strided_slice(as4d(x, _dt), begin, end, step, _masks(bm, em, sm)),)

    _ss_kernel.__doc__ = "Strided slice with begin/end/shrink masks (bits 0..3 = b,h,w,d)."
    hexop(_name, ("input", "begin", "end", "step") + MASKS, outputs=("output",), optional=MASKS)(
        _ss_kernel
    )


@hexop(
    "QuantizedStridedSlice_8",
    ("input", "begin", "end", "step") + MASKS + ("input_min", "input_max"),
)
def quantized_strided_slice_8(q, begin, end, step, bm, em, sm, q_min, q_max, *, padding="NA"):
    """Strided slice of quint8 data; range copied."""
    out = strided_slice(codes(q), begin, end, step, _masks(bm, em, sm))
    return q8_triple(out, fval(q_min), fval(q_max))
