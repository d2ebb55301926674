"""ACT-R: our functions against modeci-mdf's (the oracle), and our ACT-R models in both engines.

Every comparison calls the reference function on deep copies of the inputs (it mutates them) and
checks that ours leaves its inputs untouched.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdf_engine.actr import builder
from mdf_engine.actr import functions as ours
from mdf_engine.errors import MDFError
from mdf_engine.registry import REGISTRY

ref = pytest.importorskip("modeci_mdf.functions.actr")
PatternException = pytest.importorskip("modeci_mdf.functions.actr.ccm.pattern").PatternException

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MODELS = ["actr_count.json", "actr_addition.json"]
NAMES = [
    "chunk_to_string",
    "pattern_to_string",
    "change_goal",
    "retrieve_chunk",
    "match_production",
    "pattern_matching_function",
    "update_buffer",
    "update_goal",
    "update_retrieval",
    "conflict_resolution_function",
    "check_termination",
]


def call_both(name, *args):
    """(ours, reference) results of function ``name``; asserts ours did not touch its inputs."""
    before = copy.deepcopy(args)
    mine = getattr(ours, name)(*args)
    assert args == before, f"{name} mutated its inputs"
    theirs = getattr(ref, name)(*copy.deepcopy(args))
    return mine, theirs


def load_json(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def model_parts(name: str) -> dict:
    """Chunks, types, productions and first goal of an example JSON."""
    (m,) = load_json(name).values()
    (g,) = m["graphs"].values()
    n = g["nodes"]
    return {
        "chunks": n["declarative_memory"]["parameters"]["chunks"]["value"],
        "types": n["declarative_memory"]["parameters"]["chunk_types"]["value"],
        "productions": n["procedural_memory"]["parameters"]["productions"]["value"],
        "goal": n["goal_buffer"]["parameters"]["first_goal"]["value"],
    }


# ------------------------------------------------------------------------------------------
# Reference engine driver and a direct driver (our functions chained by hand, no engine)
# ------------------------------------------------------------------------------------------


def run_reference_engine(path: Path, max_cycles: int = 50) -> list[dict]:
    from modeci_mdf.execution_engine import EvaluableGraph
    from modeci_mdf.utils import load_mdf

    random.seed(0)
    goals = []
    with contextlib.redirect_stdout(io.StringIO()):
        eg = EvaluableGraph(load_mdf(str(path)).graphs[0], verbose=False)

        def out(node, port):
            return eg.enodes[node].evaluable_outputs[port].curr_value

        goal, retrieval = {}, {}
        for _ in range(max_cycles):
            eg.evaluate(initializer={"goal_input": goal, "dm_input": retrieval})
            goals.append(copy.deepcopy(out("goal_buffer", "goal_output")))
            if out("check_termination", "check_output"):
                return goals
            goal = out("fire_production", "fire_prod_output_to_goal")
            retrieval = out("fire_production", "fire_prod_output_to_retrieval")
    raise AssertionError("reference run did not terminate")


def run_direct(parts: dict, max_cycles: int = 50) -> list[dict]:
    """The cycle of the graph written out with our functions (one-step lag of goal_state)."""
    state = parts["goal"]
    goal_in, request = {}, {}
    goals = []
    for _ in range(max_cycles):
        state = ours.change_goal(goal_in, state)
        retrieved = ours.retrieve_chunk(request, parts["chunks"], parts["types"])
        matched = ours.pattern_matching_function(parts["productions"], state, retrieved)
        fired = ours.conflict_resolution_function(matched)
        goals.append(state)
        if ours.check_termination(fired):
            return goals
        goal_in, request = ours.update_goal(fired), ours.update_retrieval(fired)
    raise AssertionError("direct run did not terminate")


@pytest.fixture(scope="module")
def reference_goals() -> dict[str, list[dict]]:
    return {name: run_reference_engine(EXAMPLES / name) for name in MODELS}


# ------------------------------------------------------------------------------------------
# Registry
# ------------------------------------------------------------------------------------------


def test_registered_with_reference_argument_names():
    from modeci_mdf.functions.standard import mdf_functions

    assert set(REGISTRY.names("actr")) == set(NAMES)
    for name in NAMES:
        sch = REGISTRY.lookup(name)
        assert sch.namespace == "actr" and sch.python_only
        assert list(sch.inputs) == mdf_functions[name]["arguments"], name


def test_registry_call_binds_by_name():
    sch = REGISTRY.lookup("change_goal")
    inputs, attrs = sch.bind(
        {"curr_goal": {"ISA": "g", "a": "x"}, "pattern": {"buffer": "goal", "a": "y"}}
    )
    assert sch.call(inputs, attrs) == ({"ISA": "g", "a": "y"},)
    sch = REGISTRY.lookup("conflict_resolution_function")
    assert sch.call([[]], {"seed": 3}) == ({},)


# ------------------------------------------------------------------------------------------
# Functions against the reference, on the inputs the example models produce
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_functions_along_example_runs(name):
    """Replay every call the graph makes, comparing each function with the reference."""
    parts = model_parts(name)
    state, goal_in, request = parts["goal"], {}, {}
    for _ in range(50):
        state, r = call_both("change_goal", goal_in, state)
        assert state == r
        retrieved, r = call_both("retrieve_chunk", request, parts["chunks"], parts["types"])
        assert retrieved == r
        matched, r = call_both("pattern_matching_function", parts["productions"], state, retrieved)
        assert matched == r
        fired, r = call_both("conflict_resolution_function", matched)
        assert fired == r
        done, r = call_both("check_termination", fired)
        assert done is r
        if done:
            break
        for fn in ("update_goal", "update_retrieval"):
            mine, r = call_both(fn, fired)
            assert mine == r
        goal_in, request = ours.update_goal(fired), ours.update_retrieval(fired)
    else:
        raise AssertionError("did not terminate")


@pytest.mark.parametrize("name", MODELS)
def test_match_production_and_strings(name):
    from modeci_mdf.functions.actr.ccm.buffer import Chunk

    parts = model_parts(name)
    for chunk in parts["chunks"] + [parts["goal"]]:
        mine, r = call_both("chunk_to_string", chunk)
        assert mine == r
    for goal in [parts["goal"]] + [dict(parts["goal"], **{k: "nil"}) for k in parts["goal"]]:
        for retrieval in [None] + parts["chunks"]:
            for prod in parts["productions"]:
                for p in prod["lhs"] + prod["rhs"]:
                    mine, r = call_both("pattern_to_string", p)
                    assert mine == r
                ctx = {"goal": goal, "retrieval": retrieval}
                mine = ours.match_production(prod, ctx)
                ref_ctx = {
                    "goal": Chunk(ref.chunk_to_string(goal)),
                    "retrieval": None
                    if retrieval is None
                    else Chunk(ref.chunk_to_string(retrieval)),
                }
                assert mine == ref.match_production(copy.deepcopy(prod), ref_ctx)


def test_change_goal_edge_cases():
    for goal in (0, 0.0):
        mine, r = call_both("change_goal", {"buffer": "goal", "a": "b"}, goal)
        assert mine == r == {}
    mine, r = call_both("change_goal", {}, {"ISA": "t", "a": "x"})
    assert mine == r
    mine, r = call_both("change_goal", {"buffer": "goal", "new": "z"}, {"ISA": "t", "a": "x"})
    assert mine == r and list(mine) == list(r)
    with pytest.raises(MDFError, match="curr_goal"):
        ours.change_goal({}, "not a goal")


def test_update_buffer_edge_cases():
    prod = {
        "name": "p",
        "lhs": [],
        "bindings": {"x": "one", "goal": "G"},
        "rhs": [
            {"buffer": "goal", "a": "=x", "b": "x", "c": "-=x", "d": "y"},
            {"buffer": "retrieval", "ISA": "n", "v": "=x"},
            {"buffer": "goal", "a": "=x", "e": "=nope"},
        ],
    }
    for buffer in ("goal", "retrieval", "imaginal"):
        mine, r = call_both("update_buffer", prod, buffer)
        assert mine == r
    mine, r = call_both("update_buffer", {}, "goal")
    assert mine == r == {}
    with pytest.raises(MDFError, match="bindings"):
        ours.update_goal({"name": "p", "lhs": [], "rhs": [{"buffer": "goal", "a": "=x"}]})


def test_check_termination():
    for x in ({}, {"name": "p"}, [], 0):
        mine, r = call_both("check_termination", x)
        assert bool(mine) == bool(r)


def test_conflict_resolution_seeded():
    cands = [{"name": f"p{i}", "bindings": {"x": str(i)}} for i in range(5)]
    for k in (0, 1):
        mine, r = call_both("conflict_resolution_function", cands[:k])
        assert mine == r
    picks = {ours.conflict_resolution_function(cands, seed=s)["name"] for s in range(40)}
    assert picks <= {p["name"] for p in cands} and len(picks) > 1
    assert ours.conflict_resolution_function(cands, seed=7) == ours.conflict_resolution_function(
        copy.deepcopy(cands), seed=7
    )


# ------------------------------------------------------------------------------------------
# The pattern language, property-tested against the reference on small vocabularies
# ------------------------------------------------------------------------------------------

WORDS = ["a", "b", "nil"]
PATTERN_VALUES = WORDS + [
    "=x",
    "=y",
    "-=x",
    "-=y",
    "=",
    "!a",
    "?",
    "b.c",
    "=x-1",
    "2:a",
    "1:=x",
    "=x!b",
    "s.t:a",
]
CHUNK_WORDS = WORDS + ["k:a", "2:b"]
TYPES = {"t": ["s1", "s2", "s3"], "u": ["s1", "s2"]}


@st.composite
def chunks(draw, named=True):
    isa = draw(st.sampled_from(sorted(TYPES)))
    n = draw(st.integers(0, len(TYPES[isa])))
    c = {"name": "c"} if named else {}
    c["ISA"] = isa
    for s in TYPES[isa][:n]:
        c[s] = draw(st.sampled_from(CHUNK_WORDS))
    return c


@st.composite
def patterns(draw, buffer):
    p = {"buffer": buffer, "ISA": draw(st.sampled_from(sorted(TYPES) + ["=x", "="]))}
    for s in TYPES["t"][: draw(st.integers(0, 3))]:
        p[s] = draw(st.sampled_from(PATTERN_VALUES))
    return p


@settings(max_examples=300, deadline=None)
@given(pattern=patterns("retrieval"), dm=st.lists(chunks(), max_size=5))
def test_retrieve_chunk_property(pattern, dm):
    try:
        expected = ref.retrieve_chunk(copy.deepcopy(pattern), copy.deepcopy(dm), TYPES)
    except (KeyError, IndexError, PatternException):
        with pytest.raises(MDFError):
            ours.retrieve_chunk(pattern, dm, TYPES)
        return
    mine, _ = call_both("retrieve_chunk", pattern, dm, TYPES)
    assert mine == expected


@settings(max_examples=300, deadline=None)
@given(
    lhs=st.lists(st.sampled_from(["goal", "retrieval"]).flatmap(patterns), max_size=3),
    goal=chunks(),
    retrieval=st.one_of(st.just({}), chunks()),
)
def test_pattern_matching_property(lhs, goal, retrieval):
    prods = [{"name": "p", "lhs": lhs, "rhs": []}, {"name": "q", "lhs": lhs[:1], "rhs": []}]
    try:
        expected = ref.pattern_matching_function(copy.deepcopy(prods), goal, retrieval)
    except PatternException:
        with pytest.raises(MDFError):
            ours.pattern_matching_function(prods, goal, retrieval)
        return
    mine, _ = call_both("pattern_matching_function", prods, goal, retrieval)
    assert mine == expected


def test_pattern_syntax_errors_are_mdf_errors():
    for bad in ("a,b", "s1:", "s1:a b"):
        with pytest.raises(MDFError):
            ours.retrieve_chunk({"buffer": "r", "v": bad}, [{"ISA": "t"}], TYPES)
    with pytest.raises(MDFError, match="strings"):
        ours.chunk_to_string({"ISA": "t", "s1": 3})


# ------------------------------------------------------------------------------------------
# Builder
# ------------------------------------------------------------------------------------------


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "make_actr_examples", EXAMPLES / "make_actr_examples.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_files_are_generated_by_the_script():
    script = _load_script()
    for file_name, make in script.EXAMPLES.items():
        assert load_json(file_name) == json.loads(json.dumps(make())), file_name


def test_builder_layout_matches_actr_to_mdf():
    """Same nodes, ports, edges and conditions as modeci-mdf's ACT-R base graph."""
    from modeci_mdf.interfaces.actr.importer import build_model as ref_base

    with contextlib.redirect_stdout(io.StringIO()):
        base = ref_base().to_dict()
    (rm,) = base.values()
    (rg,) = rm["graphs"].values()
    (om,) = load_json("actr_count.json").values()
    (og,) = om["graphs"].values()
    assert og["edges"] == rg["edges"]
    assert og["conditions"] == rg["conditions"]
    assert list(og["nodes"]) == list(rg["nodes"])
    for nid, rn in rg["nodes"].items():
        on = og["nodes"][nid]
        for part in ("input_ports", "output_ports", "parameters"):
            assert list(on.get(part, {})) == list(rn.get(part, {})), (nid, part)


