"""Write the PsyNeuLink part of the real-files corpus: compositions built, exported and run by
PsyNeuLink itself, with PsyNeuLink's own results as the oracle.

Run with the Python of an environment where one PsyNeuLink release is installed (each release
in a venv of its own, see tests/data/wild/psyneulink/README.md)::

    /work/venvs/pnl/bin/python tools/pnl_export/make_wild.py [OUTDIR]

OUTDIR defaults to ``tests/data/wild/psyneulink/v<version>``. For every composition NAME it
writes ``NAME.json`` (``pnl.get_mdf_serialized(comp)`` before the run) and
``NAME.oracle.json``:

* ``psyneulink``: the version that wrote and ran it; ``scheduling_mode``: "standard" or
  "exact_time" (an MDF file does not record it);
* ``inputs``: per MDF input port id, the value given in each trial;
* ``trials``: per trial, every output port of every mechanism after the trial (ids as the
  export spells them);
* ``results``: ``comp.results`` (the output nodes' values per trial);
* ``execution``: per trial, the scheduler's execution list of that trial (sorted MDF node ids
  per time step; a nested composition's own steps are listed under ``nested_execution``);
* ``times``: per trial, the absolute time in ms of every time step, where the scheduler
  records them (absolute-time conditions).

Works with PsyNeuLink 0.15 to 0.21 (``input_shapes`` was called ``size`` before 0.20).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import numpy as np
import psyneulink as pnl

VERSION = pnl.__version__
_SHAPE_KW = (
    "input_shapes"
    if "input_shapes" in inspect.signature(pnl.ProcessingMechanism.__init__).parameters
    else "size"
)


def shaped(n: int) -> dict:
    """The keyword giving a mechanism an input of ``n`` elements in this release."""
    return {_SHAPE_KW: n}


def ident(name: str) -> str:
    return pnl.core.globals.utilities.parse_valid_identifier(name)


def _plain(x):
    try:
        return np.asarray(x, dtype=float).tolist()
    except (TypeError, ValueError):
        return [_plain(v) for v in x]


def _mechanisms(comp):
    for node in comp.nodes:
        if isinstance(node, pnl.Composition):
            yield from _mechanisms(node)
        else:
            yield node


def _compositions(comp):
    """``comp`` and every composition nested in it, at any depth."""
    yield comp
    for node in comp.nodes:
        if isinstance(node, pnl.Composition):
            yield from _compositions(node)


def _step_ids(step) -> list[str]:
    return sorted(ident(n.name) for n in step)


def _ms(t) -> float:
    """A scheduler timestamp (a ``Time``, whose ``absolute`` is a pint quantity) in ms."""
    q = getattr(t, "absolute", t)
    return float(q.to("ms").m) if hasattr(q, "to") else float(q)


def external_port(mdf: dict, mech) -> str:
    """The MDF input port that receives ``mech``'s external input: ``<node>_InputPort_0``, or,
    when several projections arrive there, the port of the one from the input CIM."""
    nodes = {}

    def walk(graph):
        for nid, node in graph["nodes"].items():
            nodes[nid] = node
            if "nodes" in node:
                walk(node)

    for graph in next(iter(mdf.values()))["graphs"].values():
        walk(graph)
    base = ident(f"{mech.name}_InputPort_0")
    ports = list(nodes[ident(mech.name)].get("input_ports", {}))
    if base in ports:
        return base
    cim = [p for p in ports if p.startswith(base) and "INPUT_CIM" in p]
    if len(cim) != 1:
        raise RuntimeError(f"no external input port for {mech.name} among {ports}")
    return cim[0]


def record(
    name: str,
    comp,
    inputs: dict,
    mode: str = "standard",
    doc: str = "",
    *,
    exported: tuple = (),
    simple_edge_format: bool = True,
    **run_kwargs,
) -> tuple:
    """Export ``comp`` (with the compositions ``exported``, one graph each, when given), run it
    trial by trial (``comp.run(**run_kwargs)``), return (mdf text, oracle)."""
    mdf_text = pnl.get_mdf_serialized(
        *(exported or (comp,)), fmt="json", simple_edge_format=simple_edge_format
    )
    mdf = json.loads(mdf_text)
    n_trials = len(next(iter(inputs.values())))
    eid = comp.default_execution_id
    trials, execution, nested_exec, times = [], [], [], []
    seen = 0
    for t in range(n_trials):
        comp.run(inputs={k: [v[t]] for k, v in inputs.items()}, **run_kwargs)
        elist = comp.scheduler.execution_list[eid]
        steps = elist[seen:]
        seen = len(elist)
        execution.append([_step_ids(s) for s in steps])
        inner = {}
        for node in _compositions(comp):
            if node is not comp:
                inner[ident(node.name)] = [
                    _step_ids(s) for s in node.scheduler.execution_list.get(eid, [])
                ]
        nested_exec.append(inner)
        stamps = getattr(comp.scheduler, "execution_timestamps", {}).get(eid, [])
        times.append([_ms(s) for s in stamps[len(stamps) - len(steps) :]] if stamps else None)
        outs = {}
        for mech in _mechanisms(comp):
            for port in mech.output_ports:
                outs[ident(f"{mech.name}_{port.name}")] = _plain(port.parameters.value.get(comp))
        trials.append(outs)
    oracle = {
        "psyneulink": VERSION,
        "composition": comp.name,
        "doc": doc,
        "scheduling_mode": mode,
        "inputs": {external_port(mdf, m): [_plain(x) for x in v] for m, v in inputs.items()},
        "trials": trials,
        "results": [_plain(r) for r in comp.results],
        "execution": execution,
        "times": times,
    }
    if any(nested_exec):
        oracle["nested_execution"] = nested_exec
    return mdf_text, oracle


# -- the compositions ---------------------------------------------------------------------------


def chain_conditions():
    """A -> B -> C (Linear, Logistic, Exponential); A at pass 0, B after every A, C after B's
    first call; the trial ends after 3 calls of C."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=2.0, intercept=0.5))
    B = pnl.TransferMechanism(name="B", function=pnl.Logistic(gain=1.5, bias=0.2, offset=0.1))
    C = pnl.TransferMechanism(name="C", function=pnl.Exponential(rate=0.3, scale=2.0))
    comp = pnl.Composition(name="chain_conditions", pathways=[[A, B, C]])
    comp.scheduler.add_condition(A, pnl.AtPass(0))
    comp.scheduler.add_condition(B, pnl.EveryNCalls(A, 1))
    comp.scheduler.add_condition(C, pnl.AfterNCalls(B, 1))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(C, 3)}
    return comp, {A: [[1.0], [-0.5], [2.0]]}


