"""mdf_engine.compat's EvaluableGraph / EvaluableNode / main against modeci-mdf's
``execution_engine`` (the oracle, run in the same test on the same model): the same values in
``enodes``, the same ``scheduler.execution_list``, ``order_of_execution``, ``root_nodes`` and
``output_enodes``, with the usage patterns of the reference's own tests and example scripts."""

from __future__ import annotations

import contextlib
import io
import json
import random

import numpy as np
import pytest
from conftest import EXAMPLES, SHARED_MODELS
from mdf_dicts import logistic_model
from pnl_runs import assert_port_matches, trial_inputs
from reference_engine import model_files

from mdf_engine import compat
from mdf_engine.errors import MDFError

ee = pytest.importorskip("modeci_mdf.execution_engine")
mdf = pytest.importorskip("modeci_mdf.mdf")
graph_scheduler = pytest.importorskip("graph_scheduler")


def quiet(fn, *args, **kwargs):
    """Call the reference (which prints a lot) with its output swallowed."""
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


def same(ours, ref, what=""):
    if ref is None:
        assert ours is None, what
        return
    try:
        r = np.asarray(ref, dtype=float)
    except (TypeError, ValueError):
        assert ours == ref, what
        return
    np.testing.assert_allclose(
        np.asarray(ours, dtype=float), r, rtol=1e-6, atol=1e-12, err_msg=what
    )


def assert_same_graph_state(ours, ref):
    """Every node's parameters, functions and outputs, and the scheduler's record."""
    assert list(ours.enodes) == list(ref.enodes)
    for nid, ren in ref.enodes.items():
        oen = ours.enodes[nid]
        assert list(oen.evaluable_inputs) == list(ren.evaluable_inputs)
        assert oen.node.id == ren.node.id
        for kind in ("evaluable_parameters", "evaluable_functions", "evaluable_outputs"):
            rd, od = getattr(ren, kind), getattr(oen, kind)
            assert list(od) == list(rd), (nid, kind)  # same ids in the same order
            for k, e in rd.items():
                same(od[k].curr_value, e.curr_value, f"{nid}.{k}")
        same_outputs = oen.get_output(), ren.get_output()
        if not isinstance(same_outputs[1], tuple):
            same(*same_outputs, f"{nid}.get_output()")
    sets = execution_sets(ref)
    assert execution_sets(ours) == sets
    # order_of_execution runs through the time steps; inside one, the reference's order is
    # Python set order (arbitrary), so each step's slice is compared as a set
    for eg in (ours, ref):
        order, pos = list(eg.order_of_execution), 0
        for s in sets:
            assert set(order[pos : pos + len(s)]) == s
            pos += len(s)
        assert pos == len(order)


def execution_sets(eg):
    el = eg.scheduler.execution_list
    assert list(el) == [None]
    return [{n.id for n in s} for s in el[None]]


def _files():
    files = [p for p in model_files(EXAMPLES) if not p.name.startswith("actr_")]
    params = [pytest.param(p, id=p.name) for p in files]
    shared = [p for p in model_files(SHARED_MODELS)]
    if shared:
        params += [pytest.param(p, id=f"shared/{p.name}") for p in shared]
    else:
        params.append(
            pytest.param(
                None,
                id="shared-models",
                marks=pytest.mark.skip(reason=f"{SHARED_MODELS} is absent"),
            )
        )
    return params


@pytest.mark.parametrize("path", _files())
def test_main_and_stepping_match_reference(path):
    """main() on a file (the reference tests' pattern), then steps with a time increment (the
    example scripts' loop), comparing everything after each call."""
    ref = quiet(ee.main, str(path))
    ours = compat.main(str(path))
    assert_same_graph_state(ours, ref)
    assert ours.root_nodes == ref.root_nodes
    assert [e.node.id for e in ours.output_enodes] == [e.node.id for e in ref.output_enodes]
    for _ in range(4):
        quiet(ref.evaluate, time_increment=0.01)
        ours.evaluate(time_increment=0.01)
        assert_same_graph_state(ours, ref)


