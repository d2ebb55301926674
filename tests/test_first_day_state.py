"""A simulation's state between calls (issue 24, items 3-5): ``run()`` continues where the last
call left off, ``reset()`` returns to the initial state, ``set()`` changes parameters; a model
with time_derivative states run without dt warns once. The oracle is modeci-mdf's reference
engine making the same evaluate() calls."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from tests.reference_engine import assert_outputs_close, reference_run

FHN = Path(__file__).resolve().parents[1] / "examples" / "fitzhugh_nagumo.json"
COUNTER = Path(__file__).resolve().parents[1] / "examples" / "states_counter_oscillator.json"


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("path", [FHN, COUNTER])
def test_run_continues_and_reset_restarts(path, backend):
    ref20 = reference_run(path, steps=20, dt=0.05)["outputs"]
    sim = Simulation(path, backend=backend)
    sim.run(steps=10, dt=0.05, record=["fn_neuron.V"] if path == FHN else None)
    sim.run(steps=7, dt=0.05)
    sim.run(steps=3, dt=0.05)
    assert_outputs_close(sim.outputs, ref20, rtol=1e-12)
    assert sim.time == pytest.approx(19 * 0.05)
    sim.reset()
    assert sim.time == 0.0
    res = sim.run(steps=20, dt=0.05)
    assert_outputs_close(res.outputs, ref20, rtol=1e-12)


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_set_changes_parameters_and_resets(backend, tmp_path):
    data = json.loads(FHN.read_text())
    node = data["fitzhugh_nagumo"]["graphs"]["fitzhugh_nagumo_graph"]["nodes"]["fn_neuron"]
    node["parameters"]["a"]["value"] = 0.9
    node["parameters"]["V"]["default_initial_value"] = 0.5
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    ref = reference_run(edited, steps=30, dt=0.05)["outputs"]
    sim = Simulation(FHN, backend=backend)
    sim.run(steps=5, dt=0.05)
    sim.set({"fn_neuron.a": 0.9}, fn_neuron__V=0.5)
    assert_outputs_close(sim.run(steps=30, dt=0.05).outputs, ref, rtol=1e-12)
    with pytest.raises(MDFError, match="fitzhugh_nagumo.json: set 'fn_neuron.nope'"):
        sim.set({"fn_neuron.nope": 1})


def test_time_derivatives_without_dt_warn_once(caplog):
    sim = Simulation(FHN, backend="interpreted")
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        sim.run(steps=3)
        sim.run(steps=3)
    lines = [r.getMessage() for r in caplog.records if "time_derivative" in r.getMessage()]
    assert len(lines) == 1 and "fitzhugh_nagumo.json" in lines[0] and "fn_neuron.V" in lines[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        Simulation(FHN, backend="interpreted").run(steps=3, dt=0.05)
    assert not caplog.records
