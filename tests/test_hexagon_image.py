"""Hexagon RoI and image ops: RoiAlign against onnxruntime RoiAlign, RoiPool against
onnxruntime MaxRoiPool, the projective transform against scipy's bilinear map_coordinates,
HeatmapMaxKP on exact quadratic peaks, colour conversions and glimpses from the op list's text.
Also the resize ops against numpy written from TF's resize rules."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, ort, quant, s, step

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run
from mdf_engine.hexagon.quant import fixed_box_codes

I32 = np.int32


def test_roi_align_against_onnxruntime():
    rng = np.random.default_rng(0)
    feat = rng.uniform(-1, 3, size=(2, 10, 12, 3)).astype(F)
    q = quant(feat, -1.0, 3.0)
    rois = np.array([[4.0, 6.0, 30.0, 20.0], [0.0, 0.0, 8.0, 8.0], [10.0, 2.5, 47.5, 39.0]], F)
    qr = fixed_box_codes(rois)
    batch = np.array([0, 1, 1], I32)
    for ratio in (2, 0):
        out, mn, mx = run(
            "QuantizedRoiAlignV2_8",
            [
                q,
                s(-1.0),
                s(3.0),
                qr.reshape(1, 1, 3, 4),
                batch.reshape(1, 1, 1, 3),
                I32(3),
                I32(4),
                s(0.25),
                s(0.25),
                I32(ratio),
                I32(ratio),
                s(-1.0),
                s(3.0),
            ],
        )
        (ref,) = ort(
            "RoiAlign",
            {
                "x": deq(q, -1.0, 3.0).transpose(0, 3, 1, 2),
                "r": (qr * 0.125).astype(F),
                "b": batch.astype(np.int64),
            },
            {
                "output_height": 3,
                "output_width": 4,
                "sampling_ratio": ratio,
                "spatial_scale": 0.25,
                "mode": "avg",
                "coordinate_transformation_mode": "output_half_pixel",
            },
            opset=16,
        )
        assert out.shape == (3, 3, 4, 3)
        err = np.abs(deq(out, mn.item(), mx.item()) - ref.transpose(0, 2, 3, 1))
        assert err.max() <= step(mn.item(), mx.item()) / 2 + 1e-5


def test_roi_pool_against_onnxruntime_max_roi_pool():
    rng = np.random.default_rng(1)
    q = rng.integers(0, 256, size=(2, 9, 11, 2)).astype(np.uint8)
    rois = np.array([[0, 8, 4, 40, 30], [1, 0, 0, 20, 20], [1, 16, 12, 44, 36]], F)
    coded = (rois[:, 1:] / 2).astype(np.uint16)  # roi scale/offset (2, 0)
    out, mn, mx = run(
        "QuantizedRoiPool_8_v2",
        [
            q,
            coded.reshape(3, 4, 1, 1),
            rois[:, 0].astype(I32).reshape(3, 1, 1, 1),
            s(3.0),
            s(2.0),
            s(0.25),
            s(0.25),
            I32(0),
            s(-1.0),
            s(1.0),
            np.array([[[[2.0, 0.0]]]], F),
        ],
    )
    (ref,) = ort(
        "MaxRoiPool",
        {"x": q.astype(F).transpose(0, 3, 1, 2), "r": rois},
        {"pooled_shape": [3, 2], "spatial_scale": 0.25},
        opset=1,
    )
    np.testing.assert_array_equal(out, ref.transpose(0, 2, 3, 1).astype(np.uint8))
    assert (mn.item(), mx.item()) == (-1.0, 1.0)


@pytest.mark.parametrize("nchw", [0, 1])
def test_heatmap_max_kp_finds_quadratic_peaks_exactly(nchw):
    """A quadratic heatmap has its Taylor refinement exact: the peak position and value are the
    quadratic's maximum, mapped into the rectangle (op list: 'estimate a subpixel position')."""
    h, w = 7, 9
    peaks = [(2.3, 4.6, 5.0), (4.8, 3.1, 2.0)]  # (y0, x0, value) per heatmap
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    maps = np.stack(
        [v - 0.5 * (yy - y0) ** 2 - 0.3 * (xx - x0) ** 2 for y0, x0, v in peaks], axis=-1
    )[None]
    rect = np.array([[[[10.0, 20.0, 28.0, 34.0]]]], F)
    x = maps.transpose(0, 3, 1, 2) if nchw else maps
    pk, xy = run("HeatmapMaxKP_f", [x.astype(F), rect, I32(nchw)])
    assert pk.shape == (1, 1, 1, 2) and xy.shape == (1, 1, 2, 2)
    for k, (y0, x0, v) in enumerate(peaks):
        assert pk[0, 0, 0, k] == pytest.approx(v, rel=1e-5)
        assert xy[0, 0, k, 0] == pytest.approx(10.0 + (x0 + 0.5) * 18.0 / w, rel=1e-5)
        assert xy[0, 0, k, 1] == pytest.approx(20.0 + (y0 + 0.5) * 14.0 / h, rel=1e-5)
    qm = quant(maps, -20.0, 6.0)
    qp, mn, mx, qxy = run(
        "QuantizedHeatmapMaxKP_8", [qm, s(-20.0), s(6.0), fixed_box_codes(rect), I32(0)]
    )
    fp, fxy = run("HeatmapMaxKP_f", [deq(qm, -20.0, 6.0), rect, I32(0)])
    assert np.abs(deq(qp, mn.item(), mx.item()) - fp).max() <= step(mn.item(), mx.item()) / 2 + 1e-5
    assert np.abs(qxy * 0.125 - fxy).max() <= 0.0625 + 1e-5
    with pytest.raises(MDFError, match="2x2"):
        run("HeatmapMaxKP_f", [np.zeros((1, 1, 5, 1), F), rect, I32(0)])


