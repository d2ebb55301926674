"""The PsyNeuLink half of benchmarks/random_speed.py: run with a Python that has PsyNeuLink 0.21.

    PYTHON_WITH_PSYNEULINK benchmarks/random_speed_psyneulink.py OUTDIR SIZES...

Builds one composition, an IntegratorMechanism with a noisy DriftDiffusionIntegrator (noise 0.5,
so every trial draws a normal number; threshold 10), writes its MDF export to ``OUTDIR/ddi.json``
and prints one JSON line: for each size N the wall and CPU time of one
``comp.run(inputs, num_trials=N, execution_mode=ExecutionMode.LLVMRun)`` call (best of a few,
after a warm-up call that compiles). PsyNeuLink's random streams are its own: only speed is
compared.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psyneulink as pnl


def build():
    fn = pnl.DriftDiffusionIntegrator(rate=0.5, noise=0.5, threshold=10.0, time_step_size=1.0)
    A = pnl.IntegratorMechanism(name="A", function=fn)
    return pnl.Composition(name="ddi", pathways=[[A]]), A


def _best(fn, rounds: int) -> tuple[float, float]:
    best, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def main(outdir: Path, sizes: list[int]) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    comp, A = build()
    (outdir / "ddi.json").write_text(pnl.get_mdf_serialized(comp, fmt="json"))
    comp.run(inputs={A: [[1.0]]}, execution_mode=pnl.ExecutionMode.LLVMRun)  # compiles
    row = {"name": "ddi", "sizes": {}}
    for n in sizes:
        feed = {A: [[1.0]] * n}

        def run(feed=feed, n=n):
            return comp.run(inputs=feed, num_trials=n, execution_mode=pnl.ExecutionMode.LLVMRun)

        wall, cpu = _best(run, 5 if n <= 1000 else 2)
        row["sizes"][str(n)] = {"wall": wall, "cpu": cpu}
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [int(a) for a in sys.argv[2:]] or [1, 1000, 100000])
