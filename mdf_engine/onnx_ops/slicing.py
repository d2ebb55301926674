"""``onnx::`` Slice: ``data[starts:ends:steps]`` on chosen axes, with ONNX's clamping of
out-of-range bounds (negative bounds count from the end; a negative step walks backwards).

The result is a strided numpy view of the input (no copy); callers must not write into it.
Slice takes ``starts``/``ends``/``axes``/``steps`` as inputs from opset 10; the opset-1 form
(attributes) lives in ``variants/legacy_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import int_values, norm_axis


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


@onnx_op(
    "Slice",
    inputs=("data", "starts", "ends", "axes", "steps"),
    optional=("axes", "steps"),
    outputs=("output",),
    since=10,
)
def slice_(data, starts, ends, axes=None, steps=None):
    """``data[starts:ends:steps]`` on ``axes``, bounds clamped as ONNX says; a strided view."""
    return (_slice(data, starts, ends, axes, steps),)
