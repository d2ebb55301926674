"""ONNX backend node test cases as plain data, for the conformance tests of ``onnx_ops``.

The oracle is the ONNX package's own ``onnx.backend.test.case.node.collect_testcases()``: each
single-node case gives the node (op, attributes, which inputs are omitted), the opset it is
stamped with, input arrays and expected output arrays. Nothing here computes an expected value
except :func:`ort_run` and :func:`ort_model_run`, which ask the other oracle, onnxruntime, for
one node's (or one model's) outputs; :func:`check_against_ort` compares ``onnx_ops.run`` with
:func:`ort_run`.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SKIPS_FILE = Path(__file__).parent / "data" / "onnx_conformance_skips.tsv"


@dataclass
class NodeCase:
    name: str
    op: str
    domain: str
    opset: int
    attributes: dict[str, Any]
    inputs: list[Any]  # None for an omitted optional input
    expected: list[Any]  # None for an output the node does not produce
    rtol: float
    atol: float
    n_outputs: int = 1  # the node's output count (an equal Split needs it)


def _attr_value(a) -> Any:
    from onnx import AttributeProto, helper, numpy_helper

    if a.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(a.t)
    if a.type == AttributeProto.TENSORS:
        return [numpy_helper.to_array(t) for t in a.tensors]
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8") for x in v]
    return v  # GraphProto stays a GraphProto


def _to_numpy(x) -> Any:
    if isinstance(x, np.ndarray) or x is None:
        return x
    if isinstance(x, list):
        return [_to_numpy(e) for e in x]
    if hasattr(x, "data_type") and hasattr(x, "dims"):  # a TensorProto (e.g. Cast's cases)
        from onnx import numpy_helper

        return numpy_helper.to_array(x)
    return np.asarray(x)


@functools.lru_cache(maxsize=1)
def node_cases() -> tuple[NodeCase, ...]:
    """Every single-node case of the ONNX package, converted once per process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        raw = collect_testcases()
    out = []
    for c in raw:
        g = c.model.graph
        if len(g.node) != 1 or not c.data_sets:
            continue
        node = g.node[0]
        opset = max(
            (o.version for o in c.model.opset_import if o.domain in ("", node.domain)), default=0
        )
        graph_inputs = [i.name for i in g.input]
        feeds = dict(zip(graph_inputs, c.data_sets[0][0]))
        inputs = [(_to_numpy(feeds[n]) if n else None) for n in node.input]
        outs = dict(zip([o.name for o in g.output], c.data_sets[0][1]))
        expected = [(_to_numpy(outs[n]) if n in outs else None) for n in node.output]
        out.append(
            NodeCase(
                name=c.name,
                op=node.op_type,
                domain=node.domain,
                opset=opset,
                attributes={a.name: _attr_value(a) for a in node.attribute},
                inputs=inputs,
                expected=expected,
                rtol=c.rtol,
                atol=c.atol,
                n_outputs=len(node.output),
            )
        )
    return tuple(out)


def load_skips() -> dict[str, tuple[str, str]]:
    """``case name -> (category, reason)`` from the one skip file.

    Category ``era``: outside the spec's era (a dtype such as float8/float16/bfloat16/int4, or an
    input/attribute introduced after the spec's operator set); left out of the pass-rate
    denominator. Category ``fail``: a known failure of ours; counted as a failure.
    """
    skips = {}
    if SKIPS_FILE.exists():
        for line in SKIPS_FILE.read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, category, reason = (line.split("\t") + ["", ""])[:3]
            skips[name.strip()] = (category.strip(), reason.strip())
    return skips


def compare(case: NodeCase, got: list[Any]) -> None:
    """Assert that our outputs equal the case's expected outputs (values, shape and dtype kind)."""
    for k, exp in enumerate(case.expected):
        if exp is None:
            continue
        assert k < len(got), f"{case.name}: output {k} missing"
        g = got[k]
        if isinstance(exp, list):  # a sequence output
            assert isinstance(g, (list, tuple)) and len(g) == len(exp), f"{case.name}: output {k}"
            for e_i, g_i in zip(exp, g):
                _compare_array(case, k, np.asarray(e_i), np.asarray(g_i))
        else:
            _compare_array(case, k, np.asarray(exp), np.asarray(g))


