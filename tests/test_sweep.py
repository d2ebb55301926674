"""Parameter sweeps: batched compiled runs equal single runs, Dask equals local, files reopen.

Oracles: single runs of the interpreted backend on a model with the point's values set (the
definition of a sweep point), and the reference engine (modeci-mdf) for one point.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES
from reference_engine import reference_run

import mdf_engine
from mdf_engine.errors import MDFError
from mdf_engine.sweep import (
    final_table,
    make_design,
    open_dataset,
    save_dataset,
    sweep,
    with_parameters,
)

xr = pytest.importorskip("xarray")

FN = EXAMPLES / "fitzhugh_nagumo.json"
PARAMS = {"fn_neuron.a": "0.5:0.9:40", "stimulus.amplitude": "0.2:1.0:25"}
RECORD = ["fn_neuron.V_out", "fn_neuron.W_out"]
STEPS, DT = 300, 0.05


@pytest.fixture(scope="module")
def fn_sweep():
    return sweep(FN, PARAMS, steps=STEPS, dt=DT, record=RECORD)


def _single(values: dict[str, float]) -> mdf_engine.Simulation:
    sim = mdf_engine.Simulation(with_parameters(FN, values), backend="interpreted")
    return sim, sim.run(steps=STEPS, dt=DT, record=RECORD)


def test_thousand_point_sweep_equals_single_runs(fn_sweep):
    ds = fn_sweep
    assert ds["fn_neuron.V_out"].shape == (40, 25, STEPS)
    rng = np.random.default_rng(1)
    for _ in range(6):
        i, j = int(rng.integers(40)), int(rng.integers(25))
        a = float(ds["fn_neuron.a"][i])
        amp = float(ds["stimulus.amplitude"][j])
        _, res = _single({"fn_neuron.a": a, "stimulus.amplitude": amp})
        for r in RECORD:
            node, port = r.split(".")
            np.testing.assert_allclose(
                ds[r].values[i, j],
                np.ravel(res.trace(node, port)),
                rtol=1e-10,
                atol=1e-12,
                err_msg=f"{r} at a={a} amp={amp}",
            )


def test_a_sweep_point_equals_the_reference_engine(fn_sweep):
    ds = fn_sweep
    i, j = 7, 11
    values = {
        "fn_neuron.a": float(ds["fn_neuron.a"][i]),
        "stimulus.amplitude": float(ds["stimulus.amplitude"][j]),
    }
    ref = reference_run(with_parameters(FN, values).to_dict(), steps=STEPS, dt=DT)
    for r in RECORD:
        node, port = r.split(".")
        np.testing.assert_allclose(ds[r].values[i, j, -1], ref["outputs"][node][port], rtol=1e-9)


def test_interpreted_sweep_equals_compiled_sweep(fn_sweep):
    small = {"fn_neuron.a": [0.5, 0.8], "stimulus.amplitude": [0.2, 1.0]}
    comp = sweep(FN, small, steps=50, dt=DT, record=RECORD)
    interp = sweep(FN, small, steps=50, dt=DT, record=RECORD, backend="interpreted")
    xr.testing.assert_allclose(comp, interp, rtol=1e-12)


def test_dask_local_cluster_gives_the_same_dataset():
    pytest.importorskip("distributed")
    params = {"fn_neuron.a": "0.5:0.9:10", "stimulus.amplitude": "0.2:1.0:6"}
    local = sweep(FN, params, steps=100, dt=DT, record=RECORD)
    dask = sweep(FN, params, steps=100, dt=DT, record=RECORD, cluster="local", workers=2, chunk=16)
    xr.testing.assert_identical(local, dask)


@pytest.mark.parametrize("ext", [".nc", ".npz"])
def test_files_reopen_with_the_same_values(fn_sweep, tmp_path, ext):
    path = tmp_path / f"sweep{ext}"
    save_dataset(fn_sweep, path)
    back = open_dataset(path)
    for r in RECORD:
        np.testing.assert_array_equal(back[r].values, fn_sweep[r].values)
        assert back[r].dims == fn_sweep[r].dims
    for name in PARAMS:
        np.testing.assert_array_equal(back[name].values, fn_sweep[name].values)


def test_csv_has_one_row_per_set_with_final_values(fn_sweep, tmp_path):
    path = tmp_path / "sweep.csv"
    save_dataset(fn_sweep, path)
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == [*PARAMS, *RECORD]
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    assert table.shape == (1000, 4)
    a = fn_sweep["fn_neuron.a"].values
    amp = fn_sweep["stimulus.amplitude"].values
    for row in table[::97]:
        i = int(np.argmin(abs(a - row[0])))
        j = int(np.argmin(abs(amp - row[1])))
        assert row[0] == a[i] and row[1] == amp[j]
        np.testing.assert_array_equal(row[2:], [fn_sweep[r].values[i, j, -1] for r in RECORD])
    header, values = final_table(fn_sweep)
    assert header == lines[0].split(",")
    np.testing.assert_array_equal(values, table)


def test_designs():
    grid = make_design({"A.x": "0:1:3", "B.y": [5, 6]})
    assert grid.values.shape == (6, 2) and grid.dims == ["A.x", "B.y"]
    np.testing.assert_array_equal(grid.values[:, 0], [0, 0, 0.5, 0.5, 1, 1])
    lst = make_design({"A.x": [1, 2, 3], "B.y": [4, 5, 6]}, "list")
    np.testing.assert_array_equal(lst.values, [[1, 4], [2, 5], [3, 6]])
    s1 = make_design({"A.x": "0:2", "B.y": "10:20"}, samples=50, seed=3)
    s2 = make_design({"A.x": "0:2", "B.y": "10:20"}, samples=50, seed=3)
    np.testing.assert_array_equal(s1.values, s2.values)
    assert s1.values.shape == (50, 2)
    assert (s1.values[:, 0] >= 0).all() and (s1.values[:, 0] <= 2).all()
    assert (s1.values[:, 1] >= 10).all() and (s1.values[:, 1] <= 20).all()
    with pytest.raises(MDFError, match="one length"):
        make_design({"A.x": [1, 2], "B.y": [1]}, "list")
    with pytest.raises(MDFError, match="START:STOP:N"):
        make_design({"A.x": "1:2:x"})


def test_sampled_sweep_equals_single_runs():
    ds = sweep(
        FN,
        {"fn_neuron.b": "0.6:1.0", "fn_neuron.tau": "8:15"},
        samples=20,
        seed=5,
        steps=80,
        dt=DT,
        record=["fn_neuron.V_out"],
    )
    assert ds["fn_neuron.V_out"].dims == ("sample", "time")
    for k in (0, 13):
        values = {
            "fn_neuron.b": float(ds["fn_neuron.b"][k]),
            "fn_neuron.tau": float(ds["fn_neuron.tau"][k]),
        }
        sim = mdf_engine.Simulation(with_parameters(FN, values), backend="interpreted")
        res = sim.run(steps=80, dt=DT, record=["fn_neuron.V_out"])
        np.testing.assert_allclose(
            ds["fn_neuron.V_out"].values[k], np.ravel(res.trace("fn_neuron", "V_out")), rtol=1e-10
        )


def test_stateful_parameter_is_swept_as_its_initial_value():
    ds = sweep(FN, {"fn_neuron.V": [-1.5, 0.5]}, steps=40, dt=DT, record=["fn_neuron.V_out"])
    for k, v0 in enumerate([-1.5, 0.5]):
        sim = mdf_engine.Simulation(with_parameters(FN, {"fn_neuron.V": v0}), backend="interpreted")
        res = sim.run(steps=40, dt=DT, record=["fn_neuron.V_out"])
        trace = np.ravel(res.trace("fn_neuron", "V_out"))
        assert trace[0] == v0
        np.testing.assert_allclose(ds["fn_neuron.V_out"].values[k], trace, rtol=1e-10)


def test_bad_sweeps_name_the_problem():
    with pytest.raises(MDFError, match="no parameter 'nope'"):
        sweep(FN, {"fn_neuron.nope": [1, 2]}, steps=2, record=RECORD)
    with pytest.raises(MDFError, match="no node 'ghost'"):
        sweep(FN, {"ghost.a": [1, 2]}, steps=2, record=RECORD)
    with pytest.raises(MDFError, match="recorded"):
        sweep(FN, {"fn_neuron.a": [1, 2]}, steps=2, record=[])


def test_cli_sweep_writes_a_csv(tmp_path, capsys):
    from mdf_engine.cli import main

    out = tmp_path / "s.csv"
    code = main(
        [
            "sweep",
            str(FN),
            "--set",
            "fn_neuron.a=0.5:0.9:3",
            "--set",
            "stimulus.amplitude=0.2,0.6",
            "--steps",
            "30",
            "--dt",
            "0.05",
            "--record",
            "fn_neuron.V_out",
            "-o",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert table.shape == (6, 3)
    single = sweep(
        FN,
        {"fn_neuron.a": "0.5:0.9:3", "stimulus.amplitude": [0.2, 0.6]},
        steps=30,
        dt=0.05,
        record=["fn_neuron.V_out"],
    )
    np.testing.assert_array_equal(
        table[:, 2], single["fn_neuron.V_out"].values[..., -1].reshape(-1)
    )
    assert main(["sweep", str(FN), "--set", "fn_neuron.a", "--record", "fn_neuron.V_out"]) == 2
    assert "NODE.PARAM=START:STOP:N" in capsys.readouterr().err


# -- memory bounded by what is saved (issue 22, goal 6) -----------------------------------------

SMALL = {"fn_neuron.a": [0.5, 0.7, 0.9], "stimulus.amplitude": [0.2, 1.0]}


@pytest.fixture(scope="module")
def single_runs():
    """The oracle: interpreted single runs of every point of SMALL, 40 steps."""
    out = {}
    for a in SMALL["fn_neuron.a"]:
        for amp in SMALL["stimulus.amplitude"]:
            sim = mdf_engine.Simulation(
                with_parameters(FN, {"fn_neuron.a": a, "stimulus.amplitude": amp}),
                backend="interpreted",
            )
            res = sim.run(steps=40, dt=DT, record=RECORD)
            out[a, amp] = np.stack([np.ravel(res.trace(*r.split("."))) for r in RECORD])
    return out


@pytest.mark.parametrize(
    "ext,design", [(".nc", "grid"), (".nc", "list"), (".npz", "grid"), (".csv", "grid")]
)
def test_streamed_file_equals_single_runs(single_runs, tmp_path, ext, design):
    params = SMALL
    if design == "list":
        params = {"fn_neuron.a": [0.5, 0.9, 0.7], "stimulus.amplitude": [1.0, 0.2, 0.2]}
    path = tmp_path / f"s{ext}"
    # chunks of 2 runs: the file is written in three pieces
    final = sweep(FN, params, steps=40, dt=DT, record=RECORD, design=design, output=path, chunk=2)
    points = list(zip(*params.values()))
    if design == "grid":
        points = [(a, amp) for a in params["fn_neuron.a"] for amp in params["stimulus.amplitude"]]
    flat_final = {r: final[r].values.reshape(len(points)) for r in RECORD}
    assert final.sizes["time"] == 1 and float(final["time"][0]) == pytest.approx(39 * DT)
    if ext == ".csv":
        table = np.loadtxt(path, delimiter=",", skiprows=1)
        assert path.read_text().splitlines()[0].split(",") == [*params, *RECORD]
    else:
        back = open_dataset(path)
        assert back.attrs["steps"] == 40 and back.attrs["design"] == design
        # the same file as one written from the whole Dataset in memory
        whole = sweep(FN, params, steps=40, dt=DT, record=RECORD, design=design)
        saved = tmp_path / f"whole{ext}"
        save_dataset(whole, saved)
        xr.testing.assert_identical(back, open_dataset(saved))
    for k, (a, amp) in enumerate(points):
        oracle = single_runs[a, amp]
        for c, r in enumerate(RECORD):
            np.testing.assert_allclose(flat_final[r][k], oracle[c, -1], rtol=1e-10)
            if ext == ".csv":
                assert tuple(table[k, :2]) == (a, amp)
                np.testing.assert_allclose(table[k, 2 + c], oracle[c, -1], rtol=1e-10)
            else:
                series = back[r].values.reshape(len(points), 40)[k]
                np.testing.assert_allclose(series, oracle[c], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", ["compiled", "interpreted"])
def test_final_values_keep_no_series(single_runs, monkeypatch, backend):
    # a limit of 100 recorded numbers: the series (6 runs x 40 steps x 2) would need 480
    monkeypatch.setenv("MDF_ENGINE_MAX_SWEEP_VALUES", "100")
    with pytest.raises(MDFError, match="MDF_ENGINE_MAX_SWEEP_VALUES"):
        sweep(FN, SMALL, steps=40, dt=DT, record=RECORD, backend=backend)
    ds = sweep(FN, SMALL, steps=40, dt=DT, record=RECORD, keep="final", backend=backend)
    assert ds["fn_neuron.V_out"].shape == (3, 2, 1)
    for i, a in enumerate(SMALL["fn_neuron.a"]):
        for j, amp in enumerate(SMALL["stimulus.amplitude"]):
            got = [float(ds[r].values[i, j, 0]) for r in RECORD]
            np.testing.assert_allclose(got, single_runs[a, amp][:, -1], rtol=1e-10)
    with pytest.raises(MDFError, match="unknown keep"):
        sweep(FN, SMALL, steps=4, dt=DT, record=RECORD, keep="all")


def _clipped_model(growth: str) -> dict:
    """One node whose ``o`` is ``max()`` of a float (1, 1) value and an int [3] (PsyNeuLink's
    DDI clipping): its shape changes from step to step, its size does not."""
    from mdf_dicts import one_node

    return one_node(
        {
            "r": {"value": 1.5},
            "a": {"value": growth, "default_initial_value": [[0.0]]},
            "t": {"value": [3]},
            "o": {"value": "max(a - 4, t)"},
        }
    )


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_sweep_records_a_value_whose_shape_follows_max(backend):
    """Oracle: one interpreted ``Simulation`` run per parameter set, its trace read flat."""
    from mdf_engine.simulation import Simulation
    from mdf_engine.sweep import sweep

    model = _clipped_model("a + r")
    ds = sweep(model, {"n.r": [0.5, 1.5]}, steps=6, record=["n.o"], backend=backend)
    for i, r in enumerate([0.5, 1.5]):
        m = _clipped_model(f"a + {r}")
        res = Simulation(m, backend="interpreted").run(steps=6, record=["n.o"])
        want = [np.asarray(v, dtype=float).ravel() for v in res.traces["n.o"]]
        got = ds[next(iter(ds.data_vars))].values[i].reshape(6, -1)
        np.testing.assert_array_equal(got, np.stack(want))
