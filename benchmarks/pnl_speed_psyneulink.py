"""The PsyNeuLink half of benchmarks/pnl_speed.py: run with a Python that has PsyNeuLink 0.21.

    PYTHON_WITH_PSYNEULINK benchmarks/pnl_speed_psyneulink.py OUTDIR SIZES... [--models A,B]

For each composition (built by tools/pnl_export/make_wild.py) it writes ``OUTDIR/NAME.json``
(the MDF export, before any run) and prints one JSON line per composition: the external input
port, the input of every trial, and for each size N the wall time of one
``comp.run(inputs, num_trials=N, execution_mode=ExecutionMode.LLVMRun)`` call (best of a few,
after a warm-up call that compiles), the time of its LLVM call alone (PsyNeuLink's compiled
``run`` function on prepared input/output buffers), and the last trial's result.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import psyneulink as pnl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "pnl_export"))
import make_wild  # noqa: E402

MODELS = ["chain", "chain_conditions", "fhn", "nested", "stroop_lca"]


def chain():
    """A -> B -> C (Linear, Logistic, Exponential), default scheduling."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=2.0, intercept=0.5))
    B = pnl.TransferMechanism(name="B", function=pnl.Logistic(gain=1.5, bias=0.2))
    C = pnl.TransferMechanism(name="C", function=pnl.Exponential(rate=0.3, scale=2.0))
    return pnl.Composition(name="chain", pathways=[[A, B, C]]), {A: [[1.0]]}


def stroop_lca(energy: bool = True):
    """make_wild's Stroop model with the response layer under AfterNCalls(color_hidden, 1) and
    the conflict monitor under AfterNCalls(response, 6) (PsyNeuLink's LLVM scheduler has no
    AfterNPasses, and EveryNCalls only with 1). With ``energy=False`` the monitor's Energy
    (-y.M.y/2, M = [[0, -2.5], [-2.5, 0]]) is computed as the same number 2.5 * y1 * y2 by a
    Reduce product: PsyNeuLink 0.21 cannot compile Energy with llvmlite 0.50 ("Type of #4 arg
    mismatch"), and its export drops a Reduce's ``operation``. The Energy one is exported, the
    Reduce one timed."""
    orig = pnl.Energy
    if not energy:
        pnl.Energy = lambda **kw: pnl.Reduce(operation=pnl.PRODUCT, scale=2.5)
    try:
        comp, inputs = make_wild.stroop_lca()
    finally:
        pnl.Energy = orig
    nodes = {n.name.split("-")[0]: n for n in comp.nodes}  # a second build has "-1" suffixes
    comp.scheduler.add_condition(nodes["response"], pnl.AfterNCalls(nodes["color_hidden"], 1))
    comp.scheduler.add_condition(nodes["conflict_monitor"], pnl.AfterNCalls(nodes["response"], 6))
    return comp, inputs


def build(name: str):
    if name in ("chain", "stroop_lca"):
        return globals()[name]()
    return getattr(make_wild, name)()


def _best(fn, rounds: int, setup=None) -> tuple[float, float]:
    """The best wall time and the best CPU time (this process) of ``rounds`` calls."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        if setup is not None:
            setup()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def llvm_call_time(comp, inputs: dict, n: int, rounds: int) -> float:
    """The LLVM ``run`` call alone: PsyNeuLink's own buffers prepared once, then only the call
    into the compiled function timed."""
    from psyneulink.core import llvm as pnlvm

    ctx = pnl.Context(execution_id=comp.default_execution_id)
    ex = pnlvm.CompExecution.get(comp, ctx)
    feed = {k: [v] * n for k, v in inputs.items()}
    ct_in, out, runs, count = (
        ex._prepare_run(comp._parse_run_inputs(feed)[0], n, n)
        if hasattr(comp, "_parse_run_inputs")
        else ex._prepare_run(feed, n, n)
    )
    f = ex._bin_run_func

    def call():
        runs[...] = n
        f(ex._state_struct, ex._param_struct, ex._data_struct, ct_in, out, runs, count)

    return _best(call, rounds)


def main(outdir: Path, sizes: list[int], models: list[str] = MODELS) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for name in models:
        comp, inputs = build(name)
        text = pnl.get_mdf_serialized(comp, fmt="json")
        (outdir / f"{name}.json").write_text(text)
        mdf = json.loads(text)
        ports = {
            make_wild.external_port(mdf, m): np.asarray(v[0], float).tolist()
            for m, v in inputs.items()
        }
        if name == "stroop_lca":
            comp, inputs = stroop_lca(energy=False)
        one = {m: v[0] for m, v in inputs.items()}
        row = {"name": name, "inputs": ports, "sizes": {}}
        comp.run(
            inputs={m: [v] for m, v in one.items()}, execution_mode=pnl.ExecutionMode.LLVMRun
        )  # compiles
        for n in sizes:
            feed = {m: [v] * n for m, v in one.items()}
            rounds = 5 if n <= 1000 else 2

            def run(feed=feed, n=n, comp=comp):
                return comp.run(inputs=feed, num_trials=n, execution_mode=pnl.ExecutionMode.LLVMRun)

            wall, cpu = _best(run, rounds)
            comp.reset()
            comp.run(
                inputs={m: [v] for m, v in one.items()}, execution_mode=pnl.ExecutionMode.LLVMRun
            )
            last = comp.results[-1]
            try:
                floor = llvm_call_time(comp, one, n, rounds)[0]
            except Exception as e:  # a PsyNeuLink build whose internals differ
                floor = None
                row["floor_error"] = f"{type(e).__name__}: {e}"
            row["sizes"][str(n)] = {"wall": wall, "cpu": cpu, "llvm_call": floor}
        row["first_result"] = np.asarray(last, float).ravel().tolist()
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    argv = sys.argv[2:]
    picked = MODELS
    if "--models" in argv:
        k = argv.index("--models")
        picked = [m for m in argv[k + 1].split(",") if m in MODELS]
        argv = argv[:k] + argv[k + 2 :]
    main(Path(sys.argv[1]), [int(a) for a in argv] or [1, 1000, 100000], picked)
