"""Axis helpers shared by the axis-wise reductions (Reduce*, ArgMax/ArgMin, CumSum, TopK) and
the shape families (Reshape..., Concat/Split, Slice, Pad): axes and sizes given as ints, lists or
integer tensors; one axis normalised against a rank; a shape cut into ``(outer, n, inner)``
around one axis, the layout the reduction kernels work on."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MDFError


def int_list(v: Any) -> list[int]:
    """Axes given as an int, a list/tuple or an integer tensor, as a list of ints."""
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    if isinstance(v, np.ndarray):
        return [int(a) for a in v.reshape(-1).tolist()]
    return [int(a) for a in np.asarray(v).reshape(-1).tolist()]


def split3(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """``shape`` as ``(outer, n, inner)``: the sizes before, at and after ``axis``."""
    outer = math.prod(shape[:axis])
    inner = math.prod(shape[axis + 1 :])
    return outer, int(shape[axis]), inner


def axis_index(axis: Any, ndim: int, op: str) -> int:
    """``axis`` (an int, or the first of a list/tensor) as an index in ``[0, ndim)``."""
    a = int(axis) if isinstance(axis, (int, np.integer)) else int_list(axis)[0]
    if not -ndim <= a < ndim:
        raise MDFError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def int_values(x: Any) -> list[int]:
    """An attribute or a 1-D int tensor as a list of Python ints (``None`` -> ``[]``)."""
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return [int(v) for v in x]
    if isinstance(x, np.ndarray):
        return [int(v) for v in x.reshape(-1).tolist()]
    return [int(v) for v in np.asarray(x).reshape(-1).tolist()]


def norm_axis(a: int, ndim: int, op: str, extra: int = 0) -> int:
    """Normalise a possibly negative axis for rank ``ndim`` (+``extra`` allowed positions)."""
    r = ndim + extra
    if not -r <= a < r:
        raise MDFError(f"{op}: axis {a} is out of range for rank {ndim}")
    return a % r if r else 0
