"""Every condition kind round-trips MDF -> kind -> graph-scheduler condition.

For each kind, the first case of ``test_conditions.CASES`` that uses it is rebuilt two ways: by
the engine (``parse_condition`` then the kind's ``graph_scheduler`` through the ``Bridge``) and
directly by graph-scheduler (its class named by the file, called with the file's arguments:
the oracle, ``gs_oracle.gs_condition``). Both, and the case's own hand-written graph-scheduler conditions, must give the same
execution list on the case's chain A -> B -> C. ``test_conditions`` runs the same cases on both
backends; here we check that every kind has such a case, and that every graph-scheduler
condition class is either a kind or refused there.
"""

from __future__ import annotations

import inspect

import graph_scheduler as gs
import pytest
from gs_oracle import gs_condition, oracle_time_steps, termination_scale, walk
from test_conditions import CASES, UNSUPPORTED, chain_model

from mdf_engine.schedulers.conditions import Bridge
from mdf_engine.schedulers.kinds import KINDS, ConditionKind
from mdf_engine.schedulers.parse import parse_condition, time_scale
from mdf_engine.schedulers.time_scales import to_graph_scheduler

# graph-scheduler warns when a node's condition depends on the node itself (BeforeNCalls(A) on A)
pytestmark = pytest.mark.filterwarnings("ignore:.*as its owner:UserWarning")


def _first_case(name: str):
    for case in CASES:
        for d in [*case.nodes.values(), *case.term.values()]:
            if any(x["type"] == name for x in walk(d)):
                return case
    return None


def test_every_kind_has_a_case_and_every_class_a_kind():
    missing = [name for name in KINDS if _first_case(name) is None]
    assert not missing, f"kinds without a case in test_conditions: {missing}"
    refused = {u[0] for u in UNSUPPORTED}
    for name in dir(gs.condition):
        cls = getattr(gs.condition, name)
        if inspect.isclass(cls) and issubclass(cls, gs.condition.Condition):
            assert name in KINDS or name in refused, name


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_round_trips_to_graph_schedulers_execution_list(name: str):
    case = _first_case(name)
    graph = chain_model(case.nodes, case.term, case.finish).graphs[0]
    given = {("node", n): d for n, d in case.nodes.items()}
    given |= {("term", s): d for s, d in case.term.items()}
    made = {key: parse_condition(d, ".".join(key), graph) for key, d in given.items()}
    assert any(isinstance(k, KINDS[name]) for m in made.values() for k in m.walk())
    for m in made.values():
        hash(m)  # frozen: a value

    def engine(a, b, c, getter):
        bridge = Bridge({"A": a, "B": b, "C": c}, lambda n, p: getter(bridge.nodes[n], p))
        kind = next(k for m in made.values() for k in m.walk() if isinstance(k, KINDS[name]))
        assert isinstance(kind.graph_scheduler(bridge), getattr(gs, name))
        return _split({key: m.graph_scheduler(bridge) for key, m in made.items()}, bridge.nodes)

    def direct(a, b, c, getter):
        nodes = {"A": a, "B": b, "C": c}
        conds = {nodes[k]: gs_condition(d, nodes, getter) for k, d in case.nodes.items()}
        term = {termination_scale(k): gs_condition(d, nodes, getter) for k, d in case.term.items()}
        return conds, term

    expected = oracle_time_steps(case.oracle, case.steps, case.finish)
    assert oracle_time_steps(direct, case.steps, case.finish) == expected
    assert oracle_time_steps(engine, case.steps, case.finish) == expected


def _split(built: dict, nodes: dict) -> tuple[dict, dict]:
    """(node conditions, termination conditions) as graph-scheduler takes them, the
    termination keys read by the engine."""
    conds = {nodes[k]: c for (role, k), c in built.items() if role == "node"}
    term = {
        to_graph_scheduler(time_scale(k)): c for (role, k), c in built.items() if role == "term"
    }
    return conds, term


def test_kinds_are_small_frozen_dataclasses_with_docstrings():
    for name, cls in KINDS.items():
        assert issubclass(cls, ConditionKind) and cls.__doc__, name
        assert cls.__dataclass_params__.frozen, name
