"""Corpus: models built with modeci-mdf's Python modelling API, the kinds its documentation and
examples build (chains with standard functions, arrays, states, Newton cooling, a switched RLC
circuit, integrate-and-fire cells and networks, scheduling conditions), saved with its own
``to_json_file``/``to_yaml_file``. The oracle is modeci-mdf's reference engine, driven as the
examples drive it (first ``evaluate()`` without a time increment, then with ``dt``).

Run in the generator venv: ``/work/venvs/wild/bin/python tools/wild/gen_modeci_api.py``.
"""

from __future__ import annotations

import random
import sys

from modeci_mdf.mdf import (
    Condition,
    ConditionSet,
    Edge,
    Graph,
    InputPort,
    Model,
    Node,
    OutputPort,
    Parameter,
    ParameterCondition,
)
from oracle import CORPUS, reference_run, version, write_oracle

OUT = CORPUS / "modeci_api"


def connect(
    g: Graph, a: Node, b: Node, a_port: str | None = None, b_port: str | None = None, weight=None
) -> None:
    sp = a_port or a.output_ports[0].id
    rp = b_port or b.input_ports[0].id
    g.edges.append(
        Edge(
            id=f"{a.id}_{sp}__{b.id}_{rp}",
            sender=a.id,
            sender_port=sp,
            receiver=b.id,
            receiver_port=rp,
            parameters={"weight": weight} if weight is not None else None,
        )
    )


def _model(model: str, graph: str) -> tuple[Model, Graph]:
    """A model ``model`` of one empty graph ``graph``."""
    m = Model(id=model)
    g = Graph(id=graph)
    m.graphs.append(g)
    return m, g


def _level_node(nid: str, level: object) -> Node:
    """A source node ``nid`` whose output ``out_port`` is its parameter ``input_level``."""
    return Node(
        id=nid,
        parameters=[Parameter(id="input_level", value=level)],
        output_ports=[OutputPort(id="out_port", value="input_level")],
    )


def model_chain() -> tuple[Model, dict]:
    """A source node and a processing node using a standard function (linear) and an
    expression with a standard function call inside it (logistic)."""
    m, g = _model("SimpleChain", "simple_chain")
    src = _level_node("input_node", 0.5)
    proc = Node(id="processing_node")
    proc.input_ports.append(InputPort(id="input_port1"))
    proc.parameters += [
        Parameter(id="lin_slope", value=0.5),
        Parameter(id="lin_intercept", value=0),
        Parameter(id="log_gain", value=3),
        Parameter(
            id="linear_1",
            function="linear",
            args={"variable0": "input_port1", "slope": "lin_slope", "intercept": "lin_intercept"},
        ),
        Parameter(
            id="logistic_1",
            function="logistic",
            args={"variable0": "linear_1", "gain": "log_gain", "bias": 0, "offset": 0},
        ),
    ]
    proc.output_ports.append(OutputPort(id="output_1", value="logistic_1"))
    g.nodes += [src, proc]
    connect(g, src, proc, weight=0.6)
    return m, {"steps": 2, "dt": None}


def model_abcd() -> tuple[Model, dict]:
    """Four nodes in a chain, each with a different standard function."""
    m, g = _model("ABCD", "abcd_example")
    inp = _level_node("input0", 0.0)
    spec = [
        ("A", "linear", {"slope": 1.1, "intercept": 1.2}),
        ("B", "logistic", {"gain": 2.1, "bias": 3.2, "offset": 1.2}),
        ("C", "exponential", {"scale": 1.1, "rate": 0.2, "bias": 0.1, "offset": -1.2}),
        ("D", "sin", {"scale": 1.3}),
    ]
    nodes = [inp]
    for nid, fn, kw in spec:
        n = Node(id=nid, input_ports=[InputPort(id="input_port1", shape="(1,)")])
        args = {"variable0": "input_port1"}
        for k, v in kw.items():
            n.parameters.append(Parameter(id=k, value=v))
            args[k] = k
        n.parameters.append(Parameter(id=f"{fn}_func", function=fn, args=args))
        n.output_ports.append(OutputPort(id="output_1", value=f"{fn}_func"))
        nodes.append(n)
    g.nodes += nodes
    for a, b in zip(nodes, nodes[1:]):
        connect(g, a, b)
    return m, {"steps": 1, "dt": None}


