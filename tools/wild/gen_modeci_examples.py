"""Corpus: model files of the ModECI/MDF repository's ``examples/`` (written there by modeci-mdf's
example scripts, its NeuroML and ONNX converters, over several releases), stored verbatim in
``tests/data/wild/modeci_examples/`` (Apache-2.0; ``SOURCES`` names each file's repository path
and commit). No modeci-mdf release ships them (the sdists of 0.4.2-0.4.15 hold the package and
its tests only, whose scripts read ``examples/`` from a checkout), so they were taken from the
repository; this script only writes their oracles.

The oracle is modeci-mdf's reference engine, driven as the example scripts drive it (first
``evaluate()`` without a time increment, then with ``dt``), with traces of the parameters the
examples plot or count; a file the reference cannot read either has a ``refuse`` oracle with the
one-line error mdf_engine gives.

Run in the generator venv: ``/work/venvs/wild/bin/python tools/wild/gen_modeci_examples.py``.
"""

from __future__ import annotations

import json

import numpy as np
from oracle import CORPUS, reference_run, rel, version, write_oracle

OUT = CORPUS / "modeci_examples"
REPO = "ModECI/MDF"

#: file -> (path in the repository, commit, steps, dt, traces, every, note)
SOURCES = {
    "threshold_condition.json": (
        "examples/MDF/conditions/threshold_condition.json",
        "05fad4d0caddeaf2352446e89672970a5b1d3401",
        3,
        None,
        ["A.param_A"],
        1,
        "Threshold termination on a counter (written by modeci-mdf v0.4.10)",
    ),
    "timeinterval_condition.json": (
        "examples/MDF/conditions/timeinterval_condition.json",
        "060669a358573104feceadd79010506f0887c781",
        3,
        None,
        ["A.param_A", "B.param_B"],
        1,
        "TimeInterval(start) conditions (v0.4.1.1)",
    ),
    "everyncalls_condition.json": (
        "examples/MDF/conditions/everyncalls_condition.json",
        "060669a358573104feceadd79010506f0887c781",
        3,
        None,
        ["A.param_A", "B.param_B", "C.param_C"],
        1,
        "EveryNCalls written with the argument name 'dependencies' (v0.4.1.1)",
    ),
    "Net_acyclical.json": (
        "examples/MDF/networks/Net_acyclical.json",
        "337e360912532070df4dda447f9230b5a621e54d",
        5,
        None,
        ["A.internal_count", "B.internal_count"],
        1,
        "a cycle A <-> B broken by A's input port default_value (v0.4.14)",
    ),
    "RNNs.json": (
        "examples/MDF/RNN/RNNs.json",
        "018ab26736705ff38f678702bf48dde821556499",
        300,
        0.01,
        ["rnn_node.out_port_r", "input_node.out_port"],
        30,
        "ModECI MDF v0.3 (modeci-mdf v0.3.2): sin/tanh with scale over array parameters; "
        "x starts as a scalar and becomes an array",
    ),
    "IAF_net3.json": (
        "examples/MDF/RNN/IAF_net3.json",
        "36fee8c9422a833737a0ffa9b252eed8c84c2b1a",
        1000,
        0.1,
        ["pre.v_output", "post.v_output", "syn_post.current_output"],
        50,
        "two pulse inputs summed (reduce: add) into an IaF cell, a synapse by MatMul (v0.4.16)",
    ),
    "FN.mdf.json": (
        "examples/NeuroML/FN.mdf.json",
        "0c192913d8b50b355be9016ec4564317019f4e6f",
        2000,
        5e-05,
        ["FNpop_0.V", "FNpop_0.W"],
        100,
        "FitzHugh-Nagumo from NeuroML/LEMS (modeci-mdf's NeuroML interface, MDF v0.3, "
        "no generating_application), SI time (MSEC = 0.001)",
    ),
    "onnx_ab.json": (
        "examples/ONNX/ab.json",
        "04992304022887c65bc1de69fc088c5f154e1040",
        1,
        None,
        [],
        1,
        "onnx_to_mdf of modeci-mdf v0.3.3 on a torch Add/Mul, run with an input as "
        "test_execution_engine_onnx does (without one the reference adds int zeros to a float "
        "in onnxruntime and fails)",
    ),
    "Translated_States.json": (
        "examples/MDF/translation/Translated_States.json",
        "04992304022887c65bc1de69fc088c5f154e1040",
        100,
        None,
        ["sine_node.out_port", "counter_node.out_port"],
        10,
        "the MDF translator's stateful form of States (v0.3.3): next values as functions, a "
        "0.3 function {linear: {args}}",
    ),
    "IzhikevichTest.mdf.json": (
        "examples/NeuroML/IzhikevichTest.mdf.json",
        "107511d4bc635e38caef2f37c692453aea79565f",
        2400,
        5e-05,
        ["izhPop.v", "izhPop.u"],
        100,
        "an older NeuroMLlite export: parameter conditions as a mapping keyed by id, a "
        "pulse input that has its output port i",
    ),
}

