"""The nopython twins (``jit=``) of the axis, reduction, normalisation, recurrent and other
numeric ops (helper jitB: ``onnx_ops/_jitb_*.py``) against their Python kernels and against the
ONNX package's backend node test cases (the oracle).

Each case is called as the compiled backend calls the kernel (``backends/compiled/calls.py``):
the inputs (0-d ones as numbers, as number slots hold them), the attributes in schema order
(string lists as tuples, number lists as arrays), and for a kernel registered with ``jit_like``
an array of the result's shape and dtype. A kernel made by ``_ew_kernels.jit_entry`` (which runs
its Python kernel when called from Python) is called from one small jitted function per op.
Every output must equal the Python kernel's bit for bit (dtype, shape, bytes) and the case's
expected output; a ``jit_like`` kernel refuses a template of another shape.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from onnx_cases import compare, load_skips, node_cases

from mdf_engine import onnx_ops

REDUCE = "L1 L2 LogSum LogSumExp Max Mean Min Prod Sum SumSquare".split()
#: the ops whose every case runs here
OPS = {
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "ArgMax",
    "ArgMin",
    "RNN",
    "GRU",
    "LSTM",
    "CumSum",
    "HardSwish",
    "Det",
    "Resize",
    "Upsample",
    "InstanceNormalization",
    "MeanVarianceNormalization",
    "LpNormalization",
    "LRN",
    *(f"Reduce{r}" for r in REDUCE),
}


def _arg(v):
    """An attribute as the compiled code passes it."""
    if isinstance(v, list):
        if v and all(isinstance(e, str) for e in v):
            return tuple(v)
        return np.asarray(v, dtype=np.int64 if all(isinstance(e, int) for e in v) else None)
    return v


def _jit_args(sch, case):
    args = [x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in case.inputs]
    if not sch.variadic:
        args += [None] * (len(sch.inputs) - len(args))
    args += [_arg(case.attributes.get(n, d)) for n, d in sch.attributes.items()]
    return args


_CALLERS: dict = {}


def _call(sch, args):
    """The kernel called from nopython code (a dispatcher directly)."""
    fn = sch.jit
    if isinstance(fn, numba.core.registry.CPUDispatcher):
        return fn(*args)
    key = (id(fn), len(args))
    if key not in _CALLERS:
        names = ", ".join(f"a{k}" for k in range(len(args)))
        ns = {"fn": fn}
        exec(f"def caller({names}):\n    return fn({names})\n", ns)
        _CALLERS[key] = numba.njit(ns["caller"])
    return _CALLERS[key](*args)


def _usable(c) -> bool:
    arrays = [x for x in [*c.inputs, *c.expected] if isinstance(x, np.ndarray)]
    if any(x.dtype.kind in "OUSVc" or x.dtype.name in ("float16", "bfloat16") for x in arrays):
        return False  # (strings, float16: never in a compiled slot)
    return "FLOAT8" not in c.name and c.expected[0] is not None


#: cases per op at most (each kind of call compiles its kernel anew: the CI's compile budget)
PER_OP = 2
#: the recurrent twins are large (each kind ~20 CPU s): one ONNX case each, and the activation
#: tests below
RECURRENT = ("RNN", "GRU", "LSTM")
#: Resize's modes and coordinate transformations are values, not kinds: more of its cases
PER_OP_RESIZE = 40


def _kind(c) -> tuple:
    """What decides the kernel a case compiles: op, opset form, input dtypes and ranks, the
    attributes named."""
    ins = tuple(None if x is None else (np.asarray(x).dtype.str, np.ndim(x)) for x in c.inputs)
    if c.op in ("Resize", "Upsample"):  # (one compiled kernel: modes are values)
        return c.name
    return (c.op, c.opset >= 13, ins, tuple(sorted(c.attributes)))


def _cap(op: str) -> int:
    if op in ("Resize", "Upsample"):
        return PER_OP_RESIZE
    # (the ten Reduce* ops share their cores: one case each)
    return 1 if op in RECURRENT or op.startswith("Reduce") else PER_OP


def _cases():
    skips = load_skips()
    seen: dict = {}
    out = []
    for c in sorted(node_cases(), key=lambda c: c.name):
        if c.name in skips or c.domain not in ("", "ai.onnx") or c.op not in OPS:
            continue
        kinds = seen.setdefault(c.op, set())
        if not _usable(c) or _kind(c) in kinds or len(kinds) >= _cap(c.op):
            continue
        kinds.add(_kind(c))
        out.append(pytest.param(c, id=c.name))
    return out


@pytest.mark.parametrize("case", _cases())
def test_jit_equals_python_and_oracle(case) -> None:
    sch = onnx_ops.schema(case.op, case.opset)
    assert sch.jit is not None, f"{case.op} (opset {case.opset}) has no jit kernel"
    want = [np.asarray(w) for w in onnx_ops.run(case.op, case.inputs, case.attributes, case.opset)]
    args = _jit_args(sch, case)
    like = sch.extra.get("jit_like")
    if like:
        w = want[0]
        args.append(np.zeros(w.shape, w.dtype) if w.ndim else w.dtype.type(0).item())
    got = _call(sch, args)
    got = [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
    # (a number slot holds float64, int64 or bool; the interpreter's 0-d value is stored so)
    got = [g.astype(w.dtype) if not w.ndim else g for g, w in zip(got, want)]
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), np.max(np.abs(g - w))
    compare(case, got)
    if like and want[0].ndim:  # another shape than the warm-up's: refused
        args[-1] = np.zeros((want[0].shape[0] + 1, *want[0].shape[1:]), want[0].dtype)
        with pytest.raises(ValueError):
            _call(sch, args)


def test_every_op_has_cases() -> None:
    seen = {p.values[0].op for p in _cases()}
    assert seen == OPS, OPS - seen


def _recurrent(op: str, gates: int, bidir: bool, seed: int) -> list:
    rng = np.random.default_rng(seed)
    T, B, I, H, nd = 4, 3, 2, 5, 2 if bidir else 1
    out = [
        rng.standard_normal((T, B, I)),
        rng.standard_normal((nd, gates * H, I)) * 0.5,
        rng.standard_normal((nd, gates * H, H)) * 0.5,
        rng.standard_normal((nd, 2 * gates * H)) * 0.1,
        np.array([4, 2, 3], dtype=np.int32),
        rng.standard_normal((nd, B, H)),
    ]
    return [x if x.dtype.kind == "i" else x.astype(np.float32) for x in out]


@pytest.mark.parametrize(
    "op,gates,attrs",
    [
        (
            "RNN",
            1,
            {
                "activations": ["LeakyRelu", "ScaledTanh"],
                "activation_alpha": [0.3, 0.7],
                "activation_beta": [1.5],
                "direction": "bidirectional",
            },
        ),
        (
            "GRU",
            3,
            {
                "activations": ["HardSigmoid", "Softsign"],
                "activation_alpha": [0.25],
                "activation_beta": [0.4],
                "linear_before_reset": 1,
                "clip": 2.0,
            },
        ),
        (
            "LSTM",
            4,
            {
                "activations": ["Sigmoid", "Elu", "Tanh"],
                "activation_alpha": [0.8],
                "direction": "reverse",
            },
        ),
    ],
)
def test_recurrent_activations(op, gates, attrs) -> None:
    """The recurrent twins take the activation attributes (before: a Python call): the values
    of the Python kernel bit for bit, and onnxruntime's."""
    from onnx_cases import ort_run

    inputs = _recurrent(op, gates, attrs.get("direction") == "bidirectional", len(op))
    attrs = {**attrs, "hidden_size": 5}
    sch = onnx_ops.schema(op, 14)
    want = onnx_ops.run(op, inputs, attrs, 14)
    case = type("C", (), {"inputs": inputs, "attributes": attrs})
    got = _call(sch, _jit_args(sch, case))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
    for g, o in zip(got, ort_run(op, inputs, attrs, len(want), opset=14)):
        np.testing.assert_allclose(g, o, rtol=1e-5, atol=1e-6)
