"""Nopython twins (``jit=``) of ``onnx::`` Resize (opsets 10, 11 and 18) and Upsample (7, 9)
for the compiled backend: every mode (nearest, linear, cubic), coordinate transformation,
``nearest_mode``, ``exclude_outside``, ``antialias``, ``axes`` and ``keep_aspect_ratio_policy``
of the Python kernels (:mod:`.resize`), with ``scales``/``sizes``/``roi`` constants or values.

They take the Python kernels' steps: per resized axis an index/weight table built with the
same float64 arithmetic (:func:`axis_table`, a port of ``resize._axis_table``), applied along
that axis (a gather for nearest, which keeps the dtype; sums ``w * x`` in tap order in float64
otherwise, rounded back for integer data), cells outside a ``tf_crop_and_resize`` box set last.
So their results equal the Python kernels' bit for bit. They follow the ``jit_like`` convention
(:mod:`._shape_jit`): the last argument is an array of the result's warm-up shape.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._recurrent_jit import _floats
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, prod

_MESSAGE = "Resize: " + SHAPE_CHANGED


@numba.njit(cache=True)
def _coord(o, mode, scale, n_in, n_out, start, end):
    """The input coordinate that output cell ``o`` samples (ONNX coordinate transformation).

    As in ONNX, the resized length in these formulas is ``scale * n_in`` (a real number, not
    the integer output size), except in half_pixel_symmetric's adjustment and in
    tf_crop_and_resize. The Python kernel runs it as plain Python (resize.py)."""
    length = scale * n_in
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjust = n_out / (scale * n_in)
        offset = n_in / 2.0 * (1.0 - adjust)
        return offset + (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if length > 1 else 0.0
    if mode == "align_corners":
        return 0.0 if length == 1 else o * (n_in - 1) / (length - 1)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_half_pixel_for_nn":
        return (o + 0.5) / scale
    if mode == "tf_crop_and_resize":
        if n_out > 1:
            return start * (n_in - 1) + o * (end - start) * (n_in - 1) / (n_out - 1)
        return 0.5 * (start + end) * (n_in - 1)
    raise ValueError("Resize: unknown coordinate_transformation_mode")


@numba.njit(cache=True)
def _nearest(x, mode, scale):
    if mode == "round_prefer_floor":
        return math.ceil(x - 0.5)
    if mode == "round_prefer_ceil":
        return math.floor(x + 0.5)
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    if mode == "simple":
        return math.ceil(x) if scale < 1 else math.floor(x)
    raise ValueError("Resize: unknown nearest_mode")


@numba.njit(cache=True)
def _cubic(t, a):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


@numba.njit(cache=True)
def axis_table(n_in, n_out, scale, start, end, mode, coord, nmode, cubic_a, exclude, antialias):
    """``(idx (O, T) int64, w (O, T) float64, outside (O,) bool)`` for one axis, as
    ``resize._axis_table`` computes them."""
    outside = np.zeros(n_out, np.bool_)
    shrink = scale if (antialias and scale < 1 and mode != "nearest") else 1.0
    if mode == "nearest":
        first = 0
    elif mode == "linear":
        first = math.floor(-1.0 / shrink) + 1
    else:
        first = math.floor(-2.0 / shrink) + 1
    T = 1 if mode == "nearest" else 2 - 2 * first
    idx = np.zeros((n_out, T), np.int64)
    w = np.zeros((n_out, T), np.float64)
    for o in range(n_out):
        x = _coord(o, coord, scale, n_in, n_out, start, end)
        if coord == "tf_crop_and_resize" and (x < 0 or x > n_in - 1):
            outside[o] = True
        if mode == "nearest":
            idx[o, 0] = min(max(_nearest(x, nmode, scale), 0), n_in - 1)
            w[o, 0] = 1.0
            continue
        base = math.floor(x)
        r = x - base
        total = 0.0
        for k in range(T):
            i = first + k
            if mode == "linear":
                v = max(0.0, 1.0 - abs((i - r) * shrink))
            else:
                v = _cubic((i - r) * shrink, cubic_a)
            tap = base + i
            if exclude and not 0 <= tap < n_in:
                v = 0.0
            w[o, k] = v
            total += v
            idx[o, k] = min(max(tap, 0), n_in - 1)
        if (shrink != 1.0 or exclude) and total != 0:
            for k in range(T):
                w[o, k] = w[o, k] / total
    return idx, w, outside


@numba.njit(cache=True)
def _gather(y, cur, ax, idx):
    """``y`` (C order, shape ``cur``) taking ``idx[:, 0]`` along ``ax``."""
    outer, n, inner = prod(cur[:ax]), cur[ax], prod(cur[ax + 1 :])
    O = idx.shape[0]
    out = np.empty(outer * O * inner, y.dtype)
    for o in range(outer):
        for j in range(O):
            s = (o * n + idx[j, 0]) * inner
            d = (o * O + j) * inner
            for i in range(inner):
                out[d + i] = y[s + i]
    return out


@numba.njit(cache=True)
def _weigh(y, cur, ax, idx, w):
    """``out[o, j, i] = sum_t w[j, t] * y[o, idx[j, t], i]`` summed in float64 in tap order
    (``y`` is float64 here; its dtype is kept so the nearest path types alike)."""
    outer, n, inner = prod(cur[:ax]), cur[ax], prod(cur[ax + 1 :])
    O, T = idx.shape
    out = np.empty(outer * O * inner, y.dtype)
    for o in range(outer):
        for j in range(O):
            d = (o * O + j) * inner
            for i in range(inner):
                acc = 0.0
                for t in range(T):
                    acc += w[j, t] * y[(o * n + idx[j, t]) * inner + i]
                out[d + i] = acc
    return out


@numba.njit(cache=True)
def _resized(
    y,
    dims,
    out,
    scales,
    roi,
    has_roi,
    mode,
    coord,
    nmode,
    cubic_a,
    exclude,
    extrap,
    antialias,
    nearest,
):
    """``y`` resized from ``dims`` to ``out`` axis by axis (``resize.resize_nd``)."""
    nd = len(dims)
    cur = dims.copy()
    longest = 1
    for a in range(nd):
        longest = max(longest, out[a])
    tables = np.zeros((nd, longest), np.bool_)
    flagged = np.zeros(nd, np.bool_)
    for ax in range(nd):
        n_in, n_out = dims[ax], out[ax]
        start, end = (roi[ax], roi[nd + ax]) if has_roi else (0.0, 1.0)
        if n_in == n_out and scales[ax] == 1.0 and coord != "tf_crop_and_resize":
            continue
        if n_in == 0 or n_out == 0:
            raise ValueError("Resize: an axis would have no cells")
        idx, w, outside = axis_table(
            n_in, n_out, scales[ax], start, end, mode, coord, nmode, cubic_a, exclude, antialias
        )
        y = _gather(y, cur, ax, idx) if nearest else _weigh(y, cur, ax, idx, w)
        cur[ax] = n_out
        if outside.any():
            flagged[ax] = True
            tables[ax, :n_out] = outside
    if flagged.any():
        stride = 1
        strides = np.empty(nd, np.int64)
        for ax in range(nd - 1, -1, -1):
            strides[ax] = stride
            stride *= out[ax]
        for k in range(y.size):
            for ax in range(nd):
                if flagged[ax] and tables[ax, (k // strides[ax]) % out[ax]]:
                    y[k] = extrap
                    break
    return y


@numba.njit(cache=True)
def resize_like(
    X,
    roi,
    scales,
    sizes,
    coord,
    cubic_a,
    exclude,
    extrap,
    mode,
    nmode,
    antialias,
    axes,
    policy,
    like,
):
    """Resize as ``resize._resize`` (``roi``/``scales``/``sizes``: None, or arrays)."""
    if mode != "nearest" and mode != "linear" and mode != "cubic":
        raise ValueError("Resize: mode should be nearest, linear or cubic")
    src, dims = _flat(X), _dims(X)
    nd = len(dims)
    ax = _ints(axes)
    if len(ax) == 0:
        ax = np.arange(nd)
    seen = np.zeros(nd, np.bool_)
    for k in range(len(ax)):
        a = ax[k] + nd if ax[k] < 0 else ax[k]
        if a < 0 or a >= nd or seen[a]:
            raise ValueError("Resize: axes should be distinct axes of the input")
        seen[a] = True
        ax[k] = a
    sc = _floats(scales)
    sz = _ints(sizes)
    if (len(sc) == 0) == (len(sz) == 0):
        raise ValueError("Resize: give exactly one of 'scales' and 'sizes'")
    full = np.ones(nd)
    out = dims.copy()
    if len(sc):
        if len(sc) != len(ax):
            raise ValueError("Resize: scales should have one value per axis")
        for k in range(len(ax)):
            if not 0 < sc[k] < math.inf:
                raise ValueError("Resize: scales should be positive and finite")
            full[ax[k]] = sc[k]
    else:
        if len(sz) != len(ax):
            raise ValueError("Resize: sizes should have one value per axis")
        if policy == "stretch":
            for k in range(len(ax)):
                out[ax[k]] = sz[k]
                full[ax[k]] = sz[k] / dims[ax[k]]
        elif policy == "not_larger" or policy == "not_smaller":
            s = sz[0] / dims[ax[0]]
            for k in range(1, len(ax)):
                r = sz[k] / dims[ax[k]]
                s = min(s, r) if policy == "not_larger" else max(s, r)
            for k in range(len(ax)):
                out[ax[k]] = int(math.floor(s * dims[ax[k]] + 0.5))
                full[ax[k]] = s
        else:
            raise ValueError("Resize: keep_aspect_ratio_policy should be stretch, ...")
    rf = _floats(roi)
    has_roi = len(rf) > 0 and coord == "tf_crop_and_resize"
    full_roi = np.concatenate((np.zeros(nd), np.ones(nd)))
    if has_roi:
        if len(rf) != 2 * len(ax):
            raise ValueError("Resize: roi should have two values per axis")
        for k in range(len(ax)):
            full_roi[ax[k]] = rf[k]
            full_roi[nd + ax[k]] = rf[len(ax) + k]
    if len(sc):
        for a in ax:
            span = full_roi[nd + a] - full_roi[a] if has_roi else 1.0
            size = dims[a] * span * full[a]
            if not math.isfinite(size):
                raise ValueError("Resize: an output size is not finite")
            out[a] = int(math.floor(size))
    check_like(out, like, _MESSAGE)
    a, ex, aa = float(cubic_a), exclude != 0, antialias != 0
    if mode == "nearest":
        y = _resized(
            src.copy(),
            dims,
            out,
            full,
            full_roi,
            has_roi,
            mode,
            coord,
            nmode,
            a,
            ex,
            extrap,
            aa,
            True,
        )
        return _shaped(y, like)
    y = _resized(
        src.astype(np.float64),
        dims,
        out,
        full,
        full_roi,
        has_roi,
        mode,
        coord,
        nmode,
        a,
        ex,
        float(extrap),
        aa,
        False,
    )
    return _shaped(_cast_back(y, src), like)


def _cast_back(y, src):  # pragma: no cover - replaced by the overload in jitted code
    """float64 ``y`` in ``src``'s dtype (integers rounded to nearest even first)."""