#: inputs given as the repository's tests give them
INITIALIZER = {"onnx_ab.json": {"input": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}}

#: file -> (path, commit, the one line mdf_engine refuses it with, why)
REFUSED = {
    "onnx_abc.json": (
        "examples/ONNX/abc.json",
        "072e0aea5796fb6d75dd2123ba91bd90cb325790",
        "Loop body must be an ONNX GraphProto",
        "ModECI MDF v0.2 (modeci-mdf v0.2.1): an onnx::Loop whose body is written as an MDF "
        "graph in a parameter value, shapes as strings '(2, 3)'; the reference engine fails "
        "reading it (IterableValidationError), and no engine runs an MDF graph as a Loop body",
    ),
    "leaky_competing_accumulator.yaml": (
        "examples/PyTorch/leaky_competing_accumulator.yaml",
        "140978373771714e1c19821df45f8a29ca4440b1",
        "condition args must be a mapping",
        "ModECI MDF v0.1 (modeci-mdf v0.1.2) sketch: bare parameter values, a function "
        "'lca_timestep' defined only in comments, conditions 'or' with positional args; the "
        "reference engine fails reading it (IterableValidationError)",
    ),
}


def _written_by(model) -> str:
    """The file's own ``generating_application`` and ``format``."""
    import yaml

    text = model.read_text()
    data = json.loads(text) if model.suffix == ".json" else yaml.safe_load(text)
    body = next(iter(data.values()))
    return ", ".join(str(body[k]) for k in ("generating_application", "format") if k in body)


def main() -> None:
    mv = version("modeci-mdf")
    report: dict[str, dict] = {
        "_": {
            "source": f"{REPO} examples/ (read from the repository; no release ships them)",
            "not taken": "examples/PyTorch/ddm.json (24 kB: an ONNX Loop with an MDF subgraph "
            "of RandomNormalLike steps, like onnx_abc.json), the PyTorch/ImageNet model files "
            "(MBs of weights), examples/PsyNeuLink/*.json (MDF v0.1, PsyNeuLink objects as "
            "functions: see ../psyneulink_old/README.md), the files already in the corpus or "
            "in shared/models by content (Simple, ABCD, Arrays, States, NewtonCooling, "
            "ParametersFunctions, abc_conditions, IAFs, IAF_net, SwitchedRLC, ACT-R)",
        }
    }
    for name, (path, commit, steps, dt, trace, every, note) in SOURCES.items():
        model = OUT / name
        init = INITIALIZER.get(name)
        arrays = {k: np.asarray(v, dtype=float) for k, v in (init or {}).items()} or None
        final, traces = reference_run(model, steps, dt, initializer=arrays, trace=trace)
        write_oracle(
            model,
            writer=f"modeci-mdf example file ({REPO} {path} @ {commit[:10]})",
            writer_version=_written_by(model),
            generator=rel(__file__),
            protocol="reference",
            steps=steps,
            dt=dt,
            initializer=init,
            expected=final,
            traces={"every": every, **{k: v[::every] for k, v in traces.items()}},
            note=f"{note}; oracle: modeci-mdf {mv}'s reference engine",
        )
        report[name] = {"source": f"{path} @ {commit}", "oracle": f"reference, {steps} steps"}
        print(name, "written")
    for name, (path, commit, error, why) in REFUSED.items():
        write_oracle(
            OUT / name,
            writer=f"modeci-mdf example file ({REPO} {path} @ {commit[:10]})",
            writer_version=_written_by(OUT / name),
            generator=rel(__file__),
            protocol="refuse",
            steps=1,
            dt=None,
            expected={"error_contains": error},
            note=why,
        )
        report[name] = {"source": f"{path} @ {commit}", "oracle": f"refuse: {error}"}
        print(name, "written (refuse)")
    (OUT / "generation_report.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
