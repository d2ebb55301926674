"""Scheduled updates in the stateful ONNX export: every condition case of
tests/test_conditions.py (each checked there against graph-scheduler's own run) exported with
``--step`` and run by onnxruntime, against our engine's run of the same model; the cases the
compiled scheduler cannot count (NWhen, ...) are refused naming the condition."""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from test_conditions import CASES, chain_model  # noqa: E402

from mdf_engine import Simulation  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_io.step_export import METADATA_KEY, to_onnx_run, to_onnx_step  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*as its owner:UserWarning")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_scheduled_update_matches_the_engine(case):
    model = chain_model(case.nodes, case.term, case.finish)
    sim = Simulation(model, backend="interpreted")
    sim.run(steps=case.steps)
    if not case.compiled and case.fallback != "interpreted":  # NWhen & co: not countable
        with pytest.raises(MDFError, match=r"conditions: a scheduling condition cannot be "):
            to_onnx_step(model)
        return
    try:
        step = to_onnx_step(model)
    except MDFError as e:
        if "did not run in the first" in str(e):
            pytest.skip(str(e))  # a node that never runs early has no known shapes
        raise
    onnx.checker.check_model(step, full_check=True)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(step.SerializeToString(), so, providers=["CPUExecutionProvider"])
    meta = json.loads({p.key: p.value for p in step.metadata_props}[METADATA_KEY])
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in step.graph.initializer}
    feeds = {s["input"]: inits[s["input"]] for s in meta["state"]}
    feeds["dt"] = np.asarray(0.0)
    names = [o.name for o in sess.get_outputs()]
    for _ in range(case.steps):
        res = dict(zip(names, sess.run(None, feeds)))
        for s in meta["state"]:
            feeds[s["input"]] = res[s["output"]]
    runs = {n: sum(1 for ts in sim.runner.time_steps for m in ts if m == n) for n in "ABC"}
    for s in meta["state"]:
        if s["role"] == "parameter" and s["field"] == "count":
            assert res[s["output"]] == runs[s["node"]], s["node"]
    for port, name in meta["outputs"].items():
        n, p = port.split(".", 1)
        if sim.value(n, p) is None:
            continue  # the node never ran: the engine has no value
        np.testing.assert_allclose(
            res[name], np.asarray(sim.value(n, p), float), rtol=1e-6, err_msg=port
        )
    run = to_onnx_run(model, steps=case.steps)
    rsess = ort.InferenceSession(run.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in rsess.get_outputs()], rsess.run(None, {})))
    rmeta = json.loads({p.key: p.value for p in run.metadata_props}[METADATA_KEY])
    for port, name in meta["outputs"].items():
        np.testing.assert_allclose(out[rmeta["outputs"][port]], res[name], rtol=1e-12, err_msg=port)
