"""The registry: version lookup by opset, attribute defaults and the errors of ``call``.

Uses a private :class:`~mdf_engine.registry.Registry` so the shared table is untouched.
"""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import onnx_ops
from mdf_engine.errors import MDFError
from mdf_engine.registry import REQUIRED, OpSchema, Registry


def _schema(since: int, scale: float) -> OpSchema:
    def kernel(x, *, k=None, bias=0.0):
        return (np.asarray(x) * k * scale + bias,)

    return OpSchema(
        namespace="onnx",
        op="Scale",
        inputs=("x",),
        attributes={"k": REQUIRED, "bias": 0.0},
        outputs=("y",),
        kernel=kernel,
        since=since,
    )


def test_lookup_picks_the_newest_version_up_to_the_opset_and_sees_later_additions():
    reg = Registry()
    reg.add(_schema(1, 1.0))
    assert reg.lookup("onnx::Scale", 5).since == 1
    assert reg.lookup("onnx::Scale").since == 1
    # a version registered after a lookup is found by the same lookup afterwards
    reg.add(_schema(4, 10.0))
    assert reg.lookup("onnx::Scale", 5).since == 4
    assert reg.lookup("onnx::Scale", 3).since == 1
    assert reg.lookup("onnx::Scale").since == 4
    with pytest.raises(MDFError, match="no version at opset 0"):
        reg.lookup("onnx::Scale", 0)
    with pytest.raises(MDFError, match="unknown function 'onnx::Nope'"):
        reg.lookup("onnx::Nope", 3)


def test_call_fills_defaults_and_names_bad_attributes():
    sch = _schema(1, 1.0)
    np.testing.assert_array_equal(sch.call([np.array([1.0, 2.0])], {"k": 3.0})[0], [3.0, 6.0])
    np.testing.assert_array_equal(sch.call([np.array([1.0])], {"k": 2.0, "bias": 1.0})[0], [3.0])
    with pytest.raises(MDFError, match="onnx::Scale needs attribute 'k'"):
        sch.call([np.array([1.0])], {"bias": 1.0})
    with pytest.raises(MDFError, match="onnx::Scale has no attribute 'kk'"):
        sch.call([np.array([1.0])], {"k": 1.0, "kk": 2.0})
    # the defaults are copied per call: a call's attributes do not leak into the next
    sch.call([np.array([1.0])], {"k": 1.0, "bias": 5.0})
    np.testing.assert_array_equal(sch.call([np.array([1.0])], {"k": 1.0})[0], [1.0])


def test_onnx_run_uses_the_opset_version():
    # Softmax changed at opset 13 (a single axis instead of flattening from `axis` on):
    # numpy formulas of both semantics are the oracle
    x = np.arange(6, dtype=np.float64).reshape(2, 3) / 4
    flat = np.exp(x) / np.exp(x).sum()
    per_row = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(onnx_ops.run("Softmax", [x], {"axis": 0}, 11)[0], flat, rtol=1e-12)
    np.testing.assert_allclose(
        onnx_ops.run("Softmax", [x], {"axis": 1}, 13)[0], per_row, rtol=1e-12
    )
    col = np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(onnx_ops.run("Softmax", [x], {"axis": 0}, 13)[0], col, rtol=1e-12)
