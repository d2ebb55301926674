"""``onnx::`` Reduce* operators: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
with Numba kernels.

Every reduction is brought to one layout before the kernel runs: the reduced axes are made one
contiguous block (a transposed copy only when they are not adjacent already) so that the data
is ``(outer, n, inner)`` in C order; the njit kernel then reduces the middle dimension.

Opset versions: the Reduce* ops take ``axes`` as an attribute up to opset 17 (ReduceSum: 12)
and as an optional input afterwards, together with ``noop_with_empty_axes``.

The numeric cores and the ``jit=`` versions (nopython, for the compiled backend: ``axes``
and ``keepdims`` constants or values, the result's shape the warm-up's) are in
:mod:`._jitb_reduce`; both kinds of kernel compute the same values bit for bit.
ArgMax/ArgMin, CumSum and TopK live in :mod:`.argreduce`, :mod:`.cumsum` and :mod:`.topk`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import int_list
from ._jitb_reduce import (
    ACC_INT_KINDS,
    L1,
    L2,
    LOGSUM,
    LOGSUMEXP,
    MAX,
    MEAN,
    MIN,
    PROD,
    SUM,
    SUMSQUARE,
    _reduce_core,
    _reduce_like_jits,
)


def _empty_extreme(kind: int, dtype: np.dtype) -> Any:
    """The value of max/min over an empty set: -inf/+inf, or the dtype's extreme for ints."""
    if dtype.kind == "b":
        return kind == MIN
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == MAX else info.max
    return -np.inf if kind == MAX else np.inf


def _reduce(kind: int, op: str, data: Any, axes: Any, keepdims: int, noop: int) -> np.ndarray:
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    nd = x.ndim
    ax = None if axes is None else int_list(axes)
    if not ax:
        if noop:
            return x
        red = list(range(nd))
    else:
        red = []
        for a in ax:
            if not -nd <= a < max(nd, 1):
                raise MDFError(f"{op}: axis {a} is out of range for a tensor of rank {nd}")
            red.append(a % nd if nd else 0)
        red = sorted(set(red)) if nd else []
    shape = x.shape
    if keepdims:
        out_shape = tuple(1 if i in red else s for i, s in enumerate(shape))
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i not in red)
    # bring the reduced axes into one contiguous block
    if red and red[-1] - red[0] + 1 != len(red):
        keep = [i for i in range(nd) if i not in red]
        x = np.transpose(x, keep + red)
        red = list(range(len(keep), nd))
        shape = x.shape
    if red:
        outer = math.prod(shape[: red[0]])
        n = math.prod(shape[red[0] : red[-1] + 1])
        inner = math.prod(shape[red[-1] + 1 :])
    else:
        outer, n, inner = x.size, 1, 1
    dt = x.dtype
    if (kind == MAX or kind == MIN) and n == 0:
        return np.full(out_shape, _empty_extreme(kind, dt), dtype=dt)
    flat = x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)
    k = dt.kind
    if k == "b":
        flat = flat.view(np.uint8)
    elif k == "f" and dt.itemsize < 4:
        flat = flat.astype(np.float32)
    if k in "iub" and kind in ACC_INT_KINDS:
        acc = np.empty(outer * inner, dtype=np.uint64 if dt == np.uint64 else np.int64)
    else:
        acc = np.empty(outer * inner, dtype=np.float64)
    res = _reduce_core(flat, outer, n, inner, kind, acc)
    return res.astype(dt, copy=False).reshape(out_shape)


def _attr_reduction(kind: int, op: str):
    def kernel(data, *, axes=None, keepdims=1):
        return (_reduce(kind, op, data, axes, keepdims, 0),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"{op} over the ``axes`` attribute (all axes when absent)."
    return kernel


def _input_reduction(kind: int, op: str):
    def kernel(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
        return (_reduce(kind, op, data, axes, keepdims, noop_with_empty_axes),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = (
        f"{op} over the ``axes`` input; empty or absent axes reduce everything unless "
        "``noop_with_empty_axes`` is set (then the input is returned unchanged)."
    )
    return kernel


def _register_reduce(op: str, kind: int, input_since: int) -> None:
    attr_jit, input_jit = _reduce_like_jits(kind, op)
    attrs1 = {"axes": None, "keepdims": 1}
    onnx_op(
        op,
        inputs=("data",),
        attributes=attrs1,
        outputs=("reduced",),
        since=1,
        jit=attr_jit,
        jit_like=True,
    )(_attr_reduction(kind, op))
    onnx_op(
        op,
        inputs=("data", "axes"),
        optional=("axes",),
        attributes={"keepdims": 1, "noop_with_empty_axes": 0},
        outputs=("reduced",),
        since=input_since,
        jit=input_jit,
        jit_like=True,
    )(_input_reduction(kind, op))


for _op, _kind in (
    ("ReduceL1", L1),
    ("ReduceL2", L2),
    ("ReduceLogSum", LOGSUM),
    ("ReduceLogSumExp", LOGSUMEXP),
    ("ReduceMax", MAX),
    ("ReduceMean", MEAN),
    ("ReduceMin", MIN),
    ("ReduceProd", PROD),
    ("ReduceSumSquare", SUMSQUARE),
):
    _register_reduce(_op, _kind, 18)
_register_reduce("ReduceSum", SUM, 13)
