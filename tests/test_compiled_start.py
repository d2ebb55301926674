"""The compiled backend runs from the first step, and a later process starts from the compile
cache: same numbers as the interpreted backend and as the first compiled run, bit for bit;
a damaged or stale cache record is ignored, never trusted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import EXAMPLES
from reference_engine import assert_outputs_close

import mdf_engine
from mdf_engine.backends.compiled import cache as compile_cache

FN = EXAMPLES / "fitzhugh_nagumo.json"
COND = EXAMPLES / "conditions_threshold.json"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A private, empty cache folder for this test."""
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    return tmp_path


def _names(sim) -> list[tuple[str, str]]:
    out = []
    for node in sim.graph.nodes:
        out += [(node.id, p.id) for p in node.input_ports]
        out += [(node.id, p.id) for p in node.parameters]
        out += [(node.id, p.id) for p in node.output_ports]
    return out


@pytest.mark.parametrize("path", [FN, COND], ids=["fitzhugh_nagumo", "conditions"])
def test_every_value_matches_interpreted(path, cache):
    """value() of every port and parameter (not only outputs) after many steps."""
    a = mdf_engine.Simulation(path)
    b = mdf_engine.Simulation(path, backend="compiled")
    a.run(steps=40, dt=0.01)
    b.run(steps=40, dt=0.01)
    assert b.runner.is_compiled, b.runner.fallback_reason
    for nid, name in _names(a):
        np.testing.assert_allclose(
            np.asarray(b.value(nid, name), dtype=float),
            np.asarray(a.value(nid, name), dtype=float),
            rtol=1e-12,
            atol=0,
            err_msg=f"{nid}.{name}",
        )
    assert b.runner.time_steps == a.runner.time_steps


@pytest.mark.parametrize("path", [FN, COND], ids=["fitzhugh_nagumo", "conditions"])
def test_second_start_uses_the_cache_and_gives_the_same_numbers(path, cache):
    first = mdf_engine.Simulation(path, backend="compiled")
    r1 = first.run(steps=30, dt=0.01)
    assert first.runner.origin == "generated"
    assert list(cache.glob("mdf_graph_*.json"))
    second = mdf_engine.Simulation(path, backend="compiled")
    r2 = second.run(steps=30, dt=0.01)
    assert second.runner.origin == "cache"
    for node, ports in r1.outputs.items():
        for port, v in ports.items():
            assert np.array_equal(np.asarray(r2.outputs[node][port]), np.asarray(v)), (
                f"{node}.{port}"
            )
    assert second.runner.time_steps == first.runner.time_steps


def test_evaluate_one_step_at_a_time_matches_a_run(cache):
    a = mdf_engine.Simulation(FN, backend="compiled")
    a.evaluate()
    for _ in range(9):
        a.evaluate(time_increment=0.01)
    b = mdf_engine.Simulation(FN, backend="compiled")
    b.run(steps=10, dt=0.01)
    assert a.runner.evaluations == b.runner.evaluations == 10
    assert a.outputs == b.outputs


def test_a_damaged_record_is_ignored(cache):
    mdf_engine.Simulation(FN, backend="compiled").run(steps=5, dt=0.01)
    (record,) = cache.glob("mdf_graph_*.json")
    record.write_text("{not json")
    sim = mdf_engine.Simulation(FN, backend="compiled")
    sim.run(steps=5, dt=0.01)
    assert sim.runner.origin == "generated"
    json.loads(record.read_text())  # rewritten whole


def test_a_record_whose_kernels_changed_is_ignored(cache):
    mdf_engine.Simulation(FN, backend="compiled").run(steps=5, dt=0.01)
    (record,) = cache.glob("mdf_graph_*.json")
    data = json.loads(record.read_text())
    data["kernel_digest"] = "0" * 16  # as if a kernel's source had changed since
    record.write_text(json.dumps(data))
    key = data["key"]
    assert compile_cache.load(cache, key) is None
    sim = mdf_engine.Simulation(FN, backend="compiled")
    sim.run(steps=5, dt=0.01)
    assert sim.runner.origin == "generated"


def test_cache_key_follows_content_and_options():
    sim = mdf_engine.Simulation(FN)
    other = mdf_engine.Simulation(COND)
    k = compile_cache.graph_key(sim.plan, {"check_finite": False})
    assert k == compile_cache.graph_key(sim.plan, {"check_finite": False})
    assert k != compile_cache.graph_key(sim.plan, {"check_finite": True})
    assert k != compile_cache.graph_key(other.plan, {"check_finite": False})


def test_attributes_given_out_of_schema_order(cache):
    """A call naming only a late attribute (Gemm's transB) binds it to the right argument."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3))
    b = rng.standard_normal((4, 3))
    model = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "n": {
                            "parameters": {
                                "A": {"value": a.tolist()},
                                "B": {"value": b.tolist()},
                                "y": {
                                    "function": "onnx::Gemm",
                                    "args": {"A": "A", "B": "B", "transB": 1},
                                },
                            },
                            "output_ports": {"out": {"value": "y"}},
                        }
                    }
                }
            }
        }
    }
    sim = mdf_engine.Simulation(model, backend="compiled")
    sim.run(steps=3)
    assert sim.runner.is_compiled, sim.runner.fallback_reason
    np.testing.assert_allclose(sim.value("n", "out"), a @ b.T, rtol=1e-12)


def test_auto_backend_compiles_long_runs_only(cache):
    from mdf_engine.simulation import AUTO_COMPILE_STEPS

    short = mdf_engine.Simulation(FN)
    assert short.backend == "auto"
    short.run(steps=20, dt=0.01)
    assert short.backend == "interpreted"
    stepwise = mdf_engine.Simulation(FN)
    stepwise.evaluate()
    assert stepwise.backend == "interpreted"
    long = mdf_engine.Simulation(FN)
    r = long.run(steps=AUTO_COMPILE_STEPS, dt=0.01)
    assert long.backend == "compiled" and long.runner.is_compiled
    ref = mdf_engine.Simulation(FN, backend="interpreted").run(steps=AUTO_COMPILE_STEPS, dt=0.01)
    assert_outputs_close(r.outputs, ref.outputs, rtol=1e-9)


def test_auto_reads_values_before_the_first_run_without_deciding(cache):
    sim = mdf_engine.Simulation(FN)
    assert sim.value("fn_neuron", "V_out") is None  # nothing has run
    assert sim.order_of_execution == []
    sim.run(steps=10, dt=0.01)
    assert sim.backend == "interpreted" and sim.runner.evaluations == 10
