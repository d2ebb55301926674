"""Linear quantization operators: ``QuantizeLinear``, ``DequantizeLinear``,
``DynamicQuantizeLinear`` and ``QLinearMatMul``.

Quantization is ``y = saturate(round_half_even(x / scale) + zero_point)`` into the zero
point's integer type (uint8 by default; int8, uint16, int16 too), per tensor, per axis
(opset 13) or per block along an axis (opset 21). The float arithmetic runs in the dtype of
``x`` / ``scale`` (as ONNX does) inside Numba kernels, so ties round the same way as the
reference. Float8 and 4-bit types are not supported (they post-date the MDF spec).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from . import as_array, onnx_op

#: TensorProto data type codes usable as output_dtype.
_INT_CODES = {2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16}


@numba.njit(cache=True)
def _quantize(x, s, z, lo, hi):
    """rint(x / s) + z clipped to [lo, hi], elementwise on same-shape arrays (x, s one dtype)."""
    y = np.empty(x.shape, dtype=np.float64)
    for i in range(x.size):
        v = np.rint(x[i] / s[i]) + z[i]
        y[i] = min(max(v, lo), hi)
    return y


@numba.njit(cache=True)
def _dequantize(x, s, z):
    """(x - z) * s elementwise; x, z int64, s float (the output dtype)."""
    y = np.empty(x.shape, dtype=s.dtype)
    for i in range(x.size):
        y[i] = (x[i] - z[i]) * s[i]
    return y


def _expand(
    param: np.ndarray, shape: tuple, axis: int, block_size: int, name: str, op: str
) -> np.ndarray:
    """A scale / zero point broadcast to ``shape``: scalar, 1-D along axis, or blocked."""
    nd = len(shape)
    if param.size == 1 and not block_size:
        return np.broadcast_to(param.reshape(()), shape)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        raise MDFError(f"{op}: axis {axis} out of range for a {nd}-D input")
    if block_size:
        want = list(shape)
        want[ax] = -(-shape[ax] // block_size)
        if list(param.shape) != want:
            raise MDFError(
                f"{op}: {name} should have shape {tuple(want)} for block_size "
                f"{block_size} along axis {axis}, got {param.shape}"
            )
        full = np.repeat(param, block_size, axis=ax)
        return np.take(full, np.arange(shape[ax]), axis=ax)
    if param.ndim != 1 or param.size != shape[ax]:
        raise MDFError(
            f"{op}: {name} should be a scalar or have {shape[ax]} values (axis "
            f"{axis}), got shape {param.shape}"
        )
    view = [1] * nd
    view[ax] = shape[ax]
    return np.broadcast_to(param.reshape(view), shape)


def _quantize_impl(x, y_scale, y_zero_point, axis, block_size, out_dtype, op):
    x = as_array(x)
    scale = np.asarray(y_scale)
    if scale.dtype.kind != "f":
        raise MDFError(f"{op}: y_scale should be a float tensor, got {scale.dtype}")
    if y_zero_point is not None:
        zp = np.asarray(y_zero_point)
        if zp.dtype.kind not in "iu" or zp.dtype.itemsize > 2:
            raise MDFError(
                f"{op}: y_zero_point should be (u)int8 or (u)int16, got {zp.dtype} "
                "(float8 and 4-bit types are not supported)"
            )
        if out_dtype is not None and zp.dtype != out_dtype:
            raise MDFError(
                f"{op}: output_dtype {np.dtype(out_dtype)} differs from y_zero_point's {zp.dtype}"
            )
        dt = zp.dtype
    else:
        dt = np.dtype(out_dtype or np.uint8)
        zp = np.zeros(scale.shape, dt)
    cdt = np.float64 if np.float64 in (x.dtype, scale.dtype) else np.float32
    shape = x.shape
    s = np.ascontiguousarray(_expand(scale, shape, axis, block_size, "y_scale", op), cdt)
    z = np.ascontiguousarray(_expand(zp, shape, axis, block_size, "y_zero_point", op), np.float64)
    info = np.iinfo(dt)
    xc = np.ascontiguousarray(x, cdt)
    y = _quantize(xc.reshape(-1), s.reshape(-1), z.reshape(-1), float(info.min), float(info.max))
    return (y.reshape(shape).astype(dt),)


@onnx_op(
    "QuantizeLinear", inputs=("x", "y_scale", "y_zero_point"), optional=("y_zero_point",), since=10
)
def quantize_linear_10(x: Any, y_scale: Any, y_zero_point: Any = None) -> tuple[np.ndarray]:
    """Per-tensor linear quantization to uint8 / int8."""
    return _quantize_impl(x, y_scale, y_zero_point, 1, 0, None, "QuantizeLinear")


@onnx_op(
    "QuantizeLinear",
    inputs=("x", "y_scale", "y_zero_point"),
    optional=("y_zero_point",),
    since=13,
    attributes={"axis": 1},
)
def quantize_linear_13(
    x: Any, y_scale: Any, y_zero_point: Any = None, *, axis=1
) -> tuple[np.ndarray]:
    """Linear quantization, per tensor or per slice along ``axis`` (1-D scale)."""
    return _quantize_impl(x, y_scale, y_zero_point, int(axis), 0, None, "QuantizeLinear")


@onnx_op(
    "QuantizeLinear",
    inputs=("x", "y_scale", "y_zero_point"),
    optional=("y_zero_point",),
    since=21,
    attributes={"axis": 1, "block_size": 0, "output_dtype": 0, "saturate": 1},
)
def quantize_linear_21(
    x: Any,
    y_scale: Any,
    y_zero_point: Any = None,
    *,
    axis=1,
    block_size=0,
    output_dtype=0,
    saturate=1,
) -> tuple[np.ndarray]:
    """Linear quantization per tensor, per axis or per block of ``block_size`` along axis;
    ``output_dtype`` (a TensorProto code) picks the integer type when there is no zero point.
    ``saturate`` only concerns float8 outputs, which are not supported."""
    od = None
    if output_dtype:
        if int(output_dtype) not in _INT_CODES:
            raise MDFError(
                f"QuantizeLinear: output_dtype {output_dtype} is not supported "
                "(uint8=2, int8=3, uint16=4, int16=5)"
            )
        od = _INT_CODES[int(output_dtype)]
    return _quantize_impl(
        x, y_scale, y_zero_point, int(axis), int(block_size), od, "QuantizeLinear"
    )


def _dequantize_impl(x, x_scale, x_zero_point, axis, block_size, op):
    x = as_array(x)
    if x.dtype.kind not in "iu":
        raise MDFError(
            f"{op}: x should be an integer tensor, got {x.dtype} (float8 and 4-bit "
            "types are not supported)"
        )
    scale = np.asarray(x_scale)
    if scale.dtype.kind != "f":
        raise MDFError(f"{op}: x_scale should be a float tensor, got {scale.dtype}")
    zp = np.zeros(scale.shape, x.dtype) if x_zero_point is None else np.asarray(x_zero_point)
    if x.dtype == np.int32 and np.any(zp != 0):
        raise MDFError(f"{op}: an int32 x must have a zero (or no) x_zero_point")
    cdt = scale.dtype if scale.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    shape = x.shape
    s = np.ascontiguousarray(_expand(scale, shape, axis, block_size, "x_scale", op), cdt)
    z = np.ascontiguousarray(_expand(zp, shape, axis, block_size, "x_zero_point", op), np.int64)
    y = _dequantize(np.ascontiguousarray(x, np.int64).reshape(-1), s.reshape(-1), z.reshape(-1))
    return (y.reshape(shape).astype(scale.dtype, copy=False),)


@onnx_op(
    "DequantizeLinear",
    inputs=("x", "x_scale", "x_zero_point"),
    optional=("x_zero_point",),
    since=10,
)
def dequantize_linear_10(x: Any, x_scale: Any, x_zero_point: Any = None) -> tuple[np.ndarray]:
    """``(x - x_zero_point) * x_scale`` per tensor."""
    return _dequantize_impl(x, x_scale, x_zero_point, 1, 0, "DequantizeLinear")


@onnx_op(
    "DequantizeLinear",
    inputs=("x", "x_scale", "x_zero_point"),
    optional=("x_zero_point",),
    since=13,
    attributes={"axis": 1},
)
def dequantize_linear_13(
    x: Any, x_scale: Any, x_zero_point: Any = None, *, axis=1
) -> tuple[np.ndarray]:
    """``(x - x_zero_point) * x_scale`` per tensor or per slice along ``axis``."""
    return _dequantize_impl(x, x_scale, x_zero_point, int(axis), 0, "DequantizeLinear")


@onnx_op(
    "DequantizeLinear",
    inputs=("x", "x_scale", "x_zero_point"),
    optional=("x_zero_point",),
    since=21,
    attributes={"axis": 1, "block_size": 0},
)
def dequantize_linear_21(
    x: Any, x_scale: Any, x_zero_point: Any = None, *, axis=1, block_size=0
) -> tuple[np.ndarray]:
    """``(x - x_zero_point) * x_scale`` per tensor, per axis or per block along ``axis``."""
    return _dequantize_impl(
        x, x_scale, x_zero_point, int(axis), int(block_size), "DequantizeLinear"
    )


@numba.njit(cache=True)
def _dynamic_quantize(x):
    lo = 0.0
    hi = 0.0
    for i in range(x.size):
        v = float(x[i])
        lo = min(lo, v)
        hi = max(hi, v)
    scale = np.float32((hi - lo) / 255.0)
    y = np.zeros(x.size, dtype=np.uint8)
    if scale == 0:
        return y, scale, np.uint8(0)
    zp = min(max(np.rint(np.float32(-lo) / scale), 0.0), 255.0)
    for i in range(x.size):
        v = np.rint(np.float32(x[i]) / scale) + zp
        y[i] = np.uint8(min(max(v, 0.0), 255.0))
    return y, scale, np.uint8(zp)


@onnx_op("DynamicQuantizeLinear", inputs=("x",), outputs=("y", "y_scale", "y_zero_point"), since=11)
def dynamic_quantize_linear(x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """uint8 quantization with scale and zero point chosen from the range of x (and 0)."""
    x = as_array(x)
    xc = np.ascontiguousarray(x, np.float32)
    y, scale, zp = _dynamic_quantize(xc.reshape(-1))
    return y.reshape(x.shape), np.asarray(scale, np.float32), np.asarray(zp, np.uint8)


@numba.njit(cache=True)
def _requantize(acc, mult, zp, lo, hi):
    """rint(acc * mult) + zp clipped to [lo, hi]; acc float64 (exact ints), mult float32."""
    y = np.empty(acc.shape, dtype=np.float64)
    for i in range(acc.size):
        v = np.rint(np.float32(acc[i]) * mult[i]) + zp[i]
        y[i] = min(max(v, lo), hi)
    return y


def _vec(v: Any, n: int, name: str, as_col: bool) -> np.ndarray:
    a = np.asarray(v).reshape(-1)
    if a.size not in (1, n):
        raise MDFError(f"QLinearMatMul: {name} should be a scalar or have {n} values")
    a = a.astype(np.float64)
    return a.reshape(-1, 1) if as_col else a.reshape(1, -1)


@onnx_op(
    "QLinearMatMul",
    since=10,
    inputs=(
        "a",
        "a_scale",
        "a_zero_point",
        "b",
        "b_scale",
        "b_zero_point",
        "y_scale",
        "y_zero_point",
    ),
)
def qlinear_matmul(
    a: Any,
    a_scale: Any,
    a_zero_point: Any,
    b: Any,
    b_scale: Any,
    b_zero_point: Any,
    y_scale: Any,
    y_zero_point: Any,
) -> tuple[np.ndarray]:
    """Quantized MatMul: exact integer product of (a - a_zp) and (b - b_zp), scaled by
    a_scale * b_scale / y_scale, rounded half to even, plus y_zp, saturated to y's type."""
    a = as_array(a)
    b = as_array(b)
    if a.ndim < 2 or b.ndim < 2:
        raise MDFError(f"QLinearMatMul: a and b should be at least 2-D, got {a.shape}, {b.shape}")
    M, N = a.shape[-2], b.shape[-1]
    af = a.astype(np.float64) - _vec(a_zero_point, M, "a_zero_point", True)
    bf = b.astype(np.float64) - _vec(b_zero_point, N, "b_zero_point", False)
    acc = np.matmul(af, bf)
    f32 = np.float32
    sa = _vec(a_scale, M, "a_scale", True).astype(f32)
    sb = _vec(b_scale, N, "b_scale", False).astype(f32)
    mult = (sa * sb / f32(np.asarray(y_scale, f32).reshape(-1)[0])).astype(f32)
    yzp = np.asarray(y_zero_point)
    info = np.iinfo(yzp.dtype)
    shape = acc.shape
    m = np.ascontiguousarray(np.broadcast_to(mult, shape), f32)
    z = np.full(acc.size, float(yzp.reshape(-1)[0]))
    y = _requantize(
        np.ascontiguousarray(acc).reshape(-1), m.reshape(-1), z, float(info.min), float(info.max)
    )
    return (y.reshape(shape).astype(yzp.dtype),)
