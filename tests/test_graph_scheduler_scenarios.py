"""graph-scheduler's own test scenarios, and many more like them, as MDF models on both backends.

graph-scheduler's test suite (tests/scheduling/test_scheduler.py, test_condition.py) runs its
conditions on small graphs: chains, triangles, inverted triangles, checkmarks, diamonds, graphs
of several origins and terminals, nodes with several parents, single nodes; termination
conditions of the environment state update and of the environment sequence; call counts in
every time scale; absolute time. :data:`HAND` writes those scenarios (and a few of feedback
edges, which an MDF graph expresses as an edge into a port with a ``default_value``) as
scenarios of our own; :func:`generated` adds seeded random ones over the same graph shapes (every
condition kind, nested All/Any/Not up to two levels deep, several updates).

For each scenario an MDF model is made (every node counts its runs in ``count``, adds up what
it receives, and may have an ``is_finished`` flag or a value ``v`` that a Threshold reads), and
graph-scheduler itself is the oracle: the same conditions are built with ``graph_scheduler`` on
the same dict graph and run, update by update. The interpreted backend and the compiled backend
(its generated scheduler, run on tier 0, the generated code's own interpreter, and for
:data:`NUMBA` cases compiled by Numba) must give the same time steps of every update, the same
absolute times, and the same values (None for a node that has not run). A scenario whose conditions graph-scheduler itself cannot evaluate (it raises) must
be refused with a one-line MDFError. graph-scheduler walks a consideration set in the order of a
Python set (which changes with the hash seed); the oracle walks it in the graph's node order,
as the engine does (docs/semantics.md).
"""

from __future__ import annotations

import inspect
import random
import warnings
from collections import Counter
from dataclasses import dataclass, field

import graph_scheduler as gs
import numpy as np
import pytest
from gs_oracle import MAX_STEPS, NoEnd, OracleRun, Update, walk
from gs_oracle import mdf_condition as C

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.loader import from_dict
from mdf_engine.schedulers.kinds import KINDS

# graph-scheduler warns when a node's condition depends on the node itself
pytestmark = pytest.mark.filterwarnings("ignore:.*(as its owner|cycle).*:UserWarning")

ESU = "environment_state_update"
ES = "environment_sequence"


def paths(*pathways: str) -> dict[str, list[str]]:
    """A graph ``{node: [senders]}`` from pathways such as ``"A B C"`` (A -> B -> C)."""
    g: dict[str, list[str]] = {}
    for p in pathways:
        ids = p.split()
        for i, n in enumerate(ids):
            g.setdefault(n, [])
            if i and ids[i - 1] not in g[n]:
                g[n].append(ids[i - 1])
    return g


GRAPHS = {
    "single": paths("A"),
    "pair": paths("A B"),
    "two_origins": paths("A", "B"),
    "chain": paths("A B C"),
    "triangle": paths("A B", "A C"),
    "invtriangle": paths("A C", "B C"),
    "checkmark": paths("A B D", "C D"),
    "checkmark2": paths("A B D", "C D", "A D"),
    "diamond": paths("A B D", "A C D"),
    "skip": paths("A C", "A B C"),  # C has parents in two consideration sets
    "split": paths("A B", "C"),
    "multisource": paths("A1 B1 C1", "A1 B2 C1", "A2 B2 C2", "A2 B3 C2"),
    "stroop": paths("Ci Ch Out Dec", "Wi Wh Out Dec", "Rew"),
}


@dataclass
class Scenario:
    """An MDF graph with conditions. ``graph`` gives each node's senders (dependencies);
    ``feedback`` edges go into a port with a ``default_value`` (no dependency: a cycle);
    ``finish`` gives nodes ``is_finished = count >= k``; ``inc`` gives nodes a value ``v`` that
    grows by ``inc`` at every run (for Threshold)."""

    id: str
    graph: dict[str, list[str]]
    conds: dict[str, dict] = field(default_factory=dict)
    term: dict[str, dict] = field(default_factory=dict)
    steps: int = 1
    feedback: tuple[tuple[str, str], ...] = ()
    finish: dict[str, int] = field(default_factory=dict)
    inc: dict[str, float] = field(default_factory=dict)
    mode: str = "standard"


