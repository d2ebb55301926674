"""End to end: a small float CNN written as an MDF model of onnx:: ops, quantized by the pass onto
hexagon:: chains, agrees with the float model (the float reference is numpy, computed here)."""

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.hexagon import quantize, run_quantized
from mdf_engine.model import Edge, Graph, InputPort, Model, Node, OutputPort, Parameter
from mdf_engine.plan import load_function_libraries

load_function_libraries()


def cnn(rng):
    """conv(3x3, pad 1) -> relu -> maxpool 2x2 -> flatten | gemm -> add -> softmax (two nodes)."""
    W = rng.normal(scale=0.5, size=(4, 1, 3, 3))
    B = rng.normal(scale=0.1, size=(4,))
    G = rng.normal(scale=0.3, size=(64, 10))
    C = rng.normal(scale=0.1, size=(10,))
    features = Node(
        id="features",
        input_ports=[InputPort(id="image", shape=(1, 1, 8, 8))],
        parameters=[
            Parameter(id="W", value=W.tolist()),
            Parameter(
                id="conv",
                function="onnx::Conv",
                args={
                    "X": "image",
                    "W": "W",
                    "B": B.tolist(),
                    "pads": [1, 1, 1, 1],
                    "kernel_shape": [3, 3],
                },
            ),
            Parameter(id="relu", function="onnx::Relu", args={"X": "conv"}),
            Parameter(
                id="pool",
                function="onnx::MaxPool",
                args={"X": "relu", "kernel_shape": [2, 2], "strides": [2, 2]},
            ),
            Parameter(id="flat", function="onnx::Flatten", args={"input": "pool[0]", "axis": 1}),
        ],
        output_ports=[OutputPort(id="out", value="flat")],
    )
    classifier = Node(
        id="classifier",
        input_ports=[InputPort(id="feat", shape=(1, 64))],
        parameters=[
            Parameter(id="dense", function="onnx::Gemm", args={"A": "feat", "B": G.tolist()}),
            Parameter(id="biased", function="onnx::Add", args={"A": "dense", "B": C.tolist()}),
            Parameter(id="probs", function="onnx::Softmax", args={"input": "biased"}),
        ],
        output_ports=[OutputPort(id="probs", value="probs")],
    )
    model = Model(
        id="cnn",
        graphs=[
            Graph(
                id="g",
                nodes=[features, classifier],
                edges=[
                    Edge(
                        id="e",
                        sender="features",
                        sender_port="out",
                        receiver="classifier",
                        receiver_port="feat",
                    )
                ],
            )
        ],
    )
    return model, (W, B, G, C)


