"""Early (opset 1-6, seeds 000/002), experimental (002) and modified (003) ONNX operator forms.

Every expected value is computed here by an independent numpy formula written in the test (or is
a literal example from the seed text). Legacy kernels are called through
``mdf_engine.onnx_ops.variants.legacy.call`` (the legacy schema, whether or not a standard version shadows
it) and, where registered, through ``onnx_ops.run`` at an early opset.
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import MDFError
from mdf_engine.onnx_ops import run
from mdf_engine.onnx_ops.variants import legacy
from mdf_engine.registry import REGISTRY

RNG = np.random.default_rng(1234)


def L(op, inputs, attrs=None, since=1):
    return legacy.call(op, inputs, attrs or {}, since=since)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ dispatch


def test_legacy_versions_are_picked_at_early_opsets():
    assert legacy.SCHEMAS, "no legacy schema was built"
    for (op, since), sch in legacy.SCHEMAS.items():
        picked = REGISTRY.lookup(sch.name, since)
        if (op, since) in legacy.SHADOWED:
            assert picked.namespace == "onnx" and picked.since == since
        else:
            assert picked is sch, f"{op}@{since}: registry picked {picked.namespace}"


def test_standard_versions_take_over_from_opset_7():
    for op in ("Add", "Sub", "Mul", "Div", "Pow", "And", "Equal", "Greater", "Less", "Gemm"):
        std = [v for v in REGISTRY.versions("onnx::" + op) if v.namespace == "onnx"]
        if not std:
            continue
        assert REGISTRY.lookup("onnx::" + op, 7).namespace == "onnx"


# ------------------------------------------------------------------ limited broadcast

A4 = rand(2, 3, 4, 5)
SEED_PAIRS = [  # the shape pairs listed in seed 000/002 for Add's broadcast
    (np.array(1.5), None, (1, 1, 1, 1)),
    (rand(5), None, (1, 1, 1, 5)),
    (rand(4, 5), None, (1, 1, 4, 5)),
    (rand(3, 4), 1, (1, 3, 4, 1)),
    (rand(2), 0, (2, 1, 1, 1)),
]
ARITH = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


@pytest.mark.parametrize("op", sorted(ARITH))
@pytest.mark.parametrize("k", range(len(SEED_PAIRS)))
def test_arith_seed_broadcast_examples(op, k):
    B, axis, bshape = SEED_PAIRS[k]
    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    got = L(op, [A4, B], attrs)[0]
    Bx = np.reshape(B, bshape)
    exp = np.empty_like(A4)
    for idx in np.ndindex(A4.shape):
        bidx = tuple(i if s > 1 else 0 for i, s in zip(idx, bshape))
        exp[idx] = ARITH[op](A4[idx], Bx[bidx])
    assert got.shape == A4.shape and got.dtype == A4.dtype
    np.testing.assert_allclose(got, exp, rtol=1e-12)


def test_arith_via_run_at_opset_6_and_consumed_inputs():
    if ("Add", 1) in legacy.SHADOWED:
        pytest.skip("a standard Add is registered at since=1")
    B = rand(3, 4)
    got = run("Add", [A4, B], {"broadcast": 1, "axis": 1, "consumed_inputs": [0, 0]}, opset=6)[0]
    np.testing.assert_allclose(got, A4 + B[None, :, :, None])


def test_arith_no_broadcast_needs_same_shape():
    x = rand(3, 4)
    y = rand(3, 4)
    np.testing.assert_allclose(L("Sub", [x, y])[0], x - y)
    with pytest.raises(MDFError, match="same shape"):
        L("Add", [x, rand(4)])


@pytest.mark.parametrize("B,axis", [(rand(3), None), (rand(4, 5), 0), (rand(6), None)])
def test_arith_bad_broadcast_is_mdf_error(B, axis):
    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    with pytest.raises(MDFError, match="contiguous run"):
        L("Mul", [A4, B], attrs)


def test_arith_dtypes_and_int_div():
    a = np.array([[7, -7, 9], [-9, 5, 4]], dtype=np.int64)
    b = np.array([2, 2, -4], dtype=np.int64)
    got = L("Div", [a, b], {"broadcast": 1})[0]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.trunc(a / b[None, :]).astype(np.int64))
    f = rand(3, 2, dtype=np.float32)
    g = L("Add", [f, np.float32(2)], {"broadcast": 1})[0]
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, f + 2, rtol=1e-6)


def test_pow_seed000_exponent_and_broadcast():
    x = np.abs(rand(2, 3)) + 0.1
    np.testing.assert_allclose(L("Pow", [x], {"exponent": 2.5})[0], np.exp(2.5 * np.log(x)))
    y = rand(3)
    got = L("Pow", [x, y], {"broadcast": 1})[0]
    np.testing.assert_allclose(got, np.exp(y[None, :] * np.log(x)))
    with pytest.raises(MDFError, match="exponent"):
        L("Pow", [x])


@pytest.mark.parametrize("op,fn", [("Equal", np.equal), ("Greater", np.greater), ("Less", np.less)])
def test_comparisons_legacy(op, fn):
    a = RNG.integers(0, 3, (2, 3, 4)).astype(np.int64)
    b = RNG.integers(0, 3, (3,)).astype(np.int64)
    got = L(op, [a, b], {"broadcast": 1, "axis": 1})[0]
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, fn(a, b.reshape(1, 3, 1)))


@pytest.mark.parametrize(
    "op,fn", [("And", np.logical_and), ("Or", np.logical_or), ("Xor", np.logical_xor)]
)
def test_logic_legacy(op, fn):
    a = RNG.random((3, 4)) > 0.5
    b = RNG.random((4,)) > 0.5
    np.testing.assert_array_equal(L(op, [a, b], {"broadcast": 1})[0], fn(a, b[None, :]))
    with pytest.raises(MDFError, match="bool"):
        L(op, [a.astype(np.float64), a.astype(np.float64)])


# ------------------------------------------------------------------ Gemm, Dot


def test_gemm_broadcast_and_transposes():
    a = rand(4, 3)
    b = rand(5, 4)
    c = rand(5)
    got = L(
        "Gemm", [a, b, c], {"alpha": 0.5, "beta": 2.0, "broadcast": 1, "transA": 1, "transB": 1}
    )[0]
    exp = np.array(
        [
            [0.5 * sum(a[k, i] * b[j, k] for k in range(4)) + 2.0 * c[j] for j in range(5)]
            for i in range(3)
        ]
    )
    np.testing.assert_allclose(got, exp, rtol=1e-12)
    cs = L("Gemm", [a.T, b.T, np.array(3.0)], {"broadcast": 1})[0]
    np.testing.assert_allclose(cs, a.T @ b.T + 3.0, rtol=1e-12)


def test_gemm_without_broadcast_needs_full_c():
    a, b = rand(2, 3), rand(3, 4)
    c = rand(2, 4)
    np.testing.assert_allclose(L("Gemm", [a, b, c])[0], a @ b + c, rtol=1e-12)
    with pytest.raises(MDFError, match="broadcast=0"):
        L("Gemm", [a, b, rand(4)])


@pytest.mark.parametrize(
    "xs,ys",
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((2, 3), (3, 4)),
        ((2, 3, 4), (5, 4, 6)),
        ((4,), (2, 4, 3)),
        ((), (2, 2)),
    ],
)
def test_dot_is_numpy_dot(xs, ys):
    x = rand(*xs)
    y = rand(*ys)
    got = L("Dot", [x, y])[0]
    if x.ndim == 0 or y.ndim == 0:
        exp = x * y
    elif y.ndim == 1:
        exp = (x * y).sum(-1)
    else:  # sum over the last axis of x and the second-to-last axis of y
        exp = np.einsum("...k,bkn->...bn", x, y.reshape(-1, *y.shape[-2:])).reshape(
            x.shape[:-1] + y.shape[:-2] + y.shape[-1:]
        )
    np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12)


def test_dot_misaligned():
    with pytest.raises(MDFError, match="aligned"):
        L("Dot", [rand(2, 3), rand(4, 2)])


# ------------------------------------------------------------------ Softmax family


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1])
def test_softmax_family_coerces_to_2d(axis):
    x = rand(2, 3, 4, 5)
    a = axis % 4
    n = int(np.prod(x.shape[:a]))
    x2 = x.reshape(n, -1)
    e = np.exp(x2 - x2.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        L("Softmax", [x], {"axis": axis})[0], sm.reshape(x.shape), rtol=1e-12
    )
    np.testing.assert_allclose(
        L("LogSoftmax", [x], {"axis": axis})[0], np.log(sm).reshape(x.shape), rtol=1e-10, atol=1e-12
    )
    hm = (x2 == x2.max(axis=1, keepdims=True)).astype(np.float64)
    np.testing.assert_array_equal(L("Hardmax", [x], {"axis": axis})[0], hm.reshape(x.shape))


def test_softmax_default_axis_is_1():
    x = rand(2, 3, 4)
    s = L("Softmax", [x])[0]
    np.testing.assert_allclose(s.reshape(2, -1).sum(axis=1), [1.0, 1.0])


def test_hardmax_first_maximum():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(L("Hardmax", [x])[0], [[0, 1, 0], [1, 0, 0]])


# ------------------------------------------------------------------ unary and variadic

UNARY = {
    "Abs": np.abs,
    "Ceil": np.ceil,
    "Floor": np.floor,
    "Neg": np.negative,
    "Reciprocal": lambda v: 1 / v,
    "Relu": lambda v: np.maximum(v, 0),
    "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "Exp": np.exp,
    "Tanh": np.tanh,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_with_consumed_inputs(op):
    x = rand(3, 4)
    got = L(op, [x], {"consumed_inputs": [0]})[0]
    np.testing.assert_allclose(got, UNARY[op](x), rtol=1e-12)


def test_log_sqrt_and_parametric_unary():
    x = np.abs(rand(5)) + 0.5
    np.testing.assert_allclose(L("Log", [x])[0], np.log(x))
    np.testing.assert_allclose(L("Sqrt", [x])[0], x**0.5)
    y = rand(20)
    np.testing.assert_allclose(
        L("Elu", [y], {"alpha": 0.7})[0], np.where(y >= 0, y, 0.7 * (np.exp(y) - 1))
    )
    np.testing.assert_allclose(L("LeakyRelu", [y])[0], np.where(y >= 0, y, 0.01 * y))
    np.testing.assert_allclose(
        L("Selu", [y])[0], np.where(y > 0, 1.0507 * y, 1.0507 * 1.6732 * (np.exp(y) - 1))
    )


def test_prelu_per_channel():
    x = rand(2, 3, 4)
    s = rand(3)
    exp = np.where(x < 0, x * s[None, :, None], x)
    np.testing.assert_allclose(L("PRelu", [x, s])[0], exp)
    np.testing.assert_allclose(L("PRelu", [x, np.array([0.25])])[0], np.where(x < 0, x / 4, x))


@pytest.mark.parametrize("op,fn", [("Max", np.maximum), ("Min", np.minimum), ("Sum", np.add)])
def test_variadic_same_shape(op, fn):
    xs = [rand(2, 3) for _ in range(3)]
    np.testing.assert_allclose(L(op, xs)[0], fn(fn(xs[0], xs[1]), xs[2]))
    with pytest.raises(MDFError, match="same shape"):
        L(op, [rand(2, 3), rand(3)])


# ------------------------------------------------------------------ shape ops with attributes


def test_reshape_attribute():
    x = rand(2, 3, 4)
    got = L("Reshape", [x], {"shape": [0, -1]})[0]
    assert got.shape == (2, 12)
    np.testing.assert_array_equal(got.ravel(), x.ravel())


def test_slice_seed_examples():
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)
    got = L("Slice", [data], {"axes": [0, 1], "starts": [1, 0], "ends": [2, 3]})[0]
    np.testing.assert_array_equal(got, [[5, 6, 7]])
    got = L("Slice", [data], {"starts": [0], "ends": [-1]})[0]
    np.testing.assert_array_equal(got, [[1, 2, 3, 4]])
    got = L("Slice", [data], {"axes": [1], "starts": [1], "ends": [1000]})[0]
    np.testing.assert_array_equal(got, [[2, 3, 4], [6, 7, 8]])


def test_squeeze_unsqueeze():
    x = rand(1, 3, 1, 2)
    assert L("Squeeze", [x], {"axes": [0]})[0].shape == (3, 1, 2)
    assert L("Squeeze", [x])[0].shape == (3, 2)
    with pytest.raises(MDFError, match="not 1"):
        L("Squeeze", [x], {"axes": [1]})
    y = L("Unsqueeze", [rand(3, 4)], {"axes": [0, 3]})[0]
    assert y.shape == (1, 3, 4, 1)


def test_split_forms():
    x = rand(2, 6)
    parts = L("Split", [x], {"axis": 1, "split": [1, 2, 3]})
    assert [p.shape for p in parts] == [(2, 1), (2, 2), (2, 3)]
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), x)
    parts = L("Split", [x, np.array([4, 2])], {"axis": 1})
    assert [p.shape for p in parts] == [(2, 4), (2, 2)]
    parts = L("Split", [x], {"axis": 1, "num_outputs": 3})
    np.testing.assert_array_equal(parts[1], x[:, 2:4])
    with pytest.raises(MDFError, match="num_outputs"):
        L("Split", [x], {"axis": 1})


def test_concat_flatten_gather_defaults():
    a, b = rand(2, 3), rand(2, 4)
    np.testing.assert_array_equal(L("Concat", [a, b])[0], np.hstack([a, b]))
    x = rand(2, 3, 4)
    assert L("Flatten", [x])[0].shape == (2, 12)
    assert L("Flatten", [x], {"axis": 0})[0].shape == (1, 24)
    idx = np.array([[1, 0], [-1, 1]])
    np.testing.assert_array_equal(L("Gather", [x, idx])[0], x[[[1, 0], [1, 1]]])


def test_argmax_axes_list_of_seed_000():
    x = rand(3, 4, 5)
    np.testing.assert_array_equal(
        L("ArgMax", [x], {"axes": [1], "keepdims": 0})[0], x.argmax(axis=1)
    )
    np.testing.assert_array_equal(L("ArgMin", [x], {"axis": 2})[0], x.argmin(axis=2)[:, :, None])


@pytest.mark.parametrize(
    "op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp"]
)
def test_reduce_axes_attribute(op):
    x = rand(2, 3, 4)
    got = L(op, [x], {"axes": [0, 2], "keepdims": 0})[0]
    exp = np.array(
        [
            {
                "ReduceSum": sum,
                "ReduceMean": lambda v: sum(v) / len(v),
                "ReduceMax": max,
                "ReduceMin": min,
                "ReduceProd": np.prod,
                "ReduceLogSumExp": lambda v: np.log(sum(np.exp(t) for t in v)),
            }[op](list(x[:, j, :].ravel()))
            for j in range(3)
        ]
    )
    np.testing.assert_allclose(got, exp, rtol=1e-10)
    assert L(op, [x])[0].shape == (1, 1, 1)


@pytest.mark.parametrize(
    "to,dt", [("FLOAT", np.float32), ("DOUBLE", np.float64), ("INT32", np.int32), (7, np.int64)]
)
def test_cast_type_names(to, dt):
    x = np.array([1.7, -2.7, 3.0])
    got = L("Cast", [x], {"to": to})[0]
    assert got.dtype == dt
    exp = np.trunc(x) if np.dtype(dt).kind == "i" else x
    np.testing.assert_allclose(got, exp.astype(dt))
    with pytest.raises(MDFError, match="unknown ONNX data type"):
        L("Cast", [x], {"to": "COMPLEX"})


def test_pad_seed_example_and_modes():
    data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]])
    got = L("Pad", [data], {"paddings": [0, 0, 2, 0]})[0]
    np.testing.assert_array_equal(
        got, [[0.0, 0.0, 1.0, 1.2], [0.0, 0.0, 2.3, 3.4], [0.0, 0.0, 4.5, 5.7]]
    )
    got = L("Pad", [data], {"paddings": [1, 0, 0, 1], "value": 9.0})[0]
    np.testing.assert_array_equal(got[0], [9.0, 9.0, 9.0])
    np.testing.assert_array_equal(got[1:, 2], [9.0, 9.0, 9.0])
    edge = L("Pad", [data], {"paddings": [0, 0, 1, 1], "mode": "edge"})[0]
    np.testing.assert_array_equal(edge[:, 0], data[:, 0])
    np.testing.assert_array_equal(edge[:, -1], data[:, -1])
    refl = L("Pad", [data], {"paddings": [1, 1, 0, 0], "mode": "reflect"})[0]
    np.testing.assert_array_equal(refl[0], data[1])
    np.testing.assert_array_equal(refl[-1], data[-2])
    with pytest.raises(MDFError, match="2\\*rank"):
        L("Pad", [data], {"paddings": [1, 1]})


# ------------------------------------------------------------------ Upsample


def test_upsample_opset1_nearest_and_bilinear():
    x = rand(1, 2, 3, 4)
    got = L("Upsample", [x], {"height_scale": 2.0, "width_scale": 3.0})[0]
    exp = x.repeat(2, axis=2).repeat(3, axis=3)
    np.testing.assert_array_equal(got, exp)
    lin = L("Upsample", [x], {"height_scale": 2.0, "width_scale": 2.0, "mode": "bilinear"})[0]
    assert lin.shape == (1, 2, 6, 8)
    for i in range(6):
        for j in range(8):
            yi, xj = i / 2, j / 2
            i0, j0 = int(yi), int(xj)
            i1, j1 = min(i0 + 1, 2), min(j0 + 1, 3)
            wy, wx = yi - i0, xj - j0
            e = (
                (1 - wy) * (1 - wx) * x[0, :, i0, j0]
                + (1 - wy) * wx * x[0, :, i0, j1]
                + wy * (1 - wx) * x[0, :, i1, j0]
                + wy * wx * x[0, :, i1, j1]
            )
            np.testing.assert_allclose(lin[0, :, i, j], e, rtol=1e-12)


def test_upsample_opset7_scales():
    x = rand(2, 3, 2)
    got = L("Upsample", [x], {"scales": [1.0, 2.0, 1.5]})[0]
    assert got.shape == (2, 6, 3)
    idx = np.floor(np.arange(3) / 1.5).astype(int)
    np.testing.assert_array_equal(got, x.repeat(2, axis=1)[:, :, idx])
    with pytest.raises(MDFError, match="scales"):
        L("Upsample", [x])


# ------------------------------------------------------------------ Dropout


def test_dropout_test_mode_is_identity():
    x = rand(3, 4)
    y, mask = L("Dropout", [x], {"is_test": 1, "consumed_inputs": [0]})
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(L("Dropout", [x], {"ratio": 0.3}, since=7)[0], x)


def test_dropout_training_default_is_random_and_scaled():
    x = np.abs(rand(200, 50)) + 1.0
    y, mask = L("Dropout", [x], {"ratio": 0.25, "seed": 7.0})
    assert set(np.unique(mask)) <= {0.0, 1.0}
    np.testing.assert_allclose(y, x * mask / 0.75)
    kept = mask.mean()
    assert 0.72 < kept < 0.78
    y2, _ = L("Dropout", [x], {"ratio": 0.25, "seed": 7.0})
    np.testing.assert_array_equal(y, y2)


# ------------------------------------------------------------------ BatchNormalization


def _bn_params(c):
    return (RNG.random(c) + 0.5, rand(c), rand(c), RNG.random(c) + 0.1)


def test_batchnorm_test_mode_spatial():
    x = rand(2, 3, 4, 5)
    s, b, m, v = _bn_params(3)
    got = L("BatchNormalization", [x, s, b, m, v], {"is_test": 1, "epsilon": 1e-3})
    assert len(got) == 1
    sh = (1, 3, 1, 1)
    exp = s.reshape(sh) * (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + 1e-3) + b.reshape(sh)
    np.testing.assert_allclose(got[0], exp, rtol=1e-12)
    got7 = L("BatchNormalization", [x, s, b, m, v], {"epsilon": 1e-3}, since=7)
    np.testing.assert_allclose(got7[0], exp, rtol=1e-12)


def test_batchnorm_spatial_0_per_activation():
    x = rand(4, 2, 3)
    s, b, m, v = _bn_params(6)
    got = L("BatchNormalization", [x, s, b, m, v], {"is_test": 1, "spatial": 0})[0]
    f = x.reshape(4, 6)
    exp = (s * (f - m) / np.sqrt(v + 1e-5) + b).reshape(x.shape)
    np.testing.assert_allclose(got, exp, rtol=1e-12)
    tr = L("BatchNormalization", [x, s, b, m, v], {"spatial": 0})
    bm, bv = f.mean(axis=0), f.var(axis=0)
    np.testing.assert_allclose(
        tr[0], (s * (f - bm) / np.sqrt(bv + 1e-5) + b).reshape(x.shape), rtol=1e-10
    )


def test_batchnorm_training_statistics():
    x = rand(3, 2, 4)
    s, b, m, v = _bn_params(2)
    y, rm, rv, sm, sv = L("BatchNormalization", [x, s, b, m, v], {"momentum": 0.8})
    bm = np.array([x[:, c, :].mean() for c in range(2)])
    bv = np.array([((x[:, c, :] - bm[c]) ** 2).mean() for c in range(2)])
    np.testing.assert_allclose(sm, bm, rtol=1e-12)
    np.testing.assert_allclose(sv, bv, rtol=1e-12)
    np.testing.assert_allclose(rm, 0.8 * m + 0.2 * bm, rtol=1e-12)
    np.testing.assert_allclose(rv, 0.8 * v + 0.2 * bv, rtol=1e-12)
    exp = s[None, :, None] * (x - bm[None, :, None]) / np.sqrt(bv[None, :, None] + 1e-5)
    np.testing.assert_allclose(y, exp + b[None, :, None], rtol=1e-10)


# ------------------------------------------------------------------ RNN family (seed 002)


def sig(v):
    return 1 / (1 + np.exp(-v))


def ref_rnn(
    cell,
    X,
    W,
    R,
    B,
    h0,
    lens,
    c0=None,
    P=None,
    reverse=False,
    lbr=1,
    clip=None,
    act=np.tanh,
    input_forget=False,
):
    """One direction, straight from the seed's equations (gates zrh / iofc)."""
    T, N, _ = X.shape
    H = R.shape[-1]
    Wb, Rb = B[: B.size // 2], B[B.size // 2 :]
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Y = np.zeros((T, N, H))
    hT = h0.copy()
    cT = None if c0 is None else c0.copy()
    for n in range(N):
        h = h0[n].copy()
        c = None if c0 is None else c0[n].copy()
        steps = range(lens[n] - 1, -1, -1) if reverse else range(lens[n])
        for t in steps:
            x = X[t, n]
            if cell == "rnn":
                h = act(cl(W @ x + R @ h + Wb + Rb))
            elif cell == "gru":
                Wz, Wr, Wh = W[:H], W[H : 2 * H], W[2 * H :]
                Rz, Rr, Rh = R[:H], R[H : 2 * H], R[2 * H :]
                z = sig(Wz @ x + Rz @ h + Wb[:H] + Rb[:H])
                r = sig(Wr @ x + Rr @ h + Wb[H : 2 * H] + Rb[H : 2 * H])
                if lbr:
                    hh = np.tanh(Wh @ x + r * (Rh @ h + Rb[2 * H :]) + Wb[2 * H :])
                else:
                    hh = np.tanh(Wh @ x + Rh @ (r * h) + Rb[2 * H :] + Wb[2 * H :])
                h = (1 - z) * hh + z * h
            else:
                g = W @ x + R @ h + Wb + Rb
                pi, po, pf = P[:H], P[H : 2 * H], P[2 * H :]
                i = sig(cl(g[:H] + pi * c))
                f = sig(cl(g[2 * H : 3 * H] + pf * c))
                if input_forget:
                    f = 1 - i
                cc = np.tanh(cl(g[3 * H :]))
                c = f * c + i * cc
                o = sig(cl(g[H : 2 * H] + po * c))
                h = o * np.tanh(c)
            Y[t, n] = h
        hT[n] = h
        if c0 is not None:
            cT[n] = c
    return Y, hT, cT


def _rnn_inputs(gates, dirs, T=4, N=3, I=2, H=3):
    X = rand(T, N, I)
    W = rand(dirs, gates * H, I) * 0.5
    R = rand(dirs, gates * H, H) * 0.5
    B = rand(dirs, 2 * gates * H) * 0.5
    h0 = rand(dirs, N, H) * 0.5
    return X, W, R, B, h0


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_gru_seed_form(direction):
    dirs = 2 if direction == "bidirectional" else 1
    X, W, R, B, h0 = _rnn_inputs(3, dirs)
    lens = np.array([4, 2, 3], dtype=np.int32)
    Y, Yh = L("GRU", [X, W, R, B, h0, lens], {"direction": direction, "hidden_size": 3})[:2]
    for d in range(dirs):
        ey, eh, _ = ref_rnn(
            "gru", X, W[d], R[d], B[d], h0[d], lens, reverse=(direction == "reverse" or d == 1)
        )
        np.testing.assert_allclose(Y[:, d], ey, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Yh[d], eh, rtol=1e-10, atol=1e-12)


def test_gru_later_input_order_and_linear_before_reset_0():
    X, W, R, B, h0 = _rnn_inputs(3, 1)
    lens = np.array([3, 4, 1], dtype=np.int32)
    Y, Yh = L("GRU", [X, W, R, B, lens, h0], {"linear_before_reset": 0})[:2]
    ey, eh, _ = ref_rnn("gru", X, W[0], R[0], B[0], h0[0], lens, lbr=0)
    np.testing.assert_allclose(Y[:, 0], ey, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Yh[0], eh, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("activation,fn", [("tanh", np.tanh), ("ReLU", lambda v: np.maximum(v, 0))])
def test_rnn_single_activation(activation, fn):
    X, W, R, B, h0 = _rnn_inputs(1, 1)
    Y, Yh = L("RNN", [X, W, R, B, h0], {"activation": activation})[:2]
    ey, eh, _ = ref_rnn("rnn", X, W[0], R[0], B[0], h0[0], [4, 4, 4], act=fn)
    np.testing.assert_allclose(Y[:, 0], ey, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Yh[0], eh, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("clip,input_forget", [(None, 0), (0.3, 0), (None, 1)])
def test_lstm_seed_form(clip, input_forget):
    X, W, R, B, h0 = _rnn_inputs(4, 2)
    c0 = rand(2, 3, 3) * 0.5
    P = rand(2, 9) * 0.5
    lens = np.array([4, 1, 3], dtype=np.int32)
    attrs = {"direction": "bidirectional", "input_forget": input_forget}
    if clip is not None:
        attrs["clip"] = clip
    Y, Yh, Yc = L("LSTM", [X, W, R, B, h0, lens, c0, P], attrs)
    for d in range(2):
        ey, eh, ec = ref_rnn(
            "lstm",
            X,
            W[d],
            R[d],
            B[d],
            h0[d],
            lens,
            c0=c0[d],
            P=P[d],
            reverse=d == 1,
            clip=clip,
            input_forget=input_forget,
        )
        np.testing.assert_allclose(Y[:, d], ey, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Yh[d], eh, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Yc[d], ec, rtol=1e-10, atol=1e-12)


def test_lstm_rejects_matrix_peepholes_and_bad_activation():
    X, W, R, B, h0 = _rnn_inputs(4, 1)
    with pytest.raises(MDFError, match="peepholes"):
        L("LSTM", [X, W, R, B, h0, None, None, rand(1, 9, 3)])
    with pytest.raises(MDFError, match="activation"):
        L(
            "GRU",
            [X[:, :, :2], rand(1, 9, 2), rand(1, 9, 3)],
            {"activations": ["sigmoid", "softsign", "tanh"]},
        )


# ------------------------------------------------------------------ experimental ops (seed 002)


def test_experimental_ops_are_registered():
    for op in (
        "ATen",
        "Caffe2ConvTranspose",
        "ConstantFill",
        "FC",
        "GRUUnit",
        "GivenTensorFill",
        "Normalize",
        "Scale",
        "SpatialBN",
    ):
        assert REGISTRY.lookup("onnx::" + op, 1).namespace == "onnx-exp"


@pytest.mark.parametrize(
    "name,fn",
    [
        ("exp", np.exp),
        ("neg", np.negative),
        ("relu", lambda v: np.maximum(v, 0)),
        ("tanh", np.tanh),
    ],
)
def test_aten_unary(name, fn):
    x = rand(3, 2)
    np.testing.assert_allclose(run("ATen", [x], {"operator": name})[0], fn(x), rtol=1e-12)


def test_aten_binary_and_unsupported():
    a, b = rand(2, 3), rand(3)
    np.testing.assert_allclose(run("ATen", [a, b], {"operator": "sub"})[0], a - b[None, :])
    np.testing.assert_allclose(run("ATen", [a, rand(3, 4)], {"operator": "mm"})[0].shape, (2, 4))
    with pytest.raises(MDFError, match="not supported"):
        run("ATen", [a], {"operator": "lgamma"})
    with pytest.raises(MDFError, match="input"):
        run("ATen", [a], {"operator": "add"})


def _ref_conv_transpose(x, w, b, stride, pads, dil, group):
    n, c, h, wd = x.shape
    mg, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    full_h = (h - 1) * stride[0] + (kh - 1) * dil[0] + 1
    full_w = (wd - 1) * stride[1] + (kw - 1) * dil[1] + 1
    full = np.zeros((n, mg * group, full_h, full_w))
    cg = c // group
    for ci in range(c):
        g = ci // cg
        for a in range(kh):
            for e in range(kw):
                # every input pixel (i, j) lands at (i*s + a*d, j*s + e*d)
                contrib = np.einsum("nhw,m->nmhw", x[:, ci], w[ci, :, a, e])
                full[
                    :,
                    g * mg : (g + 1) * mg,
                    a * dil[0] : a * dil[0] + (h - 1) * stride[0] + 1 : stride[0],
                    e * dil[1] : e * dil[1] + (wd - 1) * stride[1] + 1 : stride[1],
                ] += contrib
    out = full[:, :, pads[0] : full_h - pads[2], pads[1] : full_w - pads[3]]
    return out + b[None, :, None, None]


@pytest.mark.parametrize(
    "stride,pads,dil,group",
    [
        ((1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((2, 3), (1, 0, 1, 2), (1, 1), 1),
        ((2, 2), (0, 1, 1, 0), (2, 1), 2),
    ],
)
def test_caffe2_conv_transpose(stride, pads, dil, group):
    x = rand(2, 4, 3, 4)
    w = rand(4, 3, 3, 2)
    b = rand(3 * group)
    got = run(
        "Caffe2ConvTranspose",
        [x, w, b],
        {"strides": list(stride), "pads": list(pads), "dilations": list(dil), "group": group},
    )[0]
    exp = _ref_conv_transpose(x, w, b, stride, pads, dil, group)
    assert got.shape == exp.shape
    np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)


def test_constant_fill_shape_rules():
    y = run("ConstantFill", [], {"shape": [2, 3], "value": 1.5})[0]
    np.testing.assert_array_equal(y, np.full((2, 3), 1.5, np.float32))
    assert y.dtype == np.float32
    y = run("ConstantFill", [rand(4, 1)], {"extra_shape": [2], "dtype": 7, "value": 3.0})[0]
    assert y.shape == (4, 1, 2) and y.dtype == np.int64 and (y == 3).all()
    y = run("ConstantFill", [np.array([3, 2])], {"input_as_shape": 1, "dtype": 9, "value": 1.0})[0]
    assert y.shape == (3, 2) and y.dtype == np.bool_ and y.all()
    with pytest.raises(MDFError, match="same time"):
        run("ConstantFill", [rand(2)], {"shape": [2]})
    with pytest.raises(MDFError, match="extra_shape"):
        run("ConstantFill", [], {"extra_shape": [2]})


def test_given_tensor_fill():
    vals = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y = run("GivenTensorFill", [], {"shape": [2, 3], "values": vals})[0]
    np.testing.assert_array_equal(y, np.array(vals, np.float32).reshape(2, 3))
    y = run("GivenTensorFill", [np.array([3, 2])], {"input_as_shape": 1, "values": vals})[0]
    assert y.shape == (3, 2) and y[2, 1] == 6.0
    with pytest.raises(MDFError, match="values"):
        run("GivenTensorFill", [], {"shape": [4], "values": vals})


@pytest.mark.parametrize("axis,axis_w", [(1, 1), (2, 1), (1, 2)])
def test_fc_coerces_to_2d(axis, axis_w):
    x = rand(2, 3, 4)
    xm = x.reshape(int(np.prod(x.shape[:axis])), -1)
    k = xm.shape[1]
    w = rand(5, k) if axis_w == 1 else rand(5, 1, k)
    wm = w.reshape(5, k)
    b = rand(5)
    got = run("FC", [x, w, b], {"axis": axis, "axis_w": axis_w})[0]
    exp = np.array(
        [
            [sum(xm[i, t] * wm[j, t] for t in range(k)) + b[j] for j in range(5)]
            for i in range(xm.shape[0])
        ]
    )
    np.testing.assert_allclose(got, exp, rtol=1e-12)


def test_fc_shape_mismatch():
    with pytest.raises(MDFError, match="do not fit"):
        run("FC", [rand(2, 3), rand(4, 4), rand(4)])


def test_scale_and_normalize():
    x = rand(3, 4).astype(np.float32)
    y = run("Scale", [x], {"scale": 2.5})[0]
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, 2.5 * x, rtol=1e-6)
    np.testing.assert_array_equal(run("Scale", [x])[0], x)
    z = rand(2, 3, 4)
    n = run("Normalize", [z])[0]
    np.testing.assert_allclose(n, z / np.sqrt((z**2).sum(axis=-1, keepdims=True)), rtol=1e-12)
    np.testing.assert_array_equal(run("Normalize", [np.zeros((2, 3))])[0], np.zeros((2, 3)))


@pytest.mark.parametrize("drop", [0, 1])
def test_gru_unit(drop):
    N, D = 4, 3
    h = rand(1, N, D)
    g = rand(1, N, 3 * D)
    lens = np.array([1, 3, 2, 5], dtype=np.int32)
    t = np.array(2, dtype=np.int32)
    got = run("GRUUnit", [h, g, lens, t], {"drop_states": drop})[0]
    u = sig(g[0, :, D : 2 * D])
    o = np.tanh(g[0, :, 2 * D :])
    active = (2 < lens)[:, None]
    exp = np.where(active, h[0] * u + o * (1 - u), 0.0 if drop else h[0])
    np.testing.assert_allclose(got[0], exp, rtol=1e-12)
    assert got.shape == h.shape


def test_spatial_bn_is_legacy_batchnorm():
    x = rand(2, 3, 2, 2)
    s, b, m, v = _bn_params(3)
    y = run("SpatialBN", [x, s, b, m, v], {"is_test": 1, "epsilon": 1e-4})[0]
    sh = (1, 3, 1, 1)
    exp = s.reshape(sh) * (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + 1e-4) + b.reshape(sh)
    np.testing.assert_allclose(y, exp, rtol=1e-12)
    outs = run("SpatialBN", [x, s, b, m, v], {})
    assert len(outs) == 5
    np.testing.assert_allclose(outs[3], x.mean(axis=(0, 2, 3)), rtol=1e-12)


# ------------------------------------------------------------------ modified ops (seed 003)


def test_add_bias_channel_last():
    a = rand(2, 3, 4, 5)
    b = rand(5)
    np.testing.assert_allclose(run("onnx_mod::Add_", [a, b])[0], a + b.reshape(1, 1, 1, 5))
    c = rand(2, 3, 4, 5)
    np.testing.assert_allclose(run("onnx_mod::Add_", [a, c])[0], a + c)
    with pytest.raises(MDFError, match="last"):
        run("onnx_mod::Add_", [a, rand(4)])


def test_dense():
    x = rand(2, 3, 4)
    w = rand(4, 6)
    b = rand(6)
    got = run("onnx_mod::Dense", [x, w, b])[0]
    exp = np.einsum("abi,io->abo", x, w) + b
    np.testing.assert_allclose(got, exp, rtol=1e-12)
    np.testing.assert_allclose(run("onnx_mod::Dense", [x[0], w])[0], x[0] @ w, rtol=1e-12)
    with pytest.raises(MDFError, match="in, out"):
        run("onnx_mod::Dense", [x, w.T, b])


def test_relu6_and_modified_leaky_relu():
    x = rand(50) * 5
    np.testing.assert_array_equal(run("onnx_mod::Relu6", [x])[0], np.minimum(np.maximum(x, 0), 6))
    for alpha in (0.2, 1.5):
        got = run("onnx_mod::LeakyRelu", [x], {"alpha": alpha})[0]
        np.testing.assert_allclose(got, np.maximum(alpha * x, x))
    xi = np.arange(-3, 10, dtype=np.int32)
    assert run("onnx_mod::Relu6", [xi])[0].dtype == np.int32


def _ref_depthwise(x, w, stride, dil, mode):
    n, h, wd, c = x.shape
    kh, kw, _, cm = w.shape
    eh, ew = (kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1
    if mode == "VALID":
        oh, ow = (h - eh) // stride[0] + 1, (wd - ew) // stride[1] + 1
        pt = pl = 0
    else:
        oh, ow = -(-h // stride[0]), -(-wd // stride[1])
        pt = max((oh - 1) * stride[0] + eh - h, 0) // 2
        pl = max((ow - 1) * stride[1] + ew - wd, 0) // 2
    xp = np.zeros((n, h + 2 * eh + pt, wd + 2 * ew + pl, c))
    xp[:, pt : pt + h, pl : pl + wd] = x
    y = np.zeros((n, oh, ow, c * cm))
    for i in range(oh):
        for j in range(ow):
            patch = xp[
                :,
                i * stride[0] : i * stride[0] + eh : dil[0],
                j * stride[1] : j * stride[1] + ew : dil[1],
                :,
            ]  # (n, kh, kw, c)
            y[:, i, j, :] = np.einsum("nabk,abkq->nkq", patch, w).reshape(n, c * cm)
    return y


@pytest.mark.parametrize(
    "mode,stride,dil",
    [
        ("VALID", (1, 1), (1, 1)),
        ("SAME", (2, 2), (1, 1)),
        ("SAME", (1, 1), (2, 2)),
        ("VALID", (2, 1), (1, 1)),
    ],
)
def test_depthwise_conv2d_nhwc(mode, stride, dil):
    x = rand(2, 7, 6, 3)
    w = rand(3, 2, 3, 2)
    got = run(
        "onnx_mod::DepthwiseConv2d",
        [x, w],
        {"pads": mode, "strides": list(stride), "dilations": list(dil), "group": 3},
    )[0]
    exp = _ref_depthwise(x, w, stride, dil, mode)
    assert got.shape == exp.shape
    np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)


def test_depthwise_conv2d_errors():
    with pytest.raises(MDFError, match="SAME"):
        run("onnx_mod::DepthwiseConv2d", [rand(1, 4, 4, 2), rand(2, 2, 2, 1)], {"pads": "FULL"})
    with pytest.raises(MDFError, match="group"):
        run("onnx_mod::DepthwiseConv2d", [rand(1, 4, 4, 2), rand(2, 2, 2, 1)], {"group": 1})


def test_upsampling2d_nhwc_nearest():
    x = rand(2, 3, 4, 5)
    got = run("onnx_mod::UpSampling2D", [x], {"size": [2, 3]})[0]
    np.testing.assert_array_equal(got, x.repeat(2, axis=1).repeat(3, axis=2))
    with pytest.raises(MDFError, match="NHWC"):
        run("onnx_mod::UpSampling2D", [rand(3, 4)], {"size": [2, 2]})


def test_upsample_scales_as_input_and_conformance_case():
    x = rand(1, 1, 2, 2)
    got = L("Upsample", [x, np.array([1.0, 1.0, 2.0, 3.0], np.float32)])[0]
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(3, axis=3))


def test_dropout_7_mask_has_data_dtype():
    x = rand(2, 2, dtype=np.float32)
    y, mask = L("Dropout", [x], {}, since=7)
    assert mask.dtype == np.float32 and (mask == 1).all()


@pytest.mark.parametrize(
    "name,inputs,attrs",
    [
        ("onnx_mod::Add_", lambda: [rand(2, 3, 4), rand(4)], {}),
        ("onnx_mod::Relu6", lambda: [rand(3, 4) * 5], {}),
        ("onnx_mod::LeakyRelu", lambda: [rand(2, 5)], {"alpha": 1.5}),
        ("onnx::Scale", lambda: [rand(2, 2)], {"scale": -2.0}),
    ],
)
def test_jit_versions_match_kernels(name, inputs, attrs):
    sch = REGISTRY.lookup(name)
    assert sch.jit is not None
    args = inputs()
    full = {k: v for k, v in sch.attributes.items()}
    full.update(attrs)
    got = sch.jit(*args, *[full[k] for k in sch.attributes])
    np.testing.assert_allclose(got, sch.call(args, attrs)[0], rtol=1e-12)


def test_ops_table_reads_the_seeds():
    import importlib.util
    from pathlib import Path

    seeds = Path("/work/shared/seeds")
    if not seeds.is_dir():
        pytest.skip("seed documents not available")
    tool = Path(__file__).resolve().parent.parent / "tools" / "onnx_ops_table.py"
    spec = importlib.util.spec_from_file_location("onnx_ops_table", tool)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ops = mod.seed_ops(seeds)
    count = {d: sum(1 for m in ops.values() if d in m) for d in ("004", "000", "002", "003")}
    assert len(ops) == 177 and count == {"004": 162, "000": 55, "002": 70, "003": 36}
    assert ops["Dot"] == {"000": "yes"}
    assert ops["FC"] == {"002": "exp"} and ops["Relu6"] == {"003": "mod"}
    assert ops["Gemm"]["003"] == "body" and ops["Identity"]["003"] == "idx"
    for op in ("Dot", "FC", "Relu6", "Add_", "Add"):
        assert mod.registered(op), op


def test_unsqueeze_values_and_batchnorm_consumed_inputs():
    x = rand(3, 4)
    y = L("Unsqueeze", [x], {"axes": [1]})[0]
    np.testing.assert_array_equal(y[:, 0, :], x)
    xb = rand(2, 2, 3)
    s, b, m, v = _bn_params(2)
    got = L(
        "BatchNormalization", [xb, s, b, m, v], {"is_test": 1, "consumed_inputs": [0, 0, 0, 1, 1]}
    )[0]
    exp = (
        s[None, :, None] * (xb - m[None, :, None]) / np.sqrt(v[None, :, None] + 1e-5)
        + b[None, :, None]
    )
    np.testing.assert_allclose(got, exp, rtol=1e-12)


def test_rnn_bidirectional_activations_list():
    X, W, R, B, h0 = _rnn_inputs(1, 2)
    Y, Yh = L(
        "RNN", [X, W, R, B, h0], {"activations": ["Relu", "Tanh"], "direction": "bidirectional"}
    )[:2]
    for d, fn in enumerate((lambda v: np.maximum(v, 0), np.tanh)):
        ey, eh, _ = ref_rnn("rnn", X, W[d], R[d], B[d], h0[d], [4, 4, 4], act=fn, reverse=d == 1)
        np.testing.assert_allclose(Y[:, d], ey, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Yh[d], eh, rtol=1e-10, atol=1e-12)


def test_adapters_pass_early_attributes_to_the_standard_kernels():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(L("Transpose", [x], {"perm": [2, 0, 1]})[0], np.moveaxis(x, 2, 0))
    a, b = rand(2, 3), rand(3, 4)
    exp = np.array([[sum(a[i, k] * b[k, j] for k in range(3)) for j in range(4)] for i in range(2)])
    np.testing.assert_allclose(L("MatMul", [a, b])[0], exp, rtol=1e-12)
    img = rand(1, 1, 4, 4)
    pooled = L("AveragePool", [img], {"kernel_shape": [2, 2], "strides": [2, 2]})[0]
    exp = img.reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(pooled, exp, rtol=1e-12)
    w = rand(2, 1, 3, 3)
    conv = L("Conv", [img, w], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})[0]
    padded = np.pad(img[0, 0], 1)
    exp = np.array(
        [
            [[np.sum(padded[i : i + 3, j : j + 3] * w[o, 0]) for j in range(4)] for i in range(4)]
            for o in range(2)
        ]
    )[None]
    np.testing.assert_allclose(conv, exp, rtol=1e-10, atol=1e-12)
    c = L("Constant", [], {"value": np.arange(3.0)})[0]
    np.testing.assert_array_equal(c, [0.0, 1.0, 2.0])


def test_seed_examples_gather_and_transpose():
    data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]])
    indices = np.array([[0, 1], [1, 2]])
    got = L("Gather", [data, indices])[0]
    np.testing.assert_array_equal(got, [[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]])
    assert L("Transpose", [rand(1, 2, 3)], {"perm": [1, 0, 2]})[0].shape == (2, 1, 3)
    assert L("Transpose", [rand(1, 2, 3)])[0].shape == (3, 2, 1)


