"""Write the bundled example models of examples/ with mdf_engine's Python modelling API.

Each function below builds one :class:`mdf_engine.model.Model`; :func:`main` saves them all
(JSON, two as YAML). Every model also runs in modeci-mdf's reference engine (expressions use
``math.``/``numpy.`` prefixes, ONNX values are exact in float32), and
tests/test_reference_equivalence.py checks that both engines agree on every file here.

* ``states_counter_oscillator.json``: a counter (a parameter that mentions itself) and a sine
  oscillator (two coupled ``time_derivative`` states), plus a node summing both.
* ``damped_spring.yaml``: a mass on a damped spring, x' = v, v' = -(k x + c v) / m.
* ``reset_counter.yaml``: a counter reset to zero by a parameter condition, feeding an
  accumulator.
* ``arrays_matrix_edge.json``: a vector sent along an edge whose weight is a matrix (numpy
  broadcasting), summed by rows at the receiver, and a node multiplying by a weight matrix.
* ``weighted_reduce.json``: three senders into one ``reduce: add`` port and two into a
  ``reduce: multiply`` port, every edge weighted.
* ``fitzhugh_nagumo.json``: the FitzHugh-Nagumo neuron (V' = V - V^3/3 - W + I,
  W' = (V + a - b W) / tau) driven by a stimulus node.
* ``iaf_network.json``: leaky integrate-and-fire cells as array parameters with a threshold
  reset (parameter conditions), driven by an input node through a weighted edge, and a second
  population driven by the first's spikes through a weight matrix.
* ``conditions_threshold.json``: scheduling conditions: ``EveryNCalls`` nodes and a
  termination that combines ``Threshold`` with ``AfterNCalls``.
* ``standard_functions.json``: linear, logistic, exponential, sin, cos, MatMul and Relu from
  the MDF standard functions, as ``function`` + ``args``.
* ``onnx_functions.json``: ``onnx::MatMul``, ``onnx::Add`` and ``onnx::Relu`` (a one-layer
  network), with integer-valued data so that float32 (the reference's ONNX path) is exact.

Run ``python examples/make_examples.py`` to regenerate the files.
"""

from __future__ import annotations

from pathlib import Path

