"""The compiled backend against the interpreted one on every model of the corpus (issue 22,
goal 2: everything numeric compiles whole).

Walks every model file of tests/data/wild/ (every writer, PsyNeuLink's exports included),
examples/ and tests/data/pnl/, runs it on the interpreted backend (the oracle here: the corpus
tests compare that one with each writer's own runs) and on the compiled backend, driven as the
corpus tests drive them (the oracle's inputs, ``dt`` and scheduling mode; at most
:data:`STEPS` steps or trials, so the compiled code and its cache are the ones those tests use),
and checks every output port after every call: equal within rtol 1e-9, and of the same
dtype (float32 stays float32, int64 int64, bool bool).

A file the compiled backend does not compile must be in :data:`NOT_COMPILED` with the text of
the log line that says why: a new fallback, or a changed reason, fails the test, and so does a
file in the table that now compiles (shrink the table). The table of writer, files, compiled
files and reasons is printed at the end (docs/performance.md, goal 2, holds a copy).
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EXAMPLES
from reference_engine import model_files

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.errors import MDFError

DATA = Path(__file__).resolve().parent / "data"
WILD = DATA / "wild"
#: steps (or trials) run per file: enough for state and conditions to change
STEPS = 12

#: writer / file -> the text of the log line saying why it does not compile
NOT_COMPILED: dict[str, str] = {
    # (the wide PsyNeuLink exports, 2026-11-25: known gaps, listed so that a change shows)
    "psyneulink/v0.21.0.0/wide_cond_any_all_not.json": "node 'aanC' did not run in 20 warm-up",
    "psyneulink/v0.21.0.0/wide_int_ddi.json": "a value whose kind is the argument max()/min()",
}

#: writer / file -> the functions its compiled loop still calls through Python (object mode).
#: ONNX ops: none now (Softmax's ``axis`` and ReduceMean's ``axes`` as values, and RNN's
#: activations, have nopython kernels: tests/test_jit_ops_b.py). PsyNeuLink's SoftMax transfer
#: function (``standard_functions/psyneulink/transfer.softmax``: gain, output modes) has no
#: Numba kernel yet. Any other file's compiled code that calls a function through Python fails
#: the test until it is listed here.
PYTHON_CALLS: dict[str, list[str]] = {
    f"psyneulink/v0.21.0.0/wide_tm_softmax{s}.json": ["softmax"] for s in ("", "_indicator", "_max")
}
# PsyNeuLink's LinearCombination and Reduce with weights, exponents and operation read from
# the export's metadata (a string ``operation``): no Numba kernel yet
PYTHON_CALLS |= {
    f"psyneulink/v0.21.0.0/wide_{name}.json": ["linearcombination"]
    for name in (
        "cond_all_have_run",
        "pm_lincomb_exponents",
        "pm_lincomb_product",
        "pm_lincomb_weights",
        "ports_input_weights",
    )
}
PYTHON_CALLS |= {
    f"psyneulink/v0.21.0.0/wide_pm_{n}.json": ["reduce"] for n in ("reduce", "reduce_product")
}

#: functions the compiled loop draws itself when their attributes are constants
DRAWN = {f"onnx::{op}" for op in ("RandomNormal", "RandomNormalLike", "RandomUniform")}
DRAWN |= {"onnx::RandomUniformLike"}

#: (writer, file) -> "compiled" or the fallback reason
OUTCOMES: dict[tuple[str, str], str] = {}


def _wild_cases() -> list[Any]:
    """(writer, model, driver, oracle) of every wild file whose oracle runs it (the refused
    files are refused alike by both backends: tests/test_wild_corpus.py)."""
    out = []
    for op in sorted(WILD.glob("*/*.oracle.json")):
        oracle = json.loads(op.read_text())
        writer = op.parent.name
        if writer == "psyneulink_old":
            model = op.with_name(op.name[: -len(".oracle.json")])
            out.append((writer, model, "trials_old", oracle))
        elif oracle.get("protocol") != "refuse":
            kind = "actr" if oracle["protocol"] == "actr" else "wild"
            out.append((writer, op.parent / oracle["model"], kind, oracle))
    for p in sorted((WILD / "psyneulink").glob("v*/*.json")):
        if not p.name.endswith(".oracle.json"):
            oracle = json.loads(p.with_name(p.stem + ".oracle.json").read_text())
            out.append((f"psyneulink/{p.parent.name}", p, "trials", oracle))
    return out


def _cases() -> list[Any]:
    cases = _wild_cases()
    for p in model_files(EXAMPLES):
        if p.name.startswith("actr_"):  # mdf_engine.actr.build_model's layout
            cases.append(("examples", p, "actr", {"run": {"steps": STEPS}}))
        else:
            cases.append(("examples", p, "example", None))
    for p in sorted(DATA.glob("pnl/*.json")):
        if not p.name.endswith(".expected.json"):
            exp = json.loads(p.with_name(p.stem + ".expected.json").read_text())
            cases.append(("pnl", p, "trials", exp))
    return [pytest.param(*c, id=f"{c[0]}/{c[1].name}") for c in cases]


def _array(v: Any) -> Any:
    return [np.asarray(x) for x in v] if isinstance(v, (list, tuple)) else np.asarray(v)


def _drive(model: Path, kind: str, oracle: dict | None, backend: str) -> tuple[Any, list]:
    """Run ``model`` as its corpus test does; the simulation and every output port after each
    call (the ``run`` of a step-driven file is one call)."""
    seen = []

    def snap(sim: Simulation) -> None:
        seen.append(
            {(n, p): _array(v) for n, ports in sim.outputs.items() for p, v in ports.items()}
        )

    if kind == "wild":
        run = oracle["run"]
        init = run.get("initializer")
        if run.get("initializer_file"):
            init = json.loads((model.parent / run["initializer_file"]).read_text())
        if init is not None:
            init = {k: np.asarray(v) if isinstance(v, list) else v for k, v in init.items()}
        sim = Simulation(str(model), backend=backend)
        sim.run(steps=min(run["steps"], STEPS), dt=run["dt"], initializer=init)
        snap(sim)
    elif kind in ("trials", "trials_old"):
        sim = Simulation(
            mdf_engine.load(str(model)),
            graph=oracle.get("graph"),
            backend=backend,
            **(
                {"scheduling_mode": oracle["scheduling_mode"]}
                if "scheduling_mode" in oracle
                else {}
            ),
        )
        if kind == "trials_old":
            inputs = [oracle["run"]["initializer"]] * oracle["run"]["steps"]
        else:
            n = len(next(iter(oracle["inputs"].values())))
            inputs = [{k: v[t] for k, v in oracle["inputs"].items()} for t in range(n)]
        for trial in inputs[:STEPS]:
            sim.evaluate(initializer={k: np.asarray(v, dtype=float) for k, v in trial.items()})
            snap(sim)
    elif kind == "example":
        sim = Simulation(str(model), backend=backend)
        sim.run(steps=STEPS, dt=0.01)
        snap(sim)
    else:  # ACT-R: the example scripts' loop (tests/test_wild_corpus.py)
        sim = Simulation(str(model), backend=backend)
        goal: Any = {}
        retrieval: Any = {}
        for _ in range(min(oracle["run"]["steps"], STEPS)):
            sim.evaluate(initializer={"goal_input": goal, "dm_input": retrieval})
            snap(sim)
            goal = sim.value("fire_production", "fire_prod_output_to_goal")
            retrieval = sim.value("fire_production", "fire_prod_output_to_retrieval")
    return sim, seen


def _same(ours: Any, want: Any, what: str) -> None:
    if isinstance(want, list):
        assert isinstance(ours, list) and len(ours) == len(want), what
        for k, (x, y) in enumerate(zip(ours, want)):
            _same(x, y, f"{what}[{k}]")
        return
    assert ours.shape == want.shape, f"{what}: shape {ours.shape} != {want.shape}"
    if want.dtype.kind in "Ob":  # ACT-R chunks, productions (dicts of text) and flags
        assert ours.dtype == want.dtype and ours.tolist() == want.tolist(), what
        return
    # float32 stays float32, int64 int64
    assert ours.dtype == want.dtype, f"{what}: dtype {ours.dtype} != interpreted {want.dtype}"
    np.testing.assert_allclose(ours, want, rtol=1e-9, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("writer,model,kind,oracle", _cases())
def test_compiled_equals_interpreted(writer, model, kind, oracle, caplog) -> None:
    key = f"{writer}/{model.name}"
    try:
        _, want = _drive(model, kind, oracle, "interpreted")
    except MDFError as e:  # a file its writer broke: refused alike by both backends
        with pytest.raises(MDFError):
            _drive(model, kind, oracle, "compiled")
        OUTCOMES[(writer, model.name)] = f"refused by both backends ({str(e)[-60:]})"
        return
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        sim, got = _drive(model, kind, oracle, "compiled")
    assert len(got) == len(want)
    for t, (g, w) in enumerate(zip(got, want)):
        assert g.keys() == w.keys()
        for port in w:
            _same(g[port], w[port], f"{key} call {t} {port[0]}.{port[1]}")
    runner = sim.runner
    if runner.is_compiled:
        OUTCOMES[(writer, model.name)] = "compiled"
        assert key not in NOT_COMPILED, f"{key} compiles now: drop it from NOT_COMPILED"
        # random operators with constant attributes draw inside the loop (draws.py)
        drawn = [f for f in getattr(runner, "python_calls", ()) if f in DRAWN]
        assert not drawn, f"{key}: {drawn} called through Python"
        if hasattr(runner, "python_calls"):  # (ACT-R's compiled runner has none)
            assert list(runner.python_calls) == PYTHON_CALLS.get(key, []), key
    else:
        why = runner.fallback_reason
        OUTCOMES[(writer, model.name)] = why or runner.mode
        assert why and any(why in r.getMessage() for r in caplog.records), "no log line says why"
        assert key in NOT_COMPILED, f"{key} does not compile: {why}"
        assert NOT_COMPILED[key] in why, f"{key}: the reason changed: {why}"


def table_lines() -> list[str]:
    """writer, files, compiled files; then each reason with its count."""
    by_writer: dict[str, Counter] = defaultdict(Counter)
    reasons: Counter = Counter()
    for (writer, name), outcome in OUTCOMES.items():
        group = writer.split("/")[0]
        by_writer[group]["files"] += 1
        by_writer[group]["compiled"] += outcome == "compiled"
        by_writer[group]["refused"] += outcome.startswith("refused")
        if outcome != "compiled" and not outcome.startswith("refused"):
            reasons[NOT_COMPILED.get(f"{writer}/{name}", outcome)] += 1
    lines = [f"{'writer':<16}{'files':>6}{'compiled':>10}{'refused':>9}"]
    for w in sorted(by_writer):
        c = by_writer[w]
        lines.append(f"{w:<16}{c['files']:>6}{c['compiled']:>10}{c['refused']:>9}")
    total = sum(c["files"] for c in by_writer.values())
    done = sum(c["compiled"] for c in by_writer.values())
    refused = sum(c["refused"] for c in by_writer.values())
    lines.append(f"{'all':<16}{total:>6}{done:>10}{refused:>9}")
    for why, n in reasons.most_common():
        files = ", ".join(
            f"{w}/{f}"
            for (w, f), o in sorted(OUTCOMES.items())
            if NOT_COMPILED.get(f"{w}/{f}", o) == why and o != "compiled"
        )
        lines.append(f"  {n} x {why} ({files})")
    return lines


def test_coverage_table(capsys) -> None:
    """Print the coverage table (after the file tests; run alone, it has nothing to print)."""
    if not OUTCOMES:
        pytest.skip("the file tests did not run")
    with capsys.disabled():
        print("\ncompiled backend coverage (issue 22, goal 2):")
        print("\n".join(table_lines()))
    fell_back = {
        f"{w}/{f}" for (w, f), o in OUTCOMES.items() if o != "compiled" and "refused" not in o
    }
    assert set(NOT_COMPILED) >= fell_back


def _small_cnn() -> Any:
    """A float32 ONNX CNN: Conv, BatchNormalization, Relu, MaxPool, Flatten, Gemm."""
    pytest.importorskip("onnx")
    from onnx_nets import _Net

    n = _Net(1)
    x = n.conv("input", 3, 4, 3, pad=1)
    x = n.node("Relu", [n.bn(x, 4)])
    x = n.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = n.node("Flatten", [x])
    w = n.const("fw", (0.1 * n.rng.standard_normal((5, 64))).astype(np.float32))
    b = n.const("fb", (0.1 * n.rng.standard_normal(5)).astype(np.float32))
    return n.model("input", [1, 3, 8, 8], n.node("Gemm", [x, w, b], transB=1), [1, 5], "cnn", 13)


def test_float32_model_keeps_float32() -> None:
    """A float32 ONNX network imported to MDF compiles whole and computes in float32: every
    output port has the interpreted run's dtype and values (float32 rounding apart), and the
    network's output equals onnxruntime's (the oracle) as the interpreted one does."""
    ort = pytest.importorskip("onnxruntime")
    from mdf_engine.onnx_io import import_model

    proto = _small_cnn()
    feed = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"input": feed})[0]
    model = import_model(proto)
    meta = model.metadata["onnx"]
    node, port = next(iter(meta["outputs"].values())).split(".", 1)
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(model, backend=backend)
        sim.evaluate(initializer={meta["inputs"]["input"]: feed})
        runs[backend] = sim
    assert runs["compiled"].runner.is_compiled, runs["compiled"].runner.fallback_reason
    want, got = runs["interpreted"].outputs, runs["compiled"].outputs
    for nid, ports in want.items():
        for pid, w in ports.items():
            w, g = np.asarray(w), np.asarray(got[nid][pid])
            assert g.dtype == w.dtype, f"{nid}.{pid}: {g.dtype} != interpreted {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{nid}.{pid}")
    out = np.asarray(got[node][port])
    assert out.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