# -- the MDF model --------------------------------------------------------------------------------
def model_dict(sc: Scenario) -> dict:
    nodes, edges = {}, {}
    incoming = {n: [(s, False) for s in ss] for n, ss in sc.graph.items()}
    for s, r in sc.feedback:
        incoming[r].append((s, True))
    for nid in sc.graph:
        ports = {}
        for s, fb in incoming[nid]:
            ports[f"in_{s}"] = {"shape": [1], **({"default_value": [0.0]} if fb else {})}
            edges[f"{s}_{nid}"] = {
                "sender": s,
                "sender_port": "out",
                "receiver": nid,
                "receiver_port": f"in_{s}",
            }
        params = {"count": {"value": "count + 1", "default_initial_value": 0}}
        out = "count"
        if ports:
            params["total"] = {"value": " + ".join(["total", *ports]), "default_initial_value": 0}
            out = "total * 10 + count"
        if nid in sc.inc:
            params["v"] = {"value": f"v + {sc.inc[nid]!r}", "default_initial_value": 0}
        if nid in sc.finish:
            params["is_finished"] = {"value": f"(count >= {sc.finish[nid]}) * 1.0"}
        nodes[nid] = {
            "input_ports": ports,
            "parameters": params,
            "output_ports": {"out": {"value": out}},
        }
    graph = {"nodes": nodes, "edges": edges}
    if sc.conds or sc.term:
        graph["conditions"] = {"node_specific": sc.conds, "termination": sc.term}
    return {"m": {"format": "ModECI MDF v0.4", "graphs": {"g": graph}}}


# -- the oracle: graph-scheduler itself (tests/gs_oracle.py) -------------------------------------
def oracle(sc: Scenario, limit: int = MAX_STEPS) -> list[Update]:
    """graph-scheduler's time steps and their absolute times (ms), update by update (at most
    ``limit`` time steps each, else NoEnd)."""
    run = OracleRun(sc.graph, sc.finish, sc.inc)
    return run.updates(run.mdf_scheduler(sc.conds, sc.term, sc.mode), sc.steps, limit)


# -- graph-scheduler's own scenarios, as MDF ------------------------------------------------------
def _t(cond: dict, seq: dict | None = None) -> dict:
    return {ESU: cond, **({ES: seq} if seq else {})}


ONE_UPDATE = C("AfterNEnvironmentStateUpdates", n=1)
EVERY = C("EveryNPasses", n=1)
AT5 = C("AtPass", n=5)


def every(dependency: str, n: int) -> dict:
    """``EveryNCalls``: each ``n``-th run of ``dependency``."""
    return C("EveryNCalls", dependency=dependency, n=n)


def after(dependency: str, n: int, **kwargs: str) -> dict:
    """``AfterNCalls``: once ``dependency`` has run ``n`` times (in ``time_scale``)."""
    return C("AfterNCalls", dependency=dependency, n=n, **kwargs)


def all_of(*conditions: dict) -> dict:
    """``All`` of ``conditions``."""
    return C("All", dependencies=list(conditions))


def any_of(*conditions: dict) -> dict:
    """``Any`` of ``conditions``."""
    return C("Any", dependencies=list(conditions))


def _single(id_: str, cond: dict, term: dict, steps: int = 1) -> Scenario:
    return Scenario(id_, GRAPHS["single"], {"A": cond}, term, steps)


