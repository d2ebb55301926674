"""Mutation fuzzer: hostile variants of real model files through every entry point.

Each case starts from a corpus file (tests/data/wild, examples, tests/data/pnl, the shared
models), mutates it deterministically (seeded ``random.Random``) and drives one entry point:
``mdf run`` (interpreted, compiled, hexagon backends), ``info``, ``validate``, ``draw``,
``sweep``, ``export --onnx``, ``import`` (of mutated ONNX files), the Python ``Simulation``
API (interpreted against compiled: same values or both refuse) and ``mdf_engine.compat``.

Every case runs in a child process (forked from this one after the engine is imported, or
``--subprocess``: ``python -m mdf_engine.cli``) in a sandbox folder with its own ``HOME`` and
compile cache, under a wall-time bound and an address-space limit. A case is a finding when

* the exit status is neither 0 nor 2, or the child was killed (time, memory, a signal);
* stderr of a failure is not exactly one line ``mdf...``, or any stderr line is a traceback,
  an ``internal error`` or a bare ``MemoryError``/``RecursionError`` fallback;
* stdout or stderr holds a raw control character, line separator or bidi override;
* a file appeared outside the case's output paths and compile cache, a file a user saved
  (the model, an existing output on a failed run) changed, or a ``fuzzmark`` file appeared;
* generated source in the compile cache holds model text (``fuzzmark``) or non-ASCII text;
* the Python API raised anything but ``MDFError``, or the backends disagreed;
* the child used more than ``--max-rss`` MB or refused a tiny file only after
  ``--slow`` seconds.

Usage: ``python tools/fuzz_models.py --seed 1 --cases 200 [--only run,info] [--keep DIR]``;
it prints one line per finding and a summary. ``tests/test_security_mutation_fuzz.py`` runs
a fixed small budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz_mutations import (  # noqa: E402  (tools/ is not a package)
    MARK,
    byte_mutation,
    make_onnx_case,
    mutate_tree,
    run_arguments,
)

CORPUS_DIRS = ["tests/data/wild", "examples", "tests/data/pnl", "../shared/models"]
SKIP_PARTS = (".oracle.", ".inputs.", ".expected.", "generation_report", "README")
ENTRY_POINTS = (
    "run",
    "run-compiled",
    "run-hexagon",
    "info",
    "validate",
    "draw",
    "sweep",
    "export",
    "import",
    "api",
    "compat",
)
#: Relative weight of each entry point (a compiled case costs a Numba compile).
WEIGHTS = {"run": 6, "run-compiled": 2, "info": 2, "validate": 3, "api": 2}
_BAD_CHARS = set("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def corpus(root: Path = ROOT) -> list[Path]:
    """Model files of the corpus, sorted (JSON and YAML; oracles and inputs left out)."""
    files = []
    for d in CORPUS_DIRS:
        base = (root / d).resolve()
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            if p.suffix.lower() in (".json", ".yaml", ".yml") and p.is_file():
                if not any(s in p.name for s in SKIP_PARTS):
                    files.append(p)
    return sorted(files)


@dataclasses.dataclass
class Case:
    """One fuzz case: files to write into the sandbox and what to run on them."""

    number: int
    entry: str
    source: str
    what: str
    files: dict[str, bytes]
    model: str
    args: list[str]
    #: files the case sets up that must survive unchanged (name -> content; None: a folder)
    saved: dict[str, bytes | None] = dataclasses.field(default_factory=dict)
    #: names the command may write (relative to the sandbox work folder)
    outputs: tuple[str, ...] = ()
    #: kept (a failed run) or replaced (a successful one) by the command
    replaced_ok: bool = True
    #: what the forked child runs instead of the entry point's command (tools/fuzz_inputs.py)
    child: Callable[[Case], int] | None = None


@dataclasses.dataclass
class Outcome:
    """What a case did, and the problems found (empty: the case passed)."""

    case: Case
    rc: int | None
    seconds: float
    cpu: float
    rss_mb: float
    stdout: str
    stderr: str
    problems: list[str]


def make_case(number: int, seed: int, files: list[Path], only: tuple[str, ...]) -> Case:
    """Case ``number`` of the run with ``seed``: a pure function of both (and the corpus)."""
    rng = random.Random(f"{seed}:{number}")
    entries = [e for e in ENTRY_POINTS if e in only]
    entry = rng.choices(entries, weights=[WEIGHTS.get(e, 1) for e in entries])[0]
    if entry == "import":
        blob, what = make_onnx_case(rng)
        out = rng.choice(["out.json", "out.yaml"])
        return Case(
            number,
            entry,
            "onnx",
            what,
            {"model.onnx": blob},
            "model.onnx",
            ["import", "model.onnx", out],
            outputs=(out, "out.weights.npz"),
        )
    src = files[rng.randrange(len(files))]
    ext = src.suffix.lower()
    text = src.read_bytes()
    data = json.loads(text) if ext == ".json" else _yaml(text)
    what_parts = []
    if rng.random() < 0.25:
        blob, ext, what = byte_mutation(rng, data, ext)
        what_parts.append(what)
    else:
        n = rng.choice([1, 1, 1, 2, 3])
        for _ in range(n):
            data, what = mutate_tree(rng, data)
            what_parts.append(what)
        blob = _serialize(data, ext, rng)
    model = "model" + ext
    case = Case(
        number,
        entry,
        str(src.relative_to(ROOT.parent)) if ROOT.parent in src.parents else src.name,
        "; ".join(what_parts),
        {model: blob},
        model,
        [],
    )
    case.saved[model] = blob
    run_arguments(rng, case, data if isinstance(data, dict) else {})
    return case


def _yaml(text: bytes) -> Any:
    import yaml

    return yaml.safe_load(text)


def _serialize(data: Any, ext: str, rng: random.Random) -> bytes:
    if ext == ".json":
        return json.dumps(
            data, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5, allow_nan=True
        ).encode("utf-8", "surrogatepass")
    import yaml

    try:
        return yaml.safe_dump(data, allow_unicode=rng.random() < 0.5).encode(
            "utf-8", "surrogatepass"
        )
    except yaml.YAMLError:
        return json.dumps(data).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- running a case


def _snapshot(folder: Path) -> dict[str, tuple[int, float]]:
    out = {}
    for p in folder.rglob("*"):
        try:
            st = p.lstat()
        except OSError:
            continue
        out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def _child_main(case: Case) -> int:
    """What the forked child runs (cwd is the work folder): the command or the API case."""
    if case.child is not None:
        return case.child(case)
    if case.entry == "api":
        return _api_case(case)
    if case.entry == "compat":
        return _compat_case(case)
    from mdf_engine import cli

    try:
        rc = cli.main(case.args)
        if case.entry == "import" and rc == 0:  # and what was imported runs
            rc = cli.main(["run", case.args[2], "--steps", "2"])
        return rc
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


def _api_case(case: Case) -> int:
    """Interpreted against compiled through ``Simulation``: same values, or both refuse."""
    import numpy as np

    from mdf_engine import MDFError, Simulation

    results = {}
    for backend in ("interpreted", "compiled"):
        try:
            sim = Simulation(case.model, backend=backend)
            res = sim.run(steps=3, dt=0.1)
            results[backend] = res.outputs
        except MDFError as e:
            results[backend] = ("refused", str(e))
    a, b = results["interpreted"], results["compiled"]
    if isinstance(a, tuple) or isinstance(b, tuple):
        if isinstance(a, tuple) != isinstance(b, tuple):
            print(
                f"mdf: FUZZ-DISAGREE one backend refused: {a if isinstance(a, tuple) else b}",
                file=sys.stderr,
            )
            return 3
        print(f"mdf: error: {a[1]}", file=sys.stderr)
        return 2
    for node, ports in a.items():
        for port, value in ports.items():
            other = b.get(node, {}).get(port, "missing")
            try:
                same = np.array_equal(np.asarray(value), np.asarray(other), equal_nan=True)
            except TypeError:
                same = str(value) == str(other)
            if not same and not _close(value, other):
                print(
                    f"mdf: FUZZ-DISAGREE {node!a}.{port!a}: {value!r:.80} vs {other!r:.80}",
                    file=sys.stderr,
                )
                return 3
    return 0


def _close(a: Any, b: Any) -> bool:
    import numpy as np

    try:
        return bool(
            np.allclose(
                np.asarray(a, float), np.asarray(b, float), rtol=1e-9, atol=1e-12, equal_nan=True
            )
        )
    except (TypeError, ValueError):
        return False


def _compat_case(case: Case) -> int:
    from mdf_engine import MDFError, load
    from mdf_engine.compat import EvaluableGraph

    try:
        model = load(case.model)
        eg = EvaluableGraph(model.graphs[0])
        eg.evaluate()
    except MDFError as e:
        print(f"mdf: error: {e}", file=sys.stderr)
        return 2
    return 0


def run_case(
    case: Case, root: Path, *, timeout: float, mem_mb: int, subprocess_mode: bool, cache: Path
) -> Outcome:
    """Run ``case`` in a fresh sandbox under ``root``; check what it did."""
    box = Path(tempfile.mkdtemp(prefix=f"case{case.number}_", dir=root))
    work = box / "work"
    home = box / "home"
    logs = box / "logs"
    for d in (work, home, logs):
        d.mkdir()
    for name, blob in case.files.items():
        (work / name).write_bytes(blob)
    for name, blob in case.saved.items():
        if name in case.files:
            continue
        if blob is None:
            (work / name).mkdir(exist_ok=True)
        elif blob == b"FIFO":
            os.mkfifo(work / name)
        elif isinstance(blob, bytes) and blob.startswith(b"->"):
            os.symlink(blob[2:].decode(), work / name)
        else:
            (work / name).write_bytes(blob)
    before_root = set(os.listdir(root.parent))
    before = _snapshot(work)
    env = {
        **os.environ,
        "HOME": str(home),
        "MDF_ENGINE_CACHE": str(cache),
        "NUMBA_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
    }
    t0 = time.monotonic()
    rc, cpu, rss = _spawn(case, work, logs, env, timeout, mem_mb, subprocess_mode)
    seconds = time.monotonic() - t0
    out = (logs / "out").read_bytes().decode("utf-8", "replace")
    err = (logs / "err").read_bytes().decode("utf-8", "replace")
    problems = _check(case, rc, out, err, work, box, before, cache)
    new_root = set(os.listdir(root.parent)) - before_root
    if any(MARK in n for n in new_root):
        problems.append(f"a file appeared beside the fuzz folder: {sorted(new_root)}")
    if rc is None:
        problems.append(f"killed after {timeout:.0f} s (a hang)")
    elif rc < 0:
        problems.append(f"died of signal {-rc}")
    return Outcome(case, rc, seconds, cpu, rss, out, err, problems)


def _spawn(case, work, logs, env, timeout, mem_mb, subprocess_mode):
    limit = mem_mb * 1024 * 1024

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    if subprocess_mode and case.entry not in ("api", "compat"):
        with open(logs / "out", "wb") as fo, open(logs / "err", "wb") as fe:
            cmd = [sys.executable, "-m", "mdf_engine.cli", *case.args]
            env = {**env, "PYTHONPATH": str(ROOT)}
            p = subprocess.Popen(
                cmd,
                cwd=work,
                env=env,
                stdout=fo,
                stderr=fe,
                stdin=subprocess.DEVNULL,
                preexec_fn=limits,
            )
            return _wait(p.pid, timeout)
    # a forked child starts with this process's resident and mapped memory (a test worker's
    # can be GBs): its limit and its peak are counted above what it inherits
    vm, rss = _own_memory()
    limit += vm
    pid = os.fork()
    if pid == 0:  # the child
        code = 99
        try:
            limits()
            os.environ.clear()
            os.environ.update(env)
            os.chdir(work)
            fo = os.open(logs / "out", os.O_WRONLY | os.O_CREAT, 0o600)
            fe = os.open(logs / "err", os.O_WRONLY | os.O_CREAT, 0o600)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(fo, 1)
            os.dup2(fe, 2)
            # as a fresh process has them (a test runner may have replaced sys.stdout)
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
            code = _child_main(case)
        except BaseException:  # noqa: BLE001 - reported as a finding by the parent
            traceback.print_exc()
            code = 98
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) and 0 <= code < 256 else 97)
    rc, cpu, peak = _wait(pid, timeout)
    return rc, cpu, max(0.0, peak - rss)


def _own_memory() -> tuple[int, float]:
    """This process's mapped bytes and resident MB now (Linux's /proc/self/statm)."""
    try:
        size, resident = (int(x) for x in Path("/proc/self/statm").read_text().split()[:2])
    except (OSError, ValueError):
        return 0, 0.0
    page = os.sysconf("SC_PAGE_SIZE")
    return size * page, resident * page / (1024 * 1024)


def _wait(pid: int, timeout: float) -> tuple[int | None, float, float]:
    deadline = time.monotonic() + timeout
    while True:
        got, status, usage = os.wait4(pid, os.WNOHANG)
        if got:
            rc = os.waitstatus_to_exitcode(status)
            return rc, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return None, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        time.sleep(0.02)


def _check(case, rc, out, err, work, box, before, cache) -> list[str]:
    problems = []
    lines = [ln for ln in err.split("\n") if ln.strip()]
    if (
        case.entry.startswith("api") or case.entry == "compat"
    ):  # log lines there are the calling program's to show
        lines = [ln for ln in lines if ln.startswith("mdf: ") or "Traceback" in ln][-1:]
    failed = rc == 2 or (rc == 1 and case.entry == "validate")  # validate: 1 is "invalid"
    if rc not in (0, 2, None) and not failed and not (rc is not None and rc < 0):
        problems.append(f"exit status {rc}")
    if any("Traceback" in ln for ln in lines):
        problems.append("a traceback on stderr")
    for ln in lines:
        if "internal error" in ln or "please report" in ln:
            problems.append(f"an internal error: {ln[:300]}")
        elif "nested too deeply to process" in ln or "not enough memory" in ln:
            problems.append(f"a last-resort line: {ln[:300]}")
        elif "FUZZ-DISAGREE" in ln:
            problems.append(f"backends disagree: {ln[:300]}")
    if failed and len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines on a failure")
    if failed and lines and not lines[-1].startswith("mdf"):
        problems.append(f"stderr line does not start with 'mdf': {lines[-1][:200]}")
    for name, text in (("stdout", out), ("stderr", err)):
        bad = {
            c
            for c in text
            if (unicodedata.category(c) == "Cc" and c not in "\n\t") or c in _BAD_CHARS
        }
        if bad:
            problems.append(f"raw control characters on {name}: {sorted(map(repr, bad))}")
    after = _snapshot(work)
    allowed = set(case.files) | set(case.saved) | set(case.outputs)
    for name in sorted(set(after) - set(before)):
        top = name.split(os.sep)[0]
        if top not in allowed and not top.startswith(".mdf") and not _inside_saved_dir(name, case):
            problems.append(f"an unexpected file was written: {name!a}")
        if MARK in name:
            problems.append(f"a marker file was written: {name!a}")
    for p in box.iterdir():
        if p.name not in ("work", "home", "logs"):
            problems.append(f"a file appeared beside the work folder: {p.name!a}")
    for p in (box / "home").rglob("*"):
        if MARK in p.name:
            problems.append(f"a marker file appeared in HOME: {p.name!a}")
    for name, blob in case.saved.items():
        problems += _saved_intact(work, name, blob, rc, case)
    for src in cache.rglob("*.py"):
        text = src.read_bytes()
        if MARK.encode() in text:
            problems.append(f"model text in generated source {src.name}")
        if any(b > 127 for b in text):
            problems.append(f"non-ASCII generated source {src.name}")
    return problems


def _inside_saved_dir(name: str, case: Case) -> bool:
    top = name.split(os.sep)[0]
    return case.saved.get(top, b"") is None


def _saved_intact(work: Path, name: str, blob: bytes | None, rc, case: Case) -> list[str]:
    p = work / name
    if blob is None:
        return [] if p.is_dir() else [f"the user's folder {name!a} is gone"]
    if blob == b"FIFO":
        return [] if p.is_fifo() else [f"the user's FIFO {name!a} is gone"]
    if isinstance(blob, bytes) and blob.startswith(b"->"):
        target = work / blob[2:].decode()
        saved = case.saved.get(target.name)
        if isinstance(saved, bytes) and target.exists() and target.read_bytes() != saved:
            return [f"a symlink's target {target.name!a} was overwritten"]
        return []
    if name in case.outputs and rc == 0 and case.replaced_ok:
        return []  # the user asked for this file to be written
    if not p.exists():
        return [f"the user's file {name!a} was deleted"]
    if p.read_bytes() != blob:
        return [f"the user's file {name!a} was changed (exit {rc})"]
    return []


# ---------------------------------------------------------------- driver


def fuzz(
    seed: int,
    cases: int,
    *,
    only: tuple[str, ...] = ENTRY_POINTS,
    timeout: float = 60,
    mem_mb: int = 4096,
    max_rss: float = 2048,
    slow: float = 20,
    subprocess_mode: bool = False,
    keep: Path | None = None,
    start: int = 0,
    report: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run cases ``start .. start+cases-1`` of ``seed``; return the outcomes with problems."""
    # imported once, before forking, so that each case pays for its own work only
    import graph_scheduler  # noqa: F401
    import yaml  # noqa: F401

    import mdf_engine.cli  # noqa: F401
    import mdf_engine.interpreter  # noqa: F401
    import mdf_engine.plan  # noqa: F401
    import mdf_engine.simulation  # noqa: F401

    files = corpus()
    findings = []
    root = Path(tempfile.mkdtemp(prefix="mdf_fuzz_"))
    (root / "sandbox").mkdir()
    cache = root / "cache"
    cache.mkdir()
    try:
        for n in range(start, start + cases):
            case = make_case(n, seed, files, only)
            o = run_case(
                case,
                root / "sandbox",
                timeout=timeout,
                mem_mb=mem_mb,
                subprocess_mode=subprocess_mode,
                cache=cache,
            )
            if o.rss_mb > max_rss:
                o.problems.append(f"used {o.rss_mb:.0f} MB")
            if o.rc == 2 and o.cpu > slow and case.entry not in ("run-compiled", "api"):
                o.problems.append(f"refused only after {o.cpu:.1f} s of CPU")
            if report:
                report(o)
            if o.problems:
                findings.append(o)
                if keep:
                    _keep(keep, seed, o)
            for box in (root / "sandbox").iterdir():
                shutil.rmtree(box, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return findings


def _keep(folder: Path, seed: int, o: Outcome) -> None:
    d = folder / f"s{seed}_c{o.case.number}"
    d.mkdir(parents=True, exist_ok=True)
    for name, blob in o.case.files.items():
        (d / name).write_bytes(blob)
    (d / "case.txt").write_text(
        f"{o.case.entry} {o.case.source}: {o.case.what}\nargs: {o.case.args!a}\n"
        f"rc={o.rc}\nproblems: {o.problems!a}\nstderr:\n{o.stderr}\n"
    )


def describe(o: Outcome) -> str:
    c = o.case
    return (
        f"case {c.number} [{c.entry}] {c.source} | {c.what[:160]!a} | args {c.args!a:.160} "
        f"| rc={o.rc} {o.seconds:.1f}s cpu={o.cpu:.1f}s rss={o.rss_mb:.0f}MB | "
        f"{'; '.join(o.problems)[:400]} | {o.stderr.strip()[-300:]!a}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--only", default=",".join(ENTRY_POINTS))
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--mem", type=int, default=4096, help="address-space limit (MB)")
    p.add_argument("--max-rss", type=float, default=2048)
    p.add_argument("--slow", type=float, default=20)
    p.add_argument("--subprocess", action="store_true")
    p.add_argument("--keep", type=Path, default=None)
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)

    def report(o: Outcome) -> None:
        if o.problems:
            print("FINDING", describe(o), flush=True)
        elif a.verbose:
            print("ok", describe(o), flush=True)

    t0 = time.monotonic()
    found = fuzz(
        a.seed,
        a.cases,
        only=tuple(a.only.split(",")),
        timeout=a.timeout,
        mem_mb=a.mem,
        max_rss=a.max_rss,
        slow=a.slow,
        subprocess_mode=a.subprocess,
        keep=a.keep,
        start=a.start,
        report=report,
    )
    print(f"{a.cases} cases, {len(found)} findings, {time.monotonic() - t0:.0f} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
