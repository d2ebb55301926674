"""Rows and items read in place by the compiled backend's element loops, and the schedule
log's ring index kept without a division (issue 22, goal 1: PsyNeuLink's LCA pass).

``x[k]`` of an array value under a constant index, an item of a tuple value (FitzHugh-Nagumo's
``(v, w, time)``) and a one-row ``(1, n)`` stateful parameter copied from a function's value
are element loops over slots, not ``_ix1``/``_put`` calls. The oracle is the interpreted
backend: every output bit for bit, and graph-scheduler's time steps for the log.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

from mdf_engine import Simulation
from mdf_engine.backends.compiled import small_products

DATA = Path(__file__).resolve().parent / "data" / "pnl"


def _bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def _run_source(sim: Simulation) -> str:
    src = Path(sys.modules[sim.runner._fn.py_func.__module__].__file__).read_text()
    return src[src.index("def run(") : src.index("def run_quiet(")]


def _model() -> dict:
    """A row under a negative index through a function's argument, a (1, 3) state copied from
    a function's value, a list of (1,) items and a tuple of mixed shapes read item by item."""
    node = {
        "parameters": {
            "m": {"value": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]},
            "acc": {"default_initial_value": [[0.5, -1.0, 2.0]], "value": "f_next"},
            "v": {"default_initial_value": [1.0], "value": "res[0]"},
            "w": {"default_initial_value": [0.0], "value": "res[1]"},
            "t": {"default_initial_value": 0.0, "value": "res[2]"},
        },
        "functions": {
            "f_rows": {"value": "m * acc"},
            "f_last": {"value": "variable0[-1]", "args": {"variable0": "f_rows"}},
            "f_next": {"value": "acc * 0.5 + f_last * 0.01"},
            "lst": {"value": "[v + 0.1 * w, w - 0.1 * v]"},
            "res": {"value": "lst[0], lst[1], t + 0.25"},
        },
        "output_ports": {
            "last": {"value": "f_last"},
            "acc": {"value": "acc"},
            "v": {"value": "v"},
            "w": {"value": "w"},
            "t": {"value": "t"},
            "row0": {"value": "f_rows[0]"},
        },
    }
    return {"m": {"graphs": {"g": {"nodes": {"n": node}}}}}


def test_rows_items_and_one_row_states_equal_the_interpreter_bit_for_bit():
    sims = {b: Simulation(_model(), backend=b) for b in ("interpreted", "compiled")}
    for steps in (1, 6, 2):
        for sim in sims.values():
            sim.run(steps=steps)
        want, got = sims["interpreted"].outputs["n"], sims["compiled"].outputs["n"]
        for port, v in want.items():
            assert _bits(got[port]) == _bits(v), (steps, port)
    assert sims["compiled"].runner.mode == "compiled", sims["compiled"].runner.fallback_reason
    run = _run_source(sims["compiled"])
    assert "_ix1(" not in run
    assert re.search(r"a\d+\[1, i_\]", run)  # (f_rows[-1], read in place)


def test_stroop_lca_reads_rows_in_place_and_logs_every_time_step():
    """Also the oracle of backends/compiled/small_products.py: Stroop's 2x2 projections are
    own loops (``_fma``), bitwise equal to the interpreted backend's np.matmul."""
    exp = json.loads((DATA / "stroop.expected.json").read_text())
    sims = {
        "interpreted": Simulation(str(DATA / "stroop.json"), backend="interpreted"),
        # a log of 11 entries wraps several times inside one call of 3 trials
        "compiled": Simulation(str(DATA / "stroop.json"), backend="compiled", schedule_log=11),
    }
    for t in range(len(exp["trials"])):
        init = {k: np.array(v[t], dtype=float) for k, v in exp["inputs"].items()}
        for sim in sims.values():
            sim.run(steps=3, initializer=init)
        want, got = sims["interpreted"].outputs, sims["compiled"].outputs
        for node, ports in want.items():
            for port, v in ports.items():
                assert _bits(got[node][port]) == _bits(v), f"trial {t} {node}.{port}"
    runner = sims["compiled"].runner
    assert runner.is_compiled, runner.fallback_reason
    kept, all_steps = runner.time_steps, sims["interpreted"].runner.time_steps
    assert runner.schedule_truncated and 0 < len(kept) < len(all_steps)
    assert kept == all_steps[-len(kept) :]
    run = _run_source(sims["compiled"])
    assert "_ix1(" not in run and "% q_logn]" not in run
    source = Path(sys.modules[runner._fn.py_func.__module__].__file__).read_text()
    if small_products.formula(2, 2, False) is not None:  # (this machine's BLAS has an order)
        assert "_fma(" in source and "np.dot(" not in source
