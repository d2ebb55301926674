"""Hexagon box and detection ops: NMS selections against onnxruntime's NonMaxSuppression, box
formulas against their inverse and numpy written from the op list's text, quantized forms against
the float forms within one quantization step."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, ort, quant, s

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run
from mdf_engine.hexagon.boxes import iou_matrix
from mdf_engine.hexagon.quant import fixed_box_codes, real_u16, to_u16

I32 = np.int32


def random_boxes(rng, n, size=20.0):
    xy = rng.uniform(0, size, size=(n, 2))
    wh = rng.uniform(size / 10, size / 2, size=(n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(F)


def ort_nms(boxes, scores, iou, thr, per_class):
    """Selected box indices per class by onnxruntime (boxes [N,4], scores [N,C])."""
    (sel,) = ort(
        "NonMaxSuppression",
        {
            "b": boxes[None].astype(F),
            "s": scores.T[None].astype(F),
            "m": np.array([per_class], np.int64),
            "i": np.array([iou], F),
            "t": np.array([thr], F),
        },
    )
    return {c: [int(i) for b, cc, i in sel if cc == c] for c in range(scores.shape[1])}


def test_box_decoder_inverts_the_box_encoding():
    rng = np.random.default_rng(0)
    anchors = random_boxes(rng, 6)[:, [1, 0, 3, 2]]  # [ymin, xmin, ymax, xmax]
    boxes = random_boxes(rng, 6)[:, [1, 0, 3, 2]]
    sc = np.array([10.0, 10.0, 5.0, 5.0])
    ha, wa = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    h, w = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    cy = (boxes[:, 0] + boxes[:, 2]) / 2 - (anchors[:, 0] + anchors[:, 2]) / 2
    cx = (boxes[:, 1] + boxes[:, 3]) / 2 - (anchors[:, 1] + anchors[:, 3]) / 2
    deltas = np.stack(
        [cy / ha * sc[0], cx / wa * sc[1], np.log(h / ha) * sc[2], np.log(w / wa) * sc[3]], axis=1
    ).astype(F)
    (out,) = run(
        "Box_Decoder_f", [deltas.reshape(1, 1, 6, 4), anchors.reshape(1, 1, 6, 4), sc.astype(F)]
    )
    np.testing.assert_allclose(out.reshape(6, 4), boxes, rtol=1e-5, atol=1e-4)


def test_axis_aligned_bbox_transform_and_its_quantized_form():
    rng = np.random.default_rng(1)
    boxes = random_boxes(rng, 5, 30.0)
    deltas = rng.normal(scale=0.3, size=(5, 8)).astype(F)
    info = np.array([[24.0, 32.0], [40.0, 28.0]], F)  # (height, width)
    splits = np.array([3, 2], I32)
    (out,) = run(
        "AxisAlignedBBoxTransform_f",
        [boxes.reshape(1, 1, 5, 4), deltas.reshape(1, 1, 5, 8), splits, info],
    )
    # numpy from the text: centre moves by d * size, size scales by exp(d), clip to the image
    img = np.array([0, 0, 0, 1, 1])
    for r in range(5):
        w, h = boxes[r, 2] - boxes[r, 0], boxes[r, 3] - boxes[r, 1]
        for c in range(2):
            dx, dy, dw, dh = deltas[r, 4 * c : 4 * c + 4]
            cx = boxes[r, 0] + w / 2 + dx * w
            cy = boxes[r, 1] + h / 2 + dy * h
            nw, nh = w * np.exp(dw), h * np.exp(dh)
            H, W = info[img[r]]
            ref = [
                np.clip(cx - nw / 2, 0, W),
                np.clip(cy - nh / 2, 0, H),
                np.clip(cx + nw / 2, 0, W),
                np.clip(cy + nh / 2, 0, H),
            ]
            np.testing.assert_allclose(out[0, 0, r, 4 * c : 4 * c + 4], ref, rtol=1e-5, atol=1e-4)
    qb = fixed_box_codes(boxes)
    qd = quant(deltas, -1.0, 1.0)
    qi = to_u16(info, 0.0, 64.0)
    (qo,) = run(
        "AxisAlignedBBoxTransform_q8q16",
        [
            qb.reshape(1, 1, 5, 4),
            qd.reshape(1, 1, 5, 8),
            splits,
            qi,
            s(-1.0),
            s(1.0),
            s(0.0),
            s(64.0),
        ],
    )
    (fo,) = run(
        "AxisAlignedBBoxTransform_f",
        [
            (qb * 0.125).reshape(1, 1, 5, 4),
            deq(qd, -1.0, 1.0).reshape(1, 1, 5, 8),
            splits,
            real_u16(qi, 0.0, 64.0),
        ],
    )
    assert qo.dtype == np.uint16
    assert np.max(np.abs(qo * 0.125 - fo)) <= 0.0625 + 1e-6  # half a step of 0.125


def test_multiclass_nms_selects_what_onnxruntime_selects():
    rng = np.random.default_rng(2)
    n, c = 30, 3
    boxes = random_boxes(rng, n)
    scores = rng.uniform(size=(n, c))
    codes = quant(scores, 0.0, 1.0)
    total = 12
    ob, oscore, mn, mx, ocls = run(
        "MultiClassNms_8",
        [
            boxes.reshape(1, 1, n, 4),
            codes.reshape(1, 1, n, c),
            s(0.0),
            s(1.0),
            s(0.3),
            s(0.4),
            I32(5),
            I32(total),
        ],
    )
    sreal = deq(codes, 0.0, 1.0)
    per = ort_nms(boxes, sreal, 0.4, 0.3, 5)
    cand = sorted(((sreal[i, j], j, i) for j in per for i in per[j]), key=lambda t: -t[0])[:total]
    assert (mn.item(), mx.item()) == (0.0, 1.0)
    got = [(int(ocls[0, 0, 0, k]), tuple(ob[0, 0, k])) for k in range(len(cand))]
    assert got == [(j, tuple(boxes[i])) for _, j, i in cand]
    np.testing.assert_array_equal(oscore[0, 0, 0, : len(cand)], [codes[i, j] for _, j, i in cand])
    assert not ob[0, 0, len(cand) :].any()


def test_box_with_nms_limit_hard_against_onnxruntime_and_quantized_form():
    rng = np.random.default_rng(3)
    r, c = 16, 3
    boxes = np.concatenate([random_boxes(rng, r) for _ in range(c)], axis=1)  # [R, 4C]
    scores = rng.uniform(size=(r, c)).astype(F)
    splits = np.array([10.0, 6.0], F)
    args = [splits, s(0.2), s(0.5), I32(-1), I32(0), I32(0), s(0.5), s(0.0), I32(0)]
    sc, bx, cl, bs, keeps, ksize = run(
        "BoxWithNmsLimit_f", [scores.reshape(1, 1, r, c), boxes.reshape(1, 1, r, 4 * c)] + args
    )
    k = 0
    for b, (lo, hi) in enumerate([(0, 10), (10, 16)]):
        for j in range(1, c):
            sel = ort_nms(boxes[lo:hi, 4 * j : 4 * j + 4], scores[lo:hi, j : j + 1], 0.5, 0.2, 100)[
                0
            ]
            got = keeps.reshape(-1)[k : k + len(sel)] - lo
            assert list(got) == sel and set(cl.reshape(-1)[k : k + len(sel)]) <= {j}
            np.testing.assert_array_equal(
                bx[0, 0, k : k + len(sel)], boxes[lo:hi, 4 * j : 4 * j + 4][sel]
            )
            assert ksize[0, 0, b, j] == len(sel)
            k += len(sel)
        assert bs.reshape(-1)[b] == ksize[0, 0, b].sum()
    assert sc.shape == (1, 1, 1, (c - 1) * r) and not sc.reshape(-1)[k:].any()
    # detections per image: the best 4 of each image, still listed by class
    sc4, _, cl4, bs4, _, _ = run(
        "BoxWithNmsLimit_f",
        [scores.reshape(1, 1, r, c), boxes.reshape(1, 1, r, 4 * c), splits, s(0.2), s(0.5), I32(4)]
        + args[4:],
    )
    assert list(bs4.reshape(-1)) == [4, 4]
    first = sc.reshape(-1)[: int(bs[0, 0, 0, 0])]
    np.testing.assert_array_equal(np.sort(sc4.reshape(-1)[:4]), np.sort(first)[-4:])
    # quantized: scores quint8, boxes quint16 -> the float op on the dequantized inputs
    qs, qb = quant(scores, 0.0, 1.0), to_u16(boxes, 0.0, 32.0)
    out = run(
        "BoxWithNmsLimit_q8q16",
        [
            qs.reshape(1, 1, r, c),
            qb.reshape(1, 1, r, 4 * c),
            splits.astype(I32),
            s(0.2),
            I32(-1),
            I32(0),
            s(0.5),
            s(0.5),
            s(0.0),
            s(0.0),
            s(1.0),
            s(0.0),
            s(32.0),
        ],
    )
    f = run(
        "BoxWithNmsLimit_f",
        [deq(qs, 0.0, 1.0).reshape(1, 1, r, c), real_u16(qb, 0.0, 32.0).reshape(1, 1, r, 4 * c)]
        + args,
    )
    np.testing.assert_array_equal(out[2].reshape(-1), f[2].reshape(-1).astype(I32))
    np.testing.assert_array_equal(out[3].reshape(-1), f[3].reshape(-1).astype(I32))
    assert np.max(np.abs(deq(out[0], 0.0, 1.0) - f[0])) <= 1 / 255 / 2 + 1e-6
    assert np.max(np.abs(real_u16(out[1], 0.0, 32.0) - f[1])) <= 32.0 / 65536


@pytest.mark.parametrize("method", [1, 2])
def test_soft_nms_lowers_scores_by_the_overlap(method):
    rng = np.random.default_rng(4)
    r = 10
    boxes = np.concatenate([random_boxes(rng, r)] * 2, axis=1)
    scores = np.stack([np.zeros(r), rng.uniform(0.3, 1.0, r)], axis=1).astype(F)
    sigma, thr = 0.5, 0.3
    sc, bx, _, bs, keeps, _ = run(
        "BoxWithNmsLimit_f",
        [
            scores.reshape(1, 1, r, 2),
            boxes.reshape(1, 1, r, 8),
            np.array([r], F),
            s(0.0),
            s(thr),
            I32(-1),
            I32(1),
            I32(method),
            s(sigma),
            s(0.05),
            I32(0),
        ],
    )
    n = int(bs.reshape(-1)[0])
    kept = list(keeps.reshape(-1)[:n])
    # each kept box's score is its own, times the factor of every box kept before it
    order = sorted(range(n), key=lambda k: -sc.reshape(-1)[k])
    ious = iou_matrix(boxes[:, :4], boxes[:, :4])
    for pos, k in enumerate(order):
        i = kept[k]
        f = 1.0
        for k2 in order[:pos]:
            u = ious[i, kept[k2]]
            f *= (1 - u if u > thr else 1.0) if method == 1 else np.exp(-u * u / sigma)
        assert sc.reshape(-1)[k] == pytest.approx(scores[i, 1] * f, rel=1e-5)
    assert n >= 1


def test_ssd_detection_output_decodes_and_selects_like_onnxruntime():
    rng = np.random.default_rng(5)
    n, c, keep = 20, 3, 6
    priors = random_boxes(rng, n, 1.0) * 0.5
    var = np.tile([0.1, 0.1, 0.2, 0.2], (n, 1)).astype(F)
    loc = rng.normal(scale=0.5, size=(n, 4)).astype(F)
    conf = rng.uniform(size=(n, c)).astype(F)
    ql, qc = quant(loc, -2.0, 2.0), quant(conf, 0.0, 1.0)
    out = run(
        "SsdDetectionOutput",
        [
            ql.reshape(1, 1, n, 4),
            s(-2.0),
            s(2.0),
            qc.reshape(1, 1, n, c),
            s(0.0),
            s(1.0),
            I32(c),
            I32(1),
            I32(0),
            s(0.45),
            I32(10),
            s(1.0),
            I32(1),
            np.stack([priors, var]).reshape(1, 2, n, 4),
            I32(keep),
            I32(0),
            s(0.25),
        ],
    )
    lr, cr = deq(ql, -2.0, 2.0).astype(np.float64), deq(qc, 0.0, 1.0)
    pw, ph = priors[:, 2] - priors[:, 0], priors[:, 3] - priors[:, 1]
    cx = var[:, 0] * lr[:, 0] * pw + (priors[:, 0] + priors[:, 2]) / 2
    cy = var[:, 1] * lr[:, 1] * ph + (priors[:, 1] + priors[:, 3]) / 2
    w, h = np.exp(var[:, 2] * lr[:, 2]) * pw, np.exp(var[:, 3] * lr[:, 3]) * ph
    dec = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    found = []
    for j in range(1, c):
        top = [i for i in np.argsort(-cr[:, j], kind="stable") if cr[i, j] > 0.25][:10]
        sel = ort_nms(dec[top], cr[top, j : j + 1], 0.45, -1.0, 100)[0]
        found += [(cr[top[i], j], j, top[i]) for i in sel]
    found = sorted(found, key=lambda t: -t[0])[:keep]
    assert list(out[1].reshape(-1)[: len(found)]) == [j for _, j, _ in found]
    for k, (_, _, i) in enumerate(found):
        np.testing.assert_allclose(
            [out[5 + q].reshape(-1)[k] for q in range(4)], dec[i], rtol=1e-5, atol=1e-6
        )
    assert not out[5].reshape(-1)[len(found) :].any()
    np.testing.assert_allclose(
        deq(out[2].reshape(-1)[: len(found)], 0.0, 1.0),
        [t[0] for t in found],
        atol=1 / 255 / 2 + 1e-6,
    )


def test_proposals_are_refined_anchors_after_nms():
    rng = np.random.default_rng(6)
    fh, fw, na = 3, 4, 2
    anchors = np.array([[0, 0, 8, 8], [0, 0, 16, 12]], F)
    score = rng.uniform(size=(1, fh, fw, na)).astype(F)
    deltas = rng.normal(scale=0.2, size=(1, fh, fw, 4 * na)).astype(F)
    qs, qd = quant(score, 0.0, 1.0), quant(deltas, -1.0, 1.0)
    qa, qz = to_u16(anchors, 0.0, 64.0), to_u16(np.array([[40.0, 30.0]]), 0.0, 64.0)
    out = run(
        "Proposal_q8q16",
        [
            qs,
            s(0.0),
            s(1.0),
            qd,
            s(-1.0),
            s(1.0),
            qa.reshape(1, 1, na, 4),
            s(0.0),
            s(64.0),
            qz.reshape(1, 1, 1, 2),
            s(0.0),
            s(64.0),
            s(8.0),
            s(8.0),
            I32(20),
            I32(5),
            s(0.6),
            s(1.0),
        ],
    )
    sc, rois, count = deq(qs, 0.0, 1.0), deq(qd, -1.0, 1.0), out[6]
    anc = real_u16(qa, 0.0, 64.0).reshape(na, 4)
    size = real_u16(qz, 0.0, 64.0).reshape(-1)
    boxes, scores = [], []
    for y in range(fh):
        for x in range(fw):
            for a in range(na):
                shifted = anc[a] + np.array([x, y, x, y]) * 8.0
                (b,) = run(
                    "AxisAlignedBBoxTransform_f",
                    [
                        shifted.reshape(1, 1, 1, 4),
                        rois[0, y, x, 4 * a : 4 * a + 4].reshape(1, 1, 1, 4),
                        np.array([1], I32),
                        np.array([[size[1], size[0]]], F),
                    ],
                )
                boxes.append(b.reshape(4))
                scores.append(sc[0, y, x, a])
    boxes, scores = np.array(boxes), np.array(scores)
    ok = np.nonzero(((boxes[:, 2] - boxes[:, 0]) >= 1) & ((boxes[:, 3] - boxes[:, 1]) >= 1))[0]
    top = ok[np.argsort(-scores[ok], kind="stable")][:20]
    sel = ort_nms(boxes[top], scores[top, None], 0.6, -1.0, 5)[0]
    assert count.reshape(-1)[0] == len(sel)
    top_side = out[5].item()
    got = real_u16(out[3].reshape(-1, 4)[: len(sel)], 0.0, top_side).reshape(-1, 4)
    np.testing.assert_allclose(got, boxes[top][sel], atol=top_side / 65536)
    np.testing.assert_array_equal(out[0].reshape(-1)[: len(sel)], quant(scores[top][sel], 0.0, 1.0))


def test_detection_input_errors_are_mdf_errors():
    with pytest.raises(MDFError, match="batch splits"):
        run(
            "AxisAlignedBBoxTransform_f",
            [np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 2, 4)), np.array([3], I32), np.ones((1, 2))],
        )
    with pytest.raises(MDFError, match="rotated"):
        run(
            "BoxWithNmsLimit_f",
            [np.zeros((1, 1, 2, 2))] * 2 + [np.array([2.0])] + [s(0.0)] * 7 + [I32(1)],
        )
