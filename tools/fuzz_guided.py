"""Coverage-guided fuzzer of the surfaces audits 1-4 reached only by hand (audit 5).

An *input* is a model (an MDF tree from the corpus of ``tools/fuzz_inputs.py``, a generated
one-node file calling a ``hexagon::`` op, or an ONNX protobuf of ``tools/fuzz_onnx.py``) and a
*surface* with its arguments:

* ``run``: ``mdf run`` of 1 to 60 steps on any backend (interpreted, compiled, hexagon, actr,
  auto), with ``--set`` overrides (numbers, NaN, -0, subnormals, huge ints, lists, text),
  ``--record``, ``--check-finite``, ``--scheduling-mode``, ``--seed``, ``-o``/``--json``;
* ``sweep``: ``mdf sweep`` (``--set`` ranges and lists, ``--design``, ``--samples``,
  ``--chunk``, ``--backend``, ``-o .nc/.csv/.npz``); ``sweep-api``: ``mdf_engine.sweep()`` with
  hostile ``params``, ``record``, ``chunk``, ``workers``, ``keep``, ``design``;
* ``draw``: ``mdf draw`` to ``.svg``/``.dot``/``.png``;
* ``oracle``: a run of 3 to 25 steps (with the file's conditions) interpreted and compiled
  through ``Simulation`` and in modeci-mdf's reference engine: same numbers where the
  reference runs the unmutated file alike;
* ``onnx``: ``mdf import`` of a mutated protobuf, ``mdf run`` of the result, and ``run_onnx``
  against onnxruntime where onnxruntime runs the mutant;
* ``validate``/``info``.

Each execution runs in ``tools/fuzz_models.run_case``'s sandbox (forked child, own ``HOME``
and compile cache, a wall-time and an address-space bound; tracebacks, stray or changed files,
raw control characters, model text in generated source are findings) under ``coverage``'s
tracer restricted to ``mdf_engine`` (branch arcs). An input whose run reaches an arc no earlier
input reached is kept in the queue and mutated further (tree mutations of
``tools/fuzz_structure.py``/``fuzz_mutations.py``, YAML-specific rewrites, special numbers,
hostile ids, protobuf mutations, argument mutations); the others are dropped.

Usage: ``nice -n 19 python tools/fuzz_guided.py --seed 1 --minutes 30 [--keep DIR]``.
``coverage`` is needed (``pip install mdf-engine[fuzz]``); the engine never imports it.
"""

from __future__ import annotations

import argparse
import collections
import copy
import dataclasses
import functools
import json
import math
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PKG = str(ROOT / "mdf_engine")
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

import fuzz_inputs  # noqa: E402  (tools/ is not a package)
import fuzz_models  # noqa: E402
import fuzz_mutations  # noqa: E402
import fuzz_structure as fs  # noqa: E402

#: sweep()'s arguments, named by the errors about them (or by their first words)
SWEEP_ARGS = (
    "sweep",
    "a list design",
    "chunk",
    "workers",
    "steps",
    "keep",
    "design",
    "samples",
    "a sampled design",
    "unknown design",
    "unknown keep",
    "record",
    "dt",
    "duration",
    "seed",
    "output",
)
SURFACES = ("run", "sweep", "sweep-api", "draw", "oracle", "validate", "info")
TIMEOUT = {"run": 90.0, "sweep": 150.0, "sweep-api": 150.0, "oracle": 240.0, "onnx": 90.0}
SPECIAL = [0, -0.0, 5e-324, 2.2e-308, float("nan"), float("inf"), -float("inf"), 2**63,
           2**64 + 1, 10**30, -(2**63), 1e308, 1.5, True, None, "1", "x", [], [1, 2], [[1], [2, 3]],
           {"a": 1}, 10**400]  # fmt: skip
SET_TEXTS = ["0", "-0", "-0.0", "5e-324", "nan", "NaN", "inf", "-inf", "1e999", "2e308",
             "9223372036854775808", "18446744073709551617", "1" + "0" * 400, "[1,2,3]", "[[1],[2,3]]",
             "[]", "{}", '"x"', "null", "true", "[NaN]", "0x10", "1_000", "[1e-320, -0.0]",
             "[" * 50 + "]" * 50, "'", "\u202e1", "1\n2"]  # fmt: skip
