"""A later compiled run that fails on a model value (a Gather index out of range, given by a
later call's initializer or reached by the state) reports the error as the interpreted
backend does for the same calls: naming the node and the field, one line
(``compiled/handback.py``: the interpreter replays the calls and meets the failure itself).
A compiled sweep whose later parameter sets fail names the first failing set, the node and
the field (``compiled/batch.py``). The oracle is the interpreted backend's own message (numpy's
and the kernel's wording)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mdf_engine import Simulation, cli
from mdf_engine.errors import MDFError


def _model(index: str) -> dict:
    node = {
        "id": "A",
        "input_ports": [
            {"id": "i", "shape": [8], "default_value": [0.5 * k for k in range(8)]},
            {"id": "j", "default_value": 1},
        ],
        "parameters": [
            {"id": "t", "value": "t + 1", "default_initial_value": 0},
            {"id": "idx", "value": index},
            {"id": "x", "function": {"onnx::Gather": {"data": "i", "indices": "idx"}}},
        ],
        "output_ports": [{"id": "o", "value": "x"}],
    }
    return {"id": "m", "graphs": [{"id": "g", "nodes": [node]}]}


# (index, the calls: (steps, initializer, evaluate() rather than run()))
CASES = {
    "an initializer, run": ("j", [(1, {"j": 1}, False), (1, {"j": 8}, False)]),
    "an initializer, evaluate": ("j", [(1, {"j": 2}, True), (1, {"j": -9}, True)]),
    "the state": ("int(t)", [(2, None, False), (1, None, True), (5, None, False)]),
}


def _calls(backend: str, index: str, calls: list) -> tuple[str, list]:
    sim = Simulation(_model(index), backend=backend)
    seen = []
    with pytest.raises(MDFError) as err:
        for steps, initializer, evaluate in calls:
            if evaluate:
                sim.evaluate(initializer=initializer)
            else:
                sim.run(steps=steps, initializer=initializer)
            seen.append(np.copy(sim.value("A", "x")))
            if backend == "compiled":
                assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    return str(err.value), seen


@pytest.mark.parametrize("case", CASES)
def test_a_later_run_names_the_node_as_the_interpreter(case, tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path / "cache"))
    index, calls = CASES[case]
    want, want_values = _calls("interpreted", index, calls)
    got, got_values = _calls("compiled", index, calls)
    assert got == want and "graphs.g.nodes.A.parameters.x" in got, (got, want)
    assert len(got_values) == len(calls) - 1 == len(want_values)
    np.testing.assert_array_equal(got_values, want_values)


def test_a_sweep_names_the_parameter_set_and_the_node(tmp_path, monkeypatch, capsys):
    """A compiled sweep whose later parameter sets index out of range (a parallel batch's
    failure) gives the interpreted sweep's line, naming the first failing set."""
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path / "cache"))
    model = _model("k")
    model["graphs"][0]["nodes"][0]["parameters"].insert(0, {"id": "k", "value": 1})
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    lines = {}
    for backend in ("interpreted", "compiled"):
        args = ["sweep", str(path), "--set", "A.k=0:16:3", "--steps", "2", "--record", "A.o"]
        rc = cli.main([*args, "--quiet", "--backend", backend, "-o", str(tmp_path / "s.npz")])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1, err
        lines[backend] = err[0]
    assert "parameter set 1: " in lines["compiled"]
    assert lines["compiled"].replace("parameter set 1: ", "") == lines["interpreted"], lines
