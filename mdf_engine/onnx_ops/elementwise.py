"""ONNX elementwise math: unary math/trig (Abs ... IsInf) and binary arithmetic (Add Sub Mul Div
Pow Mod BitShift), with numpy-style multidirectional broadcasting and ONNX dtype rules.

Integer ops stay integer (Div truncates toward zero like C; Mod with ``fmod=0`` takes the
divisor's sign, ``fmod=1`` is C fmod; integer division/modulo by zero gives 0), Pow keeps the
base's dtype, BitShift works on (unsigned and signed) integers. The numeric cores are the shared
Numba loops of :mod:`._ew_kernels`; the Python wrappers here only pick dtypes and shapes.

``binary`` and ``unary`` are also used by the logic, activation and variadic families.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..errors import MDFError
from . import _ew_kernels as K
from . import onnx_op
from ._common import _COMPUTE, EMPTY_I64, broadcast_shape, broadcast_strides, compute_dtype
from ._common import flat_as as _flat

_ndarray = np.ndarray
_BOOL = np.dtype(np.bool_)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_U64 = np.dtype(np.uint64)


def _arr(x: Any) -> np.ndarray:
    return x if type(x) is _ndarray else np.asarray(x)


def run_binary(
    core, code: int, a: np.ndarray, b: np.ndarray, cd: np.dtype, out_dt: np.dtype, *extra: Any
) -> np.ndarray:
    """Run a binary broadcast ``core`` (arith/compare/shift) on a, b converted to ``cd``,
    writing a new array of dtype ``out_dt`` of the broadcast shape."""
    sa, sb = a.shape, b.shape
    shape = sa if sa == sb else broadcast_shape(sa, sb)
    out = np.empty(shape, out_dt)
    n = out.size
    if (a.size == n and b.size == n) or a.size == 1 or b.size == 1:  # one flat loop
        core(
            code,
            _flat(a, cd),
            _flat(b, cd),
            out.reshape(-1),
            EMPTY_I64,
            EMPTY_I64,
            EMPTY_I64,
            *extra,
        )
    else:
        core(
            code,
            _flat(a, cd),
            _flat(b, cd),
            out.reshape(-1),
            np.array(shape, np.int64),
            broadcast_strides(sa, shape),
            broadcast_strides(sb, shape),
            *extra,
        )
    return out


def binary(code: int, A: Any, B: Any, name: str = "") -> np.ndarray:
    """Broadcasting binary arithmetic (``_ew_kernels`` op ``code``) in the inputs' dtype."""
    a = _arr(A)
    b = _arr(B)
    dt = a.dtype
    if b.dtype != dt:
        dt = np.result_type(a, b)
    cd = _COMPUTE.get(dt)
    if cd is None or cd == _BOOL:
        raise MDFError(f"{name} expects integer or float tensors, got {dt}")
    out = run_binary(K.arith_core, code, a, b, cd, cd)
    return out if cd == dt else out.astype(dt)


def unary(
    code: int,
    X: Any,
    p1: float = 0.0,
    p2: float = 0.0,
    p3: float = 0.0,
    name: str = "",
    ints: bool = False,
) -> np.ndarray:
    """Unary op ``code`` on a float tensor (or, with ``ints``, an integer one: only the codes
    handled by ``unary_int_core``; p1/p2 then are converted to the integer dtype)."""
    x = _arr(X)
    dt = x.dtype
    if dt.kind == "f":
        cd = _COMPUTE.get(dt) or compute_dtype(dt, f"{name} input")
        out = np.empty(x.shape, cd)
        K.unary_core(code, _flat(x, cd), out.reshape(-1), float(p1), float(p2), float(p3))
        return out if cd == dt else out.astype(dt)
    if ints and dt.kind in "iu":
        cd = _COMPUTE[dt]
        out = np.empty(x.shape, cd)
        K.unary_int_core(
            code, _flat(x, cd), out.reshape(-1), _int_param(p1, dt, cd), _int_param(p2, dt, cd)
        )
        return out if cd == dt else out.astype(dt)
    kinds = "an integer or float" if ints else "a float"
    raise MDFError(f"{name} expects {kinds} tensor, got dtype {dt}")


def _int_param(p: float, dt: np.dtype, cd: np.dtype):
    """A float parameter as a scalar of integer compute dtype ``cd``, saturated to ``dt``'s
    range (so that +-inf mean 'no bound')."""
    info = np.iinfo(dt)
    if p != p:
        p = 0
    p = min(max(p, info.min), info.max)
    return cd.type(int(p))


# ---- unary math --------------------------------------------------------------------------------


