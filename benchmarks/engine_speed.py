"""Per-step time of modeci-mdf's reference engine, our interpreted and compiled backends, and a
hand-written Numba loop of the same arithmetic, measured in one run; plus the compiled backend's
first-run compile time and its start time in a fresh process with the on-disk cache warm.

    python benchmarks/engine_speed.py [--quick]

The compiled models are generated into a fresh, empty model cache (``MDF_ENGINE_CACHE`` is set
to a temporary folder for this run), so the first-run column is a real compile of each model's
code (the registry's kernels stay in Numba's cache, as on a machine that has run any model).

Models (built here as MDF dicts): a 3-node chain, a FitzHugh-Nagumo neuron, an integrate-and-
fire network of 100 cells, and a model scheduled by EveryNCalls, Threshold and AfterNCalls; plus
the IaF network with a condition the compiled scheduler lacks (NWhen), run node by node.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

import mdf_engine

DT = 0.01


def chain3() -> dict:
    nodes = {
        "A": {"parameters": {"x": {"value": "x + 1"}}, "output_ports": {"out": {"value": "x"}}},
        "B": {
            "input_ports": {"i": {}},
            "parameters": {"y": {"value": "i * 2 + 1"}},
            "output_ports": {"out": {"value": "y"}},
        },
        "C": {
            "input_ports": {"i": {}},
            "parameters": {"z": {"value": "i - 3"}},
            "output_ports": {"out": {"value": "z"}},
        },
    }
    edges = {
        "ab": {"sender": "A", "sender_port": "out", "receiver": "B", "receiver_port": "i"},
        "bc": {"sender": "B", "sender_port": "out", "receiver": "C", "receiver_port": "i"},
    }
    return {"chain3": {"graphs": {"g": {"nodes": nodes, "edges": edges}}}}


def fitzhugh_nagumo() -> dict:
    params = {
        "I": {"value": 0.5},
        "a": {"value": 0.7},
        "b": {"value": 0.8},
        "tau": {"value": 12.5},
        "V": {"default_initial_value": -1.0, "time_derivative": "V - V**3 / 3 - W + I"},
        "W": {"default_initial_value": 1.0, "time_derivative": "(V + a - b * W) / tau"},
    }
    return {
        "fn": {
            "graphs": {
                "g": {
                    "nodes": {
                        "fn": {
                            "parameters": params,
                            "output_ports": {"V": {"value": "V"}, "W": {"value": "W"}},
                        }
                    }
                }
            }
        }
    }


def iaf_network(n: int = 100) -> dict:
    rng = np.random.default_rng(0)
    w = (rng.random((n, n)) * 0.2).tolist()
    drive = (rng.random(n) * 20 + 5).tolist()
    nodes = {
        "input": {"parameters": {"I": {"value": drive}}, "output_ports": {"out": {"value": "I"}}},
        "cells": {
            "input_ports": {"syn": {"shape": [n]}},
            "parameters": {
                "tau": {"value": 10.0},
                "thresh": {"value": 15.0},
                "reset": {"value": 0.0},
                "v": {
                    "default_initial_value": [0.0] * n,
                    "time_derivative": "(-v + syn) / tau",
                    "conditions": [{"id": "spike", "test": "v > thresh", "value": "reset"}],
                },
            },
            "output_ports": {"v_out": {"value": "v"}},
        },
    }
    edges = {
        "drive": {
            "sender": "input",
            "sender_port": "out",
            "receiver": "cells",
            "receiver_port": "syn",
        }
    }
    # a recurrent-weight readout node
    nodes["readout"] = {
        "input_ports": {"v": {"shape": [n]}},
        "parameters": {"W": {"value": w}, "r": {"value": "W @ v"}},
        "output_ports": {"out": {"value": "r"}},
    }
    edges["read"] = {
        "sender": "cells",
        "sender_port": "v_out",
        "receiver": "readout",
        "receiver_port": "v",
    }
    return {"iaf": {"graphs": {"g": {"nodes": nodes, "edges": edges}}}}


def conditions_model() -> dict:
    """A counts passes; B sums A's count every second call of A (EveryNCalls); C halves B's sum
    once it exceeds 100 (Threshold); an update ends after B's second call (AfterNCalls)."""
    nodes = {
        "A": {
            "parameters": {"count": {"value": "count + 1"}},
            "output_ports": {"out": {"value": "count"}},
        },
        "B": {
            "input_ports": {"i": {}},
            "parameters": {"acc": {"value": "acc + i", "default_initial_value": 0}},
            "output_ports": {"out": {"value": "acc"}},
        },
        "C": {
            "input_ports": {"i": {}},
            "parameters": {"y": {"value": "i * 0.5"}},
            "output_ports": {"out": {"value": "y"}},
        },
    }
    edges = {
        "ab": {"sender": "A", "sender_port": "out", "receiver": "B", "receiver_port": "i"},
        "bc": {"sender": "B", "sender_port": "out", "receiver": "C", "receiver_port": "i"},
    }
    conditions = {
        "node_specific": {
            "B": {"type": "EveryNCalls", "kwargs": {"dependency": "A", "n": 2}},
            "C": {
                "type": "Threshold",
                "kwargs": {
                    "dependency": "B",
                    "parameter": "acc",
                    "threshold": 100,
                    "comparator": ">",
                },
            },
        },
        "termination": {
            "environment_state_update": {
                "type": "AfterNCalls",
                "kwargs": {"dependency": "B", "n": 2},
            }
        },
    }
    return {"cond": {"graphs": {"g": {"nodes": nodes, "edges": edges, "conditions": conditions}}}}


