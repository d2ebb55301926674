"""Cold start of the compiled backend: a first run and a cached start of small models, each in
a fresh process, against Numba's own floor and against ``import mdf_engine``.

    python benchmarks/cold_start.py [--repeat N] [--steps N] [--imports] [--no-bytecode]

Every measured process is a new ``python`` (the one running this script), timed from outside
(wall seconds, and the CPU seconds the child used: on a busy machine the CPU time is what the
process itself cost). Cases per model (``Simulation(path, backend="compiled").run(steps, dt)``,
and ``mdf run`` for the cached start):

- **first run, all cold**: an empty model cache (``MDF_ENGINE_CACHE``) and an empty Numba cache
  (``NUMBA_CACHE_DIR``), both fresh temporary folders: the registry kernels the model calls
  are compiled too;
- **first run**: an empty model cache, the registry kernels already in Numba's cache (as on a
  machine that has run any model): the goal's "first run with an empty model cache";
- **first run, tier 0 off**: the same with ``MDF_ENGINE_TIER0=0`` (the generated code is
  compiled at once, as before tier 0 existed);
- **cached start**: both caches warm with the generated code compiled (folders primed with
  tier 0 off, then run with the defaults: code with machine code never goes to tier 0);
- **tier 0 again**: a second process on the first run's folders: the model's record is
  cached but its code was never compiled (tier 0 ran it), so tier 0 runs it again, without
  warm-up or code generation.

The last column says which tier each first run and cached start took (``tier 0`` or
``generated``).

Bytecode: every child caches the bytecode of the modules it imports under one temporary
``PYTHONPYCACHEPREFIX`` (shared by all, written by the first process that imports a module),
as an installed package has its ``.pyc`` files, even where this environment sets
``PYTHONDONTWRITEBYTECODE``; ``--no-bytecode`` compiles every module from source in every
process instead (the floors too), which costs mdf_engine's ~70 modules of a cached start
about 0.1 CPU seconds.

Floors: ``python -c "import mdf_engine"``, and Numba's own floor: a fresh process that imports
Numba and calls one ``@njit(cache=True)`` function whose machine code is in Numba's cache. With
``--repeat N`` every case runs N times (new folders for the first runs) and the fastest wall
time is shown (with its CPU time). ``--imports`` adds what a cached start imports, by
``python -X importtime``: the packages that take longest, cumulative.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {
    "chain (PNL 3-node)": ROOT / "tests/data/pnl/linear_chain.json",
    "conditions": ROOT / "examples/conditions_threshold.json",
    "FitzHugh-Nagumo": ROOT / "examples/fitzhugh_nagumo.json",
}
GOAL_FIRST = 1.5
GOAL_RATIO = 1.2

SIMULATION = """
import json, sys
from mdf_engine import Simulation
sim = Simulation(sys.argv[1], backend="compiled")
sim.run(steps=int(sys.argv[2]), dt=0.01)
tier0 = getattr(sim.runner, "tier0", None)
tier = "tier 0" if tier0 is not None and tier0.updates else "generated"
print(json.dumps({"mode": sim.runner.mode, "origin": sim.runner.origin, "tier": tier}))
"""

FLOOR = """
import numba


@numba.njit(cache=True)
def f(x):
    return x + 1.0