HAND: list[Scenario] = [
    # linear
    Scenario(
        "linear_no_termination",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": every("B", 3)},
    ),
    Scenario(
        "linear_1",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": every("B", 3)},
        _t(after("C", 4), ONE_UPDATE),
    ),
    Scenario(
        "linear_1b",
        GRAPHS["chain"],
        {"A": EVERY, "B": any_of(every("A", 2), C("AfterPass", n=1)), "C": every("B", 3)},
        _t(after("C", 4), ONE_UPDATE),
    ),
    Scenario(
        "linear_3",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": all_of(after("B", 2), every("B", 1))},
        _t(after("C", 4, time_scale="TimeScale.ENVIRONMENT_STATE_UPDATE")),
    ),
    Scenario(
        "linear_6_two_updates",
        GRAPHS["chain"],
        {"A": C("BeforePass", n=5), "B": after("A", 5), "C": after("B", 1)},
        _t(after("C", 3), C("AfterNEnvironmentStateUpdates", n=2)),
        steps=3,
    ),
    Scenario(
        "linear_AAB_sequence_calls",
        GRAPHS["pair"],
        {"A": EVERY, "B": every("A", 2)},
        _t(after("B", 2), after("B", 2, time_scale="TimeScale.ENVIRONMENT_SEQUENCE")),
        steps=2,
    ),
    Scenario(
        "linear_ABB",
        GRAPHS["pair"],
        {"A": any_of(C("AtPass", n=0), every("B", 2)), "B": any_of(every("A", 1), every("B", 1))},
        _t(after("B", 8)),
    ),
    Scenario(
        "linear_ABBCC_just_ran",
        GRAPHS["chain"],
        {
            "A": any_of(C("AtPass", n=0), every("C", 2)),
            "B": any_of(C("JustRan", dependency="A"), C("JustRan", dependency="B")),
            "C": any_of(every("B", 2), C("JustRan", dependency="C")),
        },
        _t(after("C", 4)),
    ),
    Scenario(
        "linear_ABCBC",
        GRAPHS["chain"],
        {
            "A": any_of(C("AtPass", n=0), every("C", 2)),
            "B": any_of(every("A", 1), every("C", 1)),
            "C": every("B", 1),
        },
        _t(after("C", 4)),
    ),
    Scenario(
        "two_node_any_all_calls",
        GRAPHS["pair"],
        {"A": EVERY, "B": every("A", 2)},
        _t(all_of(after("A", 1), after("B", 1))),
    ),
    Scenario(
        "when_finished_at_pass",
        GRAPHS["pair"],
        {"A": EVERY, "B": C("WhenFinished", dependency="A")},
        _t(C("AtPass", n=5)),
        finish={"A": 3},
    ),
    Scenario(
        "when_finished_any_calls",
        GRAPHS["pair"],
        {"A": EVERY, "B": any_of(C("WhenFinished", dependency="A"), after("A", 3))},
        _t(after("B", 5)),
        finish={"A": 6},
    ),
    Scenario(
        "when_finished_all_calls",
        GRAPHS["pair"],
        {"A": EVERY, "B": all_of(C("WhenFinished", dependency="A"), after("A", 3))},
        _t(C("AtPass", n=10)),
        finish={"A": 5},
    ),
    Scenario(
        "default_condition_1", paths("A C", "A B C"), {"A": C("AtPass", n=1), "B": C("Always")}
    ),
    Scenario("default_condition_2", GRAPHS["split"], {"C": C("AtPass", n=1)}),
    # branching
    Scenario(
        "triangle_1",
        GRAPHS["triangle"],
        {"A": EVERY, "B": every("A", 1), "C": every("A", 1)},
        _t(after("C", 3)),
    ),
    Scenario(
        "triangle_3",
        GRAPHS["triangle"],
        {"A": EVERY, "B": every("A", 2), "C": every("A", 3)},
        _t(after("C", 2)),
    ),
    Scenario(
        "triangle_4_when_finished",
        GRAPHS["triangle"],
        {
            "A": EVERY,
            "B": every("A", 2),
            "C": all_of(C("WhenFinished", dependency="A"), after("B", 3)),
        },
        _t(after("C", 1)),
        finish={"A": 4},
    ),
    Scenario(
        "invtriangle_1",
        GRAPHS["invtriangle"],
        {"A": EVERY, "B": every("A", 2), "C": any_of(after("A", 3), after("B", 3))},
        _t(after("C", 4)),
    ),
    Scenario(
        "invtriangle_2",
        GRAPHS["invtriangle"],
        {"A": EVERY, "B": every("A", 2), "C": all_of(after("A", 3), after("B", 3))},
        _t(after("C", 2)),
    ),
    Scenario(
        "checkmark_1", GRAPHS["checkmark"], {n: C("Always") for n in "ABCD"}, _t(after("D", 1))
    ),
    *[  # (the same conditions with and without the edge A -> D)
        Scenario(
            name,
            GRAPHS[graph],
            {
                "A": EVERY,
                "B": every("A", 2),
                "C": every("A", 2),
                "D": all_of(every("B", 2), every("C", 2)),
            },
            _t(after("D", 1)),
        )
        for name, graph in (("checkmark_2", "checkmark"), ("checkmark2_1", "checkmark2"))
    ],
    Scenario(
        "multisource_1",
        GRAPHS["multisource"],
        {n: C("Always") for n in GRAPHS["multisource"]},
        _t(all_of(after("C1", 1), after("C2", 1))),
    ),
    Scenario(
        "multisource_2",
        GRAPHS["multisource"],
        {
            "A1": C("Always"),
            "A2": C("Always"),
            "B1": every("A1", 2),
            "B3": every("A2", 2),
            "B2": all_of(every("A1", 4), every("A2", 4)),
            "C1": any_of(after("B1", 2), after("B2", 2)),
            "C2": any_of(after("B2", 2), after("B3", 2)),
        },
        _t(all_of(after("C1", 1), after("C2", 1))),
    ),
    Scenario("stroop_defaults", GRAPHS["stroop"], steps=2),
    Scenario(
        "termination_partial_override",
        GRAPHS["pair"],
        {"B": every("A", 2)},
        _t(after("B", 2)),
        steps=2,
    ),
    Scenario(
        "delete_counts_combined",
        GRAPHS["diamond"],
        {
            "A": C("EveryNPasses", n=2),
            "B": every("A", 2),
            "C": every("A", 3),
            "D": C("AfterNCallsCombined", dependencies=["B", "C"], n=6),
        },
        steps=2,
    ),
    # conditions on one node
    _single("any_end_before_one_finished", EVERY, _t(any_of(after("A", 10), AT5))),
    _single("not_at_pass", C("Not", condition=C("AtPass", n=0)), _t(AT5, ONE_UPDATE)),
    _single("not_at_pass_in_middle", C("Not", condition=C("AtPass", n=2)), _t(AT5)),
    _single("before_set_execution", C("BeforeConsiderationSetExecution", n=2), _t(AT5)),
    _single("at_set_execution", C("AtConsiderationSetExecution", n=0), _t(AT5)),
    _single("before_pass", C("BeforePass", n=2), _t(AT5)),
    _single("at_pass", C("AtPass", n=0), _t(AT5)),
    _single("at_pass_in_middle", C("AtPass", n=2), _t(AT5)),
    _single("at_pass_at_end", C("AtPass", n=5), _t(AT5)),
    _single("at_pass_after_end", C("AtPass", n=6), _t(AT5)),
    _single("after_pass", C("AfterPass", n=0), _t(AT5)),
    _single("after_n_passes", C("AfterNPasses", n=1), _t(AT5, ONE_UPDATE)),
    _single(
        "before_update",
        C("BeforeEnvironmentStateUpdate", n=4),
        _t(C("AtPass", n=1), C("AfterNEnvironmentStateUpdates", n=5)),
        6,
    ),
    _single(
        "always_at_update", C("Always"), _t(C("AtPass", n=1), C("AtEnvironmentStateUpdate", n=4)), 5
    ),
    _single(
        "always_after_update",
        C("Always"),
        _t(C("AtPass", n=1), C("AfterEnvironmentStateUpdate", n=4)),
        6,
    ),
    _single(
        "after_set_execution_term",
        C("AfterNPasses", n=1),
        _t(C("AfterConsiderationSetExecution", n=4), ONE_UPDATE),
    ),
    _single(
        "after_n_set_executions_term",
        C("AfterNPasses", n=1),
        _t(C("AfterNConsiderationSetExecutions", n=5)),
    ),
    _single(
        "update_n_start", C("AtEnvironmentStateUpdateNStart", n=2), _t(C("AfterNPasses", n=1)), 4
    ),
    _single("sequence_start", C("AtEnvironmentSequenceStart"), _t(C("AfterNPasses", n=1)), 2),
    _single(
        "sequence_n_start", C("AtEnvironmentSequenceNStart", n=0), _t(C("AfterNPasses", n=1)), 2
    ),
    _single("at_sequence", C("AtEnvironmentSequence", n=0), _t(C("AfterNPasses", n=1)), 2),
    _single(
        "after_n_sequences", C("AfterNEnvironmentSequences", n=0), _t(C("AfterNPasses", n=1)), 2
    ),
    _single(
        "not_after_sequence",
        C("Not", condition=C("AfterEnvironmentSequence", n=0)),
        _t(C("AfterNPasses", n=1)),
        2,
    ),
    _single("before_n_calls_self", C("BeforeNCalls", dependency="A", n=3), _t(AT5)),
    Scenario(
        "before_set_execution_2",
        GRAPHS["pair"],
        {"A": C("BeforeConsiderationSetExecution", n=2), "B": C("Always")},
        _t(AT5),
    ),
    Scenario(
        "at_pass_underconstrained",
        GRAPHS["chain"],
        {"A": C("AtPass", n=0), "B": C("Always"), "C": C("Always")},
        _t(after("C", 2)),
    ),
    Scenario(
        "after_call_unrelated",
        GRAPHS["two_origins"],
        {"B": C("AfterCall", dependency="A", n=3)},
        _t(AT5),
    ),
    Scenario(
        "after_n_calls_unrelated",
        GRAPHS["two_origins"],
        {"A": C("Always"), "B": after("A", 3)},
        _t(AT5),
    ),
    Scenario(
        "update_start",
        GRAPHS["pair"],
        {"B": C("AtEnvironmentStateUpdateStart")},
        _t(C("AtPass", n=3)),
        steps=2,
    ),
    Scenario(
        "composite_multi",
        GRAPHS["chain"],
        {
            "A": EVERY,
            "B": every("A", 2),
            "C": all_of(
                any_of(C("AfterPass", n=6), after("B", 2)),
                any_of(C("AfterPass", n=2), after("B", 3)),
            ),
        },
        _t(after("C", 3)),
    ),
    Scenario(
        "calls_combined_term",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": every("B", 2)},
        _t(C("AfterNCallsCombined", dependencies=["B", "C"], n=4)),
    ),
    Scenario(
        "all_have_run_listed",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": every("B", 2)},
        _t(C("AllHaveRun", dependencies=["A", "B", "C"])),
        steps=2,
    ),
    Scenario(
        "all_have_run_every_node",
        GRAPHS["chain"],
        {"A": EVERY, "B": every("A", 2), "C": every("B", 2)},
        _t(C("AllHaveRun")),
    ),
    Scenario(
        "when_finished_any_both",
        GRAPHS["invtriangle"],
        {"A": EVERY, "B": EVERY, "C": C("WhenFinishedAny", dependencies=["A", "B"])},
        _t(after("C", 1)),
    ),
    Scenario(
        "when_finished_any_one",
        GRAPHS["invtriangle"],
        {"A": EVERY, "B": EVERY, "C": C("WhenFinishedAny", dependencies=["A", "B"])},
        _t(after("A", 5)),
        finish={"A": 10**6},
    ),
    Scenario(
        "when_finished_all_one",
        GRAPHS["invtriangle"],
        {"A": EVERY, "B": EVERY, "C": C("WhenFinishedAll", dependencies=["A", "B"])},
        _t(after("A", 5)),
        finish={"A": 10**6},
    ),
    Scenario(
        "when_finished_any_no_args",
        GRAPHS["invtriangle"],
        {n: C("Always") for n in "ABC"},
        _t(C("WhenFinishedAny")),
        finish={"A": 2, "B": 2, "C": 3},
    ),
    Scenario(
        "when_finished_all_no_args",
        GRAPHS["invtriangle"],
        {n: C("Always") for n in "ABC"},
        _t(C("WhenFinishedAll")),
        finish={"A": 3, "B": 3, "C": 2},
    ),
    # Threshold: graph-scheduler's comparators and tolerances, on a value that grows by ``inc``
    *[
        Scenario(
            f"threshold_{name}",
            GRAPHS["single"],
            term=_t(
                C("Threshold", dependency="A", parameter="v", threshold=t, comparator=cmp, **tol)
            ),
            inc={"A": inc},
        )
        for name, cmp, inc, t, tol in [
            ("gt", ">", 1, 5, {}),
            ("ge", ">=", 1, 5, {}),
            ("ge_float", ">=", 1, 10.0, {}),
            ("lt", "<", -1, -5, {}),
            ("le", "<=", -1, -5, {}),
            ("eq", "==", 1, 5, {}),
            ("ne", "!=", 1, 0, {}),
            ("ne_neg", "!=", -1, 0, {}),
            ("eq_atol_rtol", "==", 1, 10, {"atol": 1, "rtol": 0.1}),
            ("eq_atol", "==", 1, 10, {"atol": 1, "rtol": 0}),
            ("eq_rtol", "==", 1, 10, {"atol": 0, "rtol": 0.1}),
            ("ne_atol_rtol", "!=", 1, 2, {"atol": 1, "rtol": 0.5}),
            ("ne_atol", "!=", 1, 1, {"atol": 1, "rtol": 0}),
            ("ne_rtol", "!=", 1, 1, {"atol": 0, "rtol": 1}),
            ("ne_neg_atol_rtol", "!=", -1, -2, {"atol": 1, "rtol": 0.5}),
            ("ne_neg_rtol", "!=", -1, -1, {"atol": 0, "rtol": 1}),
            ("fraction", ">=", 0.3, 1.0, {}),
        ]
    ],
    # absolute time
    *[
        # one update (graph-scheduler's next one starts out of phase and never ends)
        Scenario(f"time_interval_linear_{k}", GRAPHS["chain"], conds, _t(term, ONE_UPDATE))
        for k, (conds, term) in enumerate(
            [
                (
                    {
                        "A": C("TimeInterval", repeat=8),
                        "B": C("TimeInterval", repeat=4),
                        "C": C("TimeInterval", repeat=2),
                    },
                    after("A", 2),
                ),
                (
                    {
                        "A": C("TimeInterval", repeat=5),
                        "B": C("TimeInterval", repeat=3),
                        "C": C("TimeInterval", repeat=1),
                    },
                    after("A", 2),
                ),
                (
                    {"A": C("TimeInterval", repeat=3), "B": C("TimeInterval", repeat=2)},
                    after("A", 2),
                ),
                (
                    {"A": C("TimeInterval", repeat=5), "B": C("TimeInterval", repeat=7)},
                    after("B", 2),
                ),
                (
                    {"A": C("TimeInterval", repeat=1200), "B": C("TimeInterval", repeat=1000)},
                    after("A", 3),
                ),
                (
                    {"A": C("TimeInterval", repeat="2us"), "B": C("TimeInterval", repeat="4us")},
                    after("B", 3),
                ),
                (
                    {"A": any_of(C("TimeInterval", repeat=2), C("TimeInterval", repeat=3))},
                    after("A", 4),
                ),
                (
                    {"A": C("TimeInterval", repeat="100us"), "B": C("TimeInterval", repeat=2)},
                    after("B", 2),
                ),
            ]
        )
    ],
    *[
        Scenario(f"time_interval_no_dependencies_{k}", paths("A", "B", "C"), conds, _t(term))
        for k, (conds, term) in enumerate(
            [
                (
                    {
                        "A": C("TimeInterval", repeat=10, start=100),
                        "B": C("TimeInterval", repeat=10, start=300),
                        "C": C("TimeInterval", repeat=10, start=400),
                    },
                    C("TimeInterval", start=500),
                ),
                (
                    {
                        "A": C("TimeInterval", start=100),
                        "B": C("TimeInterval", start=300),
                        "C": C("TimeInterval", start=400),
                    },
                    C("TimeInterval", start=500),
                ),
                (
                    {
                        "A": C("TimeInterval", repeat=2, start=105),
                        "B": C("TimeInterval", repeat=7, start=317),
                        "C": C("TimeInterval", repeat=11, start=431),
                    },
                    C("TimeInterval", start=597),
                ),
                (
                    {
                        "A": C("TimeInterval", repeat=10, start=100, start_inclusive=False),
                        "B": C("TimeInterval", repeat=10, start=300),
                        "C": C("TimeInterval", repeat=10, start=400),
                    },
                    C("TimeInterval", start=500, start_inclusive=False),
                ),
                (
                    {
                        "A": C("TimeInterval", repeat=10, start=100),
                        "B": C("TimeInterval", repeat=10, start=100, end=200, end_inclusive=False),
                        "C": C("TimeInterval", repeat=10, start=400),
                    },
                    C("TimeInterval", start=500),
                ),
            ]
        )
    ],
    Scenario("time_termination_inclusive", GRAPHS["chain"], term=_t(C("TimeTermination", t=10))),
    Scenario(
        "time_termination_exclusive",
        GRAPHS["chain"],
        term=_t(C("TimeTermination", t=10, inclusive=False)),
    ),
    Scenario(
        "exact_time_start",
        GRAPHS["pair"],
        {"A": C("TimeInterval", start=1), "B": C("TimeInterval", start=1)},
        mode="exact_time",
    ),
    Scenario(
        "exact_time_repeats",
        GRAPHS["chain"],
        {
            "A": C("TimeInterval", repeat=2),
            "B": C("TimeInterval", repeat=3, start=1),
            "C": C("Always"),
        },
        _t(after("B", 3)),
        steps=2,
        mode="exact_time",
    ),
    Scenario(
        "exact_time_calls",
        GRAPHS["diamond"],
        {"B": every("A", 2), "D": after("C", 2)},
        _t(after("D", 2)),
        steps=2,
        mode="exact_time",
    ),
    # NWhen (the compiled backend runs it node by node: graph-scheduler calls jitted nodes)
    *[
        Scenario(
            f"nwhen_after_n_calls_{n}",
            GRAPHS["pair"],
            {"A": C("Always"), "B": C("NWhen", condition=after("A", 3), n=n)},
            _t(after("A", 6)),
            steps=2,
        )
        for n in (1, 2)
    ],
    # a set whose outcome depends on the order its nodes are asked in
    Scenario(
        "order_within_set",
        GRAPHS["multisource"],
        {
            "A2": any_of(C("AtPass", n=1), C("BeforeNCalls", dependency="A1", n=1)),
            "A1": any_of(C("AtPass", n=1), C("BeforeNCalls", dependency="A2", n=1)),
            "B2": C("Not", condition=after("B3", 1, time_scale="TimeScale.PASS")),
            "B3": C("Not", condition=after("B2", 1, time_scale="TimeScale.PASS")),
        },
        _t(C("AfterNPasses", n=3)),
        steps=2,
    ),
    # feedback edges (an MDF cycle: the edge into a port with a default_value is no dependency)
    Scenario("feedback_chain", GRAPHS["chain"], feedback=(("C", "A"),), steps=3),
    Scenario("feedback_self", GRAPHS["pair"], feedback=(("A", "A"), ("B", "B")), steps=2),
    Scenario(
        "feedback_loop_conditions",
        GRAPHS["pair"],
        {"A": any_of(C("AtPass", n=0), every("B", 2)), "B": any_of(every("A", 1), every("B", 1))},
        _t(after("A", 3)),
        feedback=(("B", "A"),),
        steps=2,
    ),
    Scenario(
        "feedback_diamond",
        GRAPHS["diamond"],
        {"A": C("Always"), "D": all_of(every("B", 1), every("C", 1))},
        _t(after("D", 2)),
        feedback=(("D", "A"), ("D", "B")),
        steps=2,
    ),
]

