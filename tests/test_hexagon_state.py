"""Hexagon Variable/Assign keep their value across evaluate() calls of one simulation (the op
list: a later reader of the Variable sees what Assign wrote); PPrint logs and passes through."""

import logging

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run
from mdf_engine.model import Graph, InputPort, Model, Node, OutputPort, Parameter


def accumulator() -> Model:
    node = Node(
        id="A",
        input_ports=[InputPort(id="x", shape=(1, 1, 1, 2))],
        parameters=[
            Parameter(
                id="v",
                function="hexagon::Variable",
                args={"values": [[[[0.5, -1.0]]]], "name": "total"},
            ),
            Parameter(id="a", function="hexagon::Assign", args={"variable": "v", "value": "v + x"}),
        ],
        output_ports=[OutputPort(id="v", value="v"), OutputPort(id="assigned", value="a")],
    )
    return Model(id="acc", graphs=[Graph(id="g", nodes=[node])])


def test_variable_assign_state_lives_across_evaluate_calls_of_one_simulation():
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(1, 1, 1, 2)) for _ in range(4)]
    sim = Simulation(accumulator())
    for k, x in enumerate(xs):
        sim.evaluate(initializer={"x": x})
        # the list's meaning: each Assign writes v + x, the next call's Variable reads it
        expected = np.array([[[[0.5, -1.0]]]]) + sum(xs[: k + 1])
        np.testing.assert_allclose(sim.outputs["A"]["assigned"], expected)
        np.testing.assert_allclose(sim.outputs["A"]["v"], expected)
    fresh = Simulation(accumulator())
    fresh.evaluate(initializer={"x": xs[0]})
    np.testing.assert_allclose(fresh.outputs["A"]["v"], np.array([[[[0.5, -1.0]]]]) + xs[0])


def test_assign_needs_a_variable_and_matching_shapes():
    state: dict = {}
    from mdf_engine import op_state

    with op_state.bound(state):
        (v,) = run("Variable", [np.zeros((1, 1, 1, 3))], name="w")
        (out,) = run("Assign", [v, np.ones((1, 1, 1, 3))])
        (again,) = run("Variable", [np.full((1, 1, 1, 3), 7.0)], name="w")
        np.testing.assert_array_equal(again, np.ones((1, 1, 1, 3)))
        with pytest.raises(MDFError, match="must be an output of a hexagon::Variable"):
            run("Assign", [np.zeros((1, 1, 1, 3)), out])
        with pytest.raises(MDFError, match="shape"):
            run("Assign", [v, np.ones((1, 1, 1, 2))])
    with pytest.raises(MDFError, match="need a simulation"):
        run("Variable", [np.zeros(1)], name="w")


@pytest.mark.parametrize(
    "op", ["PPrint_8", "PPrint_32", "PPrint_f", "PPrint_8_d32", "PPrintWithPadding_8_d32"]
)
def test_pprint_logs_and_passes_through(op, caplog):
    x = np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4)
    with caplog.at_level(logging.INFO, logger="mdf_engine.hexagon"):
        (y,) = run(op, [x, np.int32(2), np.int32(1), np.int32(3)])
    np.testing.assert_array_equal(y, x)
    text = caplog.text
    assert op in text and "(1, 2, 3, 4)" in text
    shown = np.array2string(x[:, :, 1:3, :])
    assert shown in text
