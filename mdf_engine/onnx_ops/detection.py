"""ONNX NonMaxSuppression: greedy per-class box selection by score, with a Numba kernel.

For every batch entry and class, boxes whose score is above ``score_threshold`` (when given) are
taken in decreasing score order (ties: lower box index first); a box is kept unless its
intersection-over-union with an already kept box is greater than ``iou_threshold``; at most
``max_output_boxes_per_class`` boxes are kept (0 or omitted: none). Boxes are
``[y1, x1, y2, x2]`` with either diagonal pair of corners (``center_point_box=0``) or
``[x_center, y_center, width, height]`` (``center_point_box=1``). The output lists the kept
``(batch, class, box)`` triples as int64, batch-major, then class, then selection order.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op


@numba.njit(cache=True)
def _nms_one(corners, scores, max_out, iou_thr, score_thr, has_score_thr):
    """Kept box indices (in selection order) for one batch entry and class.

    ``corners`` is [S, 4] as (ymin, xmin, ymax, xmax)."""
    S = scores.shape[0]
    cand = np.empty(S, dtype=np.int64)
    n = 0
    for s in range(S):
        if (not has_score_thr) or scores[s] > score_thr:
            cand[n] = s
            n += 1
    cand = cand[:n]
    # stable sort by decreasing score
    order = np.argsort(-scores[cand].astype(np.float64), kind="mergesort")
    cand = cand[order]
    kept = np.empty(min(n, max_out), dtype=np.int64)
    k = 0
    for idx in range(n):
        if k >= max_out:
            break
        b = cand[idx]
        y1, x1, y2, x2 = corners[b, 0], corners[b, 1], corners[b, 2], corners[b, 3]
        area_b = (y2 - y1) * (x2 - x1)
        ok = True
        for j in range(k):
            a = kept[j]
            iy1 = max(y1, corners[a, 0])
            ix1 = max(x1, corners[a, 1])
            iy2 = min(y2, corners[a, 2])
            ix2 = min(x2, corners[a, 3])
            if iy2 <= iy1 or ix2 <= ix1:
                continue
            inter = (iy2 - iy1) * (ix2 - ix1)
            area_a = (corners[a, 2] - corners[a, 0]) * (corners[a, 3] - corners[a, 1])
            union = area_a + area_b - inter
            if union <= 0.0:
                continue
            if inter / union > iou_thr:
                ok = False
                break
        if ok:
            kept[k] = b
            k += 1
    return kept[:k]


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    b = boxes.astype(np.float64)
    if center_point_box:
        xc, yc, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        return np.ascontiguousarray(
            np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=-1)
        )
    y = np.sort(b[..., [0, 2]], axis=-1)
    x = np.sort(b[..., [1, 3]], axis=-1)
    return np.ascontiguousarray(np.stack([y[..., 0], x[..., 0], y[..., 1], x[..., 1]], axis=-1))


def _scalar(x: Any, default: float) -> float:
    if x is None:
        return default
    a = np.asarray(x).reshape(-1)
    return float(a[0]) if a.size else default


@onnx_op(
    "NonMaxSuppression",
    inputs=("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
    optional=("max_output_boxes_per_class", "iou_threshold", "score_threshold"),
    attributes={"center_point_box": 0},
    outputs=("selected_indices",),
    since=10,
)
def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_boxes_per_class: Any = None,
    iou_threshold: Any = None,
    score_threshold: Any = None,
    *,
    center_point_box: int = 0,
) -> tuple:
    """Selected ``(batch, class, box)`` indices, int64 ``[num_selected, 3]``."""
    bx = np.asarray(boxes)
    sc = np.asarray(scores)
    if bx.ndim != 3 or bx.shape[2] != 4:
        raise MDFError(f"NonMaxSuppression: boxes must be [batch, boxes, 4], got {bx.shape}")
    if sc.ndim != 3 or sc.shape[0] != bx.shape[0] or sc.shape[2] != bx.shape[1]:
        raise MDFError(
            f"NonMaxSuppression: scores must be [{bx.shape[0]}, classes, "
            f"{bx.shape[1]}], got {sc.shape}"
        )
    max_out = int(_scalar(max_output_boxes_per_class, 0))
    iou = _scalar(iou_threshold, 0.0)
    if not 0.0 <= iou <= 1.0:
        raise MDFError(f"NonMaxSuppression: iou_threshold must be in [0, 1], got {iou}")
    has_st = score_threshold is not None and np.asarray(score_threshold).size > 0
    st = _scalar(score_threshold, 0.0)
    corners = _corners(bx, int(center_point_box))
    rows = []
    if max_out > 0:
        for b in range(sc.shape[0]):
            for c in range(sc.shape[1]):
                kept = _nms_one(
                    corners[b],
                    np.ascontiguousarray(sc[b, c], dtype=np.float64),
                    max_out,
                    iou,
                    st,
                    has_st,
                )
                for k in kept:
                    rows.append((b, c, int(k)))
    return (np.array(rows, dtype=np.int64).reshape(-1, 3),)