#: scenarios that the compiled backend also runs as Numba-compiled code (the rest run its
#: generated scheduler on tier 0, which reads the same generated code without compiling it)
NUMBA = {
    "linear_ABBCC_just_ran",
    "multisource_2",
    "time_interval_no_dependencies_2",
    "threshold_ne_neg_atol_rtol",
}


# -- random scenarios over the same shapes ----------------------------------------------------------
SCALES = [
    "TimeScale.PASS",
    "TimeScale.ENVIRONMENT_SEQUENCE",
    "TimeScale.LIFE",
    "TimeScale.CONSIDERATION_SET_EXECUTION",
]


def _leaf(r: random.Random, nodes: list[str]) -> dict:
    d = r.choice(nodes)
    pick = r.randrange(16)
    if pick == 0:
        return C("Always")
    if pick == 1:
        return C("EveryNPasses", n=r.randint(1, 3))
    if pick in (2, 3):
        return every(d, r.randint(1, 3))
    if pick in (4, 5):
        kw = {"time_scale": r.choice(SCALES)} if r.random() < 0.4 else {}
        name = r.choice(["AfterNCalls", "AtNCalls", "BeforeNCalls", "AfterCall"])
        return C(name, dependency=d, n=r.randint(0, 4), **kw)
    if pick == 6:
        kw = {"time_scale": "TimeScale.ENVIRONMENT_SEQUENCE"} if r.random() < 0.3 else {}
        return C(
            r.choice(["AtPass", "AfterPass", "BeforePass", "AfterNPasses"]), n=r.randint(0, 4), **kw
        )
    if pick == 7:
        return C("JustRan", dependency=d)
    if pick == 8:
        return C(
            "AfterNCallsCombined",
            dependencies=r.sample(nodes, min(2, len(nodes))),
            n=r.randint(1, 4),
        )
    if pick == 9:
        return C("AllHaveRun", dependencies=r.sample(nodes, r.randint(0, min(2, len(nodes)))))
    if pick == 10:
        name = r.choice(["WhenFinished", "WhenFinishedAny", "WhenFinishedAll"])
        if name == "WhenFinished":
            return C(name, dependency=d)
        return C(name, dependencies=r.sample(nodes, r.randint(0, min(2, len(nodes)))))
    if pick == 11:
        cmp = r.choice(["<", "<=", ">", ">=", "==", "!="])
        tol = {"atol": 0.5} if cmp in ("==", "!=") and r.random() < 0.5 else {}
        return C(
            "Threshold",
            dependency=d,
            parameter="count",
            threshold=r.randint(0, 4),
            comparator=cmp,
            **tol,
        )
    if pick == 12:
        name = r.choice(
            [
                "AtEnvironmentStateUpdate",
                "AfterEnvironmentStateUpdate",
                "AfterNEnvironmentStateUpdates",
                "BeforeEnvironmentStateUpdate",
            ]
        )
        return C(name, n=r.randint(0, 3))
    if pick == 13:
        name = r.choice(
            [
                "AtConsiderationSetExecution",
                "BeforeConsiderationSetExecution",
                "AfterConsiderationSetExecution",
                "AfterNConsiderationSetExecutions",
            ]
        )
        kw = {"time_scale": "TimeScale.ENVIRONMENT_SEQUENCE"} if r.random() < 0.3 else {}
        return C(name, n=r.randint(0, 6), **kw)
    if pick == 14:
        return r.choice(
            [
                C("AtEnvironmentStateUpdateStart"),
                C("AtEnvironmentStateUpdateNStart", n=r.randint(0, 2)),
                C("AtEnvironmentSequenceStart"),
                C("AtEnvironmentSequenceNStart", n=r.randint(0, 1)),
                C(
                    r.choice(
                        [
                            "AtEnvironmentSequence",
                            "AfterEnvironmentSequence",
                            "AfterNEnvironmentSequences",
                        ]
                    ),
                    n=r.randint(0, 1),
                ),
            ]
        )
    return C(r.choice(["Never", "Always"]))


