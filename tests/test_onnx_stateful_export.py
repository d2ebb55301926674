"""Stateful ONNX export (``mdf export --onnx --step`` / ``--steps N``): onnxruntime running the
exported step N times from Python, and the exported whole run in one call, against our engine's
``Simulation.run(steps=N, dt=DT)`` on every exportable model of the project's corpora; the
files pass the full ONNX check; what cannot be exported is refused naming it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import graph_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_io.step_export import (  # noqa: E402
    METADATA_KEY,
    to_onnx_run,
    to_onnx_step,
)
from mdf_engine.simulation import Simulation  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared/models")


def _models(folder: Path) -> list[Path]:
    """Every MDF model file in ``folder`` (not the stored results beside them)."""
    return sorted(
        p
        for p in folder.glob("*")
        if p.suffix in (".json", ".yaml", ".yml") and not p.name.endswith(".expected.json")
    )


#: every bundled example, the PsyNeuLink exports of tests/data/pnl and the shared models
#: (tests/data/wild has its own walk: test_onnx_stateful_wild.py); none is skipped: each
#: either exports and matches the engine, or is refused as REFUSED says
CORPUS = _models(ROOT / "examples") + _models(ROOT / "tests/data/pnl") + _models(SHARED)
#: ACT-R's chunks are dicts and its productions strings: ONNX tensors hold numbers only
_ACTR = r"retrieve_chunk' \(namespace actr\) has no ONNX export: ACT-R .*numbers only"
REFUSED = {
    "actr_count.json": r"actr_count.json: .*" + _ACTR,
    "actr_addition.json": r"actr_addition.json: .*" + _ACTR,
}
EXPORTED = [p for p in CORPUS if p.name not in REFUSED]
STEPS, DT = 40, 0.01


def _session(mp):
    so = ort.SessionOptions()
    so.log_severity_level = 3  # state inputs with initializers are meant: no warnings
    return ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _meta(mp) -> dict:
    return json.loads({p.key: p.value for p in mp.metadata_props}[METADATA_KEY])


def _engine(path, steps=STEPS, dt=DT, record=()):
    sim = Simulation(str(path), backend="interpreted")
    res = sim.run(steps=steps, dt=dt, record=list(record))
    return sim, res


def _close(a, b, rtol, what):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape or a.size == b.size, what
    np.testing.assert_allclose(b.reshape(a.shape), a, rtol=rtol, atol=rtol * 1e-3, err_msg=what)


def _run_step_model(mp, steps, dt):
    sess = _session(mp)
    meta = _meta(mp)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in mp.graph.initializer}
    feeds = {s["input"]: inits[s["input"]] for s in meta["state"]}
    feeds["dt"] = np.asarray(dt, dtype=meta["dtype"])
    names = [o.name for o in sess.get_outputs()]
    for _ in range(steps):
        res = dict(zip(names, sess.run(None, feeds)))
        for s in meta["state"]:
            feeds[s["input"]] = res[s["output"]]
    return meta, res


def _compare(sim, meta, res, rtol, ports=True):
    """Every output port and every parameter held as state, against the engine's values."""
    if ports:
        for port, name in meta["outputs"].items():
            n, p = port.split(".", 1)
            _close(sim.value(n, p), res[name], rtol, port)
    for s in meta["state"]:
        if s["role"] == "parameter" and s["output"] in res:
            _close(
                sim.value(s["node"], s["field"]),
                res[s["output"]],
                rtol,
                f"{s['node']}.{s['field']}",
            )


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def test_the_corpus_walk_finds_every_kind_of_model():
    assert {p.parent.name for p in CORPUS} >= {"examples", "pnl"}
    assert set(REFUSED) <= {p.name for p in CORPUS}


@pytest.mark.parametrize("path", [p for p in CORPUS if p.name in REFUSED], ids=_id)
def test_refused_models_name_the_function(path):
    with pytest.raises(MDFError, match=REFUSED[path.name]) as e:
        to_onnx_step(str(path))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("path", EXPORTED, ids=_id)
