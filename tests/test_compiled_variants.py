"""Values whose kind is the argument Python's ``max()``/``min()`` chose, on the compiled
backend (issue 22, goal 2; mdf_engine/backends/compiled/variants.py).

PsyNeuLink's DriftDiffusionIntegrator clips ``min(max(unclipped, -1 * threshold),
threshold)``: the interpreted backend (the oracle here, itself checked against PsyNeuLink's
stored runs in tests/test_wild_psyneulink.py) gives a float ``(1, 1)`` below the threshold and
the int64 ``(1,)`` threshold once clipped. The compiled backend must compile those exports and
give, after every trial, the same numbers bit for bit in the same dtype and shape. The exports
end a trial at the threshold, so the tests also run them with a trial of a fixed number of
passes: then a trial ends below the threshold (a float) or clipped at either bound (an
integer), as the inputs say.
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import one_node

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.backends.compiled.layout import Layout

PNL = Path(__file__).resolve().parent / "data" / "wild" / "psyneulink"
VERSIONS = ("v0.15.3.0", "v0.21.0.0")
#: the input of each trial: up to the upper bound, back under it, down to the lower bound
INPUTS = [1.0, 1.0, 0.5, -1.0, -3.0, -10.0, -10.0, 0.0, 4.0, 2.0]


def _ddi(version: str, passes: int | None) -> dict:
    """The export, its trials ending at the threshold (``passes`` None) or after ``passes``
    passes."""
    d = json.loads((PNL / version / "tests_ddi_threshold.json").read_text())
    if passes is not None:
        graph = next(iter(next(iter(d.values()))["graphs"].values()))
        graph["conditions"]["termination"]["environment_state_update"] = {
            "type": "AfterNPasses",
            "kwargs": {"n": passes, "time_scale": "TimeScale.ENVIRONMENT_STATE_UPDATE"},
        }
    return d


def _snapshot(sim: Simulation) -> dict:
    names = [
        "DriftDiffusionIntegrator_Function_0_lower_clipped",
        "DriftDiffusionIntegrator_Function_0_value_result",
        "A_DriftDiffusionIntegrator_Function_0",
        "previous_value",
    ]
    out = {("out", p): v for p, v in sim.outputs["A"].items()}
    out.update({("value", n): sim.value("A", n) for n in names})
    return out


def _same(got, want, what: str) -> None:
    """Bit for bit, in the same Python and numpy types, dtypes and shapes."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{what}[{k}]")
        return
    g, w = np.asarray(got), np.asarray(want)
    assert (g.dtype, g.shape) == (w.dtype, w.shape), (
        f"{what}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
    )
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), what
    np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("passes", [None, 40])
@pytest.mark.parametrize("version", VERSIONS)
def test_ddi_threshold_exports_compile_and_equal_interpreted(version, passes, caplog):
    sims = {b: Simulation(_ddi(version, passes), backend=b) for b in ("interpreted", "compiled")}
    seen = set()
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        for t, x in enumerate(INPUTS):
            for sim in sims.values():
                sim.evaluate(initializer={"A_InputPort_0": np.array([[x]])})
            want, got = _snapshot(sims["interpreted"]), _snapshot(sims["compiled"])
            for k in want:
                _same(got[k], want[k], f"trial {t} {k}")
            assert sims["compiled"].time_steps == sims["interpreted"].time_steps, f"trial {t}"
            out = np.asarray(want[("out", "A_OutputPort_0")])
            seen.add((out.dtype.name, out.shape, float(out.reshape(-1)[0])))
    runner = sims["compiled"].runner
    assert runner.mode == "compiled", runner.fallback_reason
    kinds = {(d, s) for d, s, _ in seen}
    if passes is None:  # every trial ends clipped, at the upper bound (the export's run)
        assert kinds == {("int64", (1,))}
    else:  # trials end below the threshold and clipped at both bounds
        assert kinds == {("int64", (1,)), ("float64", (1, 1))}
        assert {v for d, _, v in seen if d == "int64"} == {100.0, -100.0}


@pytest.mark.parametrize("version", VERSIONS)
def test_ddi_threshold_compiled_matches_psyneulink(version):
    """The compiled run against PsyNeuLink's own stored run of the export."""
    oracle = json.loads((PNL / version / "tests_ddi_threshold.oracle.json").read_text())
    sim = Simulation(
        mdf_engine.load(str(PNL / version / "tests_ddi_threshold.json")),
        backend="compiled",
        scheduling_mode=oracle["scheduling_mode"],
    )
    for t, trial in enumerate(oracle["trials"]):
        sim.evaluate(
            initializer={k: np.array(v[t], dtype=float) for k, v in oracle["inputs"].items()}
        )
        for port, want in trial.items():
            np.testing.assert_array_equal(np.ravel(sim.outputs["A"][port]), np.ravel(want))
        assert [sorted(s) for s in sim.time_steps] == oracle["execution"][t]
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason


def _model(params: dict) -> dict:
    base = {
        "x": {"value": "x + 1", "default_initial_value": 0.0},
        "a": {"value": "a + 1.5", "default_initial_value": [[0.0]]},
        "t": {"value": [3]},
    }
    return one_node({**base, **params})