def node_by_node_model() -> dict:
    """The IaF network with its readout under ``NWhen(Always(), 10**9)``: the same runs, but
    a condition the compiled scheduler does not implement, so graph-scheduler runs the
    schedule and calls the jitted node functions."""
    model = iaf_network()
    model["iaf"]["graphs"]["g"]["conditions"] = {
        "node_specific": {
            "readout": {"type": "NWhen", "kwargs": {"n": 10**9, "condition": {"type": "Always"}}}
        }
    }
    return model


def node_by_node_per_step(model: dict, steps: int) -> float:
    sim = mdf_engine.Simulation(model, backend="compiled")
    sim.run(steps=8)
    if sim.runner.mode != "node by node":
        raise SystemExit(f"expected node by node, got {sim.runner.mode}")
    t = time.perf_counter()
    sim.runner.run_steps(steps, None, None, first_without_dt=False)
    return (time.perf_counter() - t) / steps


# -- hand-written Numba loops of the same arithmetic --------------------------------------------


@njit(cache=True)
def hand_chain3(steps):
    x = 0.0
    z = 0.0
    for _ in range(steps):
        x = x + 1.0
        y = x * 2.0 + 1.0
        z = y - 3.0
    return z


@njit(cache=True)
def hand_fn(steps, dt):
    V, W = -1.0, 1.0
    for _ in range(steps):
        V = V + (V - V**3 / 3 - W + 0.5) * dt
        W = W + (V + 0.7 - 0.8 * W) / 12.5 * dt
    return V


@njit(cache=True)
def hand_iaf(steps, dt, drive, w):
    n = drive.shape[0]
    v = np.zeros(n)
    r = np.zeros(n)
    for _ in range(steps):
        new = v + (-v + drive) / 10.0 * dt
        for i in range(n):
            if v[i] > 15.0:
                new[i] = 0.0
        v = new
        r = w @ v
    return r


@njit(cache=True)
def hand_conditions(steps):
    """graph-scheduler's passes for ``conditions_model``: the termination is checked before
    every consideration set ({A}, {B}, {C})."""
    count = 0.0
    acc = 0.0
    y = 0.0
    for _ in range(steps):
        b_calls = 0
        a_since_b = 0
        while b_calls < 2:
            count += 1.0
            a_since_b += 1
            if a_since_b >= 2:
                a_since_b = 0
                b_calls += 1
                acc += count
            if b_calls >= 2:
                break
            if acc > 100.0:
                y = acc * 0.5
    return acc, y


def check_conditions_hand_loop(steps: int = 50) -> None:
    """The hand loop computes what the engine computes (interpreted backend as the oracle)."""
    sim = mdf_engine.Simulation(conditions_model())
    sim.run(steps=steps)
    acc, y = hand_conditions(steps)
    got = (float(sim.value("B", "acc")), float(sim.value("C", "y")))
    if got != (acc, y):
        raise SystemExit(f"hand loop disagrees with the model: {(acc, y)} vs {got}")


def _per_step(fn, steps: int) -> float:
    t = time.perf_counter()
    fn(steps)
    return (time.perf_counter() - t) / steps


def _per_step_long(fn, steps: int, min_seconds: float = 0.1) -> float:
    """Seconds per step of ``fn(steps)`` for the fast loops: the steps are raised until one
    call lasts ``min_seconds`` (a call's fixed cost of a few microseconds would otherwise be
    most of a nanosecond-per-step model's time), then the best of three calls."""
    elapsed = _per_step(fn, steps) * steps
    while elapsed < min_seconds and steps < 10**10:
        steps = int(steps * min(100.0, 1.5 * min_seconds / max(elapsed, 1e-6)))
        elapsed = _per_step(fn, steps) * steps
    return min(elapsed / steps, _per_step(fn, steps), _per_step(fn, steps))


def reference_per_step(model: dict, steps: int) -> float:
    from modeci_mdf.execution_engine import EvaluableGraph
    from modeci_mdf.utils import load_mdf

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(model, f)
    with contextlib.redirect_stdout(io.StringIO()):
        eg = EvaluableGraph(load_mdf(f.name).graphs[0], verbose=False)
        eg.evaluate()
        t = time.perf_counter()
        for _ in range(steps):
            eg.evaluate(time_increment=DT)
        el = time.perf_counter() - t
    os.unlink(f.name)
    return el / steps


