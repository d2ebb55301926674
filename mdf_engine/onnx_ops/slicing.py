"""``onnx::`` Slice: ``data[starts:ends:steps]`` on chosen axes, with ONNX's clamping of
out-of-range bounds (negative bounds count from the end; a negative step walks backwards).

The result is a strided numpy view of the input (no copy); callers must not write into it.
Slice takes ``starts``/``ends``/``axes``/``steps`` as inputs from opset 10; the opset-1 form
(attributes) lives in ``variants/legacy_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import int_values, norm_axis
from ._shape_jit import _dims, _ints, c_strides, check_like, copy_view
from ._shape_jit import norm_axis as jit_axis


def _slice(data: Any, starts: Any, ends: Any, axes: Any, steps: Any) -> np.ndarray:
    x = np.asarray(data)
    st, en = int_values(starts), int_values(ends)
    ax = int_values(axes) if axes is not None else list(range(len(st)))
    sp = int_values(steps) if steps is not None else [1] * len(st)
    if not len(st) == len(en) == len(ax) == len(sp):
        raise MDFError("Slice: starts, ends, axes and steps must have the same length")
    idx = [slice(None)] * x.ndim
    for s, e, a, k in zip(st, en, ax, sp):
        a = norm_axis(a, x.ndim, "Slice")
        d = x.shape[a]
        if k == 0:
            raise MDFError("Slice: a step must not be 0")
        s = s + d if s < 0 else s
        e = e + d if e < 0 else e
        if k > 0:
            s = min(max(s, 0), d)
            e = min(max(e, 0), d)
            idx[a] = slice(s, e, k)
        else:
            s = min(max(s, -1), d - 1)
            e = min(max(e, -1), d - 1)
            idx[a] = (
                slice(s if s >= 0 else None, e if e >= 0 else None, k) if s >= 0 else slice(0, 0, 1)
            )
    return x[tuple(idx)]


@numba.njit(cache=True)
def slice_like_jit(data, starts, ends, axes, steps, like):
    """nopython Slice (compiled backend; ``like``: the result's shape, see ``_shape_jit``):
    a copy of the strided view the Python kernel returns."""
    xd = _dims(data)
    nd = len(xd)
    st = _ints(starts)
    en = _ints(ends)
    n = len(st)
    ax = _ints(axes) if axes is not None else np.arange(n)
    sp = _ints(steps) if steps is not None else np.ones(n, np.int64)
    if len(en) != n or len(ax) != n or len(sp) != n:
        raise ValueError("Slice: starts, ends, axes and steps must have the same length")
    first = np.zeros(nd, np.int64)
    step = np.ones(nd, np.int64)
    count = xd.copy()
    for i in range(n):
        a = jit_axis(ax[i], nd)
        if a < 0:
            raise ValueError("Slice: an axis is out of range")
        d = xd[a]
        k = sp[i]
        if k == 0:
            raise ValueError("Slice: a step must not be 0")
        s = st[i] + d if st[i] < 0 else st[i]
        e = en[i] + d if en[i] < 0 else en[i]
        if k > 0:
            s = min(max(s, 0), d)
            e = min(max(e, 0), d)
            c = max(0, (e - s + k - 1) // k)
        else:
            s = min(max(s, -1), d - 1)
            e = min(max(e, -1), d - 1)
            c = max(0, (s - e - k - 1) // -k) if s >= 0 else 0
        first[a] = s if c > 0 else 0
        step[a] = k
        count[a] = c
    check_like(count, like, "Slice: the result's shape is not the compiled backend's warm-up's")
    cs = c_strides(xd)
    offset = 0
    vstr = np.empty(nd, np.int64)
    for a in range(nd):
        offset += first[a] * cs[a]
        vstr[a] = step[a] * cs[a]
    return copy_view(data, offset, count, vstr, like)


@onnx_op(
    "Slice",
    inputs=("data", "starts", "ends", "axes", "steps"),
    optional=("axes", "steps"),
    outputs=("output",),
    since=10,
    jit=slice_like_jit,
    jit_like=True,
)
def slice_(data, starts, ends, axes=None, steps=None):
    """``data[starts:ends:steps]`` on ``axes``, bounds clamped as ONNX says; a strided view."""
    return (_slice(data, starts, ends, axes, steps),)
