"""Shape and padding arithmetic shared by the convolution, pooling and resize operators.

ONNX describes sliding windows with ``kernel_shape``, ``strides``, ``dilations``, ``pads``
(``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``), ``auto_pad`` (NOTSET, SAME_UPPER,
SAME_LOWER, VALID) and, for pools, ``ceil_mode``. These helpers turn those attributes into
plain tuples of ints (output size, padding before, padding after per spatial axis), and lift
1-D and 2-D problems to 3-D by adding leading singleton axes so that one Numba kernel serves
every rank. Everything here is metadata; no tensor data is touched.

Kernels take the lifted geometry as one int64 array (:func:`geometry_array`, unpacked inside
by :func:`unpack_geometry`) rather than five tuples: Numba types every tuple argument at each
call, which costs more than a small convolution or pool itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ._spatial_jit import axis_window

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def ints(v: Any, n: int, default: int, name: str, op: str) -> tuple[int, ...]:
    """An int-list attribute of length ``n`` (``default`` repeated when it is empty/None)."""
    if v is None or (hasattr(v, "__len__") and len(v) == 0):
        return (default,) * n
    if isinstance(v, (list, tuple)) and all(type(e) is int for e in v):
        out = tuple(v)  # the common case, without a round trip through numpy
    else:
        out = tuple(int(e) for e in np.asarray(v).reshape(-1))
    if len(out) != n:
        raise MDFError(f"{op}: attribute '{name}' should have {n} values, got {list(out)}")
    return out


def auto_pad_name(auto_pad: Any) -> str:
    s = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad or "NOTSET")
    s = s.upper()
    if s not in AUTO_PADS:
        raise MDFError(f"auto_pad should be one of {', '.join(AUTO_PADS)}, got '{s}'")
    return s


def window_geometry(
    in_shape: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Any,
    auto_pad: Any,
    ceil_mode: int = 0,
    op: str = "",
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(out_shape, pads_begin, pads_end)`` of a sliding window over ``in_shape``.

    ``ceil_mode`` rounds the window count up, dropping a last window that would start inside
    the end padding (as ONNX pools do). For SAME_* the output is ``ceil(in / stride)`` and the
    padding is split evenly, the odd cell at the end (SAME_UPPER) or the beginning (SAME_LOWER).
    """
    n = len(in_shape)
    mode = auto_pad_name(auto_pad)
    pads_t = ints(pads, 2 * n, 0, "pads", op)
    code = AUTO_PADS.index(mode)  # (_spatial_jit's codes)
    window = axis_window.py_func  # (the rule in Python: no Numba call per axis)
    out = [0] * n
    pb = [0] * n
    pe = [0] * n
    for i in range(n):
        size, k, s, d = in_shape[i], kernel[i], strides[i], dilations[i]
        if s < 1 or d < 1 or k < 1:
            raise MDFError(f"{op}: kernel, strides and dilations must be >= 1")
        o, b, e = window(size, k, s, d, pads_t[i], pads_t[n + i], code, ceil_mode)
        if o < 1:
            raise MDFError(
                f"{op}: the window (kernel {k}, dilation {d}) does not fit an input of size "
                f"{size} with pads {b},{e}"
            )
        out[i] = int(o)
        pb[i] = int(b)
        pe[i] = int(e)
    return tuple(out), tuple(pb), tuple(pe)


def lift3(t: Sequence[int], fill: int) -> tuple[int, int, int]:
    """A per-axis tuple of Python ints of rank 1-3 padded in front with ``fill`` to rank 3."""
    n = len(t)
    if n == 2:  # the common cases without a generator
        return (fill, t[0], t[1])  # type: ignore[return-value]
    if n > 3:
        raise MDFError(f"only 1-D, 2-D and 3-D spatial operators are supported, got {n}-D")
    return (fill,) * (3 - n) + tuple(t)  # type: ignore[return-value]


def as5d(x: np.ndarray) -> np.ndarray:
    """``(N, C, *spatial)`` with 1-3 spatial axes as a 5-D view ``(N, C, D, H, W)``."""
    if x.ndim < 3 or x.ndim > 5:
        raise MDFError(f"expected a tensor (N, C, D1[, D2[, D3]]), got shape {x.shape}")
    return x.reshape(x.shape[:2] + (1,) * (5 - x.ndim) + x.shape[2:])


def float_kind(x: np.ndarray) -> np.ndarray:
    """``x`` C-contiguous as float64 if it is float64, else as float32 (incl. float16, ints)."""
    if x.dtype == np.float64:
        return np.ascontiguousarray(x)
    return np.ascontiguousarray(x, dtype=np.float32)


def geometry_array(geo: Sequence[Sequence[int]], *extra: int) -> np.ndarray:
    """The 3-D kernel, strides, dilations, pads at the beginning and output shape (``geo``,
    five triples) then ``extra`` ints, as one int64 array for a kernel."""
    return np.array([v for t in geo for v in t] + [int(e) for e in extra], dtype=np.int64)


@numba.njit(cache=True, inline="always")
def unpack_geometry(g):
    """The five triples of :func:`geometry_array` (kernel, strides, dilations, pads at the
    beginning, output shape), inside a kernel."""
    return (
        (g[0], g[1], g[2]),
        (g[3], g[4], g[5]),
        (g[6], g[7], g[8]),
        (g[9], g[10], g[11]),
        (g[12], g[13], g[14]),
    )


def hashable(v: Any) -> Any:
    """An attribute value usable in a memo key: a list becomes a tuple, and so does a 1-D
    integer array (as MDF imports give ``kernel_shape``); another array stays unhashable (the
    caller then works the plan out without the memo)."""
    if isinstance(v, list):
        return tuple(v)
    if isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu":
        return tuple(v.tolist())
    return v
