"""The Python API refuses the run arguments the ``mdf`` command refuses (mdf_engine/
run_arguments.py). Oracle: the CLI's own refusal of the same value (exit 2, one line naming
the flag), and the API's MDFError naming the argument."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import EXAMPLES

from mdf_engine import Simulation
from mdf_engine.cli import main
from mdf_engine.errors import MDFError

FN = str(EXAMPLES / "fitzhugh_nagumo.json")


def _cli(argv: list[str]) -> int:
    """The ``mdf`` command's exit status (argparse's refusals exit from inside)."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


BAD_DT = [0.0, -0.05, math.nan, math.inf, -math.inf, np.float32("nan"), -1]


@pytest.mark.parametrize("dt", BAD_DT, ids=repr)
def test_api_refuses_the_dt_the_cli_refuses(dt, capsys):
    assert _cli(["run", FN, "--steps", "3", f"--dt={dt}", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--dt must be a finite number > 0" in err and len(err.strip().splitlines()) == 1
    sim = Simulation(FN, backend="interpreted")
    with pytest.raises(MDFError, match=r"(^|: )dt must be a finite number > 0"):
        sim.run(steps=3, dt=dt)
    with pytest.raises(MDFError, match=r"(^|: )time_increment must be a finite number > 0"):
        sim.evaluate(time_increment=dt)
    assert sim.time == 0.0  # nothing ran
    pytest.importorskip("xarray")
    from mdf_engine.sweep import sweep

    with pytest.raises(MDFError, match=r"(^|: )dt must be a finite number > 0"):
        sweep(FN, {"fn_neuron.a": [0.5]}, steps=3, dt=dt, record=["fn_neuron.V_out"])


@pytest.mark.parametrize("steps", [-1, 1.5])
def test_api_refuses_the_steps_the_cli_refuses(steps, capsys):
    assert _cli(["run", FN, f"--steps={steps}", "--quiet"]) == 2
    assert "steps" in capsys.readouterr().err
    with pytest.raises(MDFError, match=r"(^|: )steps must be"):
        Simulation(FN, backend="interpreted").run(steps=steps, dt=0.05)


@pytest.mark.parametrize("name,value", [("chunk", -1), ("chunk", 0), ("workers", 0)])
def test_sweep_refuses_a_count_below_one(name, value):
    """``chunk=-1`` ran no chunk and returned zeros as the sweep's values."""
    pytest.importorskip("xarray")
    from mdf_engine.sweep import sweep

    with pytest.raises(MDFError, match=rf"{name} must be a whole number >= 1"):
        sweep(
            FN,
            {"fn_neuron.a": [0.5]},
            steps=3,
            dt=0.05,
            record=["fn_neuron.V_out"],
            **{name: value},
        )


def test_cli_refuses_max_cycles_below_one(capsys):
    assert _cli(["run", str(EXAMPLES / "actr_count.json"), "--max-cycles", "0"]) == 2
    assert "--max-cycles must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"steps": 1.5}, "steps must be a whole number"),
        ({"steps": "3"}, "steps must be a whole number"),
        ({"record": "fn_neuron.V_out"}, "record must be a list of 'NODE.PORT' strings"),
        ({"params": [("fn_neuron.a", [1])]}, "params must be a mapping"),
    ],
)
def test_sweep_arguments_of_the_wrong_type_are_mdf_errors(kwargs, message):
    """(they were TypeErrors, or a string record read letter by letter)"""
    pytest.importorskip("xarray")
    from mdf_engine.sweep import sweep

    args = {"params": {"fn_neuron.a": [0.5]}, "steps": 3, "record": ["fn_neuron.V_out"], **kwargs}
    with pytest.raises(MDFError, match=message):
        sweep(FN, args.pop("params"), dt=0.05, **args)


def test_open_dataset_of_a_missing_file(tmp_path):
    pytest.importorskip("xarray")
    from mdf_engine.sweep import open_dataset

    with pytest.raises(MDFError, match="no such file"):
        open_dataset(tmp_path / "nope.nc")