RANGE_TEXTS = ["0:1:3", "0:1:1", "0:1:0", "1:0:2", "0:1:-1", "-0:0:2", "0:1:1e9", "nan:1:2",
               "0:inf:2", "1,2,5", "1,,2", ",", "x", "0:1", "5e-324:1e308:3", "1e308:-1e308:3",
               "0:1:2.5", "1e400", "0:1:3:4", ""]  # fmt: skip


@dataclasses.dataclass
class Input:
    """One fuzz input: what is run (model and surface), and what was done to get it."""

    kind: str  # "mdf" | "onnx"
    source: str
    surface: str
    data: Any  # MDF tree, or a ModelProto
    ext: str
    args: dict
    what: list[str]
    blob: bytes | None = None  # set when the file was broken at the byte level
    picks: int = 0
    gain: int = 0


# ---------------------------------------------------------------- seeds


def mdf_seeds() -> list[tuple[str, Any, str]]:
    """(source, tree, extension) of every corpus file up to 200 KB (ACT-R and PsyNeuLink
    exports included)."""
    out = []
    for p in fuzz_inputs.corpus(200_000):
        text = p.read_bytes()
        try:
            data = json.loads(text) if p.suffix == ".json" else fuzz_models._yaml(text)
        except ValueError:
            continue
        out.append((str(p.relative_to(ROOT)), data, p.suffix.lower()))
    return out


def hexagon_seed(rng: random.Random) -> tuple[str, Any]:
    """A one-node file whose parameter calls a random ``hexagon::`` op, inputs as arrays."""
    import numpy as np

    from mdf_engine.registry import REGISTRY

    names = REGISTRY.names("hexagon")
    name = rng.choice(names)
    schema = REGISTRY.lookup(name)
    gen = np.random.default_rng(rng.randrange(2**32))
    args = {}
    for inp in schema.inputs:
        shape = rng.choice([[], [4], [1, 2, 2, 3], [1, 4, 4, 2]])
        kind = rng.choice(["u8", "f", "i32", "scalar"])
        if kind == "scalar" or not shape:
            args[inp] = rng.choice([0.0, 1.0, -1.0, 0.5, 255.0, 3])
        elif kind == "u8":
            args[inp] = gen.integers(0, 256, shape).tolist()
        elif kind == "i32":
            args[inp] = gen.integers(-100, 100, shape).tolist()
        else:
            args[inp] = gen.standard_normal(shape).round(3).tolist()
    model = {
        "hexagon_seed": {
            "format": "ModECI MDF v0.4",
            "graphs": {
                "g": {
                    "nodes": {
                        "n": {
                            "parameters": {"p": {"function": name, "args": args}},
                            "output_ports": {"o": {"value": "p"}},
                        }
                    }
                }
            },
        }
    }
    return f"hexagon:{name}", model


def ids_of(data: Any) -> tuple[list[str], list[str], list[str]]:
    """(nodes, NODE.PARAM, NODE.PORT) texts of the first graph."""
    gp = fs.graphs(data)
    if not gp:
        return [], [], []
    g = fs.get(data, gp[0])
    nodes, params, ports = [], [], []
    for k, n in fs.entries(g.get("nodes")):
        nid = fs.object_id(k, n)
        if not isinstance(nid, str):
            continue
        nodes.append(nid)
        params += [f"{nid}.{p}" for p in fs.port_ids(n, "parameters") if isinstance(p, str)]
        ports += [f"{nid}.{p}" for p in fs.port_ids(n, "output_ports") if isinstance(p, str)]
    return nodes, params, ports


