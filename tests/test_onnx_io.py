"""MDF -> ONNX export and the round trip back: exported models pass the ONNX checker, run in
onnxruntime (the oracle) with our engine's outputs, and import back into models with the same
outputs; stateful models are refused naming the parameter; the ``mdf export``/``mdf import``
commands."""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from conftest import EXAMPLES, SHARED_MODELS  # noqa: E402

import mdf_engine  # noqa: E402
from mdf_engine.cli import main  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.model import (  # noqa: E402
    Edge,
    Function,
    Graph,
    InputPort,
    Model,
    Node,
    OutputPort,
    Parameter,
)
from mdf_engine.onnx_io import export, import_model, run_onnx, to_onnx  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402


def _ort(path, feeds: dict) -> dict:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def _engine(model: Model, feeds_by_port: dict, graph_outputs: list[str]) -> dict:
    """Our engine's values of the exported graph outputs (named NODE_PORT)."""
    sim = Simulation(model)
    sim.evaluate(initializer=feeds_by_port or None)
    out = {}
    for name in graph_outputs:
        node = next(n for n in model.graphs[0].nodes if name.startswith(n.id + "_"))
        out[name] = sim.value(node.id, name[len(node.id) + 1 :])
    return out


def _round_trip(model: Model, tmp_path, feeds: dict, ports: dict) -> None:
    """Export in float64 and float32; check; compare onnxruntime with our engine, and the
    re-imported export with onnxruntime."""
    for dtype in ("float64", "float32"):
        path = tmp_path / f"{model.id}_{dtype}.onnx"
        mp = export(model, path, dtype=dtype)
        onnx.checker.check_model(onnx.load(str(path)), full_check=True)
        f = {k: np.asarray(v, dtype=dtype) for k, v in feeds.items()}
        expected = _ort(path, f)
        assert set(expected) == {o.name for o in mp.graph.output}
        ours = _engine(model, {ports[k]: v for k, v in f.items()}, list(expected))
        back = run_onnx(path, f)
        for name, exp in expected.items():
            got = np.asarray(back[name])
            assert got.dtype == exp.dtype and got.shape == exp.shape, name
            if dtype == "float64":
                np.testing.assert_allclose(
                    np.asarray(ours[name], dtype=exp.dtype),
                    exp,
                    rtol=1e-12,
                    atol=1e-14,
                    err_msg=name,
                )
                np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-14, err_msg=name)
            else:
                # the same float32 computation: onnxruntime vs the re-imported export
                np.testing.assert_allclose(got, exp, rtol=1e-6, atol=1e-7, err_msg=name)
                # the original model computes in float64; float32 rounding only
                np.testing.assert_allclose(
                    np.asarray(ours[name], dtype=np.float64),
                    exp,
                    rtol=1e-4,
                    atol=1e-5,
                    err_msg=name,
                )


def _dense_example() -> Model:
    """The stateless ``dense`` node of examples/onnx_functions.json (its ``input`` node counts
    steps, so the full model is stateful)."""
    m = mdf_engine.load(str(EXAMPLES / "onnx_functions.json"))
    g = m.graphs[0]
    return Model(
        id="dense_only",
        graphs=[Graph(id="dense_graph", nodes=[g.get_node("dense")])],
        onnx_opset_version=m.onnx_opset_version,
    )


def test_onnx_functions_example_round_trip(tmp_path):
    model = _dense_example()
    mp = to_onnx(model)
    assert [i.name for i in mp.graph.input] == ["dense_inp"]
    assert [o.name for o in mp.graph.output] == ["dense_out", "dense_pre"]
    assert {t.name for t in mp.graph.initializer} == {"dense_weights", "dense_bias"}
    assert [n.op_type for n in mp.graph.node] == ["MatMul", "Add", "Relu", "Identity", "Identity"]
    assert all(n.name.startswith("dense/") for n in mp.graph.node)
    assert mp.opset_import[0].version == 15
    x = np.array([[1.5, -2.0, 0.25]])
    _round_trip(model, tmp_path, {"dense_inp": x}, {"dense_inp": "inp"})


def test_whole_onnx_example_is_refused_naming_the_stateful_parameter(tmp_path):
    with pytest.raises(MDFError) as err:
        export(str(EXAMPLES / "onnx_functions.json"), tmp_path / "x.onnx")
    assert "input.step" in str(err.value)
    assert err.value.path == "graphs.onnx_graph.nodes.input.parameters.step"
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.parametrize("name", ["Simple.json", "ABCD.json", "Arrays.json"])
def test_reference_models_round_trip(tmp_path, name):
    """modeci-mdf's stateless examples (standard functions, expressions, edge weights)."""
    path = SHARED_MODELS / name
    if not path.exists():
        pytest.skip(f"{path} is not present")
    _round_trip(mdf_engine.load(str(path)), tmp_path, {}, {})


