"""Integers on the compiled backend, second part (tests/test_int53.py is the first): integer
``//`` and ``%`` inside larger expressions keep int64 (``compiled/intdiv.py``), a run that
stops where compiled code cannot hold a value names the field, and a later run (``run()``
again, ``evaluate()`` in a loop) goes on with the interpreted backend's exact numbers
(``compiled/handback.py``). Expected values: modeci-mdf's reference engine, and the
interpreted backend checked against it (or, for a division by zero, where the reference
raises ZeroDivisionError, numpy's float64 rule that docs/semantics.md gives both backends)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from mdf_dicts import one_node
from reference_engine import reference_run

from mdf_engine import Simulation
from mdf_engine.backends.compiled import handback
from mdf_engine.errors import MDFError

B = 2**53
STEPS = 6


def _model(value: str) -> dict:
    params = {
        "a": {"value": "a + 1", "default_initial_value": [[0.0]]},
        "t": {"value": [B + 1, 5, -9]},  # an int64 array
        "s": {"value": [3, 4, 5]},
        "k": {"value": B + 1},
        "z": {"value": 0},
        "c": {"value": "c + 1", "default_initial_value": B - 3},  # B - 2, B - 1, B, ...
        "o": {"value": value},
    }
    return one_node(params)


def _calls(sim: Simulation, how: str) -> list[np.ndarray]:
    """``STEPS`` updates, one call each (``run`` or ``evaluate``), the value after each."""
    out = []
    for _ in range(STEPS):
        sim.run(steps=1) if how == "run" else sim.evaluate()
        out.append(np.asarray(sim.value("n", "o")))
    return out


def _oracle(value: str, how: str, reference: bool = True) -> list[np.ndarray]:
    model = _model(value)
    want = _calls(Simulation(model, backend="interpreted"), how)
    if reference:  # (exact: as Python ints)
        ref = reference_run(model, STEPS)["outputs"]["n"]["out"]
        assert np.asarray(ref).tolist() == want[-1].tolist()
    return want


def _same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    for step, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"step {step}: {g!r} {w!r}"
        np.testing.assert_array_equal(g, w, err_msg=f"step {step}")  # (exact; NaN equals NaN)


# integer // and % inside larger expressions: int64 in the compiled code, no float64 on the
# way (which ran the graph interpreted, or rounded a product beyond 2**53)
@pytest.mark.parametrize(
    "value",
    [
        "t + k // 3",
        "s[0] % 2 + s",
        "(k % 7) * k",
        "k % 7 + t",
        "t % 7 + t // -2",
        "(c // 4) * 4 + c % 4 - c",
        "-k // 2 + (-k) % 5",
        "(k // 2) * 2 + k % 2",
        "(c - 9007199254740992) ** 2 * k + 1",  # (** of integers: an int64 too)
        "k ** 1 - 2 ** 3",
        # comparisons of an int and a float: float64 is exact here (c reaches 2**53 + 2)
        "(c == 9007199254740994.0) + (c > 1e17) * 2 + (k < 2.0**60) * 4",
        "k if c > 0 else 2",  # (a conditional of two integers)
    ],
)
def test_integer_floordiv_and_mod_stay_int64_in_larger_expressions(value):
    want = _oracle(value, "run")
    sim = Simulation(_model(value), backend="compiled")
    got = _calls(sim, "run")
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    _same(got, want)


# (the expression, the reference engine can be the oracle, what the stop names)
STOPS = [
    ("max(c, a)", True, "an integer beyond 2**53"),  # c wins beyond 2**53 at the 4th call
    ("k // ((c - B - 1) ** 2 + 1)", True, "an integer beyond 2**53"),  # (k // 1 at the 4th)
    ("255 ** min(c - B + 6, 7)", True, "an integer beyond 2**53"),  # 255 ** 7 at the 4th
    (
        "c // (c - B - 1) + 1",
        False,
        "an integer //, % or ** whose answer is a float",
    ),  # 0 at the 4th call
    ("c % (B + 1 - c) * 2", False, "an integer //, % or ** whose answer is a float"),
    # (c = 2**53 + 1 rounds to the float 2**53: float64 says not greater, Python says greater)
    ("(c > 9007199254740992.0) * 3", True, "an integer beyond 2**53"),
    # (the float branch makes both float64: c was rounded, silently)
    ("c if c > 0 else 1.5", True, "an integer beyond 2**53"),
    # (an element-wise loop over t: k % 0 was Numba's 0 there, silently)
    ("t * 1 + k % (B + 1 - c)", False, "an integer //, % or ** whose answer is a float"),
]


@pytest.mark.parametrize("how", ["run", "evaluate"])
@pytest.mark.parametrize("value,reference,why", STOPS)
def test_a_later_call_that_stops_goes_on_interpreted_with_exact_numbers(
    value, reference, why, how, caplog
):
    value = value.replace("B", str(B))
    want = _oracle(value, how, reference)
    sim = Simulation(_model(value), backend="compiled")
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        got = _calls(sim, how)
    _same(got, want)
    reason = sim.runner.fallback_reason
    assert sim.runner.mode == "interpreted", reason
    # the field path, what happened and where, in one line
    field = "graphs.g.nodes.n.parameters.o" + ("" if value.startswith("max") else ".value")
    assert reason.startswith(f"{field}: {why} at step 3"), reason
    assert "\n" not in reason
    assert "replayed the 3 updates" in caplog.text


def test_a_first_run_restarts_and_a_later_run_replays_the_same_numbers():
    """One run of 6 steps (restarts interpreted) and 2 runs of 3 (the second replays the first
    on the interpreter) end where the interpreted backend ends."""
    value = "max(c, a)"
    want = _oracle(value, "run")[-1]
    for parts in ([6], [3, 3], [1, 1, 4]):
        sim = Simulation(_model(value), backend="compiled")
        for n in parts:
            sim.run(steps=n)
        assert sim.runner.mode == "interpreted"
        got = np.asarray(sim.value("n", "o"))
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), parts


def test_a_history_too_long_to_replay_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(handback, "REPLAY_UPDATES", 2)
    sim = Simulation(_model("max(c, a)"), backend="compiled")
    sim.run(steps=1)
    sim.run(steps=2)  # (3 updates: more than the history keeps)
    with pytest.raises(MDFError) as e:
        sim.run(steps=3)
    text = str(e.value)
    assert "\n" not in text and text.startswith("graphs.g.nodes.n.parameters.o: ")
    assert "an integer beyond 2**53 at step 3" in text
    assert "more than 2 updates" in text and "backend='interpreted'" in text
