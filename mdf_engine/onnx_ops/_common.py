"""Small shared helpers for ``onnx_ops`` kernels: inputs as arrays, broadcasting, dtype rules.

Every helper here is plain Python/numpy metadata work (shapes, strides, dtypes); numeric loops
live in the family modules as Numba kernels. Helpers may be used by any family module; append
new helpers at the end, each with a docstring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError

#: An empty int64 array, passed to kernels as "no shape/stride information needed".
EMPTY_I64 = np.empty(0, np.int64)

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)
_BOOL = np.dtype(np.bool_)

#: dtype -> dtype in which the shared Numba kernels compute it (few specializations:
#: float64, float32, int64, uint64, bool). Narrow ints are exact in int64; float16 in float32.
_COMPUTE = {
    _F64: _F64,
    _F32: _F32,
    np.dtype(np.float16): _F32,
    _I64: _I64,
    np.dtype(np.int32): _I64,
    np.dtype(np.int16): _I64,
    np.dtype(np.int8): _I64,
    np.dtype(np.uint32): _I64,
    np.dtype(np.uint16): _I64,
    np.dtype(np.uint8): _I64,
    _U64: _U64,
    _BOOL: _BOOL,
}


def as_array(x: Any) -> np.ndarray:
    """``x`` as an ndarray (Python scalars become 0-d arrays, never shape (1,))."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def compute_dtype(dt: np.dtype, what: str = "input") -> np.dtype:
    """The dtype in which shared kernels compute values of dtype ``dt`` (see ``_COMPUTE``).

    Raises :class:`MDFError` for dtypes the numeric kernels do not handle (strings, objects,
    complex, bfloat16/float8 extension types).
    """
    try:
        return _COMPUTE[dt]
    except KeyError:
        raise MDFError(
            f"{what} has dtype {dt}; expected a bool, integer or float16/32/64 tensor"
        ) from None


def flat_as(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``x`` as a 1-D C-contiguous array of dtype ``dt`` (a view when no copy is needed)."""
    if x.dtype != dt:
        x = x.astype(dt)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return x.reshape(-1)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Numpy-style multidirectional broadcast of ``shapes``; MDFError when incompatible."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise MDFError(
            "inputs of shapes "
            + ", ".join(str(tuple(s)) for s in shapes)
            + " cannot be broadcast together (each dimension must match or be 1)"
        ) from None


def broadcast_strides(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    """Element strides (int64, one per dimension of ``out_shape``) of a C-contiguous array of
    ``shape`` read as if broadcast to ``out_shape``: 0 along broadcast (size-1 or missing)
    dimensions."""
    nd = len(out_shape)
    pad = nd - len(shape)
    st = np.zeros(nd, np.int64)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] != 1:
            st[d + pad] = acc
        acc *= shape[d]
    return st


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` in ``[-ndim, ndim)`` as a non-negative axis; MDFError otherwise."""
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise MDFError(f"{what}={axis} is out of range for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis


#: ONNX TensorProto data types of the spec's era, by enum value.
ONNX_DTYPES: dict[int, Any] = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    8: np.str_,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
    14: np.complex64,
    15: np.complex128,
}