def _arith_model() -> Model:
    """Standard functions, arithmetic, comparisons, weighted edges and an add-reduced port."""
    src = Node(
        id="src",
        input_ports=[InputPort(id="x", shape=(2, 3), type="float")],
        parameters=[
            Parameter(
                id="lin",
                function="linear",
                args={"variable0": "x", "slope": 2.0, "intercept": -0.5},
            ),
            Parameter(
                id="lg",
                function="logistic",
                args={"variable0": "lin", "gain": 1.5, "bias": 0.2, "offset": 0.1},
            ),
            Parameter(id="ex", value="exponential(x, 0.5, 0.3, 0.1, 1.0)"),
        ],
        output_ports=[
            OutputPort(id="a", value="lg ** 2 - 3 * ex / (1 + sin(x, 2.0)) + -x // 0.7"),
            OutputPort(id="b", value="cos(lin, 0.5) * math.exp(-x)"),
        ],
    )
    dst = Node(
        id="dst",
        input_ports=[InputPort(id="inp", reduce="add")],
        parameters=[
            Parameter(id="k", value=[[1.0, -1.0, 2.0]]),
            Parameter(id="scaled", value="np.maximum(inp * k, 0.25)"),
        ],
        output_ports=[
            OutputPort(id="y", value="scaled"),
            OutputPort(id="big", value="scaled > 1"),
            OutputPort(id="ne", value="scaled != inp"),
        ],
    )
    edges = [
        Edge(
            id="a_to_dst",
            sender="src",
            sender_port="a",
            receiver="dst",
            receiver_port="inp",
            parameters={"weight": 0.5},
        ),
        Edge(id="b_to_dst", sender="src", sender_port="b", receiver="dst", receiver_port="inp"),
    ]
    return Model(id="arith", graphs=[Graph(id="arith_graph", nodes=[src, dst], edges=edges)])


def test_arithmetic_and_standard_functions_round_trip(tmp_path):
    model = _arith_model()
    mp = to_onnx(model)
    assert [i.name for i in mp.graph.input] == ["src_x"]
    assert [o.name for o in mp.graph.output] == ["dst_y", "dst_big", "dst_ne"]
    assert {n.name for n in mp.graph.node} >= {"a_to_dst", "src/lin", "dst/scaled"}
    bools = [o for o in mp.graph.output if o.type.tensor_type.elem_type == onnx.TensorProto.BOOL]
    assert [o.name for o in bools] == ["dst_big", "dst_ne"]
    x = np.array([[0.1, -1.2, 2.0], [0.7, 0.0, -0.3]])
    _round_trip(model, tmp_path, {"src_x": x}, {"src_x": "x"})


def _onnx_ops_model() -> Model:
    """onnx:: calls with attributes, a two-output Split indexed f[k], Gemm and Softmax."""
    node = Node(
        id="net",
        input_ports=[InputPort(id="x", shape=(3, 4))],
        parameters=[
            Parameter(id="w", value=np.linspace(-1, 1, 20).reshape(5, 4).tolist()),
            Parameter(id="c", value=[0.1, 0.2, 0.3, 0.4, 0.5]),
            Parameter(
                id="g",
                function="onnx::Gemm",
                args={"A": "x", "B": "w", "C": "c", "transB": 1, "alpha": 0.5},
            ),
            Parameter(
                id="parts", function="onnx::Split", args={"input": "g", "axis": 1, "split": [2, 3]}
            ),
            Parameter(id="sm", function="onnx::Softmax", args={"input": "parts[1]", "axis": -1}),
            Parameter(
                id="red",
                function="onnx::ReduceSum",
                args={"data": "parts[0] * 2", "axes": [1], "keepdims": 0},
            ),
            Parameter(id="top", function="onnx::TopK", args={"X": "g", "K": [2], "axis": 1}),
        ],
        output_ports=[
            OutputPort(id="probs", value="sm"),
            OutputPort(id="total", value="red"),
            OutputPort(id="first", value="parts[0]"),
            OutputPort(id="best", value="top[1]"),
        ],
    )
    return Model(id="ops", graphs=[Graph(id="ops_graph", nodes=[node])], onnx_opset_version=13)


def test_onnx_ops_with_attributes_and_multiple_outputs_round_trip(tmp_path):
    model = _onnx_ops_model()
    mp = to_onnx(model)
    split = next(n for n in mp.graph.node if n.op_type == "Split")
    assert list(split.output) == ["net_parts_0", "net_parts_1"]
    assert mp.opset_import[0].version == 13
    best = next(o for o in mp.graph.output if o.name == "net_best")
    assert best.type.tensor_type.elem_type == onnx.TensorProto.INT64
    x = np.arange(12.0).reshape(3, 4) / 7 - 0.8
    _round_trip(model, tmp_path, {"net_x": x}, {"net_x": "x"})


