"""Every backend behind the one runner protocol (issue 21, item 3): ``mdf run`` honours
``--steps``, ``--dt``, ``--record``, ``-o`` and ``--plot`` on the hexagon and ACT-R backends too,
with the values their own entry points compute (``run_quantized``, ``quantize``,
``actr.run_model``, each checked against its oracle in test_hexagon_quantize.py and
test_actr.py), and no module patches methods onto a class from outside."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from mdf_engine.actr import run_model
from mdf_engine.backends import RUNNER_BACKENDS, Runner, make_runner
from mdf_engine.cli import main
from mdf_engine.hexagon import quantize, run_quantized
from mdf_engine.loader import load
from mdf_engine.model import to_dict
from mdf_engine.plan import plan_graph
from mdf_engine.simulation import Simulation
from tests.test_actr import run_reference_engine
from tests.test_hexagon_quantize import cnn

ROOT = Path(__file__).resolve().parents[1]
ACTR = [ROOT / "examples" / "actr_count.json", ROOT / "examples" / "actr_addition.json"]


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", ACTR, ids=lambda p: p.name)
def test_actr_run_honours_every_flag(path, tmp_path):
    goals = run_model(str(path), max_cycles=1000)  # the ACT-R runner's own API
    assert goals == run_reference_engine(path)  # modeci-mdf's engine, the oracle
    assert len(goals) > 2
    out = tmp_path / "run.json"
    rc = main(
        [
            "run",
            str(path),
            "-q",
            "--record",
            "goal_buffer.goal_output",
            "check_termination.check_output",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    res = _json(out)
    assert res["steps"] == len(goals)
    assert res["traces"]["goal_buffer.goal_output"] == goals
    assert res["traces"]["check_termination.check_output"] == [False] * (len(goals) - 1) + [True]
    assert res["outputs"]["goal_buffer"]["goal_output"] == goals[-1]

    csv, png = tmp_path / "run.csv", tmp_path / "run.png"
    rc = main(
        [
            "run",
            str(path),
            "-q",
            "--steps",
            "2",
            "--dt",
            "0.5",
            "--record",
            "check_termination.check_output",
            "-o",
            str(csv),
            "--plot",
            str(png),
        ]
    )
    assert rc == 0 and png.stat().st_size > 0
    assert csv.read_text().splitlines() == [
        "time,check_termination.check_output",
        "0.0,0.0",
        "0.5,0.0",
    ]
    rc = main(
        [
            "run",
            str(path),
            "-q",
            "--steps",
            "2",
            "--record",
            "goal_buffer.goal_output",
            "-o",
            str(out),
        ]
    )
    assert rc == 0 and _json(out)["traces"]["goal_buffer.goal_output"] == goals[:2]
    # through the API: auto picks the ACT-R backend; a run stops at the goal (and 0 steps is 0)
    sim = Simulation(str(path))
    assert sim.backend == "actr" and sim.run(steps=0).steps == 0
    res = sim.run(steps=len(goals) + 5)
    assert res.steps == len(goals) and res.outputs["goal_buffer"]["goal_output"] == goals[-1]
    # a run without --steps must reach the goal; non-numeric values cannot go to CSV
    assert main(["run", str(path), "-q", "--max-cycles", "2"]) == 2
    assert (
        main(["run", str(path), "-q", "--record", "goal_buffer.goal_output", "-o", str(csv)]) == 2
    )


@pytest.fixture(scope="module")
def hexagon_model(tmp_path_factory):
    """test_hexagon_quantize's CNN with an input default, as a file."""
    rng = np.random.default_rng(3)
    model, _ = cnn(rng)
    x = rng.normal(size=(1, 1, 8, 8))
    model.graphs[0].nodes[0].input_ports[0].default_value = x.tolist()
    path = tmp_path_factory.mktemp("hex") / "cnn.json"
    path.write_text(json.dumps(to_dict(model)))
    return path, x


