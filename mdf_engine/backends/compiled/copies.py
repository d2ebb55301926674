"""``_put(dst, src)``: ``dst[...] = src`` for the compiled backend's generated code, as loops.

Numba's own assignment of an array into a slice compiles its shape-error message (string
formatting of both shapes: ``str``, ``repr``, ``join``) at every new pair of types, one to
three CPU seconds each; a PyTorch LSTM export spent ~15 of its 45 compile seconds there
(docs/performance.md, helper coldmid). ``_put`` copies with loops instead, broadcasting as
numpy does (a source axis of length 1, or missing in front, is repeated), and raises one
constant message for shapes that do not broadcast. A scalar source (no shape to check) and a
destination that is not C-contiguous keep Numba's own assignment.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

#: the message of a shape that does not broadcast (the interpreted backend's numpy error
#: names both shapes; a compiled run reports this one)
SHAPE_ERROR = "a value of another shape than its compiled slot"


def narrowing(dst: types.Array, src: types.Type) -> bool:
    """Whether storing ``src`` (a Numba type) into the array type ``dst`` would drop what
    the interpreted backend keeps: a float into an integer or boolean slot (Numba
    truncates), an integer into a boolean one. Such a value's kind changed after the
    warm-up; typing fails (the graph runs interpreted) instead of a silent wrong number."""
    item = src.dtype if isinstance(src, types.Array) else src
    if isinstance(dst.dtype, types.Boolean):
        return not isinstance(item, types.Boolean)
    if isinstance(dst.dtype, types.Integer):
        return not isinstance(item, (types.Integer, types.Boolean))
    return False


def _put(dst, src):  # pragma: no cover - replaced by the overload in jitted code
    dst[...] = src


@overload(_put)
def _put_ov(dst, src):
    if not isinstance(dst, types.Array):
        return None
    if narrowing(dst, src):
        raise TypingError(
            f"a {src} value for a {dst.dtype} value of the model: its kind changed "
            "after the compiled backend's warm-up"
        )
    if (
        not isinstance(src, types.Array)
        or src.ndim == 0
        or src.ndim > dst.ndim
        or (src.ndim != dst.ndim and dst.layout != "C")
    ):
        # a scalar: no shape check to compile; a view; or a source with more axes, whose
        # leading ones numpy (and Numba's assignment) drop when they have length 1: a
        # (1, n) value for an (n,) slot, as PsyNeuLink's exports give

        def assign(dst, src):
            dst[...] = src

        return assign
    if src.ndim == dst.ndim == 1:
        contiguous = src.layout == "C"  # then it is dst itself or does not overlap it

        def copy1(dst, src):
            s = src if contiguous else src.copy()
            n = dst.shape[0]
            if s.shape[0] != n and s.shape[0] != 1:
                raise ValueError(SHAPE_ERROR)
            if s.shape[0] == 1:
                for i in range(n):
                    dst[i] = s[0]
            else:
                for i in range(n):
                    dst[i] = s[i]

        return copy1
    if src.ndim == dst.ndim == 2:
        contiguous = src.layout == "C"

        def copy2(dst, src):
            s = src if contiguous else src.copy()
            n, m = dst.shape[0], dst.shape[1]
            if (s.shape[0] != n and s.shape[0] != 1) or (s.shape[1] != m and s.shape[1] != 1):
                raise ValueError(SHAPE_ERROR)
            i_step = 1 if s.shape[0] == n else 0
            j_step = 1 if s.shape[1] == m else 0
            for i in range(n):
                for j in range(m):
                    dst[i, j] = s[i * i_step, j * j_step]

        return copy2
    if dst.layout != "C":

        def assign_nd(dst, src):  # (a view: Numba's own loops)
            dst[...] = src

        return assign_nd
    same_layout = src.layout == "C"

    def copyn(dst, src):  # a CNN's activations: one flat loop (Numba's N-D slice
        if same_layout and dst.shape == src.shape:  # assignment goes index by index)
            d = dst.reshape(-1)
            s = src.reshape(-1)
            for i in range(d.size):
                d[i] = s[i]
            return
        _broadcast(dst.reshape(-1), dst.shape, src.copy().reshape(-1), src.shape)

    return copyn


def _broadcast(d, dshape, s, sshape):  # pragma: no cover - the overload's twin
    raise NotImplementedError


@overload(_broadcast)
def _broadcast_ov(d, dshape, s, sshape):
    nd, ns = len(dshape), len(sshape)
    off = nd - ns

    def broadcast(d, dshape, s, sshape):
        # the source's element strides, 0 along an axis it repeats
        stride = np.zeros(nd, np.int64)
        step = 1
        for k in range(ns - 1, -1, -1):
            if sshape[k] != dshape[k + off] and sshape[k] != 1:
                raise ValueError(SHAPE_ERROR)
            if sshape[k] != 1:
                stride[k + off] = step
            step *= sshape[k]
        for i in range(d.size):
            rem = i
            j = 0
            for k in range(nd - 1, -1, -1):
                j += (rem % dshape[k]) * stride[k]
                rem //= dshape[k]
            d[i] = s[j]

    return broadcast
