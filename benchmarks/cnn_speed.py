"""CNN inference through MDF against onnxruntime on the same ONNX model (issue 22, goal 5).

Run: ``python benchmarks/cnn_speed.py [--rounds 7] [--calls 5] [--models small,squeezenet]
[--backends interpreted,compiled] [--parts]``.

Models (built with ``onnx.helper`` and seeded random weights, tests/onnx_nets.py):

* ``small``: a 32x32 CNN (conv 3->16, BN, ReLU, max pool, conv 16->32, BN, ReLU, max pool, Gemm
  to 10 classes);
* ``squeezenet``: SqueezeNet 1.1 at 224x224 (1.2 M weights).

Ours is the imported MDF model (``onnx_io.import_model``) run by ``Simulation(model,
backend=...).evaluate(initializer=...)``, one inference per call, on each backend of
``--backends`` (the compiled one runs the whole network as one Numba call, compiled and cached
before timing); ORT is an ``InferenceSession`` on the same ModelProto. Both threading settings are measured in this one
run:

* ``1 thread``: ORT with ``intra_op_num_threads = inter_op_num_threads = 1``; ours inside
  ``threadpoolctl.threadpool_limits(1)`` (the BLAS that Conv's products call) with Numba's
  thread count at 1;
* ``default``: ORT's default session options; ours with the BLAS and Numba defaults. The two
  engines never run at the same time (alternating), so neither oversubscribes the other.

Each round times ``--calls`` calls of ours, then of ORT, and takes each side's median; the
ratio ours/ORT of that round is printed as the median over rounds and its range, then the best
single call of each side over all rounds and their ratio (on a machine shared with other
processes, time-slice stalls of 10-30 ms land inside a 100-call MDF inference far more often
than a best-of shows), and last the median process CPU time per call of each side, which a busy
machine inflates far less than wall-clock time (at default threading it adds up the threads'
CPU time: spinning BLAS or ORT worker threads count). Outputs are checked equal (rtol 1e-4)
before timing. Nothing is asserted; the target is ratio <= 1.5.

``--parts`` prints, after each compiled model's rows, where one compiled inference's process
CPU time goes (best of 5 x ``PART_CALLS`` calls, one thread): ``evaluate`` + ``value`` from
Python, the generated function's call alone (the runner's replayed argument list,
``backends/compiled/quick.py``), and its per-update time inside one call of many updates
(no Python, no dispatch); then onnxruntime's own profile of the same model (one thread,
``SessionOptions.enable_profiling``: median microseconds per node, its fused nodes named).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def small_cnn(seed: int = 0):
    """A 32x32 CNN: two conv/BN/ReLU/max-pool stages and a Gemm classifier."""
    from onnx_nets import _Net

    n = _Net(seed)
    h = n.node("Relu", [n.bn(n.conv("input", 3, 16, 3, pad=1), 16)])
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("Relu", [n.bn(n.conv(h, 16, 32, 3, pad=1), 32)])
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("Flatten", [h], axis=1)
    w = (0.05 * n.rng.standard_normal((10, 32 * 8 * 8))).astype(np.float32)
    b = (0.1 * n.rng.standard_normal(10)).astype(np.float32)
    h = n.node("Gemm", [h, n.const("fc_w", w), n.const("fc_b", b)], transB=1)
    return n.model("input", [1, 3, 32, 32], h, [1, 10], "small_cnn", 13), 32


def squeezenet():
    from onnx_nets import squeezenet11

    return squeezenet11(seed=0), 224


MODELS = {"small": small_cnn, "squeezenet": squeezenet}
#: Seconds between one side's calls and the other's: onnxruntime's default session lets its
#: worker threads spin for a while after a run, which would otherwise take CPU from (and, in
#: this one process, add CPU time to) our calls that follow.
PAUSE = 0.05


def _times(fn, calls: int) -> tuple[list[float], list[float]]:
    """Wall-clock and process CPU times of ``calls`` calls of ``fn``."""
    ts, cs = [], []
    for _ in range(calls):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
        cs.append(time.process_time() - c)
    return ts, cs


def _sessions(mp):
    import onnxruntime as ort

    one = ort.SessionOptions()
    one.intra_op_num_threads = one.inter_op_num_threads = 1
    prov = ["CPUExecutionProvider"]
    data = mp.SerializeToString()
    return {
        "1 thread": ort.InferenceSession(data, one, providers=prov),
        "default": ort.InferenceSession(data, providers=prov),
    }


def _ours(mp, x, backend: str):
    from mdf_engine.onnx_io import import_model
    from mdf_engine.simulation import Simulation

    model = import_model(mp)
    meta = model.metadata["onnx"]
    sim = Simulation(model, backend=backend)
    init = {meta["inputs"]["input"]: x}
    node, port = meta["outputs"][mp.graph.output[0].name].split(".", 1)

    def run():
        sim.evaluate(initializer=init)
        return sim.value(node, port)

    return run, sim


#: calls per timing of ``--parts``
PART_CALLS = 400


def _cpu_best(fn, calls: int = PART_CALLS) -> float:
    """Process CPU microseconds per call of ``fn``, best of 5 runs of ``calls`` calls."""
    best = math.inf
    for _ in range(5):
        c = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - c) / calls)
    return best * 1e6


def _parts(name, ours, sim, mp, x) -> None:
    """Print where a compiled inference's time goes, and onnxruntime's profile (``--parts``)."""
    import collections
    import json

    import numba
    import onnxruntime as ort
    from threadpoolctl import threadpool_limits

    q = getattr(sim.runner, "_quick", None)
    if q is None:
        print(f"# {name}: no replayable compiled call (not compiled)")
        return
    numba.set_num_threads(1)
    with threadpool_limits(limits=1):
        whole = _cpu_best(ours)
        call = _cpu_best(lambda: q.entry(*q.args))
        many = list(q.args)
        many[0] = PART_CALLS  # (nsteps: the generated function's first argument)
        per_update = _cpu_best(lambda: q.entry(*many), 1) / PART_CALLS
    print(
        f"# {name} compiled, CPU us per inference: evaluate + value {whole:.1f}; the generated "
        f"call {call:.1f} (Python around it {whole - call:.1f}); one update inside a "
        f"{PART_CALLS}-update call {per_update:.1f} (dispatch and entry {call - per_update:.1f})"
    )
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.enable_profiling = True
    # (the profile goes to the temporary folder, never the current one; removed below)
    so.profile_file_prefix = str(Path(tempfile.gettempdir()) / "cnn_speed_ort_profile")
    sess = ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])
    for _ in range(PART_CALLS):
        sess.run(None, {"input": x})
    path = sess.end_profiling()
    nodes, runs = collections.defaultdict(list), []
    for e in json.loads(Path(path).read_text()):
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            nodes[(e["name"][: -len("_kernel_time")], e["args"].get("op_name"))].append(e["dur"])
        elif e.get("cat") == "Session" and e["name"] == "model_run":
            runs.append(e["dur"])
    Path(path).unlink()
    parts = [f"{op} ({node}) {statistics.median(d):.0f}" for (node, op), d in nodes.items()]
    print(
        f"# {name} onnxruntime profile, median us per node (profiling on): "
        + ", ".join(parts)
        + f"; whole run {statistics.median(runs):.0f}"
    )


def _row(name, mode, backend, ours, sess, x, args, default_numba) -> None:
    """Time ``ours`` against ``sess`` at one threading ``mode`` and print the table row."""
    import numba
    from threadpoolctl import threadpool_limits

    limit = 1 if mode == "1 thread" else None
    numba.set_num_threads(1 if limit else default_numba)
    with threadpool_limits(limits=limit):
        ours()
        sess.run(None, {"input": x})  # warm-up
        rows, best, cpu = [], [math.inf, math.inf], ([], [])
        for _ in range(args.rounds):
            a, ca = _times(ours, args.calls)
            time.sleep(PAUSE)
            b, cb = _times(lambda s=sess, f={"input": x}: s.run(None, f), args.calls)
            time.sleep(PAUSE)
            rows.append((statistics.median(a), statistics.median(b)))
            best = [min(best[0], *a), min(best[1], *b)]
            cpu[0].extend(ca)
            cpu[1].extend(cb)
    ratios = sorted(r[0] / r[1] for r in rows)
    cpu_a, cpu_b = statistics.median(cpu[0]), statistics.median(cpu[1])
    print(
        f"| {name} | {mode} | {backend} | {statistics.median(r[0] for r in rows) * 1e3:.2f} | "
        f"{statistics.median(r[1] for r in rows) * 1e3:.2f} | "
        f"**{statistics.median(ratios):.2f}** | {ratios[0]:.2f}-{ratios[-1]:.2f} | "
        f"{best[0] * 1e3:.2f} / {best[1] * 1e3:.2f} = {best[0] / best[1]:.2f} | "
        f"{cpu_a * 1e3:.2f} / {cpu_b * 1e3:.2f} = {cpu_a / cpu_b:.2f} |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--models", default="small,squeezenet")
    ap.add_argument("--backends", default="interpreted,compiled")
    ap.add_argument("--parts", action="store_true", help="print where the time goes")
    args = ap.parse_args(argv)

    import numba
    from threadpoolctl import threadpool_info

    print(
        f"# cnn_speed {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
        f"Numba threads {numba.get_num_threads()}, BLAS "
        + ", ".join(f"{i['internal_api']}x{i['num_threads']}" for i in threadpool_info())
    )
    print(
        "| model | threads | backend | ours ms | ORT ms | ours/ORT median | range "
        "| best ours / ORT ms | median CPU ours / ORT ms |"
    )
    print("|---|---|---|---:|---:|---:|---|---|---|")
    default_numba = numba.get_num_threads()
    for name in args.models.split(","):
        mp, size = MODELS[name]()
        x = np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)
        sessions = _sessions(mp)
        expected = sessions["1 thread"].run(None, {"input": x})[0]
        for backend in args.backends.split(","):
            ours, sim = _ours(mp, x, backend)
            c0, t0 = time.process_time(), time.perf_counter()
            got = ours()  # (the compiled backend compiles here, or reads its cache)
            if backend == "compiled":
                print(
                    f"# {name}: first call (warm-up, code, Numba compile or cache) "
                    f"{time.process_time() - c0:.1f} CPU s, {time.perf_counter() - t0:.1f} s, "
                    f"origin {getattr(sim.runner, 'origin', None)}, largest BLAS product "
                    f"{getattr(sim.runner, 'blas_macs', 0):,} multiply-adds",
                    flush=True,
                )
            if backend == "compiled" and not sim.runner.is_compiled:
                print(f"# {name}: not compiled ({sim.runner.fallback_reason})")
            np.testing.assert_allclose(
                got, expected, rtol=1e-4, atol=1e-5 * float(np.abs(expected).max())
            )
            for mode, sess in sessions.items():
                _row(name, mode, backend, ours, sess, x, args, default_numba)
            if args.parts and backend == "compiled":
                _parts(name, ours, sim, mp, x)
    numba.set_num_threads(default_numba)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
