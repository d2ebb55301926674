"""Model text never becomes code: ids holding newlines and Python statements, run through every
way into the compiled backend (``Simulation(backend="compiled")``, ``mdf run --backend
compiled``, the ``auto`` backend on a long run, ``mdf sweep``), leave no marker file, the graph
still compiles, and no generated module holds any of the model's text.

The oracle is the interpreted backend, which never generates code: both give the same values.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

import mdf_engine
from mdf_engine import cli
from mdf_engine.backends.compiled.generated_source import GeneratedSourceError, check_source

#: Breaks out of the generated ``run`` function into module level, then opens a function of
#: its own so that the rest of the file still parses: the form that ran as code before.
PAYLOAD = "\nimport os;open({marker!r},'w')\ndef _z(nsteps):\n    for step in range(1):\n        #"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(folder))
    return folder


def _model(bad: str, where: str) -> dict:
    """Two nodes A -> B; the ids named by the letters of ``where`` hold ``bad``."""
    ids = {k: k for k in ("A", "B", "p", "o", "f", "i", "e", "k", "g")}
    for w in where:
        ids[w] += bad
    a = {
        "id": ids["A"],
        "parameters": [
            {"id": ids["p"], "value": "p + 1", "default_initial_value": 0}
            if "p" not in where
            else {"id": ids["p"], "value": "3.5"}
        ],
        "functions": [{"id": ids["f"], "value": "np.array([1.0, 2.0]) * 3"}],
        "output_ports": [{"id": ids["o"], "value": ("p" if "p" not in where else "2.0")}],
    }
    b = {
        "id": ids["B"],
        "input_ports": [{"id": ids["i"]}],
        "parameters": [
            {"id": "k", "value": 0.5},
            {
                "id": "acc",
                "value": "acc + i * k" if "i" not in where else "acc + k",
                "default_initial_value": 0,
            },
        ],
        "output_ports": [{"id": "o", "value": "acc"}],
    }
    edge = {
        "id": ids["e"],
        "sender": ids["A"],
        "sender_port": ids["o"],
        "receiver": ids["B"],
        "receiver_port": ids["i"],
    }
    return {"id": "m", "graphs": [{"id": ids["g"], "nodes": [a, b], "edges": [edge]}]}


#: node, parameter, port, function, edge and graph ids (the input port separately: an
#: expression can only read an id that is a Python name)
WHERE = ["ABpofeg", "i"]


def _write(tmp_path: Path, where: str) -> tuple[Path, Path]:
    marker = tmp_path / "marker"
    path = tmp_path / f"attack_{where}.json"
    path.write_text(json.dumps(_model(PAYLOAD.format(marker=str(marker)), where)))
    return path, marker


def _sources(cache: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in cache.glob("*.py")]


def _assert_clean(cache: Path, marker: Path) -> None:
    assert not marker.exists()
    sources = _sources(cache)
    assert sources, "nothing was compiled"
    for src in sources:
        assert src.isascii()
        assert "import os" not in src and "marker" not in src and "_z" not in src
        check_source(src)


@pytest.mark.parametrize("where", WHERE)
def test_ids_holding_code_do_not_run_in_compiled_simulation(where, tmp_path, cache):
    path, marker = _write(tmp_path, where)
    sim = mdf_engine.Simulation(str(path), backend="compiled")
    sim.run(steps=4)
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    oracle = mdf_engine.Simulation(str(path), backend="interpreted")
    oracle.run(steps=4)
    for nid, ports in oracle.outputs.items():
        for port, value in ports.items():
            np.testing.assert_allclose(sim.outputs[nid][port], value, rtol=1e-12)
    _assert_clean(cache, marker)


def test_ids_holding_code_do_not_run_through_the_cli(tmp_path, cache, capsys):
    path, marker = _write(tmp_path, "A")
    assert cli.main(["run", str(path), "--backend", "compiled", "--steps", "3", "--json"]) == 0
    _assert_clean(cache, marker)
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 3


def test_ids_holding_code_do_not_run_under_auto_on_a_long_run(tmp_path, cache):
    from mdf_engine.simulation import AUTO_COMPILE_STEPS

    path, marker = _write(tmp_path, "B")
    sim = mdf_engine.Simulation(str(path))
    sim.run(steps=AUTO_COMPILE_STEPS)
    assert sim.runner.mode == "compiled"
    _assert_clean(cache, marker)


def test_ids_holding_code_do_not_run_through_a_sweep(tmp_path, cache, capsys):
    path, marker = _write(tmp_path, "A")
    assert (
        cli.main(
            ["sweep", str(path), "--set", "B.k=0:1:3", "--steps", "3", "--record", "B.o", "--quiet"]
        )
        == 0
    )
    _assert_clean(cache, marker)


def test_a_function_id_holding_code_in_an_array_valued_function(tmp_path, cache, caplog):
    marker = tmp_path / "marker"
    fid = "f" + PAYLOAD.format(marker=str(marker))
    model = {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {
                        "id": "N",
                        "input_ports": [
                            {"id": "x", "shape": [3], "default_value": [1.0, 2.0, 3.0]}
                        ],
                        "functions": [
                            {
                                "id": fid,
                                "function": "linear",
                                "args": {"variable0": "x", "slope": 2.0, "intercept": 1.0},
                            }
                        ],
                        "parameters": [{"id": "s", "value": "s + 1", "default_initial_value": 0}],
                        "output_ports": [{"id": "o", "value": "x * s"}],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "fn.json"
    path.write_text(json.dumps(model))
    with caplog.at_level(logging.WARNING, logger="mdf_engine"):
        sim = mdf_engine.Simulation(str(path), backend="compiled")
        sim.run(steps=3)
    assert sim.runner.mode == "compiled", sim.runner.fallback_reason
    np.testing.assert_allclose(sim.value("N", fid), [3.0, 5.0, 7.0])
    _assert_clean(cache, marker)


@pytest.mark.parametrize(
    "bad",
    [
        "x = 1\n",
        "# {}\nimport os\n",
        "'text'",
        '"""doc"""',
        "1.5e3",
        "ñame",
        "q_x0.__class__",
    ],
)
def test_the_source_check_refuses_what_the_engine_does_not_write(bad):
    good = "@njit(cache=True, error_model='numpy')\ndef run(S):\n    s0 = S[0]\n"
    check_source(good)
    with pytest.raises(GeneratedSourceError):
        check_source(good + "    " + bad + "\n")
