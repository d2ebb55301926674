"""``mdf run --backend compiled`` on an ACT-R model cycles the compiled ACT-R graph
(mdf_engine/actr/compiled.py) and prints what the interpreted backend prints (the oracle:
tests/test_actr.py checks it against modeci-mdf's reference engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdf_engine.cli import main
from mdf_engine.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
ACTR = [ROOT / "examples" / "actr_count.json", ROOT / "examples" / "actr_addition.json"]


@pytest.mark.parametrize("path", ACTR, ids=lambda p: p.name)
def test_cli_compiled_actr_equals_interpreted(path, capsys):
    printed = {}
    for backend in ("interpreted", "compiled"):
        assert main(["run", str(path), "-q", "--json", "--backend", backend]) == 0
        printed[backend] = json.loads(capsys.readouterr().out)
    assert printed["compiled"] == printed["interpreted"]
    sim = Simulation(str(path), backend="actr", actr_inner="compiled")
    res = sim.run()
    assert sim.runner.graph.is_compiled, sim.runner.graph.fallback_reason
    assert res.steps == printed["interpreted"]["cycles"]