def model_arrays() -> tuple[Model, dict]:
    """2-D array parameters, an array weight on an edge and matrix expressions."""
    m, g = _model("Arrays", "array_example")
    a = _level_node("input_node", [[1, 2.0], [3, 4]])
    b = Node(id="middle_node", input_ports=[InputPort(id="input_port1", shape="(2, 2)")])
    b.parameters += [
        Parameter(id="slope", value=0.5),
        Parameter(id="intercept", value=[[0, 1.0], [2, 2]]),
        Parameter(id="linear_1", value="input_port1 * slope + intercept"),
    ]
    b.output_ports.append(OutputPort(id="output_1", value="linear_1"))
    c = Node(id="end_node", input_ports=[InputPort(id="input_port1", shape="(2, 2)")])
    c.parameters += [
        Parameter(id="mat", value=[[1.0, -1.0], [0.5, 2.0]]),
        Parameter(id="prod", value="input_port1 @ mat"),
    ]
    c.output_ports.append(OutputPort(id="output_1", value="prod"))
    g.nodes += [a, b, c]
    connect(g, a, b)
    connect(g, b, c, weight=[[1.0, 2.0], [0.5, 0.25]])
    return m, {"steps": 1, "dt": None}


def model_states() -> tuple[Model, dict]:
    """A counter (value mentioning itself) and a sine oscillator (two time derivatives)."""
    m, g = _model("States", "state_example")
    counter = Node(id="counter_node")
    counter.parameters += [
        Parameter(id="increment", value=1),
        Parameter(id="count", value="count + increment"),
    ]
    counter.output_ports.append(OutputPort(id="out_port", value="count"))
    sine = Node(id="sine_node")
    sine.parameters += [
        Parameter(id="amp", value=3),
        Parameter(id="period", value=0.4),
        Parameter(id="level", default_initial_value=0, time_derivative="6.283185 * rate / period"),
        Parameter(
            id="rate", default_initial_value=1, time_derivative="-1 * 6.283185 * level / period"
        ),
    ]
    sine.output_ports.append(OutputPort(id="out_port", value="amp * level"))
    g.nodes += [counter, sine]
    return m, {"steps": 60, "dt": 0.01, "trace": ["sine_node.out_port", "counter_node.out_port"]}


def model_newton() -> tuple[Model, dict]:
    m, g = _model("NewtonCoolingModel", "cooling_process")
    n = Node(id="cool_node")
    n.parameters += [
        Parameter(id="cooling_coeff", value=0.1),
        Parameter(id="T_a", value=20),
        Parameter(id="T_curr", default_initial_value=90, time_derivative="dT_dt"),
        Parameter(id="dT_dt", default_initial_value=0, value="-cooling_coeff*(T_curr - T_a)"),
    ]
    n.output_ports += [
        OutputPort(id="out_port", value="T_curr"),
        OutputPort(id="out_port2", value="dT_dt"),
    ]
    g.nodes.append(n)
    return m, {"duration": 100, "dt": 0.1, "trace": ["cool_node.out_port"], "trace_every": 50}


def model_switched_rlc() -> tuple[Model, dict]:
    """A source voltage defined only by two conditions on time (no value)."""
    m, g = _model("SwitchedRLC_Circuit", "SwitchedRLC_Circuit")
    n = Node(id="V")
    vs = Parameter(id="Vs")
    vs.conditions.append(ParameterCondition(id="off", test="time<0.5", value="0"))
    vs.conditions.append(ParameterCondition(id="on", test="time>=0.5", value=0.1))
    n.parameters += [
        vs,
        Parameter(id="R", value=100),
        Parameter(id="L", value=1),
        Parameter(id="C", value=1e-3),
        Parameter(id="time", default_initial_value=0, time_derivative="1"),
        Parameter(id="V", default_initial_value=0, time_derivative="i_C /C"),
        Parameter(id="i_R", value="V / R"),
        Parameter(id="i_L", default_initial_value=0, time_derivative="(Vs - V)/L"),
        Parameter(id="i_C", value="i_L-i_R"),
    ]
    n.output_ports += [OutputPort(id="V_out", value="V"), OutputPort(id="i_L_out", value="i_L")]
    g.nodes.append(n)
    return m, {"duration": 2, "dt": 0.001, "trace": ["V.V_out", "V.i_L_out"], "trace_every": 100}


