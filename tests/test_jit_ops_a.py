"""The nopython twins of Pad, OneHot, DepthToSpace/SpaceToDepth, GatherElements, GatherND,
Scatter/ScatterElements/ScatterND, EyeLike and Dropout (``onnx_ops/_jita_*.py``) against their
Python kernels and the ONNX backend node test cases (the oracle), called as the compiled
backend calls them (tests/test_jit_ops.py's machinery): bitwise the Python kernel's result and
the case's expected output, a template of another shape refused, bad arguments refused as the
Python kernel refuses them.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_jit_ops import _jit_args, check_jit_case, node_jit_cases

from mdf_engine import onnx_ops
from mdf_engine.registry import REGISTRY

#: the ops whose kernels ``_jita_*`` give
OPS = set(
    "Pad OneHot DepthToSpace SpaceToDepth GatherElements GatherND Scatter ScatterElements "
    "ScatterND EyeLike Dropout Split".split()
)


def _random(case) -> bool:
    """A training-mode Dropout case: its mask is drawn (the Python kernel's, not compiled)."""
    return case.op == "Dropout" and len(case.inputs) > 2 and bool(np.asarray(case.inputs[2]))


CASES = [p for p in node_jit_cases(OPS) if not _random(p.values[0])]


@pytest.mark.parametrize("case", CASES)
def test_jit_equals_python_and_oracle(case) -> None:
    sch = onnx_ops.schema(case.op, case.opset)
    if len(sch.outputs) == 1 and not sch.extra.get("jit_parts"):
        check_jit_case(case)
        return
    attrs = dict(case.attributes)
    if sch.extra.get("jit_parts") and "split" not in attrs and len(case.inputs) < 2:
        attrs.setdefault("num_outputs", len(case.expected))  # (as onnx_ops.run is told)
    want = onnx_ops.run(case.op, case.inputs, attrs, opset=case.opset)
    args = _jit_args(sch, case)
    if sch.extra.get("jit_parts"):  # (Split: the parts' slots, written by the kernel)
        args[list(sch.attributes).index("num_outputs") - len(sch.attributes)] = attrs.get(
            "num_outputs"
        )
        got = tuple(np.full_like(w, 7) for w in want)
        sch.jit(*args, got)
        last = got[-1].shape
        wrong = got[:-1] + (np.zeros((last[0] + 1, *last[1:]), got[-1].dtype),)
        with pytest.raises(ValueError):
            sch.jit(*args, wrong)
    else:
        got = sch.jit(*args)
    for k, e in enumerate(case.expected):
        g, w = np.asarray(got[k]), np.asarray(want[k])
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), k
        np.testing.assert_array_equal(g, np.asarray(e))


def test_every_op_has_cases() -> None:
    """Each op of :data:`OPS` is exercised by at least one case, and every registered version
    of them has a kernel."""
    assert {p.values[0].op for p in CASES} == OPS
    missing = [
        f"{s.name}@{s.since}"
        for op in OPS
        for s in REGISTRY.versions(f"onnx::{op}")
        if s.jit is None and ".variants." not in s.kernel.__module__
    ]
    assert not missing, missing


X = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "op,inputs,attrs",
    [
        ("Pad", [np.zeros((2, 1)), np.array([0, 1, 0, 1])], {"mode": "reflect"}),
        ("Pad", [X, np.array([0, 1])], {}),
        ("Pad", [X, np.array([1, 1]), None, np.array([3])], {}),
        ("Pad", [X, np.array([1, 1, 1, 1, 1, 1])], {"mode": "bogus"}),
        ("Pad", [np.zeros((2, 0)), np.array([0, 1, 0, 1])], {"mode": "edge"}),
        ("OneHot", [np.array([1]), np.array([0]), np.array([0.0, 1.0])], {}),
        ("OneHot", [np.array([1]), np.array([3]), np.array([0.0, 1.0, 2.0])], {}),
        ("OneHot", [np.array([1]), np.array([3]), np.array([0.0, 1.0])], {"axis": 3}),
        ("DepthToSpace", [X.reshape(1, 3, 2, 4)], {"blocksize": 2}),
        ("DepthToSpace", [X.reshape(1, 4, 2, 3)], {"blocksize": 2, "mode": "XYZ"}),
        ("SpaceToDepth", [X.reshape(1, 2, 3, 4)], {"blocksize": 2}),
        ("GatherElements", [X, np.zeros((2, 3, 1), np.int64) + 4], {"axis": 2}),
        ("GatherElements", [X, np.zeros((2, 3), np.int64)], {"axis": 0}),
        ("ScatterElements", [X, np.zeros((1, 1, 1), np.int64), np.ones((1, 1, 2))], {}),
        ("ScatterElements", [X, np.zeros((1, 1, 1), np.int64) - 3, np.ones((1, 1, 1))], {}),
        ("ScatterElements", [X, np.zeros((1, 1, 1), np.int64), X[:1, :1, :1]], {"reduction": "x"}),
        ("GatherND", [X, np.array([[2]])], {}),
        ("GatherND", [X, np.zeros((2, 4), np.int64)], {}),
        ("GatherND", [X, np.zeros((3, 1), np.int64)], {"batch_dims": 1}),
        ("ScatterND", [X, np.array([[0, 3]]), np.ones((1, 4))], {}),
        ("ScatterND", [X, np.array([[0, 1]]), np.ones((1, 3))], {}),
        ("EyeLike", [X], {}),
        ("Dropout", [X, np.array(1.5)], {}),
        ("Split", [X, np.array([1, 1])], {"axis": 1}),
        ("Split", [X, np.array([1, 3])], {"axis": 3}),
        ("Split", [X], {"num_outputs": 0}),
    ],
)
def test_errors_as_the_python_kernel(op, inputs, attrs) -> None:
    """Where the Python kernel refuses its arguments, the jit kernel raises too."""
    sch = onnx_ops.schema(op, 19)
    with pytest.raises(Exception) as py_err:
        onnx_ops.run(op, inputs, attrs, opset=19)
    assert "MDFError" in type(py_err.value).__name__
    args = list(inputs) + [None] * (len(sch.inputs) - len(inputs))
    args += [attrs.get(a, d) for a, d in sch.attributes.items()]
    if sch.extra.get("jit_like"):
        args.append(np.zeros((1,)))
    if sch.extra.get("jit_parts"):
        args.append((np.zeros((2, 1, 4)), np.zeros((2, 1, 4))))
    with pytest.raises((ValueError, IndexError)):
        sch.jit(*args)
