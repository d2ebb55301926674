"""Benchmark cases for the recurrent ONNX operators (RNN, GRU, LSTM).

``CASES`` is a list of ``{"op", "inputs", "attributes", "size"}`` dicts (plus the optional
``size_class``, ``n_outputs`` and ``opset`` keys the runner understands), imported by the shared
operator speed runner (benchmarks/onnx_ops_speed.py). Run this file directly to time each case
against onnxruntime (single-threaded) and print the ratio ours / onnxruntime measured in this
run (the two engines' calls alternate one by one). Nothing here asserts a timing. Set
``OPENBLAS_NUM_THREADS=1`` (and ``NUMBA_NUM_THREADS=1``) in the environment for a
single-threaded comparison, as the shared runner does.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

#: op -> (its number of gates, its number of outputs)
_SHAPES = {"LSTM": (4, 3), "GRU": (3, 2)}


def _case(op: str, seq: int, batch: int, inp: int, hidden: int, seed: int) -> dict:
    """One forward layer of ``op`` with small random float32 weights."""
    gates, n_outputs = _SHAPES[op]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((seq, batch, inp)).astype(np.float32)
    W = (0.1 * rng.standard_normal((1, gates * hidden, inp))).astype(np.float32)
    R = (0.1 * rng.standard_normal((1, gates * hidden, hidden))).astype(np.float32)
    B = (0.1 * rng.standard_normal((1, 2 * gates * hidden))).astype(np.float32)
    return {
        "op": op,
        "inputs": [X, W, R, B],
        "attributes": {"hidden_size": hidden},
        "size": f"seq{seq} batch{batch} in{inp} hidden{hidden}",
        "size_class": "recurrent",
        "n_outputs": n_outputs,
        "opset": 14,
    }


CASES = [
    _case("LSTM", 50, 1, 64, 128, seed=0),  # the case: within 1.5x of onnxruntime
    _case("GRU", 50, 1, 64, 128, seed=1),
    _case("LSTM", 50, 4, 64, 128, seed=0),  # batches > 1 take the two-entries-per-pass recurrence
    _case("GRU", 50, 4, 64, 128, seed=1),
]


def _ort_session(case: dict):
    import onnx
    import onnxruntime as ort
    from onnx import helper

    names, vis = [], []
    for k, x in enumerate(case["inputs"]):
        names.append(f"in{k}")
        vis.append(
            helper.make_tensor_value_info(
                f"in{k}", helper.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)
            )
        )
    outs = [f"out{k}" for k in range(case["n_outputs"])]
    g = helper.make_graph(
        [helper.make_node(case["op"], names, outs, **case["attributes"])],
        "bench",
        vis,
        [onnx.ValueInfoProto(name=o) for o in outs],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess, dict(zip(names, case["inputs"]))


def main(calls: int = 600) -> None:
    """Calls the two engines alternately, one call each at a time (so load from other processes
    hits both alike), and prints the median and the fastest time of each and their ratios."""
    from mdf_engine import onnx_ops

    for case in CASES:
        sess, feeds = _ort_session(case)

        def ours(c=case):
            return onnx_ops.run(
                c["op"], c["inputs"], c["attributes"], opset=c["opset"], num_outputs=c["n_outputs"]
            )

        def theirs(s=sess, f=feeds):
            return s.run(None, f)

        ours()
        theirs()
        a, b = [], []
        for _ in range(calls):
            t0 = time.perf_counter()
            ours()
            t1 = time.perf_counter()
            theirs()
            t2 = time.perf_counter()
            a.append(t1 - t0)
            b.append(t2 - t1)
        ma, mb = statistics.median(a), statistics.median(b)
        print(
            f"{case['op']:5s} {case['size']:32s} median ours {ma * 1e6:8.1f} us  onnxruntime "
            f"{mb * 1e6:8.1f} us  ratio {ma / mb:5.2f}   fastest ratio {min(a) / min(b):5.2f}"
        )


if __name__ == "__main__":
    main()
