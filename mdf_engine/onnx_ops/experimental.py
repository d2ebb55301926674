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

from ..errors import MDFError
from ..registry import register
from .legacy import _arr, _float_dtype, batch_norm, coerce_2d, dtype_of, keep_half

NS = "onnx-exp"


# ---------------------------------------------------------------- ATen

#: ATen operator names accepted by ``onnx::ATen`` (attribute ``operator``): name -> arity.
ATEN_OPERATORS = {
    "abs": 1, "neg": 1, "exp": 1, "log": 1, "sqrt": 1, "sigmoid": 1, "tanh": 1, "relu": 1,
    "add": 2, "sub": 2, "mul": 2, "div": 2, "mm": 2, "matmul": 2,
}


@numba.njit(cache=True)
def _aten_unary(x, code):
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        if code == 0:
            out[i] = abs(v)
        elif code == 1:
            out[i] = -v
        elif code == 2:
            out[i] = np.exp(v)
        elif code == 3:
            out[i] = np.log(v)
        elif code == 4:
            out[i] = np.sqrt(v)
        elif code == 5:
            out[i] = 1.0 / (1.0 + np.exp(-v))
        elif code == 6:
            out[i] = np.tanh(v)
        else:
            out[i] = v if v > 0 else 0.0
    return out


@numba.njit(cache=True)
def _aten_binary(a, b, code):
    out = np.empty_like(a)
    for i in range(a.size):
        if code == 0:
            out[i] = a[i] + b[i]
        elif code == 1:
            out[i] = a[i] - b[i]
        elif code == 2:
            out[i] = a[i] * b[i]
        else:
            out[i] = a[i] / b[i]
    return out


_UN = ["abs", "neg", "exp", "log", "sqrt", "sigmoid", "tanh", "relu"]
_BIN = ["add", "sub", "mul", "div"]


@register(NS, "ATen", inputs=("inputs",), variadic=True, outputs=("outputs",),
          attributes={"operator": ""}, python_only=True)
@keep_half
def aten(*inputs, operator=""):
    """ATen (seed 002, experimental): run the ATen function named by ``operator`` (the attribute
    PyTorch's exporter writes). Supported: abs neg exp log sqrt sigmoid tanh relu (one input),
    add sub mul div (numpy broadcasting), mm matmul; anything else is an MDFError."""
    name = operator.decode() if isinstance(operator, bytes) else str(operator)
    if name not in ATEN_OPERATORS:
        raise MDFError(f"onnx::ATen: operator {name!r} is not supported; supported ATen "
                       f"operators: {', '.join(sorted(ATEN_OPERATORS))}")
    args = [a for a in inputs if a is not None]
    if len(args) != ATEN_OPERATORS[name]:
        raise MDFError(f"onnx::ATen {name} takes {ATEN_OPERATORS[name]} input(s), got "
                       f"{len(args)}")
    if name in _UN:
        x = _float_dtype(_arr(args[0]))
        with np.errstate(all="ignore"):
            y = _aten_unary(np.ascontiguousarray(x).ravel(), _UN.index(name))
        return (y.reshape(x.shape),)
    a = _float_dtype(_arr(args[0]))
    b = _arr(args[1]).astype(a.dtype)
    if name in ("mm", "matmul"):
        if name == "mm" and (a.ndim != 2 or b.ndim != 2):
            raise MDFError(f"onnx::ATen mm needs 2-D inputs, got {a.shape} and {b.shape}")
        return (np.matmul(a, b),)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise MDFError(f"onnx::ATen {name}: shapes {a.shape} and {b.shape} do not "
                       "broadcast") from None
    af = np.ascontiguousarray(np.broadcast_to(a, shape)).ravel()
    bf = np.ascontiguousarray(np.broadcast_to(b, shape)).ravel()
    with np.errstate(all="ignore"):
        return (_aten_binary(af, bf, _BIN.index(name)).reshape(shape),)


# ---------------------------------------------------------------- Caffe2ConvTranspose


