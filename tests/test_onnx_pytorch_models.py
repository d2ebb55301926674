"""The ONNX package's PyTorch-exported test models, run node by node through ``onnx_ops``.

Every model under ``onnx/backend/test/data/pytorch-converted`` and ``pytorch-operator`` (mostly
opset 6, i.e. the early operator forms: Add with ``broadcast``, Gemm with ``broadcast``,
BatchNormalization with ``is_test``, PRelu per channel, Pad with ``pads`` attributes, ...) is run
with ``mdf_engine.onnx_ops.graph.run_graph`` at the model's opset on its ``test_data_set_0``
inputs, and each output is compared with the stored output (the oracle, written by PyTorch).

Models that fail because of a kernel outside onnx-legacy are marked xfail with the reason.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

from mdf_engine.onnx_ops.graph import run_graph  # noqa: E402

ROOT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
DIRS = ("pytorch-converted", "pytorch-operator")

#: Models expected to fail, with the reason (none at present).
XFAIL: dict[str, str] = {}

#: Tolerances per model where the data needs more than rtol 1e-3 / atol 1e-5.
TOLERANCE: dict[str, tuple[float, float]] = {}


def _models() -> list[tuple[str, str]]:
    out = []
    for d in DIRS:
        base = os.path.join(ROOT, d)
        if os.path.isdir(base):
            out += [(d, m) for m in sorted(os.listdir(base))
                    if os.path.exists(os.path.join(base, m, "model.onnx"))]
    return out


MODELS = _models()


def _params():
    for d, m in MODELS:
        marks = [pytest.mark.xfail(reason=XFAIL[m], strict=False)] if m in XFAIL else []
        yield pytest.param(d, m, id=f"{d}/{m}", marks=marks)


def _load(path: str) -> np.ndarray:
    return numpy_helper.to_array(onnx.load_tensor(path))


def test_models_are_found():
    assert len(MODELS) >= 100, f"expected the ONNX package's PyTorch test models, found {len(MODELS)}"


@pytest.mark.parametrize("directory,name", list(_params()))
def test_pytorch_model(directory: str, name: str):
    path = os.path.join(ROOT, directory, name)
    model = onnx.load(os.path.join(path, "model.onnx"))
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    data = os.path.join(path, "test_data_set_0")
    inputs = [_load(f) for f in sorted(glob.glob(os.path.join(data, "input_*.pb")))]
    expected = [_load(f) for f in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    assert len(names) == len(inputs)
    with np.errstate(all="ignore"):
        result = run_graph(model.graph, dict(zip(names, inputs)), opset)
    rtol, atol = TOLERANCE.get(name, (1e-3, 1e-5))
    outputs = [o.name for o in model.graph.output]
    assert len(outputs) == len(expected)
    for out_name, exp in zip(outputs, expected):
        got = np.asarray(result[out_name])
        assert got.shape == exp.shape, f"{name}: {out_name} shape {got.shape} != {exp.shape}"
        assert got.dtype.kind == exp.dtype.kind, f"{name}: {out_name} dtype {got.dtype}"
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, err_msg=f"{name}: {out_name}")
