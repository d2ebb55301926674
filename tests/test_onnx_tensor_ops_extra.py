"""Tensor ops with thin ONNX node-case coverage, checked against onnxruntime on random inputs.

Each check builds a one-node ONNX model with ``onnx.helper``, runs it in onnxruntime (the
oracle) and compares with ``mdf_engine.onnx_ops.run`` at the same opset. Covered: CumSum,
OneHot, Range, Einsum equations, Gemm transposes and biases, Pad modes and axes, Slice with
negative steps and clamped bounds, TopK with ties, Reduce* over random axes, the Cast node
cases (whose TensorProto data the conformance harness does not convert), the ``jit=`` kernels
and the errors raised for bad arguments.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto  # noqa: E402
from onnx_cases import check_against_ort as check  # noqa: E402

from mdf_engine import MDFError, onnx_ops  # noqa: E402
from mdf_engine.onnx_ops import argreduce, cumsum, linalg  # noqa: E402

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------- CumSum


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(dtype, exclusive, reverse):
    x = (RNG.standard_normal((3, 4, 5)) * 10).astype(dtype)
    for axis in (0, 1, 2, -1):
        check(
            "CumSum",
            [x, np.array(axis, dtype=np.int64)],
            {"exclusive": exclusive, "reverse": reverse},
            opset=14,
        )


def test_cumsum_jit_matches_kernel():
    x = RNG.standard_normal((4, 6))
    for axis in (0, 1):
        ref = onnx_ops.run("CumSum", [x, np.array(axis)], {"exclusive": 1, "reverse": 1})[0]
        got = cumsum.cumsum_like_jit(x, np.array(axis), 1, 1, ref)  # (jit_like: ref's shape)
        assert got.tobytes() == ref.tobytes()


# ---------------------------------------------------------------- OneHot


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
@pytest.mark.parametrize("vdtype", [np.float32, np.int64])
def test_onehot(axis, vdtype):
    depth = 5
    ind = RNG.integers(-7, 8, size=(3, 4)).astype(np.int64)  # includes out-of-range values
    values = np.array([2, 9], dtype=vdtype)
    check("OneHot", [ind, np.array([depth], dtype=np.int64), values], {"axis": axis}, opset=11)


def test_onehot_float_indices():
    ind = np.array([0.0, 2.7, -1.0, 4.0], dtype=np.float32)
    check(
        "OneHot", [ind, np.array(4.0, dtype=np.float32), np.array([0.0, 1.0], np.float32)], opset=11
    )


# ---------------------------------------------------------------- Range


@pytest.mark.parametrize(
    "start,limit,delta,dtype",
    [
        (0, 10, 3, np.int64),
        (10, -3, -4, np.int32),
        (5, 5, 1, np.int64),
        (5, 1, 1, np.int32),
        (0.5, 3.2, 0.3, np.float32),
        (2.0, -1.0, -0.7, np.float64),
        (1.0, 1.0, 0.5, np.float32),
    ],
)
def test_range(start, limit, delta, dtype):
    args = [np.array(v, dtype=dtype) for v in (start, limit, delta)]
    check("Range", args, opset=11)


# ---------------------------------------------------------------- Einsum


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij->ji", [(3, 4)]),
        ("ij->", [(3, 4)]),
        ("ii->i", [(4, 4)]),
        ("ii", [(4, 4)]),
        ("i,j->ij", [(3,), (4,)]),
        ("i,i", [(5,), (5,)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
        ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
        ("ij,ij->ij", [(3, 4), (3, 4)]),
        ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        ("ijk->kji", [(2, 3, 4)]),
        ("ij,jk", [(3, 4), (4, 2)]),
        ("bij,jk->bk", [(2, 3, 4), (4, 5)]),
    ],
)
def test_einsum(eq, shapes):
    ops = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    check("Einsum", ops, {"equation": eq}, opset=12, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- Gemm / MatMul


@pytest.mark.parametrize("transA", [0, 1])
@pytest.mark.parametrize("transB", [0, 1])
@pytest.mark.parametrize("cshape", [None, (), (5,), (4, 1), (4, 5)])
def test_gemm(transA, transB, cshape):
    a = RNG.standard_normal((3, 4) if transA else (4, 3)).astype(np.float32)
    b = RNG.standard_normal((5, 3) if transB else (3, 5)).astype(np.float32)
    c = None if cshape is None else RNG.standard_normal(cshape).astype(np.float32)
    attrs = {"transA": transA, "transB": transB, "alpha": 0.7, "beta": 1.3}
    check("Gemm", [a, b, c], attrs, opset=13, rtol=1e-5, atol=1e-5)


def test_gemm_and_matmul_jit():
    a = RNG.standard_normal((4, 3))
    b = RNG.standard_normal((5, 3))
    c = RNG.standard_normal((5,))
    ref = onnx_ops.run("Gemm", [a, b, c], {"transB": 1, "alpha": 2.0, "beta": 0.5})[0]
    np.testing.assert_allclose(linalg.gemm_jit(a, b, c, 2.0, 0.5, 0, 1), ref)
    np.testing.assert_allclose(linalg.gemm_jit(a, b, None, 2.0, 0.5, 0, 1), 2.0 * a @ b.T)
    np.testing.assert_allclose(linalg.matmul_jit(a, b.T), a @ b.T)


def test_matmul_int_and_batch():
    check(
        "MatMul",
        [
            RNG.integers(-5, 5, (2, 3, 4)).astype(np.int32),
            RNG.integers(-5, 5, (4, 2)).astype(np.int32),
        ],
    )
    check("MatMul", [RNG.standard_normal((1, 3, 4)), RNG.standard_normal((2, 4, 5))])


def test_matmulinteger_zero_points():
    a = RNG.integers(0, 255, (3, 4)).astype(np.uint8)
    b = RNG.integers(0, 255, (4, 5)).astype(np.uint8)
    check("MatMulInteger", [a, b, np.array(12, np.uint8), np.array(200, np.uint8)], opset=10)
    zp = np.array([1, 2, 3], np.uint8)  # per-row zero point (onnxruntime only takes scalars)
    got = onnx_ops.run("MatMulInteger", [a, b, zp, None], opset=10)[0]
    exp = ((a.astype(np.int64) - zp[:, None]) @ b.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(got, exp)
    assert got.dtype == np.int32


def test_det_against_ort_and_jit():
    x = RNG.standard_normal((2, 3, 5, 5))
    check("Det", [x.astype(np.float32)], opset=11, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(onnx_ops.run("Det", [x])[0], np.linalg.det(x), rtol=1e-10)
    np.testing.assert_allclose(linalg.det_jit(x[0, 0]), np.linalg.det(x[0, 0]))
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert onnx_ops.run("Det", [sing])[0] == 0.0


# ---------------------------------------------------------------- Pad


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [[1, 2, 2, 1], [0, 3, 1, 0], [2, -1, -1, 2]])
def test_pad_modes(mode, pads):
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    cv = np.array(1.5, dtype=np.float32) if mode == "constant" else None
    check("Pad", [x, np.array(pads, dtype=np.int64), cv], {"mode": mode}, opset=19)


def test_pad_axes_and_old_forms():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check(
        "Pad",
        [x, np.array([1, 2], np.int64), np.array(0.5, np.float32), np.array([-1], np.int64)],
        {"mode": "constant"},
        opset=18,
    )
    check("Pad", [x, np.array([0, 1, 1, 0, 2, 2], np.int64)], {"mode": "reflect"}, opset=11)
    check("Pad", [x], {"pads": [0, 1, 1, 0, 2, 2], "mode": "edge"}, opset=2)
    with pytest.raises(MDFError, match="mode"):
        onnx_ops.run("Pad", [x, np.array([0, 1, 1, 0, 2, 2])], {"mode": "wrap"}, opset=18)


# ---------------------------------------------------------------- Slice


BIG = np.iinfo(np.int64).max


@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [
        ([-1], [-BIG], [1], [-1]),
        ([BIG], [-BIG], [0], [-2]),
        ([4, 3], [0, -10], [0, 1], [-1, -2]),
        ([2, -2], [-5, 0], [-1, 0], [-3, -1]),
        ([10, 1], [2, 5], [0, 1], [-3, 2]),
        ([-100, 0], [100, 6], [0, 1], [1, 3]),
        ([3], [3], [0], [-1]),
    ],
)
def test_slice_negative_steps(starts, ends, axes, steps):
    x = RNG.standard_normal((6, 7)).astype(np.float32)
    args = [np.array(v, dtype=np.int64) for v in (starts, ends, axes, steps)]
    check("Slice", [x, *args], opset=13)


# ---------------------------------------------------------------- TopK


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_topk_ties(largest, axis):
    x = RNG.integers(0, 3, size=(5, 6, 4)).astype(np.float32)  # many equal values
    k = np.array([3], dtype=np.int64)
    check("TopK", [x, k], {"axis": axis, "largest": largest, "sorted": 1}, opset=11, n_out=2)


@pytest.mark.parametrize("largest", [0, 1])
def test_topk_small_k_long_rows_with_ties(largest):
    x = RNG.integers(0, 6, size=(4, 60)).astype(np.float32)  # one-pass selection path
    check("TopK", [x, np.array([4], np.int64)], {"axis": 1, "largest": largest}, opset=11, n_out=2)
    check(
        "TopK",
        [x.T.copy(), np.array([2], np.int64)],
        {"axis": 0, "largest": largest},
        opset=11,
        n_out=2,
    )


def test_reduce_max_min_propagate_nan():
    x = RNG.standard_normal((3, 4, 5))
    x[1, 2, 3] = np.nan
    for op, f in (("ReduceMax", np.max), ("ReduceMin", np.min)):
        for axes in ([0], [2], [0, 2]):
            got = onnx_ops.run(op, [x], {"axes": axes, "keepdims": 0}, opset=11)[0]
            np.testing.assert_array_equal(got, f(x, axis=tuple(axes)))


def test_topk_int_and_old_opsets():
    x = RNG.integers(-50, 50, size=(4, 7)).astype(np.int64)
    check("TopK", [x, np.array([7], np.int64)], {"axis": 1}, opset=11, n_out=2)
    y = RNG.standard_normal((3, 5)).astype(np.float32)
    check("TopK", [y, np.array([2], np.int64)], {"axis": 0}, opset=10, n_out=2)
    check("TopK", [y], {"axis": 1, "k": 2}, opset=1, n_out=2)


# ---------------------------------------------------------------- reductions


@pytest.mark.parametrize(
    "op",
    [
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSumExp",
        "ReduceSumSquare",
    ],
)
@pytest.mark.parametrize("axes", [[0, 2], [1], [-1, 0], [0, 1, 2]])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reductions_random_axes(op, axes, keepdims):
    x = RNG.uniform(0.5, 1.5, size=(3, 4, 5)).astype(np.float32)
    opset = 13 if op == "ReduceSum" else 18
    check(op, [x, np.array(axes, np.int64)], {"keepdims": keepdims}, opset=opset, rtol=1e-5)
    check(op, [x], {"axes": axes, "keepdims": keepdims}, opset=11, rtol=1e-5)


def test_reduce_int_dtype_and_noop():
    x = RNG.integers(-9, 9, size=(3, 4)).astype(np.int32)
    check("ReduceSum", [x, np.array([1], np.int64)], {"keepdims": 0}, opset=13)
    check("ReduceMax", [x, np.array([0], np.int64)], opset=18)
    y = RNG.standard_normal((2, 3)).astype(np.float32)
    check("ReduceSum", [y, np.array([], np.int64)], {"noop_with_empty_axes": 1}, opset=13)


def test_argmax_jit_keepdims_layout():
    x = RNG.standard_normal((3, 4, 5))
    ref = onnx_ops.run("ArgMax", [x], {"axis": 1, "keepdims": 1})[0]
    np.testing.assert_array_equal(argreduce.argmax_like_jit(x, 1, 1, 0, ref), ref)
    ref = onnx_ops.run("ArgMin", [x], {"axis": -1, "keepdims": 0, "select_last_index": 1})[0]
    np.testing.assert_array_equal(argreduce.argmin_like_jit(x, -1, 0, 1, ref), ref)


def test_reduce_jit_from_nopython_code():
    """The registered ``jit`` versions, called from a user's nopython function with constant
    attributes, give the Python kernels' results (rank included)."""
    import numba

    jsum = onnx_ops.schema("ReduceSum", 11).jit
    jmax = onnx_ops.schema("ReduceMax", 18).jit
    jarg = onnx_ops.schema("ArgMax", 13).jit
    jtr = onnx_ops.schema("Transpose").jit

    like = np.empty((5, 3, 4))  # (these jits take their result's template: jit_like)
    ls, lm, la = np.empty(4), np.empty((3, 1, 5)), np.empty((3, 4), np.int64)

    @numba.njit
    def user(x, like, ls, lm, la):
        return (
            jsum(x, (0, 2), 0, ls),
            jmax(x, (1,), 1, 0, lm),
            jarg(x, 2, 0, 0, la),
            jtr(x, (2, 0, 1), like),
        )

    x = RNG.standard_normal((3, 4, 5))
    s, m, a, t = user(x, like, ls, lm, la)
    np.testing.assert_array_equal(
        s, onnx_ops.run("ReduceSum", [x], {"axes": [0, 2], "keepdims": 0}, opset=11)[0]
    )
    np.testing.assert_array_equal(m, onnx_ops.run("ReduceMax", [x, np.array([1])], opset=18)[0])
    np.testing.assert_array_equal(a, onnx_ops.run("ArgMax", [x], {"axis": 2, "keepdims": 0})[0])
    np.testing.assert_array_equal(t, np.transpose(x, (2, 0, 1)))


