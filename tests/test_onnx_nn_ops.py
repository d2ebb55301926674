"""Convolution, pooling, normalization, quantization and resize operators of ``onnx_ops``
against onnxruntime (one-node models built with ``onnx.helper``) on random inputs, plus
independent numpy formulas where onnxruntime has no kernel, and the error messages.

The ONNX backend node cases of these ops run in tests/test_onnx_conformance.py; here are the
configurations those cases do not cover (groups, dilations, odd pads, random shapes) and the
ops without node cases (MaxRoiPool, GlobalLpPool).
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import onnx_ops
from mdf_engine.errors import MDFError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx_cases import ort_run  # noqa: E402


def check(
    op: str,
    inputs: list,
    attributes: dict,
    n_out: int = 1,
    opset: int = 13,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> list:
    exp = ort_run(op, inputs, attributes, n_out, opset)
    got = onnx_ops.run(op, inputs, attributes, opset=opset)
    for e, g in zip(exp, got[:n_out]):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return got


def rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


CONV_CONFIGS = [
    # (N, C, spatial, M, kernel, attributes)
    (2, 4, (11,), 6, (3,), {"group": 2, "dilations": [2], "pads": [1, 2]}),
    (1, 3, (9, 8), 4, (3, 2), {"strides": [2, 1], "pads": [1, 0, 2, 1]}),
    (2, 6, (7, 9), 6, (3, 3), {"group": 3, "dilations": [2, 1], "pads": [2, 1, 2, 1]}),
    (1, 2, (7, 9), 2, (3, 2), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    (1, 4, (8, 8), 8, (2, 3), {"group": 4, "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    (1, 2, (6, 7), 3, (3, 3), {"auto_pad": "VALID", "strides": [2, 2]}),
    (
        1,
        2,
        (5, 6, 7),
        4,
        (2, 3, 2),
        {"group": 2, "pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 2], "dilations": [2, 1, 1]},
    ),
]


@pytest.mark.parametrize("cfg", CONV_CONFIGS, ids=[str(i) for i in range(len(CONV_CONFIGS))])
def test_conv_against_onnxruntime(cfg):
    N, C, sp, M, k, attrs = cfg
    rng = np.random.default_rng(len(sp) + C)
    X = rand(rng, N, C, *sp)
    W = rand(rng, M, C // attrs.get("group", 1), *k)
    B = rand(rng, M)
    check("Conv", [X, W, B], attrs)
    check("Conv", [X, W], {**attrs, "kernel_shape": list(k)})


def test_conv_float64_matches_float32():
    rng = np.random.default_rng(3)
    X, W = rand(rng, 1, 3, 10, 10), rand(rng, 5, 3, 3, 3)
    y32 = onnx_ops.run("Conv", [X, W], {"pads": [1, 1, 1, 1]})[0]
    y64 = onnx_ops.run(
        "Conv", [X.astype(np.float64), W.astype(np.float64)], {"pads": [1, 1, 1, 1]}
    )[0]
    assert y64.dtype == np.float64
    np.testing.assert_allclose(y64, y32, rtol=1e-4, atol=1e-5)


CONVT_CONFIGS = [
    (1, 2, (5,), 3, (3,), {"strides": [2], "pads": [1, 0], "output_padding": [1]}),
    (
        2,
        4,
        (4, 5),
        2,
        (3, 2),
        {"group": 2, "strides": [2, 3], "dilations": [1, 2], "pads": [1, 0, 0, 1]},
    ),
    (1, 2, (4, 4), 3, (3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    (1, 2, (4, 4), 3, (3, 3), {"strides": [2, 2], "output_shape": [9, 8]}),
    (1, 2, (3, 4, 3), 2, (2, 2, 3), {"strides": [1, 2, 2], "pads": [0, 1, 1, 1, 0, 0]}),
]


@pytest.mark.parametrize("cfg", CONVT_CONFIGS, ids=[str(i) for i in range(len(CONVT_CONFIGS))])
def test_conv_transpose_against_onnxruntime(cfg):
    N, C, sp, mg, k, attrs = cfg
    rng = np.random.default_rng(7 + len(sp))
    X = rand(rng, N, C, *sp)
    W = rand(rng, C, mg, *k)
    B = rand(rng, mg * attrs.get("group", 1))
    check("ConvTranspose", [X, W, B], attrs)


POOL_CONFIGS = [
    ((1, 2, 13), {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "ceil_mode": 1}),
    (
        (2, 3, 9, 10),
        {"kernel_shape": [3, 2], "strides": [2, 2], "dilations": [2, 1], "pads": [1, 0, 2, 1]},
    ),
    ((1, 2, 8, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    (
        (1, 2, 8, 7),
        {"kernel_shape": [2, 3], "strides": [3, 2], "ceil_mode": 1, "pads": [1, 1, 1, 1]},
    ),
    (
        (1, 1, 5, 6, 7),
        {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "pads": [0, 1, 1, 1, 1, 0]},
    ),
]


@pytest.mark.parametrize("cfg", POOL_CONFIGS, ids=[str(i) for i in range(len(POOL_CONFIGS))])
def test_pools_against_onnxruntime(cfg):
    shape, attrs = cfg
    rng = np.random.default_rng(len(shape) * 11)
    X = rand(rng, *shape)
    check("MaxPool", [X], attrs, n_out=2, opset=12)
    no_dil = {k: v for k, v in attrs.items() if k not in ("dilations", "ceil_mode")}
    check("AveragePool", [X], attrs, opset=19)
    check("AveragePool", [X], {**attrs, "count_include_pad": 1}, opset=19)
    check("LpPool", [X], {**no_dil, "p": 3}, opset=11, rtol=1e-4)


def test_maxpool_indices_storage_order_and_unpool_round_trip():
    rng = np.random.default_rng(5)
    X = rand(rng, 2, 3, 6, 5)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "storage_order": 1}
    check("MaxPool", [X], attrs, n_out=2, opset=12)
    # MaxPool's indices address X (here 6x5 planes). MaxUnpool without output_shape rebuilds
    # the default shape (in - 1) * stride + kernel = 6x4, so a round trip needs a width that
    # the 2x2/2 pooling covers exactly (with 6x5, index 146 of X has no place in 2*3*6*4).
    X = X[..., :4].copy()
    y, idx = onnx_ops.run("MaxPool", [X], {"kernel_shape": [2, 2], "strides": [2, 2]})
    back = check("MaxUnpool", [y, idx], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11)[0]
    # independent formula: each 2x2 window keeps only its maximum, at its place
    win = X.reshape(2, 3, 3, 2, 2, 2)
    keep = win == win.max(axis=(3, 5), keepdims=True)
    np.testing.assert_array_equal(back, np.where(keep, win, 0).reshape(X.shape))
    # With output_shape, onnxruntime reads I as indices of the bigger output, while the ONNX
    # node case test_maxunpool_export_with_output_shape (which we follow) keeps the
    # coordinates of the default unpooled shape; so compare with numpy instead.
    big = onnx_ops.run(
        "MaxUnpool",
        [y, idx, np.array([2, 3, 7, 6], np.int64)],
        {"kernel_shape": [2, 2], "strides": [2, 2]},
    )[0]
    small = onnx_ops.run("MaxUnpool", [y, idx], {"kernel_shape": [2, 2], "strides": [2, 2]})[0]
    assert big.shape == (2, 3, 7, 6)
    np.testing.assert_array_equal(big[:, :, :6, :4], small)
    assert not big[:, :, 6:, :].any() and not big[:, :, :, 4:].any()


def test_maxpool_uint8_keeps_dtype():
    X = np.random.default_rng(1).integers(0, 255, (1, 2, 6, 6)).astype(np.uint8)
    check("MaxPool", [X], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, opset=12)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_pools_against_onnxruntime(p):
    rng = np.random.default_rng(p)
    X = rand(rng, 2, 3, 4, 5)
    check("GlobalLpPool", [X], {"p": p})
    check("GlobalAveragePool", [rand(rng, 2, 3, 7)], {})
    check("GlobalMaxPool", [rand(rng, 1, 2, 3, 4, 2)], {})


def test_max_roi_pool_against_onnxruntime():
    rng = np.random.default_rng(9)
    X = rand(rng, 2, 3, 12, 10)
    rois = np.array(
        [[0, 1, 1, 6, 8], [1, 0, 2, 9, 11], [0, 3.4, 2.6, 5.2, 4.9], [1, 2, 2, 2, 2]], np.float32
    )
    check("MaxRoiPool", [X, rois], {"pooled_shape": [3, 2], "spatial_scale": 1.0})
    check("MaxRoiPool", [X, rois], {"pooled_shape": [2, 4], "spatial_scale": 0.5})


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_against_onnxruntime(mode):
    rng = np.random.default_rng(4)
    X = rand(rng, 2, 2, 9, 8)
    rois = np.array([[0.5, 1.0, 6.2, 7.7], [2.0, 0.0, 7.9, 3.5], [1.0, 1.0, 1.5, 2.0]], np.float32)
    bi = np.array([0, 1, 1], np.int64)
    for ctm in ("half_pixel", "output_half_pixel"):
        attrs = {
            "mode": mode,
            "output_height": 3,
            "output_width": 4,
            "sampling_ratio": 0,
            "spatial_scale": 0.9,
            "coordinate_transformation_mode": ctm,
        }
        check("RoiAlign", [X, rois, bi], attrs, opset=16)


def test_batchnorm_instancenorm_lrn_against_onnxruntime():
    rng = np.random.default_rng(2)
    X = rand(rng, 2, 5, 4, 3)
    s, b, m = rand(rng, 5), rand(rng, 5), rand(rng, 5)
    v = np.abs(rand(rng, 5)) + 0.1
    check("BatchNormalization", [X, s, b, m, v], {"epsilon": 1e-3})
    check("InstanceNormalization", [X, s, b], {"epsilon": 1e-4})
    check("LRN", [X], {"size": 5, "alpha": 0.01, "beta": 0.6, "bias": 1.5})
    check("MeanVarianceNormalization", [X], {"axes": [0, 2]}, atol=1e-4)
    check("LpNormalization", [X], {"axis": 2, "p": 1})


@pytest.mark.parametrize(
    "xdt,pdt", [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64)]
)
def test_batchnorm_inference_numpy_formula(xdt, pdt):
    """Inference BatchNormalization with parameters of X's dtype (used as given) and of
    another dtype (converted): the per-channel affine map worked out in float64."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((2, 3, 5, 4)).astype(xdt)
    s, b, m = (rng.standard_normal(3).astype(pdt) for _ in range(3))
    v = (np.abs(rng.standard_normal(3)) + 0.1).astype(pdt)
    got = onnx_ops.run("BatchNormalization", [X, s, b, m, v], {"epsilon": 1e-3}, opset=15)[0]
    a = s.astype(np.float64) / np.sqrt(v.astype(np.float64) + 1e-3)
    exp = (X.astype(np.float64) - m.astype(np.float64)[None, :, None, None]) * a[
        None, :, None, None
    ] + b.astype(np.float64)[None, :, None, None]
    assert got.dtype == xdt and got.shape == X.shape
    tol = 1e-5 if xdt == np.float32 else 1e-12
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol)


