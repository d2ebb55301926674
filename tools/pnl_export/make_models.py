"""Build small PsyNeuLink compositions, run them, and write their MDF exports plus the values
PsyNeuLink computed, for tests/test_pnl_models.py.

Run with a Python that has PsyNeuLink installed (it pins an older modeci-mdf and numpy, so use a
separate environment, e.g. ``python -m venv /tmp/pnlenv && /tmp/pnlenv/bin/pip install
psyneulink``)::

    /tmp/pnlenv/bin/python tools/pnl_export/make_models.py [OUTDIR]

OUTDIR defaults to tests/data/pnl. For every model NAME it writes ``NAME.json`` (the MDF model,
from ``pnl.get_mdf_serialized``) and ``NAME.expected.json``: the PsyNeuLink version, the inputs of
every trial (keyed by the MDF input port, ``<node>_InputPort_<k>``), and per trial the value of
every output port of every node after the trial, as PsyNeuLink holds them. ``functions.expected.json``
holds PsyNeuLink's outputs of single functions (``Function.execute``) on fixed random inputs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import psyneulink as pnl


def _plain(x):
    return np.asarray(x, dtype=float).tolist()


def _all_mechanisms(comp):
    for node in comp.nodes:
        if isinstance(node, pnl.Composition):
            yield from _all_mechanisms(node)
        else:
            yield node


def record(comp, inputs, n_trials, **run_kw):
    """Run ``comp`` trial by trial; return the per-trial output port values of every node."""
    trials = []
    for t in range(n_trials):
        trial_inputs = {k: [v[t]] for k, v in inputs.items()}
        comp.run(inputs=trial_inputs, **run_kw)
        outs = {}
        for mech in _all_mechanisms(comp):
            for port in mech.output_ports:
                pid = pnl.core.globals.utilities.parse_valid_identifier(f"{mech.name}_{port.name}")
                outs[pid] = _plain(port.parameters.value.get(comp))
        trials.append(outs)
    return trials


def input_port_ids(inputs):
    out = {}
    for mech, vals in inputs.items():
        pid = pnl.core.globals.utilities.parse_valid_identifier(f"{mech.name}_InputPort_0")
        out[pid] = [_plain(v) for v in vals]
    return out


# -- the compositions ---------------------------------------------------------------------------


def fhn():
    """A FitzHugh-Nagumo integrator mechanism (one node, stateful, dt=0.05)."""
    fn = pnl.FitzHughNagumoIntegrator(initial_v=-1.0, initial_w=0.5, time_step_size=0.05)
    A = pnl.IntegratorMechanism(name="FHN", function=fn)
    comp = pnl.Composition(name="fhn", pathways=[[A]])
    inputs = {A: [[0.5], [0.5], [1.0], [0.0], [0.25]]}
    return comp, inputs


def linear_chain():
    """A -> B -> C with Linear/Logistic/Exponential; A at pass 0, B after A, C every pass once B
    ran; the trial ends after 3 calls of C."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=2.0, intercept=0.5))
    B = pnl.TransferMechanism(name="B", function=pnl.Logistic(gain=1.5, bias=0.2, offset=0.1))
    C = pnl.TransferMechanism(name="C", function=pnl.Exponential(rate=0.3, scale=2.0))
    comp = pnl.Composition(name="linear_chain", pathways=[[A, B, C]])
    comp.scheduler.add_condition(A, pnl.AtPass(0))
    comp.scheduler.add_condition(B, pnl.EveryNCalls(A, 1))
    comp.scheduler.add_condition(C, pnl.AfterNCalls(B, 1))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(C, 3)}
    inputs = {A: [[1.0], [-0.5], [2.0]]}
    return comp, inputs