import mdf_engine
from mdf_engine.model import (
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

HERE = Path(__file__).resolve().parent


def _edge(
    sender: str,
    receiver: str,
    sender_port: str = "out",
    receiver_port: str = "inp",
    weight=None,
    id: str | None = None,
) -> Edge:
    return Edge(
        id=id or f"{sender}_{receiver}_{receiver_port}",
        sender=sender,
        receiver=receiver,
        sender_port=sender_port,
        receiver_port=receiver_port,
        parameters=None if weight is None else {"weight": weight},
    )


def states_counter_oscillator() -> Model:
    counter = Node(
        id="counter",
        parameters=[
            Parameter(id="increment", value=2),
            Parameter(id="count", value="count + increment"),
        ],
        output_ports=[OutputPort(id="out", value="count")],
    )
    oscillator = Node(
        id="oscillator",
        parameters=[
            Parameter(id="amplitude", value=1.5),
            Parameter(id="frequency", value=0.8),
            Parameter(
                id="level",
                default_initial_value=0.0,
                time_derivative="2 * math.pi * frequency * rate",
            ),
            Parameter(
                id="rate",
                default_initial_value=1.0,
                time_derivative="-2 * math.pi * frequency * level",
            ),
        ],
        output_ports=[OutputPort(id="out", value="amplitude * level")],
    )
    total = Node(
        id="total",
        input_ports=[InputPort(id="count_in"), InputPort(id="wave_in")],
        parameters=[Parameter(id="value", value="0.01 * count_in + wave_in")],
        output_ports=[OutputPort(id="out", value="value")],
    )
    graph = Graph(
        id="states_graph",
        nodes=[counter, oscillator, total],
        edges=[
            _edge("counter", "total", receiver_port="count_in"),
            _edge("oscillator", "total", receiver_port="wave_in"),
        ],
    )
    return Model(id="states_counter_oscillator", graphs=[graph])


def damped_spring() -> Model:
    spring = Node(
        id="spring",
        parameters=[
            Parameter(id="k", value=40.0),
            Parameter(id="c", value=1.2),
            Parameter(id="m", value=0.5),
            Parameter(id="x", default_initial_value=1.0, time_derivative="v"),
            Parameter(id="v", default_initial_value=0.0, time_derivative="-(k * x + c * v) / m"),
            Parameter(id="energy", value="0.5 * m * v ** 2 + 0.5 * k * x ** 2"),
        ],
        output_ports=[
            OutputPort(id="position", value="x"),
            OutputPort(id="velocity", value="v"),
            OutputPort(id="energy_out", value="energy"),
        ],
    )
    return Model(id="damped_spring", graphs=[Graph(id="spring_graph", nodes=[spring])])


def reset_counter() -> Model:
    counter = Node(
        id="counter",
        parameters=[
            Parameter(
                id="count",
                value="count + 1",
                conditions=[ParameterCondition(id="reset", test="count >= 4", value=0)],
            )
        ],
        output_ports=[OutputPort(id="out", value="count")],
    )
    accumulator = Node(
        id="accumulator",
        input_ports=[InputPort(id="inp")],
        parameters=[
            Parameter(id="total", value="total + inp"),
            Parameter(id="peak", value="numpy.maximum(peak, inp)"),
        ],
        output_ports=[OutputPort(id="out", value="total"), OutputPort(id="peak_out", value="peak")],
    )
    graph = Graph(
        id="reset_graph", nodes=[counter, accumulator], edges=[_edge("counter", "accumulator")]
    )
    return Model(id="reset_counter", graphs=[graph])


def arrays_matrix_edge() -> Model:
    source = Node(
        id="source",
        parameters=[
            Parameter(id="base", value=[1.0, -2.0, 0.5]),
            Parameter(id="phase", value="phase + 0.25"),
            Parameter(id="signal", value="base * numpy.cos(phase)"),
        ],
        output_ports=[OutputPort(id="out", value="signal")],
    )
    rows = Node(
        id="rows",
        input_ports=[InputPort(id="inp", shape=(2, 3))],
        parameters=[Parameter(id="summed", value="numpy.sum(inp, axis=1)")],
        output_ports=[OutputPort(id="out", value="summed")],
    )
    layer = Node(
        id="layer",
        input_ports=[InputPort(id="inp", shape=(2,))],
        parameters=[
            Parameter(id="W", value=[[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]]),
            Parameter(id="b", value=[0.1, 0.2, 0.3]),
            Parameter(id="activity", value="numpy.tanh(W @ inp + b)"),
        ],
        output_ports=[
            OutputPort(id="out", value="activity"),
            OutputPort(id="norm", value="numpy.sqrt(numpy.sum(activity ** 2))"),
        ],
    )
    edges = [
        _edge("source", "rows", weight=[[1.0, 0.5, -1.0], [0.0, 2.0, 1.5]]),
        _edge("rows", "layer"),
    ]
    graph = Graph(id="arrays_graph", nodes=[source, rows, layer], edges=edges)
    return Model(id="arrays_matrix_edge", graphs=[graph])


def weighted_reduce() -> Model:
    def src(i: int, start: float, step: float) -> Node:
        return Node(
            id=f"src{i}",
            parameters=[Parameter(id="x", default_initial_value=start, value=f"x + {step}")],
            output_ports=[OutputPort(id="out", value="x")],
        )

    sink = Node(
        id="sink",
        input_ports=[
            InputPort(id="sum_in", reduce="add"),
            InputPort(id="prod_in", reduce="multiply"),
        ],
        parameters=[Parameter(id="combined", value="sum_in - 0.1 * prod_in")],
        output_ports=[
            OutputPort(id="sum_out", value="sum_in"),
            OutputPort(id="prod_out", value="prod_in"),
            OutputPort(id="out", value="combined"),
        ],
    )
    edges = [
        _edge("src1", "sink", receiver_port="sum_in", weight=0.5),
        _edge("src2", "sink", receiver_port="sum_in", weight=-2.0),
        _edge("src3", "sink", receiver_port="sum_in", weight=3.0),
        _edge("src1", "sink", receiver_port="prod_in", weight=1.5),
        _edge("src2", "sink", receiver_port="prod_in", weight=0.25),
    ]
    graph = Graph(
        id="reduce_graph",
        nodes=[src(1, 1.0, 0.5), src(2, -1.0, 0.25), src(3, 2.0, -0.125), sink],
        edges=edges,
    )
    return Model(id="weighted_reduce", graphs=[graph])


def fitzhugh_nagumo() -> Model:
    stimulus = Node(
        id="stimulus",
        parameters=[
            Parameter(id="amplitude", value=0.5),
            Parameter(id="t", default_initial_value=0.0, time_derivative="1"),
            Parameter(id="current", value="amplitude * (1 + 0.5 * math.sin(0.3 * t))"),
        ],
        output_ports=[OutputPort(id="out", value="current")],
    )
    neuron = Node(
        id="fn_neuron",
        input_ports=[InputPort(id="I", shape=())],
        parameters=[
            Parameter(id="a", value=0.7),
            Parameter(id="b", value=0.8),
            Parameter(id="tau", value=12.5),
            Parameter(id="V", default_initial_value=-1.0, time_derivative="V - V ** 3 / 3 - W + I"),
            Parameter(id="W", default_initial_value=1.0, time_derivative="(V + a - b * W) / tau"),
        ],
        output_ports=[OutputPort(id="V_out", value="V"), OutputPort(id="W_out", value="W")],
    )
    graph = Graph(
        id="fitzhugh_nagumo_graph",
        nodes=[stimulus, neuron],
        edges=[_edge("stimulus", "fn_neuron", receiver_port="I", weight=1.2)],
    )
    return Model(id="fitzhugh_nagumo", graphs=[graph])


def iaf_network() -> Model:
    drive = Node(
        id="drive",
        parameters=[
            Parameter(id="level", value=[1.0, 1.5, 2.0, 2.5]),
            Parameter(id="t", default_initial_value=0.0, time_derivative="1"),
            Parameter(id="current", value="level * (1 + 0.2 * numpy.sin(5 * t))"),
        ],
        output_ports=[OutputPort(id="out", value="current")],
    )

    def population(id: str, n: int, tau: float, current: str, ports: dict) -> Node:
        zeros = [0.0] * n
        return Node(
            id=id,
            input_ports=[InputPort(id=k, shape=v) for k, v in ports.items()],
            parameters=[
                Parameter(id="tau", value=tau),
                Parameter(id="R", value=1.0),
                Parameter(id="thresh", value=1.0),
                Parameter(id="v_reset", value=-0.1),
                Parameter(id="current", value=current),
                Parameter(
                    id="v",
                    default_initial_value=zeros,
                    time_derivative="(-v + R * current) / tau",
                    conditions=[ParameterCondition(id="reset", test="v > thresh", value="v_reset")],
                ),
                Parameter(id="spiking", value="numpy.where(v > thresh, 1.0, 0.0)"),
                Parameter(
                    id="spike_count", default_initial_value=zeros, value="spike_count + spiking"
                ),
            ],
            output_ports=[
                OutputPort(id="spikes", value="spiking"),
                OutputPort(id="v_out", value="v"),
                OutputPort(id="count_out", value="spike_count"),
            ],
        )

    layer1 = population("layer1", 4, 0.05, "inp", {"inp": (4,)})
    layer2 = population(
        "layer2",
        2,
        0.02,
        "numpy.sum(inp, axis=1) + numpy.sum(syn, axis=1)",
        {"inp": (2, 4), "syn": (2, 4)},
    )
    w12 = [[4.0, 0.0, 3.0, 2.0], [0.0, 5.0, 2.5, 3.0]]
    edges = [
        _edge("drive", "layer1", weight=[1.2, 1.0, 0.9, 0.8]),
        _edge("drive", "layer2", weight=[[0.2, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.3]]),
        _edge("layer1", "layer2", sender_port="spikes", receiver_port="syn", weight=w12),
    ]
    graph = Graph(id="iaf_graph", nodes=[drive, layer1, layer2], edges=edges)
    return Model(id="iaf_network", graphs=[graph])


def conditions_threshold() -> Model:
    a = Node(
        id="A",
        parameters=[
            Parameter(
                id="count",
                value="count + 1",
                default_initial_value=0,
                conditions=[ParameterCondition(id="wrap", test="count >= 5", value=0)],
            )
        ],
        output_ports=[OutputPort(id="out", value="count")],
    )
    b = Node(
        id="B",
        input_ports=[InputPort(id="inp")],
        parameters=[Parameter(id="total", value="total + inp")],
        output_ports=[OutputPort(id="out", value="total")],
    )
    c = Node(
        id="C",
        input_ports=[InputPort(id="inp")],
        parameters=[Parameter(id="calls", value="calls + 1"), Parameter(id="last", value="inp")],
        output_ports=[OutputPort(id="out", value="last * 10 + calls")],
    )
    conditions = ConditionSet(
        node_specific={
            "A": Condition(type="Always"),
            "B": Condition(type="EveryNCalls", kwargs={"dependencies": "A", "n": 2}),
            "C": Condition(type="EveryNCalls", kwargs={"dependencies": "B", "n": 2}),
        },
        termination={
            "environment_state_update": Condition(
                type="All",
                kwargs={
                    "dependencies": [
                        Condition(
                            type="Threshold",
                            kwargs={
                                "dependency": "A",
                                "parameter": "count",
                                "threshold": 5,
                                "comparator": ">=",
                            },
                        ),
                        Condition(type="AfterNCalls", kwargs={"dependency": "A", "n": 2}),
                    ]
                },
            ),
        },
    )
    graph = Graph(
        id="conditions_graph",
        nodes=[a, b, c],
        edges=[_edge("A", "B"), _edge("B", "C")],
        conditions=conditions,
    )
    return Model(id="conditions_threshold", graphs=[graph])


def standard_functions() -> Model:
    inp = Node(
        id="input",
        parameters=[
            Parameter(id="phase", value="phase + 0.1"),
            Parameter(id="base", value=[-1.5, -0.25, 0.5, 2.0]),
            Parameter(id="x", value="base * numpy.cos(phase)"),
        ],
        output_ports=[OutputPort(id="out", value="x")],
    )

    def fnode(id: str, function: str, args: dict) -> Node:
        return Node(
            id=id,
            input_ports=[InputPort(id="inp", shape=(4,))],
            parameters=[Parameter(id="result", function=function, args=args)],
            output_ports=[OutputPort(id="out", value="result")],
        )

    nodes = [
        inp,
        fnode("linear", "linear", {"variable0": "inp", "slope": 2.5, "intercept": -0.5}),
        fnode(
            "logistic", "logistic", {"variable0": "inp", "gain": 2.0, "bias": 0.5, "offset": 0.25}
        ),
        fnode(
            "exponential",
            "exponential",
            {"variable0": "inp", "scale": 0.5, "rate": 0.8, "bias": -0.2, "offset": 1.0},
        ),
        fnode("sine", "sin", {"variable0": "inp", "scale": 1.5}),
        fnode("cosine", "cos", {"variable0": "inp", "scale": -0.75}),
        fnode("relu", "Relu", {"A": "inp"}),
    ]
    matmul = Node(
        id="matmul",
        input_ports=[InputPort(id="inp", shape=(4,))],
        parameters=[
            Parameter(id="W", value=[[1.0, 0.5], [-0.5, 2.0], [0.25, 0.0], [1.0, -1.0]]),
            Parameter(id="result", function="MatMul", args={"A": "inp", "B": "W"}),
        ],
        output_ports=[OutputPort(id="out", value="result")],
    )
    nodes.append(matmul)
    edges = [_edge("input", n.id) for n in nodes[1:]]
    graph = Graph(id="standard_functions_graph", nodes=nodes, edges=edges)
    return Model(id="standard_functions", graphs=[graph])


def onnx_functions() -> Model:
    inp = Node(
        id="input",
        parameters=[
            Parameter(id="step", value="step + 1"),
            Parameter(id="base", value=[[1.0, -2.0, 3.0]]),
            Parameter(id="x", value="base * (step % 4 - 1)"),
        ],
        output_ports=[OutputPort(id="out", value="x")],
    )
    dense = Node(
        id="dense",
        input_ports=[InputPort(id="inp", shape=(1, 3))],
        parameters=[
            Parameter(id="weights", value=[[1.0, -1.0], [2.0, 0.5], [-1.0, 3.0]]),
            Parameter(id="bias", value=[[0.5, -4.0]]),
            Parameter(id="product", function="onnx::MatMul", args={"A": "inp", "B": "weights"}),
            Parameter(id="summed", function="onnx::Add", args={"A": "product", "B": "bias"}),
            Parameter(id="activity", function="onnx::Relu", args={"X": "summed"}),
        ],
        output_ports=[OutputPort(id="out", value="activity"), OutputPort(id="pre", value="summed")],
    )
    graph = Graph(id="onnx_graph", nodes=[inp, dense], edges=[_edge("input", "dense")])
    return Model(id="onnx_functions", graphs=[graph], onnx_opset_version=15)


#: file name -> builder
EXAMPLES = {
    "states_counter_oscillator.json": states_counter_oscillator,
    "damped_spring.yaml": damped_spring,
    "reset_counter.yaml": reset_counter,
    "arrays_matrix_edge.json": arrays_matrix_edge,
    "weighted_reduce.json": weighted_reduce,
    "fitzhugh_nagumo.json": fitzhugh_nagumo,
    "iaf_network.json": iaf_network,
    "conditions_threshold.json": conditions_threshold,
    "standard_functions.json": standard_functions,
    "onnx_functions.json": onnx_functions,
}


def main() -> None:
    for name, build in EXAMPLES.items():
        mdf_engine.save(build(), HERE / name)
        print(f"wrote examples/{name}")


if __name__ == "__main__":
    main()