def test_hexagon_run_honours_every_flag(hexagon_model, tmp_path):
    path, x = hexagon_model
    model = load(str(path))
    once = run_quantized(model)  # what `mdf run --backend hexagon` printed before
    out = tmp_path / "run.json"
    assert main(["run", str(path), "-q", "--backend", "hexagon", "-o", str(out)]) == 0
    res = _json(out)
    assert res["steps"] == 1
    np.testing.assert_array_equal(
        res["outputs"]["classifier"]["probs"], np.asarray(once["classifier"]["probs"])
    )

    # three steps with dt, recorded: the quantized graph stepped through its own runner
    qmodel = quantize(model, [None])
    sim = Simulation(qmodel, backend="interpreted")
    expected = []
    for k in range(3):
        sim.evaluate(time_increment=None if k == 0 else 0.25)
        expected.append(np.asarray(sim.value("classifier", "probs")))
    npz, png = tmp_path / "run.npz", tmp_path / "run.png"
    rc = main(
        [
            "run",
            str(path),
            "-q",
            "--backend",
            "hexagon",
            "--steps",
            "3",
            "--dt",
            "0.25",
            "--record",
            "classifier.probs",
            "features.out",
            "-o",
            str(npz),
            "--plot",
            str(png),
        ]
    )
    assert rc == 0 and png.stat().st_size > 0
    with np.load(npz) as data:
        np.testing.assert_array_equal(data["times"], [0.0, 0.25, 0.5])
        np.testing.assert_array_equal(data["trace:classifier.probs"], np.stack(expected))

    # ACT-R needs its production graph; the CLI says so in one line
    assert main(["run", str(path), "-q", "--backend", "actr"]) == 2

    # --initializer: calibrated on and run with the given input, as run_quantized(model, init)
    x2 = np.random.default_rng(4).normal(size=(1, 1, 8, 8))
    init = tmp_path / "init.json"
    init.write_text(json.dumps({"image": x2.tolist()}))
    rc = main(
        ["run", str(path), "-q", "--backend", "hexagon", "--initializer", str(init), "-o", str(out)]
    )
    assert rc == 0
    np.testing.assert_array_equal(
        _json(out)["outputs"]["classifier"]["probs"],
        run_quantized(model, {"image": x2})["classifier"]["probs"],
    )


def test_every_backend_implements_the_runner_protocol(hexagon_model):
    path, _ = hexagon_model
    for backend, file in zip(RUNNER_BACKENDS, [path, path, path, ACTR[0]], strict=True):
        model = load(str(file))
        plan = plan_graph(model, model.graphs[0])
        runner = make_runner(backend, plan, model)
        assert isinstance(runner, Runner), backend
        assert runner.evaluations == 0 and not runner.finished


def test_no_methods_patched_onto_classes():
    """No module assigns to an attribute of a class (``Cls.name = ...``) or calls setattr on
    one at module level."""
    found = []
    for file in sorted((ROOT / "mdf_engine").rglob("*.py")):
        for stmt in ast.parse(file.read_text()).body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else []
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id[:1].isupper()
                ):
                    found.append(f"{file.name}:{stmt.lineno}")
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and getattr(stmt.value.func, "id", None) == "setattr"
            ):
                found.append(f"{file.name}:{stmt.lineno}")
    assert not found


def test_actr_plot_duration_and_json_flags(tmp_path, capsys):
    """``--plot`` without ``--record`` plots the numeric output ports of an ACT-R model (its
    chunks cannot be drawn), ``--duration`` gives the reference loop's steps, ``--json`` the
    goals of ``actr.run_model`` (the runner's own API)."""
    path = ACTR[0]
    goals = run_model(str(path), max_cycles=1000)
    png, csv = tmp_path / "run.png", tmp_path / "run.csv"
    rc = main(["run", str(path), "-q", "--plot", str(png), "--fired", "-o", str(csv)])
    assert rc == 0 and png.stat().st_size > 0
    rows = csv.read_text().splitlines()
    assert rows[0] == "time,check_termination.check_output"
    assert [r.split(",")[1] for r in rows[1:]] == ["0.0"] * (len(goals) - 1) + ["1.0"]

    # t = 0; while t <= 1: ...; t += 0.5 -- three cycles
    out = tmp_path / "run.json"
    args = ["run", str(path), "-q", "--duration", "1", "--dt", "0.5"]
    assert main([*args, "--record", "goal_buffer.goal_output", "-o", str(out)]) == 0
    res = _json(out)
    assert res["steps"] == 3 and res["traces"]["goal_buffer.goal_output"] == goals[:3]
    assert res["times"] == [0.0, 0.5, 1.0]

    assert main(["run", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cycles"] == data["steps"] == len(goals) and data["goal"] == goals[-1]


def test_hexagon_set_duration_and_json_flags(hexagon_model, tmp_path, capsys):
    """``--set`` changes the float model before it is quantized, as ``run_quantized`` on the
    changed model; ``--duration`` and ``--json`` as on the interpreted backend."""
    path, _ = hexagon_model
    model = load(str(path))
    w = model.graphs[0].get_node("features").get("parameters", "W")
    half = (np.asarray(w.value) * 0.5).tolist()
    w.value = half
    expected = run_quantized(model)["classifier"]["probs"]
    argv = ["run", str(path), "--backend", "hexagon", "--set", f"features.W={json.dumps(half)}"]
    assert main([*argv, "--json", "--duration", "0.5", "--dt", "0.25"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"] == 3  # t = 0, 0.25, 0.5
    np.testing.assert_array_equal(data["outputs"]["classifier"]["probs"], expected)
