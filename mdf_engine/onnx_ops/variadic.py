"""ONNX variadic elementwise ops: Max Min Sum Mean over any number of inputs, with numpy-style
multidirectional broadcasting (opset 8+ semantics; the opset-6 forms without broadcasting are a
special case). Max/Min propagate NaN. The numeric core is the shared Numba arithmetic loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numba.extending import overload

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


def _fold_nb(code, data):
    """Nopython left fold of ``K.arith_nb(code, ...)`` over the tuple ``data`` (see overload)."""
    raise NotImplementedError("_fold_nb is only callable from nopython code")


@overload(_fold_nb)
def _fold_nb_ov(code, data):
    """One statement per input, each with its own variable: the inputs may differ in shape
    and rank (a loop over a heterogeneous tuple, whose accumulator changes type, does not
    type in Numba). Generated source has no file, so this part is not disk-cached by itself
    (a cached caller keeps it)."""
    n = len(data)
    lines = [f"def fold{n}(code, data):", "    a0 = np.asarray(data[0]).copy()"]
    lines += [f"    a{i} = K.arith_nb(code, a{i - 1}, data[{i}])" for i in range(1, n)]
    lines.append(f"    return a{n - 1}")
    ns = {"np": np, "K": K}
    exec("\n".join(lines), ns)
    return ns[f"fold{n}"]


@njit(cache=True)
def _mean_nb(data):
    return _fold_nb(K.ADD, data) / len(data)


def _variadic(op: str, code: int, doc: str):
    def kernel(*data_0):
        return (_fold(code, data_0, op),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = doc
    jit = K.jit_entry(lambda *data_0: _fold_nb(code, data_0), f"{op.lower()}_jit", kernel, None)
    onnx_op(op, inputs=("data_0",), variadic=True, since=8, outputs=(op.lower(),), jit=jit)(kernel)
    return kernel


max_ = _variadic("Max", K.MAX, "ONNX Max: elementwise maximum of all inputs (broadcast); NaN wins.")
min_ = _variadic("Min", K.MIN, "ONNX Min: elementwise minimum of all inputs (broadcast); NaN wins.")
sum_ = _variadic("Sum", K.ADD, "ONNX Sum: elementwise sum of all inputs (broadcast).")


def mean(*data_0):
    """ONNX Mean: elementwise mean of all float inputs (broadcast)."""
    s = _fold(K.ADD, data_0, "Mean")
    if s.dtype.kind != "f":
        raise MDFError(f"Mean expects float tensors, got {s.dtype}")
    n = sum(d is not None for d in data_0)
    return (binary(K.DIV, s, np.asarray(n, s.dtype), "Mean"),)


mean_jit = K.jit_entry(lambda *data_0: _mean_nb(data_0), "mean_jit", mean, None)
onnx_op("Mean", inputs=("data_0",), variadic=True, since=8, outputs=("mean",), jit=mean_jit)(mean)
