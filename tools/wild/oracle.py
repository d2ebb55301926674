"""Shared helpers of the wild-corpus generators: run a file in modeci-mdf's reference engine
the way its writer's example scripts do, and store the result as ``<name>.oracle.json``.

The oracle format (documented in tests/data/wild/README.md)::

    {"writer": "...", "writer_version": "...", "generator": "tools/wild/...py",
     "protocol": "reference" | "onnxruntime" | "torch" | "actr",
     "run": {"steps": N, "dt": DT | null, "initializer": {port: value} | null,
             "initializer_file": "<name>.inputs.json" | null},
     "expected": {"NODE.PORT": value, ...},       # after the last step
     "traces": {"NODE.PORT": [value per step]},   # optional
     "rtol": r, "atol": a, "note": "..."}

Run in a generator venv (modeci-mdf, onnxruntime, torch), never by the tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "wild"


def plain(v: Any) -> Any:
    """A value as JSON data (arrays to lists, numpy scalars to numbers)."""
    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return [plain(x) for x in v.tolist()]
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    return v


def version(dist: str) -> str:
    from importlib.metadata import version as _v

    return _v(dist)


def reference_run(path: Path, steps: int, dt: float | None, initializer: dict | None = None,
                  trace: list[str] | None = None) -> tuple[dict, dict]:
    """Run ``path`` in the reference engine as the example scripts do: the first evaluate()
    without a time increment, the rest with ``dt``. Returns (final outputs, traces)."""
    from modeci_mdf.execution_engine import EvaluableGraph
    from modeci_mdf.utils import load_mdf

    traces: dict[str, list] = {k: [] for k in trace or []}
    with contextlib.redirect_stdout(io.StringIO()):
        m = load_mdf(str(path))
        eg = EvaluableGraph(m.graphs[0], verbose=False)
        for k in range(steps):
            inc = None if (k == 0 or dt is None) else dt
            eg.evaluate(time_increment=inc, initializer=initializer)
            for key in traces:
                n, p = key.split(".", 1)
                en = eg.enodes[n]
                src = en.evaluable_outputs.get(p) or en.evaluable_parameters.get(p)
                traces[key].append(plain(src.curr_value))
    final = {f"{nid}.{pid}": plain(o.curr_value)
             for nid, en in eg.enodes.items() for pid, o in en.evaluable_outputs.items()}
    return final, traces


def write_oracle(model_path: Path, *, writer: str, writer_version: str, generator: str,
                 protocol: str, steps: int, dt: float | None, expected: dict,
                 initializer: dict | None = None, initializer_file: str | None = None,
                 traces: dict | None = None, rtol: float = 1e-9, atol: float = 1e-12,
                 note: str = "") -> None:
    name = model_path.name
    if name.endswith(".json"):
        name = name[: -len(".json")]
    data = {"writer": writer, "writer_version": writer_version, "generator": generator,
            "model": model_path.name, "protocol": protocol,
            "run": {"steps": steps, "dt": dt, "initializer": plain(initializer),
                    "initializer_file": initializer_file},
            "expected": plain(expected), "traces": plain(traces or {}),
            "rtol": rtol, "atol": atol, "note": note}
    out = model_path.parent / f"{name}.oracle.json"
    out.write_text(json.dumps(data, indent=1) + "\n")


def rel(p: Path) -> str:
    return os.path.relpath(p, ROOT)
