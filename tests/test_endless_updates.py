"""An update whose termination condition never holds is stopped with an MDFError on both
backends instead of hanging."""

from __future__ import annotations

import pytest

import mdf_engine
from mdf_engine import interpreter
from mdf_engine.errors import MDFError


def _never_ending() -> dict:
    return {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "parameters": {"c": {"value": "c + 1"}},
                            "output_ports": {"out": {"value": "c"}},
                        }
                    },
                    "conditions": {"termination": {"environment_state_update": {"type": "Never"}}},
                }
            }
        }
    }


def test_interpreted_update_without_termination_is_stopped(monkeypatch):
    monkeypatch.setattr(interpreter, "MAX_TIME_STEPS_PER_UPDATE", 200)
    sim = mdf_engine.Simulation(_never_ending(), backend="interpreted")
    with pytest.raises(MDFError, match="no termination after 200 time steps"):
        sim.run(steps=1)
    assert float(sim.value("A", "c")) == 200.0  # it did run until stopped


def test_compiled_update_without_termination_is_stopped(monkeypatch):
    monkeypatch.setattr(interpreter, "MAX_TIME_STEPS_PER_UPDATE", 200)
    sim = mdf_engine.Simulation(_never_ending(), backend="compiled")
    with pytest.raises(MDFError, match="no termination after"):
        sim.run(steps=1)