def _cond(r: random.Random, nodes: list[str], depth: int = 0) -> dict:
    x = r.random()
    if depth < 2 and x < 0.25:
        name = r.choice(["All", "Any", "And", "Or"])
        return C(name, dependencies=[_cond(r, nodes, depth + 1) for _ in range(r.randint(1, 3))])
    if depth < 2 and x < 0.33:
        return C("Not", condition=_cond(r, nodes, depth + 1))
    return _leaf(r, nodes)


def _term(r: random.Random, nodes: list[str]) -> dict:
    out: dict[str, dict] = {}
    x = r.random()
    if x < 0.15:
        pass  # graph-scheduler's default: AllHaveRun
    elif x < 0.4:
        out[ESU] = C("AfterNPasses", n=r.randint(1, 6))
    elif x < 0.8:
        cap = C("AfterNPasses", n=r.randint(2, 8))
        out[ESU] = C(r.choice(["Any", "Or"]), dependencies=[_cond(r, nodes, 1), cap])
    else:
        out[ESU] = _cond(r, nodes, 1)
    if r.random() < 0.2:
        out[ES] = r.choice(
            [
                C("AfterNEnvironmentStateUpdates", n=r.randint(1, 3)),
                after(r.choice(nodes), r.randint(1, 6), time_scale="TimeScale.LIFE"),
                C("AtEnvironmentStateUpdate", n=r.randint(1, 3)),
                C("AfterEnvironmentStateUpdate", n=r.randint(0, 2)),
            ]
        )
    return out


