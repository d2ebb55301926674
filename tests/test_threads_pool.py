"""The engine's worker threads (``onnx_ops/_threads_pool.py``) beyond the convolutions
(tests/test_conv_threads.py): MaxPool's planes shared; the independent nodes of a replayed time
step overlapping (``interpreter_lean.parallel_step``: a fire module's two expand convolutions);
the thread cap. Oracles: the one-thread run bit for bit, the interpreter's general path
(graph-scheduler every update, ``evaluate_node`` every node), onnxruntime, and the corpus CNNs'
stored oracles.

The thread count is patched (CI runs with ``NUMBA_NUM_THREADS=1``; the workers are the
engine's Python threads, not Numba's), and so are the sizes from which a kernel is shared, so
that small nets share every kernel.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from onnx_cases import ort_run  # noqa: E402
from onnx_nets import _Net  # noqa: E402

from mdf_engine import onnx_ops  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402
from mdf_engine.onnx_io import import_model  # noqa: E402
from mdf_engine.onnx_ops import _conv_threads as ct  # noqa: E402
from mdf_engine.onnx_ops import _threads_pool as tp  # noqa: E402
from mdf_engine.onnx_ops import maxpool as mp_mod  # noqa: E402
from mdf_engine.simulation import Simulation  # noqa: E402

WILD = Path(__file__).resolve().parent / "data" / "wild"


@pytest.fixture
def threads(monkeypatch):
    """Set the thread count the kernels see (Numba's count, as the pool reads it), with every
    convolution and pool of a small net shared."""
    monkeypatch.delenv("MDF_ENGINE_BLAS_THREADS", raising=False)
    monkeypatch.setattr(ct, "PART_MIN_MACS", 1 << 9)
    monkeypatch.setattr(ct, "SHARE_MIN_MACS", 1 << 10)
    monkeypatch.setattr(mp_mod, "PART_VALUES", 1 << 7)
    monkeypatch.setattr(mp_mod, "ITEM_VALUES", 1 << 6)

    def set_threads(n: int) -> None:
        monkeypatch.setattr(tp, "numba_threads", lambda: n)

    return set_threads


def _fires(size: int = 47):
    """SqueezeNet 1.1's layout, thin: a strided conv, ceil-mode max pools, fire modules (1x1
    squeeze, 1x1 and 3x3 expands into a Concat), a 1x1 classifier, a global average pool."""
    n = _Net(5)
    h = n.node("Relu", [n.conv("input", 3, 16, 3, stride=2)])

    def pool(x: str) -> str:
        return n.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    def fire(x: str, cin: int, sq: int, e: int) -> str:
        s = n.node("Relu", [n.conv(x, cin, sq, 1)])
        a = n.node("Relu", [n.conv(s, sq, e, 1)])
        b = n.node("Relu", [n.conv(s, sq, e, 3, pad=1)])
        return n.node("Concat", [a, b], axis=1)

    h = fire(fire(pool(h), 16, 16, 32), 64, 16, 32)
    h = fire(pool(h), 64, 16, 48)
    h = n.node("Relu", [n.conv(h, 96, 10, 1)])
    h = n.node("Flatten", [n.node("GlobalAveragePool", [h])], axis=1)
    return n.model("input", [1, 3, size, size], h, [1, 10], "fires", 13)


def _sim(mp, fast: bool = True):
    model = import_model(mp)
    sim = Simulation(model, backend="interpreted")
    meta = model.metadata["onnx"]
    node, port = meta["outputs"][mp.graph.output[0].name].split(".", 1)
    if not fast:  # the general path, as tests/test_fusion.py runs it
        sim.runner._replay = None
        sim.runner._lean = dict.fromkeys(sim.runner._lean)
    return sim, meta["inputs"]["input"], node, port


def _outputs(sim: Simulation) -> dict:
    return {
        (nid, k): v
        for nid, st in sim.runner.states.items()
        for k, v in st.outputs.items()
        if isinstance(v, np.ndarray)
    }


def _parallel_steps(sim: Simulation) -> int:
    prog = sim.runner._program
    return sum(
        1 for _n, _t, b in prog[1] for _id, s in b if s.__qualname__.startswith("parallel_step")
    )


def test_parallel_steps_equal_one_thread_the_general_path_and_onnxruntime(threads, monkeypatch):
    mp = _fires()
    sess = ort.InferenceSession(mp.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((1, 3, 47, 47)).astype(np.float32) for _ in range(4)]
    runs, overlapped = {}, []
    real = tp.while_sharing

    def watched(run):
        left = real(run)
        if run is None:
            overlapped.append(left is None)  # the first node's share ran the others
        return left

    monkeypatch.setattr(tp, "while_sharing", watched)
    for n in (1, 2, 3):
        threads(n)
        sim, key, node, port = _sim(mp)
        got = []
        for x in xs:
            sim.evaluate(initializer={key: x})
            got.append({k: v.copy() for k, v in _outputs(sim).items()})
            exp = sess.run(None, {"input": x})[0]
            np.testing.assert_allclose(sim.value(node, port), exp, rtol=1e-4, atol=1e-5)
        # the fire modules' expand pairs and the Relu pairs after them
        assert _parallel_steps(sim) == 6
        runs[n] = got
    assert any(overlapped) and not all(overlapped)  # (a step of Relus shares nothing)
    threads(1)
    slow, key, _, _ = _sim(mp, fast=False)
    for k, x in enumerate(xs):
        slow.evaluate(initializer={key: x})
        want = _outputs(slow)
        for n, got in runs.items():
            assert got[k].keys() == want.keys()
            for name, v in want.items():  # every output port, bit for bit
                assert got[k][name].tobytes() == v.tobytes(), (n, name)


@pytest.mark.parametrize(
    ("shape", "attrs", "dtype"),
    [
        ((1, 64, 111, 111), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, "f4"),
        ((2, 5, 17, 16), {"kernel_shape": [2, 2], "strides": [2, 2]}, "f4"),
        ((1, 7, 19, 20), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, "f8"),
        ((2, 6, 41), {"kernel_shape": [4], "strides": [3], "dilations": [2]}, "f4"),
    ],
)
def test_maxpool_planes_shared_equal_one_thread_and_onnxruntime(shape, attrs, dtype, threads):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(dtype)
    full = {**mp_mod.POOL_ATTRS, "storage_order": 0, **attrs, "outputs_wanted": 1}
    run = mp_mod.prepare_max_pool([(False, None)], full)
    threads(1)
    one = run(x)[0]
    for n in (2, 3):
        threads(n)
        got = run(x)[0]
        assert got.dtype == one.dtype and got.tobytes() == one.tobytes()
    np.testing.assert_array_equal(one, ort_run("MaxPool", [x], attrs)[0])
    np.testing.assert_array_equal(one, onnx_ops.run("MaxPool", [x], attrs)[0])


@pytest.mark.parametrize("model", ["pytorch_to_mdf/cnn_conv_bn_pools", "onnx_to_mdf/torch_cnn"])
def test_corpus_cnns_equal_at_any_thread_count_and_their_oracle(model, threads):
    path = WILD / f"{model}.json"
    oracle = json.loads((WILD / f"{model}.oracle.json").read_text())
    run = oracle["run"]
    init = json.loads((path.parent / run["initializer_file"]).read_text())
    init = {k: np.asarray(v, dtype=np.float32) for k, v in init.items()}
    seen = []
    for n in (1, 2):
        threads(n)
        sim = Simulation(str(path), backend="interpreted")
        for _ in range(3):  # replayed from the third update on
            sim.run(steps=run["steps"], dt=run["dt"], initializer=init)
        seen.append(
            {(nid, p): np.asarray(v) for nid, ps in sim.outputs.items() for p, v in ps.items()}
        )
        for name, want in oracle["expected"].items():
            nid, port = name.split(".", 1)
            np.testing.assert_allclose(sim.value(nid, port), want, rtol=1e-4, atol=1e-5)
    assert seen[0].keys() == seen[1].keys()
    for k, v in seen[0].items():
        assert seen[1][k].tobytes() == v.tobytes(), k


def _net_with_a_failing_branch():
    """A squeeze conv read by a 1x1 expand conv (shared) and by a Reshape to a fixed shape:
    one time step of two independent nodes, the second failing on a new input size."""
    n = _Net(9)
    s = n.node("Relu", [n.conv("input", 3, 8, 1)])
    a = n.node("Relu", [n.conv(s, 8, 32, 1)])
    shape = n.const("shape", np.array([1, 8, 100], np.int64))
    r = n.node("Reshape", [s, shape])
    h = n.node("Concat", [n.node("Flatten", [a], axis=1), n.node("Flatten", [r], axis=1)], axis=1)
    return n.model("input", [1, 3, 10, 10], h, [1, 4000], "branch", 13)


def test_an_error_in_a_parallel_step_is_the_nodes_own_one_line_error(threads, monkeypatch):
    threads(2)
    overlapped = []
    real = tp.while_sharing

    def watched(run):
        left = real(run)
        if run is None:
            overlapped.append(left is None)
        return left

    monkeypatch.setattr(tp, "while_sharing", watched)
    mp = _net_with_a_failing_branch()
    fast, key, _, _ = _sim(mp)
    slow = _sim(mp, fast=False)[0]
    x = np.ones((1, 3, 10, 10), np.float32)
    for _ in range(3):
        fast.evaluate(initializer={key: x})
    assert _parallel_steps(fast) >= 1
    y = np.ones((1, 3, 12, 12), np.float32)  # the Reshape's fixed shape no longer fits
    overlapped.clear()
    with pytest.raises(MDFError) as got:
        fast.evaluate(initializer={key: y})
    assert overlapped == [True]  # the Reshape failed inside the conv's share
    with pytest.raises(MDFError) as want:
        slow.evaluate(initializer={key: y})
    assert got.value.path == want.value.path and "reshape" in got.value.path
    assert got.value.message == want.value.message and "\n" not in str(got.value)
    fast.evaluate(initializer={key: x})  # and the next update runs as before
    slow.evaluate(initializer={key: x})
    for k, v in _outputs(slow).items():
        assert _outputs(fast)[k].tobytes() == v.tobytes(), k


def test_the_cap_bounds_the_threads_and_one_means_the_caller_alone(threads, monkeypatch):
    threads(4)
    assert tp.threads_for(1 << 40, 1) == 4
    monkeypatch.setenv("MDF_ENGINE_BLAS_THREADS", "2")
    assert tp.threads_for(1 << 40, 1) == 2
    counts = []  # the threads of each shared kernel, the caller's included
    real = tp.share

    def counted(claim, total, args_of, n):
        counts.append(n)
        return real(claim, total, args_of, n)

    for mod in (ct, mp_mod):
        monkeypatch.setattr(mod, "share", counted)
    mp = _fires()
    x = np.random.default_rng(0).standard_normal((1, 3, 47, 47)).astype(np.float32)
    sim, key, node, port = _sim(mp)
    for _ in range(3):
        sim.evaluate(initializer={key: x})
    assert counts and max(counts) == 2
    one = sim.value(node, port).copy()

    monkeypatch.setenv("MDF_ENGINE_BLAS_THREADS", "1")
    counts.clear()

    def no_worker(n):
        raise AssertionError("a worker thread was asked for with MDF_ENGINE_BLAS_THREADS=1")

    monkeypatch.setattr(tp, "_workers", no_worker)
    sim2, key, node, port = _sim(mp)
    for _ in range(3):
        sim2.evaluate(initializer={key: x})
    assert counts == [] and sim2.value(node, port).tobytes() == one.tobytes()


def test_a_hook_runs_once_while_a_worker_has_the_items(threads):
    threads(2)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 40, 300)).astype(np.float32)
    w = rng.standard_normal((12, 40)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    ran = []
    assert tp.while_sharing(lambda: ran.append(1)) is None
    y = ct.conv_pointwise_shared(x, w, b, True, 2)
    assert ran == [1] and tp.while_sharing(None) is None  # consumed by the share
    assert np.array_equal(y, ct.conv_pointwise_tiles(x, w, b, True))

    def failing() -> None:
        raise RuntimeError("the hook's error")

    tp.while_sharing(failing)
    with pytest.raises(RuntimeError, match="hook's error"):
        ct.conv_pointwise_shared(x, w, b, True, 2)
    assert tp.while_sharing(None) is None
    left = lambda: None  # noqa: E731 - a hook no share took
    tp.while_sharing(left)
    ct.conv_pointwise_tiles(x, w, b, True)  # not shared: the hook stays
    assert tp.while_sharing(None) is left


def test_two_calling_threads_share_at_once(threads):
    """Two user threads running shared kernels at the same time (one pool of workers, one
    task counter) each get the one-thread values."""
    import threading

    threads(2)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 24, 700)).astype(np.float32)
    w = rng.standard_normal((20, 24)).astype(np.float32)
    b = rng.standard_normal(20).astype(np.float32)
    want = ct.conv_pointwise_tiles(x, w, b, True)
    bad: list = []

    def loop() -> None:
        for _ in range(200):
            got = ct.conv_pointwise_shared(x, w, b, True, 2)
            if got.tobytes() != want.tobytes():
                bad.append(got)

    runners = [threading.Thread(target=loop) for _ in range(2)]
    for t in runners:
        t.start()
    for t in runners:
        t.join(60)
    assert not any(t.is_alive() for t in runners) and not bad
