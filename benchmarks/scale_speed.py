"""How the engine scales with graph size: every stage timed separately on generated models
(``tests/scale_models.py``: chain, fan, cells, dag) of 100 to 10,000 nodes.

    python benchmarks/scale_speed.py [--sizes 100,1000,5000,10000] [--families chain,fan]
        [--gs-max 1000] [--ref-max 1000] [--compile-max 1000]

Each (family, size) runs in a fresh process (its peak RSS is that case's alone) and reports
CPU seconds per stage:

* ``json``/``yaml``: reading the file (``loader.read_file``); ``model``: the typed, checked
  model from the data (``loader.from_dict``); ``expr``: the expression compiler's share of
  ``plan`` (time inside ``expressions.parse``); ``plan``: ``plan_graph``;
* ``gs set``/``gs pass``: the interpreted backend on graph-scheduler (its setup, one
  environment state update), up to ``--gs-max`` nodes (graph-scheduler is quadratic in time
  and memory: a 10,000-node graph needs 10^8 dict entries);
* ``own set``/``own pass``: the interpreted backend on the engine's own scheduler (what it
  uses from 1,000 nodes on);
* ``compile``: the compiled backend's first run of one step on an empty cache (warm-up,
  generation, Numba), up to ``--compile-max`` nodes of ``--compile-families``; beyond the compiled backend's node limit
  the time it takes to decline (``MDF_ENGINE_COMPILE_MAX_NODES``), marked ``r``;
* ``info``/``valid``: ``mdf info`` and ``mdf validate`` in-process (``cli.info``);
* ``write``: a Results of 2 steps written as CSV, NPZ and JSON;
* ``RSS``: the case's peak resident memory (MB);
* ``ref set``/``ref pass`` and ``x pass``: modeci-mdf's reference engine (``load_mdf`` +
  ``EvaluableGraph``, one ``evaluate()``), up to ``--ref-max`` nodes, and the ratio of its
  update to ours (the interpreted backend as it runs by default).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

COLUMNS = [
    ("json", "json"),
    ("yaml", "yaml"),
    ("model", "model"),
    ("expr", "expr"),
    ("plan", "plan"),
    ("gs_setup", "gs set"),
    ("gs_pass", "gs pass"),
    ("own_setup", "own set"),
    ("own_pass", "own pass"),
    ("compile", "compile"),
    ("info", "info"),
    ("validate", "valid"),
    ("write", "write"),
    ("rss", "RSS MB"),
    ("ref_setup", "ref set"),
    ("ref_pass", "ref pass"),
    ("ratio", "x pass"),
]


def _cpu(f):
    """(result, CPU seconds) of ``f()`` (its name and times on stderr, as it goes)."""
    c, t = time.process_time(), time.perf_counter()
    out = f()
    cpu = time.process_time() - c
    name = getattr(f, "__name__", "?")
    print(f"  {name}: {cpu:.2f} CPU s, {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return out, cpu


def child(family: str, n: int, opts: dict) -> dict:
    """Every stage of one case, in this process."""
    import scale_models
    import yaml

    from mdf_engine.cli.info import describe
    from mdf_engine.interpreter import InterpretedGraph
    from mdf_engine.loader import from_dict
    from mdf_engine.loader.files import read_file
    from mdf_engine.plan import plan_graph
    from mdf_engine.plan import values as plan_values
    from mdf_engine.simulation import Simulation

    row: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="mdf_scale_"))
    d = scale_models.FAMILIES[family](n)
    jpath, ypath = tmp / "m.json", tmp / "m.yaml"
    jpath.write_text(json.dumps(d))
    ypath.write_text(yaml.safe_dump(d, sort_keys=False))
    data, row["json"] = _cpu(lambda: read_file(str(jpath)))
    _, row["yaml"] = _cpu(lambda: read_file(str(ypath)))
    model, row["model"] = _cpu(lambda: from_dict(data, source=str(jpath)))
    graph = model.graphs[0]

    # the expression compiler's share of planning
    parse, spent = plan_values.parse, [0.0]

    def timed_parse(*a, **k):
        c = time.process_time()
        try:
            return parse(*a, **k)
        finally:
            spent[0] += time.process_time() - c

    plan_values.parse = timed_parse
    try:
        plan, row["plan"] = _cpu(lambda: plan_graph(model, graph, str(jpath)))
    finally:
        plan_values.parse = parse
    row["expr"] = spent[0]

    if n <= opts["gs_max"]:
        import graph_scheduler  # noqa: F401  (its import is not the setup's cost)

        gs, row["gs_setup"] = _cpu(lambda: InterpretedGraph(plan))
        gs.evaluate()
        _, row["gs_pass"] = _cpu(gs.evaluate)
    own, row["own_setup"] = _cpu(lambda: InterpretedGraph(plan, own_scheduler=True))
    own.evaluate()
    _, row["own_pass"] = _cpu(own.evaluate)
    del own

    cache = tmp / "cache"
    os.environ["MDF_ENGINE_CACHE"] = str(cache)
    from mdf_engine.limits import limit

    small = n <= opts["compile_max"] and family in opts["compile_families"]
    if small or n > limit("compiled_nodes"):

        def compiled():
            sim = Simulation(str(jpath), backend="compiled")
            sim.run(steps=1)
            return sim.runner.fallback_reason

        why, row["compile"] = _cpu(compiled)
        if why:
            row["compile_refused"] = why

    _, row["info"] = _cpu(lambda: describe(str(jpath)))

    def validate():
        m = from_dict(read_file(str(jpath)), source=str(jpath))
        for g in m.graphs:
            plan_graph(m, g, str(jpath))

    _, row["validate"] = _cpu(validate)

    sim = Simulation(str(jpath), backend="interpreted")
    results = sim.run(steps=2)

    def write():
        results.to_csv(tmp / "r.csv")
        results.to_npz(tmp / "r.npz")
        results.to_json(tmp / "r.json")

    _, row["write"] = _cpu(write)
    # the interpreted backend as it runs by default (own scheduler from 1,000 nodes)
    _, ours_pass = _cpu(sim.evaluate)

    if n <= opts["ref_max"]:
        from modeci_mdf.execution_engine import EvaluableGraph
        from modeci_mdf.utils import load_mdf

        with contextlib.redirect_stdout(io.StringIO()):
            eg, row["ref_setup"] = _cpu(
                lambda: EvaluableGraph(load_mdf(str(jpath)).graphs[0], verbose=False)
            )
            eg.evaluate()
            _, row["ref_pass"] = _cpu(eg.evaluate)
        row["ratio"] = row["ref_pass"] / max(ours_pass, 1e-9)
    row["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def _cell(row: dict, key: str) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    if key == "rss":
        return f"{v:.0f}"
    if key == "ratio":
        return f"{v:.0f}x" if v >= 10 else f"{v:.1f}x"
    text = f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return text + ("r" if key == "compile" and "compile_refused" in row else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,5000,10000")
    ap.add_argument("--families", default="chain,fan,cells,dag")
    ap.add_argument("--gs-max", type=int, default=1000)
    ap.add_argument("--ref-max", type=int, default=1000)
    ap.add_argument("--compile-max", type=int, default=1000)
    # (the ONNX-like DAG of 100 nodes compiles for minutes: docs/performance.md, "scale")
    ap.add_argument("--compile-families", default="chain,fan,cells")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    opts = {
        "gs_max": args.gs_max,
        "ref_max": args.ref_max,
        "compile_max": args.compile_max,
        "compile_families": args.compile_families.split(","),
    }
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), opts)))
        return
    env = dict(os.environ)
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.setdefault(var, "1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    print("CPU seconds per stage; r: the compiled backend declined the graph (node limit)")
    head = f"{'family':7} {'nodes':>6} " + " ".join(f"{h:>8}" for _, h in COLUMNS) + "    wall"
    print(head)
    for family in args.families.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            cmd = [sys.executable, __file__, "--child", family, str(size)]
            cmd += [f"--gs-max={args.gs_max}", f"--ref-max={args.ref_max}"]
            cmd += [f"--compile-max={args.compile_max}"]
            cmd += [f"--compile-families={args.compile_families}"]
            t = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t
            if done.returncode != 0:
                print(f"{family:7} {size:>6} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            cells = " ".join(f"{_cell(row, k):>8}" for k, _ in COLUMNS)
            print(f"{family:7} {size:>6} {cells} {wall:7.0f}", flush=True)
            if "compile_refused" in row:
                refused = row["compile_refused"]
    if "refused" in locals():
        print(f"declined with: {refused}")
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
