"""Early (opset 1) unary math and activation forms, and the opset 1-12 Softmax family, as adapters
over the ``elementwise`` and ``activations`` family kernels.

What differs from the standard forms: opset 1 has the attribute ``consumed_inputs`` (accepted and
ignored); the seed's Selu defaults are alpha 1.6732, gamma 1.0507; PRelu's 1-D slope of length C
applies per channel (axis 1, Caffe2 style); integer inputs are computed in float64, except for Abs,
Neg and Relu, which keep the integer dtype. Softmax/LogSoftmax/Hardmax coerce the input to 2-D at
``axis`` (default 1), as the standard opset-1 version does; those legacy versions are therefore
shadowed and reached only through :func:`~mdf_engine.onnx_ops.variants.legacy.call`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from .. import _ew_kernels as K
from ..activations import axis_op
from ..elementwise import binary, unary
from .legacy import arr, coerce_2d, float_dtype, legacy_op

#: op -> (family unary code, integer inputs keep their dtype)
_UNARY = {
    "Abs": (K.ABS, True),
    "Ceil": (K.CEIL, False),
    "Exp": (K.EXP, False),
    "Floor": (K.FLOOR, False),
    "Log": (K.LOG, False),
    "Neg": (K.NEG, True),
    "Reciprocal": (K.RECIP, False),
    "Relu": (K.RELU, True),
    "Sigmoid": (K.SIGMOID, False),
    "Sqrt": (K.SQRT, False),
    "Tanh": (K.TANH, False),
    "Elu": (K.ELU, False),
    "LeakyRelu": (K.LEAKY, False),
    "Selu": (K.SELU, False),
}


def _unary(op: str, X: Any, p1: float = 0.0, p2: float = 0.0) -> tuple:
    code, ints = _UNARY[op]
    x = arr(X)
    if not (ints and x.dtype.kind in "iu"):
        x = float_dtype(x)
    return (unary(code, x, p1, p2, name=f"onnx::{op}", ints=ints),)


def _make_unary(op: str, names: tuple[str, str]) -> None:
    @legacy_op(op, inputs=(names[0],), outputs=(names[1],), attributes={"consumed_inputs": None})
    def kernel(X, *, consumed_inputs=None):
        return _unary(op, X)

    kernel.__doc__ = f"{op} of opset 1 (accepts and ignores ``consumed_inputs``)."


for _op in ("Abs", "Ceil", "Floor", "Neg", "Reciprocal", "Relu", "Sigmoid", "Sqrt"):
    _make_unary(_op, ("X", "Y"))
for _op in ("Exp", "Log", "Tanh"):
    _make_unary(_op, ("input", "output"))


@legacy_op("Elu", inputs=("X",), attributes={"alpha": 1.0, "consumed_inputs": None})
def elu_legacy(X, *, alpha=1.0, consumed_inputs=None):
    """Elu of opset 1: x if x >= 0 else alpha*(exp(x)-1)."""
    return _unary("Elu", X, alpha)


@legacy_op("LeakyRelu", inputs=("X",), attributes={"alpha": 0.01, "consumed_inputs": None})
def leaky_relu_legacy(X, *, alpha=0.01, consumed_inputs=None):
    """LeakyRelu of opset 1: x if x >= 0 else alpha*x (alpha default 0.01)."""
    return _unary("LeakyRelu", X, alpha)


@legacy_op(
    "Selu", inputs=("X",), attributes={"alpha": 1.6732, "gamma": 1.0507, "consumed_inputs": None}
)
def selu_legacy(X, *, alpha=1.6732, gamma=1.0507, consumed_inputs=None):
    """Selu of opset 1 (seed defaults alpha 1.6732, gamma 1.0507)."""
    return _unary("Selu", X, alpha, gamma)


@legacy_op("PRelu", inputs=("X", "slope"), attributes={"consumed_inputs": None})
def prelu_legacy(X, slope, *, consumed_inputs=None):
    """PRelu of opsets 1-6: a slope of size 1 is shared; a 1-D slope of length C applies per
    channel (axis 1, Caffe2 style); any other slope must broadcast numpy-style onto X."""
    X = float_dtype(arr(X))
    s = arr(slope).astype(X.dtype)
    if s.size == 1:
        s = s.reshape(())
    elif s.ndim == 1 and X.ndim >= 2 and s.shape[0] == X.shape[1]:
        s = s.reshape((1, -1) + (1,) * (X.ndim - 2))
    try:
        ok = np.broadcast_shapes(s.shape, X.shape) == X.shape
    except ValueError:
        ok = False
    if not ok:
        raise MDFError(
            f"onnx::PRelu (opset < 7): slope of shape {s.shape} is neither per "
            f"channel nor broadcastable to {X.shape}"
        )
    return (binary(K.PRELU, X, s, "onnx::PRelu"),)


# ---------------------------------------------------------------- Softmax family (2-D coercion)


def _make_softmax(op: str, code: int) -> None:
    @legacy_op(op, inputs=("input",), attributes={"axis": 1}, outputs=("output",))
    def kernel(input, *, axis=1):
        x = float_dtype(arr(input))
        x2 = x.reshape(coerce_2d(x.shape, int(axis)))
        return (axis_op(code, x2, 1, False, f"onnx::{op}").reshape(x.shape),)

    kernel.__doc__ = (
        f"{op} of opsets 1-12: the input is coerced to 2-D at ``axis`` "
        "(default 1) and normalised jointly over all trailing dims."
    )


for _op, _code in (("Softmax", K.SOFTMAX), ("LogSoftmax", K.LOGSOFTMAX), ("Hardmax", K.HARDMAX)):
    _make_softmax(_op, _code)