# ---------------------------------------------------------------- Cast (more dtype pairs)


@pytest.mark.parametrize(
    "src,to",
    [
        (np.float32, TensorProto.INT32),
        (np.float64, TensorProto.INT8),
        (np.float32, TensorProto.BOOL),
        (np.int64, TensorProto.FLOAT),
        (np.int32, TensorProto.UINT8),
        (np.bool_, TensorProto.FLOAT),
    ],
)
def test_cast_numeric(src, to):
    x = (RNG.standard_normal((4, 5)) * 50).astype(src)
    if np.dtype(src).kind == "i" and to == TensorProto.UINT8:
        x = np.abs(x) % 200
    check("Cast", [x], {"to": to}, opset=13)


def test_cast_strings():
    s = np.array(["1.5", "-INF", "inf", "NaN", "1e3", " 7 "], dtype=object)
    got = onnx_ops.run("Cast", [s], {"to": TensorProto.FLOAT})[0]
    exp = np.array([float(v) for v in ["1.5", "-inf", "inf", "nan", "1e3", "7"]], np.float32)
    np.testing.assert_array_equal(got, exp)
    back = onnx_ops.run("Cast", [np.array([1.5, -2.0], np.float32)], {"to": "STRING"})[0]
    assert [float(v) for v in back] == [1.5, -2.0]
    ints = onnx_ops.run("Cast", [np.array(["100.5", "-3"], dtype=object)], {"to": 7})[0]
    assert ints.tolist() == [100, -3] and ints.dtype == np.int64