def test_modeci_graph_object_and_our_graph():
    """EvaluableGraph(graph=...) of a modeci-mdf Graph (the nodes in execution_list are the
    caller's own objects) and of the same model loaded by mdf_engine."""
    from modeci_mdf.utils import load_mdf

    import mdf_engine

    path = (
        str(SHARED_MODELS / "abc_conditions.json")
        if SHARED_MODELS.exists()
        else str(EXAMPLES / "conditions_threshold.json")
    )
    g = load_mdf(path).graphs[0]
    ref = quiet(ee.EvaluableGraph, graph=g, verbose=False)
    ours = compat.EvaluableGraph(graph=g, verbose=False)
    ours_typed = compat.EvaluableGraph(mdf_engine.load(path).graphs[0])
    for _ in range(2):
        quiet(ref.evaluate)
        ours.evaluate()
        ours_typed.evaluate()
        assert_same_graph_state(ours, ref)
        assert_same_graph_state(ours_typed, ref)
    ids = {id(n) for n in g.nodes}
    assert all(id(n) in ids for s in ours.scheduler.execution_list[None] for n in s)
    assert ours.graph is g and ours.enodes[g.nodes[0].id].node is g.nodes[0]


def test_scheduler_execution_list_with_empty_passes_and_clock():
    """Passes in which nothing runs are empty sets in the reference's execution_list."""
    a = mdf.Node(
        id="A",
        parameters=[mdf.Parameter(id="p", value="p + 1", default_initial_value=0)],
        output_ports=[mdf.OutputPort(id="out", value="p")],
    )
    b = mdf.Node(
        id="B",
        input_ports=[mdf.InputPort(id="x")],
        output_ports=[mdf.OutputPort(id="out", value="x * 2")],
    )
    g = mdf.Graph(
        id="g",
        nodes=[a, b],
        edges=[mdf.Edge(id="e", sender="A", sender_port="out", receiver="B", receiver_port="x")],
        conditions=mdf.ConditionSet(
            node_specific={
                "A": mdf.Condition(type="AtPass", n=0),
                "B": mdf.Condition(type="AfterPass", n=2),
            },
            termination={"environment_state_update": mdf.Condition(type="AfterNPasses", n=4)},
        ),
    )
    ref = quiet(ee.EvaluableGraph, g)
    ours = compat.EvaluableGraph(g)
    for _ in range(2):
        quiet(ref.evaluate)
        ours.evaluate()
        assert_same_graph_state(ours, ref)
    assert set() in execution_sets(ref)
    assert (
        ours.scheduler.get_clock(None).simple_time.environment_state_update
        == ref.scheduler.get_clock(None).simple_time.environment_state_update
    )


def create_model(nodes, edges=(), conditions=None):
    """The reference suite's ``create_model`` fixture."""
    return mdf.Model(
        id="m",
        graphs=[mdf.Graph(id="g", nodes=list(nodes), edges=list(edges), conditions=conditions)],
    )


@pytest.mark.parametrize(
    "function, value",
    [
        ("linear", None),
        ("linear", "2 * slope * variable0 + intercept"),  # function wins
        (None, "2 * slope * variable0 + intercept"),
        (None, "slope + intercept"),
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        {"slope": 2, "intercept": 4, "variable0": 1},
        {"slope": 2, "intercept": 4, "variable0": "input"},
        {"slope": "2 * input", "intercept": 4, "variable0": "input"},
        {"slope": 2, "intercept": "2 * slope", "variable0": "input"},
        {"slope": "math.sqrt(4)", "intercept": 4, "variable0": 1},
        {"slope": "numpy.sqrt(4)", "intercept": 4, "variable0": 1},
    ],
)
def test_single_function_variations(args, function, value):
    """The reference's test_execution.py pattern: one node, one function, an initializer."""

    def build():
        return create_model(
            [
                mdf.Node(
                    id="N",
                    input_ports=[mdf.InputPort(id="input")],
                    functions=[
                        mdf.Function(id="f", args=dict(args), function=function, value=value)
                    ],
                    output_ports=[mdf.OutputPort(id="output", value="f")],
                )
            ]
        )

    ref = quiet(ee.EvaluableGraph, build().graphs[0])
    quiet(ref.evaluate, initializer={"input": 1})
    ours = compat.EvaluableGraph(build().graphs[0])
    ours.evaluate(initializer={"input": 1})
    assert_same_graph_state(ours, ref)
    assert (
        ours.enodes["N"].evaluable_outputs["output"].curr_value
        == ref.enodes["N"].evaluable_outputs["output"].curr_value
    )


