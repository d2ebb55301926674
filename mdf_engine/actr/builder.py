"""Build ACT-R production-system graphs from a small Python description, and run them.

:func:`build_model_dict` writes the graph layout of modeci-mdf's
``modeci_mdf.interfaces.actr.actr_to_mdf`` (nodes ``declarative_memory``, ``retrieval_buffer``,
``goal_buffer``, ``procedural_memory``, ``pattern_matching``, ``conflict_resolution``,
``fire_production``, ``check_termination``; the same ports, edges and conditions) as an MDF
dict in the modeci-mdf 0.4.x JSON layout, so the result runs both in mdf_engine and in the
reference engine. :func:`build_model` returns it as an :class:`mdf_engine.model.Model`.

Description::

    build_model("count",
        chunks=[{"name": "two", "ISA": "number", "number": "two", "next": "three"}, ...],
        goal={"name": "g", "ISA": "count-from", "start": "two", "end": "five"},  # or a chunk name
        productions=[{"name": "start",
                      "lhs": {"goal": {"ISA": "count-from", "start": "=n", "count": "nil"}},
                      "rhs": {"goal": {"count": "=n"},
                              "retrieval": {"ISA": "number", "number": "=n"}}}, ...])

``lhs``/``rhs`` map a buffer (``goal`` or ``retrieval``) to its slots; the list form of the MDF
files (``[{"buffer": "goal", "ISA": ..., ...}, ...]``) is accepted too. Since the ACT-R functions
match slots by *position*, the builder puts everything in chunk-type order:

* chunk types come from ``chunk_types`` or, if omitted, from the chunks and the goal (slots in
  order of first appearance);
* every chunk (and the goal) lists all slots of its type, a missing slot being ``nil``;
* a left-hand-side pattern lists all slots of its type, a missing slot being the variable
  ``=slot`` (as ``actr_to_mdf`` does);
* a retrieval request lists the slots of its type up to the last one given, gaps being the
  wildcard ``=``, so a request by a later slot matches that slot and not the first.

One deliberate difference from ``actr_to_mdf``: the goal state is ``goal_state = change_goal``
(``default_initial_value: first_goal``) instead of ``first_goal if goal_input == {} else
change_goal``. The reference form only keeps the goal when a production leaves it alone because
the reference ``change_goal`` mutates ``first_goal`` in place; with pure functions it would reset
the goal. ``goal_state = change_goal`` behaves the same in both engines.

:func:`run_model` drives a model the way modeci-mdf's ACT-R examples are driven: one
``evaluate`` per cycle, feeding ``fire_production``'s outputs back as ``goal_input`` and
``dm_input``, until ``check_termination`` says no production fired.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import MDFError
from .functions import _compile, pattern_to_string

__all__ = ["build_model", "build_model_dict", "run_model", "normalize"]

BUFFERS = ("goal", "retrieval")

Desc = Mapping[str, Any]


def _infer_types(chunks: Sequence[Desc]) -> dict[str, list[str]]:
    types: dict[str, list[str]] = {}
    for c in chunks:
        if "ISA" not in c:
            raise MDFError(f"every chunk needs an 'ISA' (its chunk type), got {dict(c)!r}")
        slots = types.setdefault(c["ISA"], [])
        for k in c:
            if k not in ("name", "ISA") and k not in slots:
                slots.append(k)
    return types


def _check_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or any(ch.isspace() for ch in value):
        raise MDFError(f"{where}: expected a non-empty string without spaces, got {value!r}")
    return value


def _full_chunk(c: Desc, types: Mapping[str, Sequence[str]], where: str) -> dict[str, str]:
    c = dict(c)
    isa = c.get("ISA")
    if isa not in types:
        raise MDFError(f"{where}: unknown chunk type {isa!r} (known: {', '.join(types)})")
    unknown = [k for k in c if k not in ("name", "ISA") and k not in types[isa]]
    if unknown:
        raise MDFError(f"{where}: chunk type {isa!r} has no slot {unknown[0]!r}")
    out = {"name": _check_text(c["name"], where)} if "name" in c else {}
    out["ISA"] = _check_text(isa, where)
    for s in types[isa]:
        out[s] = _check_text(c.get(s, "nil"), f"{where} slot {s}")
    return out


def _patterns(side: Any, where: str) -> list[dict[str, str]]:
    """A production side as a list of ``{"buffer": ..., ...}`` patterns."""
    if isinstance(side, Mapping):
        out = []
        for buf, slots in side.items():
            if not isinstance(slots, Mapping):
                raise MDFError(f"{where}.{buf}: expected a dict of slots, got {slots!r}")
            out.append({"buffer": buf, **{k: v for k, v in slots.items() if k != "buffer"}})
        return out
    if isinstance(side, Sequence) and not isinstance(side, str):
        out = []
        for p in side:
            if not isinstance(p, Mapping) or "buffer" not in p:
                raise MDFError(f"{where}: expected patterns with a 'buffer', got {p!r}")
            out.append({"buffer": p["buffer"], **{k: v for k, v in p.items() if k != "buffer"}})
        return out
    raise MDFError(f"{where}: expected a dict buffer -> slots or a list of patterns, got {side!r}")


def _lhs_pattern(p: dict, types: Mapping[str, Sequence[str]], where: str) -> dict[str, str]:
    isa = p.get("ISA")
    if isa not in types:
        raise MDFError(f"{where}: a condition needs a known 'ISA', got {isa!r}")
    unknown = [k for k in p if k not in ("buffer", "ISA") and k not in types[isa]]
    if unknown:
        raise MDFError(f"{where}: chunk type {isa!r} has no slot {unknown[0]!r}")
    out = {"buffer": p["buffer"], "ISA": isa}
    for s in types[isa]:
        out[s] = _check_text(p.get(s, "=" + s), f"{where} slot {s}")
    _compile(((out["buffer"], pattern_to_string(out)),))  # a malformed condition fails here
    return out


def _rhs_pattern(
    p: dict, types: Mapping[str, Sequence[str]], goal_type: str, where: str
) -> dict[str, str]:
    isa = p.get("ISA", goal_type if p["buffer"] == "goal" else None)
    if isa not in types:
        raise MDFError(f"{where}: an action needs a known 'ISA', got {isa!r}")
    unknown = [k for k in p if k not in ("buffer", "ISA") and k not in types[isa]]
    if unknown:
        raise MDFError(f"{where}: chunk type {isa!r} has no slot {unknown[0]!r}")
    for k, v in p.items():
        _check_text(v, f"{where} slot {k}")
    if p["buffer"] == "goal":
        if isa != goal_type:
            raise MDFError(f"{where}: the goal is a {goal_type!r}; it cannot become a {isa!r}")
        return dict(p)
    out = {"buffer": p["buffer"], "ISA": isa}
    given = [i for i, s in enumerate(types[isa]) if s in p]
    for s in types[isa][: (given[-1] + 1) if given else 0]:
        out[s] = p.get(s, "=")
    return out


def normalize(
    chunks: Sequence[Desc],
    productions: Sequence[Desc],
    goal: Desc | str,
    chunk_types: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[dict], dict[str, list[str]], list[dict], dict]:
    """Chunks, chunk types, productions and goal in the positional layout the functions need."""
    if isinstance(goal, str):
        named = [c for c in chunks if c.get("name") == goal]
        if not named:
            raise MDFError(f"goal {goal!r} names no chunk")
        goal = named[0]
    if chunk_types is None:
        types = _infer_types(list(chunks) + [goal])
    else:
        types = {
            _check_text(k, "chunk type"): [_check_text(s, f"slot of {k}") for s in v]
            for k, v in chunk_types.items()
        }
    dm = [_full_chunk(c, types, f"chunks[{i}]") for i, c in enumerate(chunks)]
    first_goal = _full_chunk(goal, types, "goal")
    pm = []
    for i, prod in enumerate(productions):
        where = f"productions[{i}]"
        if not isinstance(prod, Mapping) or "lhs" not in prod or "rhs" not in prod:
            raise MDFError(f"{where}: expected a dict with 'name', 'lhs' and 'rhs', got {prod!r}")
        name = _check_text(prod.get("name", f"p{i}"), f"{where}.name")
        lhs, rhs = _patterns(prod["lhs"], f"{where}.lhs"), _patterns(prod["rhs"], f"{where}.rhs")
        for p in lhs + rhs:
            if p["buffer"] not in BUFFERS:
                raise MDFError(f"{where}: unknown buffer {p['buffer']!r} (known: goal, retrieval)")
        pm.append(
            {
                "name": name,
                "lhs": [_lhs_pattern(p, types, f"{where}.lhs.{p['buffer']}") for p in lhs],
                "rhs": [
                    _rhs_pattern(p, types, first_goal["ISA"], f"{where}.rhs.{p['buffer']}")
                    for p in rhs
                ],
            }
        )
    return dm, types, pm, first_goal


def _cond(type_: str, **kwargs: Any) -> dict:
    return {"type": type_, "kwargs": kwargs}


def build_model_dict(
    name: str,
    chunks: Sequence[Desc],
    productions: Sequence[Desc],
    goal: Desc | str,
    chunk_types: Mapping[str, Sequence[str]] | None = None,
) -> dict:
    """The ACT-R graph as an MDF dict (modeci-mdf 0.4.x JSON layout, ``{name: {...}}``)."""
    _check_text(name, "model name")
    dm, types, pm, first_goal = normalize(chunks, productions, goal, chunk_types)

    def port(value: str) -> dict:
        return {"value": value}

    nodes = {
        "declarative_memory": {
            "input_ports": {"dm_input": {}},
            "parameters": {
                "chunks": {"value": dm},
                "chunk_types": {"value": types},
                "retrieve_chunk": {
                    "function": "retrieve_chunk",
                    "args": {"pattern": "dm_input", "dm_chunks": "chunks", "types": "chunk_types"},
                },
            },
            "output_ports": {"dm_output": port("retrieve_chunk")},
        },
        "retrieval_buffer": {
            "input_ports": {"retrieval_input": {}},
            "output_ports": {"retrieval_output": port("retrieval_input")},
        },
        "goal_buffer": {
            "input_ports": {"goal_input": {}},
            "parameters": {
                "first_goal": {"value": first_goal},
                "change_goal": {
                    "function": "change_goal",
                    "args": {"pattern": "goal_input", "curr_goal": "goal_state"},
                },
                "goal_state": {"value": "change_goal", "default_initial_value": "first_goal"},
            },
            "output_ports": {"goal_output": port("goal_state")},
        },
        "procedural_memory": {
            "parameters": {"productions": {"value": pm}},
            "output_ports": {"pm_output": port("productions")},
        },
        "pattern_matching": {
            "input_ports": {
                "pattern_input_from_pm": {},
                "pattern_input_from_goal": {},
                "pattern_input_from_retrieval": {},
            },
            "parameters": {
                "pattern_matching_function": {
                    "function": "pattern_matching_function",
                    "args": {
                        "productions": "pattern_input_from_pm",
                        "goal": "pattern_input_from_goal",
                        "retrieval": "pattern_input_from_retrieval",
                    },
                }
            },
            "output_ports": {"pattern_output": port("pattern_matching_function")},
        },
        "conflict_resolution": {
            "input_ports": {"conflict_input": {}},
            "parameters": {
                "conflict_resolution_function": {
                    "function": "conflict_resolution_function",
                    "args": {"productions": "conflict_input"},
                }
            },
            "output_ports": {
                "conflict_output_to_fire_prod": port("conflict_resolution_function"),
                "conflict_output_to_check": port("conflict_resolution_function"),
            },
        },
        "fire_production": {
            "input_ports": {"fire_prod_input": {}},
            "parameters": {
                "update_goal": {
                    "function": "update_goal",
                    "args": {"production": "fire_prod_input"},
                },
                "update_retrieval": {
                    "function": "update_retrieval",
                    "args": {"production": "fire_prod_input"},
                },
            },
            "output_ports": {
                "fire_prod_output_to_goal": port("update_goal"),
                "fire_prod_output_to_retrieval": port("update_retrieval"),
            },
        },
        "check_termination": {
            "input_ports": {"check_input": {}},
            "parameters": {
                "check_termination": {
                    "function": "check_termination",
                    "args": {"production": "check_input"},
                }
            },
            "output_ports": {"check_output": port("check_termination")},
        },
    }

    def edge(s: str, sp: str, r: str, rp: str) -> dict:
        return {"sender": s, "receiver": r, "sender_port": sp, "receiver_port": rp}

    edges = {
        "dm_to_pattern_edge": edge(
            "declarative_memory", "dm_output", "retrieval_buffer", "retrieval_input"
        ),
        "retrieval_to_pattern_edge": edge(
            "retrieval_buffer",
            "retrieval_output",
            "pattern_matching",
            "pattern_input_from_retrieval",
        ),
        "goal_to_pattern_edge": edge(
            "goal_buffer", "goal_output", "pattern_matching", "pattern_input_from_goal"
        ),
        "pm_to_pattern_edge": edge(
            "procedural_memory", "pm_output", "pattern_matching", "pattern_input_from_pm"
        ),
        "pattern_to_conflict_edge": edge(
            "pattern_matching", "pattern_output", "conflict_resolution", "conflict_input"
        ),
        "conflict_to_fire_prod_edge": edge(
            "conflict_resolution",
            "conflict_output_to_fire_prod",
            "fire_production",
            "fire_prod_input",
        ),
        # as in actr_to_mdf, the check node is fed from the fire_prod port
        "conflict_to_check_edge": edge(
            "conflict_resolution",
            "conflict_output_to_fire_prod",
            "check_termination",
            "check_input",
        ),
    }
    conditions = {
        "node_specific": {
            "declarative_memory": _cond("Always"),
            "retrieval_buffer": _cond("JustRan", dependencies="declarative_memory"),
            "goal_buffer": _cond("Always"),
            "procedural_memory": _cond("Always"),
            "pattern_matching": _cond(
                "And",
                dependencies=[
                    _cond("EveryNCalls", dependencies="retrieval_buffer", n=1),
                    _cond("EveryNCalls", dependencies="goal_buffer", n=1),
                    _cond("EveryNCalls", dependencies="declarative_memory", n=1),
                ],
            ),
            "conflict_resolution": _cond("JustRan", dependencies="pattern_matching"),
            "fire_production": _cond("JustRan", dependencies="conflict_resolution"),
            "check_termination": _cond("JustRan", dependencies="conflict_resolution"),
        }
    }
    return {
        name: {
            "format": "ModECI MDF v0.4",
            "generating_application": "mdf_engine (mdf_engine.actr.builder)",
            "graphs": {f"{name}_graph": {"nodes": nodes, "edges": edges, "conditions": conditions}},
        }
    }


def build_model(
    name: str,
    chunks: Sequence[Desc],
    productions: Sequence[Desc],
    goal: Desc | str,
    chunk_types: Mapping[str, Sequence[str]] | None = None,
) -> Any:
    """The ACT-R graph as an :class:`mdf_engine.model.Model` (see the module docstring)."""
    import mdf_engine

    return mdf_engine.load(build_model_dict(name, chunks, productions, goal, chunk_types))


def run_model(
    model: Any,
    max_cycles: int = 100,
    backend: str = "interpreted",
    graph: str | None = None,
) -> list[dict]:
    """Run an ACT-R model cycle by cycle until no production fires; the goal after each cycle.

    ``model`` is a Model, a dict, a file path or a ``modeci_mdf.mdf.Model``. Each cycle is one ``evaluate`` with
    ``goal_input``/``dm_input`` set to the previous cycle's ``fire_production`` outputs (``{}``
    at first). The last goal in the list is the one of the cycle in which ``check_termination``
    became true. Raises :class:`MDFError` if that does not happen within ``max_cycles``.
    """
    import mdf_engine

    if not isinstance(model, mdf_engine.Model):
        model = mdf_engine.load(model)
    sim = mdf_engine.Simulation(model, graph=graph, backend=backend)
    goal: Any = {}
    retrieval: Any = {}
    goals: list[dict] = []
    for _ in range(max_cycles):
        sim.evaluate(initializer={"goal_input": goal, "dm_input": retrieval})
        goals.append(copy.deepcopy(sim.value("goal_buffer", "goal_output")))
        if sim.value("check_termination", "check_output"):
            return goals
        goal = sim.value("fire_production", "fire_prod_output_to_goal")
        retrieval = sim.value("fire_production", "fire_prod_output_to_retrieval")
    raise MDFError(f"the ACT-R model did not terminate within {max_cycles} cycles")
