"""``Resize`` (opsets 10, 11/13 and 18/19) and ``Upsample`` (opsets 7 and 9).

Resizing is separable: for each resized axis an index/weight table (output cell -> a few input
cells and their weights) is built from the coordinate transformation, the interpolation mode
(nearest, linear, cubic; antialiased when downsampling with ``antialias=1``) and the edge rules
(taps clamped to the edge, or dropped and the weights renormalized with ``exclude_outside``).
A Numba kernel then applies the table along that axis (the ``jit=`` twins, which take the
same steps: :mod:`._jitb_resize`). Nearest resizing only gathers, so it
keeps any dtype exactly. With ``tf_crop_and_resize`` a cell whose source coordinate falls
outside the input on any axis gets ``extrapolation_value``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from ..registry import REQUIRED
from . import as_array, onnx_op
from ._jitb_resize import (
    _coord,
    resize10_like_jit,
    resize11_like_jit,
    resize18_like_jit,
    upsample7_like_jit,
    upsample_like_jit,
)
from ._jitb_resize import _cubic as _jit_cubic
from ._jitb_resize import _nearest as _jit_nearest

COORD_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
#: cells along one resized axis: each takes a Python row of the axis's table (~10 us and
#: ~200 bytes), so 10^8 cells cost 20 minutes and 20 GB before the result (audit 6)
MAX_AXIS_CELLS = 2**20
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


# the coordinate, nearest-index and cubic-weight rules are the nopython kernel's own functions,
# run as plain Python here (``py_func``): one spelling of each for both kernels
_source_coord = _coord.py_func
_nearest = _jit_nearest.py_func
_cubic = _jit_cubic.py_func


def _axis_table(
    n_in: int,
    n_out: int,
    scale: float,
    start: float,
    end: float,
    mode: str,
    coord: str,
    nearest_mode: str,
    cubic_a: float,
    exclude_outside: bool,
    antialias: bool,
):
    """``(idx (O, T) int64, w (O, T) float64, outside (O,) bool)`` for one axis."""
    rows_i, rows_w, outside = [], [], np.zeros(n_out, bool)
    shrink = scale if (antialias and scale < 1 and mode != "nearest") else 1.0
    for o in range(n_out):
        x = _source_coord(o, coord, scale, n_in, n_out, start, end)
        if coord == "tf_crop_and_resize" and (x < 0 or x > n_in - 1):
            outside[o] = True
        if mode == "nearest":
            rows_i.append([min(max(_nearest(x, nearest_mode, scale), 0), n_in - 1)])
            rows_w.append([1.0])
            continue
        base = math.floor(x)
        r = x - base
        if mode == "linear":
            first = math.floor(-1.0 / shrink) + 1
            offs = range(first, 2 - first)
            ws = [max(0.0, 1.0 - abs((i - r) * shrink)) for i in offs]
        else:
            first = math.floor(-2.0 / shrink) + 1
            offs = range(first, 2 - first)
            ws = [_cubic((i - r) * shrink, cubic_a) for i in offs]
        taps = [base + i for i in offs]
        if exclude_outside:
            ws = [w if 0 <= t < n_in else 0.0 for t, w in zip(taps, ws)]
        total = sum(ws)
        if shrink != 1.0 or exclude_outside:
            ws = [w / total for w in ws] if total != 0 else ws
        rows_i.append([min(max(t, 0), n_in - 1) for t in taps])
        rows_w.append(ws)
    return np.array(rows_i, np.int64), np.array(rows_w, np.float64), outside


@numba.njit(cache=True)
def _apply_table(x, idx, w):
    """``y[r, o] = sum_t w[o, t] * x[r, idx[o, t]]`` for x (R, L)."""
    R = x.shape[0]
    O, T = idx.shape
    y = np.zeros((R, O), dtype=np.float64)
    for r in range(R):
        for o in range(O):
            acc = 0.0
            for t in range(T):
                acc += w[o, t] * x[r, idx[o, t]]
            y[r, o] = acc
    return y


def _along(x: np.ndarray, axis: int, fn) -> np.ndarray:
    """Apply ``fn`` on (rows, length) with ``axis`` as the length, keeping axis in place."""
    xt = np.moveaxis(x, axis, -1)
    shp = xt.shape
    y2 = fn(np.ascontiguousarray(xt).reshape(-1, shp[-1]))
    return np.moveaxis(y2.reshape(shp[:-1] + (y2.shape[-1],)), -1, axis)


def resize_nd(
    X: np.ndarray,
    out_shape: tuple,
    scales: list,
    roi: np.ndarray | None,
    mode: str,
    coord: str,
    nearest_mode: str,
    cubic_a: float,
    exclude_outside: bool,
    extrapolation_value: float,
    antialias: bool,
) -> np.ndarray:
    """Resize X to ``out_shape`` with per-axis ``scales`` (used by the coordinate transform)."""
    if mode not in ("nearest", "linear", "cubic"):
        raise MDFError(f"Resize: mode should be nearest, linear or cubic, got '{mode}'")
    if coord not in COORD_MODES:
        raise MDFError(
            f"Resize: coordinate_transformation_mode should be one of "
            f"{', '.join(COORD_MODES)}, got '{coord}'"
        )
    if nearest_mode not in NEAREST_MODES:
        raise MDFError(
            f"Resize: nearest_mode should be one of {', '.join(NEAREST_MODES[:4])}, "
            f"got '{nearest_mode}'"
        )
    nd = X.ndim
    y = X if mode == "nearest" else X.astype(np.float64)
    masks = []
    for ax in range(nd):
        n_in, n_out = X.shape[ax], out_shape[ax]
        start, end = (0.0, 1.0) if roi is None else (float(roi[ax]), float(roi[nd + ax]))
        if n_in == n_out and scales[ax] == 1.0 and coord != "tf_crop_and_resize":
            continue
        if n_in == 0 or n_out == 0:
            raise MDFError(f"Resize: axis {ax} would go from {n_in} to {n_out} cells")
        idx, w, outside = _axis_table(
            n_in,
            n_out,
            float(scales[ax]),
            start,
            end,
            mode,
            coord,
            nearest_mode,
            float(cubic_a),
            bool(exclude_outside),
            bool(antialias),
        )
        if mode == "nearest":
            y = np.take(y, idx[:, 0], axis=ax)
        else:
            y = _along(y, ax, lambda a, i=idx, ww=w: _apply_table(a, i, ww))
        if outside.any():
            shape = [1] * nd
            shape[ax] = n_out
            masks.append(outside.reshape(shape))
    if masks:
        y = np.array(y, copy=True)
        any_out = np.zeros(out_shape, bool)
        for m in masks:
            any_out |= m
        y[any_out] = extrapolation_value
    if y.dtype != X.dtype:
        y = np.rint(y) if X.dtype.kind in "iu" else y
        y = y.astype(X.dtype)
    return np.ascontiguousarray(y)


def _maybe(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    a = np.asarray(v)
    return None if a.size == 0 else a.reshape(-1)


def _resize(
    X,
    roi,
    scales,
    sizes,
    *,
    coordinate_transformation_mode="half_pixel",
    cubic_coeff_a=-0.75,
    exclude_outside=0,
    extrapolation_value=0.0,
    mode="nearest",
    nearest_mode="round_prefer_floor",
    antialias=0,
    axes=None,
    keep_aspect_ratio_policy="stretch",
) -> np.ndarray:
    X = as_array(X)
    nd = X.ndim
    ax = (
        list(range(nd))
        if axes is None or len(axes) == 0
        else [int(a) + nd if int(a) < 0 else int(a) for a in axes]
    )
    if sorted(set(ax)) != sorted(ax) or any(a < 0 or a >= nd for a in ax):
        raise MDFError(f"Resize: axes {axes} should be distinct axes of a {nd}-D input")
    scales, sizes, roi = _maybe(scales), _maybe(sizes), _maybe(roi)
    if (scales is None) == (sizes is None):
        raise MDFError("Resize: give exactly one of 'scales' and 'sizes'")
    full_scales = [1.0] * nd
    out = list(X.shape)
    if scales is not None:
        if scales.size != len(ax):
            raise MDFError(f"Resize: scales should have {len(ax)} values, got {scales.size}")
        for a, s in zip(ax, scales.astype(np.float64)):
            if not 0 < s < math.inf:
                raise MDFError(f"Resize: scales should be positive and finite, got {s}")
            full_scales[a] = float(s)
    else:
        if sizes.size != len(ax):
            raise MDFError(f"Resize: sizes should have {len(ax)} values, got {sizes.size}")
        sizes = sizes.astype(np.int64)
        policy = keep_aspect_ratio_policy
        if policy not in ("stretch", "not_larger", "not_smaller"):
            raise MDFError(
                "Resize: keep_aspect_ratio_policy should be stretch, not_larger or "
                f"not_smaller, got '{policy}'"
            )
        ratios = [sizes[i] / X.shape[a] for i, a in enumerate(ax)]
        if policy == "stretch":
            for i, a in enumerate(ax):
                out[a] = int(sizes[i])
                full_scales[a] = ratios[i]
        else:
            s = min(ratios) if policy == "not_larger" else max(ratios)
            for a in ax:
                out[a] = int(math.floor(s * X.shape[a] + 0.5))
                full_scales[a] = s
    full_roi = None
    if roi is not None and coordinate_transformation_mode == "tf_crop_and_resize":
        if roi.size != 2 * len(ax):
            raise MDFError(f"Resize: roi should have {2 * len(ax)} values, got {roi.size}")
        full_roi = np.array([0.0] * nd + [1.0] * nd)
        for i, a in enumerate(ax):
            full_roi[a] = roi[i]
            full_roi[nd + a] = roi[len(ax) + i]
    if scales is not None:
        for a in ax:
            span = 1.0
            if full_roi is not None:
                span = full_roi[nd + a] - full_roi[a]
            size = X.shape[a] * span * full_scales[a]
            if not math.isfinite(size):
                raise MDFError(f"Resize: the output size of axis {a} is {size}")
            out[a] = int(math.floor(size))
    # before any table or the result is allocated (an axis alone, when another one is empty)
    check_elements(out, "Resize's result")
    check_elements(max(out, default=0), "Resize's result along one axis")
    if max(out, default=0) > MAX_AXIS_CELLS:  # (its table is built in Python, cell by cell)
        raise MDFError(f"Resize: an axis of {max(out)} cells; the limit is {MAX_AXIS_CELLS}")
    return resize_nd(
        X,
        tuple(out),
        full_scales,
        full_roi,
        mode,
        coordinate_transformation_mode,
        nearest_mode,
        cubic_coeff_a,
        exclude_outside,
        extrapolation_value,
        antialias,
    )


RESIZE_ATTRS = {
    "coordinate_transformation_mode": "half_pixel",
    "cubic_coeff_a": -0.75,
    "exclude_outside": 0,
    "extrapolation_value": 0.0,
    "mode": "nearest",
    "nearest_mode": "round_prefer_floor",
}


def _legacy_mode(mode: str, op: str) -> str:
    m = {"nearest": "nearest", "linear": "linear", "bilinear": "linear"}.get(str(mode))
    if m is None:
        raise MDFError(f"{op}: mode should be 'nearest' or 'linear', got '{mode}'")
    return m


@onnx_op(
    "Resize",
    inputs=("X", "scales"),
    attributes={"mode": "nearest"},
    since=10,
    jit=resize10_like_jit,
    jit_like=True,
)
def resize_10(X: Any, scales: Any, *, mode="nearest") -> tuple[np.ndarray]:
    """Resize by ``scales`` (opset 10): asymmetric coordinates, nearest or (multi)linear."""
    return (
        _resize(
            X,
            None,
            scales,
            None,
            coordinate_transformation_mode="asymmetric",
            mode=_legacy_mode(mode, "Resize"),
            nearest_mode="simple",
        ),
    )


@onnx_op(
    "Resize",
    inputs=("X", "roi", "scales", "sizes"),
    optional=("roi", "scales", "sizes"),
    attributes=RESIZE_ATTRS,
    since=11,
    jit=resize11_like_jit,
    jit_like=True,
)
def resize_11(
    X: Any, roi: Any = None, scales: Any = None, sizes: Any = None, **attrs: Any
) -> tuple[np.ndarray]:
    """Resize by ``scales`` or to ``sizes``: nearest / linear / cubic with every coordinate
    transformation mode, ``nearest_mode``, ``exclude_outside`` and ``cubic_coeff_a``."""
    return (_resize(X, roi, scales, sizes, **attrs),)


@onnx_op(
    "Resize",
    inputs=("X", "roi", "scales", "sizes"),
    optional=("roi", "scales", "sizes"),
    attributes={
        **RESIZE_ATTRS,
        "antialias": 0,
        "axes": None,
        "keep_aspect_ratio_policy": "stretch",
    },
    since=18,
    jit=resize18_like_jit,
    jit_like=True,
)
def resize_18(
    X: Any, roi: Any = None, scales: Any = None, sizes: Any = None, **attrs: Any
) -> tuple[np.ndarray]:
    """Resize (opset 18+): adds ``antialias``, ``axes`` and ``keep_aspect_ratio_policy``."""
    return (_resize(X, roi, scales, sizes, **attrs),)


@onnx_op(
    "Upsample",
    inputs=("X",),
    attributes={"mode": "nearest", "scales": REQUIRED},
    since=7,
    jit=upsample7_like_jit,
    jit_like=True,
)
def upsample_7(X: Any, *, mode="nearest", scales=None) -> tuple[np.ndarray]:
    """Upsample by the ``scales`` attribute (each >= 1): nearest or linear, asymmetric."""
    return upsample_9(X, scales, mode=mode)


@onnx_op(
    "Upsample",
    inputs=("X", "scales"),
    attributes={"mode": "nearest"},
    since=9,
    jit=upsample_like_jit,
    jit_like=True,
)
def upsample_9(X: Any, scales: Any, *, mode="nearest") -> tuple[np.ndarray]:
    """Upsample by ``scales`` (each >= 1): nearest or linear, asymmetric coordinates."""
    s = np.asarray(scales, np.float64).reshape(-1)
    if np.any(s < 1):
        raise MDFError(f"Upsample: scales should all be >= 1, got {s.tolist()}")
    return (
        _resize(
            X,
            None,
            s,
            None,
            coordinate_transformation_mode="asymmetric",
            mode=_legacy_mode(mode, "Upsample"),
            nearest_mode="simple",
        ),
    )