def fan_in():
    """A feeds two integrator mechanisms B (adaptive) and C (simple), whose projections into D's
    one input port are summed; B and C keep their state across trials."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=0.5))
    B = pnl.IntegratorMechanism(name="B", function=pnl.AdaptiveIntegrator(rate=0.3))
    C = pnl.IntegratorMechanism(name="C", function=pnl.SimpleIntegrator(rate=0.5))
    D = pnl.TransferMechanism(name="D", function=pnl.Logistic(gain=0.8))
    comp = pnl.Composition(name="fan_in")
    for m in (A, B, C, D):
        comp.add_node(m)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0]]), A, B)
    comp.add_projection(pnl.MappingProjection(matrix=[[2.0]]), A, C)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0]]), B, D)
    comp.add_projection(pnl.MappingProjection(matrix=[[-0.5]]), C, D)
    comp.scheduler.add_condition_set(
        {
            A: pnl.AtPass(0),
            B: pnl.EveryNCalls(A, 1),
            C: pnl.AfterNCalls(A, 1),
            D: pnl.All(pnl.AfterNPasses(2), pnl.EveryNCalls(C, 2)),
        }
    )
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(D, 2)}
    return comp, {A: [[1.0], [2.0], [0.5], [-1.0]]}


def nested():
    """An outer composition holding a mechanism and an inner composition of two mechanisms."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=3.0, intercept=1.0))
    E = pnl.TransferMechanism(name="E", function=pnl.Logistic(gain=0.5))
    F = pnl.TransferMechanism(name="F", function=pnl.Linear(slope=-1.0, intercept=0.25))
    inner = pnl.Composition(name="inner", pathways=[[E, F]])
    comp = pnl.Composition(name="nested")
    comp.add_node(A)
    comp.add_node(inner)
    return comp, {A: [[1.0], [0.0], [-1.0]], E: [[0.5], [2.0], [-3.0]]}


