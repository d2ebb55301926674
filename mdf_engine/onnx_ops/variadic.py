"""ONNX variadic elementwise ops: Max Min Sum Mean over any number of inputs, with numpy-style
multidirectional broadcasting (opset 8+ semantics; the opset-6 forms without broadcasting are a
special case). Max/Min propagate NaN. The numeric core is the shared Numba arithmetic loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..errors import MDFError
from . import _ew_kernels as K
from . import onnx_op
from .elementwise import binary


def _fold(code: int, data: tuple[Any, ...], name: str) -> np.ndarray:
    """Left fold of the broadcasting binary op ``code`` over ``data``."""
    data = tuple(d for d in data if d is not None)
    if not data:
        raise MDFError(f"{name} needs at least one input tensor")
    if len(data) == 1:
        a = np.asarray(data[0])
        if a.dtype.kind not in "iuf":
            raise MDFError(f"{name} expects integer or float tensors, got {a.dtype}")
        return a.copy()
    acc = binary(code, data[0], data[1], name)
    for d in data[2:]:
        acc = binary(code, acc, d, name)
    return acc


@njit(cache=True)
def _fold_nb(code, data):
    acc = np.asarray(data[0]).copy()
    for i in range(1, len(data)):
        acc = K.arith_nb(code, acc, data[i])
    return acc


@njit(cache=True)
def max_jit(*data_0):
    return _fold_nb(K.MAX, data_0)


@njit(cache=True)
def min_jit(*data_0):
    return _fold_nb(K.MIN, data_0)


@njit(cache=True)
def sum_jit(*data_0):
    return _fold_nb(K.ADD, data_0)


@njit(cache=True)
def mean_jit(*data_0):
    s = _fold_nb(K.ADD, data_0)
    return s / len(data_0)


_SCHEMA = dict(inputs=("data_0",), variadic=True, since=8)


@onnx_op("Max", jit=max_jit, outputs=("max",), **_SCHEMA)
def max_(*data_0):
    """ONNX Max: elementwise maximum of all inputs (broadcast); NaN wins."""
    return (_fold(K.MAX, data_0, "Max"),)


@onnx_op("Min", jit=min_jit, outputs=("min",), **_SCHEMA)
def min_(*data_0):
    """ONNX Min: elementwise minimum of all inputs (broadcast); NaN wins."""
    return (_fold(K.MIN, data_0, "Min"),)


@onnx_op("Sum", jit=sum_jit, outputs=("sum",), **_SCHEMA)
def sum_(*data_0):
    """ONNX Sum: elementwise sum of all inputs (broadcast)."""
    return (_fold(K.ADD, data_0, "Sum"),)


@onnx_op("Mean", jit=mean_jit, outputs=("mean",), **_SCHEMA)
def mean(*data_0):
    """ONNX Mean: elementwise mean of all float inputs (broadcast)."""
    s = _fold(K.ADD, data_0, "Mean")
    if s.dtype.kind != "f":
        raise MDFError(f"Mean expects float tensors, got {s.dtype}")
    n = sum(d is not None for d in data_0)
    return (binary(K.DIV, s, np.asarray(n, s.dtype), "Mean"),)
