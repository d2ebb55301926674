"""CNN layers on the compiled backend (issue 22, goals 2 and 5): ONNX graphs of Conv (groups,
strides, dilations, pads, auto_pad, 1-D to 3-D), MaxPool with its Indices output,
AveragePool, the global pools, BatchNormalization, Relu, Concat and Flatten, imported to MDF,
compile whole (no call through Python) and keep float32; every output port equals the
interpreted run's, and the graph outputs equal onnxruntime's (the oracle).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from mdf_engine import Simulation  # noqa: E402
from mdf_engine.onnx_io import import_model  # noqa: E402


def _graph(nodes, x_shape, outputs, inits, opset):
    """A model of ``nodes`` (``(op, inputs, outputs, attributes)``) reading ``x``."""
    g = helper.make_graph(
        [helper.make_node(op, i, o, name=f"n{k}", **a) for k, (op, i, o, a) in enumerate(nodes)],
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [
            helper.make_tensor_value_info(
                n, TensorProto.INT64 if n == "idx" else TensorProto.FLOAT, None
            )
            for n in outputs
        ],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _bn(c, rng, p):
    vals = (rng.uniform(0.5, 1.5, c), rng.normal(0, 0.1, c), rng.normal(0, 0.1, c))
    vals += (rng.uniform(0.5, 1.5, c),)
    return {f"{p}{k}": v.astype(np.float32) for k, v in zip("sbmv", vals)}


def _model_2d():
    """Grouped, strided, dilated, padded Conv, BN (opset 9 form), Relu, MaxPool with Indices,
    AveragePool counting its pads, GlobalMaxPool, Concat, Flatten."""
    rng = np.random.default_rng(0)
    inits = {
        "w": rng.normal(0, 0.3, (6, 2, 3, 2)).astype(np.float32),
        "b": rng.normal(0, 0.1, 6).astype(np.float32),
        "w2": rng.normal(0, 0.3, (6, 1, 3, 3)).astype(np.float32),
        **_bn(6, rng, "n"),
    }
    nodes = [
        (
            "Conv",
            ["x", "w", "b"],
            ["c"],
            dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 1, 2]),
        ),
        ("BatchNormalization", ["c", "ns", "nb", "nm", "nv"], ["bn"], dict(epsilon=1e-3)),
        ("Relu", ["bn"], ["r"], {}),
        (
            "MaxPool",
            ["r"],
            ["mp", "idx"],
            dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        ),
        (
            "AveragePool",
            ["r"],
            ["ap"],
            dict(kernel_shape=[2, 2], pads=[1, 1, 0, 0], count_include_pad=1),
        ),
        ("Conv", ["ap", "w2"], ["dw"], dict(group=6, pads=[1, 1, 1, 1])),
        ("GlobalMaxPool", ["dw"], ["gm"], {}),
        ("Concat", ["gm", "gm"], ["cat"], dict(axis=1)),
        ("Flatten", ["cat"], ["flat"], dict(axis=1)),
    ]
    return _graph(nodes, [1, 4, 11, 9], ["mp", "idx", "flat"], inits, 13), (1, 4, 11, 9)


def _model_1d():
    """1-D Conv (SAME_UPPER, no bias), BN (opset 14 form), MaxPool, AveragePool, Concat,
    GlobalAveragePool, Flatten; a batch of two."""
    rng = np.random.default_rng(1)
    inits = {"w": rng.normal(0, 0.3, (8, 3, 3)).astype(np.float32), **_bn(8, rng, "n")}
    nodes = [
        ("Conv", ["x", "w"], ["c"], dict(auto_pad="SAME_UPPER", strides=[2])),
        ("BatchNormalization", ["c", "ns", "nb", "nm", "nv"], ["bn"], {}),
        ("MaxPool", ["bn"], ["mp"], dict(kernel_shape=[2], strides=[1])),
        ("AveragePool", ["bn"], ["ap"], dict(kernel_shape=[2], strides=[1])),
        ("Concat", ["mp", "ap"], ["cat"], dict(axis=-1)),
        ("GlobalAveragePool", ["cat"], ["g"], {}),
        ("Flatten", ["g"], ["flat"], {}),
    ]
    return _graph(nodes, [2, 3, 13], ["cat", "flat"], inits, 14), (2, 3, 13)


def _model_3d():
    """3-D Conv (VALID, bias), MaxPool with Indices, AveragePool with pads."""
    rng = np.random.default_rng(2)
    inits = {
        "w": rng.normal(0, 0.3, (5, 2, 2, 3, 2)).astype(np.float32),
        "b": rng.normal(0, 0.1, 5).astype(np.float32),
    }
    nodes = [
        ("Conv", ["x", "w", "b"], ["c"], dict(auto_pad="VALID", strides=[1, 2, 1])),
        ("MaxPool", ["c"], ["mp", "idx"], dict(kernel_shape=[2, 2, 2], pads=[0, 1, 0, 1, 0, 1])),
        ("AveragePool", ["c"], ["ap"], dict(kernel_shape=[2, 2, 2], pads=[1, 0, 0, 0, 1, 1])),
    ]
    return _graph(nodes, [1, 2, 5, 7, 6], ["mp", "idx", "ap"], inits, 13), (1, 2, 5, 7, 6)


def _model_products():
    """Products (0.2-4 M multiply-adds) that the compiled kernels run in their own loops where
    the interpreted ones call BLAS: a 3x3 Conv with padding (shifted slices), a 1x1 Conv, Relu,
    Flatten and a Gemm classifier (transB, alpha and beta)."""
    rng = np.random.default_rng(4)
    inits = {
        "w": rng.normal(0, 0.2, (16, 8, 3, 3)).astype(np.float32),
        "b": rng.normal(0, 0.1, 16).astype(np.float32),
        "w1": rng.normal(0, 0.2, (32, 16, 1, 1)).astype(np.float32),
        "fw": rng.normal(0, 0.05, (10, 32 * 24 * 24)).astype(np.float32),
        "fb": rng.normal(0, 0.1, 10).astype(np.float32),
    }
    nodes = [
        ("Conv", ["x", "w", "b"], ["c"], dict(pads=[1, 1, 1, 1])),
        ("Conv", ["c", "w1"], ["p"], {}),
        ("Relu", ["p"], ["r"], {}),
        ("Flatten", ["r"], ["f"], {}),
        ("Gemm", ["f", "fw", "fb"], ["y"], dict(transB=1, alpha=0.5, beta=2.0)),
    ]
    return _graph(nodes, [1, 8, 24, 24], ["r", "y"], inits, 13), (1, 8, 24, 24)


@pytest.mark.parametrize(
    "build",
    [_model_2d, _model_1d, _model_3d, _model_products],
    ids=["2d", "1d", "3d", "products"],
)
def test_cnn_layers_compile_whole(build) -> None:
    proto, shape = build()
    feed = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in proto.graph.output]
    expected = dict(zip(names, session.run(None, {"x": feed})))
    model = import_model(proto)
    meta = model.metadata["onnx"]
    runs = {}
    for backend in ("interpreted", "compiled"):
        sim = Simulation(model, backend=backend)
        for _ in range(2):  # the second call runs the compiled code (the first warms up)
            sim.evaluate(initializer={meta["inputs"]["x"]: feed})
        runs[backend] = sim
    runner = runs["compiled"].runner
    assert runner.is_compiled, runner.fallback_reason
    assert runner.python_calls == []
    # an activation is copied whole, not by a loop that reshapes it at every element (a
    # call into Numba's runtime each: 40 ms for the small CNN of benchmarks/cnn_speed.py)
    source = Path(runner._quiet_fn.py_func.__code__.co_filename).read_text()
    assert not re.search(r"\.reshape\(\d+\)\[i_\]", source)  # (read or written so)
    want, got = runs["interpreted"].outputs, runs["compiled"].outputs
    for nid, ports in want.items():
        for pid, w in ports.items():
            w, g = np.asarray(w), np.asarray(got[nid][pid])
            if w.dtype.kind == "f":
                assert g.dtype == w.dtype, f"{nid}.{pid}: {g.dtype} != interpreted {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{nid}.{pid}")
    for name in names:
        node, port = meta["outputs"][name].split(".", 1)
        out = np.asarray(got[node][port])
        assert out.dtype == np.float32 or name == "idx"
        np.testing.assert_allclose(out, expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_gemm_kernel_matches_onnxruntime(trans, dtype) -> None:
    """The compiled backend's Gemm kernel (own loops for small products, BLAS above
    ``GEMM_OWN_MACS``) and the interpreted one against onnxruntime, for every transA/transB;
    below ``GEMM_OWN_MACS`` both make the product by the same loops, bit for bit."""
    from onnx_cases import ort_run

    from mdf_engine.onnx_ops.linalg import GEMM_OWN_MACS, gemm, gemm_jit

    rng = np.random.default_rng(5)
    for m, k, n in [(3, 70, 5), (64, 1100, 64)]:  # own loops, then BLAS
        assert (m * k * n <= GEMM_OWN_MACS) == (m < 64)
        a = rng.standard_normal((k, m) if trans[0] else (m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if trans[1] else (k, n)).astype(dtype)
        c = rng.standard_normal(n).astype(dtype)
        attrs = dict(transA=trans[0], transB=trans[1], alpha=0.5, beta=2.0)
        want = ort_run("Gemm", [a, b, c], attrs)[0]
        got = gemm_jit(a, b, c, 0.5, 2.0, trans[0], trans[1])
        assert got.dtype == dtype
        tol = 1e-5 if dtype == np.float32 else 1e-12  # (sums of k products, either order)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
        # the interpreted kernel: the same products (own loops below GEMM_OWN_MACS)
        (interp,) = gemm(a, b, c, alpha=0.5, beta=2.0, transA=trans[0], transB=trans[1])
        assert interp.dtype == dtype
        np.testing.assert_allclose(interp, want, rtol=tol, atol=tol * np.abs(want).max())
        if m < 64:
            product = gemm_jit(a, b, None, 1.0, 0.0, trans[0], trans[1])
            np.testing.assert_array_equal(gemm(a, b, transA=trans[0], transB=trans[1])[0], product)


def test_repeated_evaluate_replays_its_call() -> None:
    """A repeated evaluate() replays the first call's argument list (backends/compiled/
    quick.py) with each call's input put in place: every output and the time steps equal
    the interpreted run's after each call; an input the generated code does not take as it
    is (not C-contiguous), one Numba types otherwise (read-only) and a changed initializer
    key go the general way."""
    from mdf_engine.errors import MDFError

    proto, shape = _model_2d()
    model = import_model(proto)
    key = model.metadata["onnx"]["inputs"]["x"]
    rng = np.random.default_rng(7)
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    runner = sims["compiled"].runner
    general = []
    feeds = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    feeds.append(np.asfortranarray(rng.standard_normal(shape).astype(np.float32)))
    feeds.append(rng.standard_normal(shape).astype(np.float32))
    feeds[-1].flags.writeable = False  # (typed otherwise by Numba: the general way, twice)
    feeds.append(rng.standard_normal(shape).astype(np.float32))
    for k, feed in enumerate(feeds):
        if k == 1:  # (the first call compiled the graph and made the replayable call)
            assert runner._quick is not None
            args = runner._run_call.args

            def counted(*a, args=args):
                general.append(1)
                return args(*a)

            runner._run_call.args = counted
        for sim in sims.values():
            sim.evaluate(initializer={key: feed})
        want, got = sims["interpreted"].outputs, sims["compiled"].outputs
        for nid, ports in want.items():
            for pid, w in ports.items():
                g = np.asarray(got[nid][pid])
                assert g.dtype == np.asarray(w).dtype
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{nid}.{pid}")
                assert np.array_equal(sims["compiled"].value(nid, pid), g)
        assert sims["compiled"].time_steps == sims["interpreted"].time_steps
    assert general == [1, 1, 1]  # (Fortran order; read-only, then writeable again)
    with pytest.raises(MDFError, match="same initializer keys"):
        sims["compiled"].evaluate(initializer={key: feeds[0], "other": feeds[0]})


def test_history_counts_a_repeated_initializer_once() -> None:
    """The calls a compiled run may have to replay on the interpreter (handback.History): a
    call repeated with arrays equal bit for bit is counted in its entry, no copy kept (its
    numbers counted towards REPLAY_NUMBERS all the same); a different bit (-0.0 for 0.0),
    another dtype or another dt makes a new entry; each entry keeps its own copy of the
    values, whatever the caller does to its array later."""
    from mdf_engine.backends.compiled import handback
    from mdf_engine.backends.compiled.handback import History

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    h = History()
    for v in (x, x.copy(), np.array(x, order="F")):
        h.add(1, None, {"x": v}, True)
    assert [c[0] for c in h.calls] == [3] and h.numbers == 36 and h.updates == 3
    y = x.copy()
    y[0, 0] = -0.0
    h.add(1, None, {"x": y}, True)
    h.add(1, None, {"x": y.astype(np.float64)}, True)
    h.add(1, 0.5, {"x": y.astype(np.float64)}, True)
    assert [c[0] for c in h.calls] == [3, 1, 1, 1] and h.updates == 6
    x[1, 1] = 99.0
    assert h.calls[0][3]["x"][1, 1] == 5.0 and np.signbit(h.calls[1][3]["x"][0, 0])
    while h.lost is None:  # (repeats fill the bound as copies would)
        h.add(1, 0.5, {"x": y.astype(np.float64)}, True)
    assert handback.REPLAY_NUMBERS < h.numbers <= handback.REPLAY_NUMBERS + 12 and h.calls == []
