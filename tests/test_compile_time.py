"""A large fixed-order graph compiled as part functions (mdf_engine/backends/compiled/parts.py)
gives the interpreted backend's values (the oracle of the compiled backend's tests), bit for
bit.

The split applies to graphs of more than ``parts.SPLIT_ABOVE`` branches; here it is forced
on small graphs (every node a part of a few branches), so that it covers PsyNeuLink's
initial-value and ONNX files of the corpus, generated DAGs and chains, cheaply. No timing is
asserted: ``benchmarks/compile_time.py`` measures the compile (docs/performance.md, helper
dagc).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from test_compiled_coverage import _drive, _wild_cases

from mdf_engine.backends.compiled import parts

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_models  # noqa: E402

#: corpus files with array values and a fixed schedule (ONNX, Keras, PyTorch exports)
CORPUS = (
    "mlp_relu_deep.json",
    "lstm_last_step.json",
    "ABCD.json",
    "Arrays.json",
    "SimpleChain.json",
    "test_batchnorm_example.json",
)


def _cases() -> list:
    out = [
        pytest.param(w, m, k, o, id=f"{w}/{m.name}")
        for w, m, k, o in _wild_cases()
        if m.name in CORPUS
    ]
    return out


@pytest.fixture()
def forced_split(monkeypatch, tmp_path):
    """Every graph with a fixed schedule split into parts of at most two branches."""
    monkeypatch.setattr(parts, "SPLIT_ABOVE", 0)
    monkeypatch.setattr(parts, "PART_BLOCKS", 2)
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path / "cache"))


def _equal(ours: list, want: list) -> None:
    assert len(ours) == len(want)
    for a, b in zip(ours, want):
        assert a.keys() == b.keys()
        for key in b:
            x, y = a[key], b[key]
            for u, v in zip(x, y) if isinstance(y, list) else [(x, y)]:
                assert u.dtype == v.dtype, key
                np.testing.assert_array_equal(u, v, err_msg=str(key))


def _split(sim) -> bool:
    return sim.runner.mode == "compiled" and "part_0" in sim.runner._fn.py_func.__globals__


@pytest.mark.parametrize("writer,model,kind,oracle", _cases())
def test_corpus_in_parts_equals_interpreted(writer, model, kind, oracle, forced_split) -> None:
    _, want = _drive(model, kind, oracle, "interpreted")
    sim, ours = _drive(model, kind, oracle, "compiled")
    if sim.runner._layout.static is None:  # (a scheduled graph is never split)
        pytest.skip("its schedule depends on the run")
    assert _split(sim), sim.runner.fallback_reason
    _equal(ours, want)


@pytest.mark.parametrize("family", ["dag", "chain"])
def test_generated_graph_in_parts_equals_interpreted(family, forced_split, tmp_path) -> None:
    from mdf_engine import Simulation

    path = tmp_path / "model.json"
    path.write_text(json.dumps(scale_models.FAMILIES[family](24)))
    got = []
    for backend in ("interpreted", "compiled"):
        sim = Simulation(str(path), backend=backend)
        sim.run(steps=3)
        got.append(
            [{(n, p): np.asarray(v) for n, ports in sim.outputs.items() for p, v in ports.items()}]
        )
    assert _split(sim), sim.runner.fallback_reason
    _equal(got[1], got[0])