def _unary_op(op: str, code: int, arg: str, since: int, ints: bool = False):
    def kernel(x):
        return (unary(code, x, name=op, ints=ints),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"ONNX {op}: elementwise, float tensors" + (" and integers" if ints else "")
    jit = K.jit_entry(lambda x: K.unary_nb(code, x, 0.0, 0.0, 0.0), f"{op.lower()}_jit", kernel, 1)
    onnx_op(op, inputs=(arg,), since=since, jit=jit)(kernel)
    return kernel


abs_ = _unary_op("Abs", K.ABS, "X", 6, ints=True)
neg = _unary_op("Neg", K.NEG, "X", 6, ints=True)
sign = _unary_op("Sign", K.SIGN, "input", 9, ints=True)
ceil = _unary_op("Ceil", K.CEIL, "X", 6)
floor = _unary_op("Floor", K.FLOOR, "X", 6)
round_ = _unary_op("Round", K.ROUND, "X", 11)
reciprocal = _unary_op("Reciprocal", K.RECIP, "X", 6)
sqrt = _unary_op("Sqrt", K.SQRT, "X", 6)
exp = _unary_op("Exp", K.EXP, "input", 6)
log = _unary_op("Log", K.LOG, "input", 6)
erf = _unary_op("Erf", K.ERF, "input", 9)
sin = _unary_op("Sin", K.SIN, "input", 7)
cos = _unary_op("Cos", K.COS, "input", 7)
tan = _unary_op("Tan", K.TAN, "input", 7)
asin = _unary_op("Asin", K.ASIN, "input", 7)
acos = _unary_op("Acos", K.ACOS, "input", 7)
atan = _unary_op("Atan", K.ATAN, "input", 7)
sinh = _unary_op("Sinh", K.SINH, "input", 9)
cosh = _unary_op("Cosh", K.COSH, "input", 9)
tanh = _unary_op("Tanh", K.TANH, "input", 6)
asinh = _unary_op("Asinh", K.ASINH, "input", 9)
acosh = _unary_op("Acosh", K.ACOSH, "input", 9)
atanh = _unary_op("Atanh", K.ATANH, "input", 9)


def _classify(X: Any, nan: bool, pos: bool, neg: bool, name: str) -> np.ndarray:
    x = _arr(X)
    dt = x.dtype
    if dt.kind in "iu":
        return np.zeros(x.shape, np.bool_)
    if dt.kind != "f":
        raise MDFError(f"{name} expects a float tensor, got dtype {dt}")
    cd = _COMPUTE.get(dt) or compute_dtype(dt, f"{name} input")
    out = np.empty(x.shape, np.bool_)
    K.classify_core(_flat(x, cd), out.reshape(-1), nan, pos, neg)
    return out


@njit(cache=True)
def _classify_nb(X, nan, pos, neg):
    x = np.ascontiguousarray(np.asarray(X))
    out = np.empty(x.shape, np.bool_)
    K.classify_core(x.reshape(-1), out.reshape(-1), nan, pos, neg)
    return out


def isnan(X):
    """ONNX IsNaN: True where X is NaN (bool tensor of X's shape)."""
    return (_classify(X, True, False, False, "IsNaN"),)


def isinf(X, *, detect_negative=1, detect_positive=1):
    """ONNX IsInf: True where X is +inf (if detect_positive) or -inf (if detect_negative)."""
    return (_classify(X, False, bool(detect_positive), bool(detect_negative), "IsInf"),)


isnan_jit = K.jit_entry(lambda X: _classify_nb(X, True, False, False), "isnan_jit", isnan, 1)
isinf_jit = K.jit_entry(
    lambda X, detect_negative, detect_positive: _classify_nb(
        X, False, detect_positive != 0, detect_negative != 0
    ),
    "isinf_jit",
    isinf,
    1,
)
onnx_op("IsNaN", inputs=("X",), since=9, jit=isnan_jit)(isnan)
onnx_op(
    "IsInf",
    inputs=("X",),
    attributes={"detect_negative": 1, "detect_positive": 1},
    since=10,
    jit=isinf_jit,
)(isinf)


# ---- binary arithmetic -----------------------------------------------------------------------


def _binary_op(op: str, code: int, since: int):
    def kernel(A, B):
        return (binary(code, A, B, op),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"ONNX {op}: elementwise with multidirectional broadcasting"
    jit = K.jit_entry(lambda A, B: K.arith_nb(code, A, B), f"{op.lower()}_jit", kernel, 2)
    onnx_op(op, inputs=("A", "B"), since=since, jit=jit)(kernel)
    return kernel


add = _binary_op("Add", K.ADD, 7)
sub = _binary_op("Sub", K.SUB, 7)
mul = _binary_op("Mul", K.MUL, 7)
div = _binary_op("Div", K.DIV, 7)


def pow_(X, Y):
    """ONNX Pow: X**Y with broadcasting; the result keeps X's dtype (an integer base with a
    float exponent is computed in float64 and truncated back; integer**integer is exact)."""
    x = _arr(X)
    y = _arr(Y)
    dt = x.dtype
    if dt.kind in "iu" and y.dtype.kind == "f":
        out = run_binary(K.arith_core, K.POW, x, y, _F64, _F64)
        return (out.astype(dt),)
    cd = _COMPUTE.get(dt)
    if cd is None or cd == _BOOL or y.dtype.kind not in "iuf":
        raise MDFError(f"Pow expects numeric tensors, got {dt} and {y.dtype}")
    if cd.kind in "iu" and y.dtype.kind in "iu" and cd != _U64:
        cd = _I64
    out = run_binary(K.arith_core, K.POW, x, y, cd, cd)
    return (out if cd == dt else out.astype(dt),)


pow_jit = K.jit_entry(lambda X, Y: K.arith_nb(K.POW, X, Y), "pow_jit", pow_, 2)
onnx_op("Pow", inputs=("X", "Y"), since=7, jit=pow_jit)(pow_)


def mod(A, B, *, fmod=0):
    """ONNX Mod: fmod=0 gives a remainder with the divisor's sign (numpy ``%``), fmod=1 the C
    ``fmod`` remainder (the dividend's sign). Integer remainder by zero gives 0."""
    return (binary(K.MOD_C if fmod else K.MOD_PY, A, B, "Mod"),)


mod_jit = K.jit_entry(
    lambda A, B, fmod: K.arith_nb(K.MOD_C if fmod != 0 else K.MOD_PY, A, B), "mod_jit", mod, 2
)
onnx_op("Mod", inputs=("A", "B"), attributes={"fmod": 0}, since=10, jit=mod_jit)(mod)


@njit(cache=True)
def _bitshift_nb(X, Y, left):
    x = np.asarray(X)
    y = np.asarray(Y)
    shape = K.bshape_nb(x.shape, y.shape)
    out = np.empty(shape, np.int64)
    width = x.itemsize * 8
    probe = np.zeros(1, x.dtype)
    probe[0] = -1
    signed = probe[0] < 0
    K.shift_core(
        np.ascontiguousarray(x).astype(np.int64).reshape(-1),
        np.ascontiguousarray(y).astype(np.int64).reshape(-1),
        out.reshape(-1),
        K.shape_array_nb(shape),
        K.bstrides_nb(x.shape, shape),
        K.bstrides_nb(y.shape, shape),
        left,
        width,
        signed,
    )
    return out.astype(x.dtype)


def bitshift(X, Y, *, direction=""):
    """ONNX BitShift: X shifted by Y bits, direction "LEFT" or "RIGHT", in X's integer dtype.
    Shifts by a negative amount or by at least the bit width give 0 (-1 for a right shift of a
    negative signed value); right shifts of signed values are arithmetic, left shifts wrap."""
    if direction not in ("LEFT", "RIGHT"):
        raise MDFError(f"BitShift needs direction 'LEFT' or 'RIGHT', got {direction!r}")
    x = _arr(X)
    y = _arr(Y)
    dt = x.dtype
    if dt.kind not in "iu" or y.dtype.kind not in "iu":
        raise MDFError(f"BitShift expects integer tensors, got {dt} and {y.dtype}")
    cd = _U64 if dt == _U64 else _I64
    ys = y.astype(np.int64) if y.dtype != _I64 else y
    if cd == _U64:
        xs = x
    else:
        xs = x.astype(np.int64) if dt != _I64 else x
    out = _shift(xs, ys, cd, direction == "LEFT", dt.itemsize * 8, dt.kind == "i")
    return (out if out.dtype == dt else out.astype(dt),)


bitshift_jit = K.jit_entry(
    lambda X, Y, direction: _bitshift_nb(X, Y, direction == "LEFT"), "bitshift_jit", bitshift, 2
)
onnx_op("BitShift", inputs=("X", "Y"), attributes={"direction": ""}, since=11, jit=bitshift_jit)(
    bitshift
)


def _shift(
    x: np.ndarray, y: np.ndarray, cd: np.dtype, left: bool, width: int, signed: bool
) -> np.ndarray:
    sx, sy = x.shape, y.shape
    shape = broadcast_shape(sx, sy)
    out = np.empty(shape, cd)
    K.shift_core(
        _flat(x, cd),
        _flat(y, _I64),
        out.reshape(-1),
        np.array(shape, np.int64),
        broadcast_strides(sx, shape),
        broadcast_strides(sy, shape),
        left,
        width,
        signed,
    )
    return out
