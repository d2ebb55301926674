"""A whole run exported to ONNX (``mdf export --onnx MODEL --steps N``) in onnxruntime, against
our compiled backend running the same ``Simulation.run(steps=N, dt=DT)``, measured in one run.

    python benchmarks/onnx_export_speed.py [--quick]

Models: the bundled FitzHugh-Nagumo neuron (examples/fitzhugh_nagumo.json) and the IaF network
(examples/iaf_network.json); also the scheduled example (examples/conditions_threshold.json,
whose exported update is an ONNX Loop over scheduler passes). Times: onnxruntime's one
``run`` call on the whole-run model (its session is built first and not timed); the compiled
backend's ``run`` in a fresh Simulation (a first one compiles and fills the cache, not timed).
Each time is the best of three.
Both results are checked to agree (rtol 1e-6) before the times are printed. One thread each.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

from mdf_engine.onnx_io.step_export import METADATA_KEY, to_onnx_run  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402

REPEATS = 3  # the best of three of each (the machine is shared)
ROOT = Path(__file__).resolve().parents[1] / "examples"
CASES = [
    ("FitzHugh-Nagumo", "fitzhugh_nagumo.json", 0.01),
    ("IaF network", "iaf_network.json", 0.0005),
    ("EveryNCalls + Threshold", "conditions_threshold.json", 0.01),
]


def one(path: Path, steps: int, dt: float) -> tuple[float, float, float]:
    import json

    mp = to_onnx_run(str(path), steps=steps, dt=dt)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])
    t_ort = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {})))
        t_ort = min(t_ort, time.perf_counter() - t0)

    Simulation(str(path), backend="compiled").run(steps=10, dt=dt)  # compile / fill the cache
    t_comp = float("inf")
    for _ in range(REPEATS):
        sim = Simulation(str(path), backend="compiled")
        t0 = time.perf_counter()
        sim.run(steps=steps, dt=dt)
        t_comp = min(t_comp, time.perf_counter() - t0)

    meta = json.loads({p.key: p.value for p in mp.metadata_props}[METADATA_KEY])
    worst = 0.0
    for port, name in meta["outputs"].items():
        n, p = port.split(".", 1)
        a = np.asarray(sim.value(n, p), dtype=float)
        b = np.asarray(outs[name], dtype=float)
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9, err_msg=port)
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
    return t_ort, t_comp, worst


def main() -> None:
    quick = "--quick" in sys.argv
    steps = 2_000 if quick else 100_000
    print(
        f"{'model':26} {'steps':>8} {'onnxruntime s':>14} {'compiled s':>11} "
        f"{'ort/compiled':>13} {'max |diff|':>11}"
    )
    for label, fname, dt in CASES:
        n = steps if "Threshold" not in label else steps // 10
        t_ort, t_comp, worst = one(ROOT / fname, n, dt)
        print(
            f"{label:26} {n:8d} {t_ort:14.4f} {t_comp:11.4f} {t_ort / t_comp:13.1f} {worst:11.2e}"
        )


if __name__ == "__main__":
    main()
