"""The nopython twins (``jit=``) of the shape, indexing and conversion ops against their Python
kernels and against the ONNX package's backend node test cases (the oracle).

Each case is called the way the compiled backend calls the kernel (``backends/compiled/calls.py``):
the inputs (0-d ones as numbers, as number slots hold them), the attributes in schema order, and
for a kernel registered with ``jit_like`` an array of the result's shape and dtype. Its result
must equal the Python kernel's bit for bit (dtype, shape, bytes) and the case's expected output;
a shape other than the warm-up's, or a bad index, raises.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_cases import compare, load_skips, node_cases

from mdf_engine import onnx_ops
from mdf_engine.registry import REGISTRY

#: the ops whose kernels ``_reshape_jit`` / ``_index_jit`` give
OPS = set(
    "Reshape Squeeze Unsqueeze Flatten Expand Tile Transpose Concat Shape Size ConstantOfShape "
    "Cast CastLike Gather Slice Trilu Range".split()
)


def _jit_args(sch, case):
    """The kernel's arguments as compiled code passes them."""
    args = []
    for x in case.inputs:
        if isinstance(x, np.ndarray) and x.ndim == 0:
            x = x.item()  # (a number slot)
        args.append(x)
    if not sch.variadic:
        args += [None] * (len(sch.inputs) - len(args))
    for name, default in sch.attributes.items():
        v = case.attributes.get(name, default)
        if isinstance(v, list):
            v = np.asarray(v, dtype=np.int64 if all(isinstance(e, int) for e in v) else None)
        args.append(v)
    return args


def node_jit_cases(ops: set[str]) -> list:
    """The backend node cases of ``ops`` a compiled slot can hold (no strings, no float16)."""
    out = []
    skips = load_skips()  # (cases the Python kernels do not run either, with their reasons)
    for c in node_cases():
        if c.name in skips:
            continue
        if c.domain not in ("", "ai.onnx") or c.op not in ops:
            continue
        if any(
            isinstance(x, np.ndarray)
            and (x.dtype.kind in "OUSV" or x.dtype.itemsize == 2)
            and x.dtype.kind == "f"
            or isinstance(x, np.ndarray)
            and x.dtype.kind in "OUSV"
            for x in c.inputs
        ):
            continue  # (strings, float16: never in a compiled slot)
        if c.expected[0] is None or np.asarray(c.expected[0]).dtype.kind in "OUSc":
            continue
        if np.asarray(c.expected[0]).dtype.name in ("float16", "bfloat16") or "FLOAT8" in c.name:
            continue
        out.append(pytest.param(c, id=c.name))
    return out


def _cases():
    return node_jit_cases(OPS)


def check_jit_case(case) -> None:
    """The case's kernel called as the compiled code calls it: bitwise the Python kernel's
    result and the case's expected output; a template of another shape is refused."""
    sch = onnx_ops.schema(case.op, case.opset)
    if sch.jit is None:
        pytest.fail(f"{case.op} (opset {case.opset}) has no jit kernel")
    want = onnx_ops.run(case.op, case.inputs, case.attributes, opset=case.opset)[0]
    want = np.asarray(want)
    args = _jit_args(sch, case)
    if sch.extra.get("jit_like"):  # (a number slot's template: a number of its kind)
        scalar = {"b": False, "i": 0, "u": 0}.get(want.dtype.kind, 0.0)
        args.append(np.zeros(want.shape, want.dtype) if want.ndim else scalar)
    got = np.asarray(sch.jit(*args))
    if not want.ndim:  # a number slot holds float64, int64 or bool; the interpreter's 0-d
        got = got.astype(want.dtype)  # value is stored there alike
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    assert got.tobytes() == want.tobytes()
    compare(case, [got])
    if sch.extra.get("jit_like") and want.ndim:  # another shape than the warm-up's: refused
        args[-1] = np.zeros((want.shape[0] + 1, *want.shape[1:]), want.dtype)
        with pytest.raises((ValueError, IndexError)):
            sch.jit(*args)


@pytest.mark.parametrize("case", _cases())
def test_jit_equals_python_and_oracle(case) -> None:
    check_jit_case(case)


