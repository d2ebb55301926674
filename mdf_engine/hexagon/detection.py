"""Hexagon detection post-processing: BoxWithNmsLimit_f / _q8q16, MultiClassNms_8 and
SsdDetectionOutput. Every output has the fixed length the op list gives it, with the results at
the front and zeros after them; the op returns all its outputs as one tuple.

* BoxWithNmsLimit (Caffe2 BoxWithNMSLimit): scores ``[1,1,R,C]``, boxes ``[1,1,R,4C]``
  (x1,y1,x2,y2 per class), batch splits (boxes per image). Per image and per class 1..C-1
  (class 0 is the background): boxes with score > the score threshold, hard NMS or soft NMS
  (method 1 linear, 2 Gaussian, dropping scores below the soft-NMS minimum); then, if
  ``detections per image`` >= 0, the best that many over all classes. Results are listed per
  image, by class, best score first. max_length = (C - 1) * R.
* MultiClassNms_8: boxes ``[1,1,N,4]``, scores ``[1,1,N,C]`` (every column a class); per class
  boxes with score > threshold, NMS keeping at most ``max per class``; then the best
  ``max total`` over the classes, best first. Scores keep their input codes and range.
* SsdDetectionOutput (Caffe DetectionOutput): loc ``[B,1,N,4]`` (``[B,1,N,4C]`` unless share
  location), conf ``[B,1,N,C]``, priors ``[1,2,N,4]`` (row 0 boxes xmin,ymin,xmax,ymax, row 1
  variances; ``[1,1,N,4]`` when the variance is encoded in the target). Decoding by code type
  (0 CORNER, 1 CENTER_SIZE, 2 CORNER_SIZE), per class except the background: confidence >
  threshold, the best ``nms top k``, adaptive NMS (eta); the best ``keep top k`` per image.
  Outputs have length B * keep_top_k.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .boxes import nms, soft_nms
from .quant import F32, as4d, dequantize_u8, fval, ival, quantize_u8, real_u16, scalar, to_u16

NMS_F_IN = (
    "scores",
    "boxes",
    "batch_splits",
    "score_threshold",
    "nms_threshold",
    "detections_per_image",
    "soft_nms_enabled",
    "soft_nms_method",
    "soft_nms_sigma",
    "soft_nms_min_score",
    "rotated",
)
NMS_F_OUT = ("scores_out", "boxes_out", "classes", "batch_splits_out", "keeps", "keeps_size")


def box_with_nms_limit(
    scores, boxes, splits, score_thr, nms_thr, per_image, method, sigma, min_score
):
    """Selected (score, box [4], class, original box index) per image (module doc)."""
    r, c = scores.shape
    counts = [int(round(float(v))) for v in np.asarray(splits).reshape(-1)]
    if sum(counts) != r or min(counts, default=0) < 0:
        raise MDFError(
            f"hexagon::BoxWithNmsLimit: batch splits {counts} must add up to the {r} boxes"
        )
    start = 0
    per_batch = []
    for n in counts:
        rows = np.arange(start, start + n)
        start += n
        found = []
        for j in range(1, c):
            bx = boxes[rows, 4 * j : 4 * j + 4]
            sc = scores[rows, j]
            cand = np.nonzero(sc > score_thr)[0]
            if method == 0:
                keep = nms(bx[cand], sc[cand], nms_thr)
                kept = [(float(sc[cand][k]), cand[k]) for k in keep]
            else:
                keep, low = soft_nms(bx[cand], sc[cand], method, nms_thr, sigma, min_score)
                kept = sorted(((float(low[k]), cand[k]) for k in keep), key=lambda t: -t[0])
            found += [(s, bx[i], j, int(rows[i])) for s, i in kept]
        if per_image >= 0 and len(found) > per_image:
            best = sorted(range(len(found)), key=lambda k: (-found[k][0], k))[:per_image]
            found = [found[k] for k in sorted(best)]
        per_batch.append(found)
    return per_batch, c


def _nms_limit_outputs(per_batch, r, c):
    m = (c - 1) * r
    sc = np.zeros(m, np.float64)
    bx = np.zeros((m, 4), np.float64)
    cl = np.zeros(m, np.float64)
    keeps = np.zeros(m, np.int32)
    ksize = np.zeros((len(per_batch), c), np.int32)
    k = 0
    for b, found in enumerate(per_batch):
        for s, box, j, i in found:
            sc[k], bx[k], cl[k], keeps[k] = s, box, j, i
            ksize[b, j] += 1
            k += 1
    splits = np.array([len(f) for f in per_batch], np.float64)
    return sc, bx, cl, splits, keeps, ksize


def _nms_inputs(scores, boxes, op):
    s = as4d(scores).astype(np.float64)
    r, c = s.shape[2], s.shape[3]
    b = as4d(boxes).astype(np.float64)
    if s.shape[:2] != (1, 1) or b.size != r * 4 * c:
        raise MDFError(
            f"hexagon::{op}: scores are [1,1,R,C] and boxes [1,1,R,4C], got {s.shape} and {b.shape}"
        )
    return s.reshape(r, c), b.reshape(r, 4 * c)


@hexop("BoxWithNmsLimit_f", NMS_F_IN, outputs=NMS_F_OUT)
def box_with_nms_limit_f(
    scores,
    boxes,
    splits,
    score_thr,
    nms_thr,
    per_image,
    soft,
    method,
    sigma,
    min_score,
    rotated,
    *,
    padding="NA",
):
    """Class-wise NMS with a per-image limit (module doc); outputs scores [1,1,1,M], boxes
    [1,1,M,4], classes [1,1,1,M], batch splits [1,1,1,B], keeps [1,1,1,M], keeps size
    [1,1,B,C], M = (C-1)*R."""
    if ival(rotated) != 0:
        raise MDFError("hexagon::BoxWithNmsLimit_f: rotated boxes (input 10 = 1) are not supported")
    s, b = _nms_inputs(scores, boxes, "BoxWithNmsLimit_f")
    meth = ival(method) if ival(soft) else 0
    per_batch, c = box_with_nms_limit(
        s,
        b,
        splits,
        float(fval(score_thr)),
        float(fval(nms_thr)),
        ival(per_image),
        meth,
        float(fval(sigma)),
        float(fval(min_score)),
    )
    sc, bx, cl, sp, keeps, ksize = _nms_limit_outputs(per_batch, s.shape[0], c)
    m = sc.size
    return (
        sc.reshape(1, 1, 1, m).astype(F32),
        bx.reshape(1, 1, m, 4).astype(F32),
        cl.reshape(1, 1, 1, m).astype(F32),
        sp.reshape(1, 1, 1, -1).astype(F32),
        keeps.reshape(1, 1, 1, m),
        ksize.reshape(1, 1, *ksize.shape),
    )


NMS_Q_IN = (
    "scores",
    "boxes",
    "batch_splits",
    "score_threshold",
    "detections_per_image",
    "soft_nms",
    "nms_threshold",
    "sigma",
    "soft_nms_min_score",
    "scores_min",
    "scores_max",
    "boxes_min",
    "boxes_max",
)


@hexop(
    "BoxWithNmsLimit_q8q16",
    NMS_Q_IN,
    outputs=(
        "scores_out",
        "boxes_out",
        "classes",
        "batch_splits_out",
        "scores_out_min",
        "scores_out_max",
        "boxes_out_min",
        "boxes_out_max",
    ),
)
def box_with_nms_limit_q8q16(
    scores,
    boxes,
    splits,
    score_thr,
    per_image,
    soft,
    nms_thr,
    sigma,
    min_score,
    smin,
    smax,
    bmin,
    bmax,
    *,
    padding="NA",
):
    """BoxWithNmsLimit on quint8 scores and quint16 boxes; soft nms 0 hard, 1 linear, 2
    Gaussian. Scores and boxes keep their ranges; classes and batch splits are int32."""
    s = dequantize_u8(as4d(scores), fval(smin), fval(smax)).astype(np.float64)
    b = real_u16(boxes, bmin, bmax)
    s2, b2 = _nms_inputs(s, b, "BoxWithNmsLimit_q8q16")
    per_batch, c = box_with_nms_limit(
        s2,
        b2,
        splits,
        float(fval(score_thr)),
        float(fval(nms_thr)),
        ival(per_image),
        ival(soft),
        float(fval(sigma)),
        float(fval(min_score)),
    )
    sc, bx, cl, sp, _, _ = _nms_limit_outputs(per_batch, s2.shape[0], c)
    m = sc.size
    return (
        quantize_u8(sc, fval(smin), fval(smax)).reshape(1, 1, 1, m),
        to_u16(bx, float(fval(bmin)), float(fval(bmax))).reshape(1, 1, m, 4),
        cl.astype(np.int32).reshape(1, 1, 1, m),
        sp.astype(np.int32).reshape(1, 1, 1, -1),
        scalar(fval(smin)),
        scalar(fval(smax)),
        scalar(fval(bmin)),
        scalar(fval(bmax)),
    )


def multi_class_nms(boxes, scores, score_thr, iou_thr, per_class, total):
    """[(box index, class)] selected (module doc), best score first."""
    found = []
    for j in range(scores.shape[1]):
        keep = nms(boxes, scores[:, j], iou_thr, score_thr, per_class)
        found += [(float(scores[i, j]), i, j) for i in keep]
    found.sort(key=lambda t: (-t[0], t[2], t[1]))
    return [(i, j) for _, i, j in found[:total]]


@hexop(
    "MultiClassNms_8",
    (
        "boxes",
        "scores",
        "scores_min",
        "scores_max",
        "score_threshold",
        "iou_threshold",
        "max_per_class",
        "max_total",
    ),
    outputs=("boxes_out", "scores_out", "scores_out_min", "scores_out_max", "classes"),
)
def multi_class_nms_8(
    boxes, scores, smin, smax, score_thr, iou_thr, per_class, total, *, padding="NA"
):
    """Multi-class NMS (module doc): boxes [1,1,T,4], scores quint8 [1,1,1,T] (input range),
    classes float [1,1,1,T], T = max total; zeros past the selected boxes."""
    q = as4d(scores)
    n, c = q.shape[2], q.shape[3]
    b = as4d(boxes).astype(np.float64).reshape(-1, 4)
    if b.shape[0] != n:
        raise MDFError(f"hexagon::MultiClassNms_8: {b.shape[0]} boxes but scores for {n}")
    s = dequantize_u8(q, fval(smin), fval(smax)).astype(np.float64).reshape(n, c)
    t = ival(total)
    sel = multi_class_nms(b, s, float(fval(score_thr)), float(fval(iou_thr)), ival(per_class), t)
    ob = np.zeros((1, 1, t, 4), F32)
    os_ = np.zeros((1, 1, 1, t), np.uint8)
    oc = np.zeros((1, 1, 1, t), F32)
    q2 = q.reshape(n, c)
    for k, (i, j) in enumerate(sel):
        ob[0, 0, k], os_[0, 0, 0, k], oc[0, 0, 0, k] = b[i], q2[i, j], j
    return ob, os_, scalar(fval(smin)), scalar(fval(smax)), oc


def decode_ssd(
    loc: np.ndarray, prior: np.ndarray, var: np.ndarray, code: int, encoded: bool
) -> np.ndarray:
    """Caffe DecodeBBox: loc [N,4] against priors [N,4] (xmin,ymin,xmax,ymax), variances [N,4]."""
    v = np.ones_like(var) if encoded else var
    pw, ph = prior[:, 2] - prior[:, 0], prior[:, 3] - prior[:, 1]
    if code == 0:
        return prior + v * loc
    if code == 1:
        pcx, pcy = (prior[:, 0] + prior[:, 2]) / 2, (prior[:, 1] + prior[:, 3]) / 2
        cx = v[:, 0] * loc[:, 0] * pw + pcx
        cy = v[:, 1] * loc[:, 1] * ph + pcy
        w = np.exp(v[:, 2] * loc[:, 2]) * pw
        h = np.exp(v[:, 3] * loc[:, 3]) * ph
        return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    if code == 2:
        return prior + v * loc * np.stack([pw, ph, pw, ph], axis=1)
    raise MDFError(f"hexagon::SsdDetectionOutput: code type must be 0, 1 or 2, got {code}")


SSD_IN = (
    "loc",
    "loc_min",
    "loc_max",
    "conf",
    "conf_min",
    "conf_max",
    "num_classes",
    "share_location",
    "background_label_id",
    "nms_threshold",
    "nms_top_k",
    "nms_eta",
    "code_type",
    "priors",
    "keep_top_k",
    "variance_encoded_in_target",
    "confidence_threshold",
)


def ssd_detect(
    loc, conf, priors, n_cls, share, bg, nms_thr, top_k, eta, code, keep_top_k, encoded, conf_thr
):
    """Per image, the kept detections [(score, class, box)] (module doc)."""
    nb, n = conf.shape[0], conf.shape[2]
    if conf.shape[3] != n_cls:
        raise MDFError(
            f"hexagon::SsdDetectionOutput: conf depth {conf.shape[3]} != {n_cls} classes"
        )
    pr = priors.reshape(priors.shape[1], -1, 4)
    if pr.shape[1] != n:
        raise MDFError(f"hexagon::SsdDetectionOutput: {pr.shape[1]} priors for {n} boxes")
    var = pr[1] if pr.shape[0] > 1 else np.ones_like(pr[0])
    if pr.shape[0] < 2 and not encoded:
        raise MDFError(
            "hexagon::SsdDetectionOutput: priors need a variance row [1,2,N,4] unless "
            "the variance is encoded in the target"
        )
    n_loc = 1 if share else n_cls
    out = []
    for b in range(nb):
        lb = loc[b].reshape(n, n_loc, 4)
        found = []
        for j in range(n_cls):
            if j == bg:
                continue
            boxes = decode_ssd(lb[:, 0 if share else j], pr[0], var, code, encoded)
            sc = conf[b, 0, :, j]
            cand = np.nonzero(sc > conf_thr)[0]
            cand = cand[np.argsort(-sc[cand], kind="stable")]
            if top_k > -1:
                cand = cand[:top_k]
            keep = nms(boxes[cand], sc[cand], nms_thr, eta=eta)
            found += [(float(sc[cand[k]]), j, boxes[cand[k]]) for k in keep]
        found.sort(key=lambda t: -t[0])
        out.append(found[:keep_top_k] if keep_top_k > -1 else found)
    return out


@hexop(
    "SsdDetectionOutput",
    SSD_IN,
    outputs=(
        "batch_indices",
        "classes",
        "conf_out",
        "conf_out_min",
        "conf_out_max",
        "xmin",
        "ymin",
        "xmax",
        "ymax",
    ),
)
def ssd_detection_output(
    loc,
    lmin,
    lmax,
    conf,
    cmin,
    cmax,
    n_cls,
    share,
    bg,
    nms_thr,
    top_k,
    eta,
    code,
    priors,
    keep_top_k,
    encoded,
    conf_thr,
    *,
    padding="NA",
):
    """SSD detection output (module doc); every output [1,1,1,B*keep_top_k], zero-filled."""
    lc = dequantize_u8(as4d(loc), fval(lmin), fval(lmax)).astype(np.float64)
    cq = as4d(conf)
    cf = dequantize_u8(cq, fval(cmin), fval(cmax)).astype(np.float64)
    k = ival(keep_top_k)
    if k < 1:
        raise MDFError(
            "hexagon::SsdDetectionOutput: keep top k must be >= 1 (it sets the output length)"
        )
    res = ssd_detect(
        lc,
        cf,
        as4d(priors, np.float64),
        ival(n_cls),
        ival(share),
        ival(bg),
        float(fval(nms_thr)),
        ival(top_k),
        float(fval(eta)),
        ival(code),
        k,
        ival(encoded),
        float(fval(conf_thr)),
    )
    t = cf.shape[0] * k
    bi, cl = np.zeros((1, 1, 1, t), np.int32), np.zeros((1, 1, 1, t), np.int32)
    co = np.zeros((1, 1, 1, t), np.uint8)
    xy = np.zeros((4, t), F32)
    i = 0
    for b, found in enumerate(res):
        for s, j, box in found:
            bi[0, 0, 0, i], cl[0, 0, 0, i] = b, j
            co[0, 0, 0, i] = quantize_u8(np.array([s]), fval(cmin), fval(cmax))[0]
            xy[:, i] = box
            i += 1
    return (bi, cl, co, scalar(fval(cmin)), scalar(fval(cmax))) + tuple(
        xy[r].reshape(1, 1, 1, t) for r in range(4)
    )