def test_node_functions_and_low_opset_comparisons_round_trip(tmp_path):
    """Node functions (declared out of dependency order) and, at opset 9, <= and >= written
    without LessOrEqual/GreaterOrEqual (added in opset 12)."""
    node = Node(
        id="n",
        input_ports=[InputPort(id="x", shape=(4,))],
        functions=[
            Function(id="f2", value="f1 * 2 - x"),
            Function(
                id="f1", function="linear", args={"variable0": "x", "slope": 3, "intercept": 1}
            ),
        ],
        output_ports=[
            OutputPort(id="o", value="f2 + f1"),
            OutputPort(id="le", value="f1 <= 2.5"),
            OutputPort(id="ge", value="x >= 0.5"),
        ],
    )
    model = Model(id="funcs", graphs=[Graph(id="g", nodes=[node])], onnx_opset_version=9)
    mp = to_onnx(model)
    assert mp.opset_import[0].version == 9
    assert not {"LessOrEqual", "GreaterOrEqual"} & {n.op_type for n in mp.graph.node}
    _round_trip(model, tmp_path, {"n_x": np.array([0.0, 0.5, 1.0, -2.0])}, {"n_x": "x"})


def test_opset_defaults_to_newest_schema_used():
    from mdf_engine.registry import REGISTRY

    model = _onnx_ops_model()
    model.onnx_opset_version = None
    mp = to_onnx(model)
    newest = max(
        REGISTRY.lookup(f"onnx::{op}").since
        for op in ("Gemm", "Split", "Softmax", "ReduceSum", "TopK")
    )
    assert mp.opset_import[0].version == max(newest, 13)


def test_export_errors():
    stateful = Model(
        id="m",
        graphs=[
            Graph(
                id="g",
                nodes=[
                    Node(
                        id="n",
                        parameters=[Parameter(id="v", value=1.0, time_derivative="-v")],
                        output_ports=[OutputPort(id="o", value="v")],
                    )
                ],
            )
        ],
    )
    with pytest.raises(MDFError, match="'n.v' is stateful") as err:
        to_onnx(stateful)
    assert err.value.path == "graphs.g.nodes.n.parameters.v"
    unsupported = Model(
        id="m",
        graphs=[
            Graph(
                id="g",
                nodes=[
                    Node(
                        id="n",
                        input_ports=[InputPort(id="x")],
                        parameters=[Parameter(id="v", value="x % 2")],
                        output_ports=[OutputPort(id="o", value="v")],
                    )
                ],
            )
        ],
    )
    with pytest.raises(MDFError, match="no ONNX export"):
        to_onnx(unsupported)
    with pytest.raises(MDFError, match="dtype"):
        to_onnx(_arith_model(), dtype="int8")


def test_cli_export_and_import(tmp_path, capsys):
    src = tmp_path / "dense.json"
    mdf_engine.loader.save(_dense_example(), src)
    out = tmp_path / "dense.onnx"
    assert main(["export", "--onnx", str(src), str(out)]) == 0
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    back = tmp_path / "dense_back.json"
    assert main(["import", str(out), str(back)]) == 0
    data = json.loads(back.read_text())
    assert list(data) == ["dense_graph"]  # the model id is the ONNX graph name
    model = mdf_engine.load(str(back))
    x = np.array([[0.5, 1.0, -1.0]], dtype=np.float32)
    expected = _ort(out, {"dense_inp": x})
    res = run_onnx(model, {"dense_inp": x})
    for k, v in expected.items():
        assert res[k].dtype == np.float32  # float32 initializers survive JSON as Cast calls
        np.testing.assert_allclose(res[k], v, rtol=1e-6)
    capsys.readouterr()
    # bad input: one line, exit status 2
    assert (
        main(["export", "--onnx", str(EXAMPLES / "onnx_functions.json"), str(tmp_path / "s.onnx")])
        == 2
    )
    assert "input.step" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "missing.onnx"), str(tmp_path / "m.json")]) == 2
    assert main(["import", str(out), str(tmp_path / "m.txt")]) == 2


def test_import_of_export_keeps_names(tmp_path):
    path = tmp_path / "a.onnx"
    export(_arith_model(), path)
    model = import_model(path)
    ids = {n.id for n in model.graphs[0].nodes}
    assert {"a_to_dst", "b_to_dst", "src_lin", "dst_scaled"} <= ids
    assert model.metadata["onnx"]["inputs"] == {"src_x": "src_x"}
