"""ACT-R production cycles: the interpreted backend against the compiled ACT-R kernels.

Run: ``python benchmarks/actr_speed.py [--rounds 5] [--long 100]``.

Models: the corpus files ``count`` and ``addition`` (tests/data/wild/actr_importer/, written
by modeci-mdf's ACT-R importer), and ``count N``: count.json with a declarative memory of
``N + 1`` numbers, counting from the first to the last (N + 2 cycles, each retrieval scanning
up to N + 1 chunks).

One run is the ACT-R scripts' loop to termination on a fresh runner of an already planned
graph (the compiled runner's first cycle checks the layout, runs one interpreted cycle for the
schedule and builds its tables: that is inside the run). Four ways:

* ``interp loop``: ``Simulation(backend="interpreted")``, one ``evaluate`` per cycle, the
  fired patterns fed back (the scripts' loop);
* ``compiled loop``: the same loop on ``backend="compiled"`` (one kernel call per cycle, the
  dicts encoded and decoded at every call);
* ``actr``: the ``actr`` backend's run to termination over the interpreted graph
  (``Simulation(model, backend="actr").run()``);
* ``actr kernel``: the same over the compiled graph (``ActrRunner(plan, inner="compiled")``):
  the feedback loop runs inside the kernel, values decoded once at the end;
* ``kernel only``: the kernel loop alone (``run_cycles``), the runner's tables built before.

Each round runs every way once, alternating; the medians over rounds are printed (wall and
process CPU time per run, wall time per cycle, and interp loop / way in wall and CPU time). The final goals are checked equal
first. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.backends.actr import ActrRunner

WILD = Path(__file__).resolve().parent.parent / "tests" / "data" / "wild" / "actr_importer"


def long_count(n: int) -> dict:
    """count.json counting over ``n + 1`` numbers."""
    d = json.loads((WILD / "count.json").read_text())
    (graph,) = d["count"]["graphs"].values()
    nodes = graph["nodes"]
    names = [f"n{i}" for i in range(n + 1)]
    chunks = [
        {"name": a, "ISA": "number", "number": a, **({"next": b} if b else {})}
        for a, b in zip(names, names[1:] + [None])
    ]
    nodes["declarative_memory"]["parameters"]["chunks"]["value"] = chunks
    goal = {"name": "g", "ISA": "count-from", "start": names[0], "end": names[-1], "count": "nil"}
    nodes["goal_buffer"]["parameters"]["first_goal"]["value"] = goal
    return d


def script_loop(plan: Any, backend: str) -> tuple[int, Any]:
    from mdf_engine.backends import make_runner

    r = make_runner(backend, plan)
    goal: Any = {}
    request: Any = {}
    while True:
        r.evaluate(initializer={"goal_input": goal, "dm_input": request})
        if r.value("check_termination", "check_output"):
            return r.evaluations, r.value("goal_buffer", "goal_output")
        goal = r.value("fire_production", "fire_prod_output_to_goal")
        request = r.value("fire_production", "fire_prod_output_to_retrieval")


def actr_run(plan: Any, inner: str) -> tuple[int, Any]:
    r = ActrRunner(plan, inner=inner)
    r.run_steps(100_000, None, None)
    assert r.finished
    return r.evaluations, r.value("goal_buffer", "goal_output")


def kernel_only(plan: Any) -> tuple[float, float, int, Any]:
    """The kernel loop alone: (wall s, cpu s) of ``run_cycles`` on a runner whose tables
    were built before, its cycles and final goal."""
    from mdf_engine.actr.compiled import CompiledActrGraph

    g = CompiledActrGraph(plan)
    g.prepare(None, None)
    t, c = time.perf_counter(), time.process_time()
    assert g.run_cycles(100_000, {}, {})
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return wall, cpu, g.evaluations, g.value("goal_buffer", "goal_output")


WAYS = {
    "interp loop": lambda p: script_loop(p, "interpreted"),
    "compiled loop": lambda p: script_loop(p, "compiled"),
    "actr": lambda p: actr_run(p, "interpreted"),
    "actr kernel": lambda p: actr_run(p, "compiled"),
    "kernel only": lambda p: kernel_only(p)[2:],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--long", type=int, default=100)
    args = ap.parse_args()
    models = {
        "count": json.loads((WILD / "count.json").read_text()),
        "addition": json.loads((WILD / "addition.json").read_text()),
        f"count {args.long}": long_count(args.long),
    }
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}")
    print(f"{'model':<12}{'way':<15}{'cycles':>7}{'run ms':>10}{'cpu ms':>10}"
          f"{'us/cycle':>11}{'interp/way':>12}{'(cpu)':>10}")  # fmt: skip
    for name, d in models.items():
        plan = Simulation(mdf_engine.load(copy.deepcopy(d)), backend="interpreted").plan
        results = {w: f(plan) for w, f in WAYS.items()}  # also compiles the kernels
        cycles, goal = results["interp loop"]
        for w, (c, g) in results.items():
            assert (c, g) == (cycles, goal), f"{name}: {w} gives {c} cycles, goal {g}"
        wall: dict[str, list[float]] = {w: [] for w in WAYS}
        cpu: dict[str, list[float]] = {w: [] for w in WAYS}
        for _ in range(args.rounds):
            for w, f in WAYS.items():
                if w == "kernel only":
                    tw, tc, _, _ = kernel_only(plan)
                    wall[w].append(tw)
                    cpu[w].append(tc)
                    continue
                t, c = time.perf_counter(), time.process_time()
                f(plan)
                wall[w].append(time.perf_counter() - t)
                cpu[w].append(time.process_time() - c)
        base = statistics.median(wall["interp loop"])
        base_cpu = statistics.median(cpu["interp loop"])
        for w in WAYS:
            m, mc = statistics.median(wall[w]), statistics.median(cpu[w])
            print(
                f"{name:<12}{w:<15}{cycles:>7}{1e3 * m:>10.3f}{1e3 * mc:>10.3f}"
                f"{1e6 * m / cycles:>11.2f}{base / m:>12.1f}{base_cpu / mc:>10.1f}"
            )


if __name__ == "__main__":
    main()