def _compare_array(case: NodeCase, k: int, exp: np.ndarray, got: np.ndarray) -> None:
    assert got.shape == exp.shape, f"{case.name}: output {k} shape {got.shape} != {exp.shape}"
    if exp.dtype.kind in "OUS":
        assert got.tolist() == exp.tolist(), f"{case.name}: output {k} differs"
        return
    assert got.dtype == exp.dtype, f"{case.name}: output {k} dtype {got.dtype} != {exp.dtype}"
    if exp.dtype.kind in "fc":
        np.testing.assert_allclose(
            got,
            exp,
            rtol=max(case.rtol, 1e-5),
            atol=max(case.atol, 1e-6),
            equal_nan=True,
            err_msg=f"{case.name}: output {k}",
        )
    else:
        np.testing.assert_array_equal(got, exp, err_msg=f"{case.name}: output {k}")


# -- the ONNX package's PyTorch-exported test models (model.onnx + test_data_set_0) -----------

PYTORCH_DIRS = ("pytorch-converted", "pytorch-operator")


def _pytorch_root() -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data"


def pytorch_models() -> list[tuple[str, str]]:
    """``(folder, model)`` of every PyTorch test model that ships a ``model.onnx``."""
    out = []
    for d in PYTORCH_DIRS:
        base = _pytorch_root() / d
        if base.is_dir():
            out += [
                (d, m)
                for m in sorted(p.name for p in base.iterdir())
                if (base / m / "model.onnx").exists()
            ]
    return out


@dataclass
class PytorchCase:
    """One PyTorch test model: the ModelProto, its non-initializer inputs fed by the stored
    ``input_*.pb`` and the stored ``output_*.pb`` (the oracle) in graph-output order."""

    proto: Any
    feeds: dict[str, np.ndarray]
    outputs: list[str]
    expected: list[np.ndarray]


def pytorch_model_path(folder: str, model: str) -> Path:
    """The ``model.onnx`` of one PyTorch test model."""
    return _pytorch_root() / folder / model / "model.onnx"


def pytorch_case(folder: str, model: str) -> PytorchCase:
    import onnx
    from onnx import numpy_helper

    path = _pytorch_root() / folder / model
    proto = onnx.load(str(pytorch_model_path(folder, model)))
    data = path / "test_data_set_0"

    def tensors(prefix: str) -> list[np.ndarray]:
        return [
            numpy_helper.to_array(onnx.load_tensor(str(f)))
            for f in sorted(data.glob(f"{prefix}_*.pb"))
        ]

    inputs, expected = tensors("input"), tensors("output")
    init = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in init]
    assert len(names) == len(inputs), f"{model}: {len(names)} inputs, {len(inputs)} stored"
    outputs = [o.name for o in proto.graph.output]
    assert len(outputs) == len(expected), f"{model}: {len(outputs)} outputs, {len(expected)} stored"
    return PytorchCase(proto, dict(zip(names, inputs)), outputs, expected)


def ort_model_run(model: Any, feeds: dict) -> list:
    """Run an ONNX ``ModelProto`` in onnxruntime (single-threaded, CPU): its outputs' values."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ort_run(op: str, inputs: list, attributes: dict, n_out: int = 1, opset: int = 13) -> list:
    """Run one node in onnxruntime (single-threaded); ``None`` inputs are omitted."""
    import onnx
    from onnx import helper

    names = [f"i{k}" if x is not None else "" for k, x in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, [f"o{k}" for k in range(n_out)], **attributes)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype), np.shape(x)
            )
            for n, x in zip(names, inputs)
            if n
        ],
        [onnx.ValueInfoProto(name=f"o{k}") for k in range(n_out)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return ort_model_run(model, {n: x for n, x in zip(names, inputs) if n})


def check_against_ort(
    op: str,
    inputs: list,
    attrs: dict | None = None,
    opset: int = 13,
    n_out: int = 1,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """``onnx_ops.run`` of one node gives onnxruntime's outputs: at least ``n_out`` of them,
    each of its shape and dtype, equal within ``rtol``/``atol``."""
    from mdf_engine import onnx_ops

    exp = ort_run(op, inputs, attrs or {}, n_out, opset)
    got = onnx_ops.run(op, inputs, attrs, opset=opset)
    assert len(got) >= n_out
    for e, g in zip(exp, got):
        g = np.asarray(g)
        assert g.shape == e.shape, f"{op} {attrs}: shape {g.shape} != {e.shape}"
        assert g.dtype == e.dtype, f"{op} {attrs}: dtype {g.dtype} != {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{op} {attrs}")
