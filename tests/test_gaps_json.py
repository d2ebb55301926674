"""Every JSON the engine writes is strict JSON (RFC 8259), which any reader takes: a NaN or
infinity is the string "NaN", "Infinity" or "-Infinity" and the document says so in its
"nonfinite" key (mdf_engine/results.py, json_text). Oracle: Python's json parser made strict
(``parse_constant`` refuses the bare NaN/Infinity tokens), and the run's own values."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from mdf_dicts import one_node

from mdf_engine import Simulation
from mdf_engine.cli import main
from mdf_engine.results import NONFINITE_NOTE


def _strict(text: str):
    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def _number(x) -> float:
    return float(x)  # (float("NaN"), float("Infinity"), float("-Infinity") read them back)


PARAMS = {
    "big": {"value": 1e308},
    "up": {"value": "big * 10"},  # inf
    "down": {"value": "-up"},  # -inf
    "gap": {"value": "up - up"},  # NaN
    "v": {"value": "[big, up, down, gap, 1.5]"},
}


def _model(tmp_path, finite: bool):
    params = {"x": {"value": 2.5}} if finite else PARAMS
    path = tmp_path / "m.json"
    path.write_text(json.dumps(one_node(params, "x" if finite else "v")))
    return path


@pytest.mark.parametrize("finite", [False, True])
def test_results_json_is_strict_and_keeps_every_value(tmp_path, finite, capsys):
    path = _model(tmp_path, finite)
    res = Simulation(str(path), backend="interpreted").run(steps=2, record=["n.out"])
    want = np.ravel(res.outputs["n"]["out"]).astype(float)
    trace = [np.ravel(v).astype(float) for v in res.traces["n.out"]]
    assert finite or not np.isfinite(want).all()
    texts = {"to_json": res.to_json(tmp_path / "r.json"), "file": (tmp_path / "r.json").read_text()}
    assert main(["run", str(path), "--steps", "2", "--json", "--quiet"]) == 0
    texts["mdf run --json"] = capsys.readouterr().out
    assert (
        main(
            [
                "run",
                str(path),
                "--steps",
                "2",
                "--record",
                "n.out",
                "-o",
                str(tmp_path / "c.json"),
                "--quiet",
            ]
        )
        == 0
    )
    texts["mdf run -o"] = (tmp_path / "c.json").read_text()
    for what, text in texts.items():
        data = _strict(text)
        got = np.array([_number(x) for x in np.ravel(data["outputs"]["n"]["out"])])
        np.testing.assert_array_equal(got, want, err_msg=what)
        assert ("nonfinite" in data) == (not finite), what
        if not finite:
            assert data["nonfinite"] == NONFINITE_NOTE
        if "traces" in data:
            for step, values in enumerate(data["traces"]["n.out"]):
                got = np.array([_number(x) for x in np.ravel(values)])
                np.testing.assert_array_equal(got, trace[step], err_msg=what)
    if not finite:
        assert set(_strict(texts["file"])["outputs"]["n"]["out"][1:4]) == {
            "Infinity",
            "-Infinity",
            "NaN",
        }
        assert math.isnan(_number("NaN"))
