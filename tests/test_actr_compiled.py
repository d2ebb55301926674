"""The compiled ACT-R runner (mdf_engine.actr.compiled) against the interpreted backend.

The oracle is the interpreted backend, which tests/test_wild_corpus.py and tests/test_actr.py
compare with modeci-mdf's reference engine: every cycle, every port, parameter and output of
every node (same Python values: dicts in the same key order, lists, booleans), the schedule
and the count of evaluations must be equal. The models are the corpus files
(tests/data/wild/actr_importer/), variations of them made by changing their parameters, and
random production systems in the same layout.
"""

from __future__ import annotations

import copy
import json
import logging
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.actr.compiled import NAMES, CompiledActrGraph
from mdf_engine.backends.actr import ActrRunner
from mdf_engine.errors import MDFError

WILD = Path(__file__).resolve().parent / "data" / "wild" / "actr_importer"


def _same(x: Any, y: Any, what: str) -> None:
    if isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and (x.dtype, x.shape) == (y.dtype, y.shape), what
        for a, b in zip(x.ravel(), y.ravel()):
            _same(a, b, what)
    elif isinstance(x, dict):
        assert isinstance(y, dict) and list(x) == list(y), f"{what}: {y!r} != {x!r}"
        for k in x:
            _same(x[k], y[k], f"{what}.{k}")
    elif isinstance(x, list):
        assert isinstance(y, list) and len(x) == len(y), f"{what}: {y!r} != {x!r}"
        for a, b in zip(x, y):
            _same(a, b, what)
    else:
        assert type(x) is type(y) and x == y, f"{what}: {y!r} != {x!r}"


def _cycles(
    model: Any, backend: str, n: int, sets: dict | None = None
) -> tuple[Simulation, list[dict]]:
    """``n`` cycles of the ACT-R scripts' loop (after ``sim.set(sets)``); after each, every
    value of every node."""
    sim = Simulation(model, backend=backend)
    if sets:
        sim.set(sets)
    goal: Any = {}
    request: Any = {}
    seen = []
    for _ in range(n):
        sim.evaluate(initializer={"goal_input": goal, "dm_input": request})
        seen.append(
            {
                "values": {(nd, nm): sim.value(nd, nm) for nd in NAMES for nm in NAMES[nd]},
                "outputs": sim.outputs,
                "steps": (sim.time_steps, sim.time_step_times),
                "order": list(sim.order_of_execution),
            }
        )
        goal = sim.value("fire_production", "fire_prod_output_to_goal")
        request = sim.value("fire_production", "fire_prod_output_to_retrieval")
    return sim, seen


def _compare(
    model: Any, n: int = 10, compiled: bool = True, sets: dict | None = None
) -> Simulation:
    _, want = _cycles(copy.deepcopy(model), "interpreted", n, sets)
    sim, got = _cycles(copy.deepcopy(model), "compiled", n, sets)
    assert isinstance(sim.runner, CompiledActrGraph)
    assert sim.runner.is_compiled == compiled, sim.runner.fallback_reason
    for t, (w, g) in enumerate(zip(want, got)):
        for part in w:
            _same(w[part], g[part], f"cycle {t} {part}")
    assert sim.runner.evaluations == n
    return sim


def _load(name: str) -> dict:
    return json.loads((WILD / name).read_text())


def _nodes(d: dict) -> dict:
    (model,) = d.values()
    (graph,) = model["graphs"].values()
    return graph["nodes"]


def _set(d: dict, node: str, par: str, value: Any) -> dict:
    d = copy.deepcopy(d)
    _nodes(d)[node]["parameters"][par]["value"] = value
    return d


def _goal(d: dict, **slots: str) -> dict:
    goal = dict(_nodes(d)["goal_buffer"]["parameters"]["first_goal"]["value"], **slots)
    return _set(d, "goal_buffer", "first_goal", goal)


COUNT, ADDITION = _load("count.json"), _load("addition.json")


