"""Helpers shared by the indexing families (Gather/Scatter, GatherND/ScatterND, NonZero/Unique/
Compress, ReverseSequence, OneHot): an axis checked against a rank, flat C-ordered views, unknown
dtypes seen as same-size unsigned ints for pure data movement, the scatter reduction codes, and
the translation of a kernel's ``IndexError`` into an :class:`MDFError`.

The index loops of those families run in Numba kernels on C-ordered flat buffers: the Python
wrappers only normalise axes, reshape to an (outer, n, inner) or flat layout and check shapes;
the kernels wrap negative indices and raise ``IndexError`` for indices out of range.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..errors import MDFError


def index_axis(a: Any, ndim: int, op: str) -> int:
    a = int(a)
    if not -ndim <= a < ndim:
        raise MDFError(f"{op}: axis {a} is out of range for rank {ndim}")
    return a % ndim


def flat_view(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).reshape(-1)


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def as_bits(x: np.ndarray) -> np.ndarray:
    """For pure data movement: a dtype Numba does not know (bfloat16, ...) seen as unsigned
    ints of the same size; other arrays unchanged."""
    if x.dtype.kind not in "biufc" and x.dtype.itemsize in _UINT_OF_SIZE:
        return x.view(_UINT_OF_SIZE[x.dtype.itemsize])
    return x


def guarded(op: str, fn, *args):
    try:
        return fn(*args)
    except IndexError as e:
        raise MDFError(f"{op}: an index is out of range ({e})") from e


REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def reduction_code(r: Any, op: str, allowed: tuple[str, ...]) -> int:
    r = str(r)
    if r not in allowed:
        raise MDFError(f"{op}: reduction must be one of {', '.join(allowed)}, got '{r}'")
    return REDUCTIONS[r]


@numba.njit(cache=True, inline="always")
def scatter_one(out, o, v, reduction):  # pragma: no cover - compiled
    """``out[o] (op)= v`` for a reduction code of :data:`REDUCTIONS`."""
    if reduction == 0:
        out[o] = v
    elif reduction == 1:
        out[o] += v
    elif reduction == 2:
        out[o] *= v
    elif reduction == 3:
        if v > out[o]:
            out[o] = v
    else:
        if v < out[o]:
            out[o] = v
