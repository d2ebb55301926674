"""Compile time of the compiled backend against the graph's size (issue 22, goals 2 and 4).

    python benchmarks/compile_time.py [--sizes 20,40,80,160] [--families dag,chain]
        [--corpus 3] [--squeezenet]

Each case runs in a fresh process with an empty model cache (``MDF_ENGINE_CACHE``) and tier 0
off (``MDF_ENGINE_TIER0=0``: the generated code itself is compiled), and reports the CPU and
wall seconds of its first compiled run of one step (load, plan, warm-up, code generation and
Numba), the CPU seconds per node, and the same first run on the interpreted backend in a
fresh process (the peer here: what a user waits for otherwise). The registry's kernels are
put in Numba's cache first (one throw-away run per family), so they are not counted.

Families: ``dag`` (an ONNX-like layered DAG of ``onnx::`` Add/Sub/Relu/Tanh/Sigmoid on
3-vectors) and ``chain`` (scalar nodes, each reading the one before) from
``tests/scale_models.py``; ``corpus``: the ``--corpus`` files of tests/data/wild with the most
nodes; ``squeezenet`` (``--squeezenet``, minutes of CPU): SqueezeNet 1.1 imported from ONNX,
one inference, compiled although it is over the default weight bound
(``MDF_ENGINE_COMPILE_MAX_WEIGHTS=2000000`` in its process; ``--families ''`` runs it alone).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, time
t, c = time.perf_counter(), time.process_time()
kind, path, backend = sys.argv[1], sys.argv[2], sys.argv[3]
from mdf_engine.simulation import Simulation
if kind == "squeezenet":
    import numpy as np
    sys.path.insert(0, sys.argv[4])
    from onnx_nets import squeezenet11
    from mdf_engine.onnx_io import import_model
    model = import_model(squeezenet11(seed=0))
    meta = model.metadata["onnx"]
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    sim = Simulation(model, backend=backend)
    sim.evaluate(initializer={meta["inputs"]["input"]: x})
else:
    sim = Simulation(path, backend=backend)
    sim.run(steps=1)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "mode": getattr(sim.runner, "mode", backend), "why": getattr(sim.runner, "fallback_reason", None)}))
"""


def _child(kind: str, path: str, backend: str, cache: Path) -> dict:
    # SqueezeNet (1.2 M weights) stays interpreted by default (``MDF_ENGINE_COMPILE_MAX_WEIGHTS``,
    # 500,000): forced here, as a user would force it
    force = {"MDF_ENGINE_COMPILE_MAX_WEIGHTS": "2000000"} if kind == "squeezenet" else {}
    env = {
        **force,
        **os.environ,
        "MDF_ENGINE_CACHE": str(cache),
        "MDF_ENGINE_TIER0": "0",
        "PYTHONPATH": str(ROOT),
        "NUMBA_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    argv = [sys.executable, "-c", CHILD, kind, path, backend, str(ROOT / "tests")]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _nodes(path: Path) -> int:
    from mdf_engine import load

    return sum(len(g.nodes) for g in load(str(path)).graphs)


def _corpus(k: int) -> list[tuple[str, Path, int]]:
    """The ``k`` wild corpus files (that compile and run one step) with the most nodes."""
    from test_compiled_coverage import _wild_cases

    seen = {}
    for writer, model, kind, _oracle in _wild_cases():
        if kind == "wild" and model.suffix == ".json" and model not in seen:
            try:
                seen[model] = (writer, _nodes(model))
            except Exception:  # (a file its writer broke: refused by both backends)
                continue
    top = sorted(seen.items(), key=lambda kv: -kv[1][1])[:k]
    return [(f"corpus:{w}/{m.name}", m, n) for m, (w, n) in top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20,40,80,160")
    ap.add_argument("--families", default="dag,chain")
    ap.add_argument("--corpus", type=int, default=3)
    ap.add_argument("--squeezenet", action="store_true")
    args = ap.parse_args()
    import scale_models

    tmp = Path(tempfile.mkdtemp(prefix="mdf_compile_time_"))
    cases: list[tuple[str, str, Path, int]] = []
    for fam in filter(None, args.families.split(",")):
        for n in (int(s) for s in args.sizes.split(",")):
            path = tmp / f"{fam}{n}.json"
            path.write_text(json.dumps(scale_models.FAMILIES[fam](n)))
            cases.append((fam, "file", path, n))
    cases += [(name, "file", path, n) for name, path, n in _corpus(args.corpus)]
    if args.squeezenet:
        cases.append(("squeezenet", "squeezenet", tmp / "none", 66))

    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )
    print(
        "# first compiled run (empty model cache, tier 0 off) against the interpreted first "
        "run, fresh processes; seconds wall (CPU)"
    )
    head = ("family", "nodes", "compiled", "CPU s/node", "interpreted", "compiled/interp CPU")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    primed = set()
    for k, (fam, kind, path, n) in enumerate(cases):
        if fam not in primed:  # (the registry's kernels into Numba's cache)
            _child(kind, str(path), "compiled", tmp / f"prime{k}")
            primed.add(fam)
        comp = _child(kind, str(path), "compiled", tmp / f"cache{k}")
        interp = _child(kind, str(path), "interpreted", tmp / f"cache{k}i")
        note = "" if comp["mode"] == "compiled" else f" ({comp['mode']}: {comp['why']})"
        print(
            f"| {fam} | {n} | {comp['wall']:.2f} ({comp['cpu']:.2f}){note} | "
            f"{comp['cpu'] / n:.3f} | {interp['wall']:.2f} ({interp['cpu']:.2f}) | "
            f"{comp['cpu'] / interp['cpu']:.1f}x |",
            flush=True,
        )
    print(f"# load average at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