def _iaf_node(nid: str, cells: int) -> Node:
    n = Node(id=nid, input_ports=[InputPort(id="curr_input"), InputPort(id="syn_input")])
    syn = Parameter(id="syn_i", default_initial_value="0", time_derivative="-1 * syn_i")
    syn.conditions.append(ParameterCondition(id="spike_detected", test="syn_input > 0", value="1"))
    v0 = [random.random() * 20 - 70 for _ in range(cells)] if cells > 1 else -60
    spiking = Parameter(id="spiking", default_initial_value="0")
    spiking.conditions += [
        ParameterCondition(id="is_spiking", test="v >= thresh", value="1"),
        ParameterCondition(id="not_spiking", test="v < thresh", value="0"),
    ]
    v = Parameter(
        id="v",
        default_initial_value="v0",
        time_derivative="-1 * (v-erev)/tau + syn_input + curr_input",
    )
    v.conditions.append(ParameterCondition(id="reset", test="v > thresh", value="erev"))
    n.parameters += [
        Parameter(id="syn_tau", value=10),
        syn,
        Parameter(id="v0", value=v0),
        Parameter(id="erev", value=[-70.0] * cells if cells > 1 else -70),
        Parameter(id="tau", value=10.0),
        Parameter(id="thresh", value=[-20.0] * cells if cells > 1 else -20.0),
        spiking,
        v,
    ]
    n.output_ports += [
        OutputPort(id="out_port_v", value="v"),
        OutputPort(id="out_port_spiking", value="spiking"),
    ]
    return n


def _iaf(mid: str, cells: int) -> tuple[Model, dict]:
    random.seed(1234)
    m, g = _model(mid, "iaf_example")
    inp = Node(id="input_node")
    amp = [random.random() * 20 for _ in range(cells)] if cells > 1 else 10
    level = Parameter(id="level", value=0)
    level.conditions += [
        ParameterCondition(
            id="on", test="time > start and time < start + duration", value="amplitude"
        ),
        ParameterCondition(id="off", test="time > start + duration", value="amplitude*0"),
    ]
    inp.parameters += [
        Parameter(id="time", default_initial_value=0, time_derivative="1"),
        Parameter(id="start", value=20),
        Parameter(id="duration", value=60),
        Parameter(id="amplitude", value=amp),
        level,
    ]
    inp.output_ports.append(OutputPort(id="out_port", value="level"))
    pre, post = _iaf_node("pre", cells), _iaf_node("post", cells)
    g.nodes += [inp, pre, post]
    connect(g, inp, pre, "out_port", "curr_input", weight=1)
    connect(g, pre, post, "out_port_spiking", "syn_input", weight=200)
    return m, {
        "duration": 100,
        "dt": 0.1,
        "trace": ["pre.out_port_v", "post.out_port_v", "post.out_port_spiking"],
        "trace_every": 25,
    }


def model_iaf() -> tuple[Model, dict]:
    return _iaf("IAFs", 1)


def model_iaf_net() -> tuple[Model, dict]:
    return _iaf("IAF_net", 6)


def _counter(nid: str, inputs: bool = True) -> Node:
    n = Node(id=nid)
    if inputs:
        n.input_ports.append(InputPort(id="input"))
    n.parameters.append(Parameter(id="count", value="count + 1"))
    n.output_ports.append(OutputPort(id="output", value="count"))
    return n


def _counter_chain(model: str, graph: str) -> tuple[Model, Graph]:
    """Counters A -> B -> C (A without input) in graph ``graph`` of model ``model``."""
    m, g = _model(model, graph)
    a, b, c = _counter("A", False), _counter("B"), _counter("C")
    g.nodes += [a, b, c]
    connect(g, a, b)
    connect(g, b, c)
    return m, g


def model_abc_conditions() -> tuple[Model, dict]:
    m, g = _counter_chain("abc_conditions", "abc_conditions_example")
    g.conditions = ConditionSet(
        node_specific={
            "A": Condition(type="Always"),
            "B": Condition(type="EveryNCalls", dependencies="A", n=2),
            "C": Condition(type="EveryNCalls", dependencies="B", n=3),
        },
        termination={
            "environment_state_update": Condition(type="AfterNCalls", dependencies="C", n=2)
        },
    )
    return m, {"steps": 2, "dt": None}


