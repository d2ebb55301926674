"""``onnx::`` Cast and CastLike: convert a tensor's element type with ONNX's rules, and the
table of ONNX data types (:data:`ONNX_DTYPES`, :func:`onnx_dtype`) that other families use to
read a ``dtype``/``to`` attribute.

Float -> int truncates toward zero, nonzero -> True, strings are parsed (``"INF"``, ``"-INF"``,
``"NaN"`` case-insensitive) or formatted plainly. Cast's ``to`` is an enum number or a name;
``saturate`` (opset 19) only concerns float8 targets, which are outside the spec's era. The Cast
of opsets 1-5 (``to`` a type name) is an adapter in ``variants/legacy_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import _reshape_jit as J
from . import onnx_op
from ._common import ONNX_DTYPES

#: ONNX TensorProto data type names -> their enum value.
DTYPE_NAMES = {
    "FLOAT": 1,
    "UINT8": 2,
    "INT8": 3,
    "UINT16": 4,
    "INT16": 5,
    "INT32": 6,
    "INT64": 7,
    "STRING": 8,
    "BOOL": 9,
    "FLOAT16": 10,
    "DOUBLE": 11,
    "UINT32": 12,
    "UINT64": 13,
    "COMPLEX64": 14,
    "COMPLEX128": 15,
}


def onnx_dtype(to: Any) -> np.dtype:
    """The numpy dtype for an ONNX data type given as its enum number or its name."""
    if isinstance(to, (str, bytes)):
        name = to.decode() if isinstance(to, bytes) else to
        key = name.upper().replace("TENSORPROTO.", "")
        if key in DTYPE_NAMES:
            return np.dtype(ONNX_DTYPES[DTYPE_NAMES[key]])
        try:
            return np.dtype(name)
        except TypeError as e:
            raise MDFError(f"unknown ONNX data type '{name}'") from e
    code = int(to)
    if code not in ONNX_DTYPES:
        raise MDFError(
            f"ONNX data type {code} is not supported (supported: bool, int8..int64, "
            "uint8..uint64, float16/32/64, complex, string)"
        )
    return np.dtype(ONNX_DTYPES[code])


def _parse_number(s: str) -> float:
    t = s.strip()
    u = t.upper()
    if u in ("INF", "+INF", "INFINITY", "+INFINITY"):
        return np.inf
    if u in ("-INF", "-INFINITY"):
        return -np.inf
    if u in ("NAN", "+NAN", "-NAN"):
        return np.nan
    try:
        return float(t)
    except ValueError as e:
        raise MDFError(f"Cast: cannot parse '{s}' as a number") from e


def _format_number(v: Any) -> str:
    if isinstance(v, (np.floating, float)):
        f = float(v)
        if np.isnan(f):
            return "NaN"
        if np.isinf(f):
            return "INF" if f > 0 else "-INF"
        return str(v)
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    return str(v)


def cast_array(x: Any, to: Any) -> np.ndarray:
    """Cast with ONNX rules: float -> int truncates toward zero, nonzero -> True, strings are
    parsed (``"INF"``, ``"-INF"``, ``"NaN"`` case-insensitive) or formatted plainly."""
    a = np.asarray(x)
    dt = onnx_dtype(to)
    if dt.kind == "U":
        flat = [_format_number(v) for v in a.reshape(-1)]
        return np.array(flat, dtype=object).reshape(a.shape)
    if a.dtype.kind in "OUS":
        flat = [
            v
            if not isinstance(v, (str, bytes))
            else _parse_number(v.decode() if isinstance(v, bytes) else v)
            for v in a.reshape(-1).tolist()
        ]
        vals = np.array(flat, dtype=np.float64).reshape(a.shape)
        if dt.kind in "iu":
            vals = np.trunc(vals)
        return vals.astype(dt)
    with np.errstate(invalid="ignore", over="ignore"):
        return a.astype(dt)


#: the schema fields every Cast version shares: its nopython twin takes the result's template
#: (``jit_like``), and a constant ``to`` its slot holds as another dtype goes through Python
CAST = {"inputs": ("input",), "outputs": ("output",), "jit_like": True, "jit_dtype": "to"}
#: CastLike's: the template's dtype is ``target_type``'s
CASTLIKE = {"inputs": ("input", "target_type"), "outputs": ("output",), "jit_like": True}


@onnx_op("Cast", attributes={"to": 1}, since=6, jit=J.cast_like_jit, **CAST)
def cast(input, *, to=1):
    """Convert to the ONNX data type ``to`` (enum number or name)."""
    return (cast_array(input, to),)


@onnx_op("Cast", attributes={"to": 1, "saturate": 1}, since=19, jit=J.cast19_like_jit, **CAST)
def cast_v19(input, *, to=1, saturate=1):
    """Cast; ``saturate`` only concerns float8 targets, which are outside the spec's era."""
    return (cast_array(input, to),)


def _castlike(input: Any, target_type: Any) -> np.ndarray:
    t = np.asarray(target_type)
    if t.dtype.kind in "OUS":
        return cast_array(input, "STRING")
    return cast_array(input, t.dtype.name)


@onnx_op("CastLike", since=15, jit=J.castlike_like_jit, **CASTLIKE)
def castlike(input, target_type):
    """Cast ``input`` to the element type of ``target_type`` (only its dtype is read)."""
    return (_castlike(input, target_type),)


@onnx_op("CastLike", attributes={"saturate": 1}, since=19, jit=J.castlike19_like_jit, **CASTLIKE)
def castlike_v19(input, target_type, *, saturate=1):
    """CastLike; ``saturate`` only concerns float8 targets, which are outside the spec's era."""
    return (_castlike(input, target_type),)
