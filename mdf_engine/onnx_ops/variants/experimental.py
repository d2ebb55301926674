"""The 9 ``experimental`` operators of the early ONNX document (seed 002), namespace ``onnx-exp``.

Called as ``onnx::<Op>`` like the standard operators (none of these names exists in the standard
set): ATen, Caffe2ConvTranspose, ConstantFill, FC, GRUUnit, GivenTensorFill, Normalize, Scale,
SpatialBN. Semantics follow the seed's text; where the seed is silent (GivenTensorFill, GRUUnit's
gate layout, ATen's operator names) the Caffe2 behaviour that the text describes is used and said
so in the kernel's docstring.

ATen has no computable semantics in the seed ("allowing ATen operations to be accessed directly");
the kernel dispatches the attribute ``operator`` over a small documented set of elementwise and
matrix functions (:data:`ATEN_OPERATORS`) and raises an :class:`MDFError` for any other name.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ...errors import MDFError
from ...registry import register
from .. import _ew_kernels as K
from ..elementwise import binary, unary
from ..linalg import gemm
from .legacy import arr as _arr
from .legacy import coerce_2d, keep_half, standard
from .legacy import float_dtype as _float_dtype
from .legacy_nn import batch_norm
from .legacy_shape import dtype_of

NS = "onnx-exp"


# ---------------------------------------------------------------- ATen

#: ATen operator names accepted by ``onnx::ATen`` (attribute ``operator``): name -> arity.
ATEN_OPERATORS = {
    "abs": 1,
    "neg": 1,
    "exp": 1,
    "log": 1,
    "sqrt": 1,
    "sigmoid": 1,
    "tanh": 1,
    "relu": 1,
    "add": 2,
    "sub": 2,
    "mul": 2,
    "div": 2,
    "mm": 2,
    "matmul": 2,
}


#: ATen name -> the family's elementwise op code
_UN = {
    "abs": K.ABS,
    "neg": K.NEG,
    "exp": K.EXP,
    "log": K.LOG,
    "sqrt": K.SQRT,
    "sigmoid": K.SIGMOID,
    "tanh": K.TANH,
    "relu": K.RELU,
}
_BIN = {"add": K.ADD, "sub": K.SUB, "mul": K.MUL, "div": K.DIV}


@register(
    NS,
    "ATen",
    inputs=("inputs",),
    variadic=True,
    outputs=("outputs",),
    attributes={"operator": ""},
    python_only=True,
)
@keep_half
def aten(*inputs, operator=""):
    """ATen (seed 002, experimental): run the ATen function named by ``operator`` (the attribute
    PyTorch's exporter writes). Supported: abs neg exp log sqrt sigmoid tanh relu (one input),
    add sub mul div (numpy broadcasting), mm matmul; anything else is an MDFError."""
    name = operator.decode() if isinstance(operator, bytes) else str(operator)
    if name not in ATEN_OPERATORS:
        raise MDFError(
            f"onnx::ATen: operator {name!r} is not supported; supported ATen "
            f"operators: {', '.join(sorted(ATEN_OPERATORS))}"
        )
    args = [a for a in inputs if a is not None]
    if len(args) != ATEN_OPERATORS[name]:
        raise MDFError(f"onnx::ATen {name} takes {ATEN_OPERATORS[name]} input(s), got {len(args)}")
    if name in _UN:
        return (unary(_UN[name], _float_dtype(_arr(args[0])), name=f"onnx::ATen {name}"),)
    a = _float_dtype(_arr(args[0]))
    b = _arr(args[1]).astype(a.dtype)
    if name in ("mm", "matmul"):
        if name == "mm" and (a.ndim != 2 or b.ndim != 2):
            raise MDFError(f"onnx::ATen mm needs 2-D inputs, got {a.shape} and {b.shape}")
        return (np.matmul(a, b),)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise MDFError(
            f"onnx::ATen {name}: shapes {a.shape} and {b.shape} do not broadcast"
        ) from None
    return (binary(_BIN[name], a, b, f"onnx::ATen {name}"),)


# ---------------------------------------------------------------- Caffe2ConvTranspose


@register(
    NS,
    "Caffe2ConvTranspose",
    inputs=("X", "filter", "bias"),
    outputs=("Y",),
    attributes={"dilations": None, "group": 1, "kernel_shape": None, "pads": None, "strides": None},
)
@keep_half
def caffe2_conv_transpose(
    X, filter, bias, *, dilations=None, group=1, kernel_shape=None, pads=None, strides=None
):
    """Caffe2ConvTranspose (seed 002): X (N, C, H, W), filter (C, M/group, kH, kW) (the ONNX
    ConvTranspose layout, as in Caffe2), bias (M); output size ``stride*(in-1) +
    (k-1)*dilation + 1 - pad_begin - pad_end``; no auto_pad/output_padding/output_shape. Runs
    the standard ConvTranspose kernel."""
    x = _float_dtype(_arr(X))
    attrs = {
        "dilations": dilations,
        "group": int(group),
        "kernel_shape": kernel_shape,
        "pads": pads,
        "strides": strides,
    }
    w = _arr(filter).astype(x.dtype)
    b = None if bias is None else _arr(bias).astype(x.dtype).ravel()
    return standard("ConvTranspose").call(
        [x, w, b], {k: v for k, v in attrs.items() if v is not None}
    )


# ---------------------------------------------------------------- fills


def _fill_shape(op: str, inp: Any, shape: Any, extra_shape: Any, input_as_shape: int) -> tuple:
    extra = tuple(int(v) for v in (extra_shape or ()))
    if inp is None:
        if extra:
            raise MDFError(f"onnx::{op}: 'extra_shape' needs an input")
        return tuple(int(v) for v in (shape or ()))
    if shape:
        raise MDFError(f"onnx::{op}: cannot set 'shape' and pass an input at the same time")
    a = _arr(inp)
    if input_as_shape:
        if a.ndim != 1:
            raise MDFError(
                f"onnx::{op}: with input_as_shape=1 the input must be a 1-D shape, "
                f"got rank {a.ndim}"
            )
        return tuple(int(v) for v in a) + extra
    return a.shape + extra


@register(
    NS,
    "ConstantFill",
    inputs=("input",),
    optional=("input",),
    outputs=("output",),
    attributes={
        "dtype": None,
        "extra_shape": None,
        "input_as_shape": 0,
        "shape": None,
        "value": 0.0,
    },
)
@keep_half
def constant_fill(
    input=None, *, dtype=None, extra_shape=None, input_as_shape=0, shape=None, value=0.0
):
    """ConstantFill (seed 002): a tensor filled with ``value``. Shape: ``shape`` without input;
    the input's shape (+ ``extra_shape``); or, with ``input_as_shape=1``, the input's values
    (+ ``extra_shape``). dtype: the ``dtype`` enum (float, int32, int64, bool), else float32."""
    shp = _fill_shape("ConstantFill", input, shape, extra_shape, input_as_shape)
    dt = np.dtype(np.float32) if dtype is None else dtype_of(dtype)
    if dt not in (np.float32, np.float64, np.int32, np.int64, np.bool_):
        raise MDFError(f"onnx::ConstantFill supports float, int32, int64 and bool, got {dt}")
    return (np.full(shp, value, dtype=dt),)


@register(
    NS,
    "GivenTensorFill",
    inputs=("shape",),
    optional=("shape",),
    outputs=("X",),
    attributes={"extra_shape": None, "input_as_shape": 0, "shape": None, "values": None},
)
@keep_half
def given_tensor_fill(
    shape_input=None, *, extra_shape=None, input_as_shape=0, shape=None, values=None
):
    """GivenTensorFill (seed 002 lists only the attributes; Caffe2 behaviour): ``values`` laid
    out row-major (float32) in the shape resolved as for ConstantFill; the number of values
    must equal the number of elements."""
    shp = _fill_shape("GivenTensorFill", shape_input, shape, extra_shape, input_as_shape)
    vals = np.asarray([] if values is None else values, dtype=np.float32)
    if vals.size != int(np.prod(shp, dtype=np.int64)):
        raise MDFError(f"onnx::GivenTensorFill: {vals.size} values do not fill shape {shp}")
    return (vals.reshape(shp),)


# ---------------------------------------------------------------- FC, Scale, Normalize


@register(NS, "FC", inputs=("X", "W", "b"), outputs=("Y",), attributes={"axis": 1, "axis_w": 1})
@keep_half
def fc(X, W, b, *, axis=1, axis_w=1):
    """FC (seed 002): X coerced to 2-D (M, K) at ``axis``, W coerced at ``axis_w`` to (N, K),
    Y = X W^T + b (the formula; the seed's "KxN" for W contradicts it), Y 2-D (M, N)."""
    x = _float_dtype(_arr(X))
    w = _arr(W).astype(x.dtype)
    x2 = np.ascontiguousarray(x.reshape(coerce_2d(x.shape, int(axis))))
    w2 = np.ascontiguousarray(w.reshape(coerce_2d(w.shape, int(axis_w))))
    bb = _arr(b).astype(x.dtype).ravel()
    if x2.shape[1] != w2.shape[1] or bb.size != w2.shape[0]:
        raise MDFError(
            f"onnx::FC: X as {x2.shape}, W as {w2.shape} and b of {bb.size} values "
            "do not fit (X: M x K, W: N x K, b: N)"
        )
    return gemm(x2, w2, bb, transB=1)


@numba.njit(cache=True)
def _scale_kernel(x, s):
    return x * s


@register(
    NS,
    "Scale",
    inputs=("input",),
    outputs=("output",),
    attributes={"scale": 1.0},
    jit=_scale_kernel,
)
@keep_half
def scale(input, *, scale=1.0):
    """Scale (seed 002): output = scale * input, elementwise."""
    x = _float_dtype(_arr(input))
    return (binary(K.MUL, x, np.asarray(scale, dtype=x.dtype), "onnx::Scale"),)


@numba.njit(cache=True)
def _l2_rows(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[i, j] * x[i, j]
        nrm = np.sqrt(s)
        if nrm < 1e-12:
            nrm = 1e-12
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] / nrm
    return out


@register(NS, "Normalize", inputs=("input",), outputs=("output",))
@keep_half
def normalize(input):
    """Normalize (seed 002): L2-normalisation along the last dimension, y = x / ||x||_2 (the norm
    is clamped below at 1e-12, as Caffe2 does, so a zero row stays zero)."""
    x = _float_dtype(_arr(input))
    if x.ndim == 0:
        raise MDFError("onnx::Normalize needs an input of rank >= 1")
    x2 = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    return (_l2_rows(x2).reshape(x.shape),)


# ---------------------------------------------------------------- GRUUnit, SpatialBN


@numba.njit(cache=True)
def _gru_unit(h_prev, gates, lens, t, drop):
    n, d = h_prev.shape
    out = np.empty_like(h_prev)
    for b in range(n):
        if t < lens[b]:
            for j in range(d):
                u = 1.0 / (1.0 + np.exp(-gates[b, d + j]))
                o = np.tanh(gates[b, 2 * d + j])
                out[b, j] = h_prev[b, j] * u + o * (1.0 - u)
        else:
            for j in range(d):
                out[b, j] = 0.0 if drop else h_prev[b, j]
    return out


@register(
    NS,
    "GRUUnit",
    inputs=("hidden_prev", "gates", "seq_lengths", "t"),
    outputs=("hidden",),
    attributes={"drop_states": 0},
)
@keep_half
def gru_unit(hidden_prev, gates, seq_lengths, t, *, drop_states=0):
    """GRUUnit (seed 002; gate layout from Caffe2): hidden_prev (1, N, D) or (N, D), gates
    (..., N, 3D) pre-activation in the slots [reset, update, output] (the reset gate was applied
    upstream and is unused), seq_lengths (N,), t a scalar. For t < seq_lengths[n]:
    u = sigmoid(update), H = H_prev * u + tanh(output) * (1 - u); otherwise H = 0 if
    ``drop_states`` else H_prev. The output has hidden_prev's shape."""
    h = _float_dtype(_arr(hidden_prev))
    g = _arr(gates).astype(h.dtype)
    d = h.shape[-1]
    h2 = np.ascontiguousarray(h.reshape(-1, d))
    g2 = np.ascontiguousarray(g.reshape(-1, g.shape[-1]))
    if g2.shape != (h2.shape[0], 3 * d):
        raise MDFError(
            f"onnx::GRUUnit: gates must be (N, 3D) = ({h2.shape[0]}, {3 * d}), got {g.shape}"
        )
    lens = _arr(seq_lengths).astype(np.int64).ravel()
    if lens.size != h2.shape[0]:
        raise MDFError(f"onnx::GRUUnit: seq_lengths needs {h2.shape[0]} values, got {lens.size}")
    tt = int(np.asarray(t).ravel()[0])
    return (_gru_unit(h2, g2, lens, tt, bool(drop_states)).reshape(h.shape),)


@register(
    NS,
    "SpatialBN",
    inputs=("X", "scale", "bias", "mean", "var"),
    outputs=("Y", "mean", "var", "saved_mean", "saved_var"),
    attributes={"epsilon": 1e-5, "is_test": 0, "momentum": 0.9},
)
@keep_half
def spatial_bn(X, scale, bias, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9):
    """SpatialBN (seed 002): the legacy BatchNormalization with ``spatial=1``: test mode gives
    Y = scale*(X-mean)/sqrt(var+epsilon)+bias; training uses the batch statistics and returns
    Y, running mean/var (running*momentum + batch*(1-momentum)), saved (batch) mean/var."""
    return batch_norm(X, scale, bias, mean, var, epsilon, momentum, 1, not is_test)