@numba.njit(cache=True)
def _conv_transpose2d(x, w, bias, group, sh, sw, dh, dw, pt, pl, oh, ow):
    """x (N, C, H, W); w (C, M/group, kH, kW); output (N, M, oh, ow), cropped by pt/pl at the
    start; every input pixel scatters its kernel-weighted contribution."""
    n, c, h, wd = x.shape
    mg = w.shape[1]
    kh, kw = w.shape[2], w.shape[3]
    cg = c // group
    out = np.zeros((n, mg * group, oh, ow), dtype=x.dtype)
    for b in range(n):
        for ci in range(c):
            g = ci // cg
            for i in range(h):
                for j in range(wd):
                    v = x[b, ci, i, j]
                    for a in range(kh):
                        oi = i * sh + a * dh - pt
                        if oi < 0 or oi >= oh:
                            continue
                        for e in range(kw):
                            oj = j * sw + e * dw - pl
                            if oj < 0 or oj >= ow:
                                continue
                            for m in range(mg):
                                out[b, g * mg + m, oi, oj] += v * w[ci, m, a, e]
    for b in range(n):
        for m in range(mg * group):
            for i in range(oh):
                for j in range(ow):
                    out[b, m, i, j] += bias[m]
    return out


def conv_transpose_2d(X: Any, W: Any, B: Any, strides: Any, dilations: Any, pads: Any,
                      group: int, kernel_shape: Any = None) -> np.ndarray:
    """Transposed 2-D convolution (1-D inputs get a unit height): output size
    ``stride*(in-1) + (k-1)*dilation + 1 - pad_begin - pad_end``."""
    x = _float_dtype(_arr(X))
    w = _arr(W).astype(x.dtype)
    one_d = x.ndim == 3
    if one_d:
        x = x[:, :, None, :]
        w = w[:, :, None, :]
    if x.ndim != 4 or w.ndim != 4:
        raise MDFError(f"Caffe2ConvTranspose needs NCHW X and a 4-D filter, got {x.shape} and "
                       f"{w.shape}")
    nsp = 1 if one_d else 2
    s = [1] * nsp if strides is None else [int(t) for t in strides]
    d = [1] * nsp if dilations is None else [int(t) for t in dilations]
    p = [0] * (2 * nsp) if pads is None else [int(t) for t in pads]
    if len(s) != nsp or len(d) != nsp or len(p) != 2 * nsp:
        raise MDFError(f"Caffe2ConvTranspose: strides/dilations need {nsp} values and pads "
                       f"{2 * nsp}, got {s}, {d}, {p}")
    if one_d:
        s, d, p = [1] + s, [1] + d, [0, p[0], 0, p[1]]
    if kernel_shape is not None and list(kernel_shape) != list(w.shape[4 - nsp:]):
        raise MDFError(f"Caffe2ConvTranspose: kernel_shape {list(kernel_shape)} does not match "
                       f"the filter {w.shape}")
    if x.shape[1] != w.shape[0] or x.shape[1] % group:
        raise MDFError(f"Caffe2ConvTranspose: X has {x.shape[1]} channels, the filter "
                       f"{w.shape[0]} (group {group})")
    m = w.shape[1] * group
    b = np.zeros(m, x.dtype) if B is None else _arr(B).astype(x.dtype).ravel()
    if b.size != m:
        raise MDFError(f"Caffe2ConvTranspose: bias needs {m} values, got {b.size}")
    oh = s[0] * (x.shape[2] - 1) + (w.shape[2] - 1) * d[0] + 1 - p[0] - p[2]
    ow = s[1] * (x.shape[3] - 1) + (w.shape[3] - 1) * d[1] + 1 - p[1] - p[3]
    y = _conv_transpose2d(np.ascontiguousarray(x), np.ascontiguousarray(w), b, int(group),
                          s[0], s[1], d[0], d[1], p[0], p[1], oh, ow)
    return y[:, :, 0, :] if one_d else y


@register(NS, "Caffe2ConvTranspose", inputs=("X", "filter", "bias"), outputs=("Y",),
          attributes={"dilations": None, "group": 1, "kernel_shape": None, "pads": None,
                      "strides": None})
@keep_half
def caffe2_conv_transpose(X, filter, bias, *, dilations=None, group=1, kernel_shape=None,
                          pads=None, strides=None):
    """Caffe2ConvTranspose (seed 002): X (N, C, H, W), filter (C, M/group, kH, kW) (the ONNX
    ConvTranspose layout, as in Caffe2), bias (M); no auto_pad/output_padding/output_shape."""
    return (conv_transpose_2d(X, filter, bias, strides, dilations, pads, int(group),
                              kernel_shape),)


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
            raise MDFError(f"onnx::{op}: with input_as_shape=1 the input must be a 1-D shape, "
                           f"got rank {a.ndim}")
        return tuple(int(v) for v in a) + extra
    return a.shape + extra


