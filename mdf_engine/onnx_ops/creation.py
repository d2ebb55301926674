"""``onnx::`` tensor creation: Constant, ConstantOfShape, EyeLike, Trilu and Range.

Constant returns a copy of its attribute value (never the attribute object itself, so a caller
cannot change the model by writing into an output). Range computes ``start + i * delta`` in
float64 (or int64 for integer inputs) and casts to the input type, with the ONNX element count
``max(ceil((limit - start) / delta), 0)``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from . import onnx_op
from ._creation_jit import eyelike_like_jit, range_like_jit, trilu_jit
from ._reshape_jit import constantofshape_like_jit
from .cast import onnx_dtype


def _sparse_to_dense(sp: Any) -> np.ndarray:
    """A dense array from a SparseTensorProto-like object (``values``, ``indices``, ``dims``)
    or a mapping with those keys; indices are linear (N,) or coordinates (N, rank)."""
    get = sp.get if isinstance(sp, dict) else (lambda k: getattr(sp, k))
    values, indices, dims = get("values"), get("indices"), list(get("dims"))
    if not isinstance(values, np.ndarray) and hasattr(values, "data_type"):
        from onnx import numpy_helper  # only for protobuf sparse tensors

        values = numpy_helper.to_array(values)
        indices = numpy_helper.to_array(indices)
    values = np.asarray(values).reshape(-1)
    idx = np.asarray(indices, dtype=np.int64)
    out = np.zeros(math.prod(dims), dtype=values.dtype)
    if idx.ndim == 2:
        idx = np.ravel_multi_index(tuple(idx.T), dims)
    out[idx.reshape(-1)] = values
    return out.reshape(dims)


def _constant(
    value=None,
    sparse_value=None,
    value_float=None,
    value_floats=None,
    value_int=None,
    value_ints=None,
    value_string=None,
    value_strings=None,
) -> np.ndarray:
    given = {
        k: v
        for k, v in dict(
            value=value,
            sparse_value=sparse_value,
            value_float=value_float,
            value_floats=value_floats,
            value_int=value_int,
            value_ints=value_ints,
            value_string=value_string,
            value_strings=value_strings,
        ).items()
        if v is not None
    }
    if len(given) != 1:
        raise MDFError(
            "Constant needs exactly one of value, sparse_value, value_float(s), "
            f"value_int(s), value_string(s); got {sorted(given) or 'none'}"
        )
    ((k, v),) = given.items()
    if k == "value":
        return np.array(v, copy=True)
    if k == "sparse_value":
        return _sparse_to_dense(v)
    if k == "value_float":
        return np.array(v, dtype=np.float32)
    if k == "value_floats":
        return np.array(list(v), dtype=np.float32).reshape(-1)
    if k == "value_int":
        return np.array(v, dtype=np.int64)
    if k == "value_ints":
        return np.array(list(v), dtype=np.int64).reshape(-1)
    if k == "value_string":
        return np.array(v.decode() if isinstance(v, bytes) else v, dtype=object)
    return np.array([s.decode() if isinstance(s, bytes) else s for s in v], dtype=object)


@onnx_op("Constant", inputs=(), attributes={"value": None}, outputs=("output",))
def constant_v1(*, value=None):
    """The tensor given as the ``value`` attribute (a copy)."""
    return (_constant(value=value),)


@onnx_op(
    "Constant",
    inputs=(),
    attributes={
        "sparse_value": None,
        "value": None,
        "value_float": None,
        "value_floats": None,
        "value_int": None,
        "value_ints": None,
        "value_string": None,
        "value_strings": None,
    },
    outputs=("output",),
    since=12,
)
def constant(
    *,
    sparse_value=None,
    value=None,
    value_float=None,
    value_floats=None,
    value_int=None,
    value_ints=None,
    value_string=None,
    value_strings=None,
):
    """The one given attribute as a tensor: ``value`` (tensor), ``sparse_value``,
    ``value_float(s)`` (float32), ``value_int(s)`` (int64) or ``value_string(s)``."""
    return (
        _constant(
            value,
            sparse_value,
            value_float,
            value_floats,
            value_int,
            value_ints,
            value_string,
            value_strings,
        ),
    )


@onnx_op(
    "ConstantOfShape",
    inputs=("input",),
    attributes={"value": None},
    outputs=("output",),
    since=9,
    jit=constantofshape_like_jit,
    jit_like=True,
)
def constantofshape(input, *, value=None):
    """A tensor of shape ``input`` filled with the one-element ``value`` (default float32 0)."""
    shape = [int(s) for s in np.asarray(input).reshape(-1).tolist()]
    if any(s < 0 for s in shape):
        raise MDFError(f"ConstantOfShape: dims must be >= 0, got {shape}")
    v = np.zeros(1, dtype=np.float32) if value is None else np.asarray(value).reshape(-1)
    if v.size != 1:
        raise MDFError(f"ConstantOfShape: value must have one element, got {v.size}")
    check_elements(shape, "ConstantOfShape")
    return (np.full(shape, v[0], dtype=v.dtype),)


@onnx_op(
    "EyeLike",
    inputs=("input",),
    attributes={"dtype": None, "k": 0},
    outputs=("output",),
    since=9,
    jit=eyelike_like_jit,
    jit_like=True,
    jit_dtype="dtype",
)
def eyelike(input, *, dtype=None, k=0):
    """Ones on the ``k``-th diagonal of a 2-D tensor shaped like ``input``, zeros elsewhere;
    of type ``dtype`` (ONNX enum) or the input's type."""
    x = np.asarray(input)
    if x.ndim != 2:
        raise MDFError(f"EyeLike: input must be 2-D, got shape {x.shape}")
    dt = x.dtype if dtype is None else onnx_dtype(dtype)
    return (np.eye(x.shape[0], x.shape[1], k=int(k), dtype=dt),)


