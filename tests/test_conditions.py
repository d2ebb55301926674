"""Every graph-scheduler condition that MDF can express, on both backends.

Each case puts conditions on a tiny chain ``A -> B -> C`` (every node counts its runs; B and C
also sum what they receive) and checks that

(a) the interpreted backend's time steps equal graph-scheduler's own run of the same conditions
    built directly with ``graph_scheduler`` on a dict graph (the oracle, ``gs_oracle``),
(b) the compiled backend gives the same time steps and the same values (rtol 1e-12), and that it
    really compiled the scheduler for the conditions it claims to compile,
(c) modeci-mdf's reference engine gives the same time steps where it can run the model.

Conditions that a model file cannot express (they need a Python function, or they change the
graph's structure) must be refused with an ``MDFError`` that names them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import graph_scheduler as gs
import numpy as np
import pytest
from graph_scheduler import TimeScale as TS
from gs_oracle import mdf_condition as M
from gs_oracle import oracle_time_steps
from reference_engine import assert_outputs_close

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.model import (
    Condition,
    ConditionSet,
    Edge,
    Graph,
    InputPort,
    Model,
    Node,
    OutputPort,
    Parameter,
)

ESU = "environment_state_update"

# graph-scheduler warns when a node's condition depends on the node itself (BeforeNCalls(A) on A)
pytestmark = pytest.mark.filterwarnings("ignore:.*as its owner:UserWarning")


def _cond(d: dict) -> Condition:
    return Condition(type=d["type"], kwargs=d["kwargs"])


def chain_model(node_specific: dict, termination: dict, finish: dict | None = None) -> Model:
    """A -> B -> C; each node counts its runs in ``count``; B and C add up their input in
    ``total``; ``finish`` gives nodes an ``is_finished`` parameter ``count >= k``."""
    finish = finish or {}
    nodes = []
    for nid in "ABC":
        params = [Parameter(id="count", value="count + 1", default_initial_value=0)]
        ports = []
        out = "count"
        if nid != "A":
            ports = [InputPort(id="inp", shape=(1,))]
            params.append(Parameter(id="total", value="total + inp", default_initial_value=0))
            out = "total * 10 + count"
        if nid in finish:
            # a number, not a bool: the compiled backend stores parameters as floats
            params.append(Parameter(id="is_finished", value=f"(count >= {finish[nid]}) * 1.0"))
        nodes.append(
            Node(
                id=nid,
                input_ports=ports,
                parameters=params,
                output_ports=[OutputPort(id="out", value=out)],
            )
        )
    edges = [
        Edge(id=f"{s}_{r}", sender=s, receiver=r, sender_port="out", receiver_port="inp")
        for s, r in (("A", "B"), ("B", "C"))
    ]
    conditions = ConditionSet(
        node_specific={k: _cond(v) for k, v in node_specific.items()},
        termination={k: _cond(v) for k, v in termination.items()},
    )
    return Model(
        id="conds", graphs=[Graph(id="g", nodes=nodes, edges=edges, conditions=conditions)]
    )


def thr(dep, n, cmp, getter, **kw):
    """An oracle Threshold on ``dep.count``."""
    return gs.Threshold(
        dep,
        "count",
        n,
        cmp,
        custom_parameter_getter=getter,
        custom_parameter_validator=lambda d, p: True,
        **kw,
    )


@dataclass
class Case:
    id: str
    nodes: dict
    term: dict
    oracle: Callable
    steps: int = 4
    compiled: bool = True  # the compiled backend compiles the scheduler (no fallback)
    #: how the compiled backend runs a case it cannot compile whole: graph-scheduler calling
    #: jitted node functions, or wholly interpreted (when the warm-up cannot type every node)
    fallback: str = "node by node"
    reference: bool = True  # modeci-mdf's engine can run it
    finish: dict = field(default_factory=dict)


T3 = M("AfterNCalls", dependency="C", n=3)  # a termination that lets conditions play out


def _t3(c):
    return {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNCalls(c, 3)}


CASES = [
    Case(
        "Always_Never",
        {"A": M("Always"), "B": M("Never"), "C": M("Always")},
        {ESU: M("AfterNCalls", dependency="A", n=2)},
        lambda a, b, c, g: (
            {a: gs.Always(), b: gs.Never(), c: gs.Always()},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNCalls(a, 2)},
        ),
        compiled=False,
        fallback="interpreted",
    ),  # B never runs: the warm-up never sees it
    Case(
        "EveryNCalls",
        {"B": M("EveryNCalls", dependency="A", n=2), "C": M("EveryNCalls", dependency="B", n=2)},
        {ESU: T3},
        lambda a, b, c, g: ({b: gs.EveryNCalls(a, 2), c: gs.EveryNCalls(b, 2)}, _t3(c)),
        steps=3,
    ),
    Case(
        "All_And_Any_Or_Not",
        {
            "B": M(
                "All",
                dependencies=[
                    M("EveryNCalls", dependency="A", n=2),
                    M("Not", condition=M("AtPass", n=3)),
                ],
            ),
            "C": M(
                "Or",
                dependencies=[
                    M("And", dependencies=[M("AfterPass", n=4), M("Always")]),
                    M("Any", dependencies=[M("AtPass", n=2)]),
                ],
            ),
        },
        {ESU: M("AfterNPasses", n=8)},
        lambda a, b, c, g: (
            {
                b: gs.All(gs.EveryNCalls(a, 2), gs.Not(gs.AtPass(3))),
                c: gs.Or(gs.And(gs.AfterPass(4), gs.Always()), gs.Any(gs.AtPass(2))),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(8)},
        ),
    ),
    Case(
        "NWhen",
        {"B": M("NWhen", condition=M("EveryNCalls", dependency="A", n=1), n=2)},
        {ESU: M("AfterNPasses", n=5)},
        lambda a, b, c, g: (
            {b: gs.NWhen(gs.EveryNCalls(a, 1), 2)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(5)},
        ),
        steps=3,
        compiled=False,
    ),
    Case(
        "passes",
        {"A": M("EveryNPasses", n=2), "B": M("BeforePass", n=4), "C": M("AfterNPasses", n=3)},
        {ESU: M("AtPass", n=7)},
        lambda a, b, c, g: (
            {a: gs.EveryNPasses(2), b: gs.BeforePass(4), c: gs.AfterNPasses(3)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AtPass(7)},
        ),
    ),
    Case(
        "passes_environment_sequence",
        {
            "A": M(
                "Any",
                dependencies=[
                    M("AtPass", n=0),
                    M("AtPass", n=4, time_scale="TimeScale.ENVIRONMENT_SEQUENCE"),
                ],
            ),
            "B": M("AfterPass", n=1, time_scale="TimeScale.ENVIRONMENT_SEQUENCE"),
            "C": M("Always"),
        },
        {ESU: M("AfterNPasses", n=3)},
        lambda a, b, c, g: (
            {
                a: gs.Any(gs.AtPass(0), gs.AtPass(4, TS.ENVIRONMENT_SEQUENCE)),
                b: gs.AfterPass(1, TS.ENVIRONMENT_SEQUENCE),
                c: gs.Always(),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(3)},
        ),
        steps=3,
    ),
    Case(
        "environment_state_updates",
        {
            "A": M("Always"),
            "B": M("AfterEnvironmentStateUpdate", n=0),
            "C": M(
                "Any",
                dependencies=[
                    M("AtEnvironmentStateUpdate", n=1),
                    M("AfterNEnvironmentStateUpdates", n=3),
                ],
            ),
        },
        {ESU: M("AfterNPasses", n=1)},
        lambda a, b, c, g: (
            {
                a: gs.Always(),
                b: gs.AfterEnvironmentStateUpdate(0),
                c: gs.Any(gs.AtEnvironmentStateUpdate(1), gs.AfterNEnvironmentStateUpdates(3)),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(1)},
        ),
        steps=5,
    ),
    Case(
        "BeforeEnvironmentStateUpdate",
        {"B": M("BeforeEnvironmentStateUpdate", n=2), "C": M("Always")},
        {ESU: M("AfterNPasses", n=3)},
        lambda a, b, c, g: (
            {b: gs.BeforeEnvironmentStateUpdate(2), c: gs.Always()},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(3)},
        ),
        steps=4,
    ),
    Case(
        "update_starts",
        {
            "A": M("AtEnvironmentStateUpdateStart"),
            "B": M(
                "Any",
                dependencies=[
                    M("AtEnvironmentStateUpdateNStart", n=2),
                    M("AtEnvironmentSequenceStart"),
                ],
            ),
            "C": M(
                "Any", dependencies=[M("AtEnvironmentSequenceNStart", n=0), M("AfterPass", n=2)]
            ),
        },
        {ESU: M("AfterNPasses", n=4)},
        lambda a, b, c, g: (
            {
                a: gs.AtEnvironmentStateUpdateStart(),
                b: gs.Any(gs.AtEnvironmentStateUpdateNStart(2), gs.AtEnvironmentSequenceStart()),
                c: gs.Any(gs.AtEnvironmentSequenceNStart(0), gs.AfterPass(2)),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(4)},
        ),
        steps=3,
    ),
    Case(
        "environment_sequences",
        {
            "A": M("AtEnvironmentSequence", n=0),
            "B": M("Not", condition=M("AfterEnvironmentSequence", n=0)),
            "C": M("Not", condition=M("AfterNEnvironmentSequences", n=1)),
        },
        {ESU: M("AfterNPasses", n=2)},
        lambda a, b, c, g: (
            {
                a: gs.AtEnvironmentSequence(0),
                b: gs.Not(gs.AfterEnvironmentSequence(0)),
                c: gs.Not(gs.AfterNEnvironmentSequences(1)),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(2)},
        ),
        steps=2,
    ),
    Case(
        "calls",
        {
            "A": M("BeforeNCalls", dependency="A", n=4),
            "B": M(
                "Any",
                dependencies=[
                    M("AtNCalls", dependency="A", n=2),
                    M("AfterCall", dependency="A", n=2),
                ],
            ),
            "C": M("AfterNCalls", dependency="B", n=1, time_scale="TimeScale.PASS"),
        },
        {ESU: M("AfterNPasses", n=6)},
        lambda a, b, c, g: (
            {
                a: gs.BeforeNCalls(a, 4),
                b: gs.Any(gs.AtNCalls(a, 2), gs.AfterCall(a, 2)),
                c: gs.AfterNCalls(b, 1, TS.PASS),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(6)},
        ),
        steps=3,
    ),
    Case(
        "calls_environment_sequence",
        {
            "A": M(
                "AtNCalls", dependency="A", n=0, time_scale="TimeScale.CONSIDERATION_SET_EXECUTION"
            ),
            "B": M(
                "BeforeNCalls", dependency="A", n=5, time_scale="TimeScale.ENVIRONMENT_SEQUENCE"
            ),
            "C": M("AtNCalls", dependency="B", n=3, time_scale="TimeScale.LIFE"),
        },
        {ESU: M("AfterNPasses", n=2)},
        lambda a, b, c, g: (
            {
                a: gs.AtNCalls(a, 0, TS.CONSIDERATION_SET_EXECUTION),
                b: gs.BeforeNCalls(a, 5, TS.ENVIRONMENT_SEQUENCE),
                c: gs.AtNCalls(b, 3, TS.LIFE),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(2)},
        ),
        steps=4,
    ),
    Case(
        "AfterNCallsCombined",
        {"C": M("AfterNCallsCombined", dependencies=["A", "B"], n=3)},
        {ESU: T3},
        lambda a, b, c, g: ({c: gs.AfterNCallsCombined(a, b, n=3)}, _t3(c)),
        steps=2,
        reference=False,
    ),  # the reference cannot take a list of node ids
    Case(
        "JustRan",
        {"B": M("JustRan", dependency="A"), "C": M("JustRan", dependency="B")},
        {ESU: M("AfterNPasses", n=3)},
        lambda a, b, c, g: (
            {b: gs.JustRan(a), c: gs.JustRan(b)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(3)},
        ),
        steps=3,
    ),
    Case(
        "AllHaveRun",
        {"B": M("EveryNCalls", dependency="A", n=2), "C": M("EveryNCalls", dependency="B", n=1)},
        {ESU: M("AllHaveRun", dependencies=["A", "C"])},
        lambda a, b, c, g: (
            {b: gs.EveryNCalls(a, 2), c: gs.EveryNCalls(b, 1)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AllHaveRun(a, c)},
        ),
        steps=3,
        reference=False,
    ),  # the reference cannot take a list of node ids
    Case(
        "WhenFinished",
        {
            "B": M("WhenFinished", dependency="A"),
            "C": M("WhenFinishedAny", dependencies=["A", "B"]),
        },
        {ESU: M("WhenFinishedAll", dependencies=["B", "C"])},
        lambda a, b, c, g: (
            {b: gs.WhenFinished(a), c: gs.WhenFinishedAny(a, b)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.WhenFinishedAll(b, c)},
        ),
        steps=4,
        finish={"A": 3, "B": 2},
        reference=False,
    ),  # the reference's nodes have no is_finished
    Case(
        "WhenFinished_every_node",
        {"B": M("EveryNCalls", dependency="A", n=2), "C": M("WhenFinishedAny")},
        {ESU: M("WhenFinishedAll")},
        lambda a, b, c, g: (
            {b: gs.EveryNCalls(a, 2), c: gs.WhenFinishedAny()},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.WhenFinishedAll()},
        ),
        steps=4,
        finish={"A": 4, "C": 1},
        reference=False,
    ),
    Case(
        "Threshold",
        {
            "B": M("Threshold", dependency="A", parameter="count", threshold=3, comparator=">="),
            "C": M(
                "Threshold",
                dependency="A",
                parameter="count",
                threshold=4,
                comparator="==",
                atol=0.5,
            ),
        },
        {ESU: M("Threshold", dependency="C", parameter="count", threshold=0, comparator=">")},
        lambda a, b, c, g: (
            {b: thr(a, 3, ">=", g), c: thr(a, 4, "==", g, atol=0.5)},
            {TS.ENVIRONMENT_STATE_UPDATE: thr(c, 0, ">", g)},
        ),
        steps=3,
    ),
    Case(
        "Threshold_comparators",
        {
            "A": M("Threshold", dependency="A", parameter="count", threshold=6, comparator="<"),
            "B": M("Threshold", dependency="A", parameter="count", threshold=2, comparator="!="),
            "C": M("Threshold", dependency="B", parameter="count", threshold=4, comparator="<="),
        },
        {ESU: M("AfterNPasses", n=3)},
        lambda a, b, c, g: (
            {a: thr(a, 6, "<", g), b: thr(a, 2, "!=", g), c: thr(b, 4, "<=", g)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(3)},
        ),
        steps=4,
    ),
    Case(
        "consideration_set_executions",
        {
            "A": M("BeforeConsiderationSetExecution", n=5),
            "B": M(
                "Any",
                dependencies=[
                    M("AtConsiderationSetExecution", n=1),
                    M("AfterConsiderationSetExecution", n=4),
                ],
            ),
            "C": M("AfterNConsiderationSetExecutions", n=3),
        },
        {ESU: M("AfterNPasses", n=4)},
        lambda a, b, c, g: (
            {
                a: gs.BeforeConsiderationSetExecution(5),
                b: gs.Any(gs.AtConsiderationSetExecution(1), gs.AfterConsiderationSetExecution(4)),
                c: gs.AfterNConsiderationSetExecutions(3),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(4)},
        ),
        steps=2,
    ),
    Case(
        "consideration_set_executions_time_scales",
        # A runs only in passes 1 and 3 of an update, so passes 0 and 2 are empty time steps
        # (they count as consideration set executions too)
        {
            "A": M("Any", dependencies=[M("AtPass", n=1), M("AtPass", n=3)]),
            "B": M("AtConsiderationSetExecution", n=3),
            "C": M(
                "AfterNConsiderationSetExecutions", n=7, time_scale="TimeScale.ENVIRONMENT_SEQUENCE"
            ),
        },
        {ESU: M("AfterNPasses", n=5)},
        lambda a, b, c, g: (
            {
                a: gs.Any(gs.AtPass(1), gs.AtPass(3)),
                b: gs.AtConsiderationSetExecution(3),
                c: gs.AfterNConsiderationSetExecutions(7, TS.ENVIRONMENT_SEQUENCE),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNPasses(5)},
        ),
        steps=3,
    ),
    Case(
        "TimeInterval_TimeTermination",
        {"B": M("TimeInterval", repeat=2), "C": M("TimeInterval", start=1, end=4)},
        {ESU: M("TimeTermination", t=6)},
        lambda a, b, c, g: (
            {b: gs.TimeInterval(repeat=2), c: gs.TimeInterval(start=1, end=4)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.TimeTermination(6)},
        ),
        steps=2,
    ),
    # absolute time: every consideration set lasts gcd(repeats) / 3 sets; empty sets are time
    # steps; the clock jumps to the earliest start; the clock runs on across updates
    Case(
        "TimeInterval_units_and_exclusive_bounds",
        {
            "A": M("TimeInterval", repeat=3, start="1500us", start_inclusive=False),
            "B": M("TimeInterval", repeat="500us", end=9, end_inclusive=False),
            "C": M(
                "All",
                dependencies=[
                    M("TimeInterval", repeat=1, start=2),
                    M("EveryNCalls", dependency="B", n=1),
                ],
            ),
        },
        {ESU: M("TimeTermination", t=4, inclusive=False)},
        lambda a, b, c, g: (
            {
                a: gs.TimeInterval(repeat=3, start="1500us", start_inclusive=False),
                b: gs.TimeInterval(repeat="500us", end=9, end_inclusive=False),
                c: gs.All(gs.TimeInterval(repeat=1, start=2), gs.EveryNCalls(b, 1)),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.TimeTermination(4, inclusive=False)},
        ),
        steps=3,
    ),
    Case(
        "TimeInterval_with_call_count_termination",
        # a TimeTermination would stop every later update at once; here each update ends
        # after C's calls, so the clock keeps running from update to update
        {
            "A": M("TimeInterval", repeat=2, start=2),
            "B": M("Any", dependencies=[M("TimeInterval", start=5, end=7), M("AtPass", n=0)]),
            "C": M("Not", condition=M("TimeInterval", repeat=4)),
        },
        {ESU: M("AfterNCalls", dependency="C", n=2)},
        lambda a, b, c, g: (
            {
                a: gs.TimeInterval(repeat=2, start=2),
                b: gs.Any(gs.TimeInterval(start=5, end=7), gs.AtPass(0)),
                c: gs.Not(gs.TimeInterval(repeat=4)),
            },
            {TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNCalls(c, 2)},
        ),
        steps=4,
    ),
    Case(
        "TimeTermination_without_repeat",
        # no repeats: a set lasts 1 ms; the clock starts at the earliest time a condition
        # names (0 here: with TimeTermination alone it would start at 7 ms and stop at once);
        # one update runs to 7 ms, later ones stop at once
        {"A": M("TimeInterval", start=0), "B": M("EveryNCalls", dependency="A", n=2)},
        {ESU: M("TimeTermination", t="7ms")},
        lambda a, b, c, g: (
            {a: gs.TimeInterval(start=0), b: gs.EveryNCalls(a, 2)},
            {TS.ENVIRONMENT_STATE_UPDATE: gs.TimeTermination("7ms")},
        ),
        steps=2,
    ),
    Case(
        "termination_environment_sequence",
        {"B": M("EveryNCalls", dependency="A", n=1)},
        {
            "TimeScale.ENVIRONMENT_SEQUENCE": M("AfterNEnvironmentStateUpdates", n=3),
            ".ENVIRONMENT_STATE_UPDATE": M("AllHaveRun"),
        },
        lambda a, b, c, g: (
            {b: gs.EveryNCalls(a, 1)},
            {
                TS.ENVIRONMENT_SEQUENCE: gs.AfterNEnvironmentStateUpdates(3),
                TS.ENVIRONMENT_STATE_UPDATE: gs.AllHaveRun(),
            },
        ),
        steps=5,
    ),
    Case(
        "termination_run_key",
        {"C": M("EveryNCalls", dependency="B", n=2)},
        {
            "RUN": M("AfterNCalls", dependency="C", n=2, time_scale="TimeScale.LIFE"),
            "TRIAL": M("AfterNCalls", dependency="C", n=1),
        },
        lambda a, b, c, g: (
            {c: gs.EveryNCalls(b, 2)},
            {
                TS.ENVIRONMENT_SEQUENCE: gs.AfterNCalls(c, 2, TS.LIFE),
                TS.ENVIRONMENT_STATE_UPDATE: gs.AfterNCalls(c, 1),
            },
        ),
        steps=4,
        reference=False,
    ),  # the reference does not know TRIAL/RUN
]


def _run(case: Case, backend: str) -> Simulation:
    sim = Simulation(chain_model(case.nodes, case.term, case.finish), backend=backend)
    sim.run(steps=case.steps)
    return sim


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_condition_both_backends_match_graph_scheduler(case: Case):
    expected = oracle_time_steps(case.oracle, case.steps, case.finish)
    assert any(expected), "the case runs nothing: it would not test the condition"
    interp = _run(case, "interpreted")
    assert interp.runner.time_steps == expected
    comp = _run(case, "compiled")
    assert comp.runner.time_steps == expected
    assert comp.runner.is_compiled == case.compiled, comp.runner.fallback_reason
    assert comp.runner.mode == ("compiled" if case.compiled else case.fallback)
    assert_outputs_close(comp.outputs, interp.outputs, rtol=1e-12)
    for nid in interp.outputs:
        for p in ("count", "total"):
            if p in {pp.id for pp in interp.graph.get_node(nid).parameters}:
                np.testing.assert_allclose(
                    np.asarray(comp.value(nid, p), dtype=float),
                    np.asarray(interp.value(nid, p), dtype=float),
                    rtol=1e-12,
                    atol=0,
                    err_msg=f"{nid}.{p}",
                )


REFERENCE_CASES = [c for c in CASES if c.reference]


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=[c.id for c in REFERENCE_CASES])
def test_condition_matches_reference_engine(case: Case):
    from reference_engine import reference_run

    model = chain_model(case.nodes, case.term, case.finish)
    ref = reference_run(model.to_dict(), case.steps)
    sim = Simulation(model)
    sim.run(steps=case.steps)
    assert sim.runner.time_steps == ref["time_steps"]


UNSUPPORTED = [
    ("While", {}, "Python function"),
    ("WhileNot", {}, "Python function"),
    ("Condition", {}, "Python function"),
    ("AbsoluteCondition", {}, "Python function"),
    ("CompositeCondition", {}, "Python function"),
    ("BeforeNodes", {"nodes": ["A"]}, "graph structure"),
    ("AddEdgeTo", {"node": "A"}, "graph structure"),
    ("NoSuchCondition", {}, "unknown condition type"),
]


@pytest.mark.parametrize("name,kwargs,why", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_inexpressible_condition_is_refused(name: str, kwargs: dict, why: str):
    model = chain_model({"B": M(name, **kwargs)}, {})
    with pytest.raises(MDFError) as e:
        Simulation(model)
    assert name in str(e.value) and why in str(e.value)
    # the compiled backend builds no scheduler until it runs (a cached start needs none)
    with pytest.raises(MDFError) as e:
        Simulation(model, backend="compiled").run(steps=2)
    assert name in str(e.value) and why in str(e.value)


@pytest.mark.parametrize(
    "term",
    [
        M("TimeInterval", repeat=3),
        M("Any", dependencies=[M("AfterNCalls", dependency="C", n=2), M("TimeInterval", repeat=3)]),
    ],
    ids=["bare", "nested"],
)
def test_repeating_time_interval_cannot_end_an_update(term: dict):
    # graph-scheduler itself fails on it (UnboundLocalError): the repeat is counted from the
    # owner node's place in the pass, and a termination condition has no owner node
    with pytest.raises(UnboundLocalError):
        oracle_time_steps(
            lambda a, b, c, g: (
                {},
                {
                    TS.ENVIRONMENT_STATE_UPDATE: gs.Any(
                        gs.AfterNCalls(c, 2), gs.TimeInterval(repeat=3)
                    )
                },
            ),
            1,
        )
    model = chain_model({}, {ESU: term})
    for backend in ("interpreted", "compiled"):
        with pytest.raises(MDFError, match="termination.environment_state_update.*TimeInterval"):
            Simulation(model, backend=backend).run(steps=2)