def default_args(rng: random.Random, surface: str, data: Any) -> dict:
    """The arguments a fresh input of ``surface`` starts from."""
    _, params, ports = ids_of(data)
    a: dict[str, Any] = {"steps": rng.choice([1, 3, 10, 25, 60])}
    if surface == "oracle":
        a["steps"] = rng.choice([3, 10, 25])
    if surface == "run":
        a["backend"] = rng.choice(["interpreted"] * 4 + ["compiled", "auto", "hexagon", "actr"])
        a["sets"] = [
            f"{p}={rng.choice(SET_TEXTS[:4])}" for p in rng.sample(params, min(1, len(params)))
        ]
        a["extra"] = rng.choice([[], ["--check-finite"], ["--json"], ["-o", "r.csv"],
                                 ["--record", *ports[:2], "-o", "r.npz"], ["--seed", "3"],
                                 ["--scheduling-mode", "exact_time"], ["--fired", "--plot", "p.png"]])  # fmt: skip
    if surface in ("sweep", "sweep-api"):
        a["steps"] = rng.choice([1, 2, 5])
        a["params"] = {
            p: rng.choice(["0:1:3", "1,2", "0.5:2:2"])
            for p in rng.sample(params, min(2, len(params)))
        }
        a["record"] = ports[:1]
        a["backend"] = rng.choice(["interpreted", "interpreted", "compiled"])
        a["chunk"] = rng.choice([None, 1, 2])
        a["design"] = rng.choice(["grid", "list"])
        a["out"] = rng.choice([None, "s.nc", "s.csv", "s.npz"])
        a["workers"] = None
        a["keep"] = "series"
    if surface == "draw":
        a["out"] = rng.choice(["d.svg", "d.dot", "d.png"])
    return a


# ---------------------------------------------------------------- mutations


