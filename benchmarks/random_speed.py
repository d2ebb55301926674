"""Random operators in compiled loops (issue 22, goal 2): per-trial time of PsyNeuLink's DDI
exports and of a model drawing from the seeded stream, interpreted, compiled with the draws
called through Python (as before draws.py), and compiled with the draws in the loop.

    python benchmarks/random_speed.py [--sizes 1 1000 100000] [--pnl-python PATH]

(tests_ddi_threshold and tests_model_integrators are left out: after their first trial their
termination conditions hold and a trial runs no pass.) Each variant runs in a fresh process with its own model cache (the Python-call variant turns
``backends/compiled/draws.draw_call`` off in that process only). A trial is one evaluate(): one
``Simulation.run(steps=N, initializer=...)`` call of N trials, best of a few after a warm-up
call that compiles; the interpreted backend runs at most 1,000 trials per call. Every variant's
last values are checked equal to the interpreted run's (``Simulation(seed=S)``). With
``--pnl-python`` (default /work/venvs/pnl/bin/python when it exists) PsyNeuLink's LLVMRun times
a noisy DDI composition (benchmarks/random_speed_psyneulink.py) and ours runs its export: its
streams differ from ours, so only speed is compared. Prints wall and CPU (this process) us per
trial and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WILD = HERE.parent / "tests" / "data" / "wild" / "psyneulink" / "v0.21.0.0"
INTERPRETED_CAP = 1000
SEED = 11

#: a model drawing from the stream each trial: RandomNormal into an accumulating state
STREAM = {
    "m": {
        "format": "ModECI MDF v0.4",
        "graphs": {
            "g": {
                "nodes": {
                    "n": {
                        "input_ports": {"x": {"shape": [1, 1]}},
                        "functions": {
                            "r": {
                                "function": "onnx::RandomNormal",
                                "args": {"shape": [1, 1], "scale": 0.5, "dtype": 11},
                            }
                        },
                        "parameters": {
                            "v": {"default_initial_value": [[0.0]], "value": "v + 0.1 * x + r"}
                        },
                        "output_ports": {"o": {"value": "v"}},
                    }
                }
            }
        },
    }
}


def one_variant(path: str, port: str, variant: str, sizes: list[int]) -> None:
    """(child process) Time one variant of one model; print one JSON line."""
    import numpy as np

    sys.path.insert(0, str(HERE.parent))
    if variant == "python":
        from mdf_engine.backends.compiled import calls

        calls.draw_call = lambda *a: None  # the call through Python, as before draws.py
    from mdf_engine import Simulation

    backend = "interpreted" if variant == "interpreted" else "compiled"
    sim = Simulation(path, backend=backend, seed=SEED)
    init = {port: np.array([[1.0]])}
    sim.run(steps=1, initializer=init)  # compiles
    row = {"variant": variant, "sizes": {}, "python_calls": getattr(sim.runner, "python_calls", [])}
    for n in sizes:
        m = min(n, INTERPRETED_CAP) if backend == "interpreted" else n
        best, best_cpu = float("inf"), float("inf")
        for _ in range(5 if m <= 1000 else 2):
            t0, c0 = time.perf_counter(), time.process_time()
            sim.run(steps=m, initializer=init)
            best = min(best, (time.perf_counter() - t0) / m)
            best_cpu = min(best_cpu, (time.process_time() - c0) / m)
        row["sizes"][str(n)] = [best * 1e6, best_cpu * 1e6]
    check = Simulation(path, backend=backend, seed=SEED)
    check.run(steps=7, initializer=init)
    outs = check.outputs
    row["check"] = [np.asarray(v).tolist() for ports in outs.values() for v in ports.values()]
    print(json.dumps(row), flush=True)


def run_child(path: Path, port: str, variant: str, sizes: list[int]) -> dict:
    env = dict(os.environ, MDF_ENGINE_CACHE=tempfile.mkdtemp(prefix=f"rs-{variant}-"))
    cmd = [sys.executable, __file__, "--child", str(path), port, variant, *map(str, sizes)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    rows = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode or not rows:
        sys.exit(f"{path.name} {variant} failed:\n{done.stderr[-2000:]}")
    return rows[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 1000, 100000])
    default_pnl = "/work/venvs/pnl/bin/python"
    ap.add_argument("--pnl-python", default=default_pnl if Path(default_pnl).exists() else None)
    ap.add_argument("--pnl-sizes", type=int, nargs="+", default=[1, 1000, 10000])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="random-speed-"))
    (tmp / "stream.json").write_text(json.dumps(STREAM))
    models = [
        ("tests_ddi", WILD / "tests_ddi.json", "A_InputPort_0"),
        ("stream (unseeded op)", tmp / "stream.json", "n.x"),
    ]
    pnl = None
    if args.pnl_python:
        cmd = [args.pnl_python, str(HERE / "random_speed_psyneulink.py"), str(tmp / "pnl")]
        done = subprocess.run(
            cmd + [str(n) for n in args.pnl_sizes], capture_output=True, text=True
        )
        rows = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
        if rows:
            pnl = rows[0]
            models.append(("PNL ddi export (noise 0.5)", tmp / "pnl" / "ddi.json", "A_InputPort_0"))
        else:
            print(f"PsyNeuLink side failed: {done.stderr[-500:]}")
    print(f"load average before: {os.getloadavg()}")
    print(
        f"{'model':<28}{'trials':>8}{'interpreted':>20}{'compiled, Python call':>24}"
        f"{'compiled, drawn':>20}{'interp/drawn':>14}{'python/drawn':>14}   (wall/CPU us per trial)"
    )
    for name, path, port in models:
        sizes = args.pnl_sizes if name.startswith("PNL") else args.sizes
        res = {v: run_child(path, port, v, sizes) for v in ("interpreted", "python", "drawn")}
        for v in ("python", "drawn"):
            assert res[v]["check"] == res["interpreted"]["check"], (name, v)
        assert not res["drawn"]["python_calls"], res["drawn"]["python_calls"]
        for n in sizes:
            i, p, d = (res[v]["sizes"][str(n)] for v in ("interpreted", "python", "drawn"))
            print(
                f"{name:<28}{n:>8}{i[0]:>11.2f}/{i[1]:<8.2f}{p[0]:>14.2f}/{p[1]:<9.2f}"
                f"{d[0]:>11.3f}/{d[1]:<8.3f}{i[1] / d[1]:>14,.0f}{p[1] / d[1]:>14,.0f}"
            )
        if name.startswith("PNL") and pnl is not None:
            for n in sizes:
                w, c = pnl["sizes"][str(n)]["wall"] / n * 1e6, pnl["sizes"][str(n)]["cpu"] / n * 1e6
                d = res["drawn"]["sizes"][str(n)]
                print(
                    f"{'  PsyNeuLink LLVMRun':<28}{n:>8}{w:>11.2f}/{c:<8.2f}"
                    f"{'PNL/ours (CPU)':>24}{c / d[1]:>20,.0f}"
                )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        one_variant(sys.argv[2], sys.argv[3], sys.argv[4], [int(a) for a in sys.argv[5:]])
    else:
        main()
