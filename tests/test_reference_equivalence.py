"""Every model in examples/ and ../shared/models/ runs in our engine and in modeci-mdf's reference
engine (the oracle) with equal final outputs and parameters (rtol 1e-9) and the same set of nodes
in every graph-scheduler time step."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import EXAMPLES, SHARED_MODELS
from reference_engine import assert_outputs_close, model_files, reference_run

import mdf_engine

_FOLDERS = [EXAMPLES] + ([SHARED_MODELS] if SHARED_MODELS.is_dir() else [])
MODELS = [p for p in model_files(*_FOLDERS) if not p.name.startswith("actr_")]


def test_shared_models_are_present():
    """The reference repository's models in ../shared/models are part of this comparison: their
    absence is a visible skip on a developer's clone and a failure under CI."""
    if not SHARED_MODELS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED_MODELS} is absent: the reference models were not compared")
        pytest.skip(f"{SHARED_MODELS} is absent: the reference models were not compared")
    assert any(p.parent == SHARED_MODELS for p in MODELS)


BACKENDS = ["interpreted", "compiled"]


def _runs(path):
    """(steps, dt) pairs: one plain evaluate(), and 100 steps for models with state."""
    model = mdf_engine.load(path)
    stateful = any(p.is_stateful() for g in model.graphs for n in g.nodes for p in n.parameters)
    return [(1, None), (120, 0.01)] if stateful else [(1, None), (5, 0.01)]


def _needs_missing_ops(path) -> str | None:
    from mdf_engine.plan import load_function_libraries
    from mdf_engine.registry import REGISTRY

    load_function_libraries()

    model = mdf_engine.load(path)
    for g in model.graphs:
        for n in g.nodes:
            for p in list(n.parameters) + list(n.functions):
                if p.function and p.function not in REGISTRY:
                    return p.function
    return None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_matches_reference(path, backend):
    missing = _needs_missing_ops(path)
    if missing:
        pytest.skip(f"{missing} is not registered in this build")
    for steps, dt in _runs(path):
        ref = reference_run(path, steps, dt)
        sim = mdf_engine.Simulation(path, backend=backend)
        res = sim.run(steps=steps, dt=dt)
        assert_outputs_close(res.outputs, ref["outputs"])
        for nid, en in ref["graph"].enodes.items():
            for pid, ep in en.evaluable_parameters.items():
                rv = ep.curr_value
                if isinstance(rv, (dict, str)) or rv is None:
                    continue
                np.testing.assert_allclose(
                    np.asarray(sim.value(nid, pid), dtype=float),
                    np.asarray(rv, dtype=float),
                    rtol=1e-9,
                    err_msg=f"{nid}.{pid}",
                )
        assert sim.runner.time_steps == ref["time_steps"]


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_compiled_equals_interpreted(path):
    """The compiled backend compiles every bundled model and agrees with the interpreted one
    (rtol 1e-12), step by step in its schedule."""
    missing = _needs_missing_ops(path)
    if missing:
        pytest.skip(f"{missing} is not registered in this build")
    steps, dt = 150, 0.01
    a = mdf_engine.Simulation(path)
    b = mdf_engine.Simulation(path, backend="compiled")
    ra = a.run(steps=steps, dt=dt)
    rb = b.run(steps=steps, dt=dt)
    assert b.runner.is_compiled, b.runner.fallback_reason
    assert_outputs_close(rb.outputs, ra.outputs, rtol=1e-12)
    assert b.runner.time_steps == a.runner.time_steps
