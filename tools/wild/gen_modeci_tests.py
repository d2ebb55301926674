"""Corpus: the models modeci-mdf's own tests build (``tests/test_scheduler.py`` and
``tests/test_execution.py`` of the modeci-mdf 0.4.15 source distribution: nested Not
conditions, a Threshold termination, Thresholds with ``indices`` on array values under
``And(..., JustRan)``, a function with arguments that are expressions, with both a function and
a value, functions in any order, condition variations), built here with
modeci-mdf's Python API as those tests build them and saved with its ``to_json_file`` into
``tests/data/wild/modeci_api/`` (``mdftest_*.json``). The oracle is the reference engine run as
the tests run it (one ``evaluate(initializer=...)``: ``A_input`` 0, or ``input`` 1), whose
values the tests assert.

Run in the generator venv: ``/work/venvs/wild/bin/python tools/wild/gen_modeci_tests.py``.
"""

from __future__ import annotations

import numpy as np
from modeci_mdf import mdf
from oracle import CORPUS, reference_run, rel, version, write_oracle

OUT = CORPUS / "modeci_api"
INIT = {"A_input": 0}


def _counter(nid: str, array: bool = False) -> mdf.Node:
    """A node that counts its runs in ``<nid>_param`` (and, with ``array``, in the two-element
    ``A_param_2`` starting at [0, 1], as test_threshold_nonscalar_values builds A)."""
    params = [mdf.Parameter(id=f"{nid}_param", value=f"{nid}_param + 1", default_initial_value=0)]
    out = mdf.OutputPort(id=f"{nid}_output", value=f"{nid}_param")
    if array:
        params.append(
            mdf.Parameter(
                id="A_param_2",
                value="[A_param_2[0] + 1, A_param_2[1] + 1]",
                default_initial_value=np.array([0, 1]),
            )
        )
        out = mdf.OutputPort(id="A_output", value="A_param_2", shape=(2,))
    return mdf.Node(
        id=nid,
        input_ports=[mdf.InputPort(id=f"{nid}_input")],
        parameters=params,
        output_ports=[out],
    )


def _model(mid: str, nodes: list, conditions, edges: list | None = None) -> mdf.Model:
    g = mdf.Graph(id=f"{mid}_graph", nodes=nodes, edges=edges or [], conditions=conditions)
    return mdf.Model(id=mid, graphs=[g])


def nested_conditions() -> mdf.Model:
    a, b, c = _counter("A"), _counter("B"), _counter("C")
    every_b = mdf.Condition(type="EveryNCalls", kwargs={"dependency": "B", "n": 2})
    not_not = mdf.Condition(
        type="Not", kwargs={"condition": mdf.Condition(type="Not", kwargs={"condition": every_b})}
    )
    cs = mdf.ConditionSet(
        node_specific={
            "B": mdf.Condition(type="EveryNCalls", kwargs={"dependency": "A", "n": 2}),
            "C": not_not,
        },
        termination={
            "environment_state_update": mdf.Condition(
                type="AfterNCalls", kwargs={"dependency": "C", "n": 2}
            )
        },
    )
    return _model("mdftest_nested_conditions", [a, b, c], cs)


def threshold() -> mdf.Model:
    cs = mdf.ConditionSet(
        termination={
            "environment_state_update": mdf.Condition(
                type="Threshold", dependency="A", parameter="A_param", threshold=5, comparator=">="
            )
        }
    )
    return _model("mdftest_threshold", [_counter("A")], cs)


def threshold_nonscalar(dep: str, param: str, index: int) -> mdf.Model:
    a = _counter("A", array=True)
    b = mdf.Node(
        id="B",
        input_ports=[mdf.InputPort(id="B_input", shape=(2,))],
        output_ports=[mdf.OutputPort(id="B_output", value="B_input", shape=(2,))],
    )
    edge = mdf.Edge(
        id="A->B", sender="A", receiver="B", sender_port="A_output", receiver_port="B_input"
    )
    cond = mdf.Condition(
        type="And",
        dependencies=[
            mdf.Condition(
                type="Threshold",
                dependency=dep,
                parameter=param,
                threshold=5,
                comparator=">=",
                indices=(index,),
            ),
            mdf.Condition(type="JustRan", dependency="B"),
        ],
    )
    cs = mdf.ConditionSet(termination={"environment_state_update": cond})
    return _model(f"mdftest_threshold_{param}_{index}", [a, b], cs, [edge])


