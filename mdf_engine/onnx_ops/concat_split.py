"""``onnx::`` Concat and Split: join tensors along an axis, and cut one into parts.

Concat's default axis is 1 at opset 1 and 0 from opset 4. Split takes ``split`` (the part sizes)
as an attribute at opset 2, as an input from 13, and gains ``num_outputs`` at 18 (parts of
ceil(n/k), the last one smaller). Before 18 an equal split has as many parts as the node has
outputs, which only the graph runner knows: :func:`mdf_engine.onnx_ops.run` passes that count as
``num_outputs``. The parts are copies, never views. The early Split and Concat are adapters in
``variants/legacy_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._axes import int_values, norm_axis
from ._jita_split import split2_into_jit, split13_into_jit, split18_into_jit
from ._reshape_jit import concat_like_jit


def _concat(inputs: tuple, axis: int) -> np.ndarray:
    arrs = [np.asarray(a) for a in inputs if a is not None]
    if not arrs:
        raise MDFError("Concat needs at least one input")
    ax = norm_axis(int(axis), arrs[0].ndim, "Concat")
    try:
        return np.concatenate(arrs, axis=ax)
    except ValueError as e:
        raise MDFError(f"Concat: shapes {[a.shape for a in arrs]} differ off axis {ax}") from e


@onnx_op(
    "Concat",
    inputs=("inputs",),
    variadic=True,
    attributes={"axis": 1},
    outputs=("concat_result",),
    jit=concat_like_jit,
    jit_like=True,
)
def concat_v1(*inputs, axis=1):
    """Join the inputs along ``axis`` (default 1 at opset 1)."""
    return (_concat(inputs, axis),)


@onnx_op(
    "Concat",
    inputs=("inputs",),
    variadic=True,
    attributes={"axis": 0},
    outputs=("concat_result",),
    since=4,
    jit=concat_like_jit,
    jit_like=True,
)
def concat(*inputs, axis=0):
    """Join the inputs along ``axis`` (negative counts from the end)."""
    return (_concat(inputs, axis),)


# ---------------------------------------------------------------- Split


def _split(x: np.ndarray, sizes: list[int], axis: int) -> tuple:
    ax = norm_axis(int(axis), x.ndim, "Split")
    if sum(sizes) != x.shape[ax] or any(s < 0 for s in sizes):
        raise MDFError(f"Split: sizes {sizes} do not add up to the axis length {x.shape[ax]}")
    out = []
    start = 0
    for s in sizes:
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(start, start + s)
        out.append(x[tuple(idx)].copy())
        start += s
    return tuple(out)


def _equal_sizes(n: int, k: int) -> list[int]:
    """Sizes of ``k`` equal parts of an axis of length ``n`` (opsets 2-17: must divide evenly)."""
    if k < 1 or n % k:
        raise MDFError(f"Split: an axis of length {n} does not split into {k} equal parts")
    return [n // k] * k


def _ceil_sizes(n: int, k: int) -> list[int]:
    """Sizes of ``k`` parts of ceil(n/k) of an axis of length ``n``, the last one smaller
    (opset 18)."""
    if k < 1:
        raise MDFError(f"Split: num_outputs must be >= 1, got {k}")
    chunk = -(-n // k)
    return [min(chunk, max(n - i * chunk, 0)) for i in range(k)]


def _split_by(input: Any, split: Any, axis: Any, num_outputs: Any, parts=_equal_sizes) -> tuple:
    """Split by the ``split`` sizes if given, else into ``num_outputs`` parts of ``parts``."""
    x = np.asarray(input)
    if split is not None:
        return _split(x, int_values(split), axis)
    if num_outputs is None:
        raise MDFError(
            "Split: give 'split' (sizes) — the number of outputs is not known to the "
            "kernel, so an equal split needs 'split' or, from opset 18, 'num_outputs'"
        )
    n = x.shape[norm_axis(int(axis), x.ndim, "Split")]
    return _split(x, parts(n, int(num_outputs)), axis)


#: the schema fields of every Split version (the kernels write into the parts' slots)
PARTS = {"outputs": ("outputs",), "jit_parts": True}
#: Split's inputs and attributes from opset 13
SPLIT13 = {
    "inputs": ("input", "split"),
    "optional": ("split",),
    "attributes": {"axis": 0, "num_outputs": None},
    **PARTS,
}


# Before opset 18 an equal split has as many parts as the node has outputs, which only the
# graph runner knows: it passes that count as ``num_outputs`` (see ``onnx_ops.run``).
@onnx_op(
    "Split",
    inputs=("input",),
    attributes={"axis": 0, "split": None, "num_outputs": None},
    since=2,
    jit=split2_into_jit,
    **PARTS,
)
def split_v2(input, *, axis=0, split=None, num_outputs=None):
    """Split along ``axis`` into parts of the sizes in the ``split`` attribute, or into
    ``num_outputs`` (the node's output count) equal parts."""
    return _split_by(input, split, axis, num_outputs)


@onnx_op("Split", since=13, jit=split13_into_jit, **SPLIT13)
def split_v13(input, split=None, *, axis=0, num_outputs=None):
    """Split along ``axis`` into parts of the sizes given by the ``split`` input, or into
    ``num_outputs`` (the node's output count) equal parts."""
    return _split_by(input, split, axis, num_outputs)


@onnx_op("Split", since=18, jit=split18_into_jit, **SPLIT13)
def split(input, split=None, *, axis=0, num_outputs=None):
    """Split along ``axis`` by ``split`` sizes, or into ``num_outputs`` parts of
    ceil(n/num_outputs) (the last one smaller)."""
    return _split_by(input, split, axis, num_outputs, _ceil_sizes)
