"""Box arithmetic of the Hexagon detection ops and the ops that only transform boxes:
Box_Decoder_f, AxisAlignedBBoxTransform_f / _q8q16 and Proposal_q8q16; plus the IoU and
non-maximum-suppression helpers that :mod:`.detection` shares.

Conventions (the op list gives the inputs only; the formulas are the usual ones of the
frameworks these ops come from, written out here):

* Box_Decoder_f (TF object-detection box coder): deltas ``[ty, tx, th, tw]``, anchors
  ``[ymin, xmin, ymax, xmax]``, scale factors ``[sy, sx, sh, sw]``; centre
  ``yc = ty / sy * ha + yca``, size ``h = exp(th / sh) * ha`` (same for x, w); output boxes
  ``[ymin, xmin, ymax, xmax]``, shape of the deltas.
* AxisAlignedBBoxTransform (Caffe2/NNAPI, no +1): boxes ``[x1, y1, x2, y2]`` ``[1,1,R,4]``, deltas
  ``[dx, dy, dw, dh]`` per class ``[1,1,R,4C]``, batch splits (boxes per image, ``[1,1,1,B]``),
  image info ``[1,1,B,2]`` = (height, width); ``cx' = cx + dx * w``, ``w' = w * exp(dw)``; results
  are clipped to ``[0, width] x [0, height]`` of the box's image.
* NMS: IoU without +1; a box is dropped when its IoU with a kept box is > the threshold;
  scores must be > the score threshold (onnx NonMaxSuppression rules).
* Fixed-scale quint16 boxes (hexagon-digest §1.3): ``real = q * 0.125``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    as4d,
    dequantize_u8,
    fixed_box_codes,
    fixed_box_real,
    fval,
    ival,
    quantize_u8,
    real_u16,
    scalar,
    to_u16,
)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of corner boxes a [n,4] against b [m,4] (either corner order), no +1."""

    def norm(x):
        x = np.asarray(x, np.float64).reshape(-1, 4)
        return (
            np.minimum(x[:, 0], x[:, 2]),
            np.minimum(x[:, 1], x[:, 3]),
            np.maximum(x[:, 0], x[:, 2]),
            np.maximum(x[:, 1], x[:, 3]),
        )

    ax1, ay1, ax2, ay2 = norm(a)
    bx1, by1, bx2, by2 = norm(b)
    iw = np.clip(np.minimum(ax2[:, None], bx2[None]) - np.maximum(ax1[:, None], bx1[None]), 0, None)
    ih = np.clip(np.minimum(ay2[:, None], by2[None]) - np.maximum(ay1[:, None], by1[None]), 0, None)
    inter = iw * ih
    union = ((ax2 - ax1) * (ay2 - ay1))[:, None] + ((bx2 - bx1) * (by2 - by1))[None] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    iou_thr: float,
    score_thr: float = -np.inf,
    limit: int = -1,
    eta: float = 1.0,
) -> list[int]:
    """Greedy hard NMS: indices kept, best score first (ties: lower index first). ``eta < 1``
    lowers the threshold by that factor after each kept box while it is > 0.5 (Caffe's
    adaptive NMS)."""
    idx = np.argsort(-np.asarray(scores), kind="stable")
    order = idx[np.asarray(scores)[idx] > score_thr]
    if order.size == 0:
        return []
    b = np.asarray(boxes, np.float64)[order]
    kept: list[int] = []
    thr = float(iou_thr)
    gone = np.zeros(order.size, bool)
    for k in range(order.size):
        if limit >= 0 and len(kept) >= limit:
            break
        if eta < 1.0:  # the threshold changes: test against the kept boxes now
            if kept and iou_matrix(b[k : k + 1], b[kept]).max() > thr:
                continue
        elif gone[k]:
            continue
        kept.append(k)
        if eta < 1.0:
            if thr > 0.5:
                thr *= eta
        else:
            gone |= iou_matrix(b[k : k + 1], b)[0] > thr
    return [int(order[k]) for k in kept]


def soft_nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    method: int,
    iou_thr: float,
    sigma: float,
    min_score: float,
) -> tuple[list[int], np.ndarray]:
    """Soft NMS: repeatedly keep the best remaining box and lower the others' scores by
    ``1 - iou`` where iou > iou_thr (method 1, linear) or ``exp(-iou**2 / sigma)`` (method 2,
    Gaussian); boxes whose score falls below ``min_score`` are dropped. Returns the kept
    indices in keeping order and the (lowered) scores."""
    s = np.asarray(scores, np.float64).copy()
    live = [i for i in range(len(s)) if s[i] >= min_score]
    keep: list[int] = []
    while live:
        best = max(live, key=lambda i: (s[i], -i))
        keep.append(best)
        live.remove(best)
        if not live:
            break
        ious = iou_matrix(boxes[best : best + 1], boxes[live])[0]
        for k, i in enumerate(live):
            if method == 1:
                if ious[k] > iou_thr:
                    s[i] *= 1.0 - ious[k]
            elif method == 2:
                s[i] *= np.exp(-(ious[k] ** 2) / sigma)
            else:
                raise MDFError(f"soft NMS method must be 1 (linear) or 2 (Gaussian), got {method}")
        live = [i for i in live if s[i] >= min_score]
    return keep, s


