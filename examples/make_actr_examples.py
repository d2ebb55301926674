"""Write the two ACT-R example models, examples/actr_count.json and examples/actr_addition.json.

Both are built with :func:`mdf_engine.actr.build_model_dict` (the graph layout of modeci-mdf's
``actr_to_mdf``), so they run in mdf_engine and in modeci-mdf's reference engine alike:

* ``actr_count``: count from two to five by retrieving ``number`` facts (``value``, ``next``);
  six cycles (start, three steps, finish, and the cycle in which nothing fires).
* ``actr_addition``: 3 + 4 by counting: the sum and a counter advance in turn through
  ``count-order`` facts until the counter reaches the second argument; eleven cycles.

Run ``python examples/make_actr_examples.py`` to regenerate them.
"""

from __future__ import annotations

import json
from pathlib import Path

from mdf_engine.actr.builder import build_model_dict

HERE = Path(__file__).resolve().parent

NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def _count() -> dict:
    chunks = [
        {"name": f"n-{a}", "ISA": "number", "value": a, "next": b}
        for a, b in zip(NUMBERS[1:6], NUMBERS[2:7])
    ]
    goal = {
        "name": "count-goal",
        "ISA": "count-goal",
        "from": "two",
        "to": "five",
        "current": "nil",
        "state": "counting",
    }
    productions = [
        {
            "name": "begin",
            "lhs": {"goal": {"ISA": "count-goal", "from": "=n", "current": "nil"}},
            "rhs": {"goal": {"current": "=n"}, "retrieval": {"ISA": "number", "value": "=n"}},
        },
        {
            "name": "step",
            "lhs": {
                "goal": {"ISA": "count-goal", "to": "-=c", "current": "=c"},
                "retrieval": {"ISA": "number", "value": "=c", "next": "=nxt"},
            },
            "rhs": {"goal": {"current": "=nxt"}, "retrieval": {"ISA": "number", "value": "=nxt"}},
        },
        {
            "name": "finish",
            "lhs": {
                "goal": {"ISA": "count-goal", "to": "=c", "current": "=c", "state": "counting"}
            },
            "rhs": {"goal": {"state": "done"}},
        },
    ]
    return {"name": "actr_count", "chunks": chunks, "productions": productions, "goal": goal}


def _addition() -> dict:
    chunks = [
        {"name": f"{a}-{b}", "ISA": "count-order", "first": a, "second": b}
        for a, b in zip(NUMBERS[:-1], NUMBERS[1:])
    ]
    goal = {"name": "add-goal", "ISA": "add", "arg1": "three", "arg2": "four"}
    productions = [
        {
            "name": "initialize-addition",
            "lhs": {"goal": {"ISA": "add", "arg1": "=num1", "sum": "nil"}},
            "rhs": {
                "goal": {"sum": "=num1", "count": "zero"},
                "retrieval": {"ISA": "count-order", "first": "=num1"},
            },
        },
        {
            "name": "increment-sum",
            "lhs": {
                "goal": {"ISA": "add", "arg2": "-=count", "sum": "=sum", "count": "=count"},
                "retrieval": {"ISA": "count-order", "first": "=sum", "second": "=newsum"},
            },
            "rhs": {
                "goal": {"sum": "=newsum"},
                "retrieval": {"ISA": "count-order", "first": "=count"},
            },
        },
        {
            "name": "increment-count",
            "lhs": {
                "goal": {"ISA": "add", "sum": "=sum", "count": "=count"},
                "retrieval": {"ISA": "count-order", "first": "=count", "second": "=newcount"},
            },
            "rhs": {
                "goal": {"count": "=newcount"},
                "retrieval": {"ISA": "count-order", "first": "=sum"},
            },
        },
        {
            "name": "terminate-addition",
            "lhs": {"goal": {"ISA": "add", "arg2": "=num", "sum": "=answer", "count": "=num"}},
            "rhs": {"goal": {"count": "nil"}},
        },
    ]
    types = {"count-order": ["first", "second"], "add": ["arg1", "arg2", "sum", "count"]}
    return {
        "name": "actr_addition",
        "chunks": chunks,
        "productions": productions,
        "goal": goal,
        "chunk_types": types,
    }


#: The descriptions, as keyword arguments of ``build_model``/``build_model_dict``.
COUNT = _count()
ADDITION = _addition()


def count_model_dict() -> dict:
    """Counting from two to five."""
    return build_model_dict(**COUNT)


def addition_model_dict() -> dict:
    """3 + 4 by counting up the sum and a counter in turn."""
    return build_model_dict(**ADDITION)


EXAMPLES = {"actr_count.json": count_model_dict, "actr_addition.json": addition_model_dict}


def main() -> None:
    for file_name, make in EXAMPLES.items():
        path = HERE / file_name
        path.write_text(json.dumps(make(), indent=4) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