def numpy_cnn(x, W, B, G, C):
    """The float reference, written out with numpy."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((x.shape[0], 4, 8, 8))
    for i in range(8):
        for j in range(8):
            conv[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i : i + 3, j : j + 3], W) + B
    relu = np.maximum(conv, 0)
    pool = relu.reshape(x.shape[0], 4, 4, 2, 4, 2).max(axis=(3, 5))
    z = pool.reshape(x.shape[0], -1) @ G + C
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_float_model_matches_numpy():
    rng = np.random.default_rng(0)
    model, params = cnn(rng)
    x = rng.normal(size=(1, 1, 8, 8))
    sim = Simulation(model)
    sim.evaluate(initializer={"image": x})
    np.testing.assert_allclose(
        sim.outputs["classifier"]["probs"], numpy_cnn(x, *params), rtol=1e-5, atol=1e-7
    )


def test_quantized_cnn_agrees_with_float():
    rng = np.random.default_rng(1)
    model, params = cnn(rng)
    calib = [{"image": rng.normal(size=(1, 1, 8, 8))} for _ in range(200)]
    qmodel = quantize(model, calib)
    funcs = [p.function for n in qmodel.graphs[0].nodes for p in n.parameters if p.function]
    for op in (
        "hexagon::Quantize",
        "hexagon::QuantizedConv2d_8x8to32",
        "hexagon::QuantizedBiasAdd_32p32to32",
        "hexagon::Requantize_32to8",
        "hexagon::QuantizedRelu_8",
        "hexagon::QuantizedMaxPool_8",
        "hexagon::QuantizedMatMul_8x8to32",
        "hexagon::QuantizedAdd_8p8to8",
        "hexagon::QuantizedSoftmax_8",
        "hexagon::Dequantize",
    ):
        assert op in funcs
    assert not any(f.startswith("onnx::") and f != "onnx::Reshape" for f in funcs)
    sim = Simulation(qmodel)
    same, worst = 0, 0.0
    n = 200
    for _ in range(n):
        x = rng.normal(size=(1, 1, 8, 8))
        sim.evaluate(initializer={"image": x})
        q = np.asarray(sim.outputs["classifier"]["probs"], dtype=np.float64)
        f = numpy_cnn(x, *params)
        assert q.shape == f.shape
        # the output range is softmax's [0, 1] (the range of the quantized output tensor);
        # the document's default Close tolerance is 0.07 of it
        out_range = 1.0 - 0.0
        worst = max(worst, np.abs(q - f).max() / out_range)
        same += int(np.argmax(q) == np.argmax(f))
    lo, hi = sim.value("classifier", "probs__8_QuantizedSoftmax_8")[1:]
    assert (lo.item(), hi.item()) == (0.0, 1.0)
    assert worst <= 0.07, f"worst error {worst:.3f} of the output range"
    assert same >= 0.95 * n, f"argmax agrees on {same} of {n}"


def test_quantized_intermediates_close_and_model_saves(tmp_path):
    rng = np.random.default_rng(2)
    model, params = cnn(rng)
    x = rng.normal(size=(1, 1, 8, 8))
    qmodel = quantize(model, [{"image": x}])
    fsim, qsim = Simulation(model), Simulation(qmodel)
    fsim.evaluate(initializer={"image": x})
    qsim.evaluate(initializer={"image": x})
    qpool = qsim.value("features", "pool")
    assert isinstance(qpool, tuple) and qpool[1] is None  # MaxPool's Indices are not computed
    for name in ("conv", "relu", "pool", "flat"):
        f, q = fsim.value("features", name), qsim.value("features", name)
        if name == "pool":
            f, q = f[0], q[0]
        assert q.shape == f.shape
        rng_f = max(f.max(), 0) - min(f.min(), 0)
        assert np.abs(q - f).max() <= 0.02 * rng_f + 1e-6, name
    import mdf_engine

    mdf_engine.save(qmodel, tmp_path / "q.json")
    again = mdf_engine.load(tmp_path / "q.json")
    sim = Simulation(again)
    sim.evaluate(initializer={"image": x})
    np.testing.assert_allclose(
        sim.outputs["classifier"]["probs"], qsim.outputs["classifier"]["probs"]
    )


def test_run_quantized_entry_point_and_errors():
    rng = np.random.default_rng(3)
    model, params = cnn(rng)
    x = rng.normal(size=(1, 1, 8, 8))
    out = run_quantized(model, {"image": x})
    f = numpy_cnn(x, *params)
    assert np.abs(np.asarray(out["classifier"]["probs"]) - f).max() <= 0.07
    # the CLI's call: no initializer, the model's own input defaults are data and calibration
    model.graphs[0].nodes[0].input_ports[0].default_value = x.tolist()
    out = run_quantized(model)
    assert np.abs(np.asarray(out["classifier"]["probs"]) - f).max() <= 0.07
    model.graphs[0].nodes[0].parameters[3].args["ceil_mode"] = 1  # float-valid, not quantizable
    with pytest.raises(MDFError, match="ceil_mode"):
        quantize(model, [{"image": x}])


def numpy_net2(x, W, G):
    """Float reference of net2, in numpy: conv 3x3 stride 2 SAME_UPPER (no bias) -> clip(0, 6)
    -> avgpool 3x3 stride 1 pads 1 (in-bounds average) -> concat(clip, pool) on channels
    -> global average -> reshape (N, 6) -> matmul G^T (Gemm transB) -> softmax."""
    n = x.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)))  # total pad 1 on 6 -> after (upper)
    conv = np.zeros((n, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            conv[:, :, i, j] = np.einsum(
                "nchw,ochw->no", xp[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3], W
            )
    clip = np.clip(conv, 0.0, 6.0)
    cp = np.pad(clip, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    pool = np.zeros_like(clip)
    for i in range(3):
        for j in range(3):
            pool[:, :, i, j] = np.nanmean(cp[:, :, i : i + 3, j : j + 3], axis=(2, 3))
    cat = np.concatenate([clip, pool], axis=1)
    z = cat.mean(axis=(2, 3)).reshape(n, 6) @ G.T
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def net2(rng):
    W = rng.normal(scale=0.6, size=(3, 2, 3, 3))
    G = rng.normal(scale=1.5, size=(5, 6))
    node = Node(
        id="n",
        input_ports=[InputPort(id="x", shape=(1, 2, 6, 6))],
        parameters=[
            Parameter(
                id="conv",
                function="onnx::Conv",
                args={
                    "X": "x",
                    "W": W.tolist(),
                    "strides": [2, 2],
                    "auto_pad": "SAME_UPPER",
                    "kernel_shape": [3, 3],
                },
            ),
            Parameter(
                id="clip", function="onnx::Clip", args={"input": "conv", "min": 0.0, "max": 6.0}
            ),
            Parameter(
                id="pool",
                function="onnx::AveragePool",
                args={"X": "clip", "kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
            ),
            Parameter(
                id="cat",
                function="onnx::Concat",
                args={"inputs": "clip", "inputs1": "pool", "axis": 1},
            ),
            Parameter(id="gap", function="onnx::GlobalAveragePool", args={"X": "cat"}),
            Parameter(id="vec", function="onnx::Reshape", args={"data": "gap", "shape": [1, 6]}),
            Parameter(
                id="z", function="onnx::Gemm", args={"A": "vec", "B": G.tolist(), "transB": 1}
            ),
            Parameter(id="p", function="onnx::Softmax", args={"input": "z"}),
        ],
        output_ports=[OutputPort(id="p", value="p")],
    )
    return Model(id="net2", graphs=[Graph(id="g", nodes=[node])]), (W, G)


def test_quantized_net2_clip_avgpool_concat_gap_reshape_gemm():
    rng = np.random.default_rng(4)
    model, (W, G) = net2(rng)
    x0 = rng.normal(size=(1, 2, 6, 6))
    fsim = Simulation(model)
    fsim.evaluate(initializer={"x": x0})
    np.testing.assert_allclose(fsim.outputs["n"]["p"], numpy_net2(x0, W, G), rtol=1e-6)
    calib = [{"x": rng.normal(size=(1, 2, 6, 6))} for _ in range(100)]
    qmodel = quantize(model, calib)
    funcs = {p.function for p in qmodel.graphs[0].nodes[0].parameters}
    for op in (
        "QuantizedPad_8",
        "QuantizedClamp_8",
        "QuantizedAvgPool_8",
        "QuantizedConcat_8",
        "QuantizedReshape",
        "QuantizedMatMul_8x8to32",
    ):
        assert "hexagon::" + op in funcs
    sim = Simulation(qmodel)
    same = 0
    for _ in range(50):
        x = rng.normal(size=(1, 2, 6, 6))
        sim.evaluate(initializer={"x": x})
        q, f = sim.outputs["n"]["p"], numpy_net2(x, W, G)
        assert np.abs(q - f).max() <= 0.07
        same += int(np.argmax(q) == np.argmax(f))
    assert same >= 45
