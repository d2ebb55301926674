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


def test_variable_zero_length_initialiser_gives_zeros_of_the_output_element_type():
    """The op list: a zero-length const (element size 0, nonzero shape) sets the Variable to
    'zero' in the output record's element type and the const's shape; for element size 1 the
    zero is the record's zero_offset, for wider types an actual 0. Assign then writes it."""
    from mdf_engine import op_state

    shapes = [(1, 2, 3, 4), (2, 1, 1, 5), (1, 1, 3, 2)]
    consts = [np.zeros(sh, dtype="V0") for sh in shapes]
    assert all(c.nbytes == 0 and c.size > 0 for c in consts)
    dtypes, offsets = ["uint8", "int32", "int8"], [128, 77, -3]
    with op_state.bound({}):
        outs = run("Variable", consts, name="z", output_dtypes=dtypes, zero_offsets=offsets)
        for out, sh, dt, zero in zip(outs, shapes, dtypes, [128, 0, -3]):
            np.testing.assert_array_equal(out, np.full(sh, zero, np.dtype(dt)))
            assert out.dtype == np.dtype(dt)
        new = np.arange(10, dtype=np.int32).reshape(2, 1, 1, 5)
        run("Assign", [outs[1], new])
        np.testing.assert_array_equal(run("Variable", consts, name="z")[1], new)
        mixed = run(
            "Variable",
            [np.full((1, 1, 1, 2), 3.0), consts[0]],
            name="m",
            output_dtypes=["float32", "uint8"],
        )
        np.testing.assert_array_equal(mixed[0], np.full((1, 1, 1, 2), 3.0))
        np.testing.assert_array_equal(mixed[1], np.zeros(shapes[0], np.uint8))
        with pytest.raises(MDFError, match="output_dtypes"):
            run("Variable", consts[:1], name="n")
        with pytest.raises(MDFError, match="output_dtypes"):
            run("Variable", consts[:1], name="n", output_dtypes=["complex"])
        with pytest.raises(MDFError, match="zero_offsets"):
            run("Variable", consts[:1], name="n", output_dtypes=["uint8"], zero_offsets=[300])


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
