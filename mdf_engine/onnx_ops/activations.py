"""ONNX activation functions: Relu LeakyRelu PRelu Elu Selu Celu Sigmoid HardSigmoid Softplus
Softsign ThresholdedRelu Shrink HardSwish Clip, and the axis ops Softmax LogSoftmax Hardmax.

Opset-versioned semantics: Clip takes ``min``/``max`` as attributes before opset 11 and as
optional inputs from 11; Softmax/LogSoftmax/Hardmax coerce the input to 2-D at ``axis``
(default 1) before opset 13 and work along one axis (default -1) from 13. The numeric cores are
the shared Numba loops of :mod:`._ew_kernels`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ..errors import MDFError
from . import _ew_kernels as K
from . import onnx_op
from ._common import _COMPUTE, compute_dtype, normalize_axis
from ._common import flat_as as _flat
from ._jitb_axis import JITS as AXIS_JITS
from .elementwise import binary, unary

_FLT_MAX = 3.4028234663852886e38
SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875


def _act(
    op: str,
    code: int,
    since: int,
    attrs: dict[str, float] | None = None,
    ints: bool = False,
    arg: str = "X",
):
    """Register a parameterised unary activation whose attributes map, in order, to p1, p2."""
    attrs = dict(attrs or {})
    names = list(attrs)

    if len(names) == 0:

        def nb(x):
            return K.unary_nb(code, x, 0.0, 0.0, 0.0)

        def kernel(x):
            return (unary(code, x, name=op, ints=ints),)
    elif len(names) == 1:

        def nb(x, a):
            return K.unary_nb(code, x, float(a), 0.0, 0.0)

        def kernel(x, **kw):
            return (unary(code, x, float(kw.get(names[0], attrs[names[0]])), name=op, ints=ints),)
    else:

        def nb(x, a, b):
            return K.unary_nb(code, x, float(a), float(b), 0.0)

        def kernel(x, **kw):
            p1 = float(kw.get(names[0], attrs[names[0]]))
            p2 = float(kw.get(names[1], attrs[names[1]]))
            return (unary(code, x, p1, p2, name=op, ints=ints),)

    kernel.__name__ = op.lower()
    kernel.__doc__ = f"ONNX {op}: elementwise activation" + (
        f" with attributes {', '.join(names)}" if names else ""
    )
    jit = K.jit_entry(nb, f"{op.lower()}_jit", lambda x, *a: kernel(x, **dict(zip(names, a))), None)
    prep = _prepare(code, kernel) if not names else None
    onnx_op(op, inputs=(arg,), attributes=attrs, since=since, jit=jit, prepare=prep)(kernel)
    return kernel


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


class _Prepared:
    """An activation without attributes bound for the interpreter's lean path (see
    :mod:`mdf_engine.interpreter_lean`): a C-contiguous float32/float64 array goes straight to
    the Numba loop that :func:`~.elementwise.unary` calls for it (the same values, without its
    per-call dtype checks); anything else to the kernel."""

    __slots__ = ("code", "kernel")

    def __init__(self, code: int, kernel):
        self.code, self.kernel = code, kernel

    def __call__(self, x: Any) -> tuple[Any, ...]:
        if type(x) is np.ndarray and x.flags.c_contiguous:
            dt = x.dtype
            if dt == _F32 or dt == _F64:
                out = np.empty(x.shape, dt)
                K.unary_core(self.code, x.reshape(-1), out.reshape(-1), 0.0, 0.0, 0.0)
                return (out,)
        return self.kernel(x)

    def into(self, x: Any, out: np.ndarray) -> bool:
        """Write the activation of ``x`` into ``out`` (C-contiguous, of x's shape and float
        dtype: the values ``self(x)`` gives); False (nothing written) for any other ``x``."""
        if not (type(x) is np.ndarray and x.flags.c_contiguous and out.flags.c_contiguous):
            return False
        dt = x.dtype
        if not ((dt == _F32 or dt == _F64) and out.dtype == dt and out.shape == x.shape):
            return False
        K.unary_core(self.code, x.reshape(-1), out.reshape(-1), 0.0, 0.0, 0.0)
        return True


def _prepare(code: int, kernel):
    """``prepare=`` of an activation without attributes: a :class:`_Prepared`."""

    def prepare(consts: list[tuple[bool, Any]], attrs: dict[str, Any]) -> _Prepared:
        return _Prepared(code, kernel)

    return prepare


relu = _act("Relu", K.RELU, 6, ints=True)
leakyrelu = _act("LeakyRelu", K.LEAKY, 6, {"alpha": 0.01})
elu = _act("Elu", K.ELU, 6, {"alpha": 1.0})
celu = _act("Celu", K.CELU, 12, {"alpha": 1.0})
sigmoid = _act("Sigmoid", K.SIGMOID, 6)
hardsigmoid = _act("HardSigmoid", K.HSIGMOID, 6, {"alpha": 0.2, "beta": 0.5})
softplus = _act("Softplus", K.SOFTPLUS, 1)
softsign = _act("Softsign", K.SOFTSIGN, 1, arg="input")
thresholdedrelu = _act("ThresholdedRelu", K.THRELU, 10, {"alpha": 1.0})
shrink = _act("Shrink", K.SHRINK, 9, {"bias": 0.0, "lambd": 0.5}, ints=True, arg="input")
# Selu's formula takes (alpha, gamma) as (p1, p2): alphabetical order matches.
selu = _act("Selu", K.SELU, 6, {"alpha": SELU_ALPHA, "gamma": SELU_GAMMA})


def prelu(X, slope):
    """ONNX PRelu: X where X >= 0, slope*X elsewhere (slope broadcast to X)."""
    return (binary(K.PRELU, X, slope, "PRelu"),)


prelu_jit = K.jit_entry(lambda X, slope: K.arith_nb(K.PRELU, X, slope), "prelu_jit", prelu, 2)
onnx_op("PRelu", inputs=("X", "slope"), since=7, jit=prelu_jit)(prelu)


def hardswish(X):
    """ONNX HardSwish: X * HardSigmoid(X) with alpha 1/6, beta 0.5."""
    x = np.asarray(X)
    return ((x * unary(K.HSIGMOID, x, 1.0 / 6.0, 0.5, name="HardSwish")).astype(x.dtype),)


hardswish_jit = K.jit_entry(
    lambda X: X * K.unary_nb(K.HSIGMOID, X, 1.0 / 6.0, 0.5, 0.0), "hardswish_jit", hardswish, 1
)
onnx_op("HardSwish", inputs=("X",), since=14, jit=hardswish_jit)(hardswish)


# ---- Clip --------------------------------------------------------------------------------------


def _bound(v: Any, default: float) -> Any:
    """A Clip bound given as a scalar/1-element tensor (None = no bound) as a Python number."""
    if v is None:
        return default
    a = np.asarray(v)
    if a.size != 1:
        raise MDFError(f"Clip bounds must be scalars (one element), got shape {a.shape}")
    return a.reshape(-1)[0].item()


def _clip(x: Any, lo: Any, hi: Any) -> np.ndarray:
    return unary(K.CLIP, x, lo, hi, name="Clip", ints=True)


def clip6(input, *, max=_FLT_MAX, min=-_FLT_MAX):
    """ONNX Clip (opsets 6-10): bounds as attributes (defaults: the float32 range)."""
    return (_clip(input, float(min), float(max)),)


clip6_jit = K.jit_entry(
    lambda input, max, min: K.unary_nb(K.CLIP, input, float(min), float(max), 0.0),
    "clip6_jit",
    clip6,
    1,
)
onnx_op(
    "Clip",
    inputs=("input",),
    attributes={"max": _FLT_MAX, "min": -_FLT_MAX},
    since=6,
    jit=clip6_jit,
)(clip6)


@njit(cache=True)
def _bound_nb(v, default):
    if v is None:
        return default
    return np.asarray(v).ravel()[0]


def clip(input, min=None, max=None):
    """ONNX Clip (opset 11+): min(max(input, min), max) with optional scalar-tensor bounds;
    when min > max every value becomes max."""
    return (_clip(input, _bound(min, -math.inf), _bound(max, math.inf)),)


clip_jit = K.jit_entry(
    lambda input, min, max: K.unary_nb(
        K.CLIP, input, float(_bound_nb(min, -np.inf)), float(_bound_nb(max, np.inf)), 0.0
    ),
    "clip_jit",
    clip,
    3,
)
onnx_op("Clip", inputs=("input", "min", "max"), optional=("min", "max"), since=11, jit=clip_jit)(
    clip
)


# ---- Softmax family ------------------------------------------------------------------------------


def axis_op(code: int, X: Any, axis: int, coerce_2d: bool, name: str) -> np.ndarray:
    """Softmax-family op ``code`` on a float tensor along ``axis``; with ``coerce_2d`` (opsets
    before 13) over the whole trailing block ``shape[axis:]`` flattened."""
    x = np.asarray(X)
    dt = x.dtype
    if dt.kind != "f":
        raise MDFError(f"{name} expects a float tensor, got dtype {dt}")
    cd = _COMPUTE.get(dt) or compute_dtype(dt, f"{name} input")
    shape = x.shape
    ax = normalize_axis(axis, x.ndim, f"{name} axis")
    outer = math.prod(shape[:ax])
    if coerce_2d:
        n, inner = math.prod(shape[ax:]), 1
    else:
        n, inner = shape[ax], math.prod(shape[ax + 1 :])
    out = np.empty(shape, cd)
    if out.size:
        K.axis_core(code, _flat(x, cd), out.reshape(-1), outer, n, inner)
    return out if cd == dt else out.astype(dt)


def _axis_family(op: str, code: int):
    def v1(input, *, axis=1):
        return (axis_op(code, input, axis, True, op),)

    def v13(input, *, axis=-1):
        return (axis_op(code, input, axis, False, op),)

    v1.__name__ = v13.__name__ = op.lower()
    v1.__doc__ = f"ONNX {op} (opsets 1-12): the input coerced to 2-D at axis (default 1)"
    v13.__doc__ = f"ONNX {op} (opset 13+): along one axis (default -1)"
    jit_v1, jit_v13 = AXIS_JITS[op]  # (``axis`` a constant or a value: jit_like)
    onnx_op(op, inputs=("input",), attributes={"axis": 1}, since=1, jit=jit_v1, jit_like=True)(v1)
    onnx_op(op, inputs=("input",), attributes={"axis": -1}, since=13, jit=jit_v13, jit_like=True)(
        v13
    )
    return v13


softmax = _axis_family("Softmax", K.SOFTMAX)
logsoftmax = _axis_family("LogSoftmax", K.LOGSOFTMAX)
hardmax = _axis_family("Hardmax", K.HARDMAX)