def branching():
    """A feeds B and C (integrators), both feed D; timing conditions (AtPass, EveryNCalls,
    AfterNCalls, AfterNPasses, All); B and C integrate over the passes and trials.
    (Both of D's senders are integrators: PsyNeuLink exports a Transfer mechanism's output as
    1-d and an Integrator mechanism's as 2-d, and D's input stacks them.)"""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=0.5))
    B = pnl.IntegratorMechanism(name="B", function=pnl.AdaptiveIntegrator(rate=0.3))
    C = pnl.IntegratorMechanism(name="C", function=pnl.SimpleIntegrator(rate=0.5))
    D = pnl.TransferMechanism(name="D", function=pnl.Logistic(gain=0.8))
    comp = pnl.Composition(name="branching")
    for m in (A, B, C, D):
        comp.add_node(m)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0]]), A, B)
    comp.add_projection(pnl.MappingProjection(matrix=[[2.0]]), A, C)
    comp.add_projection(pnl.MappingProjection(), B, D)
    comp.add_projection(pnl.MappingProjection(), C, D)
    comp.scheduler.add_condition_set(
        {
            A: pnl.AtPass(0),
            B: pnl.EveryNCalls(A, 1),
            C: pnl.AfterNCalls(A, 1),
            D: pnl.All(pnl.AfterNPasses(2), pnl.EveryNCalls(C, 2)),
        }
    )
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(D, 2)}
    inputs = {A: [[1.0], [2.0], [0.5]]}
    return comp, inputs