def test_step_and_run_match_the_engine(path):
    sim, _ = _engine(path)
    step = to_onnx_step(str(path))
    onnx.checker.check_model(step, full_check=True)
    meta, res = _run_step_model(step, STEPS, DT)
    _compare(sim, meta, res, 1e-6)
    assert res["next__evaluations"] == STEPS
    np.testing.assert_allclose(res["next__time"], sim.time, rtol=1e-9)

    run = to_onnx_run(str(path), steps=STEPS, dt=DT)
    onnx.checker.check_model(run, full_check=True)
    assert not [
        i for i in run.graph.input if i.name not in {t.name for t in run.graph.initializer}
    ]  # no feeds needed
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    rmeta = _meta(run)
    for port, name in rmeta["outputs"].items():
        n, p = port.split(".", 1)
        _close(sim.value(n, p), out[name], 1e-6, port)
    for key, name in rmeta["parameters"].items():
        n, p = key.split(".", 1)
        _close(sim.value(n, p), out[name], 1e-6, key)


@pytest.mark.parametrize(
    "name,record",
    [
        ("fitzhugh_nagumo.json", "fn_neuron.V_out"),
        ("iaf_network.json", "layer1.v_out"),
        ("conditions_threshold.json", "C.out"),
    ],
)
def test_recorded_series_match_the_engine_traces(name, record):
    path = ROOT / "examples" / name
    node, port = record.split(".")
    if Simulation(str(path)).graph.get_node(node).get("output_ports", port) is None:
        pytest.skip(f"{record} not in {name}")
    _, res = _engine(path, record=[record])
    run = to_onnx_run(str(path), steps=STEPS, dt=DT, record=[record])
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    series = out[_meta(run)["records"][record]]
    assert series.shape[0] == STEPS
    _close(np.stack([np.asarray(v, float) for v in res.traces[record]]), series, 1e-6, record)


@pytest.mark.parametrize(
    "name", ["fitzhugh_nagumo.json", "states_counter_oscillator.json", "conditions_threshold.json"]
)
def test_float32_exports_match_within_float32_rounding(name):
    path = ROOT / "examples" / name
    sim, _ = _engine(path)
    meta, res = _run_step_model(to_onnx_step(str(path), dtype="float32"), STEPS, DT)
    assert res[meta["state"][0]["output"]].dtype == np.float32
    _compare(sim, meta, res, 1e-4)
    run = to_onnx_run(str(path), steps=STEPS, dt=DT, dtype="float32")
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    for port, oname in _meta(run)["outputs"].items():
        n, p = port.split(".", 1)
        assert out[oname].dtype == np.float32
        _close(sim.value(n, p), out[oname], 1e-4, port)


def test_duration_means_what_run_duration_means():
    path = ROOT / "examples" / "damped_spring.yaml"
    sim = Simulation(str(path), backend="interpreted")
    sim.run(duration=0.5, dt=0.01)
    run = to_onnx_run(str(path), duration=0.5, dt=0.01)
    meta = _meta(run)
    assert meta["steps"] == sim.runner.evaluations
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    for port, name in meta["outputs"].items():
        n, p = port.split(".", 1)
        _close(sim.value(n, p), out[name], 1e-6, port)


def _odd_model() -> dict:
    """Ids with spaces, punctuation and non-ASCII letters (model text is data)."""
    return {
        "odd": {
            "format": "ModECI MDF v0.4",
            "graphs": {
                "g ☃": {
                    "nodes": {
                        "nöde 1/π": {
                            "parameters": {
                                "rätë": {"value": 0.5},
                                "ẋ": {"time_derivative": "-rätë * ẋ", "default_initial_value": 1.0},
                                "ÿ": {
                                    "value": "rätë * 2",
                                    "conditions": [
                                        {"id": "c", "test": "ẋ < 0.9", "value": "ÿ + 1"}
                                    ],
                                },
                            },
                            "output_ports": {"out ☃": {"value": "ẋ * 2 + ÿ"}},
                        },
                        "sink;1": {
                            "input_ports": {"ïn": {}},
                            "parameters": {"acc": {"value": "acc + ïn"}},
                            "output_ports": {"o'": {"value": "acc"}},
                        },
                    },
                    "edges": {
                        "e ☃": {
                            "sender": "nöde 1/π",
                            "sender_port": "out ☃",
                            "receiver": "sink;1",
                            "receiver_port": "ïn",
                        }
                    },
                }
            },
        }
    }


def test_odd_ids_give_safe_unique_names(tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(_odd_model(), ensure_ascii=False), encoding="utf-8")
    sim, _ = _engine(path)
    step = to_onnx_step(str(path))
    for name in [i.name for i in step.graph.input] + [o.name for o in step.graph.output]:
        assert name.isascii() and name.replace("_", "a").isalnum(), name
    meta, res = _run_step_model(step, STEPS, DT)
    assert set(meta["outputs"]) == {"nöde 1/π.out ☃", "sink;1.o'"}
    _compare(sim, meta, res, 1e-6)