def test_batchnorm_training_mode_numpy_formula():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((3, 2, 4)).astype(np.float64)
    s, b, m, v = (rng.standard_normal(2) for _ in range(4))
    v = np.abs(v)
    y, rm, rv = onnx_ops.run(
        "BatchNormalization",
        [X, s, b, m, v],
        {"training_mode": 1, "momentum": 0.8, "epsilon": 1e-5},
        opset=15,
    )
    bm, bv = X.mean(axis=(0, 2)), X.var(axis=(0, 2))
    exp = (X - bm[None, :, None]) / np.sqrt(bv[None, :, None] + 1e-5) * s[None, :, None] + b[
        None, :, None
    ]
    np.testing.assert_allclose(y, exp, rtol=1e-12)
    np.testing.assert_allclose(rm, 0.8 * m + 0.2 * bm, rtol=1e-12)
    np.testing.assert_allclose(rv, 0.8 * v + 0.2 * bv, rtol=1e-12)


def test_quantized_conv_and_matmul_against_onnxruntime():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 255, (1, 4, 7, 6)).astype(np.uint8)
    w = rng.integers(0, 255, (6, 2, 3, 3)).astype(np.uint8)
    attrs = {"group": 2, "pads": [1, 1, 0, 1], "strides": [1, 2]}
    u8, f32 = (lambda v: np.array(v, np.uint8)), (lambda v: np.array(v, np.float32))
    check("ConvInteger", [x, w, u8(120), u8(130)], attrs, opset=10)
    wi = rng.integers(-127, 127, (6, 2, 3, 3)).astype(np.int8)
    B = rng.integers(-500, 500, 6).astype(np.int32)
    ws = (rng.random(6) * 0.01 + 0.001).astype(np.float32)
    args = [x, f32(0.02), u8(128), wi, ws, np.zeros(6, np.int8), f32(0.5), u8(100), B]
    # Full-range int8 weights: onnxruntime's u8s8 x86 kernels add pairs of products in
    # saturating int16 (the known 8-bit "saturation issue" of AVX2 without VNNI), so its codes
    # drift by a few units; the ONNX formula is exact integer accumulation, checked in numpy.
    got = onnx_ops.run("QLinearConv", args, attrs, opset=10)[0]
    xp = np.pad(x.astype(np.int64) - 128, ((0, 0), (0, 0), (1, 0), (1, 1)))
    acc = np.zeros(got.shape, np.int64)
    for m in range(6):
        g = m // 3
        for i in range(got.shape[2]):
            for j in range(got.shape[3]):
                patch = xp[0, 2 * g : 2 * g + 2, i : i + 3, 2 * j : 2 * j + 3]
                acc[0, m, i, j] = (patch * wi[m].astype(np.int64)).sum() + B[m]
    real = acc * (0.02 * ws.astype(np.float64)[None, :, None, None] / 0.5)
    np.testing.assert_array_equal(got, np.clip(np.rint(real) + 100, 0, 255).astype(np.uint8))
    # 7-bit weights stay clear of that saturation: there onnxruntime agrees code for code.
    args[3] = (wi // 2).astype(np.int8)
    check("QLinearConv", args, attrs, opset=10)
    a = rng.integers(0, 255, (2, 5, 7)).astype(np.uint8)
    bm = rng.integers(0, 255, (7, 3)).astype(np.uint8)
    check(
        "QLinearMatMul",
        [a, f32(0.03), u8(110), bm, f32(0.02), u8(140), f32(0.3), u8(90)],
        {},
        opset=10,
    )


def test_quantize_dequantize_against_onnxruntime():
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((2, 3, 4)) * 50).astype(np.float32)
    sc = np.array([0.5, 0.3, 0.7], np.float32)
    zp = np.array([-3, 0, 5], np.int8)
    q = check("QuantizeLinear", [x, sc, zp], {"axis": 1})[0]
    check("DequantizeLinear", [q, sc, zp], {"axis": 1})
    check("QuantizeLinear", [x, np.array(0.4, np.float32)], {})
    check("DynamicQuantizeLinear", [x], {}, n_out=3, opset=11)


