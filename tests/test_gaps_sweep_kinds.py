"""A sweep's variables hold each recorded value in the dtype and shape a single interpreted
run gives (mdf_engine/sweep_records.py), on both backends.

Oracle: single interpreted ``Simulation`` runs of every parameter set (the definition of a
sweep point). A value whose kind is the argument ``max()``/``min()`` chose (PsyNeuLink's DDI
clipping: a float ``(1, 1)`` below the threshold, the int64 ``(1,)`` threshold once clipped) is
one variable in numpy's promotion of the kinds the runs give, the shape of most axes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import one_node

from mdf_engine.errors import MDFError
from mdf_engine.simulation import Simulation
from mdf_engine.sweep import sweep, with_parameters

pytest.importorskip("xarray")

BACKENDS = ["interpreted", "compiled"]
DDI = Path(__file__).resolve().parent / "data" / "wild" / "psyneulink" / "v0.21.0.0"


def _ddi() -> dict:
    """PsyNeuLink's DDI export with trials of 6 passes: a trial ends below the threshold (a
    float (1, 1)) or clipped at it (the int64 [100])."""
    d = json.loads((DDI / "tests_ddi_threshold.json").read_text())
    graph = next(iter(next(iter(d.values()))["graphs"].values()))
    graph["conditions"]["termination"]["environment_state_update"] = {
        "type": "AfterNPasses",
        "kwargs": {"n": 6, "time_scale": "TimeScale.ENVIRONMENT_STATE_UPDATE"},
    }
    return d


def _counter(start: int) -> dict:
    """An int64 counter ``c`` (no max/min) beside a float ``x`` growing by ``r`` (a swept
    value is a float: ``c + r`` would be one)."""
    return one_node(
        {
            "r": {"value": 2},
            "c": {"value": "c + 1", "default_initial_value": start},
            "x": {"value": "x + r", "default_initial_value": 0.0},
        },
        "c",
    )


CASES = {
    # (model, swept values, record, steps, initializer)
    "ddi": (
        _ddi(),
        {"A.previous_value": [0.0, 60.0, -95.0]},
        ["A.A_OutputPort_0"],
        4,
        {"A_InputPort_0": np.array([[3.0]])},
    ),
    "counter": (_counter(5), {"n.r": [1, 3]}, ["n.c", "n.out", "n.x"], 5, None),
}


def _oracle(model, params, record, steps, init) -> list[dict[str, list]]:
    name, values = next(iter(params.items()))
    runs = []
    for v in values:
        sim = Simulation(with_parameters(model, {name: v}), backend="interpreted")
        res = sim.run(steps=steps, initializer=init, record=record)
        runs.append({r: res.traces[r] for r in record})
    return runs


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_sweep_keeps_the_interpreters_dtype_and_shape(case, backend):
    model, params, record, steps, init = CASES[case]
    runs = _oracle(model, params, record, steps, init)
    ds = sweep(model, params, steps=steps, record=record, initializer=init, backend=backend)
    for r in record:
        values = [np.asarray(v) for run in runs for v in run[r]]
        dtype = np.result_type(*values)
        shape = max((v.shape for v in values), key=len)
        got = ds[r].values
        assert got.dtype == dtype, (r, got.dtype, dtype)
        assert got.shape == (len(runs), steps, *shape), (r, got.shape)
        for i, run in enumerate(runs):
            for step, v in enumerate(run[r]):
                # the same number, exactly, in the variable's dtype and shape
                np.testing.assert_array_equal(got[i, step], np.asarray(v).reshape(shape))
                assert np.asarray(v).astype(dtype).reshape(shape) == got[i, step]
    if case == "ddi":  # both alternatives were reached
        kinds = {(v.dtype.name, v.shape) for run in runs for v in map(np.asarray, run[record[0]])}
        assert kinds == {("int64", (1,)), ("float64", (1, 1))}


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_integer_beyond_2_53_is_never_rounded(backend):
    start = 2**53 - 3
    model = _counter(start)
    # within 2**53: exact int64 (the compiled record holds them as floats, exactly)
    ds = sweep(model, {"n.r": [1]}, steps=3, record=["n.c"], backend=backend)
    res = Simulation(with_parameters(model, {"n.r": 1}), backend="interpreted").run(
        steps=3, record=["n.c"]
    )
    assert ds["n.c"].dtype == np.int64
    np.testing.assert_array_equal(ds["n.c"].values[0], np.array(res.traces["n.c"]))
    # beyond: refused, naming the record, on both backends (never a rounded number)
    with pytest.raises(MDFError, match=r"record 'n.c'.*beyond 2\*\*53"):
        sweep(model, {"n.r": [1, 2]}, steps=6, record=["n.c"], backend=backend)


def test_a_swept_parameter_is_not_a_record():
    with pytest.raises(MDFError, match="record 'n.r': a swept parameter is a coordinate"):
        sweep(_counter(0), {"n.r": [1, 2]}, steps=2, record=["n.c", "n.r"])


def test_files_of_an_integer_record(tmp_path):
    """A .nc file holds records as float64 (NetCDF-3 has no int64), written from memory or
    while the sweep runs alike; a .npz saved from memory keeps int64. Both exact."""
    from mdf_engine.sweep import open_dataset, save_dataset

    model, params = _counter(2**40), {"n.r": [1.5, 2.0]}
    ds = sweep(model, params, steps=3, record=["n.c"], backend="interpreted")
    save_dataset(ds, tmp_path / "m.nc")
    save_dataset(ds, tmp_path / "m.npz")
    sweep(model, params, steps=3, record=["n.c"], backend="interpreted", output=tmp_path / "s.nc")
    back = open_dataset(tmp_path / "m.nc")
    pytest.importorskip("xarray").testing.assert_identical(back, open_dataset(tmp_path / "s.nc"))
    assert back["n.c"].dtype == np.float64
    np.testing.assert_array_equal(back["n.c"].values, ds["n.c"].values)
    npz = open_dataset(tmp_path / "m.npz")["n.c"]
    assert npz.dtype == np.int64
    np.testing.assert_array_equal(npz.values, ds["n.c"].values)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variant_integer_beyond_2_53_is_refused(backend):
    """``max(a - 4, t)`` of a float ``(1, 1)`` and the int64 ``[2**53 + 1]``: the variable is a
    float64 (it also holds floats), which does not hold that integer: the interpreted sweep
    refuses the record, and the compiled batch stops where max() lets the integer win (its
    float slot would round it), naming the backend to use instead."""
    model = one_node(
        {
            "r": {"value": 1.5},
            "a": {"value": "a + r", "default_initial_value": [[0.0]]},
            "t": {"value": [2**53 + 1]},
            "o": {"value": "max(a - 4, t)"},
        }
    )
    expected = r"record 'n.o'.*beyond 2\*\*53" if backend == "interpreted" else r"beyond 2\*\*53"
    with pytest.raises(MDFError, match=expected):
        sweep(model, {"n.r": [0.5, 1.5]}, steps=3, record=["n.o"], backend=backend)
