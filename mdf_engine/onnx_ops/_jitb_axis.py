"""Nopython twins (``jit=``) of ``onnx::`` Softmax, LogSoftmax and Hardmax for the compiled
backend, with ``axis`` a constant or a value (a node parameter, an input port).

They follow the ``jit_like`` convention (:mod:`._shape_jit`): the last argument is an array of
the result's warm-up shape and dtype (the result has the input's shape). The axis is read at
run time as the Python kernel (:func:`.activations.axis_op`) reads it, and both run the same
loop (:func:`._ew_unary.axis_core`) over the same ``(outer, n, inner)`` view, so the results are
equal bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from ._ew_codes import HARDMAX, LOGSOFTMAX, SOFTMAX
from ._ew_unary import axis_core
from ._reshape_jit import SHAPE_CHANGED
from ._shape_jit import _dims, _flat, _ints, _shaped, check_like, norm_axis, prod


@numba.njit(cache=True)
def axis_like(code, input, axis, coerce_2d, like, op):
    """Op ``code`` along ``axis`` (over the trailing block ``shape[axis:]`` when
    ``coerce_2d``: opsets before 13) in ``like``'s shape."""
    src = _flat(input)
    dims = _dims(input)
    nd = len(dims)
    a = _ints(axis)
    ax = norm_axis(a[0], max(nd, 1)) if len(a) else -1
    if ax < 0 or (ax >= nd and not coerce_2d):
        raise ValueError(op + ": the axis is out of range")
    check_like(dims, like, op + ": " + SHAPE_CHANGED)
    outer = prod(dims[:ax])
    if coerce_2d:
        n, inner = prod(dims[ax:]), 1
    else:
        n, inner = dims[ax], prod(dims[ax + 1 :])
    out = np.empty(src.size, src.dtype)
    if out.size:
        axis_core(code, src, out, outer, n, inner)
    return _shaped(out, like)


def _family(code: int, op: str):
    def v1(input, axis, like):
        return axis_like(code, input, axis, True, like, op)

    def v13(input, axis, like):
        return axis_like(code, input, axis, False, like, op)

    v1.__doc__ = f"nopython {op} (opsets 1-12: the input coerced to 2-D at ``axis``)."
    v13.__doc__ = f"nopython {op} (opset 13+: along ``axis``)."
    v1.__name__ = v1.__qualname__ = f"{op.lower()}1_like_jit"
    v13.__name__ = v13.__qualname__ = f"{op.lower()}_like_jit"
    return numba.njit(cache=True)(v1), numba.njit(cache=True)(v13)


#: (opset 1-12 form, opset 13 form) of each op
JITS = {
    "Softmax": _family(SOFTMAX, "Softmax"),
    "LogSoftmax": _family(LOGSOFTMAX, "LogSoftmax"),
    "Hardmax": _family(HARDMAX, "Hardmax"),
}
