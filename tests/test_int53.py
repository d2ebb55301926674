"""Integers beyond 2**53 on the compiled backend: its answer is the interpreter's exact int64
(itself checked against modeci-mdf's reference engine), or the run says it cannot hold the
value and the interpreted backend runs on (a first run restarts, a later one is replayed there:
``handback.py``), never a rounded number.

The cases: builtin ``max``/``min`` of an int64 beyond 2**53 and a float (their variant slot is
a float64: ``pybuiltins._pywon`` must see the integer before it is made a float), ``//`` and
``%`` of integers (``helpers._floordiv``/``_mod`` answer in float64), plain arithmetic and
comparisons, and an int counter crossing 2**53, which tier 0 (computing in float64) must hand
to the generated code instead of refusing the run (``vm/tier.py``)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from mdf_dicts import graph_model, one_node
from reference_engine import _load, reference_run

from mdf_engine import Simulation

B = 2**53
STEPS = 5


def _model(value: str) -> dict:
    params = {
        "a": {"value": "a + 1", "default_initial_value": [[0.0]]},
        "t": {"value": [B + 1]},  # an int64 array
        "k": {"value": B + 1},
        "c": {"value": "c + 1", "default_initial_value": B - 2},  # B - 1, B, B + 1, ...
        "o": {"value": value},
    }
    return one_node(params)


def _steps(sim: Simulation) -> list:
    out = []
    for _ in range(STEPS):
        sim.run(steps=1)
        out.append(np.asarray(sim.value("n", "o")))
    return out


# (the expression, what the compiled backend does: runs it exactly, or hands the graph to the
# interpreted backend where it cannot hold a value: a first run restarts, a later one is
# replayed there, handback.py)
CASES = [
    ("max(a - 4, t)", "restart"),  # the reported silent 2**53
    ("min(a + 1e17, t)", "restart"),
    ("max(k, 1.5)", "restart"),
    ("max(c, a)", "restart"),  # c wins beyond 2**53 at step 3 (a later run)
    ("max(t, k) - min(k, -1)", "compiled"),  # integers only: int64 kept
    ("k // 1", "compiled"),  # (an int64: a nonzero literal divisor, intdiv.py)
    ("c // 1", "compiled"),
    ("k // (c - c + 1)", "restart"),  # (a float64 where the divisor may be 0)
    ("t // 1 - k", "compiled"),
    ("k % 7", "compiled"),
    ("c", "compiled"),  # the counter crosses 2**53 (tier 0 hands over)
    ("c - k + (k > c)", "compiled"),
    ("c + 0.5", "compiled"),  # float64 on both backends
]


@pytest.mark.parametrize("tier0", ["always", "0"])
@pytest.mark.parametrize("value,outcome", CASES)
def test_integers_beyond_2_53_are_exact_or_refused(value, outcome, tier0, monkeypatch):
    model = _model(value)
    want = _steps(Simulation(model, backend="interpreted"))
    ref = reference_run(model, STEPS)["outputs"]["n"]["out"]
    assert np.asarray(ref).tolist() == want[-1].tolist()  # (exact: as Python ints)

    monkeypatch.setenv("MDF_ENGINE_TIER0", tier0)
    sim = Simulation(model, backend="compiled")
    got = _steps(sim)
    reason = sim.runner.fallback_reason
    if outcome == "compiled":
        assert sim.runner.mode == "compiled", reason
    else:
        assert sim.runner.mode == "interpreted" and "2**53" in reason, reason
    for step, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"step {step}"
        assert g.tolist() == w.tolist(), f"step {step}"


def _threshold_model(threshold: int, comparator: str) -> dict:
    """B runs when A's int counter ``c`` (from 2**53 - 3, one up per run) compares true."""
    cond = {"dependency": "A", "parameter": "c", "threshold": threshold, "comparator": comparator}
    return graph_model(
        {
            "A": {
                "parameters": {"c": {"value": "c + 1", "default_initial_value": B - 3}},
                "output_ports": {"out": {"value": "c"}},
            },
            "B": {"output_ports": {"out": {"value": "1"}}},
        },
        conditions={
            "node_specific": {"B": {"type": "Threshold", "kwargs": cond}},
            "termination": {"environment_state_update": {"type": "AfterPass", "kwargs": {"n": 0}}},
        },
    )


@pytest.mark.parametrize("threshold", [B + 1, B + 4, B])
@pytest.mark.parametrize("comparator", [">=", "<"])
def test_threshold_beyond_2_53_fires_as_the_reference(threshold, comparator):
    """A Threshold compares the parameter's float with the threshold as Python does (an int
    exactly): compiled code, comparing in float64, must not round the threshold."""
    from modeci_mdf.execution_engine import EvaluableGraph

    model = _threshold_model(threshold, comparator)
    with contextlib.redirect_stdout(io.StringIO()):
        eg = EvaluableGraph(_load(model).graphs[0], verbose=False)
        want = []
        for _ in range(STEPS + 2):
            before = len(eg.order_of_execution)
            eg.evaluate()
            want.append(sorted(set(eg.order_of_execution[before:])))
    assert len({"B" in w for w in want}) == 2  # (B is skipped, then runs, or the reverse)
    for backend in ("interpreted", "compiled"):
        res = Simulation(model, backend=backend).run(steps=STEPS + 2, record_fired=True)
        assert [sorted(f) for f in res.fired] == want, backend