def test_builder_normalizes_to_positional_layout():
    dm, types, pm, goal = builder.normalize(
        chunks=[{"name": "c", "ISA": "t", "s3": "a", "s1": "b"}],
        productions=[
            {
                "name": "p",
                "lhs": {"goal": {"ISA": "t", "s2": "=v"}},
                "rhs": {"retrieval": {"ISA": "t", "s2": "=v"}, "goal": {"s1": "=v"}},
            }
        ],
        goal="c",
        chunk_types={"t": ["s1", "s2", "s3"]},
    )
    assert list(dm[0].items()) == [
        ("name", "c"),
        ("ISA", "t"),
        ("s1", "b"),
        ("s2", "nil"),
        ("s3", "a"),
    ]
    assert goal == dm[0]
    assert list(pm[0]["lhs"][0].values()) == ["goal", "t", "=s1", "=v", "=s3"]
    assert pm[0]["rhs"][0] == {"buffer": "retrieval", "ISA": "t", "s1": "=", "s2": "=v"}


def test_retrieval_request_by_a_later_slot():
    """A request naming only the second slot matches that slot, in both implementations."""
    dm, types, pm, _ = builder.normalize(
        chunks=[{"ISA": "n", "v": "one", "next": "two"}, {"ISA": "n", "v": "two", "next": "one"}],
        productions=[
            {
                "name": "p",
                "lhs": {"goal": {"ISA": "n"}},
                "rhs": {"retrieval": {"ISA": "n", "next": "one"}},
            }
        ],
        goal={"ISA": "n"},
    )
    request = pm[0]["rhs"][0]
    mine, r = call_both("retrieve_chunk", request, dm, types)
    assert mine == r == {"ISA": "n", "v": "two", "next": "one"}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"chunk_types": {"t": ["s1"]}, "goal": {"ISA": "t", "s9": "a"}}, "no slot 's9'"),
        (
            {
                "productions": [
                    {
                        "name": "p",
                        "lhs": {"goal": {"ISA": "t"}},
                        "rhs": {"retrieval": {"ISA": "t", "s7": "a"}},
                    }
                ]
            },
            "no slot 's7'",
        ),
        (
            {
                "chunk_types": {"t": ["s1"], "u": []},
                "productions": [{"name": "p", "lhs": {}, "rhs": {"goal": {"ISA": "u"}}}],
            },
            "cannot become",
        ),
        ({"chunks": [{"ISA": "t", "s1": "a b"}], "goal": {"ISA": "t"}}, "without spaces"),
        (
            {"productions": [{"name": "p", "lhs": {"imaginal": {"ISA": "t"}}, "rhs": {}}]},
            "unknown buffer",
        ),
        (
            {"productions": [{"name": "p", "lhs": {"goal": {"ISA": "t", "s1": "a,b"}}, "rhs": {}}]},
            "cannot read",
        ),
        ({"productions": [{"name": "p", "lhs": {"goal": {"s1": "a"}}, "rhs": {}}]}, "ISA"),
        ({"goal": "missing"}, "names no chunk"),
    ],
)
def test_builder_errors(kwargs, match):
    args = {
        "chunks": [{"name": "c", "ISA": "t", "s1": "a"}],
        "productions": [],
        "goal": "c",
        **kwargs,
    }
    with pytest.raises(MDFError, match=match):
        builder.build_model_dict("m", **args)


