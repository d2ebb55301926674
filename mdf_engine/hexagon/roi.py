"""Hexagon region ops: QuantizedRoiAlignV2_8, QuantizedRoiPool_8_v2, HeatmapMaxKP_f and
QuantizedHeatmapMaxKP_8.

* RoiAlignV2 (NNAPI ROI_ALIGN = onnx RoiAlign, mode avg, ``output_half_pixel``): RoIs
  ``[1,1,R,4]`` (x1,y1,x2,y2) fixed-scale quint16 (step 0.125) in image coordinates, scaled by the
  spatial scales; each RoI is at least 1x1; bin (i, j) averages ``sampling_h x sampling_w``
  bilinear samples at ``start + (i + (k + 0.5) / s) * bin`` (a ratio of 0 means
  ``ceil(roi size / pooled size)``); samples beyond one pixel outside the map count 0. The
  output ``[R, ph, pw, d]`` is quantized to the given output range (adjusted for an exact zero).
* RoiPool_v2 (Caffe RoIPool = onnx MaxRoiPool): RoI coordinates ``q * scale + offset`` (input
  10), corners rounded after the spatial scale, size at least 1; bin
  ``[floor(i * h / ph), ceil((i + 1) * h / ph))`` clipped to the map; max of the codes, the zero
  code for an empty bin; input range copied.
* HeatmapMaxKP (NNAPI HEATMAP_MAX_KEYPOINT): per RoI and heatmap the maximum, refined by a
  quadratic (Taylor) fit of its 3x3 neighbourhood (mirrored at the border): ``delta = -H^-1 g``,
  dropped (0) when H is singular or a component exceeds 1.5; peak ``v + g.delta / 2``; position
  ``lo + (index + delta + 0.5) * (hi - lo) / size`` in the RoI rectangle (xlo, ylo, xhi, yhi).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    adjust_range,
    as4d,
    dequantize_u8,
    fixed_box_codes,
    fixed_box_real,
    fval,
    ival,
    quantize_u8,
    scalar,
    zero_code,
)


def _taps(c: np.ndarray, n: int):
    """Bilinear taps along one axis of size n at coordinates c (onnx RoiAlign rules): lower and
    upper index, their weights, and whether the sample is within one pixel of the map."""
    valid = (c >= -1.0) & (c <= n)
    c = np.maximum(c, 0.0)
    lo = np.floor(c).astype(np.int64)
    top = lo >= n - 1
    lo = np.where(top, n - 1, lo)
    hi = np.where(top, n - 1, lo + 1)
    frac = np.where(top, 0.0, c - lo)
    return lo, hi, 1.0 - frac, frac, valid


def roi_align(
    feat: np.ndarray,
    rois: np.ndarray,
    batch: np.ndarray,
    ph: int,
    pw: int,
    scale_h: float,
    scale_w: float,
    ratio_h: int,
    ratio_w: int,
) -> np.ndarray:
    """Float RoiAlign (module doc): feat [b,h,w,d], rois [R,4] -> [R, ph, pw, d]. Bilinear
    weights factor into a y and an x part, so each RoI's samples form one grid."""
    _, h, w, d = feat.shape
    out = np.zeros((len(rois), ph, pw, d))
    for r, (x1, y1, x2, y2) in enumerate(rois):
        img = feat[int(batch[r])]
        rw, rh = max((x2 - x1) * scale_w, 1.0), max((y2 - y1) * scale_h, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio_h if ratio_h > 0 else math.ceil(rh / ph)
        gw = ratio_w if ratio_w > 0 else math.ceil(rw / pw)
        ys = y1 * scale_h + (np.arange(ph)[:, None] + (np.arange(gh)[None] + 0.5) / gh) * bh
        xs = x1 * scale_w + (np.arange(pw)[:, None] + (np.arange(gw)[None] + 0.5) / gw) * bw
        y0, y1_, wy0, wy1, vy = _taps(ys.reshape(-1), h)
        x0, x1_, wx0, wx1, vx = _taps(xs.reshape(-1), w)
        wy0, wy1 = wy0 * vy, wy1 * vy
        wx0, wx1 = wx0 * vx, wx1 * vx
        samples = sum(
            wy[:, None, None] * wx[None, :, None] * img[np.ix_(yi, xi)]
            for yi, wy in ((y0, wy0), (y1_, wy1))
            for xi, wx in ((x0, wx0), (x1_, wx1))
        )
        out[r] = samples.reshape(ph, gh, pw, gw, d).mean(axis=(1, 3))
    return out


ROI_ALIGN_IN = (
    "input",
    "input_min",
    "input_max",
    "rois",
    "batch_index",
    "pooled_h",
    "pooled_w",
    "spatial_scale_h",
    "spatial_scale_w",
    "sampling_ratio_h",
    "sampling_ratio_w",
    "output_min",
    "output_max",
)


@hexop("QuantizedRoiAlignV2_8", ROI_ALIGN_IN)
def quantized_roi_align_v2_8(
    x, mn, mx, rois, batch, ph, pw, sch, scw, rh, rw, omin, omax, *, padding="NA"
):
    """RoiAlign of quint8 features (module doc), quantized to the output range."""
    f = dequantize_u8(as4d(x), fval(mn), fval(mx)).astype(np.float64)
    r = fixed_box_real(rois).reshape(-1, 4)
    bi = np.asarray(batch).reshape(-1).astype(np.int64)
    if bi.size != len(r) or (bi.size and (bi.min() < 0 or bi.max() >= f.shape[0])):
        raise MDFError(
            f"hexagon::QuantizedRoiAlignV2_8: batch index must give one image 0.."
            f"{f.shape[0] - 1} for each of the {len(r)} RoIs"
        )
    out = roi_align(
        f, r, bi, ival(ph), ival(pw), float(fval(sch)), float(fval(scw)), ival(rh), ival(rw)
    )
    lo, hi = adjust_range(fval(omin), fval(omax))
    return quantize_u8(out, lo, hi), scalar(lo), scalar(hi)


def roi_pool_max(
    feat: np.ndarray,
    rois: np.ndarray,
    batch: np.ndarray,
    ph: int,
    pw: int,
    scale_h: float,
    scale_w: float,
    empty,
) -> np.ndarray:
    """Caffe RoIPool max (module doc): feat [b,h,w,d] -> [R, ph, pw, d]."""
    _, h, w, d = feat.shape
    out = np.empty((len(rois), ph, pw, d), feat.dtype)
    for r, (x1, y1, x2, y2) in enumerate(rois):
        img = feat[int(batch[r])]
        sw, sh = round(x1 * scale_w), round(y1 * scale_h)
        ew, eh = round(x2 * scale_w), round(y2 * scale_h)
        rw, rh = max(ew - sw + 1, 1), max(eh - sh + 1, 1)
        for i in range(ph):
            h0 = min(max(math.floor(i * rh / ph) + sh, 0), h)
            h1 = min(max(math.ceil((i + 1) * rh / ph) + sh, 0), h)
            for j in range(pw):
                w0 = min(max(math.floor(j * rw / pw) + sw, 0), w)
                w1 = min(max(math.ceil((j + 1) * rw / pw) + sw, 0), w)
                if h1 <= h0 or w1 <= w0:
                    out[r, i, j] = empty
                else:
                    out[r, i, j] = img[h0:h1, w0:w1].reshape(-1, d).max(axis=0)
    return out


@hexop(
    "QuantizedRoiPool_8_v2",
    (
        "input",
        "rois",
        "batch_split",
        "output_h",
        "output_w",
        "scale_h",
        "scale_w",
        "layout",
        "input_min",
        "input_max",
        "roi_scale_offset",
    ),
)
def quantized_roi_pool_8_v2(
    x, rois, batch, oh, ow, sch, scw, layout, mn, mx, roi_so, *, padding="NA"
):
    """RoI max pooling of quint8 codes (module doc); range copied; layout unused."""
    q = as4d(x)
    so = np.asarray(roi_so, np.float64).reshape(-1)
    if so.size != 2:
        raise MDFError("hexagon::QuantizedRoiPool_8_v2: roi scale/offset is [1,1,1,2]")
    r = np.asarray(rois).astype(np.float64).reshape(-1, 4) * so[0] + so[1]
    bi = np.asarray(batch).reshape(-1).astype(np.int64)
    if bi.size != len(r) or (bi.size and (bi.min() < 0 or bi.max() >= q.shape[0])):
        raise MDFError(
            f"hexagon::QuantizedRoiPool_8_v2: batch split must give one image 0.."
            f"{q.shape[0] - 1} for each of the {len(r)} RoIs"
        )
    out = roi_pool_max(
        q,
        r,
        bi,
        int(fval(oh)),
        int(fval(ow)),
        float(fval(sch)),
        float(fval(scw)),
        zero_code(fval(mn), fval(mx)),
    )
    return out.astype(np.uint8), scalar(fval(mn)), scalar(fval(mx))


def heatmap_max_kp(hm: np.ndarray, rects: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Peaks [R, K] and positions [R, K, 2] of heatmaps hm [R, H, W, K] (module doc)."""
    nr, h, w, nk = hm.shape
    if h < 2 or w < 2:
        raise MDFError(f"HeatmapMaxKP needs heatmaps of at least 2x2, got {h}x{w}")
    peaks = np.zeros((nr, nk))
    xy = np.zeros((nr, nk, 2))

    def mirror(i, n):
        return 1 if i < 0 else (n - 2 if i >= n else i)

    for r in range(nr):
        xlo, ylo, xhi, yhi = rects[r]
        for k in range(nk):
            m = hm[r, :, :, k]
            iy, ix = divmod(int(np.argmax(m)), w)
            p = np.array(
                [[m[mirror(iy + a, h), mirror(ix + b, w)] for b in (-1, 0, 1)] for a in (-1, 0, 1)]
            )
            g = np.array([(p[1, 2] - p[1, 0]) / 2, (p[2, 1] - p[0, 1]) / 2])
            dxx = p[1, 2] - 2 * p[1, 1] + p[1, 0]
            dyy = p[2, 1] - 2 * p[1, 1] + p[0, 1]
            dxy = (p[2, 2] - p[2, 0] - p[0, 2] + p[0, 0]) / 4
            det = dxx * dyy - dxy * dxy
            delta = np.zeros(2)
            if det != 0:
                delta = -np.array([dyy * g[0] - dxy * g[1], dxx * g[1] - dxy * g[0]]) / det
                if np.any(np.abs(delta) > 1.5):
                    delta = np.zeros(2)
            peaks[r, k] = p[1, 1] + 0.5 * float(g @ delta)
            xy[r, k, 0] = xlo + (ix + delta[0] + 0.5) * (xhi - xlo) / w
            xy[r, k, 1] = ylo + (iy + delta[1] + 0.5) * (yhi - ylo) / h
    return peaks, xy


def _heatmaps(x, rects, nchw, op):
    a = as4d(x)
    if ival(nchw):
        a = a.transpose(0, 2, 3, 1)
    rc = np.asarray(rects, np.float64)
    r = rc.reshape(-1, 4)
    if len(r) != a.shape[0]:
        raise MDFError(f"hexagon::{op}: {len(r)} rectangles for {a.shape[0]} heatmap batches")
    return a, r, rc.shape[0] != 1


def _kp_shapes(peaks, xy, batch_first):
    nr, nk = peaks.shape
    if batch_first:
        return peaks.reshape(nr, 1, 1, nk), xy.reshape(nr, 1, nk, 2)
    return peaks.reshape(1, 1, nr, nk), xy.reshape(1, nr, nk, 2)


@hexop("HeatmapMaxKP_f", ("heatmaps", "rects", "is_nchw"), outputs=("peaks", "xy"))
def heatmap_max_kp_f(x, rects, nchw, *, padding="NA"):
    """Keypoint peaks [1,1,B,K] and positions [1,B,K,2] (module doc); rectangles [1,1,B,4]
    (or [B,1,1,4], giving [B,1,1,K] and [B,1,K,2])."""
    a, r, bf = _heatmaps(x, rects, nchw, "HeatmapMaxKP_f")
    peaks, xy = heatmap_max_kp(a.astype(np.float64), r)
    p, q = _kp_shapes(peaks, xy, bf)
    return p.astype(F32), q.astype(F32)


@hexop(
    "QuantizedHeatmapMaxKP_8",
    ("input", "input_min", "input_max", "rects", "is_nchw"),
    outputs=("peaks", "peaks_min", "peaks_max", "xy"),
)
def quantized_heatmap_max_kp_8(x, mn, mx, rects, nchw, *, padding="NA"):
    """HeatmapMaxKP on quint8 heatmaps and fixed-scale quint16 rectangles (step 0.125); peaks
    quint8 on the input range widened to hold them, positions quint16 on the same fixed scale."""
    f = dequantize_u8(as4d(x), fval(mn), fval(mx)).astype(np.float64)
    a, r, bf = _heatmaps(
        f, fixed_box_real(rects).reshape(np.shape(rects)), nchw, "QuantizedHeatmapMaxKP_8"
    )
    peaks, xy = heatmap_max_kp(a, r)
    lo, hi = adjust_range(min(fval(mn), F32(peaks.min())), max(fval(mx), F32(peaks.max())))
    p, q = _kp_shapes(peaks, xy, bf)
    return quantize_u8(p, lo, hi), scalar(lo), scalar(hi), fixed_box_codes(q)