def nested():
    """An outer composition holding a mechanism and an inner composition of two mechanisms, both
    input nodes (PsyNeuLink 0.21 drops projections into a nested composition from the export)."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=3.0, intercept=1.0))
    E = pnl.TransferMechanism(name="E", function=pnl.Logistic(gain=0.5))
    F = pnl.TransferMechanism(name="F", function=pnl.Linear(slope=-1.0, intercept=0.25))
    inner = pnl.Composition(name="inner", pathways=[[E, F]])
    comp = pnl.Composition(name="nested")
    comp.add_node(A)
    comp.add_node(inner)
    inputs = {A: [[1.0], [0.0], [-1.0]], E: [[0.5], [2.0], [-3.0]]}
    return comp, inputs


def stroop():
    """A Stroop model: color and word pathways, a task layer integrated by a leaky competing
    integrator that settles for 5 passes, and conflict monitoring by Energy on the output.
    (PsyNeuLink 0.21 drops an LCAMechanism's recurrent projection and a controller's control
    signals from the export, so the task layer has no lateral inhibition and no controller.)"""
    color_input = pnl.ProcessingMechanism(name="color_input", input_shapes=2)
    color_hidden = pnl.ProcessingMechanism(
        name="color_hidden", input_shapes=2, function=pnl.Logistic(bias=-4)
    )
    output = pnl.ProcessingMechanism(name="OUTPUT", input_shapes=2, function=pnl.Logistic)
    word_input = pnl.ProcessingMechanism(name="word_input", input_shapes=2)
    word_hidden = pnl.ProcessingMechanism(
        name="word_hidden", input_shapes=2, function=pnl.Logistic(bias=-4)
    )
    task_input = pnl.ProcessingMechanism(name="task_input", input_shapes=2)
    task = pnl.IntegratorMechanism(
        name="TASK",
        input_shapes=2,
        function=pnl.LeakyCompetingIntegrator(rate=0.5, time_step_size=0.1, initializer=[0.5, 0.5]),
    )
    conflict = pnl.ProcessingMechanism(
        name="Conflict_Monitor",
        input_shapes=2,
        function=pnl.Energy(input_shapes=2, matrix=[[0, -2.5], [-2.5, 0]]),
    )
    comp = pnl.Composition(name="stroop")
    w = np.array
    comp.add_linear_processing_pathway(
        [color_input, w([[2, -2], [-2, 2]]), color_hidden, w([[2, -2], [-2, 2]]), output]
    )
    comp.add_linear_processing_pathway(
        [word_input, w([[3, -3], [-3, 3]]), word_hidden, w([[3, -3], [-3, 3]]), output]
    )
    comp.add_linear_processing_pathway([task_input, task, w([[4, 4], [0, 0]]), color_hidden])
    comp.add_linear_processing_pathway([task_input, task, w([[0, 0], [4, 4]]), word_hidden])
    comp.add_linear_processing_pathway([output, conflict])
    settling = 5
    for origin in (color_input, word_input, task_input):
        comp.scheduler.add_condition(origin, pnl.AtPass(0))
    comp.scheduler.add_condition(task, pnl.Always())
    comp.scheduler.add_condition(color_hidden, pnl.EveryNCalls(task, settling))
    comp.scheduler.add_condition(word_hidden, pnl.EveryNCalls(task, settling))
    comp.scheduler.add_condition(
        output, pnl.All(pnl.EveryNCalls(color_hidden, 1), pnl.EveryNCalls(word_hidden, 1))
    )
    comp.scheduler.add_condition(conflict, pnl.EveryNCalls(output, 1))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(conflict, 1)}
    red, green = [1, 0], [0, 1]
    inputs = {
        color_input: [red, red, green],
        word_input: [green, red, green],
        task_input: [[1, 0], [1, 0], [0, 1]],
    }
    return comp, inputs


# -- single functions ---------------------------------------------------------------------------


def _call(fn, variable):
    return _plain(fn.execute(variable))


def function_cases():
    """PsyNeuLink's own outputs of single functions on fixed random inputs, with the arguments
    (named as the MDF export names them) that produced them."""
    rng = np.random.default_rng(2024)
    cases = []

    def add(name, args, fn, variables, state=None):
        for v in variables:
            case = {
                "function": name,
                "args": args,
                "variable0": _plain(v),
                "expected": _call(fn, v),
            }
            if state is not None:
                case["state_after"] = state(fn)
            cases.append(case)

    x = rng.normal(size=(3, 4))
    add(
        "linear",
        {"slope": 1.7, "intercept": -0.3, "scale": 0.8, "offset": 0.25},
        pnl.Linear(slope=1.7, intercept=-0.3, scale=0.8, offset=0.25),
        list(x),
    )
    add(
        "logistic",
        {"gain": 1.3, "bias": 0.4, "x_0": 0.2, "scale": 1.5, "offset": -0.1},
        pnl.Logistic(gain=1.3, bias=0.4, x_0=0.2, scale=1.5, offset=-0.1),
        list(x),
    )
    add(
        "exponential",
        {"rate": 0.6, "bias": -0.2, "scale": 1.4, "offset": 0.3},
        pnl.Exponential(rate=0.6, bias=-0.2, scale=1.4, offset=0.3),
        list(x),
    )
    two = [rng.normal(size=(2, 3)) for _ in range(3)]
    add(
        "linearcombination",
        {"weights": [1.0, -2.0], "scale": 1.5, "offset": 0.5},
        pnl.LinearCombination(
            default_variable=two[0], weights=[[1.0], [-2.0]], scale=1.5, offset=0.5
        ),
        two,
    )
    pos = [np.abs(t) + 0.1 for t in two]
    add(
        "linearcombination",
        {"operation": "product", "exponents": [1.0, -1.0]},
        pnl.LinearCombination(
            default_variable=pos[0], operation=pnl.PRODUCT, exponents=[[1.0], [-1.0]]
        ),
        pos,
    )
    add(
        "reduce",
        {"weights": [1.0, 2.0, -1.0], "scale": 0.5, "offset": 1.0},
        pnl.Reduce(default_variable=[[0, 0, 0]], weights=[1.0, 2.0, -1.0], scale=0.5, offset=1.0),
        [rng.normal(size=(1, 3)) for _ in range(3)],
    )
    add(
        "reduce",
        {"operation": "product"},
        pnl.Reduce(default_variable=[[0, 0, 0]], operation=pnl.PRODUCT),
        [rng.normal(size=(1, 3)) for _ in range(3)],
    )
    for metric in (
        "max_abs_diff",
        "difference",
        "dot_product",
        "euclidean",
        "cosine",
        "correlation",
        "energy",
    ):
        for normalize in (False, True):
            add(
                "distance",
                {"metric": metric, "normalize": normalize},
                pnl.Distance(default_variable=two[0], metric=metric, normalize=normalize),
                two,
            )
    probs = [rng.uniform(0.05, 1.0, size=(2, 3)) for _ in range(2)]
    add(
        "distance",
        {"metric": "cross-entropy"},
        pnl.Distance(default_variable=probs[0], metric=pnl.CROSS_ENTROPY),
        probs,
    )
    m = [[0, -2.5, 1.0], [-2.5, 0, 0.5], [1.0, 0.5, 0]]
    add(
        "energy",
        {"matrix": m},
        pnl.Energy(default_variable=[0, 0, 0], matrix=m),
        [rng.uniform(size=3) for _ in range(3)],
    )
    add(
        "energy",
        {"matrix": m, "normalize": True},
        pnl.Energy(default_variable=[0, 0, 0], matrix=m, normalize=True),
        [rng.uniform(size=3) for _ in range(2)],
    )
    for drift, start, thr in ((0.5, 0.0, 1.0), (-0.8, 0.2, 0.8), (0.0, -0.1, 1.2), (3.0, 0.3, 2.0)):
        add(
            "driftdiffusionanalytical",
            {
                "drift_rate": drift,
                "threshold": thr,
                "starting_value": start,
                "noise": 0.7,
                "non_decision_time": 0.3,
            },
            pnl.DriftDiffusionAnalytical(
                drift_rate=drift,
                threshold=thr,
                starting_value=start,
                noise=0.7,
                non_decision_time=0.3,
            ),
            [np.array([1.0]), np.array([0.6])],
        )
    # stateful: a sequence of calls; the case records the state before and after each call
    seq = [rng.normal(size=2) for _ in range(4)]
    for name, cls, args in (
        ("simpleintegrator", pnl.SimpleIntegrator, {"rate": 0.4, "offset": 0.1}),
        ("adaptiveintegrator", pnl.AdaptiveIntegrator, {"rate": 0.3, "offset": -0.2}),
        (
            "leakycompetingintegrator",
            pnl.LeakyCompetingIntegrator,
            {"rate": 0.6, "offset": 0.05, "time_step_size": 0.2},
        ),
    ):
        fn = cls(default_variable=[0.0, 0.0], initializer=[0.2, -0.1], **args)
        prev = [0.2, -0.1]
        for v in seq:
            out = _call(fn, v)
            cases.append(
                {
                    "function": name,
                    "args": args,
                    "variable0": _plain(v),
                    "previous_value": prev,
                    "expected": out,
                }
            )
            prev = out
    for method in ("RK4", "EULER"):
        args = {
            "time_step_size": 0.1,
            "a_v": -0.3,
            "e_v": -0.9,
            "time_constant_w": 10.0,
            "integration_method": method,
        }
        fn = pnl.FitzHughNagumoIntegrator(initial_v=0.2, initial_w=-0.1, **args)
        state = [0.2, -0.1, 0.0]
        for v in (0.5, 0.7, -0.2):
            out = fn.execute(v)
            outs = [float(np.ravel(o)[0]) for o in out]
            cases.append(
                {
                    "function": "fitzhughnagumointegrator",
                    "args": args,
                    "variable0": v,
                    "state": state,
                    "expected": outs,
                }
            )
            state = outs
    # (added with the wide corpus, tools/wild/gen_psyneulink_wide.py: drawn after the cases
    # above. The stored file keeps the earlier cases as first written: rerun today, a few
    # differ in the last digits (DDM moments at small drift: 2e-5 relative, PsyNeuLink's own
    # rounding), and only these cases were appended)
    y = rng.normal(size=(3, 4))
    add(
        "tanh",
        {"gain": 1.2, "bias": 0.3, "x_0": -0.2, "offset": 0.1, "scale": 0.9},
        pnl.Tanh(gain=1.2, bias=0.3, x_0=-0.2, offset=0.1, scale=0.9),
        list(y),
    )
    add(
        "relu",
        {"gain": 1.5, "bias": 0.2, "leak": 0.1, "scale": 1.1, "offset": -0.05},
        pnl.ReLU(gain=1.5, bias=0.2, leak=0.1, scale=1.1, offset=-0.05),
        list(y),
    )
    add(
        "gaussian",
        {"standard_deviation": 0.7, "bias": 0.1, "scale": 1.2, "offset": 0.2},
        pnl.Gaussian(standard_deviation=0.7, bias=0.1, scale=1.2, offset=0.2),
        list(y),
    )
    add("identity", {}, pnl.Identity(), list(y))
    for output in ("ALL", "MAX_VAL", "MAX_INDICATOR"):
        add(
            "softmax",
            {"gain": 1.5, "output": output},
            pnl.SoftMax(gain=1.5, output=getattr(pnl, output)),
            list(y),
        )
    seq = list(rng.normal(size=(4, 2)))
    args = {"rate": 0.6, "decay": 0.2, "rest": 0.05, "max_val": 1.0, "min_val": -0.5}
    fn = pnl.InteractiveActivationIntegrator(default_variable=[0.0, 0.0], **args)
    for v in seq:
        prev = _plain(np.ravel(fn.parameters.previous_value.get()))
        out = _call(fn, v)
        cases.append(
            {
                "function": "interactiveactivationintegrator",
                "args": args,
                "variable0": _plain(v),
                "previous_value": prev,
                "expected": out,
            }
        )
    args = {"rate": 0.5, "decay": 0.8, "offset": 0.1, "time_step_size": 0.1}
    fn = pnl.OrnsteinUhlenbeckIntegrator(default_variable=[0.0, 0.0], **args)
    for v in seq:
        prev = _plain(np.ravel(fn.parameters.previous_value.get()))
        out = _plain(np.ravel(fn.execute(v)[0]))  # (its second output is the time)
        cases.append(
            {
                "function": "ornsteinuhlenbeckintegrator",
                "args": args,
                "variable0": _plain(v),
                "previous_value": prev,
                "expected": out,
            }
        )
    return cases


MODELS = {
    "fhn": fhn,
    "linear_chain": linear_chain,
    "branching": branching,
    "nested": nested,
    "stroop": stroop,
}


def main(outdir: Path, only=None) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        if only and name not in only:
            continue
        comp, inputs = build()
        n_trials = len(next(iter(inputs.values())))
        mdf_text = pnl.get_mdf_serialized(comp, fmt="json")
        trials = record(comp, inputs, n_trials)
        (outdir / f"{name}.json").write_text(mdf_text)
        expected = {
            "psyneulink": pnl.__version__,
            "composition": comp.name,
            "doc": build.__doc__,
            "inputs": input_port_ids(inputs),
            "trials": trials,
            "results": [_plain(r) for r in comp.results],
        }
        (outdir / f"{name}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        print(f"{name}: {n_trials} trials written")


def write_function_cases(outdir: Path) -> None:
    cases = function_cases()
    (outdir / "functions.expected.json").write_text(
        json.dumps({"psyneulink": pnl.__version__, "cases": cases}, indent=1) + "\n"
    )
    print(f"functions: {len(cases)} cases written")


if __name__ == "__main__":
    args = sys.argv[1:]
    out = (
        Path(args[0])
        if args and not args[0].startswith("-")
        else (Path(__file__).resolve().parents[2] / "tests" / "data" / "pnl")
    )
    only = [a[2:] for a in args if a.startswith("--")] or None
    if not only or "functions" in only:
        out.mkdir(parents=True, exist_ok=True)
        write_function_cases(out)
    main(out, only)
