"""The ONNX package's PyTorch-exported test models, run node by node through ``onnx_ops``.

Every model under ``onnx/backend/test/data/pytorch-converted`` and ``pytorch-operator`` (mostly
opset 6, i.e. the early operator forms: Add with ``broadcast``, Gemm with ``broadcast``,
BatchNormalization with ``is_test``, PRelu per channel, Pad with ``pads`` attributes, ...) is run
with ``mdf_engine.onnx_ops.graph.run_graph`` at the model's opset on its ``test_data_set_0``
inputs, and each output is compared with the stored output (the oracle, written by PyTorch).

Models that fail because of a kernel outside onnx-legacy are marked xfail with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx_cases import pytorch_case, pytorch_models  # noqa: E402

from mdf_engine.onnx_ops.graph import run_graph  # noqa: E402

#: Models expected to fail, with the reason (none at present).
XFAIL: dict[str, str] = {}

#: Tolerances per model where the data needs more than rtol 1e-3 / atol 1e-5.
TOLERANCE: dict[str, tuple[float, float]] = {}


MODELS = pytorch_models()


def _params():
    for d, m in MODELS:
        marks = [pytest.mark.xfail(reason=XFAIL[m], strict=False)] if m in XFAIL else []
        yield pytest.param(d, m, id=f"{d}/{m}", marks=marks)


def test_models_are_found():
    assert len(MODELS) >= 100, (
        f"expected the ONNX package's PyTorch test models, found {len(MODELS)}"
    )


@pytest.mark.parametrize("directory,name", list(_params()))
def test_pytorch_model(directory: str, name: str):
    case = pytorch_case(directory, name)
    model = case.proto
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    with np.errstate(all="ignore"):
        result = run_graph(model.graph, case.feeds, opset)
    rtol, atol = TOLERANCE.get(name, (1e-3, 1e-5))
    for out_name, exp in zip(case.outputs, case.expected):
        got = np.asarray(result[out_name])
        assert got.shape == exp.shape, f"{name}: {out_name} shape {got.shape} != {exp.shape}"
        assert got.dtype.kind == exp.dtype.kind, f"{name}: {out_name} dtype {got.dtype}"
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, err_msg=f"{name}: {out_name}")