#: test_execution.py's (function, value) variants, and a selection of its argument variants
FUNCTION_VALUE = [
    ("linear", None),
    ("linear", "2 * slope * variable0 + intercept"),  # both given: the function wins
    (None, "2 * slope * variable0 + intercept"),
    (None, "slope + intercept"),
]
ARGS = {
    "input_slope": {"slope": "2 * input", "intercept": 4, "variable0": "input"},
    "slope_intercept": {"slope": 2, "intercept": "2 * slope", "variable0": "input"},
    "math_sqrt": {"slope": "math.sqrt(4)", "intercept": 4, "variable0": 1},
    "numpy_sqrt": {"slope": "numpy.sqrt(4)", "intercept": 4, "variable0": 1},
}


def function_variation(k: int, args_id: str) -> mdf.Model:
    function, value = FUNCTION_VALUE[k]
    f = mdf.Function(id="f", args=ARGS[args_id], function=function, value=value)
    node = mdf.Node(
        id="N",
        input_ports=[mdf.InputPort(id="input")],
        functions=[f],
        output_ports=[mdf.OutputPort(id="output", value="f")],
    )
    return _model(f"mdftest_function_{k}_{args_id}", [node], None)


def functions_in_order(kind: str) -> mdf.Model:
    """test_dependency_in_function_value (f's value is the function g declared after it) and
    test_available_arg_in_function_value (f's value is its own argument g)."""
    fs = (
        [mdf.Function(id="f", value="g"), mdf.Function(id="g", value="1")]
        if kind == "dependency"
        else [mdf.Function(id="f", args={"g": 1}, value="g")]
    )
    node = mdf.Node(
        id="N",
        input_ports=[mdf.InputPort(id="input")],
        functions=fs,
        output_ports=[mdf.OutputPort(id="output", value="f")],
    )
    return _model(f"mdftest_{kind}_in_function_value", [node], None)


def condition_variation(kind: str) -> mdf.Model:
    cs = (
        mdf.ConditionSet(node_specific={"A": mdf.Condition(type="Always")})
        if kind == "always"
        else mdf.ConditionSet(
            termination={
                "environment_state_update": mdf.Condition(type="AfterNCalls", dependency="A", n=5)
            }
        )
    )
    return _model(f"mdftest_condition_{kind}", [_counter("A")], cs)


MODELS = [
    *(
        (lambda k=k, a=a: function_variation(k, a))
        for k in range(4)
        for a in ("input_slope", "slope_intercept")
    ),
    lambda: function_variation(0, "math_sqrt"),
    lambda: function_variation(2, "numpy_sqrt"),
    lambda: functions_in_order("dependency"),
    lambda: functions_in_order("available_arg"),
    lambda: condition_variation("always"),
    lambda: condition_variation("after5"),
    nested_conditions,
    threshold,
    *(
        (lambda d=d, p=p, i=i: threshold_nonscalar(d, p, i))
        for d, p in (("A", "A_output"), ("A", "A_param_2"), ("B", "B_output"))
        for i in (0, 1)
    ),
]


def main() -> None:
    for make in MODELS:
        m = make()
        init = (
            {"input": 1}
            if m.id.startswith(("mdftest_function", "mdftest_dep", "mdftest_av"))
            else INIT
        )
        path = OUT / f"{m.id}.json"
        m.to_json_file(str(path))
        final, _ = reference_run(path, 1, None, initializer=init)
        write_oracle(
            path,
            writer="modeci-mdf Python API",
            writer_version=f"modeci-mdf {version('modeci-mdf')}",
            generator=rel(__file__),
            protocol="reference",
            steps=1,
            dt=None,
            initializer=init,
            expected=final,
            note="a model modeci-mdf 0.4.15's tests/test_scheduler.py builds, run as it runs "
            "it (its asserted values are the oracle's)",
        )
        print(path.name, final)


if __name__ == "__main__":
    main()