f(1.0)
"""


def timed(argv: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system) of one fresh process, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def best(runs: list[tuple[float, float, str]]) -> tuple[float, float, str]:
    return min(runs, key=lambda r: r[0])


def base_env(pycache: Path | None = None) -> dict[str, str]:
    """The children's environment: one thread each, this tree first on the path, and (given
    ``pycache``) bytecode cached under ``pycache`` as an installed package has it, whatever
    ``PYTHONDONTWRITEBYTECODE`` says here."""
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env.setdefault("NUMBA_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    return env


def with_caches(env: dict[str, str], model_cache: Path, numba_cache: Path) -> dict[str, str]:
    return {**env, "MDF_ENGINE_CACHE": str(model_cache), "NUMBA_CACHE_DIR": str(numba_cache)}


def measure_model(path: Path, args: argparse.Namespace, tmp: Path, script: Path) -> dict:
    env = base_env(args.pycache)
    run = [sys.executable, str(script), str(path), str(args.steps)]
    cli = [
        sys.executable,
        "-m",
        "mdf_engine.cli",
        "run",
        str(path),
        "--backend",
        "compiled",
        "--steps",
        str(args.steps),
        "--dt",
        "0.01",
        "-q",
    ]
    # the registry kernels once into a shared Numba cache (another model cache folder)
    kernels = tmp / f"numba_{path.stem}"
    timed(run, with_caches({**env, "MDF_ENGINE_TIER0": "0"}, tmp / f"prime_{path.stem}", kernels))
    off = {**env, "MDF_ENGINE_TIER0": "0"}
    all_cold, first, first_off, again, cached, cached_cli = [], [], [], [], [], []
    for k in range(args.repeat):
        all_cold.append(
            timed(run, with_caches(env, tmp / f"a{k}_{path.stem}", tmp / f"n{k}_{path.stem}"))
        )
        fresh = with_caches(env, tmp / f"f{k}_{path.stem}", kernels)
        first.append(timed(run, fresh))
        first_off.append(timed(run, with_caches(off, tmp / f"o{k}_{path.stem}", kernels)))
        again.append(timed(run, fresh))
    compiled = with_caches(env, tmp / f"c_{path.stem}", kernels)
    timed(run, {**compiled, "MDF_ENGINE_TIER0": "0"})  # the generated code, compiled
    for _ in range(args.repeat):
        cached.append(timed(run, compiled))
        cached_cli.append(timed(cli, compiled))
    info = json.loads(best(cached)[2].strip().splitlines()[-1])
    first_info = json.loads(first[0][2].strip().splitlines()[-1])
    return {
        "all_cold": best(all_cold),
        "first": best(first),
        "first_off": best(first_off),
        "again": best(again),
        "cached": best(cached),
        "cached_cli": best(cached_cli),
        "mode": info["mode"],
        "tiers": (first_info.get("tier", "?"), info.get("tier", "?")),
    }


def floors(args: argparse.Namespace, tmp: Path) -> dict[str, tuple[float, float, str]]:
    env = base_env(args.pycache)
    folder = tmp / "floor"
    folder.mkdir()
    (folder / "floor.py").write_text(FLOOR)
    fenv = {**env, "NUMBA_CACHE_DIR": str(tmp / "floor_cache")}
    timed([sys.executable, "floor.py"], fenv, cwd=str(folder))  # fills Numba's cache
    timed([sys.executable, "-c", "import mdf_engine"], env)  # (and the bytecode cache)
    return {
        "numba": best(
            [timed([sys.executable, "floor.py"], fenv, cwd=str(folder)) for _ in range(args.repeat)]
        ),
        "import": best(
            [timed([sys.executable, "-c", "import mdf_engine"], env) for _ in range(args.repeat)]
        ),
        "python": best([timed([sys.executable, "-c", "pass"], env) for _ in range(args.repeat)]),
    }


def imports(
    path: Path, tmp: Path, script: Path, pycache: Path | None, top: int = 12
) -> list[tuple[float, str]]:
    """The slowest imports (cumulative seconds) of a cached start of ``path``."""
    env = with_caches(base_env(pycache), tmp / "imports_model", tmp / "imports_numba")
    argv = [sys.executable, str(script), str(path), "1"]
    timed(argv, {**env, "MDF_ENGINE_TIER0": "0"})  # the generated code, compiled
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        if depth <= 1:
            rows.append((int(parts[1]) / 1e6, name.strip()))
    return sorted(rows, reverse=True)[:top]


def fmt(r: tuple[float, float, str]) -> str:
    return f"{r[0]:.2f} ({r[1]:.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2, help="runs of every case (fastest shown)")
    ap.add_argument("--steps", type=int, default=10, help="steps of each run")
    ap.add_argument("--imports", action="store_true", help="list a cached start's imports")
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="compile every module from source in every process (PYTHONDONTWRITEBYTECODE=1)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mdf_cold_") as t:
        tmp = Path(t)
        args.pycache = None if args.no_bytecode else tmp / "pycache"
        if args.no_bytecode:
            os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        script = tmp / "simulation_run.py"
        script.write_text(SIMULATION)
        base = floors(args, tmp)
        rows = {name: measure_model(path, args, tmp, script) for name, path in MODELS.items()}
        top = imports(MODELS["conditions"], tmp, script, args.pycache) if args.imports else []
    load = os.getloadavg()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"# {now}, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on "
        f"{os.cpu_count()} cores; fastest of {args.repeat}; seconds wall (CPU); "
        f"{'no bytecode cache' if args.no_bytecode else 'bytecode cached'}\n"
    )
    numba_floor = base["numba"]
    print(
        f"python -c pass {fmt(base['python'])}; import mdf_engine {fmt(base['import'])}; "
        f"Numba's floor (fresh process, one cached @njit call) {fmt(numba_floor)}\n"
    )
    print(
        "| model | first run, all caches empty | first run, empty model cache "
        "| same, tier 0 off | cached start | cached `mdf run` "
        "| cached / Numba floor, wall (CPU) | tier 0 again | tiers (first, cached) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        ratio_wall = r["cached"][0] / numba_floor[0]
        ratio_cpu = r["cached"][1] / numba_floor[1]
        print(
            f"| {name} | {fmt(r['all_cold'])} | {fmt(r['first'])} | {fmt(r['first_off'])} | "
            f"{fmt(r['cached'])} | {fmt(r['cached_cli'])} | {ratio_wall:.2f}x ({ratio_cpu:.2f}x) "
            f"| {fmt(r['again'])} | {', '.join(r['tiers'])} |"
        )
    first_ok = all(r["first"][0] < GOAL_FIRST for r in rows.values())
    first_cpu_ok = all(r["first"][1] < GOAL_FIRST for r in rows.values())
    ratio_ok = all(r["cached"][0] / numba_floor[0] <= GOAL_RATIO for r in rows.values())
    ratio_cpu_ok = all(r["cached"][1] / numba_floor[1] <= GOAL_RATIO for r in rows.values())
    print(
        f"\ngoal: first run (empty model cache) < {GOAL_FIRST} s: wall "
        f"{'met' if first_ok else 'MISSED'}, CPU {'met' if first_cpu_ok else 'MISSED'}; "
        f"cached start <= {GOAL_RATIO}x Numba's floor: wall "
        f"{'met' if ratio_ok else 'MISSED'}, CPU {'met' if ratio_cpu_ok else 'MISSED'}"
    )
    if top:
        print("\nslowest imports of a cached start (conditions model), cumulative seconds:")
        for sec, name in top:
            print(f"  {sec:6.3f}  {name}")


if __name__ == "__main__":
    main()