@onnx_op(
    "Trilu",
    inputs=("input", "k"),
    optional=("k",),
    attributes={"upper": 1},
    outputs=("output",),
    since=14,
    jit=trilu_jit,
)
def trilu(input, k=None, *, upper=1):
    """The upper (``upper=1``) or lower triangle of each matrix in the last two axes of
    ``input``, from the ``k``-th diagonal on (a scalar int64 input, default 0); zeros elsewhere."""
    x = np.asarray(input)
    if x.ndim < 2:
        raise MDFError(f"Trilu: input must have rank >= 2, got shape {x.shape}")
    kk = 0 if k is None else int(np.asarray(k).reshape(-1)[0])
    return ((np.triu if int(upper) else np.tril)(x, kk),)


@numba.njit(cache=True)
def _range_core(start, delta, n, out):
    for i in range(n):
        out[i] = start + i * delta
    return out


@onnx_op(
    "Range",
    inputs=("start", "limit", "delta"),
    outputs=("output",),
    since=11,
    jit=range_like_jit,
    jit_like=True,
)
def range_(start, limit, delta):
    """``start, start + delta, ...`` up to (excluding) ``limit``; scalar inputs of one type."""
    s, l, d = (np.asarray(v) for v in (start, limit, delta))
    dt = s.dtype
    if s.size != 1 or l.size != 1 or d.size != 1:
        raise MDFError("Range: start, limit and delta must be scalars")
    if dt.kind in "iu":
        si, li, di = int(s.reshape(-1)[0]), int(l.reshape(-1)[0]), int(d.reshape(-1)[0])
        if di == 0:
            raise MDFError("Range: delta must not be 0")
        n = max(-((si - li) // di), 0)
        check_elements(n, "Range")
        out = _range_core(si, di, n, np.empty(n, dtype=np.int64))
    else:
        sf, lf, df = (float(v.reshape(-1)[0]) for v in (s, l, d))
        if df == 0:
            raise MDFError("Range: delta must not be 0")
        q = (lf - sf) / df
        if not math.isfinite(q):
            raise MDFError(f"Range: ({lf} - {sf}) / {df} elements is not a finite number")
        check_elements(max(q, 0.0), "Range")
        n = max(int(np.ceil(q)), 0)
        out = _range_core(sf, df, n, np.empty(n, dtype=np.float64))
    return (out.astype(dt),)