def _random_scenario(seed: int) -> Scenario:
    r = random.Random(seed)
    shape = r.choice(sorted(GRAPHS))
    graph = GRAPHS[shape]
    nodes = list(graph)
    conds = {n: _cond(r, nodes) for n in nodes if r.random() < 0.7}
    feedback = ()
    if r.random() < 0.2:
        feedback = ((nodes[-1], nodes[0]),)
    finish = {n: r.randint(1, 4) for n in nodes if r.random() < 0.3}
    return Scenario(
        f"random_{seed}_{shape}",
        graph,
        conds,
        _term(r, nodes),
        steps=r.randint(1, 4),
        feedback=feedback,
        finish=finish,
    )


def generated(count: int) -> list[Scenario]:
    """The first ``count`` random scenarios that graph-scheduler runs to an end (and that run
    some node), or that graph-scheduler itself cannot evaluate (the engine must refuse them)."""
    out = []
    seed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        while len(out) < count:
            sc = _random_scenario(seed)
            seed += 1
            try:
                runs = oracle(sc)
            except NoEnd:
                continue
            except Exception:
                out.append(sc)
                continue
            if any(s for steps, _ in runs for s in steps):
                out.append(sc)
    return out


SCENARIOS = HAND + generated(100)


# -- the tests --------------------------------------------------------------------------------------
def _drive(sc: Scenario, backend: str) -> tuple[Simulation, list]:
    sim = Simulation(from_dict(model_dict(sc)), backend=backend, scheduling_mode=sc.mode)
    seen = []
    for _ in range(sc.steps):
        sim.evaluate()
        seen.append((sim.time_steps, sim.time_step_times))
    return sim, seen


