"""Random operators inside the compiled loop (issue 22, goal 2; backends/compiled/draws.py).

Oracles: numpy's own draws from the same seed (``default_rng(S)``, what the interpreted
backend draws from under ``Simulation(seed=S)``), bit for bit and step by step, on both
backends; for calls with their own ``seed``, the interpreted call (a fresh ``RandomState``).
The compiled runs must make no call through Python for them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import graph_model

import mdf_engine
from mdf_engine import Simulation, randomness

WILD = Path(__file__).resolve().parent / "data" / "wild" / "psyneulink" / "v0.21.0.0"
SEED = 20261124
STEPS = 4


def _model(dtype: int, shape: list[int], seeded: bool = False) -> dict:
    """One node drawing RandomNormal (``dtype``, ``shape``) and RandomUniformLike of its
    state each step, the state summing them (so every draw reaches a later value)."""
    seed = {"seed": 3} if seeded else {}
    normal = {"shape": shape, "mean": 0.5, "scale": 2.0, "dtype": dtype, **seed}
    node = {
        "functions": {
            "r": {"function": "onnx::RandomNormal", "args": normal},
            "u": {
                "function": "onnx::RandomUniformLike",
                "args": {"input": "acc", "low": -1.0, "high": 3.0, **seed},
            },
        },
        "parameters": {
            "acc": {"default_initial_value": np.zeros(shape).tolist(), "value": "acc + r + u"}
        },
        "output_ports": {"r": {"value": "r"}, "u": {"value": "u"}, "acc": {"value": "acc"}},
    }
    return graph_model({"n": node})


def _steps(model: dict, backend: str, seed: int | None = SEED) -> tuple[list[dict], Simulation]:
    sim = Simulation(model, backend=backend, seed=seed)
    out = []
    for _ in range(STEPS):
        sim.evaluate()
        out.append({k: np.array(v) for k, v in sim.outputs["n"].items()})
    return out, sim


def _numpy_draws(dtype: int, shape: list[int], seed: int) -> list[dict]:
    """The oracle: numpy's draws in the interpreted kernels' order, from ``default_rng``."""
    g = np.random.default_rng(seed)
    f = np.float32 if dtype == 1 else np.float64
    acc = np.zeros(shape)
    out = []
    for _ in range(STEPS):
        r = g.normal(0.5, 2.0, size=tuple(shape)).astype(f)
        u = g.uniform(-1.0, 3.0, size=acc.shape).astype(acc.dtype)
        acc = acc + r + u
        out.append({"r": r, "u": u, "acc": acc})
    return out


def _same(got: list[dict], want: list[dict]) -> None:
    for t, (g, w) in enumerate(zip(got, want, strict=True)):
        for k in w:
            assert g[k].dtype == w[k].dtype, f"step {t} {k}: {g[k].dtype} != {w[k].dtype}"
            np.testing.assert_array_equal(g[k], w[k], err_msg=f"step {t} {k}")


@pytest.mark.parametrize("dtype,shape", [(1, [2, 3]), (11, [1, 1]), (11, [5])])
def test_seeded_stream_bit_for_bit(dtype: int, shape: list[int]) -> None:
    """Under Simulation(seed=S) both backends give numpy's draws from default_rng(S), step
    by step, and leave the stream in numpy's state; the compiled loop calls no Python."""
    want = _numpy_draws(dtype, shape, SEED)
    oracle = np.random.default_rng(SEED)
    for _ in range(STEPS):
        oracle.normal(size=shape), oracle.uniform(size=shape)
    for backend in ("interpreted", "compiled"):
        got, sim = _steps(_model(dtype, shape), backend)
        _same(got, want)
        assert randomness._stream.bit_generator.state == oracle.bit_generator.state
    assert sim.runner.is_compiled and not sim.runner.python_calls, sim.runner.python_calls


def test_own_seed_attribute_is_the_interpreted_constant() -> None:
    """Calls with their own seed repeat the interpreted call's values (a fresh RandomState
    per call) on the compiled backend, without a call through Python."""
    m = _model(1, [2, 2], seeded=True)
    want, _ = _steps(m, "interpreted", seed=None)
    got, sim = _steps(m, "compiled", seed=None)
    _same(got, want)
    np.testing.assert_array_equal(got[0]["r"], got[-1]["r"])
    assert sim.runner.is_compiled and not sim.runner.python_calls


def test_backends_mixed_on_one_stream() -> None:
    """A compiled graph and an interpreted one, stepped alternately on one seeded stream,
    draw what two interpreted graphs draw, in the same order."""
    runs = {}
    for first in ("interpreted", "compiled"):
        a = Simulation(_model(11, [3]), backend=first)
        b = Simulation(_model(1, [2]), backend="interpreted")
        a.evaluate(), b.evaluate()  # (the compiled warm-up happens before the seed)
        randomness.seed(SEED)
        seen = []
        for _ in range(STEPS):
            a.evaluate(), b.evaluate()
            seen += [np.array(s.outputs["n"][k]) for s in (a, b) for k in ("r", "u")]
        runs[first] = (seen, randomness._stream.bit_generator.state)
        assert first == "interpreted" or a.runner.is_compiled
    for x, y in zip(runs["interpreted"][0], runs["compiled"][0], strict=True):
        np.testing.assert_array_equal(x, y)
    assert runs["interpreted"][1] == runs["compiled"][1]
    randomness.seed(None)


