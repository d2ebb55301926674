"""Results and sweeps as a modeller uses them (issue 24, item 6): traces as arrays, a short
repr, ``to_dataframe()``, ``sweep(duration=)``, the nodes that ran in each step (against the
reference engine's order of execution) and the default plot of a 3-parameter sweep."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import graph_model

from mdf_engine import Simulation
from mdf_engine.simulation import steps_for_duration
from tests.reference_engine import _load, reference_run

FHN = Path(__file__).resolve().parents[1] / "examples" / "fitzhugh_nagumo.json"


def test_traces_arrays_repr_and_dataframe():
    pd = pytest.importorskip("pandas")
    res = Simulation(FHN, backend="interpreted").run(
        steps=50, dt=0.05, record=["fn_neuron.V_out", "fn_neuron.W", "stimulus.out"]
    )
    v = res.trace("fn_neuron", "V_out")
    assert isinstance(res.traces["fn_neuron.V_out"], np.ndarray) and v.shape == (50,)
    assert v.dtype == np.float64 and isinstance(res.times, np.ndarray)
    ref = reference_run(FHN, steps=50, dt=0.05)["outputs"]
    assert v[-1] == pytest.approx(float(ref["fn_neuron"]["V_out"]), rel=1e-12)
    text = repr(res)
    assert len(text) < 300 and "steps=50" in text and "fn_neuron.V_out (50,)" in text
    df = res.to_dataframe()
    assert isinstance(df, pd.DataFrame) and df.index.name == "step"
    assert list(df.columns) == ["time", "fn_neuron.V_out", "fn_neuron.W", "stimulus.out"]
    np.testing.assert_array_equal(df["fn_neuron.V_out"].to_numpy(), v)
    np.testing.assert_array_equal(df["time"].to_numpy(), res.times)
    final = Simulation(FHN, backend="interpreted").run(steps=3, dt=0.05).to_dataframe()
    assert final.shape == (1, 3) and final.index[0] == 3


def test_sweep_duration_is_the_reference_loop():
    pytest.importorskip("xarray")
    from mdf_engine.sweep import sweep

    params = {"fn_neuron.a": [0.5, 0.9]}
    by_duration = sweep(FHN, params, duration=1.0, dt=0.1, record=["fn_neuron.V_out"])
    n = steps_for_duration(1.0, 0.1)  # t=0; while t<=1.0: ...; t+=0.1 in float arithmetic
    assert by_duration.sizes["time"] == n
    by_steps = sweep(FHN, params, steps=n, dt=0.1, record=["fn_neuron.V_out"])
    np.testing.assert_array_equal(
        by_duration["fn_neuron.V_out"].values, by_steps["fn_neuron.V_out"].values
    )


SKIPPING = graph_model(
    {
        "A": {
            "parameters": {"c": {"value": "c + 1", "default_initial_value": 0}},
            "output_ports": {"out": {"value": "c"}},
        },
        "B": {
            "input_ports": {"inp": {}},
            "parameters": {"s": {"value": "s + inp", "default_initial_value": 0}},
            "output_ports": {"out": {"value": "s"}},
        },
    },
    edges={"e": {"sender": "A", "sender_port": "out", "receiver": "B", "receiver_port": "inp"}},
    conditions={
        "node_specific": {
            "B": {
                "type": "Threshold",
                "kwargs": {"dependency": "A", "parameter": "c", "threshold": 3, "comparator": ">="},
            }
        },
        "termination": {"environment_state_update": {"type": "AfterPass", "kwargs": {"n": 0}}},
    },
)


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_fired_nodes_per_step(backend, tmp_path):
    from modeci_mdf.execution_engine import EvaluableGraph

    with contextlib.redirect_stdout(io.StringIO()):
        eg = EvaluableGraph(_load(SKIPPING).graphs[0], verbose=False)
        want = []
        for _ in range(6):
            before = len(eg.order_of_execution)
            eg.evaluate()
            want.append(list(dict.fromkeys(eg.order_of_execution[before:])))
    res = Simulation(SKIPPING, backend=backend).run(steps=6, record=["B.out"], record_fired=True)
    assert res.fired == want
    assert ["A"] in want and ["A", "B"] in want  # the model does skip B
    pytest.importorskip("matplotlib")
    from mdf_engine.viz.runs import plot_run

    w, h = plot_run(res, tmp_path / "fired.png", fired=res.fired)
    assert (tmp_path / "fired.png").stat().st_size > 0 and h > w / 2


def test_sweep_plot_of_three_parameters(tmp_path):
    pytest.importorskip("xarray")
    pytest.importorskip("matplotlib")
    from mdf_engine.cli import main

    out = tmp_path / "sweep.png"
    assert (
        main(
            [
                "-q",
                "sweep",
                str(FHN),
                "--set",
                "fn_neuron.a=0.5:0.9:3",
                "--set",
                "fn_neuron.b=0.6:1.0:2",
                "--set",
                "stimulus.amplitude=0.2:1.0:4",
                "--set",
                "fn_neuron.tau=10:14:3",
                "--steps",
                "5",
                "--dt",
                "0.05",
                "--record",
                "fn_neuron.V_out",
                "--plot",
                str(out),
            ]
        )
        == 0
    )
    from matplotlib.image import imread

    img = imread(out)
    assert img.shape[1] > 2 * img.shape[0]  # one row of 4 facets side by side