# ------------------------------------------------------------------------------------------
# Models: reference engine, direct chaining, our engine
# ------------------------------------------------------------------------------------------


def test_examples_compute_what_they_should(reference_goals):
    script = _load_script()
    count = reference_goals["actr_count.json"]
    assert [g["current"] for g in count[1:5]] == script.NUMBERS[2:6]
    assert count[-1]["state"] == "done" and len(count) == 6
    add = reference_goals["actr_addition.json"]
    assert add[-1]["sum"] == script.NUMBERS[3 + 4] and len(add) == 2 + 2 * 4 + 1


@pytest.mark.parametrize("name", MODELS)
def test_direct_chain_matches_reference_engine(name, reference_goals):
    assert run_direct(model_parts(name)) == reference_goals[name]


@pytest.mark.parametrize("name", MODELS)
def test_our_engine_matches_reference_engine(name, reference_goals):
    """Same goal after every cycle and the same number of cycles, from the JSON file."""
    assert builder.run_model(str(EXAMPLES / name)) == reference_goals[name]


def test_our_engine_on_built_model(reference_goals):
    script = _load_script()
    model = builder.build_model(**script.ADDITION)
    assert builder.run_model(model) == reference_goals["actr_addition.json"]
    assert (
        builder.run_model(builder.build_model_dict(**script.COUNT))
        == reference_goals["actr_count.json"]
    )
    with pytest.raises(MDFError, match="did not terminate within 3 cycles"):
        builder.run_model(model, max_cycles=3)


