"""Stateful ONNX export over the wild corpus (tests/data/wild/): every stateful file, run as
its oracle file says (steps, dt, per-trial inputs, scheduling mode), either exports and
onnxruntime's runs of the ``--step`` model (called N times) and of the ``--steps N`` model equal
our engine's run of the same file, or is refused with one line naming the file and the field.
N is the oracle's step count capped at 40 (the oracle itself is checked by test_wild_*)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from mdf_engine import Simulation  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_io.step_export import METADATA_KEY, to_onnx_run, to_onnx_step  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

WILD = Path(__file__).resolve().parent / "data" / "wild"
MAX_STEPS = 40


def _oracle_path(path: Path) -> Path:
    """``<name>.oracle.json`` beside ``<name>.json``; ``<file>.oracle.json`` beside YAML files
    and PsyNeuLink's older exports."""
    full = path.with_name(path.name + ".oracle.json")
    if full.exists() or path.suffix != ".json":
        return full
    return path.with_name(path.name[: -len(".json")] + ".oracle.json")


def _oracle(path: Path) -> dict:
    return json.loads(_oracle_path(path).read_text())


def _stateful(path: Path) -> bool:
    """time_derivative, default_initial_value, conditions on parameters, a parameter whose
    value names itself, or scheduling conditions (read from the file as written)."""
    import yaml

    text = path.read_text(encoding="utf-8")
    doc = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    (model,) = doc.values()
    for g in (model.get("graphs") or {}).values():
        cond = g.get("conditions") or {}
        if cond.get("node_specific") or cond.get("termination"):
            return True
        for n in (g.get("nodes") or {}).values():
            for pid, p in (n.get("parameters") or {}).items():
                if not isinstance(p, dict):
                    continue
                if {"time_derivative", "default_initial_value", "conditions"} & set(p):
                    return True
                if isinstance(p.get("value"), str) and pid in p["value"]:
                    return True
    return False


#: every model file of the corpus (each has an oracle beside it)
FILES = sorted(
    p
    for p in WILD.rglob("*")
    if p.suffix in (".json", ".yaml", ".yml")
    and not p.name.endswith((".oracle.json", ".inputs.json"))
    and _oracle_path(p).exists()
)
STATEFUL = [p for p in FILES if _stateful(p)]
#: files refused, with the text the one-line refusal must contain (why: see docs/onnx_io.md)
REFUSED = {
    "count.json": "retrieve_chunk' (namespace actr) has no ONNX export",
    "addition.json": "retrieve_chunk' (namespace actr) has no ONNX export",
    # the engine does not run PsyNeuLink 0.15's 0-d mechanism output (test_wild_psyneulink)
    "v0.15.3.0/stroop_lca.json": "cannot apply the projection matrix",
    # NeuroMLlite's pulse input has no output port 'i' though an edge reads it (the reference
    # fails too: the oracle is a refusal)
    "IafPulse.mdf.json": "node 'InputList_stim' has no output port 'i'",
    "Izhikevich.mdf.json": "node 'InputList_stim' has no output port 'i'",
    # functions the engine itself does not run (test_wild_psyneulink: strict xfails)
    "tests_model_with_control.json": "unknown function 'gridsearch'",
    "tests_stroop_conflict_monitoring.json": "function 'identity' (namespace pnl) has no ONNX",
    # random draws: onnxruntime's generator is not the engine's (docs/onnx_io.md)
    "tests_model_integrators.json": "draws random numbers",
    "tests_model_integrators_edges.json": "draws random numbers",
    "tests_ddi.json": "draws random numbers",
    "tests_ddi_after10.json": "draws random numbers",
    "tests_ddi_threshold.json": "draws random numbers",
    "tests_model_backprop.json": "unknown function 'backpropagation'",
    # the combination of two ports, numpy.array([port_a, port_b]), has no ONNX form yet
    "tests_model_varied_matrix_sizes_edges.json": "'numpy.array([E_InputPort_0_input_",
    # NeuroMLlite files that lack what their equations read, or write LEMS's power '^'
    "FN_cell.mdf.json": "'^' is a bitwise operator",
    "HindmarshRose.mdf.json": "unknown name 'C'",
    "PyNN_EIF.mdf.json": "unknown name 'eif_threshold'",
    "PyNN_IF_cond_net.mdf.json": "unknown name 'v'",
    # an MDF v0.1 sketch (the reference cannot read it either)
    "leaky_competing_accumulator.yaml": "condition args must be a mapping",
    # PsyNeuLink 0.21 exports of helper pnlwide: functions and calls with no ONNX form yet, draws
    "wide_cond_all_have_run.json": "function 'linearcombination' (namespace pnl) has no ONNX export",
    "wide_ddm_integrator.json": "function 'onnx::RandomNormal' draws random numbers",
    "wide_fan_out_in.json": "function 'tanh' (namespace pnl) has no ONNX export",
    "wide_int_ddi.json": "function 'onnx::RandomNormal' draws random numbers",
    "wide_int_dual_adaptive.json": "unknown function 'dualadaptiveintegrator'",
    "wide_int_interactive_activation.json": "function 'interactiveactivationintegrator' (namespace pnl) has no ONNX export",
    "wide_int_ornstein_uhlenbeck.json": "function 'ornsteinuhlenbeckintegrator' (namespace pnl) has no ONNX export",
    "wide_nested_two_levels.json": "function 'tanh' (namespace pnl) has no ONNX export",
    "wide_pm_lincomb_exponents.json": "function 'linearcombination' (namespace pnl) has no ONNX export",
    "wide_pm_lincomb_product.json": "function 'linearcombination' (namespace pnl) has no ONNX export",
    "wide_pm_lincomb_weights.json": "function 'linearcombination' (namespace pnl) has no ONNX export",
    "wide_pm_reduce.json": "function 'reduce' (namespace pnl) has no ONNX export",
    "wide_pm_reduce_product.json": "function 'reduce' (namespace pnl) has no ONNX export",
    "wide_ports_input_weights.json": "function 'linearcombination' (namespace pnl) has no ONNX export",
    "wide_ports_standard_outputs.json": "call 'numpy.var(stdout_Linear_Function_740)' has no ONNX export",
    "wide_ports_two_inputs_outputs.json": "call 'numpy.array([two_x, two_y])' has no ONNX export",
    "wide_proj_random_seeded.json": "function 'tanh' (namespace pnl) has no ONNX export",
    "wide_tm_clip.json": "call 'numpy.clip(clip_Linear_Function_224, -1.0, 1.5)' has no ONNX export",
    "wide_tm_gaussian.json": "function 'gaussian' (namespace pnl) has no ONNX export",
    "wide_tm_identity.json": "function 'identity' (namespace pnl) has no ONNX export",
    "wide_tm_integrator_clip.json": "call 'numpy.clip(tmclip_Linear_Function_245, -0.8, 1.0)' has no ONNX export",
    "wide_tm_relu.json": "function 'relu' (namespace pnl) has no ONNX export",
    "wide_tm_softmax.json": "function 'softmax' (namespace pnl) has no ONNX export",
    "wide_tm_softmax_indicator.json": "function 'softmax' (namespace pnl) has no ONNX export",
    "wide_tm_softmax_max.json": "function 'softmax' (namespace pnl) has no ONNX export",
    "wide_tm_tanh.json": "function 'tanh' (namespace pnl) has no ONNX export",
}


