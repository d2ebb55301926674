"""Seeded, time-bounded mutation fuzzer of model files, stage by stage, with the reference oracle.

Each mutant is a real file (``tests/data/wild``: every writer; ``tests/data/pnl``;
``examples``) broken by one to three structural mutations of its JSON/YAML tree
(``tools/fuzz_structure.py``, and sometimes ``tools/fuzz_mutations.py``'s hostile texts) or by a
byte-level mutation of its text. It is then driven, in order, through the stages a user meets:

* ``load``: ``mdf_engine.load`` (the Python API);
* ``validate``, ``info``: the commands;
* ``run``: ``mdf run --backend interpreted``;
* ``run-compiled``: ``mdf run --backend compiled`` (tier 0 on or off);
* ``oracle``: ``Simulation`` interpreted and compiled, and modeci-mdf's reference engine on the
  same file: a mutant that runs must give the reference's numbers where the reference runs it
  (and where it agrees on the unmutated file), and the two backends must agree;
* ``export``: ``mdf export --onnx``, then ``mdf import`` of the result and a run of that.

A mutant the loader refuses goes through one command more (its refusal must be the same clean
line there); one it accepts goes through the others. Every stage runs in the sandbox of
``tools/fuzz_models.py`` (a forked child, own ``HOME`` and compile cache, a wall-time bound and
an address-space limit; ``run_case`` checks tracebacks, exit status, stray files, files a user
saved, raw control characters, model text in generated source). Each outcome is one of

* ``error``: a clean refusal: one line ``mdf...`` that names the model file;
* ``ok``: a valid run;
* ``FINDING``: anything else: a traceback, a hang past the timeout, a crash or signal, a memory
  blow-up, a non-MDFError exception, an error line without the file's name, a value different
  from the reference's or the other backend's.

Usage: ``nice -n 19 python tools/fuzz_inputs.py --seed 1 --minutes 30 [--keep DIR]``; one line
per finding, and a table of outcomes per stage at the end.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import io
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

import fuzz_models  # noqa: E402  (tools/ is not a package)
import fuzz_mutations  # noqa: E402
import fuzz_structure  # noqa: E402

CORPUS_DIRS = ["tests/data/wild", "tests/data/pnl", "examples"]
STAGES = ("load", "validate", "info", "run", "run-compiled", "oracle", "export")
TIMEOUTS = {"run": 150.0, "run-compiled": 300.0, "oracle": 300.0, "export": 150.0}
STEPS = 3
DT = 0.1


def corpus(max_bytes: int = 2_000_000) -> list[Path]:
    """The model files of the corpus, sorted (oracles and inputs left out)."""
    out = []
    for d in CORPUS_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix.lower() in (".json", ".yaml", ".yml") and p.is_file():
                if not any(s in p.name for s in fuzz_models.SKIP_PARTS):
                    if p.stat().st_size <= max_bytes:
                        out.append(p)
    return out


def vocabulary() -> tuple[list[str], list[str]]:
    """Condition kinds and function names the engine knows (every expression function, every
    registered op)."""
    from mdf_engine.expressions import functions as f
    from mdf_engine.plan import load_function_libraries
    from mdf_engine.registry import REGISTRY
    from mdf_engine.schedulers.kinds import KINDS

    load_function_libraries()
    names = list(f.BUILTIN_FUNCTIONS)
    names += [f"math.{n}" for n in f.MATH_FUNCTIONS] + [f"np.{n}" for n in f.NUMPY_FUNCTIONS]
    names += sorted(REGISTRY.names())
    names += ["np.load", "open", "getattr", "x.__class__", "np.linalg.inv", "numpy.random.rand"]
    return sorted(KINDS), names


# ---------------------------------------------------------------- mutants


def make_mutant(
    seed: int, number: int, files: list[Path], kinds: list[str], functions: list[str]
) -> tuple[Path, str, bytes, str]:
    """Mutant ``number`` of ``seed``: (source file, model file name, bytes, what was done)."""
    rng = random.Random(f"inputs:{seed}:{number}")
    src = files[rng.randrange(len(files))]
    ext = src.suffix.lower()
    text = src.read_bytes()
    data = json.loads(text) if ext == ".json" else fuzz_models._yaml(text)
    whats = []
    r = rng.random()
    if r < 0.12:
        blob, what = fuzz_structure.byte_mutant(rng, text)
        whats.append(what)
    elif r < 0.16:
        blob, ext, what = fuzz_mutations.byte_mutation(rng, data, ext)
        whats.append(what)
    else:
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            try:
                if rng.random() < 0.8:
                    data, what = fuzz_structure.mutate(rng, data, kinds, functions)
                else:
                    data, what = fuzz_mutations.mutate_tree(rng, data)
            except RecursionError:  # a tree made deep by an earlier mutation: enough
                break
            whats.append(what)
        try:
            blob = fuzz_models._serialize(data, ext, rng)
        except (RecursionError, ValueError, TypeError) as e:
            blob, ext = b"{}", ".json"
            whats.append(f"(unserializable: {type(e).__name__})")
    return src, "model" + ext, blob, "; ".join(whats)


# ---------------------------------------------------------------- what a forked child runs


def _child_load(case: fuzz_models.Case) -> int:
    from mdf_engine import MDFError, load

    try:
        load(case.model)
    except MDFError as e:
        print(f"mdf: error: {e}", file=sys.stderr)
        return 2
    return 0


def _child_cli(case: fuzz_models.Case, env: dict[str, str] | None = None) -> int:
    from mdf_engine import cli

    os.environ.update(env or {})
    try:
        rc = cli.main(case.args)
        if rc == 0 and case.entry == "export":  # what was exported imports and runs
            rc = cli.main(["import", "out.onnx", "back.json"])
            if rc == 0:
                rc = cli.main(["run", "back.json", "--steps", "1"])
        return rc
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


class _RefTimeout(Exception):
    pass


def _child_oracle(case: fuzz_models.Case) -> int:
    """Ours interpreted, ours compiled, the reference: the same numbers, or a clean refusal."""
    from mdf_engine import MDFError, Simulation

    ours = {}
    for backend in ("interpreted", "compiled"):
        try:
            ours[backend] = Simulation(case.model, backend=backend).run(steps=STEPS, dt=DT).outputs
        except MDFError as e:
            if backend == "compiled":
                print(
                    f"mdf: FUZZ-DISAGREE compiled refused what interpreted ran: {e}",
                    file=sys.stderr,
                )
                return 3
            print(f"mdf: error: {e}", file=sys.stderr)
            return 2
    diff = _difference(ours["interpreted"], ours["compiled"])
    if diff:
        print(f"mdf: FUZZ-DISAGREE interpreted vs compiled: {diff}", file=sys.stderr)
        return 3
    print("STAGE reference", flush=True)
    from reference_engine import reference_run

    def alarm(*_: Any) -> None:
        raise _RefTimeout

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            ref = reference_run(case.model, STEPS, DT)["outputs"]
    except BaseException as e:  # noqa: BLE001 - the reference not running is no finding
        print(f"REFERENCE-SKIP {type(e).__name__}", flush=True)
        return 0
    finally:
        signal.alarm(0)
    import numpy as np

    if any(np.iscomplexobj(v) for ports in ref.values() for v in ports.values()):
        # a negative base to a fractional power: complex in Python, NaN here as in numpy
        # (docs/semantics.md, "Numeric faults follow numpy"): a documented difference
        print("REFERENCE-SKIP complex", flush=True)
        return 0
    diff = _difference(ours["interpreted"], ref)
    if diff:
        print(f"REFERENCE-DISAGREE {diff}", flush=True)
        if case.what != "baseline":
            print(f"mdf: FUZZ-DISAGREE with the reference engine: {diff}", file=sys.stderr)
            return 3
        return 0
    print("REFERENCE-AGREE", flush=True)
    return 0


def _difference(a: dict, b: dict) -> str:
    """'' when two outputs dicts hold the same values (rtol 1e-9), else the first difference."""
    import numpy as np

    if set(a) != set(b):
        return f"nodes {sorted(map(str, set(a) ^ set(b)))[:4]!a}"
    for node, ports in b.items():
        for port, rv in ports.items():
            if port not in a[node]:
                return f"{node!a}.{port!a} missing"
            ov = a[node][port]
            try:
                x, y = np.asarray(ov, dtype=float), np.asarray(rv, dtype=float)
            except (TypeError, ValueError, OverflowError):  # (an int beyond float: as text)
                if str(ov) != str(rv):
                    return f"{node!a}.{port!a}: {ov!r:.60} vs {rv!r:.60}"
                continue
            if x.size == y.size == 1:
                x, y = x.reshape(()), y.reshape(())
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-9, atol=0, equal_nan=True):
                return f"{node!a}.{port!a}: {ov!r:.80} vs {rv!r:.80}"
    return ""


# ---------------------------------------------------------------- stages


def stage_case(number: int, stage: str, model: str, blob: bytes, what: str, rng: random.Random):
    """The sandbox case of ``stage`` for one mutant."""
    case = fuzz_models.Case(number, stage, "", what, {model: blob}, model, [])
    case.saved[model] = blob
    if stage == "load":
        case.entry, case.child = "api-load", _child_load
    elif stage == "oracle":
        case.entry, case.child = "api-oracle", _child_oracle
    elif stage in ("validate", "info"):
        case.args, case.child = [stage, model], _child_cli
    elif stage == "run":
        case.args = [
            "run",
            model,
            "--backend",
            "interpreted",
            "--steps",
            str(STEPS),
            "--dt",
            str(DT),
        ]
        case.child = _child_cli
    elif stage == "run-compiled":
        case.args = ["run", model, "--backend", "compiled", "--steps", str(STEPS), "--dt", str(DT)]
        case.child = functools.partial(_child_cli, env={"MDF_ENGINE_TIER0": rng.choice("01")})
    elif stage == "export":
        case.args, case.child = ["export", "--onnx", model, "out.onnx"], _child_cli
        case.outputs = ("out.onnx", "back.json", "back.weights.npz", "out.weights.npz")
    return case


def classify(o: fuzz_models.Outcome, stage: str) -> str:
    """'ok', 'error' or 'FINDING' (the problems then say why)."""
    c = o.case
    if o.rc is None and "STAGE reference" in o.stdout:
        o.problems = [p for p in o.problems if "hang" not in p]  # the reference hung, not us
        return "ok" if not o.problems else "FINDING"
    failed = o.rc == 2 or (o.rc == 1 and stage == "validate")
    if failed and not o.problems:
        lines = [ln for ln in o.stderr.split("\n") if ln.startswith("mdf")]
        names = set(c.files) | set(c.outputs)
        if lines and not any(n in lines[-1] for n in names):
            o.problems.append(f"the error line does not name the file: {lines[-1][:200]!a}")
    if o.rc == 2 and stage == "load" and o.cpu > 5:
        o.problems.append(f"refused only after {o.cpu:.1f} s of CPU")
    if o.rss_mb > 2048:
        o.problems.append(f"used {o.rss_mb:.0f} MB")
    if o.problems:
        return "FINDING"
    return "error" if failed else "ok"


class Session:
    """What every sandboxed fuzzing session shares (this tool's and ``fuzz_guided``'s): a seed,
    a sandbox root with its compile cache, the memory bound, the findings, and the one way a
    case is run, judged and reported."""

    def __init__(self, seed: int, root: Path, *, mem_mb: int, keep: Path | None, verbose: bool):
        self.seed, self.root, self.mem_mb = seed, root, mem_mb
        self.keep, self.verbose = keep, verbose
        self.findings: list[str] = []
        (root / "sandbox").mkdir(parents=True, exist_ok=True)
        self.cache = root / "cache"
        self.cache.mkdir(exist_ok=True)

    def sandboxed(self, case: fuzz_models.Case, timeout: float) -> fuzz_models.Outcome:
        """Run ``case`` in the sandbox; a case the wall clock killed having had little CPU was
        starved at nice 19 on a shared machine, not hung (a hang spins): it runs again with
        three times the time, twice at most. The sandbox is emptied afterwards."""
        for _ in range(3):
            o = fuzz_models.run_case(
                case,
                self.root / "sandbox",
                timeout=timeout,
                mem_mb=self.mem_mb,
                subprocess_mode=False,
                cache=self.cache,
            )
            if o.rc is not None or o.cpu > 0.3 * timeout:
                break
            timeout *= 3
        for box in (self.root / "sandbox").iterdir():
            fuzz_models.shutil.rmtree(box, ignore_errors=True)
        return o

    def report(self, verdict: str, label: str, o: fuzz_models.Outcome, detail: str) -> None:
        """A finding: one line printed and kept (and its case saved under ``--keep``);
        otherwise, with ``--verbose``, ``detail``."""
        if verdict == "FINDING":
            line = f"FINDING [{label}] {fuzz_models.describe(o)}"
            self.findings.append(line)
            print(line, flush=True)
            if self.keep:
                fuzz_models._keep(self.keep, self.seed, o)
        elif self.verbose:
            print(f"{verdict} [{label}] {detail}", flush=True)


class Fuzzer(Session):
    """One fuzzing session over the corpus, stage by stage: a tally per stage."""

    def __init__(self, seed: int, root: Path, *, mem_mb: int, keep: Path | None, verbose: bool):
        super().__init__(seed, root, mem_mb=mem_mb, keep=keep, verbose=verbose)
        self.files = corpus()
        self.kinds, self.functions = vocabulary()
        self.tally: dict[str, collections.Counter] = {s: collections.Counter() for s in STAGES}
        self.baseline: dict[Path, bool] = {}
        #: oracle stages by what the reference did: agreed, did not run, disagreed
        self.oracle: collections.Counter = collections.Counter()

    def run_stage(self, number: int, stage: str, model: str, blob: bytes, what: str, source: Path):
        rng = random.Random(f"stage:{self.seed}:{number}:{stage}")
        case = stage_case(number, stage, model, blob, what, rng)
        case.source = str(source.relative_to(ROOT))
        o = self.sandboxed(case, TIMEOUTS.get(stage, 60.0))
        verdict = classify(o, stage)
        if what != "baseline":  # an unmutated file is not a mutant
            self.tally[stage][verdict] += 1
            if stage == "oracle":
                marks = ("REFERENCE-AGREE", "REFERENCE-SKIP", "REFERENCE-DISAGREE")
                self.oracle.update(m for m in marks if m in o.stdout)
            detail = f"{case.source}: {what[:100]!a} rc={o.rc} {o.seconds:.1f}s"
            self.report(verdict, stage, o, detail)
        return verdict, o

    def agrees_unmutated(self, src: Path) -> bool:
        """Whether the unmutated file runs alike here and in the reference (computed once)."""
        if src not in self.baseline:
            blob = src.read_bytes()
            _, o = self.run_stage(-1, "oracle", "model" + src.suffix.lower(), blob, "baseline", src)
            self.baseline[src] = "REFERENCE-AGREE" in o.stdout
        return self.baseline[src]

    def mutant(self, number: int, compiled: float, export: float) -> None:
        src, model, blob, what = make_mutant(
            self.seed, number, self.files, self.kinds, self.functions
        )
        rng = random.Random(f"plan:{self.seed}:{number}")
        verdict, _ = self.run_stage(number, "load", model, blob, what, src)
        if verdict != "ok":
            self.run_stage(number, rng.choice(["validate", "info", "run"]), model, blob, what, src)
            return
        for stage in ("validate", "info", "run"):
            verdict, _ = self.run_stage(number, stage, model, blob, what, src)
        if verdict != "ok":
            return
        if rng.random() < compiled:
            self.run_stage(number, "run-compiled", model, blob, what, src)
            if self.agrees_unmutated(src):
                self.run_stage(number, "oracle", model, blob, what, src)
        if rng.random() < export:
            self.run_stage(number, "export", model, blob, what, src)


def smoke(seed: int, mutants: int, folder: Path, max_bytes: int = 20_000) -> tuple[list[str], dict]:
    """In-process and quick (the test suite's budget): each mutant of the small corpus files
    through ``load`` and the planner (``mdf validate``'s work). Returns the problems (an
    exception other than MDFError, an error of more than one line or without the file's
    name) and the count of each outcome."""
    from mdf_engine import MDFError, load
    from mdf_engine.plan import plan_graph

    files = corpus(max_bytes)
    kinds, functions = vocabulary()
    problems, counts = [], collections.Counter()
    for n in range(mutants):
        src, model, blob, what = make_mutant(seed, n, files, kinds, functions)
        path = folder / f"m{n}{Path(model).suffix}"
        path.write_bytes(blob)
        try:
            m = load(path)
            for g in m.graphs:
                plan_graph(m, g, str(path))
            counts["ok"] += 1
        except MDFError as e:
            text = str(e)
            if "\n" in text or path.name not in text:
                problems.append(f"{n} {src.name} {what!a}: unclear error {text[:200]!a}")
            counts["error"] += 1
        except Exception as e:  # noqa: BLE001 - exactly what the smoke test looks for
            problems.append(f"{n} {src.name} {what!a}: {type(e).__name__}: {str(e)[:200]!a}")
            counts["FINDING"] += 1
    return problems, dict(counts)


def prepare() -> None:
    """Import what every child uses once, before forking (each case pays for its own work)."""
    import graph_scheduler  # noqa: F401
    import modeci_mdf.execution_engine  # noqa: F401
    import yaml  # noqa: F401

    import mdf_engine.backends.compiled.graph  # noqa: F401
    import mdf_engine.cli  # noqa: F401
    import mdf_engine.interpreter  # noqa: F401
    import mdf_engine.simulation  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--mutants", type=int, default=10**9)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--compiled", type=float, default=0.15, help="share of running mutants compiled")
    p.add_argument("--export", type=float, default=0.2, help="share of running mutants exported")
    p.add_argument("--mem", type=int, default=3072, help="address-space limit (MB)")
    p.add_argument("--root", type=Path, default=None)
    p.add_argument("--keep", type=Path, default=None)
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    os.nice(19 - os.nice(0))
    prepare()
    import tempfile

    root = a.root or Path(tempfile.mkdtemp(prefix="mdf_fuzz_inputs_"))
    fz = Fuzzer(a.seed, root, mem_mb=a.mem, keep=a.keep, verbose=a.verbose)
    t0 = time.monotonic()
    n = a.start
    while n < a.start + a.mutants and time.monotonic() - t0 < a.minutes * 60:
        fz.mutant(n, a.compiled, a.export)
        n += 1
    fuzz_models.shutil.rmtree(root, ignore_errors=True)
    print(
        f"seed {a.seed}: mutants {a.start}..{n - 1} ({n - a.start}), {time.monotonic() - t0:.0f} s"
    )
    for stage, c in fz.tally.items():
        print(f"  {stage:13} ok {c['ok']:5}  error {c['error']:5}  FINDING {c['FINDING']:4}")
    agree = sum(fz.baseline.values())
    print(f"  reference baselines: {agree} of {len(fz.baseline)} sources agree unmutated")
    print(f"  oracle stages: {dict(fz.oracle)}")
    return 1 if fz.findings else 0


if __name__ == "__main__":
    sys.exit(main())