def test_every_op_has_cases() -> None:
    """Each op of :data:`OPS` is exercised by at least one case."""
    seen = {p.values[0].op for p in _cases()}
    assert seen == OPS, OPS - seen


@pytest.mark.parametrize(
    "op,inputs,attrs",
    [
        ("Gather", [np.arange(6.0).reshape(2, 3), np.array([0, 3])], {"axis": 1}),
        ("Gather", [np.arange(6.0).reshape(2, 3), np.array([-4])], {"axis": 1}),
        ("Reshape", [np.arange(6.0), np.array([4, -1])], {}),
        ("Reshape", [np.arange(6.0), np.array([-1, -1])], {}),
        ("Squeeze", [np.zeros((2, 1)), np.array([0])], {}),
        ("Unsqueeze", [np.zeros((2, 1)), np.array([1, 1])], {}),
        ("Expand", [np.zeros((2, 3)), np.array([4, 1])], {}),
        ("Slice", [np.zeros((2, 3)), np.array([0]), np.array([1]), None, np.array([0])], {}),
        ("Transpose", [np.zeros((2, 3))], {"perm": np.array([0, 0])}),
    ],
)
def test_errors_as_the_python_kernel(op, inputs, attrs) -> None:
    """Where the Python kernel refuses its arguments, the jit kernel raises too."""
    sch = onnx_ops.schema(op, 13)
    with pytest.raises(Exception) as py_err:
        onnx_ops.run(op, inputs, attrs, opset=13)
    assert "MDFError" in type(py_err.value).__name__
    args = list(inputs) + [None] * (len(sch.inputs) - len(inputs))
    args += [attrs.get(a, d) for a, d in sch.attributes.items()]
    args.append(np.zeros((1,)))
    with pytest.raises((ValueError, IndexError)):
        sch.jit(*args)


def test_registry_has_kernels() -> None:
    """Every version of these ops has a nopython kernel now."""
    missing = [
        f"{s.name}@{s.since}"
        for op in OPS
        for s in REGISTRY.versions(f"onnx::{op}")
        if s.jit is None and ".variants." not in s.kernel.__module__  # (adapters: Python)
    ]
    assert not missing, missing


def _gather_model():
    from mdf_engine.model import Graph, InputPort, Model, Node, OutputPort, Parameter

    node = Node(
        id="pick",
        input_ports=[InputPort(id="i", shape=[1])],
        parameters=[
            Parameter(id="data", value=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
            Parameter(id="g", function="onnx::Gather", args={"data": "data", "indices": "i"}),
            Parameter(id="r", function="onnx::Reshape", args={"data": "g", "shape": "s"}),
            Parameter(id="s", value=[-1]),
        ],
        output_ports=[OutputPort(id="out", value="r")],
    )
    return Model(id="m", graphs=[Graph(id="g", nodes=[node])], onnx_opset_version=13)


def test_compiled_gather_reshape_and_a_bad_index() -> None:
    """Gather with its indices from an input port and a Reshape by a parameter compile without
    a Python call, give the interpreted values, and a bad index stops a later run with one
    line on both backends."""
    from mdf_engine import Simulation
    from mdf_engine.errors import MDFError

    sims = {b: Simulation(_gather_model(), backend=b) for b in ("interpreted", "compiled")}
    for k in ([1], [0], [-1]):
        outs = {}
        for b, sim in sims.items():
            sim.run(steps=3, initializer={"i": np.array(k, dtype=np.int64)})
            outs[b] = np.asarray(sim.value("pick", "out"))
        assert outs["compiled"].tobytes() == outs["interpreted"].tobytes()
        assert outs["compiled"].dtype == outs["interpreted"].dtype
    runner = sims["compiled"].runner
    assert runner.is_compiled and runner.python_calls == [], runner.fallback_reason
    for b, sim in sims.items():
        with pytest.raises(MDFError) as e:
            sim.run(steps=1, initializer={"i": np.array([2], dtype=np.int64)})
        assert "\n" not in str(e.value) and "Gather" in str(e.value), (b, str(e.value))