COUNT_LISP = """(chunk-type number value next)
(chunk-type count-goal from to current state)

(add-dm
{dm}
(count-goal ISA count-goal from two to five current nil state counting)

(goal-focus count-goal)

(P begin
=goal>
ISA count-goal
from =n
current nil
==>
=goal>
ISA count-goal
current =n
+retrieval>
ISA number
value =n
)

(P step
=goal>
ISA count-goal
- to =c
current =c
=retrieval>
ISA number
value =c
next =nxt
==>
=goal>
ISA count-goal
current =nxt
+retrieval>
ISA number
value =nxt
)

(P finish
=goal>
ISA count-goal
to =c
current =c
state counting
==>
=goal>
ISA count-goal
state done
)
"""


def test_builder_agrees_with_actr_to_mdf(tmp_path, reference_goals):
    """The count model written in ACT-R's Lisp syntax and imported by modeci-mdf's actr_to_mdf
    runs in the reference engine exactly like our builder's version."""
    from modeci_mdf.interfaces.actr import actr_to_mdf

    script = _load_script()
    dm = "\n".join(
        f"({c['name']} ISA number value {c['value']} next {c['next']})"
        for c in script.COUNT["chunks"]
    )
    lisp = tmp_path / "count.lisp"
    lisp.write_text(COUNT_LISP.format(dm=dm))
    with contextlib.redirect_stdout(io.StringIO()):
        actr_to_mdf(str(lisp))
    assert run_reference_engine(tmp_path / "count.json") == reference_goals["actr_count.json"]
