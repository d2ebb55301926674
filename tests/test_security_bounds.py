"""Memory safety of compiled code: a subscript whose index grows past the array over the steps
ends in an MDFError naming the field (and, compiled, the step) on both backends, never in a
read out of bounds. The oracle is the interpreted backend (numpy's own bounds check): the same
field, the same numpy wording, and the same values up to the failing step."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError, cli


def _model(index: str, dims: int = 1) -> dict:
    shape = [4] * dims
    default = np.arange(4.0**dims).reshape(shape).tolist()
    return {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {
                        "id": "A",
                        "input_ports": [{"id": "i", "shape": shape, "default_value": default}],
                        "parameters": [
                            {"id": "k", "value": 0.5},
                            {"id": "t", "value": "t + 1", "default_initial_value": 0},
                            {"id": "x", "value": f"i[{index}] * k"},
                        ],
                        "output_ports": [{"id": "o", "value": "x"}],
                    }
                ],
            }
        ],
    }


CASES = [
    ("int(t)", 1),
    ("-int(t) - 1", 1),
    ("int(t) * 3 - 2", 1),
    ("0, int(t)", 2),
    ("int(t), 1", 2),
    ("1, 2, int(t)", 3),
]


@pytest.mark.parametrize("index,dims", CASES)
def test_an_index_out_of_bounds_is_an_error_on_both_backends(index, dims, tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model(index, dims)))
    errors, values = {}, {}
    for backend in ("interpreted", "compiled"):
        sim = mdf_engine.Simulation(str(path), backend=backend)
        seen = []
        with pytest.raises(MDFError) as err:
            for _ in range(12):
                sim.run(steps=1)
                seen.append(np.copy(sim.value("A", "x")))
        if backend == "compiled":
            assert sim.runner.mode == "compiled", sim.runner.fallback_reason
        errors[backend], values[backend] = str(err.value), seen
    assert "graphs.g.nodes.A.parameters.x.value" in errors["compiled"]
    assert errors["compiled"].startswith(errors["interpreted"]), errors
    assert "at step" in errors["compiled"]
    np.testing.assert_allclose(values["compiled"], values["interpreted"], rtol=1e-12)


def test_a_long_compiled_run_and_a_sweep_stop_at_the_bound(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model("int(t)")))
    with pytest.raises(MDFError, match=r"index 4 is out of bounds.*\(at step 3\)"):
        mdf_engine.Simulation(str(path), backend="compiled").run(steps=100_000)
    rc = cli.main(
        ["sweep", str(path), "--set", "A.k=0:1:3", "--steps", "50", "--record", "A.o", "--quiet"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "parameters.x.value" in err[0], err
