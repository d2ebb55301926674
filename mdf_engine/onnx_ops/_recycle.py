"""Arrays that a bound kernel hands out again once nothing refers to them (issue 22, goal 5).

A convolution of SqueezeNet writes a new output array (and its Relu) in every inference; with
glibc's allocator those arrays of 0.2-3 MB come from a heap whose top is given back to the
system and faulted in again: ~200-300 page faults per inference, 0.4 ms of system time on one
thread and 1-1.4 ms on two (each trim of a two-thread process also flushes the other core's
address translations), about a tenth of the inference. onnxruntime keeps its activations in an
arena of its own.

A :class:`Recycler` belongs to one bound call (one node's kernel): :meth:`Recycler.empty` hands
out an array of a shape and dtype, and later the same array again, but only once no other
reference to it is left (its reference count is the recycler's own: every view of it, numpy's
included, refers to it as its base). So a value that a user, a node's state or any view still
holds is never written again; the engine drops its references as the next update replaces each
value, and the array then serves that update. A recycler keeps at most :data:`KEEP` arrays.
"""

from __future__ import annotations

import sys

import numpy as np

#: Arrays one recycler keeps (a value is held until its node's next update, its reader's
#: input until the reader's next run: two are in use around each update).
KEEP = 3
#: Off: :meth:`Recycler.empty` always gives a new array (tests and measurements compare).
RECYCLE = True

_getrefcount = sys.getrefcount


class Recycler:
    """The arrays of one bound call, handed out again when nothing else refers to them."""

    __slots__ = ("arrays",)

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An array of ``shape`` and ``dtype`` whose values are to be overwritten: one of the
        recycler's that nothing else refers to, else a new one (kept, up to :data:`KEEP`)."""
        arrays = self.arrays
        if not RECYCLE:
            return np.empty(shape, dtype)
        for a in arrays:
            # the references: the list's, the loop's and the call's argument
            if _getrefcount(a) == 3 and a.shape == shape and a.dtype == dtype:
                return a
        a = np.empty(shape, dtype)
        if len(arrays) >= KEEP:
            arrays.pop(0)
        arrays.append(a)
        return a