def _session(mp):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(mp.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _meta(mp) -> dict:
    return json.loads({p.key: p.value for p in mp.metadata_props}[METADATA_KEY])


def _protocol(path: Path) -> tuple[int, float | None, list[dict], str]:
    """(N, dt, the initializer of each step, scheduling mode) from the oracle."""
    o = _oracle(path)
    if "trials" in o:  # PsyNeuLink: one trial is one evaluate(initializer=...)
        n = len(o["trials"])
        inits = [{k: np.asarray(v[t], float) for k, v in o["inputs"].items()} for t in range(n)]
        return n, None, inits, o["scheduling_mode"]
    run = o["run"]
    n = min(int(run["steps"]), MAX_STEPS)
    init = run.get("initializer") or {}
    return n, run.get("dt"), [dict(init)] * n, "standard"


def _feeds(mp, meta: dict, init: dict) -> dict:
    """The oracle's inputs as the exported model's input ports (shaped as the port's default:
    PsyNeuLink's oracles keep ``(1,)`` where the file declares ``(1, 1)``)."""
    shapes = {t.name: tuple(t.dims) for t in mp.graph.initializer}
    by_port = {k.split(".", 1)[1]: v for k, v in meta["inputs"].items()}
    return {
        by_port[k]: np.asarray(v, meta["dtype"]).reshape(shapes[by_port[k]])
        for k, v in init.items()
        if k in by_port
    }


def _close(want, got, what):
    """Equal values; the sizes agree, or the export holds the value at the shape it grows to by
    broadcasting in the first updates (NeuroML's PyNN network: (2,) -> (2, 2))."""
    want = np.asarray(want, dtype=float)
    got = np.asarray(got, dtype=float)
    if want.size != got.size:
        assert want.ndim < got.ndim, what
        want = np.broadcast_to(want, got.shape)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-6, atol=1e-9, err_msg=what)