def test_refused_with_one_line_naming_the_field():
    nwhen = {"type": "NWhen", "kwargs": {"condition": {"type": "Always", "kwargs": {}}, "n": 2}}
    model = graph_model(
        {"A": {"parameters": {"c": {"value": "c + 1"}}, "output_ports": {"o": {"value": "c"}}}},
        conditions={"node_specific": {"A": nwhen}},
    )
    from mdf_engine.loader import load

    with pytest.raises(MDFError, match=r"graphs\.g\.conditions: .*NWhen") as err:
        to_onnx_step(load(model))
    assert "\n" not in str(err.value)
    with pytest.raises(MDFError, match="at least 1"):
        to_onnx_run(str(ROOT / "examples" / "fitzhugh_nagumo.json"), steps=0, dt=DT)


@pytest.mark.parametrize(
    "name,steps,dt",
    [
        ("examples/fitzhugh_nagumo.json", 30, 0.05),
        ("examples/iaf_network.json", 30, 0.002),
        ("tests/data/pnl/branching.json", 4, 0.01),  # conditions, a schedule known at export
    ],
)
def test_import_gives_back_a_model_with_the_same_numbers(name, steps, dt, tmp_path):
    from mdf_engine.loader import save
    from mdf_engine.onnx_io import import_model, portable

    path = ROOT / name
    ref, _ = _engine(path, steps=steps, dt=dt)
    for kind, mp in (
        ("step", to_onnx_step(str(path))),
        ("run", to_onnx_run(str(path), steps=steps, dt=dt, unroll_first=False)),
        ("steps", to_onnx_run(str(path), steps=steps, dt=dt)),  # as `--steps N` writes it
    ):
        model = portable(import_model(mp))
        save(model, str(tmp_path / f"{kind}.json"))  # as `mdf import` writes it
        sim = Simulation(str(tmp_path / f"{kind}.json"), backend="interpreted")
        sim.run(steps=steps, initializer={"dt": dt} if kind == "step" else None)
        for port, where in model.metadata["onnx_stateful"]["ports"].items():
            n, p = port.split(".", 1)
            nn, pp = where.split(".", 1)
            _close(ref.value(n, p), sim.value(nn, pp), 1e-6, f"{kind} {port}")


def test_import_refuses_a_scheduled_update_clearly():
    from mdf_engine.onnx_io import import_model

    path = str(ROOT / "examples" / "conditions_threshold.json")
    for mp in (to_onnx_step(path), to_onnx_run(path, steps=3, dt=DT)):
        with pytest.raises(MDFError, match="Loop over scheduler passes") as e:
            import_model(mp)
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("path", EXPORTED, ids=_id)
def test_every_steps_file_imports_back_or_says_why(path, tmp_path):
    """`mdf import` of a `--steps N` file: the imported model's run(steps=N) gives the file's
    final values, or one line says the update is a Loop over passes."""
    from mdf_engine.cli import main
    from mdf_engine.loader import load

    steps, dt = 7, 0.01
    ref, _ = _engine(path, steps=steps, dt=dt)
    src = tmp_path / "run.onnx"
    argv = ["export", "--onnx", str(path), str(src), "--steps", str(steps), "--dt", str(dt)]
    assert main(argv) == 0
    run = onnx.load(str(src))
    if sum(n.op_type == "Loop" for n in run.graph.node) > 1:  # a Loop over passes first
        assert main(["import", str(src), str(tmp_path / "m.json")]) == 2
        return
    assert main(["import", str(src), str(tmp_path / "m.json")]) == 0
    model = load(str(tmp_path / "m.json"))
    sim = Simulation(str(tmp_path / "m.json"), backend="interpreted")
    sim.run(steps=steps)
    ports = model.metadata["onnx_stateful"]["ports"]
    assert set(ports) == set(_meta(run)["outputs"]) | set(_meta(run)["parameters"])
    for port, where in ports.items():
        n, p = port.split(".", 1)
        nn, pp = where.split(".", 1)
        _close(ref.value(n, p), sim.value(nn, pp), 1e-6, port)


