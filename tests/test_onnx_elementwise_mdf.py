"""Elementwise, logic, activation and variadic ``onnx_ops`` against onnxruntime (the oracle).

Each case builds a one-node ONNX model with ``onnx.helper``, runs it in an onnxruntime
``InferenceSession`` and compares it with ``onnx_ops.run`` at the same opset, on random float64
and float32 inputs with broadcasting and a few int32/int64 cases. Where onnxruntime's CPU provider
has no float64 kernel for an op, the oracle runs the same values in float32 and our float64
result is compared with float32 tolerances. The ``jit=`` (nopython) version of each family is
checked against the Python kernel.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mdf_engine import onnx_ops
from mdf_engine.errors import MDFError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

BOOL_OUT = {
    "Equal",
    "Greater",
    "Less",
    "GreaterOrEqual",
    "LessOrEqual",
    "IsNaN",
    "IsInf",
    "And",
    "Or",
    "Xor",
    "Not",
}
#: ops whose onnxruntime CPU kernels exist for float32 but not float64
ORT_NO_F64 = {
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "Cosh",
    "Sinh",
    "Tan",
    "Erf",
    "Softplus",
    "Softsign",
    "LeakyRelu",
    "Elu",
    "Selu",
    "Celu",
    "HardSigmoid",
    "ThresholdedRelu",
    "Hardmax",
    "Mean",
    "PRelu",
    "Shrink",
}  # onnxruntime's double Shrink returns float32-precision values


def _elem(dt: np.dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


def ort_run(op: str, inputs: list, attrs: dict | None = None, opset: int = 13) -> np.ndarray:
    """Run one ONNX node in onnxruntime; ``None`` inputs are omitted optional inputs."""
    names = [f"in{k}" if x is not None else "" for k, x in enumerate(inputs)]
    vis = [
        helper.make_tensor_value_info(n, _elem(x.dtype), x.shape)
        for n, x in zip(names, inputs)
        if x is not None
    ]
    first = inputs[1] if op == "Where" else next(x for x in inputs if x is not None)
    out_t = TensorProto.BOOL if op in BOOL_OUT else _elem(first.dtype)
    node = helper.make_node(op, names, ["out"], **(attrs or {}))
    graph = helper.make_graph([node], "g", vis, [helper.make_tensor_value_info("out", out_t, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {n: x for n, x in zip(names, inputs) if x is not None}
    return sess.run(None, feeds)[0]


def check(
    op: str,
    inputs: list,
    attrs: dict | None = None,
    opset: int = 13,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """Compare onnx_ops.run with onnxruntime (dtype, shape, values)."""
    inputs = [None if x is None else np.asarray(x) for x in inputs]
    with np.errstate(all="ignore"):
        got = onnx_ops.run(op, inputs, attrs, opset=opset)[0]
    f64 = any(x is not None and x.dtype == np.float64 for x in inputs)
    if f64 and op in ORT_NO_F64:
        exp = ort_run(
            op,
            [
                None if x is None else (x.astype(np.float32) if x.dtype == np.float64 else x)
                for x in inputs
            ],
            attrs,
            opset,
        )
        exp = exp.astype(np.float64) if exp.dtype == np.float32 else exp
        rtol, atol = rtol or 2e-5, atol or 2e-6
    else:
        exp = ort_run(op, inputs, attrs, opset)
    assert got.dtype == exp.dtype, f"{op}: dtype {got.dtype} != {exp.dtype}"
    assert got.shape == exp.shape, f"{op}: shape {got.shape} != {exp.shape}"
    if exp.dtype.kind == "f":
        tol = 1e-12 if exp.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(
            got, exp, rtol=rtol or tol * 10, atol=atol or tol, equal_nan=True, err_msg=op
        )
    else:
        np.testing.assert_array_equal(got, exp, err_msg=op)


FLOATS = [np.float64, np.float32]

# ---- unary ------------------------------------------------------------------------------------

DOMAIN = {  # op -> (low, high) of the random inputs
    "Acos": (-0.95, 0.95),
    "Asin": (-0.95, 0.95),
    "Atanh": (-0.95, 0.95),
    "Acosh": (1.05, 5.0),
    "Log": (0.05, 5.0),
    "Sqrt": (0.0, 5.0),
    "Tan": (-1.4, 1.4),
    "Exp": (-5.0, 5.0),
    "Cosh": (-5.0, 5.0),
    "Sinh": (-5.0, 5.0),
}
UNARY = (
    "Abs Acos Acosh Asin Asinh Atan Atanh Cos Cosh Sin Sinh Tan Tanh Exp Log Sqrt Neg "
    "Reciprocal Erf Ceil Floor Round Sign Relu Sigmoid Softplus Softsign"
).split()


def _rand(rng, shape, dt, low=-3.0, high=3.0) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(dt)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_float(op, dt):
    rng = np.random.default_rng(len(op))
    low, high = DOMAIN.get(op, (-3.0, 3.0))
    x = _rand(rng, (3, 4, 5), dt, low, high)
    if op in ("Round", "Sign", "Ceil", "Floor", "Relu", "Abs"):
        x.reshape(-1)[:12] = np.array(
            [-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.5, -0.0, 2.0, -3.0, 1.0], dt
        )
    check(op, [x])
    check(op, [np.asarray(x.reshape(-1)[7])])  # 0-d
    check(op, [x.transpose(2, 0, 1)])  # non-contiguous


ACT_ATTRS = [  # attribute values exact in float32 (ONNX float attributes are float32)
    ("LeakyRelu", {"alpha": 0.375}),
    ("LeakyRelu", {}),
    ("Elu", {"alpha": 0.75}),
    ("Selu", {"alpha": 1.25, "gamma": 0.875}),
    ("Selu", {}),
    ("Celu", {"alpha": 1.75}),
    ("HardSigmoid", {"alpha": 0.25, "beta": 0.375}),
    ("HardSigmoid", {}),
    ("ThresholdedRelu", {"alpha": 0.5}),
    ("Shrink", {"bias": 0.5, "lambd": 1.25}),
    ("Shrink", {}),
]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize(
    "op,attrs", ACT_ATTRS, ids=[f"{o}-{i}" for i, (o, _) in enumerate(ACT_ATTRS)]
)
def test_activation_attrs(op, attrs, dt):
    if op == "Celu" and dt == np.float64:
        dt = np.float32  # Celu is float32-only in the ONNX schema
    x = _rand(np.random.default_rng(3), (2, 3, 4), dt)
    check(op, [x], attrs, opset=13)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["Abs", "Neg", "Sign"])
def test_unary_int(op, dt):
    x = np.random.default_rng(5).integers(-50, 50, size=(4, 5)).astype(dt)
    check(op, [x])


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_relu_clip_int(dt):
    # onnxruntime has no integer Relu kernel: the oracle is numpy's maximum
    x = np.random.default_rng(5).integers(-50, 50, size=(4, 5)).astype(dt)
    got = onnx_ops.run("Relu", [x], opset=14)[0]
    assert got.dtype == dt
    np.testing.assert_array_equal(got, np.maximum(x, 0))


@pytest.mark.parametrize("dt", FLOATS)
def test_isnan_isinf(dt):
    x = _rand(np.random.default_rng(7), (4, 6), dt)
    x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    check("IsNaN", [x])
    for attrs in ({}, {"detect_negative": 0}, {"detect_positive": 0}):
        check("IsInf", [x], attrs)


# ---- binary arithmetic and comparisons ---------------------------------------------------------

SHAPES = [
    ((3, 4, 5), (3, 4, 5)),
    ((3, 4, 5), (5,)),
    ((1, 4, 1), (3, 1, 5)),
    ((2, 3), ()),
    ((), (2, 3)),
    ((4, 1), (1, 4)),
    ((2, 1, 3, 1), (5, 3, 2)),
]
ARITH = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]
COMPARE = ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ARITH + COMPARE + ["Mod"])
def test_binary_float(op, dt, shapes):
    rng = np.random.default_rng(11)
    a = _rand(rng, shapes[0], dt)
    b = _rand(rng, shapes[1], dt)
    attrs = None
    if op == "Pow":
        a = np.abs(a) + dt(0.1)
    if op == "Mod":
        attrs = {"fmod": 1}
    if op in COMPARE:  # small integers: many equal pairs
        a, b = np.round(a), np.round(b)
    check(op, [a, b], attrs)


@pytest.mark.parametrize("shapes", SHAPES[:4], ids=str)
@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize(
    "op,attrs",
    [
        ("Add", None),
        ("Sub", None),
        ("Mul", None),
        ("Div", None),
        ("Mod", {"fmod": 0}),
        ("Mod", {"fmod": 1}),
        ("Max", None),
        ("Min", None),
        ("Pow", None),
        ("Equal", None),
        ("Greater", None),
        ("LessOrEqual", None),
    ],
    ids=str,
)
def test_binary_int(op, attrs, dt, shapes):
    rng = np.random.default_rng(13)
    a = rng.integers(-40, 40, size=shapes[0]).astype(dt)
    b = rng.integers(-9, 9, size=shapes[1]).astype(dt)
    if op in ("Div", "Mod"):
        b = np.where(b == 0, 3, b).astype(dt)
    if op == "Pow":
        a = rng.integers(-6, 6, size=shapes[0]).astype(dt)
        b = rng.integers(0, 5, size=shapes[1]).astype(dt)
    check(op, [a, b], attrs)


@pytest.mark.parametrize(
    "xdt,ydt",
    [
        (np.float32, np.int64),
        (np.float64, np.int32),
        (np.int64, np.float32),
        (np.int32, np.float64),
    ],
)
def test_pow_mixed_types(xdt, ydt):
    rng = np.random.default_rng(17)
    x = rng.integers(1, 6, size=(3, 4)).astype(xdt)
    y = rng.integers(0, 4, size=(4,)).astype(ydt)
    check("Pow", [x, y], opset=15)


@pytest.mark.parametrize("dt", [np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(dt, direction):
    rng = np.random.default_rng(19)
    width = np.dtype(dt).itemsize * 8
    x = rng.integers(0, np.iinfo(dt).max, size=(3, 4), dtype=dt, endpoint=True)
    y = rng.integers(0, width, size=(4,)).astype(dt)
    check("BitShift", [x, y], {"direction": direction}, opset=11)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_prelu(shapes):
    if len(shapes[1]) > len(shapes[0]) or np.broadcast_shapes(*shapes) != shapes[0]:
        shapes = (np.broadcast_shapes(*shapes), shapes[1])
    rng = np.random.default_rng(23)
    for dt in FLOATS:
        check("PRelu", [_rand(rng, shapes[0], dt), _rand(rng, shapes[1], dt)], opset=9)


# ---- logic --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_logic(shapes):
    rng = np.random.default_rng(29)
    a = rng.random(shapes[0]) < 0.5
    b = rng.random(shapes[1]) < 0.5
    for op in ("And", "Or", "Xor"):
        check(op, [np.asarray(a), np.asarray(b)], opset=7)
    check("Not", [np.asarray(a)], opset=1)


@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4), (3, 4)), ((4,), (3, 1), ()), ((2, 1, 4), (3, 1), (1, 4))], ids=str
)
def test_where(shapes, dt):
    rng = np.random.default_rng(31)
    c = np.asarray(rng.random(shapes[0]) < 0.5)
    x = np.asarray(rng.integers(-9, 9, size=shapes[1])).astype(dt)
    y = np.asarray(rng.integers(-9, 9, size=shapes[2])).astype(dt)
    check("Where", [c, x, y], opset=16)


# ---- variadic -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
def test_variadic_float(op, dt):
    rng = np.random.default_rng(37)
    ins = [_rand(rng, s, dt) for s in [(3, 1, 5), (4, 1), (5,)]]
    check(op, ins)
    check(op, ins[:1])
    ins[1][0, 0] = np.nan
    if op in ("Max", "Min"):
        check(op, ins)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["Max", "Min"])
def test_variadic_int(op, dt):
    rng = np.random.default_rng(41)
    check(op, [rng.integers(-20, 20, size=s).astype(dt) for s in [(2, 3), (3,), (2, 1)]])


# ---- Clip and the softmax family (opset-versioned) ---------------------------------------------


@pytest.mark.parametrize("dt", FLOATS + [np.int32, np.int64])
def test_clip(dt):
    rng = np.random.default_rng(43)
    x = np.asarray(rng.integers(-100, 100, size=(3, 4, 5)) * 0.05).astype(dt)
    lo, hi = np.asarray(-1, dt), np.asarray(2, dt)
    for ins in ([x, lo, hi], [x, lo], [x, None, hi], [x], [x, hi, lo]):
        check("Clip", ins, opset=13)
    if dt == np.float32:  # onnxruntime's Clip-6 and Clip-11 are float32 only
        check("Clip", [x, lo, hi], opset=11)
        check("Clip", [x], {"min": -0.5, "max": 0.25}, opset=6)
        check("Clip", [x], {"max": 0.25}, opset=6)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_softmax_family(op, dt):
    rng = np.random.default_rng(47)
    x = _rand(rng, (3, 4, 5), dt, -5, 5)
    for axis in (0, 1, 2, -1, -3):
        check(op, [x], {"axis": axis}, opset=13)
        check(op, [x], {"axis": axis}, opset=11)  # coerced to 2-D at axis
    check(op, [x], opset=13)
    check(op, [x], opset=11)


def test_softmax_opsets_differ():
    x = np.random.default_rng(53).normal(size=(2, 3, 4))
    v11 = onnx_ops.run("Softmax", [x], {"axis": 1}, opset=11)[0]
    v13 = onnx_ops.run("Softmax", [x], {"axis": 1}, opset=13)[0]
    np.testing.assert_allclose(v11.reshape(2, -1).sum(axis=1), 1.0)
    np.testing.assert_allclose(v13.sum(axis=1), 1.0)
    assert not np.allclose(v11, v13)


# ---- errors for people ----------------------------------------------------------------------------


def test_errors():
    with pytest.raises(MDFError, match="broadcast"):
        onnx_ops.run("Add", [np.ones(3), np.ones(4)])
    with pytest.raises(MDFError, match="float"):
        onnx_ops.run("Exp", [np.ones(3, np.int64)])
    with pytest.raises(MDFError, match="LEFT"):
        onnx_ops.run("BitShift", [np.ones(3, np.uint8), np.ones(3, np.uint8)], {"direction": "UP"})
    with pytest.raises(MDFError, match="axis"):
        onnx_ops.run("Softmax", [np.ones((2, 3))], {"axis": 2})


# ---- nopython (jit=) versions against the Python kernels -------------------------------------------


def _jit_cases():
    """(op, inputs, attributes) per family; attributes are passed as floats, as the compiled
    backend does."""
    rng = np.random.default_rng(59)
    f = rng.normal(size=(3, 4))
    f32 = f.astype(np.float32)
    i = rng.integers(-9, 9, size=(3, 4))
    nz = np.where(i == 0, 2, i)
    b = rng.random((3, 4)) < 0.5
    f[0, 0] = np.inf
    return {
        "arith": [
            ("Add", [f, f[0]], {}),
            ("Sub", [f32, f32], {}),
            ("Mul", [f, 2.0], {}),
            ("Div", [i, nz[0]], {}),
            ("Pow", [np.abs(f), f], {}),
            ("PRelu", [f, f[0]], {}),
            ("Mod", [i, nz], {"fmod": 0.0}),
            ("Mod", [i, nz], {"fmod": 1.0}),
            ("Max", [f, f * 2, f - 1], {}),
            ("Sum", [f, f, f], {}),
            ("Mean", [f, f], {}),
            ("BitShift", [np.abs(i).astype(np.uint8), np.ones(4, np.uint8)], {"direction": "LEFT"}),
            ("BitShift", [i.astype(np.int32), np.ones(4, np.int32)], {"direction": "RIGHT"}),
        ],
        "logic": [
            ("Equal", [i, i[:, :1]], {}),
            ("Less", [f, f[0]], {}),
            ("And", [b, b[0]], {}),
            ("Not", [b], {}),
            ("Where", [b, f, f[0]], {}),
        ],
        "unary": [
            ("Exp", [f], {}),
            ("Sigmoid", [f32], {}),
            ("Relu", [f], {}),
            ("LeakyRelu", [f], {"alpha": 0.2}),
            ("Selu", [f], {"alpha": 1.5, "gamma": 1.1}),
            ("Clip", [f, np.asarray(-0.5), np.asarray(0.5)], {}),
            ("Clip", [f, None, None], {}),
            ("IsInf", [f], {"detect_negative": 0.0, "detect_positive": 1.0}),
            ("IsNaN", [f], {}),
        ],
        "axis": [
            ("Softmax", [f32], {"axis": 0.0}),
            ("LogSoftmax", [f], {}),
            ("Hardmax", [f], {}),
        ],
    }


@pytest.mark.parametrize("family", ["arith", "logic", "unary", "axis"])
def test_jit_in_nopython(family):
    """Every case of a family is called from ONE nopython function (as the compiled backend
    does), and each result equals the Python kernel's."""
    from numba import njit

    cases = _jit_cases()[family]
    fns, args, wants = [], [], []
    for op, ins, attrs in cases:
        sch = onnx_ops.schema(op)
        assert sch.jit is not None, f"{op} has no jit"
        fns.append(sch.jit)
        args.append(
            tuple(ins)
            + tuple(
                float(attrs[k]) if isinstance(attrs.get(k), float) else attrs.get(k, d)
                for k, d in sch.attributes.items()
            )
        )
        wants.append(sch.call(ins, {k: v for k, v in attrs.items()})[0])
        if sch.extra.get("jit_like"):  # (told its result's shape: the result as template)
            args[-1] += (np.empty_like(wants[-1]),)
    n = len(fns)
    src = (
        "def run(fns_args):\n    return ("
        + "".join(f"F{k}(*fns_args[{k}]), " for k in range(n))
        + ")\n"
    )
    ns = {f"F{k}": fns[k] for k in range(n)}
    exec(src, ns)
    got = njit(ns["run"])(tuple(args))
    for (op, _, _), g, w in zip(cases, got, wants):
        assert g.shape == w.shape, op
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-12, err_msg=op)
