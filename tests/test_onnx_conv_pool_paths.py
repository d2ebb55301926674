"""The fast code paths of Conv, MaxPool and AveragePool/LpPool against onnxruntime and
independent numpy formulas, on shapes chosen to pick each path.

Conv has five kernels (``mdf_engine/onnx_ops/conv.py`` over ``_im2col.py``, ``_conv_shift.py``
and ``_conv_simd.py``): direct accumulation (depthwise-like groups and tiny problems), vector
tiles over shifted slices of the padded (for strides, phase-split) input for every other
convolution up to ``SHIFT_MAX_MACS`` multiply-adds, a 1x1 convolution as a product (by the
tiles reading the input in place), and above that im2col tiles
with the thin-filter product ``gemm_small`` or BLAS (run directly on smaller shapes here). Every
case below asserts which path it takes, and covers interior and border windows, strides,
dilations, groups, pads / auto_pad, 1-D/2-D/3-D, float32 and float64, partial vectors and an odd
number of filters. The 2-D pools run by row then column passes whose interior windows are
unit-stride (or phase-split strided) loops; their cases cover strides 1-3, dilations, ceil_mode, pads on
either side, storage_order and ties (Indices must name the first maximum in row-major window order).
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import onnx_ops
from mdf_engine.errors import MDFError
from mdf_engine.onnx_ops import _im2col
from mdf_engine.onnx_ops import conv as conv_mod
from mdf_engine.onnx_ops._conv_shift import SHIFT_MAX_MACS

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402
from onnx_cases import ort_run  # noqa: E402


def _rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def conv_path(
    x: np.ndarray, w: np.ndarray, group: int, out_pixels: int, bias: bool, attrs: dict
) -> str:
    """The kernel Conv picks for these shapes (the module's own rule)."""
    m = w.shape[0]
    if conv_mod._use_direct(x.shape[0], m, m // group, w[0].size, out_pixels):
        return "direct"
    strides = attrs.get("strides") or [1] * (x.ndim - 2)
    one = w[0].size == w.shape[1] and not any(attrs.get("pads") or [0])
    if one and group == 1 and all(v == 1 for v in strides) and "auto_pad" not in attrs:
        return "tiles1x1"
    if m // group * w[0].size * out_pixels <= SHIFT_MAX_MACS:
        return "shift"
    return im2col_product(m // group, w[0].size + (1 if bias else 0), out_pixels)


def im2col_product(mg: int, ka: int, pixels: int) -> str:
    """The product the im2col kernel uses (``conv.conv3d``)."""
    return "small" if _im2col.use_gemm_small(mg, ka, pixels) else "blas"


# (x shape, w shape, attributes, expected path)
CONV_CASES = [
    # depthwise, padded borders, stride 1 and 2
    ((1, 16, 20, 20), (16, 1, 3, 3), {"pads": [1, 1, 1, 1], "group": 16}, "direct"),
    ((2, 8, 17, 15), (8, 1, 3, 3), {"pads": [0, 2, 1, 0], "group": 8, "strides": [2, 2]}, "direct"),
    # channel multiplier 2, dilation 2, stride 3 along the rows
    (
        (1, 6, 19, 21),
        (12, 1, 3, 3),
        {"group": 6, "dilations": [2, 2], "strides": [1, 3], "pads": [2, 2, 2, 2]},
        "direct",
    ),
    ((1, 4, 16, 16), (8, 4, 3, 3), {"pads": [1, 1, 1, 1]}, "shift"),
    ((1, 3, 12), (5, 3, 5), {"auto_pad": "SAME_UPPER", "strides": [2]}, "direct"),
    # strides, dilations, pads by the vector tiles over a phase-split input (these were the
    # im2col cases: IM2COL_CASES runs them through the im2col kernel as well)
    ((1, 3, 100, 100), (7, 3, 3, 3), {"pads": [1, 1, 1, 1]}, "shift"),
    ((2, 3, 64, 60), (16, 3, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1]}, "shift"),
    ((1, 2, 70, 66), (10, 2, 3, 3), {"dilations": [2, 3], "pads": [0, 3, 2, 0]}, "shift"),
    ((1, 2, 141, 128), (12, 2, 2, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}, "shift"),
    ((1, 1, 4000), (64, 1, 7), {"strides": [3], "pads": [3, 2]}, "shift"),
    ((2, 4, 30, 30), (12, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}, "shift"),
    # groups, strides, 1-D, 3-D, VALID
    ((2, 8, 40, 40), (8, 8, 3, 3), {"pads": [1, 1, 1, 1]}, "shift"),
    ((1, 8, 48, 48), (16, 4, 3, 3), {"group": 2, "strides": [2, 1], "pads": [1, 1, 1, 1]}, "shift"),
    ((1, 32, 40, 40), (24, 32, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, "shift"),
    ((1, 16, 60, 60), (8, 16, 5, 5), {"auto_pad": "VALID", "dilations": [2, 1]}, "shift"),
    ((2, 16, 500), (32, 16, 5), {"pads": [2, 2], "dilations": [2], "strides": [2]}, "shift"),
    (
        (1, 2, 10, 12, 12),
        (8, 2, 3, 3, 3),
        {"pads": [1, 0, 1, 1, 2, 1], "strides": [2, 1, 1]},
        "shift",
    ),
    # stride 1 by shifted slices of the padded input (_conv_shift.py): 1-D, 3-D, odd filter
    # counts (blocks of 4 and 1), tap counts not a multiple of 4, non-square and even kernels,
    # 1x1 with pads, rows wider than one accumulator chunk, groups of more than 4 filters
    ((2, 16, 500), (32, 16, 5), {"pads": [2, 2], "dilations": [2]}, "shift"),
    ((1, 2, 10, 12, 12), (8, 2, 3, 3, 3), {"pads": [1, 0, 1, 1, 2, 1]}, "shift"),
    ((1, 5, 9, 11), (7, 5, 5, 3), {"pads": [2, 0, 1, 1], "dilations": [1, 2]}, "shift"),
    ((1, 6, 30, 30), (8, 6, 1, 1), {"pads": [1, 0, 0, 1]}, "shift"),
    ((1, 2, 4, 700), (9, 2, 3, 3), {"pads": [1, 1, 1, 1]}, "shift"),
    ((1, 3, 30, 28), (6, 3, 2, 2), {"auto_pad": "SAME_LOWER"}, "shift"),
    ((1, 6, 12, 12), (18, 2, 3, 3), {"group": 3, "pads": [0, 1, 2, 1]}, "shift"),
    # strides 2-3 with dilations and kernels narrower or wider than the stride
    (
        (1, 4, 33, 31),
        (8, 4, 5, 4),
        {"strides": [3, 2], "dilations": [2, 3], "pads": [1, 2, 3, 0]},
        "shift",
    ),
    ((1, 8, 49, 61), (12, 8, 1, 1), {"strides": [2, 3]}, "shift"),
    ((1, 3, 57, 57), (20, 3, 3, 3), {"strides": [2, 2]}, "shift"),
    # rows sharing their padding columns: pads wider on the left, on the right, dilated
    ((1, 4, 11, 9), (8, 4, 3, 5), {"pads": [1, 3, 2, 0], "dilations": [1, 2]}, "shift"),
    ((1, 4, 11, 9), (8, 4, 3, 3), {"pads": [0, 0, 0, 4]}, "shift"),
    ((1, 48, 13, 13), (20, 48, 3, 3), {"pads": [1, 1, 1, 1]}, "shift"),
    # 1x1 by the vector tiles read in place: pixels fewer than a vector, a last partial
    # vector, chunks of pixels (2048 channels: the last chunk shorter than a vector), odd M
    ((2, 40, 5, 3), (37, 40, 1, 1), {}, "tiles1x1"),
    ((1, 48, 13, 13), (19, 48, 1, 1), {}, "tiles1x1"),
    ((1, 2048, 10, 7), (5, 2048, 1, 1), {}, "tiles1x1"),
    ((2, 64, 9, 40), (20, 64, 1, 1), {"strides": [1, 1]}, "tiles1x1"),
    ((1, 3, 30, 30), (24, 3, 1, 1), {}, "tiles1x1"),
]

#: The cases above that the im2col kernel (``conv.conv3d``: above ``SHIFT_MAX_MACS``) also runs,
#: with the product it uses for them.
IM2COL_CASES = [
    ((2, 3, 64, 60), (16, 3, 3, 3), {"strides": [2, 2], "pads": [1, 0, 2, 1]}, "small"),
    ((1, 2, 141, 128), (12, 2, 2, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}, "small"),
    ((1, 1, 4000), (64, 1, 7), {"strides": [3], "pads": [3, 2]}, "small"),
    ((1, 8, 48, 48), (16, 4, 3, 3), {"group": 2, "strides": [2, 1], "pads": [1, 1, 1, 1]}, "blas"),
    ((1, 32, 40, 40), (24, 32, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, "blas"),
    ((1, 16, 60, 60), (8, 16, 5, 5), {"auto_pad": "VALID", "dilations": [2, 1]}, "blas"),
    ((2, 16, 500), (32, 16, 5), {"pads": [2, 2], "dilations": [2], "strides": [2]}, "blas"),
]


@pytest.mark.parametrize(
    "xs,ws,attrs,path", CONV_CASES, ids=[f"{c[3]}-{i}" for i, c in enumerate(CONV_CASES)]
)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_paths_match_onnxruntime(xs, ws, attrs, path, bias):
    rng = np.random.default_rng(abs(hash((xs, ws))) % 2**32)
    x, w = _rand(rng, *xs), _rand(rng, *ws)
    b = _rand(rng, ws[0]) if bias else None
    exp = ort_run("Conv", [x, w, b], attrs)[0]
    assert conv_path(x, w, attrs.get("group", 1), int(np.prod(exp.shape[2:])), bias, attrs) == path
    got = onnx_ops.run("Conv", [x, w, b], attrs)[0]
    assert got.dtype == np.float32 and got.shape == exp.shape
    np.testing.assert_allclose(got, exp, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize(
    "xs,ws,attrs,product", IM2COL_CASES, ids=[f"{c[3]}-{i}" for i, c in enumerate(IM2COL_CASES)]
)
def test_im2col_kernel_matches_onnxruntime(xs, ws, attrs, product):
    """The im2col kernel (convolutions above ``SHIFT_MAX_MACS``), called on smaller shapes."""
    rng = np.random.default_rng(abs(hash((xs, ws))) % 2**32)
    x, w, b = _rand(rng, *xs), _rand(rng, *ws), _rand(rng, ws[0])
    exp = ort_run("Conv", [x, w, b], attrs)[0]
    key = conv_mod.geometry_key(
        *(attrs.get(k, conv_mod.CONV_ATTRS[k]) for k in conv_mod._GEOMETRY_ATTRS)
    )
    group, g, _, shape5, out_shape = conv_mod._conv_geometry(x, w, key, "Conv")
    assert im2col_product(ws[0] // group, w[0].size + 1, int(np.prod(out_shape[2:]))) == product
    with conv_mod.blas_threads_for(0):
        got = conv_mod.conv3d_g(x.reshape(shape5), w.reshape(ws[0], -1), b, True, g)
    np.testing.assert_allclose(got.reshape(out_shape), exp, rtol=1e-4, atol=2e-4)


def conv_numpy(x, w, b, pads, strides, dilations, group):
    """Grouped 2-D convolution by explicit zero padding and sliding windows (float64)."""
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    kh, kw = w.shape[2:]
    ek = ((kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1)
    win = sliding_window_view(x, ek, axis=(2, 3))[
        :, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]
    ]
    cg, mg = x.shape[1] // group, w.shape[0] // group
    outs = [
        np.einsum("nchwij,mcij->nmhw", win[:, g * cg : (g + 1) * cg], w[g * mg : (g + 1) * mg])
        for g in range(group)
    ]
    return np.concatenate(outs, axis=1) + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize(
    "xs,ws,pads,strides,dil,group,path",
    [
        ((1, 6, 15, 17), (6, 1, 3, 3), (1, 1, 1, 1), (1, 2), (1, 1), 6, "direct"),
        ((1, 3, 80, 70), (9, 3, 3, 3), (2, 1, 0, 1), (1, 1), (2, 1), 1, "shift"),
        ((2, 12, 64, 64), (12, 6, 3, 3), (1, 1, 1, 1), (2, 2), (1, 2), 2, "shift"),
        ((1, 40, 9, 11), (10, 40, 1, 1), (0, 0, 0, 0), (1, 1), (1, 1), 1, "tiles1x1"),
    ],
)
def test_conv_paths_float64_match_numpy(xs, ws, pads, strides, dil, group, path):
    rng = np.random.default_rng(7)
    x, w, b = (
        _rand(rng, *xs, dtype=np.float64),
        _rand(rng, *ws, dtype=np.float64),
        _rand(rng, ws[0], dtype=np.float64),
    )
    exp = conv_numpy(x, w, b, pads, strides, dil, group)
    attrs = {"strides": list(strides), "pads": list(pads)}
    assert conv_path(x, w, group, int(np.prod(exp.shape[2:])), True, attrs) == path
    got = onnx_ops.run(
        "Conv",
        [x, w, b],
        {"pads": list(pads), "strides": list(strides), "dilations": list(dil), "group": group},
    )[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12)


POOL_CASES = [
    ((1, 8, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 17, 19), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ((1, 4, 16, 16), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    (
        (1, 3, 23, 29),
        {"kernel_shape": [3, 4], "strides": [3, 3], "pads": [0, 2, 2, 1], "ceil_mode": 1},
    ),
    (
        (1, 2, 20, 25),
        {"kernel_shape": [3, 3], "dilations": [2, 3], "strides": [1, 2], "pads": [2, 1, 2, 2]},
    ),
    ((2, 2, 9, 31), {"kernel_shape": [5, 2], "auto_pad": "SAME_UPPER", "strides": [2, 3]}),
    ((1, 3, 14, 13), {"kernel_shape": [4, 3], "auto_pad": "SAME_LOWER", "strides": [1, 2]}),
    ((1, 2, 50), {"kernel_shape": [4], "strides": [3], "pads": [2, 1], "ceil_mode": 1}),
    ((1, 2, 12, 12), {"kernel_shape": [1, 1], "strides": [2, 2]}),
    # stride 1 (whole-plane loops): output wider than the input, as wide, narrower; 5 taps
    ((1, 2, 13, 12), {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}),
    ((1, 3, 20, 18), {"kernel_shape": [5, 4], "pads": [2, 1, 2, 2]}),
    ((2, 2, 15, 16), {"kernel_shape": [4, 5]}),
    ((1, 2, 16, 17), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
]


@pytest.mark.parametrize("xs,attrs", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maxpool_paths_match_onnxruntime(xs, attrs, dtype):
    rng = np.random.default_rng(len(xs) * 100 + xs[-1])
    x = _rand(rng, *xs, dtype=dtype)
    for order in (0, 1):
        a = {**attrs, "storage_order": order} if len(xs) == 4 else attrs
        exp = ort_run("MaxPool", [x], a, n_out=2)
        got = onnx_ops.run("MaxPool", [x], a)
        assert got[0].dtype == dtype and got[1].dtype == np.int64
        np.testing.assert_array_equal(got[0], exp[0])
        np.testing.assert_array_equal(got[1], exp[1])


@pytest.mark.parametrize("xs,attrs", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8])
def test_maxpool_values_only_match_onnxruntime(xs, attrs, dtype):
    """A MaxPool node without the Indices output (num_outputs=1) computes Y alone, on its own
    kernel: Y equal to a one-output onnxruntime node's (floats) or to our Y-and-Indices kernel
    (8-bit ints, checked against onnxruntime by the node cases)."""
    rng = np.random.default_rng(len(xs) * 10 + xs[-1])
    x = _rand(rng, *xs, dtype=np.float32)
    if np.dtype(dtype).kind in "iu":
        x = (x * 40 + (60 if dtype == np.uint8 else 0)).astype(dtype)
        exp = onnx_ops.run("MaxPool", [x], attrs)[0]
    else:
        x = x.astype(dtype)
        exp = ort_run("MaxPool", [x], attrs, n_out=1)[0]
    got = onnx_ops.run("MaxPool", [x], attrs, num_outputs=1)
    assert len(got) == 1 and got[0].dtype == dtype
    np.testing.assert_array_equal(got[0], exp)


@pytest.mark.parametrize("xs,attrs", POOL_CASES, ids=[str(i) for i in range(len(POOL_CASES))])
@pytest.mark.parametrize("include_pad", [0, 1])
def test_averagepool_paths_match_onnxruntime(xs, attrs, include_pad):
    rng = np.random.default_rng(xs[-1])
    x = _rand(rng, *xs)
    a = {**attrs, "count_include_pad": include_pad}
    exp = ort_run("AveragePool", [x], a, opset=19)[0]  # dilations: opset 19
    got = onnx_ops.run("AveragePool", [x], a, opset=19)[0]
    assert got.dtype == np.float32 and got.shape == exp.shape
    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lppool_paths_match_numpy(p):
    rng = np.random.default_rng(p)
    x = _rand(rng, 2, 3, 21, 18, dtype=np.float64)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "p": p}
    xp = np.pad(np.abs(x), ((0, 0), (0, 0), (1, 1), (0, 1)))
    win = sliding_window_view(xp, (3, 2), axis=(2, 3))[:, :, ::2, ::2]
    exp = (win**p).sum(axis=(-2, -1)) ** (1.0 / p)
    got = onnx_ops.run("LpPool", [x], attrs)[0]
    np.testing.assert_allclose(got, exp, rtol=1e-12)


def maxpool_numpy(x, k, s, pads):
    """Values and row-major flat indices of a 2-D max pool: -inf padding, first maximum."""
    n, c, h, w = x.shape
    xp = np.pad(
        x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf
    )
    rows = np.pad(np.arange(h), (pads[0], pads[2]), constant_values=-1)
    cols = np.pad(np.arange(w), (pads[1], pads[3]), constant_values=-1)
    win = sliding_window_view(xp, k, axis=(2, 3))[:, :, :: s[0], :: s[1]]
    flat = win.reshape(win.shape[:4] + (-1,))
    arg = flat.argmax(axis=-1)
    oi, oj = np.meshgrid(np.arange(win.shape[2]), np.arange(win.shape[3]), indexing="ij")
    r = rows[oi * s[0] + arg // k[1]]
    col = cols[oj * s[1] + arg % k[1]]
    plane = (np.arange(n)[:, None, None, None] * c + np.arange(c)[None, :, None, None]) * h * w
    return flat.max(axis=-1), plane + r * w + col


def test_maxpool_ties_pick_the_first_maximum():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=(2, 3, 30, 41)).astype(np.float32)  # many ties
    for k, s, pads in (
        ((3, 3), (2, 2), (1, 1, 1, 1)),
        ((2, 3), (1, 1), (0, 1, 1, 0)),
        ((3, 2), (3, 1), (0, 0, 2, 1)),
    ):
        exp_v, exp_i = maxpool_numpy(x, k, s, pads)
        got = onnx_ops.run(
            "MaxPool", [x], {"kernel_shape": list(k), "strides": list(s), "pads": list(pads)}
        )
        np.testing.assert_array_equal(got[0], exp_v)
        np.testing.assert_array_equal(got[1], exp_i)


CONVT_CASES = [  # few input channels: gemm_small; the 40-channel case: BLAS
    ((1, 16, 14, 14), (16, 8, 3, 3), {"strides": [2, 2], "pads": [1, 1, 0, 0]}),
    ((2, 40, 12, 12), (40, 6, 3, 3), {"strides": [2, 2], "pads": [1, 0, 1, 1]}),
    (
        (2, 4, 9, 11),
        (4, 3, 3, 2),
        {"strides": [3, 2], "dilations": [2, 1], "output_padding": [1, 0]},
    ),
    ((1, 6, 8, 8), (6, 2, 3, 3), {"group": 3, "strides": [2, 2], "pads": [2, 1, 2, 0]}),
    ((1, 3, 7, 9), (3, 5, 4, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 7, 9), (3, 5, 3, 3), {"strides": [2, 2], "output_shape": [16, 19]}),
    ((1, 4, 30), (4, 6, 5), {"strides": [1], "pads": [2, 3]}),
    ((1, 2, 4, 5, 6), (2, 3, 2, 3, 3), {"strides": [2, 1, 2], "pads": [0, 1, 1, 1, 0, 1]}),
]


@pytest.mark.parametrize("xs,ws,attrs", CONVT_CASES, ids=[str(i) for i in range(len(CONVT_CASES))])
@pytest.mark.parametrize("bias", [True, False])
def test_convtranspose_matches_onnxruntime(xs, ws, attrs, bias):
    rng = np.random.default_rng(xs[-1] * 7 + ws[1])
    x, w = _rand(rng, *xs), _rand(rng, *ws)
    g = attrs.get("group", 1)
    thin = _im2col.use_gemm_small(ws[1] * int(np.prod(ws[2:])), xs[1] // g, int(np.prod(xs[2:])))
    assert thin == (xs[1] // g <= 16)  # the cases cover both products
    b = _rand(rng, ws[1] * attrs.get("group", 1)) if bias else None
    exp = ort_run("ConvTranspose", [x, w, b], attrs)[0]
    got = onnx_ops.run("ConvTranspose", [x, w, b], attrs)[0]
    assert got.dtype == np.float32 and got.shape == exp.shape
    np.testing.assert_allclose(got, exp, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("shape", [(1, 64, 56, 56), (2, 3, 7), (1, 2, 3, 4, 5)])
def test_global_pools_match_numpy(shape):
    """The global pools' per-mode loops (the mean's sum is reassociated into vector partial
    sums) against numpy, in float64."""
    x = _rand(np.random.default_rng(len(shape)), *shape)
    axes = tuple(range(2, len(shape)))
    xd = x.astype(np.float64)
    for op, exp, attrs in (
        ("GlobalAveragePool", xd.mean(axis=axes, keepdims=True), {}),
        ("GlobalMaxPool", xd.max(axis=axes, keepdims=True), {}),
        ("GlobalLpPool", (np.abs(xd) ** 3).sum(axis=axes, keepdims=True) ** (1 / 3), {"p": 3}),
    ):
        got = onnx_ops.run(op, [x], attrs)[0]
        assert got.dtype == np.float32 and got.shape == exp.shape
        np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-7)


def test_geometry_memo_serves_array_attributes_and_new_shapes():
    """MaxPool, Conv and ConvTranspose memoize their window geometry per input shape and
    attributes: attributes given as numpy arrays (no memo key) give the same results as
    lists, and a second input shape gets its own geometry."""
    rng = np.random.default_rng(12)
    w = _rand(rng, 6, 3, 3, 3)
    wt = _rand(rng, 3, 4, 3, 3)
    for hw in ((9, 11), (14, 10)):
        x = _rand(rng, 1, 3, *hw)
        for op, ins, attrs in (
            ("MaxPool", [x], {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]}),
            ("Conv", [x, w, None], {"pads": [1, 0, 1, 1], "strides": [2, 1]}),
            ("ConvTranspose", [x, wt, None], {"strides": [2, 2], "pads": [1, 0, 0, 1]}),
        ):
            as_arrays = {k: np.array(v, dtype=np.int64) for k, v in attrs.items()}
            exp = ort_run(op, ins, attrs)[0]
            for a in (attrs, as_arrays):
                got = onnx_ops.run(op, ins, a, num_outputs=1)[0]
                np.testing.assert_allclose(got, exp, rtol=1e-4, atol=2e-4)


def test_convtranspose_rejects_a_bias_of_the_wrong_size():
    rng = np.random.default_rng(13)
    x, w = _rand(rng, 1, 2, 5, 5), _rand(rng, 2, 3, 3, 3)
    with pytest.raises(MDFError, match="bias B should have shape"):
        onnx_ops.run("ConvTranspose", [x, w, np.zeros(4, np.float32)], {})