@register(NS, "ConstantFill", inputs=("input",), optional=("input",), outputs=("output",),
          attributes={"dtype": None, "extra_shape": None, "input_as_shape": 0, "shape": None,
                      "value": 0.0})
@keep_half
def constant_fill(input=None, *, dtype=None, extra_shape=None, input_as_shape=0, shape=None,
                  value=0.0):
    """ConstantFill (seed 002): a tensor filled with ``value``. Shape: ``shape`` without input;
    the input's shape (+ ``extra_shape``); or, with ``input_as_shape=1``, the input's values
    (+ ``extra_shape``). dtype: the ``dtype`` enum (float, int32, int64, bool), else float32."""
    shp = _fill_shape("ConstantFill", input, shape, extra_shape, input_as_shape)
    dt = np.dtype(np.float32) if dtype is None else dtype_of(dtype)
    if dt not in (np.float32, np.float64, np.int32, np.int64, np.bool_):
        raise MDFError(f"onnx::ConstantFill supports float, int32, int64 and bool, got {dt}")
    return (np.full(shp, value, dtype=dt),)


@register(NS, "GivenTensorFill", inputs=("shape",), optional=("shape",), outputs=("X",),
          attributes={"extra_shape": None, "input_as_shape": 0, "shape": None, "values": None})
@keep_half
def given_tensor_fill(shape_input=None, *, extra_shape=None, input_as_shape=0, shape=None,
                      values=None):
    """GivenTensorFill (seed 002 lists only the attributes; Caffe2 behaviour): ``values`` laid
    out row-major (float32) in the shape resolved as for ConstantFill; the number of values
    must equal the number of elements."""
    shp = _fill_shape("GivenTensorFill", shape_input, shape, extra_shape, input_as_shape)
    vals = np.asarray([] if values is None else values, dtype=np.float32)
    if vals.size != int(np.prod(shp, dtype=np.int64)):
        raise MDFError(f"onnx::GivenTensorFill: {vals.size} values do not fill shape {shp}")
    return (vals.reshape(shp),)


# ---------------------------------------------------------------- FC, Scale, Normalize


@numba.njit(cache=True)
def _fc_kernel(x, w, b):
    return np.dot(x, w.T) + b


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
        raise MDFError(f"onnx::FC: X as {x2.shape}, W as {w2.shape} and b of {bb.size} values "
                       "do not fit (X: M x K, W: N x K, b: N)")
    return (_fc_kernel(x2, w2, np.ascontiguousarray(bb)),)


@numba.njit(cache=True)
def _scale_kernel(x, s):
    return x * s


@register(NS, "Scale", inputs=("input",), outputs=("output",), attributes={"scale": 1.0},
          jit=_scale_kernel)
@keep_half
def scale(input, *, scale=1.0):
    """Scale (seed 002): output = scale * input, elementwise."""
    x = _float_dtype(_arr(input))
    return (_scale_kernel(x, x.dtype.type(scale)),)


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


@register(NS, "GRUUnit", inputs=("hidden_prev", "gates", "seq_lengths", "t"),
          outputs=("hidden",), attributes={"drop_states": 0})
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
        raise MDFError(f"onnx::GRUUnit: gates must be (N, 3D) = ({h2.shape[0]}, {3 * d}), got "
                       f"{g.shape}")
    lens = _arr(seq_lengths).astype(np.int64).ravel()
    if lens.size != h2.shape[0]:
        raise MDFError(f"onnx::GRUUnit: seq_lengths needs {h2.shape[0]} values, got {lens.size}")
    tt = int(np.asarray(t).ravel()[0])
    return (_gru_unit(h2, g2, lens, tt, bool(drop_states)).reshape(h.shape),)


@register(NS, "SpatialBN", inputs=("X", "scale", "bias", "mean", "var"),
          outputs=("Y", "mean", "var", "saved_mean", "saved_var"),
          attributes={"epsilon": 1e-5, "is_test": 0, "momentum": 0.9})
@keep_half
def spatial_bn(X, scale, bias, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9):
    """SpatialBN (seed 002): the legacy BatchNormalization with ``spatial=1``: test mode gives
    Y = scale*(X-mean)/sqrt(var+epsilon)+bias; training uses the batch statistics and returns
    Y, running mean/var (running*momentum + batch*(1-momentum)), saved (batch) mean/var."""
    return batch_norm(X, scale, bias, mean, var, epsilon, momentum, 1, not is_test)