def _ort_one_node(op, opset, inputs, attrs):
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    node = helper.make_node(op, [f"i{k}" for k in range(len(inputs))], ["o"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(f"i{k}", TensorProto.FLOAT, a.shape)
            for k, a in enumerate(inputs)
        ],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {f"i{k}": a for k, a in enumerate(inputs)})[0]


@pytest.mark.parametrize(
    "mode,scales",
    [
        ("nearest", [1.0, 1.0, 2.0, 3.0]),
        ("nearest", [1.0, 2.0, 1.5, 2.5]),
        ("linear", [1.0, 1.0, 2.0, 2.0]),
        ("linear", [1.0, 1.0, 1.5, 3.0]),
    ],
)
def test_upsample_7_against_onnxruntime(mode, scales):
    x = rand(2, 2, 3, 4, dtype=np.float32)
    exp = _ort_one_node("Upsample", 7, [x], {"scales": scales, "mode": mode})
    got = L("Upsample", [x], {"scales": scales, "mode": mode})[0]
    assert got.shape == exp.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "attrs",
    [
        {"starts": [0], "ends": [-1]},
        {"axes": [1], "starts": [-3], "ends": [100]},
        {"axes": [0, 1], "starts": [1, 1], "ends": [3, -1]},
        {"axes": [1], "starts": [10], "ends": [20]},
    ],
)
def test_slice_1_against_onnxruntime(attrs):
    x = rand(3, 5, dtype=np.float32)
    exp = _ort_one_node("Slice", 1, [x], attrs)
    got = L("Slice", [x], attrs)[0]
    assert got.shape == exp.shape
    np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: L("Add", [x, x[0]], {"broadcast": 1}),
        lambda x: L("Softmax", [x]),
        lambda x: L("Sigmoid", [x]),
        lambda x: L("Dot", [x, x.T]),
        lambda x: run("Scale", [x], {"scale": 3.0}),
        lambda x: run("onnx_mod::Relu6", [x]),
    ],
)
def test_float16_stays_float16(call):
    x = (RNG.standard_normal((3, 3)) * 4).astype(np.float16)
    out = call(x)[0]
    assert out.dtype == np.float16