@pytest.mark.parametrize(
    "model",
    [
        COUNT,
        ADDITION,
        _goal(COUNT, start="one", end="five"),
        _goal(COUNT, start="three", end="three"),
        _goal(ADDITION, arg1="three", arg2="four"),
        _goal(ADDITION, arg1="zero", arg2="zero"),
        _goal(ADDITION, arg1="six", arg2="seven"),  # runs out of numbers: no rule matches
    ],
    ids=["count", "addition", "count 1-5", "count 3-3", "add 3+4", "add 0+0", "add 6+7"],
)
def test_cycles_equal_interpreted(model: dict) -> None:
    _compare(model, n=14)


def test_set_parameters_equal_interpreted() -> None:
    """Simulation.set of the first goal and of the goal state's initial value (a dict)."""
    goal = {"name": "g", "ISA": "count-from", "start": "one", "end": "three", "count": "nil"}
    _compare(COUNT, n=8, sets={"goal_buffer.first_goal": goal})
    _compare(COUNT, n=8, sets={"goal_buffer.goal_state": dict(goal, start="two")})


def _productions(d: dict) -> list:
    return _nodes(d)["procedural_memory"]["parameters"]["productions"]["value"]


def _conflicting() -> dict:
    """count.json with a twin of 'increment' (counting back to the start): two productions
    match at most cycles."""
    prods = _productions(COUNT)
    twin = dict(copy.deepcopy(prods[1]), name="increment-twin")
    twin["rhs"][0]["count"] = "=start"
    return _set(COUNT, "procedural_memory", "productions", [*prods, twin])


def test_conflict_resolution_equal_interpreted() -> None:
    """Two productions match at every cycle: the seeded draw of conflict_resolution_function
    (run in Python between two kernel calls) picks the same one on both backends."""
    _, seen = _cycles(_conflicting(), "interpreted", 3)
    assert max(len(c["values"][("pattern_matching", "pattern_output")]) for c in seen) == 2
    _compare(_conflicting(), n=12)


def test_pattern_language_equal_interpreted() -> None:
    """Negated literals, wildcards, unbound right-hand-side variables, a production without a
    goal pattern (the goal returns to first_goal), a test of a buffer the graph has not (never
    matches), a negated variable that is never bound (never matches), new goal slots."""
    goal = {"buffer": "goal", "ISA": "count-from", "count": "=num2", "extra": "=unbound"}
    prods = [
        {
            "name": "begin",
            "lhs": [{"buffer": "goal", "ISA": "count-from", "start": "=s", "end": "!nil"}],
            "rhs": [
                {"buffer": "goal", "ISA": "count-from", "count": "=s"},
                {"buffer": "retrieval", "ISA": "=", "number": "=s"},
            ],
        },
        {
            "name": "walk",
            "lhs": [
                {"buffer": "goal", "ISA": "count-from", "start": "=", "end": "-=n", "count": "=n"},
                {"buffer": "retrieval", "ISA": "number", "number": "=n", "next": "=num2"},
            ],
            "rhs": [goal, {"buffer": "retrieval", "ISA": "number", "number": "=num2"}],
        },
        {
            "name": "forget",
            "lhs": [{"buffer": "goal", "ISA": "count-from", "extra": "=u"}],
            "rhs": [{"buffer": "retrieval", "ISA": "number", "number": "-=u"}],
        },
        {"name": "elsewhere", "lhs": [{"buffer": "imaginal", "ISA": "x"}], "rhs": []},
        {"name": "odd", "lhs": [{"buffer": "goal", "ISA": "-=never"}], "rhs": []},
    ]
    _compare(_set(COUNT, "procedural_memory", "productions", prods), n=12)