# ---------------------------------------------------------------- misc vs ORT


def test_shape_ops_against_ort():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check("Transpose", [x], {"perm": [2, 0, 1]})
    check("Flatten", [x], {"axis": -1})
    check("Expand", [x[:, :1], np.array([3, 2, 1, 4], np.int64)])
    check("Tile", [x, np.array([1, 2, 2], np.int64)])
    check("Reshape", [x, np.array([0, -1], np.int64)])
    check("Unsqueeze", [x, np.array([0, -1], np.int64)])
    check("Squeeze", [x[:, :1], np.array([1], np.int64)])
    check(
        "DepthToSpace",
        [RNG.standard_normal((1, 8, 2, 3)).astype(np.float32)],
        {"blocksize": 2, "mode": "CRD"},
        opset=11,
    )
    check("SpaceToDepth", [RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)], {"blocksize": 2})
    check("Split", [x, np.array([1, 2], np.int64)], {"axis": 1}, n_out=2)
    check(
        "Split",
        [RNG.standard_normal((7, 2)).astype(np.float32)],
        {"num_outputs": 3},
        opset=18,
        n_out=3,
    )


def test_indexing_against_ort():
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    check("Gather", [x, np.array([[0, -1], [2, 3]], np.int64)], {"axis": 1})
    ind = RNG.integers(-4, 4, size=(4, 2, 3)).astype(np.int64)
    check("GatherElements", [x, ind], {"axis": 0})
    check("GatherND", [x, np.array([[1, 2], [3, -1]], np.int64)])
    upd = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    idx = np.stack([RNG.permutation(5)[:2] for _ in range(12)]).reshape(4, 3, 2)
    idx = np.ascontiguousarray(idx.transpose(0, 2, 1)).astype(np.int64)
    check("ScatterElements", [x, idx, upd], {"axis": 1})
    check(
        "ScatterND",
        [x, np.array([[0, 1], [3, 4]], np.int64), RNG.standard_normal((2, 3)).astype(np.float32)],
        {"reduction": "add"},
        opset=16,
    )
    check("NonZero", [(RNG.standard_normal((3, 4)) > 0)], opset=13)
    check("Compress", [x, np.array([1, 0, 1], np.bool_)], {"axis": 1}, opset=11)
    xs = RNG.standard_normal((5, 4, 2)).astype(np.float32)
    check(
        "ReverseSequence",
        [xs, np.array([1, 5, 3, 0], np.int64)],
        {"batch_axis": 1, "time_axis": 0},
        opset=10,
    )
    u = RNG.integers(0, 4, size=(10,)).astype(np.float32)
    check("Unique", [u], {"sorted": 0}, opset=11, n_out=4)
    check("Unique", [u], {"sorted": 1}, opset=11, n_out=4)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "op,inputs,attrs,match",
    [
        ("Reshape", [np.zeros((2, 3)), np.array([4, -1])], {}, "cannot reshape"),
        ("Gather", [np.zeros((2, 3)), np.array([5])], {}, "out of range"),
        ("Transpose", [np.zeros((2, 3))], {"perm": [0, 0]}, "permutation"),
        ("MatMul", [np.zeros((2, 3)), np.zeros((4, 2))], {}, "inner dimensions"),
        ("Det", [np.zeros((2, 3))], {}, "square"),
        ("Split", [np.zeros(6)], {}, "split"),
        ("Einsum", [np.zeros((2, 2))], {"equation": "ij,jk->ik"}, "operands"),
        ("TopK", [np.zeros((2, 3)), np.array([4])], {}, "between 0"),
        ("Cast", [np.zeros(2)], {"to": 17}, "not supported"),
    ],
)
def test_errors_are_mdferrors(op, inputs, attrs, match):
    with pytest.raises(MDFError, match=match):
        onnx_ops.run(op, inputs, attrs, opset=13)