@pytest.mark.parametrize("path", STATEFUL, ids=[str(p.relative_to(WILD)) for p in STATEFUL])
def test_wild_stateful_file_exports_or_is_refused(path):
    n, dt, inits, mode = _protocol(path)
    graph = _oracle(path).get("graph")  # a file of several graphs: the one its oracle ran
    try:
        step = to_onnx_step(
            str(path), graph=graph, scheduling_mode=mode, initializer=inits[0] or None
        )
    except MDFError as e:
        msg = str(e)
        want = REFUSED.get(f"{path.parent.name}/{path.name}", REFUSED.get(path.name))
        assert want is not None, msg
        assert "\n" not in msg and msg.startswith(str(path)), msg
        assert want in msg, msg
        return
    onnx.checker.check_model(step, full_check=True)
    sim = Simulation(str(path), graph=graph, backend="interpreted", scheduling_mode=mode)
    sess, meta = _session(step), _meta(step)
    init_vals = {t.name: onnx.numpy_helper.to_array(t) for t in step.graph.initializer}
    state = {s["input"]: init_vals[s["input"]] for s in meta["state"]}
    names = [o.name for o in sess.get_outputs()]
    for k in range(n):
        sim.evaluate(initializer=inits[k] or None, time_increment=None if k == 0 else dt)
        feeds = {
            **state,
            **_feeds(step, meta, inits[k]),
            "dt": np.asarray(dt or 0.0, meta["dtype"]),
        }
        res = dict(zip(names, sess.run(None, feeds)))
        state = {s["input"]: res[s["output"]] for s in meta["state"]}
        for port, name in meta["outputs"].items():
            node, p = port.split(".", 1)
            if sim.value(node, p) is not None:
                _close(sim.value(node, p), res[name], f"{path.name} step {k} {port}")

    # the whole run in one call: the first step's inputs held for every step
    ref = Simulation(str(path), graph=graph, backend="interpreted", scheduling_mode=mode)
    ref.run(steps=n, dt=dt, initializer=inits[0] or None)
    run = to_onnx_run(
        str(path),
        steps=n,
        dt=dt,
        graph=graph,
        scheduling_mode=mode,
        initializer=inits[0] or None,
    )
    onnx.checker.check_model(run, full_check=True)
    rmeta = _meta(run)
    rsess = _session(run)
    out = dict(
        zip([o.name for o in rsess.get_outputs()], rsess.run(None, _feeds(run, rmeta, inits[0])))
    )
    for port, name in rmeta["outputs"].items():
        node, p = port.split(".", 1)
        if ref.value(node, p) is not None:
            _close(ref.value(node, p), out[name], f"{path.name} --steps {n} {port}")


def test_the_corpus_has_stateful_files_of_every_writer():
    assert {p.relative_to(WILD).parts[0] for p in STATEFUL} == {
        "modeci_api",
        "modeci_examples",
        "modeci_old",
        "actr_importer",
        "neuroml",
        "psyneulink",
        "psyneulink_old",
    }


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-6), ("float32", 1e-4)])
def test_drift_diffusion_analytical_in_every_branch(dtype, rtol):
    """PsyNeuLink's DriftDiffusionAnalytical exported: all 8 values (rt, er, the six
    conditional moments) against the engine, for drifts that take each branch: zero, tiny,
    negative, below 0.01, moments by series (|u| < 2) and closed forms, the overflow fallback."""
    from mdf_engine.loader import load

    model = load(
        {
            "ddm": {
                "format": "ModECI MDF v0.4",
                "generating_application": "PsyNeuLink v0.21.0.0",
                "graphs": {
                    "g": {
                        "nodes": {
                            "decision": {
                                "input_ports": {"drive": {"shape": [1]}},
                                "functions": {
                                    "ddm": {
                                        "function": "driftdiffusionanalytical",
                                        "args": {
                                            "variable0": "drive",
                                            "drift_rate": 1.5,
                                            "threshold": 1.2,
                                            "starting_value": 0.1,
                                            "noise": 0.5,
                                            "non_decision_time": 0.25,
                                        },
                                    }
                                },
                                "output_ports": {"value": {"value": "ddm"}},
                            }
                        }
                    }
                },
            }
        }
    )
    # 49.1 and 49.3: the exponentials just inside and just beyond the float64 range
    drives = [0.0, 3e-9, -0.4, 0.004, -0.003, 0.02, 0.8, 5.0, -30.0, 49.1, 49.3, -49.3, 200.0]
    if dtype == "float32":
        drives = [0.0, -0.4, 0.02, 0.8, 5.0]  # away from float32's own rounding of the limits
    step = to_onnx_step(model, dtype=dtype)
    onnx.checker.check_model(step, full_check=True)
    sess, meta = _session(step), _meta(step)
    (inp,) = meta["inputs"].values()
    name = meta["outputs"]["decision.value"]
    sim = Simulation(model, backend="interpreted")
    for d in drives:
        sim.evaluate(initializer={"drive": np.asarray([d])})
        want = np.asarray(sim.value("decision", "value"), float)
        feeds = {inp: np.asarray([d], dtype), "dt": np.asarray(0.0, dtype)}
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))[name]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, err_msg=f"drift {d}")


def test_cli_initializer_exports_with_one_trials_inputs(tmp_path, capsys):
    """`mdf export --initializer` (one trial's inputs, as `mdf run` takes them) exports PsyNeuLink
    0.21's stroop_lca, and so does the plain export (the engine now runs the file without its
    trial inputs, as PsyNeuLink does): both check."""
    from mdf_engine.cli import main

    path = WILD / "psyneulink" / "v0.21.0.0" / "stroop_lca.json"
    out = tmp_path / "s.onnx"
    assert main(["export", "--onnx", str(path), str(out), "--step"]) == 0
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    _, _, inits, _ = _protocol(path)
    feeds = tmp_path / "trial0.json"
    feeds.write_text(json.dumps({k: v.tolist() for k, v in inits[0].items()}))
    argv = ["export", "--onnx", str(path), str(out), "--step", "--initializer", str(feeds)]
    assert main(argv) == 0
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
