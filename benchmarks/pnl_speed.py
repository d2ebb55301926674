"""PsyNeuLink's LLVMRun against our compiled backend on the same compositions exported to MDF
(issue 22, goal 1).

    python benchmarks/pnl_speed.py [--pnl-python PATH] [--sizes 1 1000 100000] [--models fhn,chain]

PsyNeuLink (a ``[bench]`` extra, never a test dependency) runs in its own interpreter
(``--pnl-python``, default ``$PNL_PYTHON`` or /work/venvs/pnl/bin/python):
benchmarks/pnl_speed_psyneulink.py builds the compositions (a 3-node chain, the conditions
chain, FitzHugh-Nagumo, a nested composition, a Stroop model with an LCA), exports them, and
times one ``comp.run(..., execution_mode=LLVMRun)`` call of N trials and its LLVM call alone.
Here each export runs on the compiled backend: ``Simulation.run(steps=N, initializer=...)``
(one PsyNeuLink trial is one evaluate()), best of a few calls after a compiling warm-up. A
file that the compiled backend does not compile runs interpreted, on at most 1,000 trials (the
per-trial time is what is compared). Outputs are checked equal on the first trial.
Prints per-trial wall and CPU times (us; on a shared machine the CPU time, this process only,
is the steadier), PsyNeuLink's time over ours, and PsyNeuLink's LLVM-call floor (a wall time)
over ours: ``call/ours`` against our wall time, ``call/cpu`` against our CPU time (above 1:
we are faster than PsyNeuLink's compiled run function alone).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from mdf_engine import Simulation  # noqa: E402

INTERPRETED_CAP = 1000


def psyneulink_side(
    python: str, outdir: Path, sizes: list[int], models: str | None = None
) -> list[dict]:
    cmd = [python, str(HERE / "pnl_speed_psyneulink.py"), str(outdir), *map(str, sizes)]
    if models:
        cmd += ["--models", models]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    rows = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not rows:
        sys.exit(f"PsyNeuLink side failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return rows


def _best(fn, rounds: int) -> tuple[float, float]:
    """The best wall time and the best CPU time (this process) of ``rounds`` calls: on a
    shared machine the CPU time is the steadier of the two."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def ours(path: Path, inputs: dict, sizes: list[int]) -> dict:
    init = {k: np.asarray(v, dtype=float) for k, v in inputs.items()}
    check = Simulation(str(path), backend="interpreted")
    check.evaluate(initializer=init)
    values = [np.ravel(v) for node in check.outputs.values() for v in node.values()]
    os.environ["MDF_ENGINE_TIER0"] = "0"  # steady state: the generated code, not tier 0
    sim = Simulation(str(path), backend="compiled")
    sim.run(steps=1, initializer=init)  # compiles
    compiled = sim.runner.is_compiled
    out = {
        "backend": "compiled" if compiled else f"interpreted ({sim.runner.fallback_reason})",
        "values": values,
        "sizes": {},
    }
    for n in sizes:
        m = n if compiled else min(n, INTERPRETED_CAP)
        t, cpu = _best(lambda m=m: sim.run(steps=m, initializer=init), 5 if m <= 1000 else 2)
        out["sizes"][n] = (t / m, cpu / m)
    return out


def same_first_trial(pnl_result: list[float], values: list[np.ndarray]) -> bool:
    """Every number of PsyNeuLink's first-trial result is one of our output port values."""
    flat = np.concatenate(values) if values else np.zeros(0)
    return all(np.any(np.isclose(flat, r, rtol=1e-9, atol=1e-12)) for r in pnl_result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pnl-python", default=os.environ.get("PNL_PYTHON", "/work/venvs/pnl/bin/python")
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 1000, 100000])
    ap.add_argument("--models", default=None, help="comma-separated subset (default: all five)")
    ap.add_argument(
        "--pnl-dir",
        default=None,
        help="keep PsyNeuLink's exports and timings in this folder, and reuse them if there "
        "(PsyNeuLink's side takes minutes; ours can then be rerun alone)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="  log: %(message)s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.pnl_dir or tmp)
        saved = folder / "pnl_rows.jsonl"
        if args.pnl_dir and saved.exists():
            rows = [json.loads(ln) for ln in saved.read_text().splitlines() if ln.strip()]
        else:
            rows = psyneulink_side(args.pnl_python, folder, args.sizes, args.models)
            if args.pnl_dir:
                saved.write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")
        print(
            f"{'model':<17} {'trials':>7} {'PNL LLVMRun':>12} {'PNL LLVM call':>14} "
            f"{'ours':>10} {'PNL/ours':>9} {'PNL cpu':>11} {'ours cpu':>10} {'cpu ratio':>9}"
            f" {'call/ours':>9} {'call/cpu':>8}  equal  backend"
        )
        for row in rows:
            mine = ours(folder / f"{row['name']}.json", row["inputs"], args.sizes)
            eq = same_first_trial(row["first_result"], mine["values"])
            for n in args.sizes:
                p = row["sizes"][str(n)]
                wall, call = p["wall"] / n, p["llvm_call"]
                us, cpu_us = mine["sizes"][n]
                cpu = p.get("cpu", float("nan")) / n
                call_txt = f"{call / n * 1e6:12.3f}us" if call is not None else "           -"
                floor = (
                    f"{call / n / us:8.2f}x {call / n / max(cpu_us, 1e-12):7.2f}x"
                    if call is not None
                    else f"{'-':>9} {'-':>8}"
                )
                print(
                    f"{row['name']:<17} {n:>7} {wall * 1e6:10.3f}us {call_txt} "
                    f"{us * 1e6:8.3f}us {wall / us:8.2f}x {cpu * 1e6:9.3f}us {cpu_us * 1e6:8.3f}us "
                    f"{cpu / max(cpu_us, 1e-12):8.2f}x {floor}  {'yes' if eq else 'NO ':<5}  "
                    f"{mine['backend']}"
                )


if __name__ == "__main__":
    main()