def model_composite_conditions() -> tuple[Model, dict]:
    m, g = _counter_chain("composite_conditions", "composite_example")
    g.conditions = ConditionSet(
        node_specific={
            "A": Condition(type="Always"),
            "B": Condition(
                type="All",
                dependencies=[
                    Condition(type="AfterNCalls", dependencies="A", n=2),
                    Condition(type="EveryNPasses", n=2),
                ],
            ),
            "C": Condition(
                type="Any",
                dependencies=[
                    Condition(type="AfterNCalls", dependencies="B", n=2),
                    Condition(type="JustRan", dependencies="B"),
                ],
            ),
        },
        termination={
            "environment_state_update": Condition(type="AfterNCalls", dependencies="C", n=3)
        },
    )
    return m, {"steps": 1, "dt": None}


def model_params_funcs() -> tuple[Model, dict]:
    """Parameters of every kind: constants, expressions, standard functions with args, node
    functions (the older list) and a function used inside an expression."""
    m, g = _model("ParametersFunctions", "params_funcs_example")
    n = Node(id="node0")
    n.parameters += [
        Parameter(id="param_fixed_int", value=2),
        Parameter(id="param_fixed_float", value=2.0),
        Parameter(id="param_array_list", value=[1, 2.0]),
        Parameter(id="param_expression", value="param_fixed_int * param_fixed_float"),
        Parameter(id="param_stateful", value="param_stateful + 1"),
        Parameter(
            id="param_function",
            function="linear",
            args={"variable0": "param_fixed_int", "slope": 2, "intercept": 1},
        ),
        Parameter(id="param_time_deriv", default_initial_value=0, time_derivative="1"),
        Parameter(id="param_in_expr", value="math.sin(param_fixed_float) + param_array_list"),
    ]
    n.output_ports += [
        OutputPort(id="out_expr", value="param_expression"),
        OutputPort(id="out_state", value="param_stateful"),
        OutputPort(id="out_func", value="param_function"),
        OutputPort(id="out_deriv", value="param_time_deriv"),
        OutputPort(id="out_sin", value="param_in_expr"),
    ]
    g.nodes.append(n)
    return m, {"steps": 5, "dt": 0.5}


MODELS = [
    model_chain,
    model_abcd,
    model_arrays,
    model_states,
    model_newton,
    model_switched_rlc,
    model_iaf,
    model_iaf_net,
    model_abc_conditions,
    model_composite_conditions,
    model_params_funcs,
]
#: Saved as YAML too (the writer's other format), checked against the same oracle.
YAML_TOO = {"NewtonCoolingModel", "IAFs"}


def steps_of(duration: float, dt: float) -> int:
    n, t = 0, 0.0
    while t <= duration:
        n, t = n + 1, t + dt
    return n


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    only = set(sys.argv[1:])  # model ids to regenerate (default: all)
    for make in MODELS:
        m, run = make()
        if only and m.id not in only:
            continue
        paths = [OUT / f"{m.id}.json"]
        m.to_json_file(str(paths[0]))
        if m.id in YAML_TOO:
            paths.append(OUT / f"{m.id}.yaml")
            m.to_yaml_file(str(paths[1]))
        steps = run.get("steps") or steps_of(run["duration"], run["dt"])
        init = run.get("initializer")
        for path in paths:
            final, traces = reference_run(path, steps, run["dt"], init, run.get("trace"))
            every = run.get("trace_every", 1)
            traces = {k: v[::every] for k, v in traces.items()}
            write_oracle(
                path,
                writer="modeci-mdf Python API",
                writer_version=f"modeci-mdf {version('modeci-mdf')}",
                generator="tools/wild/gen_modeci_api.py",
                protocol="reference",
                steps=steps,
                dt=run["dt"],
                expected=final,
                initializer=init,
                traces={"every": every, **traces} if traces else None,
                rtol=1e-9,
                atol=1e-12,
                note=f"modeci-mdf {version('modeci-mdf')} EvaluableGraph, "
                f"graph-scheduler {version('graph-scheduler')}",
            )
            print(path.name, steps, "steps")


if __name__ == "__main__":
    main()