def test_quantize_blocked_int16_numpy_formula():
    x = np.array([[6, -8, -10, 5], [1, 8, 4, 5], [0, 20, 10, 4]], np.float32)
    s = np.array([[1.5, 2.5], [3, 4.9], [5.1, 6.9]], np.float32)
    y = onnx_ops.run(
        "QuantizeLinear", [x, s], {"axis": 1, "block_size": 2, "output_dtype": 5}, opset=21
    )[0]
    full = np.repeat(s, 2, axis=1)
    assert y.dtype == np.int16
    np.testing.assert_array_equal(y, np.rint(x / full).astype(np.int16))


RESIZE_CONFIGS = [
    ({"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"}, (1.7, 0.6)),
    ({"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}, (0.7, 2.3)),
    # (onnxruntime's align_corners takes the integer output length, ONNX the real length
    # scale * input; they agree when that product is an integer)
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, (0.5, 2.0)),
    ({"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, (1.5, 3.0)),
    (
        {
            "mode": "nearest",
            "nearest_mode": "ceil",
            "coordinate_transformation_mode": "tf_half_pixel_for_nn",
        },
        (1.3, 0.8),
    ),
    ({"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, (2.0, 0.5)),
]


@pytest.mark.parametrize("cfg", RESIZE_CONFIGS, ids=[str(i) for i in range(len(RESIZE_CONFIGS))])
def test_resize_against_onnxruntime(cfg):
    attrs, (sh, sw) = cfg
    rng = np.random.default_rng(12)
    X = rand(rng, 2, 3, 6, 7)
    scales = np.array([1, 1, sh, sw], np.float32)
    check("Resize", [X, None, scales], attrs, opset=13)
    sizes = np.array([2, 3, 9, 4], np.int64)
    check("Resize", [X, None, None, sizes], attrs, opset=13)


def test_resize10_and_upsample_against_onnxruntime():
    rng = np.random.default_rng(13)
    X = rand(rng, 1, 2, 5, 6)
    for scales in ([1, 1, 0.5, 0.7], [1, 1, 2.0, 1.5]):
        s = np.array(scales, np.float32)
        check("Resize", [X, s], {"mode": "nearest"}, opset=10)
        check("Resize", [X, s], {"mode": "linear"}, opset=10)
    s = np.array([1, 1, 2.0, 3.0], np.float32)
    check("Upsample", [X, s], {"mode": "linear"}, opset=9)


def test_errors_say_what_was_expected():
    X = np.zeros((1, 2, 5, 5), np.float32)
    with pytest.raises(MDFError, match="group"):
        onnx_ops.run("Conv", [X, np.zeros((4, 3, 3, 3), np.float32)], {"group": 1})
    with pytest.raises(MDFError, match="does not fit"):
        onnx_ops.run("MaxPool", [X], {"kernel_shape": [7, 7]})
    with pytest.raises(MDFError, match="auto_pad"):
        onnx_ops.run("AveragePool", [X], {"kernel_shape": [2, 2], "auto_pad": "SAME"})
    with pytest.raises(MDFError, match="exactly one"):
        onnx_ops.run("Resize", [X, None, np.ones(4, np.float32), np.ones(4, np.int64)])
    with pytest.raises(MDFError, match="size"):
        onnx_ops.run("LRN", [X], {"size": 0})
    with pytest.raises(MDFError, match="scalar or have"):
        onnx_ops.run("QuantizeLinear", [X, np.ones(3, np.float32)], {"axis": 1})