def _counter(nid):
    return mdf.Node(
        id=nid,
        input_ports=[mdf.InputPort(id=f"{nid}_input")],
        parameters=[
            mdf.Parameter(id=f"{nid}_param", value=f"{nid}_param + 1", default_initial_value=0)
        ],
        output_ports=[mdf.OutputPort(id=f"{nid}_output", value=f"{nid}_param")],
    )


@pytest.mark.parametrize(
    "node_specific, termination",
    [
        ({"A": mdf.Condition(type="Always")}, None),
        (
            None,
            {
                graph_scheduler.TimeScale.ENVIRONMENT_STATE_UPDATE: mdf.Condition(
                    type="AfterNCalls", dependency="A", n=5
                )
            },
        ),
        (
            None,
            {
                "environment_state_update": mdf.Condition(
                    type="Threshold",
                    dependency="A",
                    parameter="A_param",
                    threshold=5,
                    comparator=">=",
                )
            },
        ),
    ],
)
def test_condition_variations(node_specific, termination):
    """test_execution.py / test_scheduler.py: TimeScale keys, string keys, Threshold."""

    def build():
        return create_model(
            [_counter("A")],
            conditions=mdf.ConditionSet(node_specific=node_specific, termination=termination),
        )

    ref = quiet(ee.EvaluableGraph, build().graphs[0])
    ours = compat.EvaluableGraph(build().graphs[0])
    for _ in range(2):
        quiet(ref.evaluate, initializer={"A_input": 0})
        ours.evaluate(initializer={"A_input": 0})
        assert_same_graph_state(ours, ref)


def test_nested_conditions_with_node_objects_and_round_trip():
    """test_scheduler.py's nested Not(Not(EveryNCalls(B, 2))) with node *objects* as
    dependencies, directly and after to_dict/from_dict round trips."""
    a, b, c = _counter("A"), _counter("B"), _counter("C")
    m = create_model(
        [a, b, c],
        conditions=mdf.ConditionSet(
            node_specific={
                "B": mdf.Condition(type="EveryNCalls", kwargs={"dependency": a, "n": 2}),
                "C": mdf.Condition(
                    type="Not",
                    kwargs={
                        "condition": mdf.Condition(
                            type="Not",
                            kwargs={
                                "condition": mdf.Condition(
                                    type="EveryNCalls", kwargs={"dependency": b, "n": 2}
                                )
                            },
                        )
                    },
                ),
            },
            termination={
                graph_scheduler.TimeScale.ENVIRONMENT_STATE_UPDATE: mdf.Condition(
                    type="AfterNCalls", kwargs={"dependency": c, "n": 2}
                )
            },
        ),
    )
    m2 = mdf.Model.from_dict(m.to_dict())
    for model in (m, m2):
        ref = quiet(ee.EvaluableGraph, model.graphs[0])
        quiet(ref.evaluate, initializer={"A_input": 0})
        ours = compat.EvaluableGraph(model.graphs[0])
        ours.evaluate(initializer={"A_input": 0})
        assert_same_graph_state(ours, ref)


