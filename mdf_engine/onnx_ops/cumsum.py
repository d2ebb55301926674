"""``onnx::`` CumSum: running sums along one axis (given as an input), optionally exclusive
and/or reversed, with a Numba kernel over the ``(outer, n, inner)`` layout and a ``jit=`` form
(:mod:`._jitb_cumsum`)."""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import axis_index, split3
from ._jitb_cumsum import cumsum_core, cumsum_like_jit


@onnx_op(
    "CumSum",
    inputs=("x", "axis"),
    attributes={"exclusive": 0, "reverse": 0},
    since=11,
    jit=cumsum_like_jit,
    jit_like=True,
)
def cumsum(x, axis, *, exclusive=0, reverse=0):
    """Cumulative sum along ``axis`` (an input), optionally exclusive and/or reversed."""
    a = np.asarray(x)
    if a.ndim == 0:
        raise MDFError("CumSum: x must have rank >= 1")
    ax = axis_index(axis, a.ndim, "CumSum")
    outer, n, inner = split3(a.shape, ax)
    res = cumsum_core(
        np.ascontiguousarray(a).reshape(-1), outer, n, inner, bool(exclusive), bool(reverse)
    )
    return (res.reshape(a.shape),)
