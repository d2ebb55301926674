"""Run a model in modeci-mdf's reference engine (the oracle for model semantics), quietly.

``reference_run(path_or_dict, steps, dt, initializer)`` makes the same calls as
``Simulation.run``: the first ``evaluate()`` without a time increment, the rest with ``dt``;
it returns the final output values and, per time step, the set of node ids that ran.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def _load(model: Any):
    from modeci_mdf.utils import load_mdf

    if isinstance(model, dict):
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(model, tmp)
        tmp.close()
        model = tmp.name
    return load_mdf(str(model))


def reference_run(
    model: Any,
    steps: int,
    dt: float | None = None,
    initializer: dict | None = None,
    graph: str | None = None,
) -> dict:
    from modeci_mdf.execution_engine import EvaluableGraph

    with contextlib.redirect_stdout(io.StringIO()):
        m = _load(model)
        g = m.graphs[0] if graph is None else next(x for x in m.graphs if x.id == graph)
        eg = EvaluableGraph(g, verbose=False)
        for k in range(steps):
            inc = None if (k == 0 or dt is None) else dt
            eg.evaluate(time_increment=inc, initializer=initializer)
    outputs = {
        nid: {pid: o.curr_value for pid, o in en.evaluable_outputs.items()}
        for nid, en in eg.enodes.items()
    }
    steps_sets = [set(n.id for n in s) for s in eg.scheduler.execution_list[None]]
    return {
        "outputs": outputs,
        "time_steps": steps_sets,
        "order": list(eg.order_of_execution),
        "graph": eg,
    }


def assert_outputs_close(ours: dict, ref: dict, rtol: float = 1e-9, atol: float = 0.0) -> None:
    assert set(ours) == set(ref), (set(ours), set(ref))
    for node, ports in ref.items():
        for port, rv in ports.items():
            ov = ours[node][port]
            np.testing.assert_allclose(
                np.asarray(ov, dtype=float),
                np.asarray(rv, dtype=float),
                rtol=rtol,
                atol=atol,
                err_msg=f"{node}.{port}",
            )


def model_files(*folders: Path) -> list[Path]:
    """The model files of ``folders``. A folder that is absent is an error: a test over it must
    not pass by running nothing (``tests/test_reference_equivalence.py`` reports an absent
    ``../shared/models`` as a visible skip, and as a failure under CI)."""
    out = []
    for folder in folders:
        if not folder.is_dir():
            raise FileNotFoundError(f"model folder {folder} is absent")
        out += sorted(p for p in folder.iterdir() if p.suffix in (".json", ".yaml", ".yml"))
    return out