@pytest.mark.parametrize("dep, param", [("A", "A_output"), ("A", "A_param_2")])
@pytest.mark.parametrize("indices", [(0,), (1,)])
def test_threshold_nonscalar_values(dep, param, indices):
    """test_scheduler.py's And(Threshold(..., indices), JustRan(B)) termination. (Its third
    case, a Threshold on B's input port, never ends in the reference, so it is not run.)"""
    a = mdf.Node(
        id="A",
        input_ports=[mdf.InputPort(id="A_input")],
        parameters=[
            mdf.Parameter(id="A_param", value="A_param + 1", default_initial_value=0),
            mdf.Parameter(
                id="A_param_2",
                value="[A_param_2[0] + 1, A_param_2[1] + 1]",
                default_initial_value=np.array([0, 1]),
            ),
        ],
        output_ports=[mdf.OutputPort(id="A_output", value="A_param_2", shape=(2,))],
    )
    b = mdf.Node(
        id="B",
        input_ports=[mdf.InputPort(id="B_input", shape=(2,))],
        output_ports=[mdf.OutputPort(id="B_output", value="B_input", shape=(2,))],
    )
    m = create_model(
        [a, b],
        edges=[
            mdf.Edge(
                id="A->B", sender="A", receiver="B", sender_port="A_output", receiver_port="B_input"
            )
        ],
        conditions=mdf.ConditionSet(
            termination={
                graph_scheduler.TimeScale.ENVIRONMENT_STATE_UPDATE: mdf.Condition(
                    type="And",
                    dependencies=[
                        mdf.Condition(
                            type="Threshold",
                            dependency=dep,
                            parameter=param,
                            threshold=5,
                            comparator=">=",
                            indices=indices,
                        ),
                        mdf.Condition(type="JustRan", dependency="B"),
                    ],
                )
            }
        ),
    )
    ref = quiet(ee.EvaluableGraph, m.graphs[0])
    quiet(ref.evaluate, initializer={"A_input": 0})
    ours = compat.EvaluableGraph(m.graphs[0])
    ours.evaluate(initializer={"A_input": 0})
    assert_same_graph_state(ours, ref)


def test_initializer_keys_that_are_not_ports_are_ignored_and_inputs_can_be_sent():
    """The pytorch-import tests pass every weight in the initializer: only input port ids
    count. Values sent with evaluable_inputs[...].set_input_value reach the next evaluate."""
    path = str(EXAMPLES / "weighted_reduce.json")
    from modeci_mdf.utils import load_mdf

    data = json.loads((EXAMPLES / "weighted_reduce.json").read_text())
    g = load_mdf(path).graphs[0]
    ports = [(n.id, p.id) for n in g.nodes for p in n.input_ports]
    init = {ports[0][1]: 3.0, "not_a_port": 1.0, "weight_of_something": np.ones(3)}
    ref = quiet(ee.EvaluableGraph, g)
    quiet(ref.evaluate, initializer=init)
    ours = compat.EvaluableGraph(load_mdf(path).graphs[0])
    ours.evaluate(initializer=init)
    assert_same_graph_state(ours, ref)
    assert data  # the file is the one both engines read
    nid, pid = ports[-1]
    quiet(ref.enodes[nid].evaluable_inputs[pid].set_input_value, 2.5)
    ours.enodes[nid].evaluable_inputs[pid].set_input_value(2.5)
    quiet(ref.evaluate)
    ours.evaluate()
    assert_same_graph_state(ours, ref)


def test_actr_driver_loop():
    """examples/ACT-R/run_example.py's loop: evaluate with goal/retrieval initializers until
    check_termination says so."""
    from modeci_mdf.utils import load_mdf

    path = str(EXAMPLES / "actr_count.json")
    results = []
    for make, run in ((ee.EvaluableGraph, quiet), (compat.EvaluableGraph, lambda f, **k: f(**k))):
        random.seed(0)
        eg = run(make, graph=load_mdf(path).graphs[0], verbose=False)
        goals, term, goal, retrieval = [], False, {}, {}
        while not term and len(goals) < 30:
            run(eg.evaluate, initializer={"goal_input": goal, "dm_input": retrieval})
            out = eg.enodes["fire_production"].evaluable_outputs
            term = eg.enodes["check_termination"].evaluable_outputs["check_output"].curr_value
            goal = out["fire_prod_output_to_goal"].curr_value
            retrieval = out["fire_prod_output_to_retrieval"].curr_value
            goals.append(dict(eg.enodes["goal_buffer"].evaluable_outputs["goal_output"].curr_value))
        results.append((goals, execution_sets(eg)))
    assert results[1] == results[0]
    assert len(results[0][0]) > 1