def fhn():
    """A FitzHugh-Nagumo integrator mechanism, 4 time steps per trial, state kept across
    trials."""
    fn = pnl.FitzHughNagumoIntegrator(initial_v=-1.0, initial_w=0.5, time_step_size=0.05)
    A = pnl.IntegratorMechanism(name="FHN", function=fn)
    comp = pnl.Composition(name="fhn", pathways=[[A]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(A, 4)}
    return comp, {A: [[0.5], [0.5], [1.0], [0.0], [0.25]]}


def ddm():
    """A linear drift input into a DDM mechanism with DriftDiffusionAnalytical (threshold,
    starting point, noise and non-decision time t0); its decision variable, response time and
    probabilities."""
    stim = pnl.TransferMechanism(name="stimulus", function=pnl.Linear(slope=0.8))
    dec = pnl.DDM(
        name="decision",
        function=pnl.DriftDiffusionAnalytical(
            drift_rate=1.0, threshold=1.2, starting_value=0.1, noise=0.5, non_decision_time=0.25
        ),
        output_ports=[
            pnl.DECISION_VARIABLE,
            pnl.RESPONSE_TIME,
            pnl.PROBABILITY_UPPER_THRESHOLD,
            pnl.PROBABILITY_LOWER_THRESHOLD,
        ],
    )
    comp = pnl.Composition(name="ddm", pathways=[[stim, dec]])
    return comp, {stim: [[0.5], [1.0], [-0.3], [0.0]]}


def exact_time():
    """Under SchedulingMode.EXACT_TIME: A every 1 ms, B (which reads A) every 2 ms, C every
    3 ms from 1 ms; the trial ends after 6 calls of A. Nodes of one time step read their senders' values
    from before that step."""
    A = pnl.TransferMechanism(
        name="A",
        function=pnl.Linear(slope=1.0, intercept=1.0),
        integrator_mode=True,
        integration_rate=0.5,
    )
    B = pnl.TransferMechanism(name="B", function=pnl.Linear(slope=2.0))
    C = pnl.TransferMechanism(name="C", function=pnl.Linear(slope=-1.0))
    comp = pnl.Composition(name="exact_time", pathways=[[A, B, C]])
    comp.scheduler.mode = pnl.SchedulingMode.EXACT_TIME
    comp.scheduler.add_condition(A, pnl.TimeInterval(repeat=1))
    comp.scheduler.add_condition(B, pnl.TimeInterval(repeat=2))
    comp.scheduler.add_condition(C, pnl.TimeInterval(start=1, repeat=3))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(A, 6)}
    return comp, {A: [[1.0], [0.5], [2.0]]}


