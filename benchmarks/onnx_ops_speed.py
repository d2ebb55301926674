"""Per-operator speed of ``mdf_engine.onnx_ops.run`` against onnxruntime and numpy.

Run: ``python benchmarks/onnx_ops_speed.py [--quick] [--only Add,MatMul] [--rounds 5]``. For
every case it prints the median time of one call of

* ours:  ``onnx_ops.run(op, inputs, attributes, opset)`` (the public call path, registry lookup
  included; Numba kernels are compiled in a warm-up call before timing);
* ort:   a prebuilt single-node onnxruntime session, single-threaded
  (``intra_op_num_threads = inter_op_num_threads = 1``), ``sess.run(None, feeds)``;
  our side is single-threaded too: the BLAS (OpenBLAS/MKL/OpenMP) and Numba thread counts are
  set to 1 before numpy is imported, unless already set in the environment (on a shared
  machine a multi-threaded BLAS also thrashes, by 10-80x on Conv/ConvTranspose);
* numpy: the case's plain numpy expression, when it has one;

then the ratio ours/ort, and the geometric mean of that ratio per size class. All ratios are
measured in this one run; nothing is asserted (targets from the issue: geometric mean <= 1.0
for ``small`` inputs, <= 1.5 for ``mid``).

Case format (shared with the optional case modules): a :class:`Case`, or a dict with the same
keys::

    {"op": "Conv",                 # ONNX op type
     "inputs": [X, W, None],       # arrays; None = omitted optional input
     "attributes": {...},          # optional, ONNX attributes
     "size": "small" | "mid" (the size class), or any label such as "seq50 hidden128",
     "size_class": "nn",           # optional, the class of a case whose size is a label
                                   # (default "nn"); the geometric mean is taken per class
     "opset": 13,                  # optional, opset of both our run and the ORT model
     "n_outputs": 1,               # optional, how many node outputs to request from ORT
     "numpy": callable | None}     # optional, the same computation in numpy, for reference

At the end the runner imports the optional modules ``benchmarks/onnx_nn_cases.py`` (Conv/Pool/
LSTM/BatchNorm cases another engineer fills) and ``benchmarks/onnx_recurrent_cases.py`` and
times their ``CASES`` lists in the same way; a missing module is skipped.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread settings)

sys.path.insert(0, str(Path(__file__).resolve().parent))

OPTIONAL_CASE_MODULES = ("onnx_nn_cases", "onnx_recurrent_cases")


@dataclass
class Case:
    op: str
    inputs: list[Any]
    attributes: dict[str, Any] = field(default_factory=dict)
    size: str = "other"
    opset: int = 13
    n_outputs: int = 1
    numpy: Callable[..., Any] | None = None
    label: str = ""


def as_case(c: Any) -> Case:
    """A :class:`Case` from a Case or a dict in the documented format."""
    if isinstance(c, Case):
        return c
    size = str(c.get("size", ""))
    klass = size if size in ("small", "mid") else str(c.get("size_class", "nn"))
    return Case(
        op=c["op"],
        inputs=list(c["inputs"]),
        attributes=dict(c.get("attributes") or {}),
        size=klass,
        opset=int(c.get("opset", 13)),
        n_outputs=int(c.get("n_outputs", 1)),
        numpy=c.get("numpy"),
        label=str(c.get("label", c.get("size", ""))),
    )


# ---------------------------------------------------------------- the part-1 cases


def _cases() -> list[Case]:
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    out: list[Case] = []
    for size, ew, mat, cube in (
        ("small", (2, 2), (2, 2), (2, 2, 4)),
        ("mid", (256, 256), (256, 256), (64, 64, 64)),
    ):
        a, b = f32(*ew), f32(*ew)
        pos = np.abs(a) + 0.1
        m1, m2 = f32(*mat), f32(*mat)
        c3 = f32(*cube)
        n = ew[0]
        idx = rng.integers(0, n, size=max(n // 2, 1)).astype(np.int64)
        add = [
            Case("Add", [a, b], numpy=np.add),
            Case("Sub", [a, b], numpy=np.subtract),
            Case("Mul", [a, b], numpy=np.multiply),
            Case("Div", [a, pos], numpy=np.divide),
            Case("Pow", [pos, b], numpy=np.power),
            Case("Abs", [a], numpy=np.abs),
            Case("Neg", [a], numpy=np.negative),
            Case("Sqrt", [pos], numpy=np.sqrt),
            Case("Exp", [a], numpy=np.exp),
            Case("Log", [pos], numpy=np.log),
            Case("Tanh", [a], numpy=np.tanh),
            Case("Relu", [a], numpy=lambda x: np.maximum(x, 0)),
            Case("Sigmoid", [a], numpy=lambda x: 1 / (1 + np.exp(-x))),
            Case("LeakyRelu", [a], {"alpha": 0.1}, numpy=lambda x: np.where(x > 0, x, 0.1 * x)),
            Case(
                "Clip",
                [a, np.array(-0.5, np.float32), np.array(0.5, np.float32)],
                numpy=lambda x, lo, hi: np.clip(x, lo, hi),
            ),
            Case("Where", [a > 0, a, b], numpy=np.where),
            Case("Equal", [a, b], numpy=np.equal),
            Case("Less", [a, b], numpy=np.less),
            Case("Sum", [a, b, a], numpy=lambda x, y, z: x + y + z),
            Case("Max", [a, b], numpy=np.maximum),
            Case(
                "Softmax",
                [a],
                {"axis": -1},
                numpy=lambda x: (
                    (e := np.exp(x - x.max(-1, keepdims=True))) / e.sum(-1, keepdims=True)
                ),
            ),
            Case("LogSoftmax", [a], {"axis": -1}),
            Case("MatMul", [m1, m2], numpy=np.matmul),
            Case(
                "Gemm",
                [m1, m2, f32(mat[1])],
                {"transB": 1, "alpha": 0.5},
                numpy=lambda x, y, c: 0.5 * x @ y.T + c,
            ),
            Case("ReduceSum", [c3, i64(1)], {"keepdims": 0}, numpy=lambda x, ax: x.sum(axis=1)),
            Case(
                "ReduceMean",
                [c3, i64(-1)],
                {"keepdims": 1},
                opset=18,
                numpy=lambda x, ax: x.mean(axis=-1, keepdims=True),
            ),
            Case(
                "ReduceMax",
                [c3, i64(0, 2)],
                {"keepdims": 0},
                opset=18,
                numpy=lambda x, ax: x.max(axis=(0, 2)),
            ),
            Case("ArgMax", [c3], {"axis": 1}, numpy=lambda x: x.argmax(axis=1)[:, None]),
            Case("CumSum", [c3, np.array(1, np.int64)], numpy=lambda x, ax: np.cumsum(x, 1)),
            Case("TopK", [c3, i64(2)], {"axis": -1}, n_outputs=2),
            Case(
                "Transpose",
                [c3],
                {"perm": [2, 0, 1]},
                numpy=lambda x: np.ascontiguousarray(x.transpose(2, 0, 1)),
            ),
            Case("Concat", [a, b], {"axis": 0}, numpy=lambda x, y: np.concatenate([x, y])),
            Case("Reshape", [c3, i64(-1)], numpy=lambda x, s: x.reshape(-1)),
            Case("Flatten", [c3], {"axis": 1}),
            Case("Gather", [a, idx], {"axis": 0}, numpy=lambda x, i: np.take(x, i, axis=0)),
            Case(
                "Slice",
                [a, i64(0, 1), i64(n, n), i64(0, 1), i64(2, 2)],
                numpy=lambda x, *r: np.ascontiguousarray(x[0::2, 1::2]),
            ),
            Case(
                "Pad",
                [a, i64(1, 1, 1, 1)],
                {"mode": "reflect"},
                numpy=lambda x, p: np.pad(x, 1, mode="reflect"),
            ),
            Case(
                "Expand", [a[:1], i64(*ew)], numpy=lambda x, s: np.broadcast_to(x, tuple(s)).copy()
            ),
            Case("Tile", [a, i64(2, 2)], numpy=lambda x, r: np.tile(x, (2, 2))),
            Case("Cast", [a], {"to": 11}, numpy=lambda x: x.astype(np.float64)),
            Case(
                "Einsum",
                [m1, m2],
                {"equation": "ij,jk->ik"},
                opset=12,
                numpy=lambda x, y: np.einsum("ij,jk->ik", x, y),
            ),
        ]
        for c in add:
            c.size = size
            c.label = "x".join(map(str, c.inputs[0].shape)) if c.inputs[0] is not None else ""
        out.extend(add)
    return out


# ---------------------------------------------------------------- timing


def _median_time(fn: Callable[[], Any], budget: float) -> float:
    """Median seconds per call of ``fn`` over 7 repeats of an auto-sized batch of calls."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, min(10000, int(budget / 7 / one)))
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def _ort_session(case: Case):
    import onnx
    import onnxruntime as ort
    from onnx import helper

    names, vis, feeds = [], [], {}
    for k, x in enumerate(case.inputs):
        if x is None:
            names.append("")
            continue
        x = np.asarray(x)
        names.append(f"in{k}")
        feeds[f"in{k}"] = x
        vis.append(
            helper.make_tensor_value_info(
                f"in{k}", helper.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)
            )
        )
    outs = [f"out{k}" for k in range(case.n_outputs)]
    node = helper.make_node(case.op, names, outs, **case.attributes)
    g = helper.make_graph([node], "bench", vis, [onnx.ValueInfoProto(name=o) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", case.opset)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, feeds


def run_cases(cases: list[Any], budget: float = 0.2, rounds: int = 1) -> dict[str, list[float]]:
    """Time every case and print one line each; returns size class -> list of ratios.

    With ``rounds`` > 1 each case is timed that many times, onnxruntime and ours alternating,
    and the line gives the median times, the median ratio and the range of the ratios (on a
    shared machine a single pair of timings can be off by a factor of 1.5 either way)."""
    from mdf_engine import onnx_ops

    ratios: dict[str, list[float]] = {}
    print(
        f"{'op':<14}{'size':<10}{'shape':<14}{'ours us':>10}{'ort us':>10}{'numpy us':>10}"
        f"{'ours/ort':>10}"
    )
    for raw in cases:
        case = as_case(raw)
        if case.op not in onnx_ops.names():
            print(f"{case.op:<14}{case.size:<10}(not registered, skipped)")
            continue
        inputs = case.inputs
        attrs = case.attributes
        opset = case.opset
        try:
            sess, feeds = _ort_session(case)

            def theirs(s=sess, f=feeds):
                return s.run(None, f)

            t_ort = _median_time(theirs, budget)
        except Exception as e:  # an op/attribute onnxruntime does not run at this opset
            print(f"{case.op:<14}{case.size:<10}onnxruntime failed: {str(e)[:60]}")
            continue

        # the node's output count, as for the onnxruntime node (a graph runner passes it too)
        def ours(op=case.op, inputs=inputs, attrs=attrs, opset=opset, n=case.n_outputs):
            return onnx_ops.run(op, inputs, attrs, opset=opset, num_outputs=n)

        try:
            t_ours = _median_time(ours, budget)
        except Exception as e:
            print(f"{case.op:<14}{case.size:<10}ours failed: {str(e)[:60]}")
            continue
        t_np = (
            _median_time(lambda f=case.numpy, i=inputs: f(*i), budget)
            if case.numpy is not None
            else float("nan")
        )
        pairs = [(t_ours, t_ort)]
        for _ in range(rounds - 1):
            pairs.append((_median_time(ours, budget), _median_time(theirs, budget)))
        each = sorted(o / t for o, t in pairs)
        r = statistics.median(each)
        t_ours = statistics.median(o for o, _ in pairs)
        t_ort = statistics.median(t for _, t in pairs)
        ratios.setdefault(case.size, []).append(r)
        spread = f"  ({each[0]:.2f}-{each[-1]:.2f} over {rounds})" if rounds > 1 else ""
        print(
            f"{case.op:<14}{case.size:<10}{case.label[:13]:<14}{t_ours * 1e6:>10.1f}"
            f"{t_ort * 1e6:>10.1f}{t_np * 1e6:>10.1f}{r:>10.2f}{spread}"
        )
    return ratios


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing budget per case")
    ap.add_argument("--only", default="", help="comma-separated op types to run")
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="time each case this many times (ours and ORT alternating) and print "
        "the median ratio and its range",
    )
    args = ap.parse_args(argv)
    budget = 0.05 if args.quick else 0.2
    cases: list[Any] = list(_cases())
    for name in OPTIONAL_CASE_MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        extra = list(getattr(mod, "CASES", []))
        print(f"(+{len(extra)} cases from benchmarks/{name}.py)")
        cases.extend(extra)
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if as_case(c).op in keep]
    ratios = run_cases(cases, budget, max(1, args.rounds))
    print()
    targets = {"small": 1.0, "mid": 1.5}
    for size, rs in ratios.items():
        gm = _geomean(rs)
        tgt = f" (target <= {targets[size]})" if size in targets else ""
        print(f"geometric mean ours/ort, {size}: {gm:.2f} over {len(rs)} ops{tgt}")


if __name__ == "__main__":
    main()