def test_image_projective_transform_against_scipy():
    ndimage = pytest.importorskip("scipy.ndimage")
    rng = np.random.default_rng(2)
    img = rng.normal(size=(2, 6, 7, 2)).astype(F)
    t = np.array(
        [[0.9, 0.2, 0.5, -0.1, 1.1, -0.7, 0.01, 0.02], [1.0, 0.0, 2.5, 0.0, 1.0, -1.5, 0.0, 0.0]], F
    )
    (out,) = run("ImageTransform_f", [img, t.reshape(1, 1, 2, 8)])
    yy, xx = np.mgrid[0:6, 0:7].astype(np.float64)
    for n in range(2):
        a = t[n].astype(np.float64)
        k = a[6] * xx + a[7] * yy + 1
        sx, sy = (a[0] * xx + a[1] * yy + a[2]) / k, (a[3] * xx + a[4] * yy + a[5]) / k
        for c in range(2):
            ref = ndimage.map_coordinates(
                img[n, :, :, c].astype(np.float64),
                [sy, sx],
                order=1,
                mode="grid-constant",
                cval=0.0,
            )
            np.testing.assert_allclose(out[n, :, :, c], ref, rtol=1e-5, atol=1e-5)


def test_colour_conversions():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, size=(1, 2, 3, 4)).astype(np.uint8)
    for mode in (0, 1):
        rgb, mn, mx = run("RgbaToRgb_8", [x, I32(mode), s(0.0), s(1.0)])
        np.testing.assert_array_equal(rgb, x[..., [2, 1, 0]] if mode else x[..., :3])
        argb, _, _ = run("Argb32ToRgb_8", [x, I32(mode), s(0.0), s(1.0)])
        np.testing.assert_array_equal(argb, x[..., [3, 2, 1]] if mode else x[..., 1:])
        assert (mn.item(), mx.item()) == (0.0, 1.0)
    h, w = 4, 6
    buf = rng.integers(0, 256, size=(1, h * 3 // 2, w, 1)).astype(np.uint8)
    out, mn, mx = run("Nv21ToRgb_8", [buf, I32(0)])
    bgr, _, _ = run("Nv21ToRgb_8", [buf, I32(1)])
    assert out.shape == (1, h, w, 3) and (mn.item(), mx.item()) == (0.0, 255.0)
    flat = buf.reshape(-1)
    for i in range(h):
        for j in range(w):
            y = float(flat[i * w + j])
            base = h * w + (i // 2) * w + (j // 2) * 2  # V then U, interleaved
            v, u = float(flat[base]) - 128, float(flat[base + 1]) - 128
            ref = [y + 1.370705 * v, y - 0.698001 * v - 0.337633 * u, y + 1.732446 * u]
            ref = np.clip(np.floor(np.array(ref) + 0.5), 0, 255)
            np.testing.assert_array_equal(out[0, i, j], ref)
            np.testing.assert_array_equal(bgr[0, i, j], ref[::-1])


def test_extract_glimpse_windows():
    rng = np.random.default_rng(4)
    q = rng.integers(0, 256, size=(2, 8, 10, 2)).astype(np.uint8)
    offs = np.array([[3.0, 4.0], [0.0, 9.0]], F)  # (y, x) centres, pixels
    args = [s(-1.0), s(1.0), I32(4), I32(3), I32(0), I32(0)]
    out, mn, mx = run("QuantizedExtractGlimpse_8", [q, offs.reshape(1, 1, 2, 2)] + args + [I32(0)])
    assert out.shape == (2, 3, 4, 2)
    np.testing.assert_array_equal(out[0], q[0, 2:5, 2:6])
    np.testing.assert_array_equal(out[1, 1:, :3], q[1, 0:2, 7:10])
    z = int(np.floor(1.0 / step(-1.0, 1.0) + 0.5))
    assert (out[1, 0] == z).all() and (out[1, :, 3] == z).all()
    noisy = run("QuantizedExtractGlimpse_8", [q, offs.reshape(1, 1, 2, 2)] + args + [I32(1)])[0]
    np.testing.assert_array_equal(noisy[1, 1:, :3], q[1, 0:2, 7:10])
    again = run("QuantizedExtractGlimpse_8", [q, offs.reshape(1, 1, 2, 2)] + args + [I32(1)])[0]
    np.testing.assert_array_equal(noisy, again)
    # normalized and centred: (0, 0) is the image centre
    c = run(
        "QuantizedExtractGlimpse_8",
        [q, np.zeros((1, 1, 2, 2), F), s(-1.0), s(1.0), I32(4), I32(3), I32(1), I32(1), I32(0)],
    )[0]
    np.testing.assert_array_equal(c[0], q[0, 3:6, 3:7])
