"""``onnx::`` MaxRoiPool and RoiAlign: pooling over regions of interest given as boxes
(``rois``), MaxRoiPool by max over a grid of rounded cells, RoiAlign by bilinear samples averaged
or maxed per cell (``coordinate_transformation_mode`` from opset 16)."""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import as_array, onnx_op
from ._pool_common import float_in
from ._spatial import ints


@numba.njit(cache=True)
def _round_away(v):
    """Round half away from zero (C ``round``), as ROI pooling does."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


@numba.njit(cache=True)
def _max_roi_pool(x, rois, ph_n, pw_n, scale):
    N, C, H, W = x.shape
    R = rois.shape[0]
    y = np.zeros((R, C, ph_n, pw_n), dtype=x.dtype)
    for r in range(R):
        b = int(rois[r, 0])
        sw = _round_away(rois[r, 1] * scale)
        sh = _round_away(rois[r, 2] * scale)
        ew = _round_away(rois[r, 3] * scale)
        eh = _round_away(rois[r, 4] * scale)
        rh = max(eh - sh + 1, 1)
        rw = max(ew - sw + 1, 1)
        bh = rh / ph_n
        bw = rw / pw_n
        for ph in range(ph_n):
            hs = min(max(int(math.floor(ph * bh)) + sh, 0), H)
            he = min(max(int(math.ceil((ph + 1) * bh)) + sh, 0), H)
            for pw in range(pw_n):
                ws = min(max(int(math.floor(pw * bw)) + sw, 0), W)
                we = min(max(int(math.ceil((pw + 1) * bw)) + sw, 0), W)
                if he <= hs or we <= ws:
                    continue
                for c in range(C):
                    m = x[b, c, hs, ws]
                    for i in range(hs, he):
                        for j in range(ws, we):
                            if x[b, c, i, j] > m:
                                m = x[b, c, i, j]
                    y[r, c, ph, pw] = m
    return y


@onnx_op(
    "MaxRoiPool",
    inputs=("X", "rois"),
    since=1,
    attributes={"pooled_shape": REQUIRED, "spatial_scale": 1.0},
)
def max_roi_pool(X: Any, rois: Any, *, pooled_shape=None, spatial_scale=1.0) -> tuple[np.ndarray]:
    """Max over each bin of each region (rois rows: batch index, x1, y1, x2, y2)."""
    X = float_in(as_array(X))
    rois = np.ascontiguousarray(rois, dtype=np.float64)
    if X.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
        raise MDFError(
            f"MaxRoiPool: expected X (N, C, H, W) and rois (R, 5), got {X.shape} and {rois.shape}"
        )
    ph, pw = ints(pooled_shape, 2, 1, "pooled_shape", "MaxRoiPool")
    if rois.size and (rois[:, 0].min() < 0 or rois[:, 0].max() >= X.shape[0]):
        raise MDFError("MaxRoiPool: a batch index in rois is outside X")
    return (_max_roi_pool(X, rois, ph, pw, float(spatial_scale)),)


@numba.njit(cache=True)
def _roi_align(x, rois, bidx, oh, ow, sr, scale, offset, clamp_one, use_max):
    N, C, H, W = x.shape
    R = rois.shape[0]
    y = np.zeros((R, C, oh, ow), dtype=np.float64)
    for r in range(R):
        b = bidx[r]
        x0 = rois[r, 0] * scale - offset
        y0 = rois[r, 1] * scale - offset
        rw = rois[r, 2] * scale - offset - x0
        rh = rois[r, 3] * scale - offset - y0
        if clamp_one:
            rw = max(rw, 1.0)
            rh = max(rh, 1.0)
        bh = rh / oh
        bw = rw / ow
        gh = sr if sr > 0 else int(math.ceil(rh / oh))
        gw = sr if sr > 0 else int(math.ceil(rw / ow))
        cnt = max(gh * gw, 1)
        for ph in range(oh):
            for pw in range(ow):
                for c in range(C):
                    acc = 0.0
                    first = True
                    for iy in range(gh):
                        yy = y0 + ph * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = x0 + pw * bw + (ix + 0.5) * bw / gw
                            t1 = t2 = t3 = t4 = 0.0
                            if not (yy < -1.0 or yy > H or xx < -1.0 or xx > W):
                                yc = max(yy, 0.0)
                                xc = max(xx, 0.0)
                                yl = int(yc)
                                xl = int(xc)
                                if yl >= H - 1:
                                    yl = yh = H - 1
                                    yc = float(yl)
                                else:
                                    yh = yl + 1
                                if xl >= W - 1:
                                    xl = xh = W - 1
                                    xc = float(xl)
                                else:
                                    xh = xl + 1
                                ly = yc - yl
                                lx = xc - xl
                                hy = 1.0 - ly
                                hx = 1.0 - lx
                                t1 = hy * hx * x[b, c, yl, xl]
                                t2 = hy * lx * x[b, c, yl, xh]
                                t3 = ly * hx * x[b, c, yh, xl]
                                t4 = ly * lx * x[b, c, yh, xh]
                            if use_max:
                                m = max(max(t1, t2), max(t3, t4))
                                if first or m > acc:
                                    acc = m
                                first = False
                            else:
                                acc += t1 + t2 + t3 + t4
                    y[r, c, ph, pw] = acc if use_max else acc / cnt
    return y


def _roi_align_impl(
    X: Any,
    rois: Any,
    batch_indices: Any,
    half_pixel: bool,
    *,
    mode="avg",
    output_height=1,
    output_width=1,
    sampling_ratio=0,
    spatial_scale=1.0,
) -> tuple[np.ndarray]:
    """RoiAlign of every opset: the attributes of ``ROI_ATTRS`` as given, and whether sample
    points are offset by half a pixel (``half_pixel``)."""
    X = as_array(X)
    rois = np.ascontiguousarray(rois, dtype=np.float64)
    bidx = np.ascontiguousarray(batch_indices, dtype=np.int64).reshape(-1)
    if X.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or bidx.size != rois.shape[0]:
        raise MDFError(
            f"RoiAlign: expected X (N, C, H, W), rois (R, 4), batch_indices (R,), "
            f"got {X.shape}, {rois.shape}, {bidx.shape}"
        )
    if bidx.size and (bidx.min() < 0 or bidx.max() >= X.shape[0]):
        raise MDFError("RoiAlign: a batch index is outside X")
    if mode not in ("avg", "max"):
        raise MDFError(f"RoiAlign: mode should be 'avg' or 'max', got '{mode}'")
    y = _roi_align(
        np.ascontiguousarray(X, dtype=np.float64),
        rois,
        bidx,
        int(output_height),
        int(output_width),
        int(sampling_ratio),
        float(spatial_scale),
        0.5 if half_pixel else 0.0,
        not half_pixel,
        mode == "max",
    )
    return (y.astype(X.dtype),)


ROI_ATTRS = {
    "mode": "avg",
    "output_height": 1,
    "output_width": 1,
    "sampling_ratio": 0,
    "spatial_scale": 1.0,
}


@onnx_op("RoiAlign", inputs=("X", "rois", "batch_indices"), since=10, attributes=ROI_ATTRS)
def roi_align_10(X: Any, rois: Any, batch_indices: Any, **attrs: Any) -> tuple[np.ndarray]:
    """Bilinear-sampled average/max over each bin of each region (opset 10: no half-pixel
    offset, regions at least 1x1)."""
    return _roi_align_impl(X, rois, batch_indices, False, **attrs)


@onnx_op(
    "RoiAlign",
    inputs=("X", "rois", "batch_indices"),
    since=16,
    attributes={"coordinate_transformation_mode": "half_pixel", **ROI_ATTRS},
)
def roi_align_16(
    X: Any,
    rois: Any,
    batch_indices: Any,
    *,
    coordinate_transformation_mode="half_pixel",
    **attrs: Any,
) -> tuple[np.ndarray]:
    """RoiAlign with coordinate_transformation_mode half_pixel (default) or
    output_half_pixel (the opset-10 behaviour)."""
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise MDFError(
            "RoiAlign: coordinate_transformation_mode should be 'half_pixel' or "
            f"'output_half_pixel', got '{coordinate_transformation_mode}'"
        )
    half_pixel = coordinate_transformation_mode == "half_pixel"
    return _roi_align_impl(X, rois, batch_indices, half_pixel, **attrs)
