"""``onnx::ConvInteger`` and ``onnx::QLinearConv``: convolutions of 8-bit tensors with zero points.

Both subtract the zero points and convolve exactly in float64 with Conv's float kernels (products
of 8-bit values summed in float64 are exact), then round back: ConvInteger's output is the int32
accumulator, QLinearConv requantizes it to y's 8-bit type with ``x_scale * w_scale / y_scale``
(per output channel when ``w_scale`` has one value per filter).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op
from .conv import CONV_ATTRS, conv_float, geometry_key


def _zero_point(zp: Any, default_dtype) -> np.ndarray:
    if zp is None:
        return np.zeros((), default_dtype)
    return np.asarray(zp)


def _int_conv(
    x: Any,
    w: Any,
    xzp: Any,
    wzp: Any,
    B: Any,
    op: str,
    *,
    auto_pad="NOTSET",
    dilations=None,
    group=1,
    kernel_shape=None,
    pads=None,
    strides=None,
) -> np.ndarray:
    """Exact integer convolution of (x - xzp) and (w - wzp) (+ int32 B) as float64, with the
    attributes of ``CONV_ATTRS`` (both ops pass them on as given)."""
    key = geometry_key(auto_pad, dilations, group, kernel_shape, pads, strides)
    x = as_array(x)
    w = np.asarray(w)
    xzp = _zero_point(xzp, x.dtype)
    wzp = _zero_point(wzp, w.dtype)
    if xzp.size != 1:
        raise MDFError(f"{op}: x_zero_point should be a scalar, got shape {xzp.shape}")
    xf = x.astype(np.float64) - float(xzp.reshape(-1)[0])
    wz = wzp.astype(np.float64).reshape(-1)
    if wz.size not in (1, w.shape[0]):
        raise MDFError(f"{op}: w_zero_point should be a scalar or have {w.shape[0]} values")
    wf = w.astype(np.float64) - wz.reshape((-1,) + (1,) * (w.ndim - 1))
    bias = None if B is None else np.asarray(B).astype(np.float64)
    return conv_float(xf, wf, bias, key, op)


@onnx_op(
    "ConvInteger",
    inputs=("x", "w", "x_zero_point", "w_zero_point"),
    optional=("x_zero_point", "w_zero_point"),
    attributes=CONV_ATTRS,
    since=10,
)
def conv_integer(
    x: Any,
    w: Any,
    x_zero_point: Any = None,
    w_zero_point: Any = None,
    **geometry: Any,
) -> tuple[np.ndarray]:
    """Integer convolution with zero points; the int32 accumulator is the output."""
    y = _int_conv(x, w, x_zero_point, w_zero_point, None, "ConvInteger", **geometry)
    return (y.astype(np.int32),)


@onnx_op(
    "QLinearConv",
    since=10,
    attributes=CONV_ATTRS,
    inputs=(
        "x",
        "x_scale",
        "x_zero_point",
        "w",
        "w_scale",
        "w_zero_point",
        "y_scale",
        "y_zero_point",
        "B",
    ),
    optional=("B",),
)
def qlinear_conv(
    x: Any,
    x_scale: Any,
    x_zero_point: Any,
    w: Any,
    w_scale: Any,
    w_zero_point: Any,
    y_scale: Any,
    y_zero_point: Any,
    B: Any = None,
    **geometry: Any,
) -> tuple[np.ndarray]:
    """Quantized convolution: int32 accumulation, requantized to y's 8-bit type."""
    acc = _int_conv(x, w, x_zero_point, w_zero_point, B, "QLinearConv", **geometry)
    M = acc.shape[1]
    ws = np.asarray(w_scale, np.float32).reshape(-1)
    if ws.size not in (1, M):
        raise MDFError(f"QLinearConv: w_scale should be a scalar or have {M} values")
    mult = (
        np.float32(np.asarray(x_scale).reshape(-1)[0])
        * ws
        / np.float32(np.asarray(y_scale).reshape(-1)[0])
    ).astype(np.float32)
    shape = (1, -1) + (1,) * (acc.ndim - 2)
    scaled = (acc.astype(np.float32) * mult.reshape(shape)).astype(np.float32)
    yzp = np.asarray(y_zero_point)
    info = np.iinfo(yzp.dtype)
    y = np.rint(scaled).astype(np.float64) + float(yzp.reshape(-1)[0])
    return (np.clip(y, info.min, info.max).astype(yzp.dtype),)