@pytest.mark.parametrize("ours_made_by", ["modeci", "ours"])
def test_standalone_node_matches_reference(ours_made_by):
    """EvaluableNode(node).evaluate() with inputs sent through evaluable_inputs, for a
    modeci-mdf Node and for the same node made with mdf_engine's model classes."""
    from mdf_engine import model as ours_model

    def build(m=mdf):
        return m.Node(
            id="N",
            input_ports=[m.InputPort(id="x", reduce="add")],
            functions=[
                m.Function(
                    id="f", function="linear", args={"variable0": "x", "slope": "k", "intercept": 1}
                )
            ],
            parameters=[
                m.Parameter(id="k", value=2.0),
                m.Parameter(id="s", default_initial_value=0, time_derivative="f"),
                m.Parameter(id="c", value="c + 1", default_initial_value=0),
            ],
            output_ports=[m.OutputPort(id="o", value="f + s + c")],
        )

    ref = ee.EvaluableNode(build())
    ours = compat.EvaluableNode(build(mdf if ours_made_by == "modeci" else ours_model))
    for dt, sends in ((None, [1.0]), (0.1, [2.0, 3.0]), (0.1, [])):
        for v in sends:
            quiet(ref.evaluable_inputs["x"].set_input_value, v)
            ours.evaluable_inputs["x"].set_input_value(v)
        quiet(ref.evaluate, time_increment=dt)
        ours.evaluate(time_increment=dt)
        for kind in ("evaluable_parameters", "evaluable_functions", "evaluable_outputs"):
            for k, e in getattr(ref, kind).items():
                same(getattr(ours, kind)[k].curr_value, e.curr_value, k)
        same(ours.get_output(), ref.get_output())
        same(ours.get_output("o"), ref.get_output("o"))


def test_errors_are_one_line():
    g = create_model([_counter("A")]).graphs[0]
    eg = compat.EvaluableGraph(g)
    with pytest.raises(MDFError, match="tensorflow"):
        eg.evaluate(array_format=compat.FORMAT_TENSORFLOW)
    with pytest.raises(MDFError, match="needs a Graph"):
        compat.EvaluableGraph({"nodes": []})
    eg.evaluate()
    with pytest.raises(MDFError, match="graph's evaluate"):
        eg.enodes["A"].evaluate()
    with pytest.raises(MDFError, match="cannot be set"):
        eg.enodes["A"].evaluable_parameters["A_param"].curr_value = 3
    # the reference reads any other array_format as numpy (scripts pass e.g. the builtin format)
    eg.evaluate(array_format=format)
    assert eg.enodes["A"].evaluable_parameters["A_param"].curr_value == 2


def test_onnx_importer_pattern():
    """tests/interfaces/onnx's pattern: onnx_to_mdf, EvaluableGraph(graph=...),
    evaluate(initializer={input: x}), output_enodes[0].get_output(). The reference computes
    ONNX ops in float32 and returns float64; ours keeps the model's float32."""
    onnx = pytest.importorskip("onnx")
    from modeci_mdf.interfaces.onnx import onnx_to_mdf
    from onnx import TensorProto, helper

    x_info = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y_info = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["X"], ["R"], name="relu1"),
        helper.make_node("Mul", ["R", "R"], ["M"], name="mul1"),
        helper.make_node("Add", ["M", "R"], ["Y"], name="add1"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x_info], [y_info]),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    onnx.checker.check_model(model)
    graph = quiet(onnx_to_mdf, model).graphs[0]
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    ref = quiet(ee.EvaluableGraph, graph=graph, verbose=False)
    quiet(ref.evaluate, initializer={"X": x})
    ours = compat.EvaluableGraph(graph=graph, verbose=False)
    ours.evaluate(initializer={"X": x})
    np.testing.assert_allclose(
        ours.output_enodes[0].get_output(), ref.output_enodes[0].get_output(), rtol=1e-6
    )
    assert execution_sets(ours) == execution_sets(ref)
    assert ours.root_nodes == ref.root_nodes


