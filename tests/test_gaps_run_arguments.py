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