@hexop("Box_Decoder_f", ("deltas", "anchors", "scale_factors"), outputs=("output",))
def box_decoder_f(deltas, anchors, scales, *, padding="NA"):
    """Boxes [ymin,xmin,ymax,xmax] from deltas [ty,tx,th,tw] on anchors (module doc)."""
    d = as4d(deltas, np.float64)
    a = np.broadcast_to(as4d(anchors, np.float64), d.shape)
    s = np.asarray(scales, np.float64).reshape(-1)
    if d.shape[3] != 4 or s.size != 4:
        raise MDFError(
            "hexagon::Box_Decoder_f: deltas and anchors have depth 4 and there are 4 "
            f"scale factors, got {d.shape} and {s.size}"
        )
    ha, wa = a[..., 2] - a[..., 0], a[..., 3] - a[..., 1]
    yc, xc = a[..., 0] + ha / 2, a[..., 1] + wa / 2
    cy = d[..., 0] / s[0] * ha + yc
    cx = d[..., 1] / s[1] * wa + xc
    h = np.exp(d[..., 2] / s[2]) * ha
    w = np.exp(d[..., 3] / s[3]) * wa
    return (np.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=-1).astype(F32),)


def _image_of_box(splits: Any, n: int, op: str) -> np.ndarray:
    counts = [int(v) for v in np.asarray(splits).reshape(-1)]
    if sum(counts) != n or min(counts, default=0) < 0:
        raise MDFError(f"hexagon::{op}: batch splits {counts} must add up to the {n} boxes")
    return np.repeat(np.arange(len(counts)), counts)


def bbox_transform(
    boxes: np.ndarray, deltas: np.ndarray, image: np.ndarray, info: np.ndarray
) -> np.ndarray:
    """[R, 4C] refined boxes (module doc) from boxes [R,4], deltas [R,4C], image index [R],
    image info [B,2] = (height, width)."""
    r = boxes.shape[0]
    c = deltas.shape[1] // 4
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    cx, cy = boxes[:, 0] + w / 2, boxes[:, 1] + h / 2
    d = deltas.reshape(r, c, 4)
    ncx = cx[:, None] + d[..., 0] * w[:, None]
    ncy = cy[:, None] + d[..., 1] * h[:, None]
    nw = w[:, None] * np.exp(d[..., 2])
    nh = h[:, None] * np.exp(d[..., 3])
    hi_y = info[image, 0][:, None]
    hi_x = info[image, 1][:, None]
    out = np.stack(
        [
            np.clip(ncx - nw / 2, 0, hi_x),
            np.clip(ncy - nh / 2, 0, hi_y),
            np.clip(ncx + nw / 2, 0, hi_x),
            np.clip(ncy + nh / 2, 0, hi_y),
        ],
        axis=-1,
    )
    return out.reshape(r, 4 * c)


def _bbox_shapes(boxes, deltas, info, op):
    b = as4d(boxes, np.float64)
    d = as4d(deltas, np.float64)
    r = b.size // 4
    if b.shape[3] != 4 or d.size % (4 * max(r, 1)) or d.shape[3] % 4:
        raise MDFError(
            f"hexagon::{op}: boxes are [1,1,R,4] and deltas [1,1,R,4C], got {b.shape} and {d.shape}"
        )
    return b.reshape(r, 4), d.reshape(r, -1), np.asarray(info, np.float64).reshape(-1, 2)


@hexop(
    "AxisAlignedBBoxTransform_f",
    ("boxes", "deltas", "batch_splits", "image_info"),
    outputs=("output",),
)
def axis_aligned_bbox_transform_f(boxes, deltas, splits, info, *, padding="NA"):
    """Refined boxes [1,1,R,4C] (module doc)."""
    b, d, inf = _bbox_shapes(boxes, deltas, info, "AxisAlignedBBoxTransform_f")
    img = _image_of_box(splits, b.shape[0], "AxisAlignedBBoxTransform_f")
    return (bbox_transform(b, d, img, inf).reshape(1, 1, b.shape[0], -1).astype(F32),)


@hexop(
    "AxisAlignedBBoxTransform_q8q16",
    (
        "boxes",
        "deltas",
        "batch_splits",
        "image_info",
        "deltas_min",
        "deltas_max",
        "image_info_min",
        "image_info_max",
    ),
    outputs=("output",),
)
def axis_aligned_bbox_transform_q8q16(
    boxes, deltas, splits, info, dmin, dmax, imin, imax, *, padding="NA"
):
    """The float transform on fixed-scale quint16 boxes, quint8 deltas and quint16 image info;
    output boxes are fixed-scale quint16 (step 0.125)."""
    b = fixed_box_real(boxes)
    d = dequantize_u8(as4d(deltas), fval(dmin), fval(dmax)).astype(np.float64)
    inf = real_u16(info, imin, imax)
    out = axis_aligned_bbox_transform_f(b, d, splits, inf)[0]
    return (fixed_box_codes(out.astype(np.float64)),)


