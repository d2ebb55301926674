"""ONNX sequence operators; a sequence is a Python ``list`` of numpy arrays.

SequenceConstruct SequenceEmpty SequenceAt SequenceInsert SequenceErase SequenceLength
SplitToSequence ConcatFromSequence. These are pure data-movement operators: they use numpy
(views where possible, copies where ONNX says "copy") and never modify the input list; every
operator that changes a sequence returns a new list. An empty sequence (``SequenceEmpty``) is
``[]`` and does not remember its ``dtype`` attribute. All are ``python_only`` (lists cannot enter
nopython code).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import onnx_op


def _seq(x: Any, op: str) -> list:
    if not isinstance(x, (list, tuple)):
        raise MDFError(
            f"{op}: input_sequence must be a sequence (list of arrays), got {type(x).__name__}"
        )
    return list(x)


def _position(pos: Any, n: int, op: str, inclusive_end: bool) -> int:
    p = int(np.asarray(pos).reshape(-1)[0])
    hi = n if inclusive_end else n - 1
    if not -n <= p <= hi:
        raise MDFError(f"{op}: position {p} is outside [{-n}, {hi}] for a sequence of {n}")
    return p + n if p < 0 else p


@onnx_op(
    "SequenceConstruct",
    inputs=("inputs",),
    variadic=True,
    outputs=("output_sequence",),
    since=11,
    python_only=True,
)
def sequence_construct(*inputs: Any) -> tuple:
    """A sequence holding the given tensors, in order."""
    return ([np.asarray(x) for x in inputs],)


@onnx_op("SequenceEmpty", attributes={"dtype": 1}, outputs=("output",), since=11, python_only=True)
def sequence_empty(*, dtype: int = 1) -> tuple:
    """An empty sequence (``[]``; the element ``dtype`` is not recorded)."""
    return ([],)


@onnx_op(
    "SequenceAt",
    inputs=("input_sequence", "position"),
    outputs=("tensor",),
    since=11,
    python_only=True,
)
def sequence_at(input_sequence: Any, position: Any) -> tuple:
    """A copy of the tensor at ``position`` (negative counts from the back)."""
    seq = _seq(input_sequence, "SequenceAt")
    return (np.array(seq[_position(position, len(seq), "SequenceAt", False)], copy=True),)


@onnx_op(
    "SequenceInsert",
    inputs=("input_sequence", "tensor", "position"),
    optional=("position",),
    outputs=("output_sequence",),
    since=11,
    python_only=True,
)
def sequence_insert(input_sequence: Any, tensor: Any, position: Any = None) -> tuple:
    """A new sequence with ``tensor`` inserted at ``position`` (default: at the back)."""
    seq = _seq(input_sequence, "SequenceInsert")
    t = np.asarray(tensor)
    if seq and np.asarray(seq[0]).dtype != t.dtype:
        raise MDFError(
            f"SequenceInsert: tensor dtype {t.dtype} differs from the sequence's "
            f"{np.asarray(seq[0]).dtype}"
        )
    p = len(seq) if position is None else _position(position, len(seq), "SequenceInsert", True)
    seq.insert(p, t)
    return (seq,)


@onnx_op(
    "SequenceErase",
    inputs=("input_sequence", "position"),
    optional=("position",),
    outputs=("output_sequence",),
    since=11,
    python_only=True,
)
def sequence_erase(input_sequence: Any, position: Any = None) -> tuple:
    """A new sequence without the tensor at ``position`` (default: the last one)."""
    seq = _seq(input_sequence, "SequenceErase")
    if not seq:
        raise MDFError("SequenceErase: the sequence is empty")
    p = len(seq) - 1 if position is None else _position(position, len(seq), "SequenceErase", False)
    del seq[p]
    return (seq,)


@onnx_op(
    "SequenceLength", inputs=("input_sequence",), outputs=("length",), since=11, python_only=True
)
def sequence_length(input_sequence: Any) -> tuple:
    """The number of tensors in the sequence, as an int64 scalar."""
    return (np.array(len(_seq(input_sequence, "SequenceLength")), dtype=np.int64),)


@onnx_op(
    "SplitToSequence",
    inputs=("input", "split"),
    optional=("split",),
    attributes={"axis": 0, "keepdims": 1},
    outputs=("output_sequence",),
    since=11,
    python_only=True,
)
def split_to_sequence(input: Any, split: Any = None, *, axis: int = 0, keepdims: int = 1) -> tuple:
    """Split ``input`` along ``axis``: into pieces of 1 (dropping the axis unless ``keepdims``)
    when ``split`` is omitted, into chunks of ``split`` (last one shorter) for a scalar, or into
    the given lengths for a 1-D ``split``."""
    x = np.asarray(input)
    if not -x.ndim <= axis < x.ndim:
        raise MDFError(f"SplitToSequence: axis {axis} is out of range for rank {x.ndim}")
    axis = axis + x.ndim if axis < 0 else axis
    n = x.shape[axis]
    if split is None:
        parts = [
            np.take(x, i, axis=axis) if not keepdims else np.take(x, [i], axis=axis)
            for i in range(n)
        ]
        return (parts,)
    s = np.asarray(split).astype(np.int64)
    if s.ndim == 0:
        step = int(s)
        if step <= 0:
            raise MDFError(f"SplitToSequence: split must be positive, got {step}")
        lengths = [step] * (n // step) + ([n % step] if n % step else [])
    else:
        lengths = [int(v) for v in s]
        if any(v < 0 for v in lengths) or sum(lengths) != n:
            raise MDFError(
                f"SplitToSequence: split {lengths} must be non-negative and sum "
                f"to {n}, the size of axis {axis}"
            )
    bounds = np.cumsum([0] + lengths)
    sl = [slice(None)] * x.ndim
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        sl[axis] = slice(int(a), int(b))
        parts.append(x[tuple(sl)].copy())
    return (parts,)


@onnx_op(
    "ConcatFromSequence",
    inputs=("input_sequence",),
    attributes={"axis": REQUIRED, "new_axis": 0},
    outputs=("concat_result",),
    since=11,
    python_only=True,
)
def concat_from_sequence(input_sequence: Any, *, axis: int, new_axis: int = 0) -> tuple:
    """Concatenate the tensors along ``axis`` (like ``np.concatenate``), or stack them along a
    new ``axis`` when ``new_axis`` is 1 (like ``np.stack``; ``axis`` may then be ``rank``)."""
    seq = [np.asarray(x) for x in _seq(input_sequence, "ConcatFromSequence")]
    if not seq:
        raise MDFError("ConcatFromSequence: the sequence is empty")
    r = seq[0].ndim + (1 if new_axis else 0)
    if not -r <= axis < r:
        raise MDFError(f"ConcatFromSequence: axis {axis} is out of range [{-r}, {r - 1}]")
    axis = axis + r if axis < 0 else axis
    try:
        return (np.stack(seq, axis=axis) if new_axis else np.concatenate(seq, axis=axis),)
    except ValueError as exc:
        raise MDFError(f"ConcatFromSequence: tensors do not fit together: {exc}") from None
