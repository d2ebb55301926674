"""Corpus: modeci-mdf's ACT-R importer (``actr_to_mdf``) on the count and addition models
(tools/wild/actr/*.lisp, ACT-R tutorial models as modeci-mdf's examples ship them), with the
reference engine driving them as modeci-mdf's ACT-R example scripts do as the oracle.

Run in the generator venv: ``/work/venvs/wild/bin/python tools/wild/gen_actr.py``.
"""

from __future__ import annotations

import contextlib
import io
import random
import shutil
import tempfile
from pathlib import Path

from modeci_mdf.execution_engine import EvaluableGraph
from modeci_mdf.interfaces.actr import actr_to_mdf
from modeci_mdf.utils import load_mdf

from oracle import CORPUS, plain, version, write_oracle

HERE = Path(__file__).resolve().parent
OUT = CORPUS / "actr_importer"
MAX_CYCLES = 50


def drive(path: Path) -> tuple[list, list, list]:
    """The example scripts' loop: evaluate with the goal and retrieval that the last cycle's
    fire_production sent, until check_termination says so. Returns the goal after every cycle
    the productions pattern_matching returned and the goal buffer's output, in every
    cycle."""
    random.seed(0)
    goals, matches, buffers = [], [], []
    with contextlib.redirect_stdout(io.StringIO()):
        eg = EvaluableGraph(load_mdf(str(path)).graphs[0], verbose=False)
        goal, retrieval, term = {}, {}, False
        while not term and len(goals) < MAX_CYCLES:
            eg.evaluate(initializer={"goal_input": goal, "dm_input": retrieval})
            term = bool(eg.enodes["check_termination"].evaluable_outputs["check_output"]
                        .curr_value)
            fp = eg.enodes["fire_production"].evaluable_outputs
            goal = fp["fire_prod_output_to_goal"].curr_value
            retrieval = fp["fire_prod_output_to_retrieval"].curr_value
            matches.append(plain(eg.enodes["pattern_matching"].evaluable_outputs[
                "pattern_output"].curr_value))
            goals.append(plain(goal))
            buffers.append(plain(eg.enodes["goal_buffer"].evaluable_outputs["goal_output"]
                                 .curr_value))
    return goals, matches, buffers


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("count", "addition"):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / f"{name}.lisp"
            shutil.copy(HERE / "actr" / f"{name}.lisp", src)
            with contextlib.redirect_stdout(io.StringIO()):
                actr_to_mdf(str(src))
            path = OUT / f"{name}.json"
            shutil.copy(Path(tmp) / f"{name}.json", path)
        goals, matches, buffers = drive(path)
        write_oracle(path, writer="modeci-mdf actr_to_mdf",
                     writer_version=f"modeci-mdf {version('modeci-mdf')}",
                     generator="tools/wild/gen_actr.py", protocol="actr", steps=len(goals),
                     dt=None, expected={"cycles": len(goals), "goal_buffer.goal_output": buffers[-1]},
                     traces={"fire_production.fire_prod_output_to_goal": goals,
                             "goal_buffer.goal_output": buffers,
                             "pattern_matching.pattern_output": matches},
                     note="the ACT-R example scripts' loop (random.seed(0)): evaluate with "
                          "initializer goal_input/dm_input from the last cycle's "
                          "fire_production until check_termination")
        print(name, len(goals), goals[-1])


if __name__ == "__main__":
    main()
