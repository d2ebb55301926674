"""Loader errors name the file and field path; expressions outside the safe subset are refused
with MDFError before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mdf_engine
from mdf_engine import MDFError
from mdf_engine.expressions import parse


def _model(value, extra_params=None):
    params = {"x": {"value": value}}
    params.update(extra_params or {})
    return {
        "m": {
            "graphs": {
                "g1": {
                    "nodes": {"A": {"parameters": params, "output_ports": {"out": {"value": "x"}}}}
                }
            }
        }
    }


def test_import_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(_model(f"__import__('os').system('touch {marker}')")))
    with pytest.raises(MDFError) as err:
        mdf_engine.Simulation(str(path)).run(steps=1)
    assert "graphs.g1.nodes.A.parameters.x.value" in str(err.value)
    assert str(path) in str(err.value)
    assert not marker.exists()
    proc = subprocess.run(
        [sys.executable, "-m", "mdf_engine.cli", "run", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists()


@pytest.mark.parametrize(
    "text",
    [
        "x.__class__",
        "().__class__.__bases__",
        "__builtins__",
        "open('/etc/passwd')",
        "eval('1')",
        "exec('1')",
        "(lambda: 1)()",
        "[i for i in range(3)]",
        "x.shape",
        "numpy.random.seed(1)",
        "getattr(x, 'y')",
        "globals()",
        "f'{x}'",
        "numpy.load('a')",
        "math.__dict__",
        "*x",
        "x if True else __import__('os')",
        "{x: 1}",
        "{**x}",
    ],
)
def test_unsafe_expressions_are_refused(text):
    with pytest.raises(MDFError):
        parse(text, "here")


@pytest.mark.parametrize(
    "text,env,expected",
    [
        ("x + 1", {"x": 2}, 3),
        ("math.exp(0) + numpy.sin(0)", {}, 1.0),
        ("x[1] * 2", {"x": [1, 5]}, 10),
        ("a if a > b else b", {"a": 3, "b": 4}, 4),
        ("max(a, b) - min(a, b)", {"a": 3, "b": 7}, 4),
        ("1 < x <= 3", {"x": 3}, True),
    ],
)
def test_safe_subset_values(text, env, expected):
    assert parse(text).evaluate(env) == expected


def test_unknown_name_names_the_parameter(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model("y + 1")))
    with pytest.raises(MDFError, match=r"graphs\.g1\.nodes\.A\.parameters\.x\.value.*'y'"):
        mdf_engine.Simulation(str(path))


@pytest.mark.parametrize(
    "mutate,path_fragment",
    [
        (
            lambda d: d["m"]["graphs"]["g1"].update(
                edges={
                    "e": {
                        "sender": "A",
                        "receiver": "B",
                        "sender_port": "out",
                        "receiver_port": "i",
                    }
                }
            ),
            "edges.e.receiver",
        ),
        (
            lambda d: d["m"]["graphs"]["g1"]["nodes"]["A"].update(
                input_ports={"i": {"shape": [-1]}}
            ),
            "input_ports.i.shape",
        ),
        (
            lambda d: d["m"]["graphs"]["g1"]["nodes"]["A"].update(
                input_ports={"i": {"reduce": "max"}}
            ),
            "input_ports.i.reduce",
        ),
    ],
)
def test_malformed_fields_name_their_path(tmp_path, mutate, path_fragment):
    data = _model("1")
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MDFError) as err:
        mdf_engine.load(str(path))
    assert path_fragment in str(err.value) and str(path) in str(err.value)


def test_yaml_object_tags_are_refused(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("m:\n  graphs: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(MDFError, match="cannot parse"):
        mdf_engine.load(str(path))


def test_round_trip_through_save(tmp_path):
    from conftest import SHARED_MODELS

    src = SHARED_MODELS / "abc_conditions.json"
    if not src.exists():
        pytest.skip("shared models absent")
    m = mdf_engine.load(src)
    out = tmp_path / "copy.yaml"
    mdf_engine.save(m, out)
    again = mdf_engine.load(out)
    assert again.to_dict() == m.to_dict()
    a = mdf_engine.Simulation(m).run(steps=3).outputs
    b = mdf_engine.Simulation(again).run(steps=3).outputs
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
