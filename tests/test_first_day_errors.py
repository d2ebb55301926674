"""Errors name the file (issue 24, item 9): a condition type typo, an operator failing at run
time, a --check-finite stop, an export refusal, an export into a missing directory; each is one
line ``mdf: error: FILE: FIELD.PATH: what`` with exit status 2, on both backends."""

from __future__ import annotations

import json

import pytest

from mdf_engine import Simulation
from mdf_engine.cli import main
from mdf_engine.errors import MDFError


def _graph(nodes: dict, conditions: dict | None = None) -> dict:
    g = {"nodes": nodes}
    if conditions:
        g["conditions"] = conditions
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": g}}}


COUNTER = {
    "n": {
        "parameters": {"x": {"value": "x * 10", "default_initial_value": 1e300}},
        "output_ports": {"o": {"value": "x"}},
    }
}
MODELS = {
    "typo": (
        _graph(COUNTER, {"node_specific": {"n": {"type": "EveryNCals", "kwargs": {}}}}),
        "graphs.g.conditions.node_specific.n.type: unknown condition type 'EveryNCals'",
    ),
    "op": (
        _graph(
            {
                "n": {
                    "input_ports": {"i": {"shape": [3]}},
                    "functions": {
                        "f": {"function": "onnx::MatMul", "args": {"A": "i", "B": [[1.0, 2.0]]}}
                    },
                    "output_ports": {"o": {"value": "f"}},
                }
            }
        ),
        "graphs.g.nodes.n.functions.f: MatMul: inner dimensions differ",
    ),
    "finite": (_graph(COUNTER), "graphs.g.nodes.n: non-finite value in parameter 'x' at step 8"),
}


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("case", list(MODELS))
def test_run_errors_name_the_file(case, backend, tmp_path, capsys):
    model, want = MODELS[case]
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(model))
    argv = ["run", str(path), "--steps", "12", "--check-finite", "--backend", backend]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"mdf: error: {path}: {want}"), err
    with pytest.raises(MDFError) as e:  # the Python API names it too
        Simulation(str(path), backend=backend, check_finite=True).run(steps=12)
    assert str(e.value).startswith(f"{path}: {want}")


def test_export_errors_name_the_file(tmp_path, capsys):
    pytest.importorskip("onnx")
    path = tmp_path / "stateful.json"
    path.write_text(json.dumps(_graph(COUNTER)))
    assert main(["export", "--onnx", str(path), str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith(f"mdf: error: {path}: graphs.g.nodes.n.parameters.x:")
        and "stateful" in err
        and "\n" not in err
    )
    stateless = tmp_path / "relu.json"
    stateless.write_text(
        json.dumps(
            _graph(
                {
                    "n": {
                        "input_ports": {"i": {"shape": [3]}},
                        "functions": {"f": {"function": "onnx::Relu", "args": {"X": "i"}}},
                        "output_ports": {"o": {"value": "f"}},
                    }
                }
            )
        )
    )
    out = tmp_path / "no" / "such" / "x.onnx"
    assert main(["export", "--onnx", str(stateless), str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"mdf: error: {out}: cannot write here: no directory '{out.parent}'"
    assert not out.parent.exists()