def yaml_special(rng: random.Random, data: Any) -> bytes:
    """YAML text of ``data`` with one YAML-specific twist: an alias bomb, a tag, a duplicate or
    a non-string key, a merge key, a 1.1 number, an anchor shared by two nodes."""
    import yaml

    text = yaml.safe_dump(data, allow_unicode=True)
    twist = rng.choice(["bomb", "tag", "dupkey", "intkey", "merge", "yaml11", "anchor", "nulkey"])
    if twist == "bomb":
        bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n"
            for i in range(1, rng.choice([3, 6, 9]))
        )
        return (bomb + text).encode()
    lines = text.split("\n")
    i = rng.randrange(max(1, len(lines) - 1))
    ln = lines[i]
    indent = ln[: len(ln) - len(ln.lstrip())]
    add = {
        "tag": rng.choice(
            [
                "!!python/object/apply:os.system ['touch fuzzmark']",
                "!!binary aGk=",
                "!!set {a: null}",
                "!!timestamp 2001-12-14",
                "!custom x",
                "!!float 1",
            ]
        ),
        "dupkey": None,
        "intkey": None,
        "merge": None,
        "yaml11": rng.choice(["017", "12:30", "0b101", "+.inf", ".NaN", "1_0", "0o17", "Yes", "~"]),
        "anchor": None,
        "nulkey": None,
    }.get(twist)
    if twist in ("tag", "yaml11") and ":" in ln and not ln.rstrip().endswith(":"):
        key = ln.split(":", 1)[0]
        lines[i] = f"{key}: {add}"
    elif twist == "dupkey":
        lines.insert(i, ln)
    elif twist in ("intkey", "nulkey"):
        lines.insert(
            i + 1,
            f"{indent}{rng.choice(['1', '1.5', 'null', 'true', '[1, 2]', '{a: 1}', '? [x]'])}: 1",
        )
    elif twist == "merge":
        lines.insert(i + 1, f"{indent}<<: {rng.choice(['*nope', '[1]', '{a: 1}', 'x'])}")
    elif twist == "anchor" and ln.rstrip().endswith(":") and i + 1 < len(lines):
        lines[i] = ln.rstrip() + " &shared"
        lines.append(f"{ln.strip()[:-1]}_twin: *shared")
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def special_number(rng: random.Random, data: Any) -> str:
    """A number, shape entry or parameter value replaced by a special one (-0, subnormal, NaN,
    huge int, 10^400, a text, a list)."""
    spots = [
        (p, v)
        for p, v in fs.walk(data)
        if p and isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    spots += [
        (p, v)
        for p, v in fs.walk(data)
        if p and p[-1] in ("shape", "value", "default_initial_value")
    ]
    if not spots:
        return "special: none"
    path, old = rng.choice(spots)
    new = rng.choice(SPECIAL)
    if isinstance(old, list) and old and rng.random() < 0.6:
        new = [*old[:-1], new]
    fs.put(data, path, new)
    return f"special {fs._describe(path)} = {str(new)[:40]!a}"


def mutate_args(rng: random.Random, inp: Input) -> str:
    """One change to the surface's arguments."""
    a = inp.args
    _, params, ports = ids_of(inp.data) if inp.kind == "mdf" else ([], [], [])
    choice = rng.choice(
        ["steps", "set", "set", "record", "chunk", "design", "backend", "keep", "workers"]
    )
    if choice == "steps":
        a["steps"] = rng.choice([0, -1, 1, 2, 7, 40, 60, 2**63, 10**9])
        if a["steps"] >= 10**9 and inp.surface != "run":
            a["steps"] = 60
        return f"steps {a['steps']}"
    if choice == "set":
        target = rng.choice(params + ["nope.x", "a.b.c", "=", ".x", "x."] if params else ["x.y"])
        if inp.surface in ("sweep", "sweep-api"):
            a.setdefault("params", {})[target] = rng.choice(
                RANGE_TEXTS + [[1, 2], [float("nan")], [[1], [2, 3]], [], "x", None, [10**30]]
            )
            return f"sweep param {target[:40]!a}"
        a.setdefault("sets", []).append(f"{target}={rng.choice(SET_TEXTS)}")
        return f"--set {a['sets'][-1][:50]!a}"
    if choice == "record":
        a["record"] = rng.sample(ports + ["nope.o", "x", "", "a.b.c"], min(2, len(ports) + 1))
        if inp.surface == "run":
            a["extra"] = ["--record", *a["record"], "-o", rng.choice(["r.csv", "r.npz", "r.json"])]
        return f"record {a['record']!a:.60}"
    if choice == "chunk":
        a["chunk"] = rng.choice([0, -1, 1, 3, 10**12, 2.5])
        return f"chunk {a['chunk']}"
    if choice == "workers":
        a["workers"] = rng.choice([0, -1, 1, 10**6])
        return f"workers {a['workers']}"
    if choice == "design":
        a["design"] = rng.choice(["grid", "list", "samples", "x"])
        a["samples"] = rng.choice([None, 0, 3, -1])
        return f"design {a['design']} samples {a['samples']}"
    if choice == "keep":
        a["keep"] = rng.choice(["final", "series", "x"])
        a["out"] = rng.choice([None, "s.nc", "s.csv", "s.npz", "s.txt"])
        return f"keep {a['keep']} out {a['out']}"
    a["backend"] = rng.choice(
        ["interpreted", "compiled"]
        if inp.surface != "run"
        else ["interpreted", "compiled", "auto", "hexagon", "actr"]
    )
    return f"backend {a['backend']}"


def mutate(rng: random.Random, inp: Input, kinds: list[str], functions: list[str]) -> Input:
    """A mutated copy of ``inp`` (one to three changes)."""
    new = Input(
        inp.kind, inp.source, inp.surface, None, inp.ext, copy.deepcopy(inp.args), list(inp.what)
    )
    if inp.kind == "onnx":
        import fuzz_onnx

        proto = inp.data
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                proto, what = fuzz_onnx.mutate(rng, proto)
            except (
                ValueError,
                TypeError,
                IndexError,
                KeyError,
            ) as e:  # onnx.helper refused the change
                what = f"(mutation refused by onnx.helper: {type(e).__name__})"
            new.what.append(what)
        new.data = proto
        if rng.random() < 0.08:
            new.blob, what = fs.byte_mutant(rng, proto.SerializeToString())
            new.what.append(what)
        return new
    data = inp.data
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        try:
            if r < 0.25 and inp.surface in ("run", "sweep", "sweep-api"):
                new.what.append(mutate_args(rng, new))
                continue
            if r < 0.55:
                data, what = fs.mutate(rng, data, kinds, functions)
            elif r < 0.7:
                data = copy.deepcopy(data)
                what = special_number(rng, data)
            elif r < 0.8:
                data, what = fs.m_ident(rng, copy.deepcopy(data))
            else:
                data, what = fuzz_mutations.mutate_tree(rng, data)
        except RecursionError:
            break
        new.what.append(what)
    new.data = data
    if rng.random() < 0.1:
        new.blob, new.ext = yaml_special(rng, data), ".yaml"
        new.what.append("yaml twist")
    elif rng.random() < 0.04:
        new.blob, what = fs.byte_mutant(rng, json.dumps(data).encode("utf-8", "surrogatepass"))
        new.ext = ".json"
        new.what.append(what)
    return new


# ---------------------------------------------------------------- children


def _covered(inner: Any, out: Path) -> Any:
    """``inner`` run under coverage's tracer (mdf_engine only, branch arcs) in the forked child;
    the arcs go to ``out`` as lines ``FILE:FROM:TO``."""

    def child(case: fuzz_models.Case) -> int:
        import coverage

        cov = coverage.Coverage(data_file=None, branch=True, source=[PKG], config_file=False)
        cov.start()
        try:
            return inner(case)
        finally:
            cov.stop()
            data = cov.get_data()
            with open(out, "w") as f:
                for fn in data.measured_files():
                    rel = os.path.relpath(fn, PKG)
                    f.writelines(f"{rel}:{a}:{b}\n" for a, b in data.arcs(fn) or ())

    return child


def _cli(case: fuzz_models.Case, then: list[list[str]] = ()) -> int:
    from mdf_engine import cli

    try:
        rc = cli.main(case.args)
        for more in then:
            if rc != 0:
                break
            rc = cli.main(more)
        return rc
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


def _sweep_api(case: fuzz_models.Case, a: dict) -> int:
    from mdf_engine import MDFError
    from mdf_engine.sweep import sweep

    try:
        ds = sweep(
            case.model, a.get("params", {}), steps=a["steps"], record=a.get("record", ()),
            backend=a["backend"], chunk=a.get("chunk"), design=a.get("design", "grid"),
            samples=a.get("samples"), workers=a.get("workers"), keep=a.get("keep", "series"),
            output=a.get("out"),
        )  # fmt: skip
        print(f"sweep ok: {len(getattr(ds, 'data_vars', ()))} variables")
    except MDFError as e:
        print(f"mdf: error: {e}", file=sys.stderr)
        return 2
    return 0


def _onnx_child(case: fuzz_models.Case, feeds: dict | None) -> int:
    """``mdf import``, a run of the result, and ``run_onnx`` against onnxruntime."""
    rc = _cli(case, [["run", "m.json", "--steps", "1"]])
    if rc != 0 or feeds is None:
        return rc
    import contextlib
    import io

    import numpy as np

    from mdf_engine.onnx_io import run_onnx

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.log_severity_level = 4  # its own warnings hold terminal escapes
            sess = ort.InferenceSession(case.model, opts, providers=["CPUExecutionProvider"])
            ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    except Exception:  # noqa: BLE001 - onnxruntime refusing the mutant is no finding
        print("REFERENCE-SKIP", flush=True)
        return 0
    with np.errstate(all="ignore"):
        ours = run_onnx(case.model, feeds)
    import fuzz_onnx
    import onnx

    diff = fuzz_onnx.compare(ours, ref, onnx.load(case.model))
    if diff:
        print(f"mdf: FUZZ-DISAGREE with onnxruntime: {diff}", file=sys.stderr)
        return 3
    print("REFERENCE-AGREE", flush=True)
    return 0


def _oracle(case: fuzz_models.Case, steps: int) -> int:
    fuzz_inputs.STEPS = steps  # this forked child's own copy
    what, case.what = case.what, "baseline"  # a difference from the reference is reported,
    try:  # not judged: the parent judges it against the unmutated file's run (Guided.execute)
        return fuzz_inputs._child_oracle(case)
    finally:
        case.what = what


def make_case(n: int, inp: Input, cov_out: Path) -> fuzz_models.Case:
    """The sandbox case of an input (the child wrapped in coverage)."""
    a = inp.args
    if inp.kind == "onnx":
        import fuzz_onnx

        blob = inp.blob if inp.blob is not None else inp.data.SerializeToString()
        case = fuzz_models.Case(
            n, "onnx", inp.source, "; ".join(inp.what), {"m.onnx": blob}, "m.onnx", []
        )
        case.args = ["import", "m.onnx", "m.json"]
        case.outputs = ("m.json", "m.weights.npz")
        fd = None if inp.blob is not None else fuzz_onnx.feeds(inp.data, random.Random(n))
        inner = functools.partial(_onnx_child, feeds=fd)
    else:
        model = "model" + inp.ext
        if inp.blob is not None:
            blob = inp.blob
        else:
            blob = fuzz_models._serialize(inp.data, inp.ext, random.Random(n))
        case = fuzz_models.Case(
            n, inp.surface, inp.source, "; ".join(inp.what), {model: blob}, model, []
        )
        steps = ["--steps", str(a.get("steps", 1))]
        inner = _cli
        if inp.surface in ("validate", "info"):
            case.args = [inp.surface, model]
        elif inp.surface == "run":
            case.args = ["run", model, "--backend", a["backend"], *steps, "--dt", "0.1"]
            for s in a.get("sets", []):
                case.args += ["--set", s]
            case.args += a.get("extra", [])
            case.outputs = ("r.csv", "r.npz", "r.json", "p.png")
        elif inp.surface == "draw":
            case.args = ["draw", model, a["out"]]
            case.outputs = (a["out"],)
        elif inp.surface == "sweep":
            case.args = [
                "sweep",
                model,
                *steps,
                "--backend",
                a["backend"],
                "--design",
                a.get("design", "grid"),
            ]
            if a.get("design") in ("samples", "x"):
                case.args[-2:] = ["--samples", str(a.get("samples") or 3)]
            for p, v in a.get("params", {}).items():
                case.args += [
                    f"--set={p}={v if isinstance(v, str) else ','.join(map(str, v or []))}"
                ]
            case.args += ["--record", *(a.get("record") or ["x.y"])]
            if a.get("chunk") is not None:
                case.args += ["--chunk", str(int(a["chunk"]))]
            if a.get("out"):
                case.args += ["-o", a["out"]]
        elif inp.surface == "sweep-api":
            inner = functools.partial(_sweep_api, a=a)
            case.entry = "api-sweep"  # log lines are the calling program's: the last one counts
        elif inp.surface == "oracle":
            inner = functools.partial(_oracle, steps=a["steps"])
            case.entry = "api-oracle"
        if inp.surface in ("sweep", "sweep-api"):
            case.outputs = ("s.nc", "s.csv", "s.npz", "s.txt")
        case.saved[model] = blob
    case.child = _covered(inner, cov_out)
    return case


# ---------------------------------------------------------------- the loop


class Guided(fuzz_inputs.Session):
    """A coverage-guided session: the queue of inputs that found new arcs, the arcs seen, a
    tally per surface."""

    def __init__(self, seed: int, root: Path, *, mem_mb: int, keep: Path | None, verbose: bool):
        import fuzz_onnx

        super().__init__(seed, root, mem_mb=mem_mb, keep=keep, verbose=verbose)
        self.rng = random.Random(f"guided:{seed}")
        self.kinds, self.functions = fuzz_inputs.vocabulary()
        self.mdf = mdf_seeds()
        self.onnx = fuzz_onnx.seeds()
        self.seen: set[str] = set()
        self.queue: list[Input] = []
        self.tally: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.baseline: dict[tuple[str, int], bool] = {}
        self.n = 0

    def fresh(self) -> Input:
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            name = rng.choice(sorted(self.onnx))
            return Input("onnx", f"onnx:{name}", "onnx", self.onnx[name], ".onnx", {}, [])
        if r < 0.25:
            src, data = hexagon_seed(rng)
            surface = rng.choice(["run", "run", "validate", "oracle"])
            inp = Input("mdf", src, surface, data, ".json", default_args(rng, surface, data), [])
            if surface == "run":
                inp.args["backend"] = rng.choice(["hexagon", "interpreted", "compiled"])
            return inp
        src, data, ext = rng.choice(self.mdf)
        surface = rng.choice(["run", "run", "run", "sweep", "sweep-api", "draw", "oracle", "info"])
        return Input("mdf", src, surface, data, ext, default_args(rng, surface, data), [])

    def pick(self) -> Input:
        if not self.queue or self.rng.random() < 0.2:
            base = self.fresh()
        else:
            w = [(1 + math.log1p(q.gain)) / (1 + q.picks) for q in self.queue]
            base = self.rng.choices(self.queue, weights=w)[0]
            base.picks += 1
        return mutate(self.rng, base, self.kinds, self.functions)

    def execute(self, inp: Input) -> tuple[str, int]:
        self.n += 1
        n = self.n
        cov_out = self.root / f"cov{n}"
        case = make_case(n, inp, cov_out)
        timeout = TIMEOUT.get(inp.surface, 60.0)
        if inp.surface == "run" and inp.args.get("backend") in ("compiled", "auto"):
            timeout = 240.0
        o = self.sandboxed(case, timeout)
        stage = "validate" if inp.surface == "validate" else inp.surface
        verdict = fuzz_inputs.classify(o, stage)
        last = (o.stderr.strip().split("\n") or [""])[-1]
        if o.rc == 2 and re.match(r"mdf \w+: error: argument ", last):
            o.problems, verdict = [], "error"  # argparse refused an argument the fuzzer made
        if inp.surface == "sweep-api" and all("does not name the file" in p for p in o.problems):
            # sweep()'s own arguments are no file's fields: their errors name the argument
            last = o.stderr.strip().split("\n")[-1]
            if re.match(r"mdf: error: (" + "|".join(SWEEP_ARGS) + r")\b", last):
                o.problems, verdict = [], "error"
        if inp.surface == "oracle" and "REFERENCE-DISAGREE" in o.stdout and verdict != "FINDING":
            key = (inp.source, inp.args["steps"])
            if key not in self.baseline:
                self.baseline[key] = self._baseline_agrees(inp)
            if self.baseline[key]:
                verdict = "FINDING"
                o.problems.append("numbers differ from the reference engine's")
        arcs = set()
        if cov_out.exists():
            arcs = set(cov_out.read_text().split())
            cov_out.unlink()
        gain = len(arcs - self.seen)
        self.seen |= arcs
        self.tally[inp.surface][verdict] += 1
        self.tally[inp.surface]["kept" if gain else "dropped"] += 1
        if "REFERENCE-AGREE" in o.stdout:
            self.tally[inp.surface]["reference-agree"] += 1
        detail = f"+{gain} {inp.source}: {'; '.join(inp.what)[:100]!a} rc={o.rc} {o.seconds:.1f}s"
        self.report(verdict, inp.surface, o, detail)
        return verdict, gain

    def _baseline_agrees(self, inp: Input) -> bool:
        """Whether the unmutated source runs alike here and in the reference (same steps)."""
        src = next((s for s in self.mdf if s[0] == inp.source), None)
        if src is None:
            return False
        base = Input(
            "mdf", src[0], "oracle", src[1], src[2], {"steps": inp.args["steps"]}, ["baseline"]
        )
        case = make_case(0, base, self.root / "cov0")
        case.what = "baseline"
        o = self.sandboxed(case, 400.0)
        return "REFERENCE-AGREE" in o.stdout

    def step(self) -> None:
        inp = self.pick()
        verdict, gain = self.execute(inp)
        if gain and verdict != "FINDING":
            inp.gain = gain
            self.queue.append(inp)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--inputs", type=int, default=10**9)
    p.add_argument("--mem", type=int, default=3072, help="address-space limit (MB)")
    p.add_argument("--keep", type=Path, default=None)
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    os.nice(19 - os.nice(0))
    fuzz_inputs.prepare()
    import coverage  # noqa: F401  (fail here, not in every child)

    root = Path(tempfile.mkdtemp(prefix="mdf_fuzz_guided_"))
    gz = Guided(a.seed, root, mem_mb=a.mem, keep=a.keep, verbose=a.verbose)
    t0 = time.monotonic()
    while gz.n < a.inputs and time.monotonic() - t0 < a.minutes * 60:
        gz.step()
    fuzz_models.shutil.rmtree(root, ignore_errors=True)
    print(f"seed {a.seed}: {gz.n} executions, {time.monotonic() - t0:.0f} s, {len(gz.seen)} arcs, "
          f"queue {len(gz.queue)}, findings {len(gz.findings)}")  # fmt: skip
    for s, c in sorted(gz.tally.items()):
        print(f"  {s:10} " + "  ".join(f"{k} {v}" for k, v in sorted(c.items())))
    return 1 if gz.findings else 0


if __name__ == "__main__":
    sys.exit(main())