def _same_updates(ours: list, want: list, what: str) -> None:
    for k, ((steps, times), (wsteps, wtimes)) in enumerate(zip(ours, want, strict=True)):
        assert steps == wsteps, f"{what}: time steps of update {k}"
        np.testing.assert_allclose(
            times, wtimes, rtol=1e-9, atol=1e-9, err_msg=f"{what}: times {k}"
        )


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_matches_graph_scheduler(sc: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        want = oracle(sc, limit=1000)
    except NoEnd:
        pytest.fail("graph-scheduler does not end this scenario")
    except Exception:
        # graph-scheduler cannot evaluate it: both backends refuse it in one line
        for backend in ("interpreted", "compiled"):
            with pytest.raises(MDFError) as err:
                _drive(sc, backend)
            assert "\n" not in str(err.value), f"{backend}: {err.value}"
        return
    if any(d["type"] == "EveryNCalls" for t in sc.term.values() for d in walk(t)):
        # refused, though graph-scheduler may never get to ask it (it fails when it does)
        with pytest.raises(MDFError, match=r"EveryNCalls\(.*termination condition"):
            _drive(sc, "interpreted")
        return
    interp, seen = _drive(sc, "interpreted")
    _same_updates(seen, want, "interpreted")
    if sc.id not in NUMBA:
        monkeypatch.setenv("MDF_ENGINE_TIER0", "always")
    comp, seen = _drive(sc, "compiled")
    _same_updates(seen, want, f"compiled ({comp.runner.mode}: {comp.runner.fallback_reason})")
    ran = {n for steps, _ in want for s in steps for n in s}
    for nid, ports in interp.outputs.items():
        for port, v in ports.items():
            if nid not in ran:  # (a node that has not run holds None on both backends)
                assert v is None and comp.outputs[nid][port] is None, f"{nid}.{port}"
                continue
            np.testing.assert_allclose(
                np.asarray(comp.outputs[nid][port], dtype=float),
                np.asarray(v, dtype=float),
                rtol=1e-12,
                err_msg=f"{nid}.{port}",
            )


def test_scenarios_cover_every_condition_kind() -> None:
    used = {
        d["type"]
        for sc in SCENARIOS
        for top in [*sc.conds.values(), *sc.term.values()]
        for d in walk(top)
    }
    assert set(KINDS) - used == set()


_GS_CLASSES = (gs.condition.Condition, gs.condition.GraphStructureCondition)
#: graph-scheduler's condition classes that a model file cannot give (a Python function, or an
#: edit of the scheduler's graph)
REFUSED = sorted(
    name
    for name in dir(gs.condition)
    if inspect.isclass(getattr(gs.condition, name))
    and issubclass(getattr(gs.condition, name), _GS_CLASSES)
    and name not in KINDS
    and not name.startswith("_")
)


@pytest.mark.parametrize("name", REFUSED)
def test_inexpressible_condition_is_one_line_naming_it(name: str) -> None:
    sc = Scenario("refused", GRAPHS["pair"], {"B": C(name)})
    for backend in ("interpreted", "compiled"):
        with pytest.raises(MDFError) as err:
            _drive(sc, backend)
        text = str(err.value)
        assert name in text and "\n" not in text, text


def test_stateful_onnx_export_waits_for_a_node_of_the_same_set_to_finish() -> None:
    """The scheduled ONNX export writes the compiled loop's conditions: WhenFinished of a node
    chosen earlier in the same consideration set waits for it to have run."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import json

    from mdf_engine.onnx_io.step_export import METADATA_KEY, to_onnx_run

    sc = Scenario(
        "same_set_finish",
        GRAPHS["two_origins"],
        {"A": C("WhenFinished", dependency="B"), "B": C("Always")},
        _t(C("AfterNPasses", n=3)),
        steps=2,
    )
    runs = Counter(n for steps, _ in oracle(sc) for s in steps for n in s)
    model = from_dict(model_dict(sc))
    run = to_onnx_run(model, steps=sc.steps)
    sess = ort.InferenceSession(run.SerializeToString(), providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {})))
    meta = json.loads({p.key: p.value for p in run.metadata_props}[METADATA_KEY])
    for n in ("A", "B"):
        assert out[meta["outputs"][f"{n}.out"]] == runs[n], n