@pytest.mark.parametrize("path", _files())
def test_construction_matches_reference(path):
    """Before anything runs, every input port holds what the reference's does (its
    default_value, zeros of its shape, or None under add/multiply); root nodes, output nodes
    and ordered_edges are the reference's; evaluate_edge sends as the reference's does."""
    from modeci_mdf.utils import load_mdf

    import mdf_engine

    ref = quiet(ee.EvaluableGraph, quiet(load_mdf, str(path)).graphs[0])
    ours = compat.EvaluableGraph(mdf_engine.load(str(path)).graphs[0])
    for nid, ren in ref.enodes.items():
        for pid, ei in ren.evaluable_inputs.items():
            o = ours.enodes[nid].evaluable_inputs[pid].curr_value
            same(o, ei.curr_value, f"{nid}.{pid}")
            assert np.shape(o) == np.shape(ei.curr_value)
    assert ours.root_nodes == ref.root_nodes
    assert [n.id for n in ours.output_nodes] == [n.id for n in ref.output_nodes]
    assert [e.id for e in ours.ordered_edges] == [e.id for e in ref.ordered_edges]
    if ref.graph.edges:
        quiet(ref.evaluate)
        ours.evaluate()
        edge = ref.graph.edges[-1]
        quiet(ref.evaluate_edge, edge)
        ours.evaluate_edge(edge)
        quiet(ref.evaluate)
        ours.evaluate()
        assert_same_graph_state(ours, ref)


def test_sending_to_a_node_whose_id_holds_a_dot():
    """PyTorch-exported node ids hold dots (``/layer1/layer1.0/Conv``): values sent with
    set_input_value still reach them."""

    def build():
        n = mdf.Node(
            id="/l1/l1.0/Mul",
            input_ports=[mdf.InputPort(id="x")],
            output_ports=[mdf.OutputPort(id="o", value="x * 2")],
        )
        return create_model([n]).graphs[0]

    ref, ours = quiet(ee.EvaluableGraph, build()), compat.EvaluableGraph(build())
    for eg, run in ((ref, quiet), (ours, lambda f, *a, **k: f(*a, **k))):
        run(eg.enodes["/l1/l1.0/Mul"].evaluable_inputs["x"].set_input_value, np.array([1.5]))
        run(eg.evaluate)
    assert_same_graph_state(ours, ref)


@pytest.mark.parametrize("name", ["linear_chain", "fhn"])
def test_graph_of_a_psyneulink_model_against_psyneulink_runs(name):
    """EvaluableGraph(graph, model=model) of PsyNeuLink exports, trial by trial equal to
    PsyNeuLink's stored runs (the reference engine cannot load these files)."""
    import mdf_engine

    data = EXAMPLES.parent / "tests" / "data" / "pnl"
    exp = json.loads((data / f"{name}.expected.json").read_text())
    model = mdf_engine.load(str(data / f"{name}.json"))
    eg = compat.EvaluableGraph(model.graphs[0], model=model)
    for t, trial in enumerate(exp["trials"]):
        eg.evaluate(initializer=trial_inputs(exp, t))
        outs = {
            p: e.curr_value for en in eg.enodes.values() for p, e in en.evaluable_outputs.items()
        }
        for port, want in trial.items():
            assert_port_matches(outs[port], want, f"{name} trial {t} {port}")
    with pytest.raises(MDFError, match="not one of the model's graphs"):
        compat.EvaluableGraph(mdf_engine.load(str(data / f"{name}.json")).graphs[0], model=model)


def test_model_context_decides_function_versions(tmp_path):
    """With ``model=``, a PsyNeuLink file's ``logistic`` is PsyNeuLink's (offset added outside
    the exponential, PsyNeuLink's formula); main() passes the file's model."""
    import mdf_engine

    x, gain, bias, offset = 0.5, 2.0, 0.1, 0.3
    data = logistic_model("PsyNeuLink v0.21.0.0", x, gain, bias, offset)
    model = mdf_engine.load(data)
    eg = compat.EvaluableGraph(model.graphs[0], model=model)
    eg.evaluate()
    pnl = 1 / (1 + np.exp(-gain * (x + bias))) + offset
    assert float(eg.enodes["n"].get_output()) == pytest.approx(pnl, rel=1e-12)
    path = tmp_path / "pnl_logistic.json"
    path.write_text(json.dumps(data))
    assert float(compat.main(str(path)).enodes["n"].get_output()) == pytest.approx(pnl, rel=1e-12)
