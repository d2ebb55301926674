"""Oracles for tests/data/wild/psyneulink_old/: PsyNeuLink exports from releases that no longer
install on Python 3.11, taken from PsyNeuLink's own repository (see the README there).

Run with the modeci-mdf that the file's format belongs to, driven as PsyNeuLink's
tests/mdf/test_mdf.py drives it (``EvaluableGraph(graph).evaluate(initializer={
"A_InputPort_0": [[1.0]]})``, then every output port), e.g.::

    /work/venvs/mdfold-np1/bin/python tools/wild/gen_psyneulink_old.py model_basic.json

(venv: /work/venvs/mdfold's packages, ``pip freeze``d, with numpy==1.26.4, installed
``--no-deps``: modeci-mdf 0.3.3's logistic calls ``math.exp`` on a 1-element array, which
numpy 2 refuses.)
    python tools/wild/gen_psyneulink_old.py model_basic.yml --same-as model_basic.json

``--same-as`` stores, for a file that no installable reference engine runs as PsyNeuLink did,
the oracle of another export of the same PsyNeuLink script (PsyNeuLink's test_mdf asserts that
the reference run of its export equals ``comp.results``), and what modeci-mdf 0.4.15 gives.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "wild" / "psyneulink_old"
#: the input of each file as PsyNeuLink's tests/mdf/test_mdf.py gives it (default [[1.0]])
INPUTS = {"model_udfs.json": [[10.0]]}


def _plain(v):
    a = np.asarray(v, dtype=float)
    return a.tolist()


def initializer(name: str) -> dict:
    """The initializer of file ``name``."""
    return {"A_InputPort_0": INPUTS.get(name, [[1.0]])}


def reference(path: Path) -> dict:
    """Every output port after one evaluate() in the installed modeci-mdf."""
    from modeci_mdf.execution_engine import EvaluableGraph
    from modeci_mdf.utils import load_mdf

    model = load_mdf(str(path))
    eg = EvaluableGraph(model.graphs[0], verbose=False)
    eg.evaluate(initializer=initializer(path.name))
    return {
        f"{nid}.{pid}": _plain(op.curr_value)
        for nid, en in eg.enodes.items()
        for pid, op in en.evaluable_outputs.items()
    }


def main(argv: list[str]) -> None:
    name = argv[0]
    path = DATA / name
    import yaml

    model = yaml.safe_load(path.read_text())  # JSON is YAML
    app = next(iter(model.values())).get("generating_application")
    if len(argv) == 3 and argv[1] == "--same-as":
        other = json.loads((DATA / (argv[2] + ".oracle.json")).read_text())
        try:
            got_now = reference(path)
        except Exception as e:  # recorded, not hidden: the installed engine's outcome
            got_now = f"{type(e).__name__}: {e}"[:300]
        oracle = dict(other)
        oracle["writer_version"] = app
        oracle["oracle_from"] = argv[2]
        oracle["note"] = (
            f"same PsyNeuLink script (tests/mdf/model_basic.py) as {argv[2]}; modeci-mdf "
            f"{version('modeci-mdf')} on this file gives {got_now} (it reads the input port "
            "only in the first pass, PsyNeuLink in every pass), modeci-mdf 0.3.3 cannot read "
            "this format"
        )
    else:
        oracle = {
            "writer": "PsyNeuLink",
            "writer_version": app,
            "generator": "tools/wild/gen_psyneulink_old.py",
            "protocol": "reference",
            "reference": f"modeci-mdf {version('modeci-mdf')}, "
            f"graph-scheduler {version('graph-scheduler')}",
            "run": {"steps": 1, "dt": None, "initializer": initializer(name)},
            "expected": reference(path),
            "rtol": 1e-9,
            "atol": 1e-12,
        }
    (DATA / (name + ".oracle.json")).write_text(json.dumps(oracle, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
