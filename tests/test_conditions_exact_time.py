"""JustRan asked before any node has run: graph-scheduler itself cannot evaluate it (its
execution list is empty), which happens in exact_time mode (one consideration set) and on a
node of the first consideration set; the engine refuses it in one line naming the condition
instead of an internal error, and runs every other JustRan as graph-scheduler does."""

from __future__ import annotations

import graph_scheduler as gs
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.loader import from_dict


def _model(mode_cond: dict, edge: bool = False) -> dict:
    node = lambda nid: {  # noqa: E731
        "input_ports": {"i": {"shape": [1]}},
        "parameters": {"x": {"value": 1}},
        "output_ports": {"out": {"value": "x"}},
    }
    return {
        "m": {
            "format": "ModECI MDF v0.4",
            "graphs": {
                "g": {
                    "nodes": {"A": node("A"), "B": node("B")},
                    "conditions": {"node_specific": {"B": mode_cond}},
                    "edges": (
                        {
                            "e": {
                                "sender": "A",
                                "sender_port": "out",
                                "receiver": "B",
                                "receiver_port": "i",
                            }
                        }
                        if edge
                        else {}
                    ),
                }
            },
        }
    }


def test_graph_scheduler_cannot_evaluate_just_ran_in_exact_time():
    """The oracle: graph-scheduler's own run of the same schedule fails."""
    sched = gs.Scheduler(
        graph={"A": set(), "B": set()},
        conditions={"B": gs.JustRan("A")},
        mode=gs.SchedulingMode.EXACT_TIME,
    )
    with pytest.raises(IndexError):
        list(sched.run())


def test_just_ran_in_exact_time_is_refused_naming_the_condition():
    model = from_dict(_model({"type": "JustRan", "kwargs": {"dependency": "A"}}))
    with pytest.raises(MDFError) as err:
        Simulation(model, scheduling_mode="exact_time").run(steps=1)
    text = str(err.value)
    assert "conditions.node_specific.B" in text and "JustRan" in text
    assert "\n" not in text


@pytest.mark.parametrize("edge", [False, True])
def test_just_ran_in_standard_mode_follows_graph_scheduler(edge):
    """Without an edge B is in the first consideration set (graph-scheduler fails: refused);
    with A -> B the engine's time steps equal graph-scheduler's execution list."""
    model = from_dict(_model({"type": "JustRan", "kwargs": {"dependency": "A"}}, edge))
    sched = gs.Scheduler(
        graph={"A": set(), "B": {"A"} if edge else set()}, conditions={"B": gs.JustRan("A")}
    )
    if not edge:
        with pytest.raises(IndexError):
            list(sched.run())
        with pytest.raises(MDFError, match="first time step"):
            Simulation(model).evaluate()
        return
    expected = [{str(n) for n in s} for s in sched.run()]
    sim = Simulation(model)
    sim.evaluate()
    assert [set(s) for s in sim.time_steps] == expected
