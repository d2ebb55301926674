"""Hexagon ops whose output count or shape is a property of the graph node, given here as an
attribute: Split_f / Split_int32 / QuantizedSplit_8 (``num_outputs``: N equal parts along one of
b,h,w,d) and ExpandDims_f / ExpandDims_int32 (``output_shape``: the declared output shape, same
element count). Split returns its N parts as a tuple (QuantizedSplit_8: the N parts, then the
range, copied from the input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import F32, as4d, fval, ilist, ival, scalar


def split_parts(op: str, dim: Any, x: Any, n: Any) -> tuple[np.ndarray, ...]:
    """The N equal parts of x along dimension ``dim`` (0..3 = b,h,w,d)."""
    a = as4d(x)
    d = ival(dim)
    if not 0 <= d <= 3:
        raise MDFError(f"hexagon::{op}: split dimension must be 0..3 (b,h,w,d), got {d}")
    if n is None:
        raise MDFError(f"hexagon::{op} needs attribute 'num_outputs' (how many parts)")
    k = int(n)
    if k < 1 or a.shape[d] % k:
        raise MDFError(
            f"hexagon::{op}: dimension {d} of size {a.shape[d]} does not split into {k} equal parts"
        )
    return tuple(np.ascontiguousarray(p) for p in np.split(a, k, axis=d))


@hexop("Split_f", ("dim", "input"), outputs=("outputs",), num_outputs=None)
def split_f(dim, x, *, num_outputs=None, padding="NA"):
    """N equal float parts along ``dim``."""
    return tuple(p.astype(F32) for p in split_parts("Split_f", dim, x, num_outputs))


@hexop("Split_int32", ("dim", "input"), outputs=("outputs",), num_outputs=None)
def split_int32(dim, x, *, num_outputs=None, padding="NA"):
    """N equal int32 parts along ``dim``."""
    return tuple(p.astype(np.int32) for p in split_parts("Split_int32", dim, x, num_outputs))


@hexop(
    "QuantizedSplit_8",
    ("dim", "input", "input_min", "input_max"),
    outputs=("outputs", "output_min", "output_max"),
    num_outputs=None,
)
def quantized_split_8(dim, x, mn, mx, *, num_outputs=None, padding="NA"):
    """N equal quint8 parts along ``dim``, then the input range (copied)."""
    parts = split_parts("QuantizedSplit_8", dim, x, num_outputs)
    return parts + (scalar(fval(mn)), scalar(fval(mx)))


def expand_dims(op: str, x: Any, shape: Any) -> np.ndarray:
    a = as4d(x)
    if shape is None:
        raise MDFError(f"hexagon::{op} needs attribute 'output_shape' (the node's output shape)")
    dims = ilist(shape)
    if len(dims) > 4 or any(v < 0 for v in dims):
        raise MDFError(f"hexagon::{op}: output_shape must be up to 4 sizes >= 0, got {dims}")
    if int(np.prod(dims)) != a.size:
        raise MDFError(
            f"hexagon::{op}: output_shape {dims} holds {int(np.prod(dims))} elements, "
            f"the input {a.size}"
        )
    return a.reshape([1] * (4 - len(dims)) + dims)


@hexop("ExpandDims_f", ("input",), outputs=("output",), output_shape=None)
def expand_dims_f(x, *, output_shape=None, padding="NA"):
    """The input reshaped to the declared ``output_shape``."""
    return (expand_dims("ExpandDims_f", x, output_shape).astype(F32),)


@hexop("ExpandDims_int32", ("input",), outputs=("output",), output_shape=None)
def expand_dims_int32(x, *, output_shape=None, padding="NA"):
    """The input reshaped to the declared ``output_shape``."""
    return (expand_dims("ExpandDims_int32", x, output_shape).astype(np.int32),)