def ours_per_step(model: dict, backend: str, steps: int) -> tuple[float, float]:
    """(per-step seconds, first-run compile+warm-up seconds)."""
    t0 = time.perf_counter()
    sim = mdf_engine.Simulation(model, backend=backend)
    if backend == "compiled":
        sim.runner.record_schedule = False
    sim.run(steps=8, dt=DT)  # the conditions model has every node run by step 5
    first = time.perf_counter() - t0
    if backend == "compiled" and not sim.runner.is_compiled:
        raise SystemExit(f"model did not compile: {sim.runner.fallback_reason}")

    def run(n: int) -> None:
        sim.runner.run_steps(n, DT, None, first_without_dt=False)

    if backend == "compiled":
        return _per_step_long(run, steps), first
    return _per_step(run, steps), first


def _second_start(code: str, cwd: str | None = None) -> float:
    """What ``code`` prints (a time) when a fresh process runs it the second time: the first
    run fills the caches."""
    # as on a user's machine: Python keeps bytecode (some sandboxes switch that off)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env, cwd=cwd)
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=cwd
    )
    return float(out.stdout.strip().splitlines()[-1])


def cached_start(model: dict) -> float:
    """Seconds for a fresh process to load and run the model compiled (cache warm)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(model, f)
    code = (
        "import time; t=time.perf_counter(); import mdf_engine; "
        f"s=mdf_engine.Simulation({f.name!r}, backend='compiled'); s.run(steps=8, dt=0.01);"
        "assert s.runner.is_compiled; print(time.perf_counter()-t)"
    )
    try:
        return _second_start(code)
    finally:
        os.unlink(f.name)


def numba_floor() -> float:
    """Seconds for a fresh process to import Numba and call one disk-cached one-line jitted
    function on an array: what any start that runs Numba code costs on this machine."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "one_kernel.py"), "w") as f:
            f.write(
                "import numpy as np\nfrom numba import njit\n\n\n"
                "@njit(cache=True)\ndef total(x):\n    return x.sum()\n"
            )
        code = (
            "import time; t=time.perf_counter(); import numpy as np; "
            "from one_kernel import total; total(np.ones(3)); "
            "print(time.perf_counter()-t)"
        )
        return _second_start(code, cwd=d)


def main() -> None:
    quick = "--quick" in sys.argv
    os.environ["MDF_ENGINE_CACHE"] = tempfile.mkdtemp(prefix="mdf_engine_bench_")
    n_ref = 20 if quick else 100
    n_int = 200 if quick else 1000
    n_comp = 20_000 if quick else 200_000
    iaf = iaf_network()
    body = iaf["iaf"]["graphs"]["g"]["nodes"]
    drive = np.array(body["input"]["parameters"]["I"]["value"])
    w = np.array(body["readout"]["parameters"]["W"]["value"])
    cases = [
        ("3-node chain", chain3(), lambda s: hand_chain3(s)),
        ("FitzHugh-Nagumo", fitzhugh_nagumo(), lambda s: hand_fn(s, DT)),
        ("IaF network, 100 cells", iaf, lambda s: hand_iaf(s, DT, drive, w)),
        ("EveryNCalls + Threshold", conditions_model(), lambda s: hand_conditions(s)),
    ]
    print(
        f"{'model':26s} {'reference':>11s} {'interpreted':>12s} {'compiled':>10s} "
        f"{'hand Numba':>11s} {'ref/comp':>9s} {'comp/hand':>10s} {'compile s':>10s} "
        f"{'cached start s':>15s}"
    )
    check_conditions_hand_loop()
    for name, model, hand in cases:
        hand(10)  # compile
        ref = reference_per_step(model, n_ref)
        interp, _ = ours_per_step(model, "interpreted", n_int)
        comp, first = ours_per_step(model, "compiled", n_comp)
        hand_t = _per_step_long(hand, n_comp)
        start = cached_start(model)
        print(
            f"{name:26s} {ref * 1e6:9.1f}us {interp * 1e6:10.1f}us {comp * 1e6:8.3f}us "
            f"{hand_t * 1e6:9.3f}us {ref / comp:9.0f} {comp / hand_t:10.2f} {first:10.2f} "
            f"{start:15.2f}"
        )
    floor = sorted(numba_floor() for _ in range(3))[1]
    print(
        f"\nNumba's own floor: a fresh process calling one cached one-line jitted function "
        f"starts in {floor:.2f} s (median of 3); the cached starts above include it"
    )
    nbn = node_by_node_model()
    interp, _ = ours_per_step(nbn, "interpreted", n_int)
    nodes = node_by_node_per_step(nbn, n_int)
    print(
        f"\nIaF network, schedule left to graph-scheduler (NWhen): interpreted "
        f"{interp * 1e6:.1f}us, "
        f"graph-scheduler + jitted nodes {nodes * 1e6:.1f}us per step ({interp / nodes:.1f}x)"
    )


if __name__ == "__main__":
    main()
