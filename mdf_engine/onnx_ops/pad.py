"""``onnx::`` Pad: grow (or, with negative amounts, crop) a tensor at both ends of its axes.

Modes: ``constant`` (a fill value), ``reflect`` (mirror without repeating the edge element),
``edge`` (repeat the edge element) and, from opset 19, ``wrap`` (periodic). Pad takes
``pads``/``value`` attributes at opset 2, inputs from 11 and an ``axes`` input from 18; the
opset-1 form (``paddings``) lives in ``variants/legacy_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from . import _jita_pad as P
from . import onnx_op
from ._axes import int_values, norm_axis


def _pad(
    x: np.ndarray,
    pads: list[int],
    mode: str,
    value: Any,
    axes: list[int] | None,
    allowed: tuple[str, ...],
) -> np.ndarray:
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in allowed:
        raise MDFError(f"Pad: mode must be one of {', '.join(allowed)}, got '{mode}'")
    nd = x.ndim
    if axes is None:
        axes = list(range(nd))
    axes = [norm_axis(a, nd, "Pad") for a in axes]
    if len(pads) != 2 * len(axes):
        raise MDFError(f"Pad: pads needs {2 * len(axes)} values, got {len(pads)}")
    before = [0] * nd
    after = [0] * nd
    for i, a in enumerate(axes):
        before[a] = pads[i]
        after[a] = pads[i + len(axes)]
    # negative pads crop
    if any(v < 0 for v in before) or any(v < 0 for v in after):
        x = x[
            tuple(
                slice(max(-b, 0), x.shape[i] - max(-e, 0))
                for i, (b, e) in enumerate(zip(before, after))
            )
        ]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    check_elements([n + b + e for n, (b, e) in zip(x.shape, width)], "Pad's result")
    if mode == "constant":
        v = 0 if value is None or np.size(value) == 0 else np.asarray(value).reshape(-1)[0]
        out = np.full([n + b + e for n, (b, e) in zip(x.shape, width)], v, dtype=x.dtype)
        out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, width))] = x
        return out
    for i, (b, e) in enumerate(width):
        if (b or e) and x.shape[i] == 0:
            raise MDFError(f"Pad: {mode} mode cannot pad the empty axis {i}")
        if mode == "reflect" and (b or e) and x.shape[i] < 2:
            raise MDFError(f"Pad: reflect needs axis {i} of length >= 2")
    out = np.empty([n + b + e for n, (b, e) in zip(x.shape, width)], dtype=x.dtype)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, width))] = x
    # fill the borders axis by axis, copying whole planes of the already padded region
    for i, (b, e) in enumerate(width):
        if not (b or e):
            continue
        n = x.shape[i]
        pre = tuple(slice(None) for _ in range(i))
        post = tuple(slice(bb, bb + nn) for nn, (bb, _) in zip(x.shape[i + 1 :], width[i + 1 :]))
        for t in range(-b, n + e):
            if 0 <= t < n:
                continue
            if mode == "edge":
                src = min(max(t, 0), n - 1)
            elif mode == "wrap":
                src = t % n
            else:  # reflect: mirror without repeating the edge element
                period = 2 * (n - 1)
                src = abs(t) % period
                src = period - src if src >= n else src
            out[pre + (b + t,) + post] = out[pre + (b + src,) + post]
    return out


#: the modes of opsets 2-18 (19 adds wrap)
MODES = ("constant", "reflect", "edge")


def _pad_call(data, pads, value, axes, mode, allowed=MODES) -> tuple:
    """The Python kernels' one call: ``pads`` and ``axes`` as ints (``axes`` None: all)."""
    ax = None if axes is None else int_values(axes)
    return (_pad(np.asarray(data), int_values(pads), mode, value, ax, allowed),)


#: the nopython twins take the result's template (``jit_like``: ``_jita_pad``)
LIKE = {"outputs": ("output",), "jit_like": True}
#: Pad's inputs from opset 18
INPUTS18 = {
    "inputs": ("data", "pads", "constant_value", "axes"),
    "optional": ("constant_value", "axes"),
}


@onnx_op(
    "Pad",
    inputs=("data",),
    attributes={"pads": None, "mode": "constant", "value": 0.0},
    since=2,
    jit=P.pad2_like_jit,
    **LIKE,
)
def pad_v2(data, *, pads=None, mode="constant", value=0.0):
    """Pad (or crop, for negative values) by the ``pads`` attribute [begins..., ends...]."""
    if pads is None:
        raise MDFError("Pad (opset 2) needs the attribute 'pads'")
    return _pad_call(data, pads, value, None, mode)


@onnx_op(
    "Pad",
    inputs=("data", "pads", "constant_value"),
    optional=("constant_value",),
    attributes={"mode": "constant"},
    since=11,
    jit=P.pad11_like_jit,
    **LIKE,
)
def pad_v11(data, pads, constant_value=None, *, mode="constant"):
    """Pad by the ``pads`` input; modes constant, reflect and edge."""
    return _pad_call(data, pads, constant_value, None, mode)


@onnx_op("Pad", attributes={"mode": "constant"}, since=18, jit=P.pad18_like_jit, **INPUTS18, **LIKE)
def pad_v18(data, pads, constant_value=None, axes=None, *, mode="constant"):
    """Pad by ``pads`` over ``axes`` (all when absent); modes constant, reflect and edge."""
    return _pad_call(data, pads, constant_value, axes, mode)


@onnx_op("Pad", attributes={"mode": "constant"}, since=19, jit=P.pad19_like_jit, **INPUTS18, **LIKE)
def pad(data, pads, constant_value=None, axes=None, *, mode="constant"):
    """Pad by ``pads`` over ``axes``; modes constant, reflect, edge and wrap."""
    return _pad_call(data, pads, constant_value, axes, mode, (*MODES, "wrap"))