def _random_model(rng: random.Random, reset_form: bool) -> dict:
    """A random production system in count.json's layout: chunks over a small vocabulary,
    left-hand sides of literals, variables, negations and wildcards, right-hand sides that
    change and add goal slots and make retrieval requests."""
    words = ["a", "b", "c", "d", "nil"]
    slots = ["s1", "s2", "s3"]

    def term(kinds: str) -> str:
        k = rng.choice(kinds)
        v = rng.choice(["x", "y", "z"])
        return {
            "l": rng.choice(words),
            "v": f"={v}",
            "n": f"-={v}",
            "!": "!" + rng.choice(words),
            "w": "=",
        }[k]

    chunks = [
        {"name": f"c{i}", "ISA": "t", **{s: rng.choice(words) for s in slots[: rng.randint(1, 3)]}}
        for i in range(6)
    ]
    prods = []
    for i in range(rng.randint(1, 5)):
        lhs = [{"buffer": "goal", "ISA": "g", **{s: term("lvvn!w") for s in slots}}]
        if rng.random() < 0.6:
            lhs.append({"buffer": "retrieval", "ISA": "t", **{s: term("lvvw") for s in slots[:2]}})
        rhs = []
        if rng.random() < 0.8:
            keys = rng.sample(slots + ["s4"], rng.randint(1, 3))
            rhs.append({"buffer": "goal", **{k: term("lvv") for k in keys}})
        if rng.random() < 0.7:
            rhs.append({"buffer": "retrieval", "ISA": "t", **{s: term("lvvnw") for s in slots[:2]}})
        prods.append({"name": f"p{i}", "lhs": lhs, "rhs": rhs})
    d = _set(COUNT, "declarative_memory", "chunks", chunks)
    d = _set(d, "declarative_memory", "chunk_types", {"t": slots})
    d = _set(d, "procedural_memory", "productions", prods)
    d = _set(d, "goal_buffer", "first_goal", {"name": "g0", "ISA": "g", **dict(zip(slots, words))})
    if not reset_form:
        _nodes(d)["goal_buffer"]["parameters"]["goal_state"]["value"] = "change_goal"
    return d


@pytest.mark.parametrize("seed", range(24))
def test_random_production_systems_equal_interpreted(seed: int) -> None:
    _compare(_random_model(random.Random(seed), reset_form=seed % 2 == 0), n=8)


def test_builder_examples_equal_interpreted() -> None:
    """The builder's layout (goal_state = change_goal) compiles too."""
    root = Path(__file__).resolve().parent.parent / "examples"
    for name in ("actr_count.json", "actr_addition.json"):
        _compare(str(root / name), n=10)


def test_actr_backend_cycles_in_the_kernel() -> None:
    """The actr backend's run to termination over the compiled graph (the feedback loop inside
    the kernel) ends at the same cycle with the same values as over the interpreted one."""
    models = [COUNT, ADDITION, _goal(ADDITION, arg1="three", arg2="four"), _conflicting()]
    models += [_random_model(random.Random(seed), reset_form=seed % 2 == 0) for seed in range(6)]
    for d in models:
        model = mdf_engine.load(copy.deepcopy(d))
        plan = Simulation(model, backend="actr").plan
        runs = {}
        for inner in ("interpreted", "compiled"):
            r = ActrRunner(plan, inner=inner)
            r.run_steps(6, None, None)  # in two calls: the second starts from the first's end
            r.run_steps(30, None, None)
            runs[inner] = r
        want, got = runs["interpreted"], runs["compiled"]
        assert got.graph.is_compiled and got.finished == want.finished
        assert got.evaluations == want.evaluations
        _same(want.outputs(), got.outputs(), "outputs")
        for nd, names in NAMES.items():
            for nm in names:
                _same(want.value(nd, nm), got.value(nd, nm), f"{nd}.{nm}")
        _same(want.goal, got.goal, "goal")
        assert got.order_of_execution == want.order_of_execution


def test_no_model_text_reaches_compiled_code() -> None:
    """The kernels get integer arrays and integers only, and were compiled for those types:
    every string of the model stays in the Python-side symbol table."""
    sim = Simulation(str(WILD / "addition.json"), backend="compiled")
    sim.evaluate(initializer={"goal_input": {}, "dm_input": {}})
    runner = sim.runner
    assert runner.is_compiled
    for a in runner.kernel_arguments():
        assert isinstance(a, int) or (isinstance(a, np.ndarray) and a.dtype == np.int64), a
    from mdf_engine.actr import kernels

    for sig in kernels.cycles.signatures:
        for ty in sig:
            assert str(ty).startswith(("array(int64", "int64", "bool")), ty
    assert "second-goal" in runner.tables.sym.strings  # the text is data, kept in Python


