"""A graph whose constant arrays exceed the ``compiled_constants`` limit (a memory bound: the
compiled backend copies a model's arrays into its state) runs interpreted at once, with a log
line naming the limit, instead of allocating them; its results are the interpreted backend's
(the oracle). The limit is lowered here so that a small file stands for a hostile one."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from mdf_engine import Simulation

MODEL = Path(__file__).resolve().parent / "data" / "wild" / "keras" / "mlp_linear.json"


def test_constants_beyond_the_limit_run_interpreted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("MDF_ENGINE_MAX_COMPILED_CONSTANTS", "10")
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        sim = Simulation(MODEL, backend="compiled")
        sim.run(steps=1)
    assert sim.runner.mode == "interpreted"
    assert "MDF_ENGINE_MAX_COMPILED_CONSTANTS allows more" in caplog.text
    oracle = Simulation(MODEL, backend="interpreted")
    oracle.run(steps=1)
    for node, ports in oracle.runner.outputs().items():
        for port, want in ports.items():
            np.testing.assert_array_equal(sim.runner.outputs()[node][port], want)
