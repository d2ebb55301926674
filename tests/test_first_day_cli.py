"""The command line a new user meets (issue 24, items 2, 5 and 7): every subcommand the README
documents works on the core install or says in one line which extra to install; ``--version``,
``-v``/``-q``, ``run --set`` and ``--seed``; large arrays summarised in ``run`` and ``info``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from mdf_engine.cli import main
from mdf_engine.extras import EXTRAS
from tests.reference_engine import assert_outputs_close, reference_run

ROOT = Path(__file__).resolve().parents[1]
FHN = ROOT / "examples" / "fitzhugh_nagumo.json"
ARRAYS = ROOT / "examples" / "arrays_matrix_edge.json"
OPTIONAL = [
    "xarray",
    "dask",
    "distributed",
    "matplotlib",
    "onnx",
    "onnxruntime",
    "modeci_mdf",
    "tqdm",
]

# Each command of the README's command list, run where none of OPTIONAL can be imported.
SCRIPT = r"""
import contextlib, io, json, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None          # "import name" now raises ModuleNotFoundError
from mdf_engine.cli import main
out = []
for argv in json.loads(sys.argv[2]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    out.append([rc, err.getvalue()])
print(json.dumps(out))
"""


def test_readme_commands_on_the_core_install(tmp_path):
    m = str(FHN)
    commands = {
        "run": ["run", m, "--steps", "3", "--dt", "0.05", "-o", str(tmp_path / "r.csv")],
        "run --plot": ["run", m, "--steps", "3", "--dt", "0.05", "--plot", str(tmp_path / "p.png")],
        "sweep": ["sweep", m, "--set", "fn_neuron.a=0.5:0.9:2", "--record", "fn_neuron.V_out"],
        "draw": ["draw", m, str(tmp_path / "d.png")],
        "export": [
            "export",
            "--onnx",
            str(ROOT / "examples" / "standard_functions.json"),
            str(tmp_path / "x.onnx"),
        ],
        "import": ["import", str(tmp_path / "missing.onnx"), str(tmp_path / "i.json")],
        "info": ["info", m],
        "validate": ["validate", m],
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(OPTIONAL), json.dumps(list(commands.values()))],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    results = dict(zip(commands, json.loads(done.stdout)))
    for name in ("run", "info", "validate"):
        assert results[name][0] == 0, (name, results[name])
    extras = {
        "run --plot": "plot",
        "sweep": "sweep",
        "draw": "plot",
        "export": "onnx",
        "import": "onnx",
    }
    for name, extra in extras.items():
        rc, err = results[name]
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1, (name, rc, err)
        assert lines[0].startswith("mdf: error:") and f"mdf-engine[{extra}]" in lines[0], err


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"mdf {version('mdf-engine')}"


def _mdf(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DASK_LOGGING__DISTRIBUTED", None)
    return subprocess.run(
        [sys.executable, "-m", "mdf_engine.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_quiet_and_verbose():
    """FHN without --dt logs one warning: shown by default, hidden by -q; -v adds INFO lines
    (graph-scheduler's note on nodes without conditions)."""
    plain, quiet, verbose = (
        _mdf(*flags, "run", str(FHN), "--steps", "2") for flags in ([], ["-q"], ["-v"])
    )
    assert plain.returncode == quiet.returncode == verbose.returncode == 0
    assert len(plain.stderr.splitlines()) == 1 and "no dt given" in plain.stderr
    assert quiet.stdout == quiet.stderr == ""
    assert "no dt given" in verbose.stderr and "have no Conditions" in verbose.stderr


def test_quiet_prints_nothing_on_success(tmp_path, capsys):
    """``-q``: "print nothing but errors" (the help of every command), also for the summary
    lines of validate, export and import, which print them without it."""
    pytest.importorskip("onnx")
    onnx_file = str(tmp_path / "fn.onnx")
    commands = [
        ["validate", str(FHN)],
        ["export", "--onnx", str(FHN), onnx_file, "--step"],
        ["import", onnx_file, str(tmp_path / "fn.json")],
    ]
    for argv in commands:
        assert main(argv) == 0, argv
        assert capsys.readouterr().out.strip(), argv
        for quiet in (["-q", *argv], [*argv, "-q"]):
            assert main(quiet) == 0, quiet
            assert capsys.readouterr().out == "", quiet


def test_dask_info_lines_hidden_unless_verbose():
    done = _mdf(
        "sweep",
        str(FHN),
        "--set",
        "fn_neuron.a=0.5:0.9:2",
        "--record",
        "fn_neuron.V_out",
        "--cluster",
        "local",
        "--workers",
        "1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[0] == "2 parameter sets x 1 steps"


def test_set_matches_the_edited_file(tmp_path, capsys):
    data = json.loads(FHN.read_text())
    nodes = data["fitzhugh_nagumo"]["graphs"]["fitzhugh_nagumo_graph"]["nodes"]
    nodes["fn_neuron"]["parameters"]["a"]["value"] = 0.9
    nodes["stimulus"]["parameters"]["amplitude"]["value"] = 0.75
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    ref = reference_run(edited, steps=40, dt=0.05)["outputs"]
    assert (
        main(
            [
                "run",
                str(FHN),
                "--steps",
                "40",
                "--dt",
                "0.05",
                "--json",
                "--set",
                "fn_neuron.a=0.9",
                "--set",
                "stimulus.amplitude=0.75",
            ]
        )
        == 0
    )
    assert_outputs_close(json.loads(capsys.readouterr().out)["outputs"], ref, rtol=1e-12)
    assert main(["run", str(FHN), "--set", "fn_neuron.a=high"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"mdf: error: {FHN}: --set 'fn_neuron.a=high'") and "\n" not in err


RANDOM = {
    "m": {
        "graphs": {
            "g": {
                "nodes": {
                    "n": {
                        "parameters": {
                            "r": {
                                "function": "onnx::RandomUniform",
                                "args": {"shape": [2], "dtype": 11},
                            }
                        },
                        "output_ports": {"o": {"value": "r"}},
                    }
                }
            }
        }
    }
}


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_seed_reproducible_fresh_each_step(backend, tmp_path):
    path = tmp_path / "random.json"
    path.write_text(json.dumps(RANDOM))
    runs = []
    for k in range(2):
        out = tmp_path / f"{k}.npz"
        assert (
            main(
                [
                    "-q",
                    "run",
                    str(path),
                    "--steps",
                    "4",
                    "--seed",
                    "7",
                    "--record",
                    "n.o",
                    "--backend",
                    backend,
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        with np.load(out) as z:
            runs.append(z["trace:n.o"])
    # the oracle: numpy's default_rng(7) stream, two uniform draws per step
    want = np.random.default_rng(7).uniform(0.0, 1.0, size=(4, 2))
    np.testing.assert_array_equal(runs[0], want)
    np.testing.assert_array_equal(runs[1], want)


def test_info_and_run_summarise_large_arrays(tmp_path, capsys):
    data = json.loads(ARRAYS.read_text())
    layer = data["arrays_matrix_edge"]["graphs"]["arrays_graph"]["nodes"]["layer"]
    w = np.arange(600, dtype=float).reshape(300, 2) / 100 - 2
    layer["parameters"]["W"]["value"] = w.tolist()
    layer["parameters"]["b"]["value"] = [0.1] * 300
    big = tmp_path / "big.json"
    big.write_text(json.dumps(data))
    assert main(["info", str(big)]) == 0
    text = capsys.readouterr().out
    assert (
        f"par W = array(shape=(300, 2), dtype=float64, min={w.min():.6g}, max={w.max():.6g})"
        in text
    )
    assert max(len(line) for line in text.splitlines()) < 200
    assert main(["info", str(big), "--full"]) == 0
    assert str(w.tolist()) in capsys.readouterr().out
    assert main(["run", str(big), "--steps", "2"]) == 0
    out = capsys.readouterr().out
    assert "layer.out = array(shape=(300,), dtype=float64" in out
    assert max(len(line) for line in out.splitlines()) < 200


def test_core_dependencies_are_lean():
    """modeci-mdf (and what it pulls in: scikit-learn, onnxruntime, h5py, ...) is an extra; the
    tests keep it as the oracle. The core install's behaviour without it is checked above."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for heavy in ("modeci-mdf", "onnx", "matplotlib", "xarray", "dask", "scikit-learn"):
        assert heavy not in core
    extras = project["optional-dependencies"]
    assert any(d.startswith("modeci-mdf") for d in extras["modeci"])
    assert any(d.startswith("modeci-mdf") for d in extras["test"])
    named = {extra for extra, _ in EXTRAS.values()}
    assert named <= set(extras)


def test_main_leaves_the_callers_logging_alone():
    import logging

    before = [logging.getLogger(n).level for n in ("mdf_engine", "distributed")]
    env = os.environ.get("DASK_LOGGING__DISTRIBUTED")
    assert main(["-q", "run", str(FHN), "--steps", "2"]) == 0
    assert [logging.getLogger(n).level for n in ("mdf_engine", "distributed")] == before
    assert os.environ.get("DASK_LOGGING__DISTRIBUTED") == env


def _readme_synopsis() -> dict[str, set[str]]:
    """The options README.md's command list gives each subcommand (continuation lines belong to
    the command above them)."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("mdf [--version]") :].split("```", 1)[0]
    out: dict[str, set[str]] = {}
    command = None
    for line in block.splitlines():
        head = re.match(r"mdf (\w+)", line)
        if head:
            command = head.group(1)
            out.setdefault(command, set())
        if command is not None:
            out[command] |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", line))
    return out


def test_readme_command_list_matches_the_parsers():
    """Every option README.md's command list shows exists on that subcommand, and every option
    of a subcommand is in the list (-h, -v, -q and --progress are shown once, for all)."""
    from mdf_engine.cli import _parser

    sub = next(a for a in _parser()._actions if a.dest == "command").choices
    listed = _readme_synopsis()
    assert set(listed) == set(sub), (set(listed), set(sub))
    common = {"-h", "--help", "-v", "--verbose", "-q", "--quiet", "--progress"}
    for name, parser in sub.items():
        actions = [set(a.option_strings) for a in parser._actions if a.option_strings]
        options = set().union(*actions)
        assert listed[name] - options == set(), f"mdf {name}: README shows unknown options"
        missing = [a for a in actions if not a & (listed[name] | common)]
        assert missing == [], f"mdf {name}: options README's command list does not show"