def test_outside_the_layout_runs_interpreted(caplog) -> None:
    """A graph the kernels do not cover runs interpreted, with a log line saying why."""
    odd = copy.deepcopy(COUNT)
    _nodes(odd)["check_termination"]["parameters"]["check_termination"]["args"]["production"] = (
        "check_input"
    )
    _nodes(odd)["goal_buffer"]["output_ports"]["extra"] = {"value": "first_goal"}
    spaced = _goal(COUNT, end="four five")  # two words in one slot: positions shift
    for model, why in ((odd, "goal_buffer"), (spaced, "'four five'")):
        with caplog.at_level(logging.INFO, logger="mdf_engine"):
            sim = _compare(model, n=6, compiled=False)
        assert why in sim.runner.fallback_reason
        assert any(sim.runner.fallback_reason in r.getMessage() for r in caplog.records)


def test_given_inputs_equal_interpreted() -> None:
    """Inputs given by the caller (not fed back): free text in a goal's name, buffer and a
    request's first item, new goal slots (the state widens), variables repeated and negated
    in a request, negated literals, an empty request."""
    inits = [
        {"goal_input": {}, "dm_input": {}},
        {
            "goal_input": {"name": "a b", "ISA": "count-from", "newkey": "x", "other": "y"},
            "dm_input": {"buffer": "x y", "ISA": "number", "number": "two"},
        },
        {
            "goal_input": {f"k{i}": f"v{i}" for i in range(6)},
            "dm_input": {"buffer": "retrieval", "ISA": "=", "number": "=x", "next": "-=x"},
        },
        {"goal_input": {"buffer": "q r"}, "dm_input": {"b": "", "number": "=x", "next": "=x"}},
        {"goal_input": {"count": "nil"}, "dm_input": {"b": "", "ISA": "!number"}},
        {"goal_input": {"count": "=z"}, "dm_input": {"b": "", "ISA": "count-from", "end": "-=q"}},
        {"goal_input": {"count": "three"}, "dm_input": {"b": ""}},
    ]
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(str(WILD / "count.json"), backend=backend)
        runs[backend] = []
        for init in inits:
            sim.evaluate(initializer=copy.deepcopy(init))
            runs[backend].append({(nd, nm): sim.value(nd, nm) for nd in NAMES for nm in NAMES[nd]})
    assert sim.runner.is_compiled
    for t, (w, g) in enumerate(zip(runs["interpreted"], runs["compiled"])):
        _same(w, g, f"call {t}")


def test_bad_inputs_are_mdf_errors() -> None:
    """What the interpreter refuses, the compiled runner refuses (an MDFError naming the
    input); words the kernels cannot read are refused in one line too."""
    path = str(WILD / "count.json")
    for init in ({"goal_input": 0, "dm_input": {}}, {"goal_input": {}}, {"nope": 1}, None):
        for backend in ("interpreted", "compiled"):
            with pytest.raises(MDFError):
                Simulation(path, backend=backend).evaluate(initializer=copy.deepcopy(init))
    sim = Simulation(path, backend="compiled")
    with pytest.raises(MDFError, match="goal_input"):
        sim.evaluate(initializer={"goal_input": {"count": "two words"}, "dm_input": {}})


def test_misfit_chunk_raises_as_interpreted() -> None:
    """A chunk that does not fit its chunk type fails when it is retrieved, with the
    interpreter's message and field path."""
    d = _set(COUNT, "declarative_memory", "chunk_types", {"number": ["number"], "count-from": []})
    errors = {}
    for backend in ("interpreted", "compiled"):
        with pytest.raises(MDFError) as e:
            _cycles(copy.deepcopy(d), backend, 4)
        errors[backend] = str(e.value)
    assert errors["compiled"] == errors["interpreted"]