def test_float16_add_bias():
    a = np.ones((2, 3), np.float16)
    out = run("onnx_mod::Add_", [a, np.arange(3, dtype=np.float16)])[0]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, a + np.arange(3))


@pytest.mark.parametrize("op,gates", [("RNN", 1), ("GRU", 3), ("LSTM", 4)])
def test_seed_recurrent_with_clip_against_onnxruntime(op, gates):
    """The seed-002 forms (initial_h before sequence_lens, GRU's linear_before_reset=1) with
    ``clip`` give what onnxruntime gives for the opset-7 node with the later input order."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    X, W, R, B, h0 = (a.astype(np.float32) * 3 for a in _rnn_inputs(gates, 2))
    lens = np.array([4, 4, 4], dtype=np.int32)
    attrs = {"direction": "bidirectional", "clip": 0.7, "hidden_size": 3}
    if op == "GRU":
        attrs["linear_before_reset"] = 1
    feeds = {"X": X, "W": W, "R": R, "B": B, "sequence_lens": lens, "initial_h": h0}
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, list(feeds), outs, **attrs)
    info = [
        helper.make_tensor_value_info(
            k, TensorProto.INT32 if k == "sequence_lens" else TensorProto.FLOAT, v.shape
        )
        for k, v in feeds.items()
    ]
    graph = helper.make_graph(
        [node], "g", info, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = 3
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    exp = sess.run(None, feeds)
    got = L(op, [X, W, R, B, h0, lens], attrs)
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        assert g.shape == e.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