def _compare(model: dict, names: list[str], steps: int = 8) -> Simulation:
    """Both backends step by step: every named value and the output equal."""
    sims = {b: Simulation(copy.deepcopy(model), backend=b) for b in ("interpreted", "compiled")}
    for step in range(steps):
        for sim in sims.values():
            sim.run(steps=1)
        for p in names:
            want, got = sims["interpreted"].value("n", p), sims["compiled"].value("n", p)
            _same(got, want, f"step {step} {p}")
        _same(sims["compiled"].outputs["n"]["out"], sims["interpreted"].outputs["n"]["out"], "out")
    return sims["compiled"]


@pytest.mark.parametrize(
    "params",
    [
        # clipped by an integer array: the value, a copy, a tuple holding it, an item of it
        {
            "o": {"value": "min(max(a - 6, -1 * t), t)"},
            "c": {"value": "o"},
            "p": {"value": "(o, x)"},
            "q": {"value": "p[0]"},
        },
        # a value fed back: its initial value is an integer array, then either kind
        {"o": {"value": "min(o + a - 4, t)", "default_initial_value": [0]}},
        # three arguments of three kinds, one a scalar integer
        {"o": {"value": "max(a - 6, 0, t - 4.5)"}},
        # kinds that do not follow: a float sum, a comparison
        {
            "o": {"value": "max(a - 6, t)"},
            "s": {"value": "o + 0.5 * a"},
            "b": {"value": "o - 0.5 * a > 2"},
        },
    ],
)
def test_variants_equal_interpreted_in_dtype_and_shape(params):
    sim = _compare(_model(params), [*params, "a", "t"])
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason


def test_a_use_whose_kind_would_follow_runs_interpreted(caplog):
    """``o * 2`` is int64 or float64 as ``o`` is: not compiled, and the log line names it."""
    model = _model({"o": {"value": "max(a - 6, t)"}, "d": {"value": "o * 2"}})
    with caplog.at_level(logging.INFO, logger="mdf_engine"):
        sim = _compare(model, ["o", "d"])
    assert sim.runner.mode == "interpreted"
    assert "parameters.d: reads a value whose kind is the argument max()/min() chose" in (
        sim.runner.fallback_reason
    )
    assert any(sim.runner.fallback_reason in r.getMessage() for r in caplog.records)


def test_the_layout_keeps_variants():
    """The compile cache's record of a variant slot (alternatives, tag) reads back."""
    sim = Simulation(_model({"o": {"value": "min(max(a - 6, -1 * t), t)"}}), backend="compiled")
    sim.run(steps=2)
    layout = sim.runner._layout
    again = Layout.from_json(json.loads(json.dumps(layout.to_json())))
    held = [s for s in again.slots.values() if s.alts]
    assert held and [s.alts for s in held] == [s.alts for s in layout.slots.values() if s.alts]
    assert [s.won for s in held] == [s.won for s in layout.slots.values() if s.alts]


def test_an_integer_beyond_2_53_winning_over_a_float_is_not_rounded():
    """The float slot would round it: a first run restarts interpreted (the interpreter's
    int64), a later run is handed to the interpreted backend (handback.py); never a silent
    wrong number."""
    big = "t * 9007199254740993"  # (the float wins for 4 steps, then this integer)
    model = _model({"o": {"value": f"max(1e17 - a * 1e16, {big})"}})
    sims = {b: Simulation(copy.deepcopy(model), backend=b) for b in ("interpreted", "compiled")}
    for sim in sims.values():
        sim.run(steps=6)
    _same(sims["compiled"].value("n", "o"), sims["interpreted"].value("n", "o"), "o")
    assert np.asarray(sims["compiled"].value("n", "o")).dtype == np.int64
    sim = sims["compiled"]
    assert sim.runner.mode == "interpreted"
    assert "an integer beyond 2**53" in sim.runner.fallback_reason
    sim = Simulation(copy.deepcopy(model), backend="compiled")
    sim.run(steps=2)
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    sim.run(steps=4)
    assert sim.runner.mode == "interpreted"
    assert "parameters.o: an integer beyond 2**53 at step 4" in sim.runner.fallback_reason
    _same(sim.value("n", "o"), sims["interpreted"].value("n", "o"), "o")


def test_a_handed_over_variant_keeps_its_kind():
    """The interpreter's value written into a variant slot (handover.py) sets its tag, and
    reads back as that value: dtype, shape and numbers."""
    from mdf_engine.backends.compiled.handover import _put
    from mdf_engine.backends.compiled.layout import Slot, Storage, read_slot

    slot = Slot(Storage.ARRAY, 0, (1, 1), alts=[("float64", (1, 1)), ("int64", (1,))], won=0)
    state = {"S": np.zeros(1), "A": [np.zeros((1, 1))]}
    for value in (np.array([100]), np.array([[-2.5]]), np.array([-100])):
        assert _put(state, slot, value) is None
        _same(read_slot(state, slot), value, repr(value))
    assert "max()/min() does not give" in _put(state, slot, np.array([1.5]))
