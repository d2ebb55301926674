"""Sweep speed: 10,000 runs of the FitzHugh-Nagumo example, 1,000 steps each.

Three ways, timed in one process and printed as ratios:

* batched: ``mdf_engine.sweep`` on the compiled backend (all sets in one jitted call);
* single compiled runs: a loop of ``Simulation(with_parameters(...), backend="compiled").run``
  (what a script without sweeps does), timed on a sample and extrapolated;
* the reference engine (modeci-mdf) timed on 10 runs and extrapolated.

Then the memory a sweep needs: each case runs in a fresh process (``--memory-case``) and
reports its peak resident set (VmHWM): final values only (to CSV, and kept in
memory with ``keep="final"``), series streamed to NetCDF, and series held in memory (what every
sweep did before), at ``--memory-sizes`` RUNSxSTEPS.

Usage: ``python benchmarks/sweep_speed.py [--runs 10000] [--steps 1000] [--sample 20]
[--memory-sizes 2000x1000,20000x1000,2000x10000] [--no-timing] [--no-memory]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

import mdf_engine
from mdf_engine.sweep import sweep, with_parameters

FN = Path(__file__).resolve().parent.parent / "examples" / "fitzhugh_nagumo.json"
DT = 0.05


def grid(runs: int) -> dict[str, str]:
    side = int(round(runs**0.5))
    return {"fn_neuron.a": f"0.5:0.9:{side}", "stimulus.amplitude": f"0.2:1.0:{runs // side}"}


def reference_runs(points: np.ndarray, steps: int) -> float:
    import json
    import tempfile

    from modeci_mdf.execution_engine import EvaluableGraph
    from modeci_mdf.utils import load_mdf

    t = 0.0
    for a, amp in points:
        m = with_parameters(FN, {"fn_neuron.a": a, "stimulus.amplitude": amp})
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(m.to_dict(), f)
        with contextlib.redirect_stdout(io.StringIO()):
            g = load_mdf(f.name).graphs[0]
            t0 = time.perf_counter()
            eg = EvaluableGraph(g, verbose=False)
            for k in range(steps):
                eg.evaluate(time_increment=None if k == 0 else DT)
            t += time.perf_counter() - t0
    return t / len(points)


@numba.njit(parallel=True, cache=True)
def hand_prange(a_values, amp_values, steps, dt, rec):
    """The same model written by hand: one run per parameter set over the cores, V and W
    recorded at every step (the first step initialises, as ``run`` does)."""
    for r in numba.prange(a_values.shape[0]):
        a, amp = a_values[r], amp_values[r]
        t, v, w = 0.0, -1.0, 1.0
        for k in range(steps):
            if k > 0:
                t = t + dt
            i = 1.2 * (amp * (1 + 0.5 * math.sin(0.3 * t)))
            if k > 0:
                v = v + (v - v**3 / 3 - w + i) * dt  # (W's step reads the new V)
                w = w + (v + a - 0.8 * w) / 12.5 * dt
            rec[r, k, 0] = v
            rec[r, k, 1] = w


def single_compiled_runs(points: np.ndarray, steps: int) -> float:
    t0 = time.perf_counter()
    for a, amp in points:
        m = with_parameters(FN, {"fn_neuron.a": a, "stimulus.amplitude": amp})
        sim = mdf_engine.Simulation(m, backend="compiled")
        sim.run(steps=steps, dt=DT, record=None)
    return (time.perf_counter() - t0) / len(points)


#: memory cases: name -> (keep, output file extension or None)
MEMORY_CASES = {
    "final values -> CSV": ("final", ".csv"),
    "final values in memory": ("final", None),
    "series -> NetCDF (streamed)": ("series", ".nc"),
    "series in memory": ("series", None),
}
#: short names of the memory cases (``--memory-cases``)
CASE_KEYS = dict(zip(("csv", "final", "nc", "memory"), MEMORY_CASES))


def peak_rss_mb() -> float:
    """This process's peak resident set in MB: Linux's VmHWM (the high-water mark of this
    program's own memory; ``ru_maxrss`` keeps the parent's peak across fork and exec, so a
    case started after the timings would report the timings' memory)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # (KB on Linux)


def memory_case(name: str, runs: int, steps: int, folder: str) -> None:
    """One case in this (fresh) process; prints the peak resident set in MB."""
    keep, ext = MEMORY_CASES[name]
    out = os.path.join(folder, f"sweep{ext}") if ext else None
    record = ["fn_neuron.V_out", "fn_neuron.W_out"]
    t0 = time.perf_counter()
    if runs:
        sweep(FN, grid(runs), steps=steps, dt=DT, record=record, keep=keep, output=out)
    took = time.perf_counter() - t0
    peak = peak_rss_mb()
    size = os.path.getsize(out) / 2**20 if out else 0.0
    print(f"{peak:.1f} {took:.2f} {size:.1f}")


def memory_table(sizes: list[tuple[int, int]], cases: list[str]) -> None:
    """Peak RSS of each case at each size, every case in a fresh process."""

    def run(name: str, runs: int, steps: int) -> list[float]:
        with tempfile.TemporaryDirectory() as folder:
            cmd = [sys.executable, __file__, "--memory-case", name, str(runs), str(steps), folder]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode:
                raise SystemExit(f"memory case '{name}' failed:\n{done.stderr[-2000:]}")
            return [float(x) for x in done.stdout.split()[-3:]]

    imports = run("final values in memory", 0, 1)[0]
    floor = run("final values in memory", 4, 2)[0]
    print(
        f"\nPeak resident memory (fresh process per case; imports alone: {imports:.0f} MB, "
        f"a 4 x 2 sweep: {floor:.0f} MB)"
    )
    print(f"  {'case':30s} {'runs x steps':>14s} {'peak RSS':>10s} {'time':>8s} {'file':>10s}")
    for runs, steps in sizes:
        for name in cases:
            peak, took, size = run(name, runs, steps)
            file = f"{size:8.1f} MB" if MEMORY_CASES[name][1] else ""
            print(f"  {name:30s} {f'{runs}x{steps}':>14s} {peak:7.0f} MB {took:7.2f}s {file:>10s}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-case":
        name, runs, steps, folder = sys.argv[2:6]
        memory_case(name, int(runs), int(steps), folder)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument(
        "--sample", type=int, default=20, help="single compiled runs timed (extrapolated)"
    )
    ap.add_argument("--reference-runs", type=int, default=10)
    ap.add_argument(
        "--memory-sizes",
        default="2000x1000,20000x1000,2000x10000",
        help="RUNSxSTEPS of the memory cases, comma-separated",
    )
    ap.add_argument(
        "--memory-cases",
        default=",".join(CASE_KEYS),
        help=f"memory cases, comma-separated, of {', '.join(CASE_KEYS)}",
    )
    ap.add_argument("--no-timing", action="store_true", help="only the memory table")
    ap.add_argument("--no-memory", action="store_true", help="only the timings")
    args = ap.parse_args()
    if not args.no_timing:
        timings(args)
    if not args.no_memory:
        sizes = [tuple(int(x) for x in s.split("x")) for s in args.memory_sizes.split(",")]
        memory_table(sizes, [CASE_KEYS[c.strip()] for c in args.memory_cases.split(",")])


def timings(args: argparse.Namespace) -> None:
    params = grid(args.runs)
    record = ["fn_neuron.V_out", "fn_neuron.W_out"]

    # warm the caches (Numba compilation is a one-off, reported separately)
    t0 = time.perf_counter()
    sweep(FN, params, steps=2, dt=DT, record=record)
    warm = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    ds = sweep(FN, params, steps=args.steps, dt=DT, record=record)
    batched, batched_cpu = time.perf_counter() - t0, time.process_time() - c0
    n = ds["fn_neuron.V_out"].shape[0] * ds["fn_neuron.V_out"].shape[1]

    a, amp = np.meshgrid(ds["fn_neuron.a"].values, ds["stimulus.amplitude"].values, indexing="ij")
    pts = np.column_stack([a.ravel(), amp.ravel()])
    rec = np.zeros((len(pts), args.steps, 2))
    hand_prange(pts[:2, 0].copy(), pts[:2, 1].copy(), 2, DT, rec[:2, :2])  # compile
    t0, c0 = time.perf_counter(), time.process_time()
    rec = np.zeros((len(pts), args.steps, 2))
    hand_prange(pts[:, 0].copy(), pts[:, 1].copy(), args.steps, DT, rec)
    hand, hand_cpu = time.perf_counter() - t0, time.process_time() - c0
    got = np.asarray(ds["fn_neuron.V_out"]).reshape(len(pts), args.steps)
    same = np.allclose(got, rec[:, :, 0], rtol=1e-9, atol=1e-12)

    rng = np.random.default_rng(0)
    points = np.column_stack(
        [rng.uniform(0.5, 0.9, args.sample), rng.uniform(0.2, 1.0, args.sample)]
    )
    single_compiled_runs(points[:1], args.steps)  # load once
    per_single = single_compiled_runs(points, args.steps)
    per_ref = reference_runs(points[: args.reference_runs], args.steps)

    print(f"FitzHugh-Nagumo sweep: {n} runs x {args.steps} steps")
    print(f"  first call (compile or load cached code): {warm:8.2f} s")
    print(
        f"  batched compiled sweep:                   {batched:8.2f} s "
        f"({batched / n * 1e6:.1f} us a run; CPU {batched_cpu:.2f} s, all threads)"
    )
    print(
        f"  loop of single compiled runs (extrap.):   {per_single * n:8.2f} s "
        f"({per_single * 1e3:.2f} ms a run)"
    )
    print(
        f"  reference engine (extrap. from {args.reference_runs}):      "
        f"{per_ref * n:8.1f} s ({per_ref * 1e3:.1f} ms a run)"
    )
    print(
        f"  hand-written Numba prange loop:           {hand:8.2f} s (CPU {hand_cpu:.2f} s; "
        f"same V trace: {same})"
    )
    print(
        f"  ratio batched / hand prange:     {batched / hand:8.2f}x wall, "
        f"{batched_cpu / hand_cpu:.2f}x CPU (goal: <= 1.2x)"
    )
    print(f"  ratio single-compiled / batched: {per_single * n / batched:8.1f}x")
    print(f"  ratio reference / batched:       {per_ref * n / batched:8.1f}x")


if __name__ == "__main__":
    main()
