"""ONNX -> MDF import: the ONNX package's PyTorch test models and two networks built with
``onnx.helper`` are imported as MDF models, run in our engine and compared with the stored
outputs (written by PyTorch) or with onnxruntime (the oracles)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx_cases import pytorch_case, pytorch_model_path, pytorch_models  # noqa: E402

import mdf_engine  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.loader import save  # noqa: E402
from mdf_engine.onnx_io import import_model, portable, run_onnx  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402

#: Models that do not import or do not match, with the reason (none at present).
FAILURES: dict[str, str] = {}


MODELS = pytorch_models()


def _check_pytorch_model(directory: str, name: str, via: str | None = None) -> None:
    """Import, run, compare; with ``via`` a file path, through a saved and reloaded MDF file."""
    case = pytorch_case(directory, name)
    source = case.proto
    if via is not None:
        save(portable(import_model(case.proto)), via)
        source = mdf_engine.load(via)
    with np.errstate(all="ignore"):
        result = run_onnx(source, case.feeds)
    for out_name, exp in zip(case.outputs, case.expected):
        got = np.asarray(result[out_name])
        assert got.dtype == exp.dtype, f"{out_name}: dtype {got.dtype} != {exp.dtype}"
        assert got.shape == exp.shape, f"{out_name}: shape {got.shape} != {exp.shape}"
        np.testing.assert_allclose(got, exp, rtol=1e-3, atol=1e-5)


def test_pytorch_models_import_and_match():
    """>= 95% of the models import and match; every failure is one listed in FAILURES."""
    assert len(MODELS) >= 100, f"expected the ONNX package's PyTorch models, found {len(MODELS)}"
    failed = {}
    for d, m in MODELS:
        try:
            _check_pytorch_model(d, m)
        except (MDFError, AssertionError) as e:
            failed[m] = f"{type(e).__name__}: {e}"
    unexpected = {m: r for m, r in failed.items() if m not in FAILURES}
    assert not unexpected, unexpected
    assert len(MODELS) - len(failed) >= 0.95 * len(MODELS)


def test_pytorch_models_through_mdf_files(tmp_path):
    """The imported models saved as JSON/YAML (float32 constants as onnx::Cast calls) and
    loaded back still match the stored outputs."""
    failed = {}
    for k, (d, m) in enumerate(MODELS):
        via = str(tmp_path / (f"{m}.json" if k % 2 else f"{m}.yaml"))
        try:
            _check_pytorch_model(d, m, via)
        except (MDFError, AssertionError) as e:
            failed[m] = f"{type(e).__name__}: {e}"
    unexpected = {m: r for m, r in failed.items() if m not in FAILURES}
    assert not unexpected, unexpected


def test_pytorch_models_export_back_to_onnx():
    """ONNX -> MDF -> ONNX: every imported model exports at its opset, passes the full ONNX
    check, and where onnxruntime implements the operator versions (it has no kernels for some
    opset-6 forms: Add/Mul with ``broadcast``, Gemm-6, BatchNormalization-6, ...) it reproduces
    the stored outputs."""
    from mdf_engine.onnx_io import to_onnx

    matched, no_ort_kernel = 0, []
    for d, m in MODELS:
        case = pytorch_case(d, m)
        proto, expected = case.proto, case.expected
        model = import_model(proto)
        mp = to_onnx(model)
        onnx.checker.check_model(mp, full_check=True)
        meta = model.metadata["onnx"]
        exported_inputs = [i.name for i in mp.graph.input]
        feeds = {
            n: x
            for name, x in case.feeds.items()
            for n in exported_inputs
            if n.endswith("_" + meta["inputs"][name])
        }
        options = ort.SessionOptions()
        options.log_severity_level = 3
        try:
            sess = ort.InferenceSession(
                mp.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
            got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        except Exception as e:  # onnxruntime's NotImplemented for an old operator version
            assert "NOT_IMPLEMENTED" in str(e) and model.onnx_opset_version < 7, (m, str(e))
            no_ort_kernel.append(m)
            continue
        for o, exp in zip(proto.graph.output, expected):
            value = got[meta["outputs"][o.name].replace(".", "_")]
            assert value.dtype == exp.dtype and value.shape == exp.shape, m
            np.testing.assert_allclose(value, exp, rtol=1e-3, atol=1e-5, err_msg=m)
        matched += 1
    assert matched >= 80, (matched, no_ort_kernel)  # 83 of 117 at the time of writing


def test_imported_model_structure():
    """A PyTorch model imports as MDF nodes calling onnx:: functions, with edges between them
    and the graph input as an input port."""
    path = str(pytorch_model_path("pytorch-converted", "test_Conv2d"))
    proto = onnx.load(path)
    model = import_model(path)
    g = model.graphs[0]
    assert len(g.nodes) == len(proto.graph.node)
    calls = [p.function for n in g.nodes for p in n.parameters if p.function]
    assert calls == [f"onnx::{n.op_type}" for n in proto.graph.node]
    meta = model.metadata["onnx"]
    assert list(meta["inputs"]) == [
        i.name for i in proto.graph.input if i.name not in {t.name for t in proto.graph.initializer}
    ]
    assert list(meta["outputs"]) == [o.name for o in proto.graph.output]


# -- networks built with onnx.helper, against onnxruntime ------------------------------------


def _ort(mp, feeds: dict) -> list[np.ndarray]:
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _mlp(rng):
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((3, 8)).astype(np.float32)
    b2 = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["h1"], name="bias1"),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("Gemm", ["a1", "W2", "b2"], ["logits"], name="fc2", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    inits = [
        numpy_helper.from_array(a, n) for a, n in ((w1, "W1"), (b1, "b1"), (w2, "W2"), (b2, "b2"))
    ]
    g = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, [5, 3]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, [5, 3]),
        ],
        initializer=inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _cnn(rng):
    w1 = (0.3 * rng.standard_normal((4, 2, 3, 3))).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    mean = rng.standard_normal(4).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 4).astype(np.float32)
    wf = (0.2 * rng.standard_normal((10, 36))).astype(np.float32)
    bf = rng.standard_normal(10).astype(np.float32)
    nodes = [
        helper.make_node(
            "Conv",
            ["img", "w1", "b1"],
            ["c1"],
            name="conv1",
            pads=[1, 1, 1, 1],
            kernel_shape=[3, 3],
        ),
        helper.make_node(
            "BatchNormalization",
            ["c1", "scale", "bias", "mean", "var"],
            ["bn1"],
            name="bn1",
            epsilon=1e-5,
        ),
        helper.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        helper.make_node(
            "MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node("Split", ["p1"], ["s0", "s1"], name="split", axis=1),
        helper.make_node("Concat", ["s1", "s0"], ["cat"], name="concat", axis=1),
        helper.make_node("Flatten", ["cat"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["fc"], name="fc", transB=1),
        helper.make_node("Sigmoid", ["fc"], ["out"], name="sigmoid"),
    ]
    inits = [
        numpy_helper.from_array(a, n)
        for a, n in (
            (w1, "w1"),
            (b1, "b1"),
            (scale, "scale"),
            (bias, "bias"),
            (mean, "mean"),
            (var, "var"),
            (wf, "wf"),
            (bf, "bf"),
        )
    ]
    g = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("img", TensorProto.FLOAT, [2, 2, 6, 6])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 10])],
        initializer=inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


def test_mlp_matches_onnxruntime():
    rng = np.random.default_rng(1)
    mp = _mlp(rng)
    onnx.checker.check_model(mp, full_check=True)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    probs, logits = _ort(mp, {"x": x})
    res = run_onnx(mp, {"x": x})
    assert res["probs"].dtype == np.float32
    np.testing.assert_allclose(res["probs"], probs, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(res["logits"], logits, rtol=1e-5, atol=1e-6)


def test_mlp_compiled_backend_matches_onnxruntime():
    """The imported ops all have jit forms, so the whole graph compiles."""
    rng = np.random.default_rng(2)
    mp = _mlp(rng)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    probs, _ = _ort(mp, {"x": x})
    res = run_onnx(mp, {"x": x}, backend="compiled")
    np.testing.assert_allclose(res["probs"], probs, rtol=1e-5, atol=1e-7)


def test_cnn_matches_onnxruntime():
    rng = np.random.default_rng(3)
    mp = _cnn(rng)
    onnx.checker.check_model(mp, full_check=True)
    img = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    (expected,) = _ort(mp, {"img": img})
    res = run_onnx(mp, {"img": img})
    assert res["out"].shape == (2, 10)
    np.testing.assert_allclose(res["out"], expected, rtol=1e-5, atol=1e-6)
    # the split's two outputs are two ports of one MDF node, indexing the call's tuple
    model = import_model(mp)
    split = model.graphs[0].get_node("split")
    (call,) = [p for p in split.parameters if p.function == "onnx::Split"]
    assert [(o.id, o.value) for o in split.output_ports] == [
        ("s0", f"{call.id}[0]"),
        ("s1", f"{call.id}[1]"),
    ]


def test_imported_model_runs_with_simulation_initializer():
    """The imported model is an ordinary MDF model: a Simulation fed through the input port."""
    rng = np.random.default_rng(4)
    mp = _mlp(rng)
    model = import_model(mp)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    sim = Simulation(model)
    sim.evaluate(initializer={model.metadata["onnx"]["inputs"]["x"]: x})
    node, port = model.metadata["onnx"]["outputs"]["probs"].split(".")
    np.testing.assert_allclose(sim.value(node, port), _ort(mp, {"x": x})[0], rtol=1e-5, atol=1e-7)


def test_import_errors_are_mdf_errors(tmp_path):
    with pytest.raises(MDFError, match="no ONNX file"):
        import_model(str(tmp_path / "missing.onnx"))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00not a protobuf\xff" * 3)
    with pytest.raises(MDFError):
        import_model(str(bad))
    rng = np.random.default_rng(5)
    mp = _mlp(rng)
    with pytest.raises(MDFError, match="not an input"):
        run_onnx(mp, {"x": np.zeros((5, 4), np.float32), "y": 1})
    with pytest.raises(MDFError, match="no feed"):
        run_onnx(mp, {})
    # an op that is not an ONNX operator
    n = helper.make_node("NoSuchOp", ["x"], ["y"], name="bad")
    g = helper.make_graph(
        [n],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(MDFError, match="NoSuchOp"):
        import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    # control flow bodies are not MDF nodes
    body = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["z"])],
        "body",
        [],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1])],
    )
    n = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=body, else_branch=body)
    g = helper.make_graph(
        [n],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(MDFError, match="subgraph"):
        import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))


def test_values_named_like_the_call_arguments():
    """Graph inputs named A and B fed crosswise into Sub(A, B): port ids never shadow the
    argument names of the call."""
    n = helper.make_node("Sub", ["B", "A"], ["Y"], name="s")
    g = helper.make_graph(
        [n],
        "g",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    mp = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    a = np.array([1.0, 2.0], np.float32)
    b = np.array([10.0, 20.0], np.float32)
    (expected,) = _ort(mp, {"A": a, "B": b})
    np.testing.assert_array_equal(run_onnx(mp, {"A": a, "B": b})["Y"], expected)
