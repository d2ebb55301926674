"""``onnx::MaxUnpool``: the inverse of MaxPool -- a tensor of zeros with X's values put back at the
flat positions that MaxPool's ``Indices`` name, in the default unpooled shape or a larger
``output_shape`` (each value keeps its coordinates).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import as_array, onnx_op
from ._spatial import ints


@numba.njit(cache=True)
def _scatter_flat(y, idx, x):
    for t in range(x.size):
        y[idx[t]] = x[t]


@onnx_op(
    "MaxUnpool",
    inputs=("X", "I", "output_shape"),
    optional=("output_shape",),
    since=9,
    attributes={"kernel_shape": REQUIRED, "pads": None, "strides": None},
)
def max_unpool(
    X: Any, I: Any, output_shape: Any = None, *, kernel_shape=None, pads=None, strides=None
) -> tuple[np.ndarray]:
    """Inverse of MaxPool: zeros, with X's values put at the flat indices I."""
    X = as_array(X)
    I = np.asarray(I, dtype=np.int64)
    if I.shape != X.shape:
        raise MDFError(f"MaxUnpool: I should have X's shape {X.shape}, got {I.shape}")
    nsp = X.ndim - 2
    k = ints(kernel_shape, nsp, 1, "kernel_shape", "MaxUnpool")
    s = ints(strides, nsp, 1, "strides", "MaxUnpool")
    pd = ints(pads, 2 * nsp, 0, "pads", "MaxUnpool")
    default = X.shape[:2] + tuple(
        (X.shape[2 + i] - 1) * s[i] + k[i] - pd[i] - pd[nsp + i] for i in range(nsp)
    )
    flat_i = I.reshape(-1)
    if flat_i.size and (flat_i.min() < 0 or flat_i.max() >= int(np.prod(default))):
        raise MDFError(f"MaxUnpool: an index in I is outside the unpooled shape {default}")
    shape = default
    if output_shape is not None:
        # I indexes the default unpooled layout; place each value at the same coordinates of
        # the requested (larger) shape.
        shape = tuple(int(v) for v in np.asarray(output_shape).reshape(-1))
        if len(shape) != X.ndim or any(a < b for a, b in zip(shape, default)):
            raise MDFError(
                f"MaxUnpool: output_shape {shape} should have rank {X.ndim} and be "
                f"at least the unpooled shape {default}"
            )
        flat_i = np.ravel_multi_index(np.unravel_index(flat_i, default), shape)
    y = np.zeros(int(np.prod(shape)), dtype=X.dtype)
    _scatter_flat(y, flat_i, np.ascontiguousarray(X).reshape(-1))
    return (y.reshape(shape),)
