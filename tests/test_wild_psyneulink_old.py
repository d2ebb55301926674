"""Exports of old PsyNeuLink releases (0.11, 0.12; issue 19) against their oracles.

tests/data/wild/psyneulink_old/ holds the files as PsyNeuLink's repository stores them and
``<file>.oracle.json``: every output port after one ``evaluate(initializer=...)`` in the
reference engine of the file's MDF version (tools/wild/gen_psyneulink_old.py). Both backends
run each file (a projection's ``_dummy_node`` is folded into its edge, so its own output is
not compared; the receiver's is); where the compiled backend runs the interpreted one, the reason is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mdf_engine
from mdf_engine import Simulation

DATA = Path(__file__).resolve().parent / "data" / "wild" / "psyneulink_old"
FILES = sorted(
    p for p in DATA.iterdir() if p.suffix in (".json", ".yml") and ".oracle" not in p.name
)
OUTCOMES: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_old_export_matches_oracle(path: Path, backend: str) -> None:
    oracle = json.loads(path.with_name(path.name + ".oracle.json").read_text())
    model = mdf_engine.load(str(path))
    assert model.generating_application == oracle["writer_version"]
    sim = Simulation(model, backend=backend)
    run = oracle["run"]
    for _ in range(run["steps"]):
        sim.evaluate(
            initializer={k: np.asarray(v, dtype=float) for k, v in run["initializer"].items()}
        )
    for key, want in oracle["expected"].items():
        node, port = key.split(".", 1)
        if node.endswith("_dummy_node"):  # a projection: folded into its edge (not a node)
            continue
        np.testing.assert_allclose(
            np.ravel(sim.outputs[node][port]),
            np.ravel(want),
            rtol=oracle["rtol"],
            atol=oracle["atol"],
            err_msg=f"{path.name} {key}",
        )
    outcome = "match"
    if backend == "compiled" and not sim.runner.is_compiled:
        outcome = f"match (interpreted: {sim.runner.fallback_reason})"
    OUTCOMES[(path.name, backend)] = outcome


def test_old_corpus_table(capsys: pytest.CaptureFixture) -> None:
    """Print file, writer, oracle and outcome per backend (after the file tests)."""
    lines = [f"{'file':<18} {'writer':<40} {'interpreted':<12} compiled"]
    for p in FILES:
        o = json.loads(p.with_name(p.name + ".oracle.json").read_text())
        lines.append(
            f"{p.name:<18} {o['writer_version']:<40} "
            f"{OUTCOMES.get((p.name, 'interpreted'), '-'):<12} "
            f"{OUTCOMES.get((p.name, 'compiled'), '-')}"
        )
    with capsys.disabled():
        print("\nOld PsyNeuLink exports (issue 19):")
        print("\n".join(lines))
    assert FILES
