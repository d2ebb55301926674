"""Which graphs the compiled ACT-R kernels run: modeci-mdf's ``actr_to_mdf`` layout.

A graph is compiled when, apart from the values of its four model parameters (declarative
memory ``chunks`` and ``chunk_types``, ``productions``, ``first_goal``) and the two goal-state
forms below, it equals the graph :func:`mdf_engine.actr.build_model` writes: the same nodes,
ports, parameters, function calls, edges and conditions, so the kernels compute what the
interpreter computes node by node. The goal state is either ``actr_to_mdf``'s
``first_goal if goal_input == {} else change_goal`` or the builder's ``change_goal``; its
``default_initial_value`` is ``first_goal`` or a goal dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..model import element_to_dict
from ..plan import GraphPlan
from .tables import NotCompilable

#: the goal-state value of actr_to_mdf (reset to the first goal on an empty goal input)
RESET_FORM = "first_goal if goal_input == {} else change_goal"
#: the model parameters whose values are data of the tables, not layout
DATA = (
    ("declarative_memory", "chunks"),
    ("declarative_memory", "chunk_types"),
    ("procedural_memory", "productions"),
    ("goal_buffer", "first_goal"),
)


@lru_cache(maxsize=1)
def _reference_model() -> Any:
    from .builder import build_model

    return build_model(
        "layout",
        chunks=[{"name": "c", "ISA": "t", "s": "v"}],
        productions=[{"name": "p", "lhs": {"goal": {"ISA": "t"}}, "rhs": {}}],
        goal="c",
    )


@lru_cache(maxsize=1)
def _reference() -> dict[str, Any]:
    return _blank(element_to_dict(_reference_model().graphs[0]))


@lru_cache(maxsize=1)
def cycle_schedule() -> tuple[tuple[frozenset[str], ...], tuple[float, ...], tuple[str, ...]]:
    """The time steps, their times and the order of execution of one cycle of the layout (the
    same in every cycle, whatever the values): one cycle of the reference graph run by the
    interpreted backend, once per process."""
    from ..interpreter import InterpretedGraph
    from ..plan import plan_graph

    model = _reference_model()
    graph = InterpretedGraph(plan_graph(model, model.graphs[0]))
    graph.evaluate(initializer={"goal_input": {}, "dm_input": {}})
    steps, times = graph.last_update_steps()
    return tuple(map(frozenset, steps)), tuple(times), tuple(graph.order_of_execution)


def _blank(graph: dict[str, Any]) -> dict[str, Any]:
    """``graph`` without its data values and goal-state form (changed in place)."""
    nodes = graph.get("nodes", {})
    for node, par in DATA:
        p = nodes.get(node, {}).get("parameters", {}).get(par)
        if isinstance(p, dict) and "value" in p:
            p["value"] = None
    state = nodes.get("goal_buffer", {}).get("parameters", {}).get("goal_state")
    if isinstance(state, dict):
        if state.get("value") in (RESET_FORM, "change_goal"):
            state["value"] = None
        if state.get("default_initial_value") == "first_goal" or isinstance(
            state.get("default_initial_value"), Mapping
        ):
            state["default_initial_value"] = None
    return graph


def _ordered(x: Any) -> Any:
    """``x`` with every dict as its list of items: compared in order (a node's parameters are
    evaluated in their order)."""
    if isinstance(x, Mapping):
        return [(k, _ordered(v)) for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        return [_ordered(v) for v in x]
    return x


def check_layout(plan: GraphPlan) -> tuple[bool, Any]:
    """``(reset_on_empty, initial goal)`` of an ACT-R graph in the compiled layout (the
    initial goal is ``None`` for ``first_goal``); NotCompilable naming what differs."""
    if plan.scheduling_mode != "standard" or plan.psyneulink:
        raise NotCompilable("only standard scheduling of modeci-mdf's ACT-R layout compiles")
    got = element_to_dict(plan.graph)
    state = got.get("nodes", {}).get("goal_buffer", {}).get("parameters", {}).get("goal_state")
    form = dict(state) if isinstance(state, dict) else {}
    ref = _reference()
    blank = _blank(got)
    if _ordered(blank["nodes"]) != _ordered(ref["nodes"]) or blank != ref:
        for part in ("edges", "conditions"):
            if blank.get(part) != ref.get(part):
                raise NotCompilable(f"its {part} are not those of modeci-mdf's ACT-R layout")
        nodes, want = blank.get("nodes", {}), ref["nodes"]
        odd = [
            n for n in list(want) + list(nodes) if _ordered(nodes.get(n)) != _ordered(want.get(n))
        ]
        raise NotCompilable(f"node {odd[0]!r} is not that of modeci-mdf's ACT-R layout")
    initial = form["default_initial_value"]
    return form["value"] == RESET_FORM, (None if initial == "first_goal" else initial)
