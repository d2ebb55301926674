"""The Hexagon NN quantization formulas of ``../shared/notes`` written in numpy: the oracle the
Hexagon tests compare the kernels against.

A uint8 tensor comes with a float range ``[mn, mx]``: the code step is
``max(1e-4, mx - mn) / 255`` (float32), the zero code ``floor(-mn / step + 0.5)``; a code ``q``
stands for ``mn + q * step``. Shared by the ``test_hexagon_*`` files.
"""

from __future__ import annotations

from typing import Any

import numpy as np

F = np.float32


def s(v: float) -> np.ndarray:
    """A scalar range bound as Hexagon passes it: a float32 tensor of shape (1, 1, 1, 1)."""
    return np.full((1, 1, 1, 1), v, dtype=F)


def step(mn: float, mx: float) -> np.float32:
    return F(max(F(1e-4), F(mx) - F(mn)) / F(255))


def zero(mn: float, mx: float) -> int:
    return int(np.floor((F(0) - F(mn)) / step(mn, mx) + 0.5))


def deq(q: Any, mn: float, mx: float) -> np.ndarray:
    """Codes to values, in float32."""
    return F(mn) + np.asarray(q).astype(F) * step(mn, mx)


def real(q: Any, mn: float, mx: float) -> np.ndarray:
    """Codes to values as offsets from the zero code, in float64."""
    return (np.asarray(q).astype(np.int64) - zero(mn, mx)) * float(step(mn, mx))


def real32(q: Any, mn: float, mx: float) -> np.ndarray:
    """:func:`real` in float32."""
    return (np.asarray(q).astype(np.int64) - zero(mn, mx)).astype(F) * step(mn, mx)


def quant(x: Any, mn: float, mx: float) -> np.ndarray:
    """Values to codes, rounding halves up and clipping to [0, 255]."""
    v = (np.asarray(x, F) - F(mn)) / step(mn, mx)
    return np.clip(np.floor(v + 0.5), 0, 255).astype(np.uint8)


def ort(
    op_type: str,
    inputs: dict[str, Any],
    attrs: dict[str, Any] | None = None,
    n_out: int = 1,
    opset: int = 18,
) -> list[np.ndarray]:
    """Run one onnx operator in onnxruntime (the oracle where ONNX has the same op)."""
    import onnx
    import onnxruntime
    from onnx import helper

    names = list(inputs)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op_type, names, outs, **(attrs or {}))
    dt = {
        np.dtype(np.float32): onnx.TensorProto.FLOAT,
        np.dtype(np.int64): onnx.TensorProto.INT64,
        np.dtype(np.int32): onnx.TensorProto.INT32,
    }
    ins = [
        helper.make_tensor_value_info(n, dt[np.asarray(v).dtype], np.shape(v))
        for n, v in inputs.items()
    ]
    g0 = helper.make_graph([node], "g", ins, [onnx.ValueInfoProto(name=o) for o in outs])
    m0 = helper.make_model(g0, opset_imports=[helper.make_opsetid("", opset)])
    typed = {v.name: v for v in onnx.shape_inference.infer_shapes(m0).graph.value_info}
    outv = [
        typed.get(o) or helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outs
    ]
    graph = helper.make_graph([node], "g", ins, outv)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return sess.run(None, {n: np.asarray(v) for n, v in inputs.items()})