def generate_proposals(
    score: np.ndarray,
    deltas: np.ndarray,
    anchors: np.ndarray,
    size: np.ndarray,
    stride_h: float,
    stride_w: float,
    pre_nms: int,
    post_nms: int,
    iou_thr: float,
    min_size: float,
):
    """Per image: anchors shifted to every feature position, refined by the deltas, clipped to
    the image, boxes narrower or lower than ``min_size`` dropped, the best ``pre_nms`` by score
    kept, hard NMS, the best ``post_nms`` kept. Returns [(scores, boxes [k,4]), ...] per image."""
    nb, fh, fw, na = score.shape
    out = []
    for n in range(nb):
        ys, xs = np.meshgrid(np.arange(fh) * stride_h, np.arange(fw) * stride_w, indexing="ij")
        shift = np.stack([xs, ys, xs, ys], axis=-1)[:, :, None, :]
        anc = (anchors[min(n, anchors.shape[0] - 1)].reshape(1, 1, na, 4) + shift).reshape(-1, 4)
        dl = deltas[n].reshape(fh, fw, na, 4).reshape(-1, 4)
        width, height = size[n].reshape(-1)[:2]
        info = np.array([[height, width]])
        bx = bbox_transform(anc, dl, np.zeros(len(anc), int), info)
        sc = score[n].reshape(-1)
        ok = ((bx[:, 2] - bx[:, 0]) >= min_size) & ((bx[:, 3] - bx[:, 1]) >= min_size)
        idx = np.nonzero(ok)[0]
        idx = idx[np.argsort(-sc[idx], kind="stable")][:pre_nms]
        keep = nms(bx[idx], sc[idx], iou_thr, limit=post_nms)
        out.append((sc[idx][keep], bx[idx][keep]))
    return out


PROPOSAL_IN = (
    "score",
    "score_min",
    "score_max",
    "deltas",
    "deltas_min",
    "deltas_max",
    "anchors",
    "anchors_min",
    "anchors_max",
    "image_size",
    "image_size_min",
    "image_size_max",
    "stride_h",
    "stride_w",
    "max_proposals",
    "max_rois",
    "threshold",
    "min_size",
)


@hexop(
    "Proposal_q8q16",
    PROPOSAL_IN,
    outputs=(
        "output_score",
        "output_score_min",
        "output_score_max",
        "output_roi",
        "output_roi_min",
        "output_roi_max",
        "num_boxes",
    ),
)
def proposal_q8q16(
    score,
    smin,
    smax,
    deltas,
    dmin,
    dmax,
    anchors,
    amin,
    amax,
    size,
    zmin,
    zmax,
    stride_h,
    stride_w,
    max_props,
    max_rois,
    thr,
    min_size,
    *,
    padding="NA",
):
    """Region proposals (:func:`generate_proposals` on the dequantized inputs): scores quint8
    [b,1,1,max_rois] on the score range, rois [b,1,max_rois,4] (x1,y1,x2,y2) quint16 on
    [0, largest image side], num boxes int32 [1,1,1,b]; unused places are 0."""
    sc = dequantize_u8(as4d(score), fval(smin), fval(smax)).astype(np.float64)
    dl = dequantize_u8(as4d(deltas), fval(dmin), fval(dmax)).astype(np.float64)
    anc = real_u16(anchors, amin, amax)
    sz = real_u16(size, zmin, zmax).reshape(sc.shape[0], -1)
    nb, _, _, na = sc.shape
    if dl.shape[:3] != sc.shape[:3] or dl.shape[3] != 4 * na or anc.size != anc.shape[0] * na * 4:
        raise MDFError(
            "hexagon::Proposal_q8q16: score [b,h,w,a], deltas [b,h,w,4a] and anchors "
            f"[b,1,a,4] disagree: {sc.shape}, {dl.shape}, {anc.shape}"
        )
    k = ival(max_rois)
    res = generate_proposals(
        sc,
        dl,
        anc.reshape(anc.shape[0], na, 4),
        sz,
        float(fval(stride_h)),
        float(fval(stride_w)),
        ival(max_props),
        k,
        float(fval(thr)),
        float(fval(min_size)),
    )
    top = float(max(1.0, np.max(sz)))
    q_sc = np.zeros((nb, 1, 1, k), np.uint8)
    q_roi = np.zeros((nb, 1, k, 4), np.uint16)
    count = np.zeros((1, 1, 1, nb), np.int32)
    for n, (s, b) in enumerate(res):
        q_sc[n, 0, 0, : len(s)] = quantize_u8(s, fval(smin), fval(smax))
        q_roi[n, 0, : len(s)] = to_u16(b, 0.0, top)
        count[0, 0, 0, n] = len(s)
    return (q_sc, scalar(fval(smin)), scalar(fval(smax)), q_roi, scalar(0.0), scalar(top), count)