def stroop_lca():
    """Stroop: color and word pathways into a response layer that settles as an LCA (leaky
    competing accumulator, no lateral inhibition: see docs/pnl.md) for 6 passes; a task
    layer biases the hidden layers; conflict is monitored by Energy on the response."""
    color_input = pnl.ProcessingMechanism(name="color_input", **shaped(2))
    word_input = pnl.ProcessingMechanism(name="word_input", **shaped(2))
    task_input = pnl.ProcessingMechanism(name="task_input", **shaped(2))
    color_hidden = pnl.ProcessingMechanism(
        name="color_hidden", **shaped(2), function=pnl.Logistic(bias=-4)
    )
    word_hidden = pnl.ProcessingMechanism(
        name="word_hidden", **shaped(2), function=pnl.Logistic(bias=-4)
    )
    response = pnl.LCAMechanism(
        name="response",
        **shaped(2),
        leak=0.5,
        competition=0.0,
        self_excitation=0.0,
        time_step_size=0.1,
        integrator_mode=True,
    )
    conflict = pnl.ProcessingMechanism(
        name="conflict_monitor",
        **shaped(2),
        function=pnl.Energy(matrix=[[0, -2.5], [-2.5, 0]], **shaped(2)),
    )
    comp = pnl.Composition(name="stroop_lca")
    w = np.array
    comp.add_linear_processing_pathway(
        [
            color_input,
            w([[2.0, -2.0], [-2.0, 2.0]]),
            color_hidden,
            w([[2.0, -2.0], [-2.0, 2.0]]),
            response,
        ]
    )
    comp.add_linear_processing_pathway(
        [
            word_input,
            w([[3.0, -3.0], [-3.0, 3.0]]),
            word_hidden,
            w([[3.0, -3.0], [-3.0, 3.0]]),
            response,
        ]
    )
    comp.add_linear_processing_pathway([task_input, w([[4.0, 4.0], [0.0, 0.0]]), color_hidden])
    comp.add_linear_processing_pathway([task_input, w([[0.0, 0.0], [4.0, 4.0]]), word_hidden])
    comp.add_linear_processing_pathway([response, conflict])
    settle = 6
    for origin in (color_input, word_input, task_input):
        comp.scheduler.add_condition(origin, pnl.AtPass(0))
    comp.scheduler.add_condition(color_hidden, pnl.AtPass(1))
    comp.scheduler.add_condition(word_hidden, pnl.AtPass(1))
    comp.scheduler.add_condition(response, pnl.AfterNPasses(2))
    comp.scheduler.add_condition(conflict, pnl.EveryNCalls(response, settle))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(conflict, 1)}
    red, green = [1.0, 0.0], [0.0, 1.0]
    inputs = {
        color_input: [red, red, green, green],
        word_input: [red, green, green, red],
        task_input: [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]],
    }
    return comp, inputs


def cycle():
    """A two-node cycle: A (Linear) and B (Logistic) project into each other; A also gets the
    external input. PsyNeuLink runs a cycle's nodes in one time step, each reading the other's
    value from before the step."""
    A = pnl.TransferMechanism(name="A", function=pnl.Linear(slope=0.5, intercept=0.25))
    B = pnl.TransferMechanism(name="B", function=pnl.Logistic(gain=2.0))
    comp = pnl.Composition(name="cycle")
    comp.add_nodes([A, B])
    comp.add_projection(pnl.MappingProjection(matrix=[[1.5]]), A, B)
    comp.add_projection(pnl.MappingProjection(matrix=[[-1.0]]), B, A)
    return comp, {A: [[1.0], [0.5], [2.0], [-1.0]]}


MODELS = {
    "chain_conditions": chain_conditions,
    "fan_in": fan_in,
    "nested": nested,
    "fhn": fhn,
    "ddm": ddm,
    "exact_time": exact_time,
    "stroop_lca": stroop_lca,
    "cycle": cycle,
}


def main(outdir: Path, only: list[str] | None = None) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        if only and name not in only:
            continue
        try:
            comp, inputs = build()
            mode = (
                "exact_time" if comp.scheduler.mode == pnl.SchedulingMode.EXACT_TIME else "standard"
            )
            text, oracle = record(name, comp, inputs, mode, build.__doc__ or "")
        except Exception as e:  # a composition this release cannot build or export
            print(f"{name}: not written ({type(e).__name__}: {e})")
            continue
        (outdir / f"{name}.json").write_text(text)
        (outdir / f"{name}.oracle.json").write_text(json.dumps(oracle, indent=1) + "\n")
        print(f"{name}: {len(oracle['trials'])} trials written")


if __name__ == "__main__":
    args = sys.argv[1:]
    out = (
        Path(args[0])
        if args and not args[0].startswith("-")
        else (
            Path(__file__).resolve().parents[2]
            / "tests"
            / "data"
            / "wild"
            / "psyneulink"
            / f"v{VERSION}"
        )
    )
    main(out, [a[2:] for a in args if a.startswith("--")] or None)