@overload(_cast_back)
def _cast_back_ov(y, src):
    if isinstance(src.dtype, (types.Float, types.Boolean)):
        return lambda y, src: y.astype(src.dtype)
    return lambda y, src: np.rint(y).astype(src.dtype)


@numba.njit(cache=True)
def resize11_like_jit(X, roi, scales, sizes, coord, cubic_a, exclude, extrap, mode, nmode, like):
    """nopython Resize (opsets 11-17)."""
    return resize_like(
        X,
        roi,
        scales,
        sizes,
        coord,
        cubic_a,
        exclude,
        extrap,
        mode,
        nmode,
        0,
        None,
        "stretch",
        like,
    )


@numba.njit(cache=True)
def resize18_like_jit(
    X,
    roi,
    scales,
    sizes,
    coord,
    cubic_a,
    exclude,
    extrap,
    mode,
    nmode,
    antialias,
    axes,
    policy,
    like,
):
    """nopython Resize (opset 18+)."""
    return resize_like(
        X,
        roi,
        scales,
        sizes,
        coord,
        cubic_a,
        exclude,
        extrap,
        mode,
        nmode,
        antialias,
        axes,
        policy,
        like,
    )


@numba.njit(cache=True)
def _legacy(X, scales, mode, like):
    m = "linear" if mode == "linear" or mode == "bilinear" else mode
    if m != "nearest" and m != "linear":
        raise ValueError("Resize: mode should be 'nearest' or 'linear'")
    return resize_like(
        X, None, scales, None, "asymmetric", -0.75, 0, 0.0, m, "simple", 0, None, "stretch", like
    )


@numba.njit(cache=True)
def resize10_like_jit(X, scales, mode, like):
    """nopython Resize (opset 10: asymmetric coordinates, nearest or linear)."""
    return _legacy(X, scales, mode, like)


@numba.njit(cache=True)
def upsample_like_jit(X, scales, mode, like):
    """nopython Upsample (opset 9; opset 7 takes ``scales`` as an attribute, in this order)."""
    s = _floats(scales)
    for v in s:
        if v < 1:
            raise ValueError("Upsample: scales should all be >= 1")
    return _legacy(X, s, mode, like)


@numba.njit(cache=True)
def upsample7_like_jit(X, mode, scales, like):
    """nopython Upsample (opset 7)."""
    return upsample_like_jit(X, scales, mode, like)