def test_batch_rows_draw_in_order() -> None:
    """A sweep batch of a drawing graph runs its rows one after the other on the stream:
    the rows' values are those of interpreted runs of each parameter set in turn."""
    from mdf_engine.backends.compiled import CompiledGraph
    from mdf_engine.plan import plan_graph
    from mdf_engine.sweep import with_parameters

    node = {
        "functions": {"r": {"function": "onnx::RandomNormal", "args": {"shape": [2], "dtype": 11}}},
        "parameters": {
            "k": {"value": 1.0},
            "x": {"default_initial_value": [0.0, 0.0], "value": "x + k * r"},
        },
        "output_ports": {"x": {"value": "x"}},
    }
    model = mdf_engine.load(graph_model({"n": node}))
    g = model.get_graph(None)
    cg = CompiledGraph(plan_graph(model, g, None), record_schedule=False)
    assert cg.prepare_batch([("n", "k")], [("n", "x")], None, None)
    rows = np.array([[1.0], [-2.0], [0.5]])
    randomness.seed(SEED)
    got = cg.run_batch(rows, STEPS, None)
    randomness.seed(SEED)
    for b, row in enumerate(rows):
        sim = Simulation(with_parameters(model, {"n.k": row[0]}), backend="interpreted")
        for t in range(STEPS):
            sim.evaluate()
            np.testing.assert_array_equal(got[b, t], sim.value("n", "x"))
    randomness.seed(None)


def test_seeded_run_repeats_in_a_fresh_process(tmp_path) -> None:
    """A seeded compiled run gives the same numbers in another process (the model cache and
    Numba's cache shared)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model(11, [3])))
    script = (
        "import sys, json, numpy as np; from mdf_engine import Simulation\n"
        "sim = Simulation(sys.argv[1], backend='compiled', seed=int(sys.argv[2]))\n"
        "sim.run(steps=5)\n"
        "print(json.dumps([sim.runner.is_compiled, np.asarray(sim.value('n', 'acc')).tolist()]))\n"
    )
    sim = Simulation(str(path), backend="compiled", seed=SEED)
    sim.run(steps=5)
    out = subprocess.run(
        [sys.executable, "-c", script, str(path), str(SEED)],
        capture_output=True,
        text=True,
        check=True,
    )
    compiled, acc = json.loads(out.stdout.strip().splitlines()[-1])
    assert compiled
    assert np.array_equal(np.asarray(acc), np.asarray(sim.value("n", "acc")))


@pytest.mark.parametrize("name", ["tests_ddi.json", "tests_model_integrators.json"])
def test_psyneulink_exports_compile_without_python(name: str) -> None:
    """PsyNeuLink's DDI and integrator exports (random draws with their own seed) compile with
    no call through Python and give the interpreted values (tests/test_compiled_coverage.py
    checks them against PsyNeuLink's stored runs' driver too)."""
    oracle = json.loads((WILD / name).with_suffix(".oracle.json").read_text())
    init = {k: np.asarray(v[0], dtype=float) for k, v in oracle["inputs"].items()}
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(mdf_engine.load(str(WILD / name)), backend=backend)
        runs[backend] = []
        for _ in range(3):
            sim.evaluate(initializer=init)
            runs[backend].append({n: dict(p) for n, p in sim.outputs.items()})
    assert sim.runner.is_compiled and not sim.runner.python_calls, sim.runner.python_calls
    for want, got in zip(runs["interpreted"], runs["compiled"], strict=True):
        for n, ports in want.items():
            for p, v in ports.items():
                np.testing.assert_array_equal(np.asarray(got[n][p]), np.asarray(v))


@pytest.mark.parametrize("dtype", [None, 9, 7])
def test_bernoulli_bit_for_bit(dtype: int | None) -> None:
    """Bernoulli against a state's probabilities draws numpy's uniform numbers from the
    stream (1 where below p) in its output dtype on both backends; a probability outside
    [0, 1] is the interpreted MDFError, before any draw."""
    attrs = {} if dtype is None else {"dtype": dtype}
    node = {
        "functions": {"b": {"function": "onnx::Bernoulli", "args": {"input": "p", **attrs}}},
        "parameters": {"p": {"default_initial_value": [0.1, 0.5, 0.9], "value": "p * 1.02"}},
        "output_ports": {"b": {"value": "b"}, "p": {"value": "p"}},
    }
    m = graph_model({"n": node})
    g = np.random.default_rng(SEED)
    want, p = [], np.array([0.1, 0.5, 0.9])
    kind = {None: np.float64, 9: np.bool_, 7: np.int64}[dtype]
    for _ in range(STEPS):
        p = p * 1.02
        want.append({"b": (g.uniform(0.0, 1.0, size=3) < p).astype(kind), "p": p})
    for backend in ("interpreted", "compiled"):
        sim = Simulation(m, backend=backend, seed=SEED)
        got = []
        for _ in range(STEPS):
            sim.evaluate()
            got.append({k: np.array(v) for k, v in sim.outputs["n"].items()})
        _same(got, want)
        with pytest.raises(mdf_engine.MDFError, match="probabilities must lie in"):
            for _ in range(30):  # (0.9 * 1.02**k passes 1 at k = 6)
                sim.evaluate()
    assert sim.runner.is_compiled and not sim.runner.python_calls, sim.runner.python_calls