def test_cli_writes_checked_files(tmp_path, capsys):
    from mdf_engine.cli import main

    src = str(ROOT / "examples" / "iaf_network.json")
    out = tmp_path / "iaf.onnx"
    assert (
        main(
            [
                "export",
                "--onnx",
                src,
                str(out),
                "--steps",
                "20",
                "--dt",
                "0.001",
                "--record",
                "layer2.v_out",
            ]
        )
        == 0
    )
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    assert main(["export", "--onnx", src, str(tmp_path / "s.onnx"), "--step"]) == 0
    assert main(["import", str(tmp_path / "s.onnx"), str(tmp_path / "s.json")]) == 0
    assert main(["export", "--onnx", src, str(tmp_path / "x.onnx"), "--record", "a.b"]) == 2
    assert "need --step" in capsys.readouterr().err


@pytest.mark.parametrize("steps", [1, 2])
def test_short_runs_and_their_series(steps):
    path = ROOT / "examples" / "conditions_threshold.json"
    sim, res = _engine(path, steps=steps, record=["A.out"])
    run = to_onnx_run(str(path), steps=steps, dt=DT, record=["A.out"])
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    meta = _meta(run)
    _close(
        np.stack([np.asarray(v, float) for v in res.traces["A.out"]]),
        out[meta["records"]["A.out"]],
        1e-6,
        "A.out",
    )
    for port, name in meta["outputs"].items():
        n, p = port.split(".", 1)
        _close(sim.value(n, p), out[name], 1e-6, port)


def test_run_without_dt_never_increments_time():
    """``--steps N`` without ``--dt`` is ``run(steps=N)``: every update re-initialises."""
    path = ROOT / "examples" / "damped_spring.yaml"
    sim = Simulation(str(path), backend="interpreted")
    sim.run(steps=5)
    run = to_onnx_run(str(path), steps=5)
    out = dict(zip([o.name for o in _session(run).get_outputs()], _session(run).run(None, {})))
    for port, name in _meta(run)["outputs"].items():
        n, p = port.split(".", 1)
        _close(sim.value(n, p), out[name], 1e-12, port)


def test_external_inputs_fed_every_step_match_initializers():
    """A port without edges is a graph input: feeding it each step is the engine's
    ``evaluate(initializer=...)`` of that step; left out, it reads its default."""
    leaky = {
        "input_ports": {"drive": {"shape": [2]}, "gain": {"default_value": 2.0}},
        "parameters": {
            "v": {"time_derivative": "-v + gain * drive", "default_initial_value": [0.0, 1.0]}
        },
        "output_ports": {"out": {"value": "v"}},
    }
    model = graph_model({"leaky": leaky})
    from mdf_engine.loader import load

    m = load(model)
    sim = Simulation(m, backend="interpreted")
    step = to_onnx_step(m)
    sess = _session(step)
    meta = _meta(step)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in step.graph.initializer}
    feeds = {s["input"]: inits[s["input"]] for s in meta["state"]}
    feeds["dt"] = np.asarray(0.1)
    names = [o.name for o in sess.get_outputs()]
    rng = np.random.default_rng(0)
    for k in range(12):
        drive = rng.normal(size=2)
        sim.evaluate(initializer={"drive": drive}, time_increment=None if k == 0 else 0.1)
        res = dict(zip(names, sess.run(None, {**feeds, meta["inputs"]["leaky.drive"]: drive})))
        feeds.update({s["input"]: res[s["output"]] for s in meta["state"]})
        _close(sim.value("leaky", "out"), res[meta["outputs"]["leaky.out"]], 1e-9, f"step {k}")


def test_ids_that_sanitise_alike_stay_apart():
    """``x y`` and ``x_y`` both become ``x_y``: the names get suffixes, the numbers stay apart."""
    nodes = {
        nid: {
            "parameters": {"c": {"value": f"c + {k + 1}"}},
            "output_ports": {"o": {"value": "c"}, "o ": {"value": "c * 10"}},
        }
        for k, nid in enumerate(["x y", "x_y", "x-y"])
    }
    from mdf_engine.loader import load

    m = load({"m": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": nodes}}}})
    sim = Simulation(m, backend="interpreted")
    sim.run(steps=STEPS, dt=DT)
    step = to_onnx_step(m)
    names = [o.name for o in step.graph.output]
    assert len(names) == len(set(names))
    meta, res = _run_step_model(step, STEPS, DT)
    assert len(meta["outputs"]) == 6
    _compare(sim, meta, res, 1e-9)
