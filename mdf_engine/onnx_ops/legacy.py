"""Early ONNX operator forms (opsets 1-6 and the seed documents 000/002), namespace ``onnx-legacy``.

The early operator documents (seeds 000 and 002, ONNX opsets 1-6) differ from the MDF/ONNX-13 forms
that the standard ``onnx`` modules implement:

* Add Sub Mul Div Pow And Or Xor Equal Greater Less: attributes ``broadcast`` and ``axis`` with the
  *limited* broadcast (the output has A's shape; B is a scalar or matches a contiguous run of A's
  dims, starting at ``axis`` or suffix-matched when ``axis`` is unset); 000's Pow takes the
  attribute ``exponent`` instead of a second input;
* Gemm: ``broadcast`` (C must be M x N unless set); Softmax/LogSoftmax/Hardmax coerce the input
  to 2-D at ``axis`` (default 1); Pad: ``paddings`` interleaved per axis ``[b0, e0, b1, e1, ...]``
  and ``value``; Slice/Squeeze/Unsqueeze/Split/Reshape/ArgMax/ArgMin/Reduce*: attributes where
  later opsets take inputs; Upsample: ``height_scale``/``width_scale`` (opset 1) or ``scales``
  (opset 7 and seed 003); Cast: ``to`` may be a type name string; Dropout: ``is_test`` (default 0 =
  training, random); BatchNormalization: ``spatial``, ``is_test``, ``consumed_inputs``;
* RNN/LSTM/GRU as in seed 002: ``initial_h`` before ``sequence_lens``, RNN's single
  ``activation``, GRU's 3 activations and ``linear_before_reset=1`` candidate, LSTM's 4
  activations; ``Dot`` (000) is ``numpy.dot``;
* ``consumed_inputs`` is accepted (and ignored) wherever opset 1 had it.

Every version here is registered with ``since=1`` (a few also ``since=7``) under the standard name
``onnx::Op``; the registry picks the newest ``since <= opset`` across namespaces, so the standard
kernels (registered from the opset where the semantics changed, e.g. ``since=7`` for Add) take
over from there. To avoid an ambiguous tie, a legacy version is *not* registered when the standard
``onnx`` namespace already has a version with the same ``since`` (it is then listed in
:data:`SHADOWED`); :func:`legacy_schema` still gives it for direct calls and tests.

Ops whose early form has the same numerics as the standard form (Conv, pools, LRN, MatMul, ...)
are registered as thin adapters that call the earliest standard ``onnx`` version, so that opset
1-6 models run even when the standard module registers only later versions.
Shape-only ops (Reshape, Slice, Squeeze, Unsqueeze, Split, Gather, Concat, Pad) use numpy views or
numpy data movement; the numeric cores are Numba ``njit`` kernels.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..randomness import generator
from ..registry import REGISTRY, REQUIRED, OpSchema

NAMESPACE = "onnx-legacy"

#: (op, since) of legacy versions not registered because the standard namespace has the same since.
SHADOWED: list[tuple[str, int]] = []

#: Every legacy schema built here, registered or not: (op, since) -> OpSchema.
SCHEMAS: dict[tuple[str, int], OpSchema] = {}

_OWN_MODULES = {"legacy", "experimental", "modified"}


def _import_standard_families() -> None:
    """Import the standard family modules first, so that the tie check below sees them."""
    pkg = importlib.import_module("mdf_engine.onnx_ops")
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_") and info.name not in _OWN_MODULES:
            importlib.import_module(f"mdf_engine.onnx_ops.{info.name}")


_import_standard_families()


def keep_half(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """Kernels compute float16 inputs in float32; this gives their float outputs back as float16
    (the early documents allow float16 everywhere)."""

    @functools.wraps(kernel)
    def wrapped(*args: Any, **kw: Any) -> Any:
        out = kernel(*args, **kw)
        if not any(isinstance(a, np.ndarray) and a.dtype == np.float16 for a in args):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(o.astype(np.float16) if isinstance(o, np.ndarray) and o.dtype.kind == "f"
                     else o for o in outs)

    return wrapped


def legacy_op(
    op: str,
    inputs: Iterable[str] = (),
    attributes: dict[str, Any] | None = None,
    outputs: Iterable[str] = ("Y",),
    optional: Iterable[str] = (),
    variadic: bool = False,
    since: int = 1,
    python_only: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Build the legacy schema of ``onnx::op`` and register it unless the standard ties with it."""

    def deco(kernel: Callable[..., Any]) -> Callable[..., Any]:
        sch = OpSchema(
            namespace=NAMESPACE, op=op, inputs=tuple(inputs), attributes=dict(attributes or {}),
            outputs=tuple(outputs), kernel=keep_half(kernel), optional=frozenset(optional),
            variadic=variadic, since=since, python_only=python_only,
            doc=(kernel.__doc__ or "").strip(),
        )
        SCHEMAS[(op, since)] = sch
        std = {v.since for v in REGISTRY.versions(sch.name) if v.namespace == "onnx"}
        if since in std:
            SHADOWED.append((op, since))
        else:
            REGISTRY.add(sch)
        return kernel

    return deco


def legacy_schema(op: str, since: int = 1) -> OpSchema:
    """The legacy schema of ``op`` (registered or shadowed)."""
    try:
        return SCHEMAS[(op, since)]
    except KeyError:
        raise MDFError(f"no legacy form of onnx::{op} since opset {since}") from None


def call(op: str, inputs: Sequence[Any], attributes: dict[str, Any] | None = None,
         since: int = 1) -> list[Any]:
    """Run the legacy form of ``op`` directly (whatever the registry would pick)."""
    return list(legacy_schema(op, since).call(list(inputs), attributes))


def _arr(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def _given(**kw: Any) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}


def _float_dtype(x: np.ndarray) -> np.ndarray:
    """float32/float64 stay as they are, float16 is computed in float32, anything else in
    float64."""
    if x.dtype == np.float32 or x.dtype == np.float64:
        return x
    return x.astype(np.float32 if x.dtype == np.float16 else np.float64)


# ---------------------------------------------------------------- limited (legacy) broadcast


def legacy_broadcast_shape(a_shape: tuple[int, ...], b_shape: tuple[int, ...], broadcast: int,
                           axis: int | None, op: str) -> tuple[int, ...]:
    """The shape B is reshaped to so that numpy broadcasting applies it onto A the legacy way.

    ``broadcast=0``: shapes must be equal. ``broadcast=1``: B of size 1 is a scalar; otherwise
    B's dims must match A's dims ``axis .. axis+B.ndim`` (suffix matching when ``axis`` is None).
    A size-1 dim of B is also accepted (and repeated), as the PyTorch-exported opset-6 models need.
    """
    if not broadcast:
        if tuple(a_shape) != tuple(b_shape):
            raise MDFError(
                f"onnx::{op} (opset < 7) with broadcast=0 needs inputs of the same shape, got "
                f"{tuple(a_shape)} and {tuple(b_shape)}; set broadcast=1 for the limited broadcast"
            )
        return tuple(b_shape)
    if int(np.prod(b_shape)) == 1:
        return ()
    k = len(b_shape)
    r = len(a_shape)
    s = r - k if axis is None else (axis + r if axis < 0 else axis)
    ok = 0 <= s and s + k <= r and all(
        bd == ad or bd == 1 for bd, ad in zip(b_shape, a_shape[s:s + k])
    )
    if not ok:
        where = "suffix-matched" if axis is None else f"starting at axis {axis}"
        raise MDFError(
            f"onnx::{op} (opset < 7, broadcast=1): B of shape {tuple(b_shape)} must match a "
            f"contiguous run of A's shape {tuple(a_shape)} ({where}) or be a scalar"
        )
    return (1,) * s + tuple(b_shape) + (1,) * (r - s - k)


def _broadcast_b(A: np.ndarray, B: np.ndarray, broadcast: int, axis: int | None,
                 op: str) -> np.ndarray:
    shape = legacy_broadcast_shape(A.shape, B.shape, broadcast, axis, op)
    return np.ascontiguousarray(np.broadcast_to(B.reshape(shape), A.shape))


# op codes of the binary kernel
_ADD, _SUB, _MUL, _DIV, _POW = 0, 1, 2, 3, 4
_AND, _OR, _XOR, _EQ, _GT, _LT = 0, 1, 2, 3, 4, 5


@numba.njit(cache=True)
def _arith_kernel(a, b, code):
    """Elementwise A op B on two same-size flat arrays of one dtype; ints divide like C."""
    out = np.empty_like(a)
    for i in range(a.size):
        x = a[i]
        y = b[i]
        if code == 0:
            out[i] = x + y
        elif code == 1:
            out[i] = x - y
        elif code == 2:
            out[i] = x * y
        elif code == 3:
            out[i] = x / y
        else:
            out[i] = x ** y
    return out


@numba.njit(cache=True)
def _int_div_kernel(a, b):
    out = np.empty_like(a)
    for i in range(a.size):
        q = abs(a[i]) // abs(b[i])
        out[i] = -q if (a[i] < 0) != (b[i] < 0) else q
    return out


@numba.njit(cache=True)
def _compare_kernel(a, b, code):
    """Elementwise logic/comparison of two same-size flat arrays, bool out."""
    out = np.empty(a.size, dtype=np.bool_)
    for i in range(a.size):
        x = a[i]
        y = b[i]
        if code == 0:
            out[i] = bool(x) and bool(y)
        elif code == 1:
            out[i] = bool(x) or bool(y)
        elif code == 2:
            out[i] = bool(x) != bool(y)
        elif code == 3:
            out[i] = x == y
        elif code == 4:
            out[i] = x > y
        else:
            out[i] = x < y
    return out


def _legacy_arith(op: str, code: int, A: Any, B: Any, broadcast: int, axis: int | None) -> tuple:
    A = _arr(A)
    B = _arr(B)
    if A.dtype == np.float16:
        A = A.astype(np.float32)
    if B.dtype != A.dtype:
        B = B.astype(A.dtype)
    Bf = _broadcast_b(A, B, broadcast, axis, op)
    a = np.ascontiguousarray(A).ravel()
    b = Bf.ravel()
    if A.dtype.kind in "iu" and code == _DIV:
        if np.any(b == 0):
            raise MDFError(f"onnx::{op}: integer division by zero")
        out = _int_div_kernel(a, b)
    elif A.dtype.kind == "b":
        raise MDFError(f"onnx::{op} needs numeric inputs, got bool")
    else:
        with np.errstate(all="ignore"):
            out = _arith_kernel(a, b, code)
    return (out.reshape(A.shape),)


_BIN_ATTRS = {"broadcast": 0, "axis": None, "consumed_inputs": None}


def _make_arith(op: str, code: int) -> None:
    @legacy_op(op, inputs=("A", "B"), attributes=_BIN_ATTRS, outputs=("C",))
    def kernel(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
        return _legacy_arith(op, code, A, B, broadcast, axis)

    kernel.__doc__ = (f"{op} of opsets 1-6: C = A {op.lower()} B with the limited broadcast "
                      "(attributes broadcast, axis); C has A's shape and dtype.")


for _op, _code in (("Add", _ADD), ("Sub", _SUB), ("Mul", _MUL), ("Div", _DIV)):
    _make_arith(_op, _code)


@legacy_op("Pow", inputs=("X", "Y"), optional=("Y",), outputs=("Z",),
           attributes={"broadcast": 0, "axis": None, "exponent": None})
def pow_legacy(X, Y=None, *, broadcast=0, axis=None, exponent=None):
    """Pow of opsets 1-6: Z = X ** Y with the limited broadcast; seed 000's form takes a single
    input and the float attribute ``exponent``."""
    X = _arr(X)
    if Y is None:
        if exponent is None:
            raise MDFError("onnx::Pow (opset < 7) needs input Y or attribute exponent")
        return _legacy_arith("Pow", _POW, X, np.asarray(exponent, dtype=X.dtype), 1, None)
    return _legacy_arith("Pow", _POW, X, Y, broadcast, axis)


def _make_compare(op: str, code: int, logical: bool) -> None:
    @legacy_op(op, inputs=("A", "B"), attributes={"broadcast": 0, "axis": None},
               outputs=("C",))
    def kernel(A, B, *, broadcast=0, axis=None):
        A = _arr(A)
        B = _arr(B)
        if A.dtype == np.float16:
            A = A.astype(np.float32)
        if logical and (A.dtype != np.bool_ or B.dtype != np.bool_):
            raise MDFError(f"onnx::{op} needs bool inputs, got {A.dtype} and {B.dtype}")
        if B.dtype != A.dtype:
            B = B.astype(A.dtype)
        Bf = _broadcast_b(A, B, broadcast, axis, op)
        out = _compare_kernel(np.ascontiguousarray(A).ravel(), Bf.ravel(), code)
        return (out.reshape(A.shape),)

    kernel.__doc__ = (f"{op} of opset 1: elementwise, bool output, limited broadcast "
                      "(attributes broadcast, axis).")


for _op, _code, _logical in (("And", _AND, True), ("Or", _OR, True), ("Xor", _XOR, True),
                             ("Equal", _EQ, False), ("Greater", _GT, False),
                             ("Less", _LT, False)):
    _make_compare(_op, _code, _logical)


# ---------------------------------------------------------------- Gemm, Dot


@numba.njit(cache=True)
def _gemm_kernel(a, b, c, alpha, beta):
    return alpha * np.dot(a, b) + beta * c


@legacy_op("Gemm", inputs=("A", "B", "C"), outputs=("Y",),
           attributes={"alpha": 1.0, "beta": 1.0, "broadcast": 0, "transA": 0, "transB": 0})
def gemm_legacy(A, B, C, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):
    """Gemm of opsets 1-6: Y = alpha * A' B' + beta * C; C is required and must be M x N unless
    ``broadcast`` is set (then it is broadcast numpy-style onto M x N)."""
    A = _float_dtype(_arr(A))
    dt = A.dtype
    a = np.ascontiguousarray(A.T if transA else A)
    b = np.ascontiguousarray((_arr(B).T if transB else _arr(B)).astype(dt))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise MDFError(f"onnx::Gemm needs 2-D A' (M x K) and B' (K x N), got {a.shape} and "
                       f"{b.shape}")
    mn = (a.shape[0], b.shape[1])
    C = _arr(C).astype(dt)
    if not broadcast and C.shape != mn:
        raise MDFError(f"onnx::Gemm (opset < 7) with broadcast=0 needs C of shape {mn}, got "
                       f"{C.shape}; set broadcast=1")
    try:
        c = np.ascontiguousarray(np.broadcast_to(C, mn))
    except ValueError:
        raise MDFError(f"onnx::Gemm: C of shape {C.shape} does not broadcast to {mn}") from None
    return (_gemm_kernel(a, b, c, dt.type(alpha), dt.type(beta)),)


@numba.njit(cache=True)
def _dot2(a, b):
    return np.dot(a, b)


@legacy_op("Dot", inputs=("X", "Y"), outputs=("Z",))
def dot(X, Y):
    """Dot of seed 000: ``numpy.dot`` semantics (for N-D inputs: a sum product over the last axis
    of X and the second-to-last axis of Y; not ``matmul``)."""
    X = _arr(X)
    Y = _arr(Y)
    dt = np.result_type(X.dtype, Y.dtype)
    if dt == np.float16:
        dt = np.dtype(np.float32)
    if dt.kind not in "f":
        dt = np.dtype(np.float64) if dt.kind not in "iu" else dt
    X = X.astype(dt)
    Y = Y.astype(dt)
    if X.ndim == 0 or Y.ndim == 0:
        return (X * Y,)
    k = X.shape[-1]
    kb = Y.shape[0] if Y.ndim == 1 else Y.shape[-2]
    if k != kb:
        raise MDFError(f"onnx::Dot: shapes {X.shape} and {Y.shape} are not aligned "
                       f"({k} != {kb})")
    x2 = np.ascontiguousarray(X.reshape(-1, k))
    if Y.ndim == 1:
        y2 = np.ascontiguousarray(Y.reshape(k, 1))
        out_shape = X.shape[:-1]
    else:
        y2 = np.ascontiguousarray(np.moveaxis(Y, -2, 0).reshape(k, -1))
        out_shape = X.shape[:-1] + Y.shape[:-2] + Y.shape[-1:]
    if dt.kind == "f":
        z = _dot2(x2, y2)
    else:
        z = x2 @ y2
    return (z.reshape(out_shape),)


# ---------------------------------------------------------------- Softmax family (2-D coercion)


@numba.njit(cache=True)
def _softmax_rows(x, code):
    """Rows of a 2-D array: code 0 softmax, 1 log-softmax, 2 hardmax (first maximum)."""
    n, d = x.shape
    out = np.zeros_like(x)
    for i in range(n):
        if d == 0:
            continue
        m = x[i, 0]
        am = 0
        for j in range(1, d):
            if x[i, j] > m:
                m = x[i, j]
                am = j
        if code == 2:
            out[i, am] = 1
            continue
        s = 0.0
        for j in range(d):
            s += np.exp(x[i, j] - m)
        if code == 0:
            for j in range(d):
                out[i, j] = np.exp(x[i, j] - m) / s
        else:
            ls = np.log(s)
            for j in range(d):
                out[i, j] = x[i, j] - m - ls
    return out


def coerce_2d(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """(N, D) of the legacy 2-D coercion: N = prod(shape[:axis]), D = prod(shape[axis:])."""
    r = len(shape)
    a = axis + r if axis < 0 else axis
    if not 0 <= a <= r:
        raise MDFError(f"axis {axis} is out of range for a tensor of rank {r}")
    return int(np.prod(shape[:a], dtype=np.int64)), int(np.prod(shape[a:], dtype=np.int64))


def _make_softmax(op: str, code: int) -> None:
    @legacy_op(op, inputs=("input",), attributes={"axis": 1}, outputs=("output",))
    def kernel(input, *, axis=1):
        x = _float_dtype(_arr(input))
        n, d = coerce_2d(x.shape, int(axis))
        y = _softmax_rows(np.ascontiguousarray(x.reshape(n, d)), code)
        return (y.reshape(x.shape),)

    kernel.__doc__ = (f"{op} of opsets 1-12: the input is coerced to 2-D at ``axis`` "
                      "(default 1) and normalised jointly over all trailing dims.")


for _op, _code in (("Softmax", 0), ("LogSoftmax", 1), ("Hardmax", 2)):
    _make_softmax(_op, _code)


# ---------------------------------------------------------------- unary ops with consumed_inputs

_UNARY = {"Abs": 0, "Ceil": 1, "Exp": 2, "Floor": 3, "Log": 4, "Neg": 5, "Reciprocal": 6,
          "Relu": 7, "Sigmoid": 8, "Sqrt": 9, "Tanh": 10, "Elu": 11, "LeakyRelu": 12, "Selu": 13}


@numba.njit(cache=True)
def _unary_kernel(x, code, p1, p2):
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        if code == 0:
            r = abs(v)
        elif code == 1:
            r = np.ceil(v)
        elif code == 2:
            r = np.exp(v)
        elif code == 3:
            r = np.floor(v)
        elif code == 4:
            r = np.log(v)
        elif code == 5:
            r = -v
        elif code == 6:
            r = 1.0 / v
        elif code == 7:
            r = v if v > 0 else v - v
        elif code == 8:
            r = 1.0 / (1.0 + np.exp(-v)) if v >= 0 else np.exp(v) / (1.0 + np.exp(v))
        elif code == 9:
            r = np.sqrt(v)
        elif code == 10:
            r = np.tanh(v)
        elif code == 11:
            r = v if v >= 0 else p1 * (np.exp(v) - 1.0)
        elif code == 12:
            r = v if v >= 0 else p1 * v
        else:
            r = p2 * v if v > 0 else p2 * (p1 * np.exp(v) - p1)
        out[i] = r
    return out


def _unary(op: str, X: Any, p1: float = 0.0, p2: float = 0.0) -> tuple:
    X = _arr(X)
    if X.dtype.kind in "iu" and op in ("Abs", "Neg", "Relu"):
        x = np.ascontiguousarray(X).astype(np.int64).ravel()
        out = _unary_kernel(x, _UNARY[op], 0, 0).astype(X.dtype)
        return (out.reshape(X.shape),)
    x = np.ascontiguousarray(_float_dtype(X)).ravel()
    with np.errstate(all="ignore"):
        out = _unary_kernel(x, _UNARY[op], x.dtype.type(p1), x.dtype.type(p2))
    return (out.reshape(X.shape),)


def _make_unary(op: str, names: tuple[str, str]) -> None:
    @legacy_op(op, inputs=(names[0],), outputs=(names[1],),
               attributes={"consumed_inputs": None})
    def kernel(X, *, consumed_inputs=None):
        return _unary(op, X)

    kernel.__doc__ = f"{op} of opset 1 (accepts and ignores ``consumed_inputs``)."


for _op in ("Abs", "Ceil", "Floor", "Neg", "Reciprocal", "Relu", "Sigmoid", "Sqrt"):
    _make_unary(_op, ("X", "Y"))
for _op in ("Exp", "Log", "Tanh"):
    _make_unary(_op, ("input", "output"))


@legacy_op("Elu", inputs=("X",), attributes={"alpha": 1.0, "consumed_inputs": None})
def elu_legacy(X, *, alpha=1.0, consumed_inputs=None):
    """Elu of opset 1: x if x >= 0 else alpha*(exp(x)-1)."""
    return _unary("Elu", X, alpha)


@legacy_op("LeakyRelu", inputs=("X",), attributes={"alpha": 0.01, "consumed_inputs": None})
def leaky_relu_legacy(X, *, alpha=0.01, consumed_inputs=None):
    """LeakyRelu of opset 1: x if x >= 0 else alpha*x (alpha default 0.01)."""
    return _unary("LeakyRelu", X, alpha)


@legacy_op("Selu", inputs=("X",),
           attributes={"alpha": 1.6732, "gamma": 1.0507, "consumed_inputs": None})
def selu_legacy(X, *, alpha=1.6732, gamma=1.0507, consumed_inputs=None):
    """Selu of opset 1 (seed defaults alpha 1.6732, gamma 1.0507)."""
    return _unary("Selu", X, alpha, gamma)


@legacy_op("PRelu", inputs=("X", "slope"), attributes={"consumed_inputs": None})
def prelu_legacy(X, slope, *, consumed_inputs=None):
    """PRelu of opsets 1-6: a slope of size 1 is shared; a 1-D slope of length C applies per
    channel (axis 1, Caffe2 style); any other slope must broadcast numpy-style onto X."""
    X = _float_dtype(_arr(X))
    s = _arr(slope).astype(X.dtype)
    if s.size == 1:
        s = s.reshape(())
    elif s.ndim == 1 and X.ndim >= 2 and s.shape[0] == X.shape[1]:
        s = s.reshape((1, -1) + (1,) * (X.ndim - 2))
    try:
        sf = np.ascontiguousarray(np.broadcast_to(s, X.shape)).ravel()
    except ValueError:
        raise MDFError(f"onnx::PRelu (opset < 7): slope of shape {s.shape} is neither per "
                       f"channel nor broadcastable to {X.shape}") from None
    x = np.ascontiguousarray(X).ravel()
    return (np.where(x < 0, x * sf, x).reshape(X.shape),)


def _same_shape_variadic(op: str, arrays: Sequence[Any]) -> list[np.ndarray]:
    arrs = [_arr(a) for a in arrays if a is not None]
    if not arrs:
        raise MDFError(f"onnx::{op} needs at least one input")
    for a in arrs[1:]:
        if a.shape != arrs[0].shape:
            raise MDFError(f"onnx::{op} (opset < 8) needs inputs of the same shape, got "
                           f"{arrs[0].shape} and {a.shape}")
    return arrs


@numba.njit(cache=True)
def _fold_kernel(stack, code):
    """Fold the rows of a (k, n) array: code 0 max, 1 min, 2 sum."""
    out = stack[0].copy()
    for j in range(1, stack.shape[0]):
        for i in range(stack.shape[1]):
            v = stack[j, i]
            if code == 0:
                if v > out[i] or v != v:
                    out[i] = v
            elif code == 1:
                if v < out[i] or v != v:
                    out[i] = v
            else:
                out[i] += v
    return out


def _make_variadic(op: str, code: int, out_name: str) -> None:
    @legacy_op(op, inputs=("data_0",), variadic=True, outputs=(out_name,),
               attributes={"consumed_inputs": None})
    def kernel(*data, consumed_inputs=None):
        arrs = _same_shape_variadic(op, data)
        stack = np.ascontiguousarray(np.stack([a.ravel() for a in arrs]))
        return (_fold_kernel(stack, code).reshape(arrs[0].shape),)

    kernel.__doc__ = f"{op} of opsets 1-7: all inputs have the same shape (no broadcasting)."


for _op, _code, _out in (("Max", 0, "max"), ("Min", 1, "min"), ("Sum", 2, "sum")):
    _make_variadic(_op, _code, _out)


# ---------------------------------------------------------------- shape ops with attributes


def _axis(a: int, r: int, op: str) -> int:
    b = a + r if a < 0 else a
    if not 0 <= b < r:
        raise MDFError(f"onnx::{op}: axis {a} is out of range for rank {r}")
    return b


@legacy_op("Reshape", inputs=("data",), outputs=("reshaped",),
           attributes={"shape": None, "consumed_inputs": None})
def reshape_legacy(data, *, shape=None, consumed_inputs=None):
    """Reshape of opsets 1-4: the target is the attribute ``shape``; 0 copies the input's dim,
    -1 is inferred (a numpy view when possible)."""
    x = _arr(data)
    if shape is None:
        raise MDFError("onnx::Reshape (opset < 5) needs the attribute 'shape'")
    target = [int(s) for s in shape]
    for i, s in enumerate(target):
        if s == 0:
            if i >= x.ndim:
                raise MDFError(f"onnx::Reshape: shape[{i}] = 0 but the input has rank {x.ndim}")
            target[i] = x.shape[i]
    try:
        return (x.reshape(target),)
    except ValueError:
        raise MDFError(f"onnx::Reshape: cannot reshape {x.shape} to {list(shape)}") from None


@legacy_op("Slice", inputs=("data",), outputs=("output",),
           attributes={"starts": REQUIRED, "ends": REQUIRED, "axes": None})
def slice_legacy(data, *, starts, ends, axes=None):
    """Slice of opsets 1-9: attributes ``starts``, ``ends`` and optional ``axes`` (default
    0..len-1); numpy semantics, negative values count from the end, out of range values clamp;
    step 1. Returns a numpy view."""
    x = _arr(data)
    if len(starts) != len(ends):
        raise MDFError("onnx::Slice: starts and ends must have the same length")
    ax = list(range(len(starts))) if axes is None else list(axes)
    if len(ax) != len(starts):
        raise MDFError("onnx::Slice: axes, starts and ends must have the same length")
    idx = [slice(None)] * x.ndim
    for a, s, e in zip(ax, starts, ends):
        idx[_axis(int(a), x.ndim, "Slice")] = slice(int(s), int(e))
    return (x[tuple(idx)],)


@legacy_op("Squeeze", inputs=("data",), outputs=("squeezed",), attributes={"axes": None})
def squeeze_legacy(data, *, axes=None):
    """Squeeze of opsets 1-12: attribute ``axes`` (default: every size-1 dim); a listed dim
    that is not 1 is an error. Returns a numpy view."""
    x = _arr(data)
    if axes is None:
        ax = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        ax = tuple(sorted({_axis(int(a), x.ndim, "Squeeze") for a in axes}))
    for a in ax:
        if x.shape[a] != 1:
            raise MDFError(f"onnx::Squeeze: dim {a} of shape {x.shape} is not 1")
    return (x.reshape([d for i, d in enumerate(x.shape) if i not in ax]),)


@legacy_op("Unsqueeze", inputs=("data",), outputs=("expanded",), attributes={"axes": REQUIRED})
def unsqueeze_legacy(data, *, axes):
    """Unsqueeze of opsets 1-12: attribute ``axes`` are positions in the output. A view."""
    x = _arr(data)
    r = x.ndim + len(axes)
    ax = sorted(_axis(int(a), r, "Unsqueeze") for a in axes)
    if len(set(ax)) != len(ax):
        raise MDFError(f"onnx::Unsqueeze: repeated axes {list(axes)}")
    shape = list(x.shape)
    for a in ax:
        shape.insert(a, 1)
    return (x.reshape(shape),)


@legacy_op("Split", inputs=("input", "split"), optional=("split",), outputs=("outputs",),
           attributes={"axis": 0, "split": None, "num_outputs": None})
def split_legacy(input, split_input=None, *, axis=0, split=None, num_outputs=None):
    """Split of opsets 1-12: part lengths from the 2nd input or the attribute ``split``; equal
    parts if neither is given. The number of equal parts is the node's number of outputs,
    which a kernel cannot see: pass it as ``num_outputs`` (the name opset 18 gives it).
    Returns numpy views."""
    x = _arr(input)
    a = _axis(int(axis), x.ndim, "Split")
    parts = split_input if split_input is not None else split
    if parts is None:
        if num_outputs is None:
            raise MDFError("onnx::Split (legacy): give the part lengths ('split' input or "
                           "attribute) or the number of equal parts as 'num_outputs'")
        k = int(num_outputs)
        if k <= 0 or x.shape[a] % k:
            raise MDFError(f"onnx::Split: dim {a} = {x.shape[a]} does not split into {k} "
                           "equal parts")
        parts = [x.shape[a] // k] * k
    lens = [int(p) for p in np.asarray(parts).ravel()]
    if sum(lens) != x.shape[a]:
        raise MDFError(f"onnx::Split: parts {lens} do not add up to dim {a} = {x.shape[a]}")
    cuts = np.cumsum(lens)[:-1]
    return tuple(np.split(x, cuts, axis=a))


@legacy_op("Concat", inputs=("inputs",), variadic=True, outputs=("concat_result",),
           attributes={"axis": 1})
def concat_legacy(*inputs, axis=1):
    """Concat of opsets 1-3: ``axis`` defaults to 1."""
    arrs = [_arr(a) for a in inputs if a is not None]
    if not arrs:
        raise MDFError("onnx::Concat needs at least one input")
    try:
        return (np.concatenate(arrs, axis=int(axis)),)
    except (ValueError, np.exceptions.AxisError) as e:
        raise MDFError(f"onnx::Concat: {e}") from None


@legacy_op("Flatten", inputs=("input",), outputs=("output",), attributes={"axis": 1})
def flatten_legacy(input, *, axis=1):
    """Flatten of opsets 1-8 (seed 000 has no attribute: axis 1): 2-D (prod(:axis),
    prod(axis:)). A view when possible."""
    x = _arr(input)
    return (x.reshape(coerce_2d(x.shape, int(axis))),)


@legacy_op("Gather", inputs=("data", "indices"), outputs=("output",), attributes={"axis": 0})
def gather_legacy(data, indices, *, axis=0):
    """Gather of opsets 1-10 (seed: always axis 0; the attribute is accepted): np.take."""
    x = _arr(data)
    a = _axis(int(axis), x.ndim, "Gather")
    idx = _arr(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + x.shape[a], idx)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[a]):
        raise MDFError(f"onnx::Gather: an index is out of range for dim {a} = {x.shape[a]}")
    return (np.take(x, idx, axis=a),)


def _arg_axis(axis: int | None, axes: Sequence[int] | None) -> int:
    if axes is not None:
        if len(axes) != 1:
            raise MDFError(f"ArgMax/ArgMin (seed 000): 'axes' must hold one axis, got {axes}")
        return int(axes[0])
    return 0 if axis is None else int(axis)


def _make_arg(op: str, fn: Callable[..., Any]) -> None:
    @legacy_op(op, inputs=("data",), outputs=("reduced",),
               attributes={"axis": None, "axes": None, "keepdims": 1})
    def kernel(data, *, axis=None, axes=None, keepdims=1):
        x = _arr(data)
        a = _axis(_arg_axis(axis, axes), x.ndim, op)
        y = fn(x, axis=a).astype(np.int64)
        return (np.expand_dims(y, a) if keepdims else y,)

    kernel.__doc__ = (f"{op} of opsets 1-10; seed 000's ``axes`` (a one-element list) is "
                      "accepted as ``axis``. First index of the extreme; int64 output.")


_make_arg("ArgMax", np.argmax)
_make_arg("ArgMin", np.argmin)


def _logsumexp(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return s if keepdims else np.squeeze(s, axis=axis)


_REDUCE = {"ReduceLogSumExp": _logsumexp, "ReduceMax": np.max, "ReduceMean": np.mean,
           "ReduceMin": np.min, "ReduceProd": np.prod, "ReduceSum": np.sum}


def _make_reduce(op: str) -> None:
    fn = _REDUCE[op]

    @legacy_op(op, inputs=("data",), outputs=("reduced",),
               attributes={"axes": None, "keepdims": 1})
    def kernel(data, *, axes=None, keepdims=1):
        x = _arr(data)
        ax = tuple(range(x.ndim)) if axes is None else tuple(
            sorted({_axis(int(a), x.ndim, op) for a in axes}))
        y = fn(x, axis=ax, keepdims=bool(keepdims))
        return (np.asarray(y, dtype=x.dtype),)

    kernel.__doc__ = f"{op} of opsets 1-10 (``axes`` attribute; default all axes)."


for _op in _REDUCE:
    _make_reduce(_op)


_TYPE_NAMES = {
    "FLOAT": np.float32, "FLOAT32": np.float32, "UINT8": np.uint8, "INT8": np.int8,
    "UINT16": np.uint16, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "BOOL": np.bool_, "FLOAT16": np.float16, "DOUBLE": np.float64, "FLOAT64": np.float64,
    "UINT32": np.uint32, "UINT64": np.uint64,
}
_TYPE_ENUM = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
              7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32,
              13: np.uint64}


def dtype_of(to: Any) -> np.dtype:
    """The numpy dtype of an ONNX type given as a name string (legacy) or a DataType enum int."""
    if isinstance(to, (bytes, str)):
        name = to.decode() if isinstance(to, bytes) else to
        t = _TYPE_NAMES.get(name.upper().replace("TENSOR(", "").rstrip(")"))
    else:
        t = _TYPE_ENUM.get(int(to))
    if t is None:
        raise MDFError(f"unknown ONNX data type {to!r} (expected a name such as 'FLOAT', "
                       f"'DOUBLE', 'INT64' or a TensorProto enum value)")
    return np.dtype(t)


@legacy_op("Cast", inputs=("input",), outputs=("output",), attributes={"to": REQUIRED})
def cast_legacy(input, *, to):
    """Cast of opsets 1-5: ``to`` is a type name string (or an enum int); float to int
    truncates toward zero."""
    x = _arr(input)
    with np.errstate(all="ignore"):
        return (x.astype(dtype_of(to)),)


@legacy_op("Pad", inputs=("data",), outputs=("output",),
           attributes={"paddings": REQUIRED, "mode": "constant", "value": 0.0})
def pad_legacy(data, *, paddings, mode="constant", value=0.0):
    """Pad of opset 1 (seed 002): ``paddings`` interleaved per axis ``[b0, e0, b1, e1, ...]``,
    ``mode`` constant/reflect/edge, ``value`` for constant mode (numpy data movement)."""
    x = _arr(data)
    p = [int(v) for v in paddings]
    if len(p) != 2 * x.ndim:
        raise MDFError(f"onnx::Pad (opset 1): 'paddings' needs 2*rank = {2 * x.ndim} values, "
                       f"got {len(p)}")
    if min(p, default=0) < 0:
        raise MDFError("onnx::Pad (opset 1): paddings must be non-negative")
    widths = [(p[2 * i], p[2 * i + 1]) for i in range(x.ndim)]
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode == "constant":
        return (np.pad(x, widths, mode="constant", constant_values=value),)
    if mode in ("reflect", "edge"):
        return (np.pad(x, widths, mode=mode),)
    raise MDFError(f"onnx::Pad: mode must be constant, reflect or edge, got {mode!r}")


# ---------------------------------------------------------------- Upsample


@numba.njit(cache=True)
def _lerp_last(x, out_len, scale):
    """Linear interpolation along the last axis of a 2-D array, asymmetric coordinates
    (in = out / scale), clamped at the border."""
    m, n = x.shape
    out = np.empty((m, out_len), dtype=x.dtype)
    for j in range(out_len):
        pos = j / scale
        i0 = int(np.floor(pos))
        if i0 > n - 1:
            i0 = n - 1
        i1 = i0 + 1 if i0 + 1 < n else n - 1
        w = pos - i0
        if w > 1.0:
            w = 1.0
        for i in range(m):
            out[i, j] = x[i, i0] * (1.0 - w) + x[i, i1] * w
    return out


def upsample(X: Any, scales: Sequence[float], mode: str) -> np.ndarray:
    """Upsample by per-dim ``scales`` (output dim floor(in*scale)); nearest: in = floor(out/scale);
    linear/bilinear: separable linear interpolation with in = out/scale, clamped."""
    x = _arr(X)
    if len(scales) != x.ndim:
        raise MDFError(f"Upsample: {len(scales)} scales for an input of rank {x.ndim}")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    mode = mode.lower()
    if mode == "nearest":
        y = x
        for a, s in enumerate(scales):
            if s == 1:
                continue
            n_out = int(np.floor(x.shape[a] * s))
            idx = np.minimum(np.floor(np.arange(n_out) / s).astype(np.int64), x.shape[a] - 1)
            y = np.take(y, idx, axis=a)
        return np.ascontiguousarray(y)
    if mode in ("linear", "bilinear"):
        y = _float_dtype(x)
        for a, s in enumerate(scales):
            if s == 1:
                continue
            n_out = int(np.floor(x.shape[a] * s))
            moved = np.ascontiguousarray(np.moveaxis(y, a, -1))
            flat = moved.reshape(-1, moved.shape[-1])
            z = _lerp_last(flat, n_out, float(s)).reshape(moved.shape[:-1] + (n_out,))
            y = np.moveaxis(z, -1, a)
        return np.ascontiguousarray(y).astype(x.dtype, copy=False)
    raise MDFError(f"Upsample: mode must be nearest or (bi)linear, got {mode!r}")


@legacy_op("Upsample", inputs=("X", "scales"), optional=("scales",), outputs=("Y",),
           attributes={"height_scale": None, "width_scale": None, "scales": None,
                       "mode": "nearest"})
def upsample_legacy(X, scales_input=None, *, height_scale=None, width_scale=None, scales=None,
                    mode="nearest"):
    """Upsample of opsets 1-8: opset 1 scales the last two dims of an NCHW tensor by
    ``height_scale``/``width_scale`` (mode nearest or bilinear); opset 7 (and seed 003) gives
    the attribute ``scales`` for every dim (mode nearest or linear). The opset-9 form, ``scales``
    as a second input, is accepted too."""
    x = _arr(X)
    if scales_input is not None:
        scales = [float(v) for v in np.asarray(scales_input).ravel()]
    if scales is None:
        if height_scale is None or width_scale is None:
            raise MDFError("onnx::Upsample (opset < 9) needs 'scales' or both "
                           "'height_scale' and 'width_scale'")
        if x.ndim != 4:
            raise MDFError(f"onnx::Upsample (opset 1) needs a 4-D NCHW input, got {x.shape}")
        scales = [1.0, 1.0, float(height_scale), float(width_scale)]
    return (upsample(x, [float(s) for s in scales], mode),)


# ---------------------------------------------------------------- Dropout


def _dropout(data: Any, ratio: float, training: bool, seed: float | None) -> tuple:
    x = _arr(data)
    if not training or ratio == 0:
        return (x.copy(), np.ones(x.shape, dtype=x.dtype))
    if not 0 <= ratio < 1:
        raise MDFError(f"onnx::Dropout: ratio must be in [0, 1), got {ratio}")
    rng = generator() if seed is None else np.random.default_rng(int(seed))
    keep = rng.random(x.shape) >= ratio
    y = np.where(keep, x / (1.0 - ratio), 0).astype(x.dtype)
    return (y, keep.astype(x.dtype))


@legacy_op("Dropout", inputs=("data",), outputs=("output", "mask"),
           attributes={"is_test": 0, "ratio": 0.5, "consumed_inputs": None, "seed": None})
def dropout_legacy(data, *, is_test=0, ratio=0.5, consumed_inputs=None, seed=None):
    """Dropout of opsets 1-6: ``is_test=0`` (the default) is *training*: a random mask keeps
    each element with probability 1-ratio and scales the kept ones by 1/(1-ratio); with
    ``is_test`` set, Y = X. ``seed`` (an engine extension) makes the mask reproducible. The mask
    output has X's dtype (1 kept, 0 dropped)."""
    return _dropout(data, float(ratio), not is_test, seed)


@legacy_op("Dropout", since=7, inputs=("data",), outputs=("output", "mask"),
           attributes={"ratio": 0.5})
def dropout_7(data, *, ratio=0.5):
    """Dropout of opsets 7-9 (inference): Y = X, a mask of ones in X's dtype."""
    x = _arr(data)
    return (x.copy(), np.ones(x.shape, dtype=x.dtype))


# ---------------------------------------------------------------- BatchNormalization


@numba.njit(cache=True)
def _bn_kernel(x, scale, bias, mean, var, eps, momentum, training):
    """x is (N, C, S); parameters (C,). Returns y and, in training, the updated running mean and
    var and the batch mean and var (population variance)."""
    n, c, s = x.shape
    y = np.empty_like(x)
    run_mean = mean.copy()
    run_var = var.copy()
    bmean = mean.copy()
    bvar = var.copy()
    for ch in range(c):
        if training:
            tot = 0.0
            for i in range(n):
                for k in range(s):
                    tot += x[i, ch, k]
            m = tot / (n * s)
            sq = 0.0
            for i in range(n):
                for k in range(s):
                    d = x[i, ch, k] - m
                    sq += d * d
            v = sq / (n * s)
            bmean[ch] = m
            bvar[ch] = v
            run_mean[ch] = mean[ch] * momentum + m * (1.0 - momentum)
            run_var[ch] = var[ch] * momentum + v * (1.0 - momentum)
        else:
            m = mean[ch]
            v = var[ch]
        inv = scale[ch] / np.sqrt(v + eps)
        for i in range(n):
            for k in range(s):
                y[i, ch, k] = (x[i, ch, k] - m) * inv + bias[ch]
    return y, run_mean, run_var, bmean, bvar


def batch_norm(X: Any, scale: Any, B: Any, mean: Any, var: Any, epsilon: float,
               momentum: float, spatial: int, training: bool) -> tuple:
    """Legacy BatchNormalization (NCHW...): per-channel statistics when ``spatial`` (params of
    shape (C,)), per-activation (params of C*D1*...*Dn values) otherwise. Test mode returns (Y,);
    training returns (Y, running_mean, running_var, saved_mean, saved_var)."""
    x = _float_dtype(_arr(X))
    if x.ndim < 2:
        raise MDFError(f"BatchNormalization needs an input of rank >= 2 (N, C, ...), got "
                       f"{x.shape}")
    n = x.shape[0]
    if spatial:
        c = x.shape[1]
        x3 = np.ascontiguousarray(x.reshape(n, c, -1))
    else:
        c = int(np.prod(x.shape[1:]))
        x3 = np.ascontiguousarray(x.reshape(n, c, 1))
    params = []
    for name, p in (("scale", scale), ("B", B), ("mean", mean), ("var", var)):
        p = _arr(p).astype(x.dtype).ravel()
        if p.size != c:
            raise MDFError(f"BatchNormalization (spatial={spatial}): '{name}' needs {c} values, "
                           f"got {p.size}")
        params.append(np.ascontiguousarray(p))
    dt = x.dtype.type
    y, rm, rv, bm, bv = _bn_kernel(x3, *params, dt(epsilon), dt(momentum), bool(training))
    y = y.reshape(x.shape)
    if not training:
        return (y,)
    pshape = _arr(mean).shape
    return (y, rm.reshape(pshape), rv.reshape(pshape), bm.reshape(pshape), bv.reshape(pshape))


@legacy_op("BatchNormalization", inputs=("X", "scale", "B", "mean", "var"),
           outputs=("Y", "mean", "var", "saved_mean", "saved_var"),
           attributes={"epsilon": 1e-5, "is_test": 0, "momentum": 0.9, "spatial": 1,
                       "consumed_inputs": None})
def batch_norm_legacy(X, scale, B, mean, var, *, epsilon=1e-5, is_test=0, momentum=0.9,
                      spatial=1, consumed_inputs=None):
    """BatchNormalization of opsets 1-6: ``is_test`` selects test mode (Y from the given
    mean/var) or training (batch statistics; running = running*momentum + batch*(1-momentum));
    ``spatial=0`` normalises per activation."""
    return batch_norm(X, scale, B, mean, var, epsilon, momentum, spatial, not is_test)


@legacy_op("BatchNormalization", since=7, inputs=("X", "scale", "B", "mean", "var"),
           outputs=("Y",), attributes={"epsilon": 1e-5, "momentum": 0.9, "spatial": 1})
def batch_norm_7(X, scale, B, mean, var, *, epsilon=1e-5, momentum=0.9, spatial=1):
    """BatchNormalization of opsets 7-8 (and seed 003), inference: Y only; ``spatial`` as in
    opset 1."""
    return batch_norm(X, scale, B, mean, var, epsilon, momentum, spatial, False)


# ---------------------------------------------------------------- RNN family (seed 002 forms)

_ACT = {"sigmoid": 0, "tanh": 1, "relu": 2}


@numba.njit(cache=True)
def _act(v, code):
    if code == 0:
        return 1.0 / (1.0 + np.exp(-v)) if v >= 0 else np.exp(v) / (1.0 + np.exp(v))
    if code == 1:
        return np.tanh(v)
    return v if v > 0 else 0.0


@numba.njit(cache=True)
def _clipv(v, clip):
    if clip > 0:
        if v > clip:
            return clip
        if v < -clip:
            return -clip
    return v


@numba.njit(cache=True)
def _rnn_dir(xw, r, rb, h0, lens, reverse, acts, clip, cell, c0, p, lbr, input_forget):
    """One direction of RNN (cell 0), GRU (1) or LSTM (2).

    xw (T, B, G*H) holds X W^T + Wb; r (G*H, H); rb (G*H,); h0/c0 (B, H); p (3H,) peepholes;
    acts int codes; clip <= 0 means none; lbr: GRU linear_before_reset. Returns Y (T, B, H),
    the last H and the last C."""
    t_len, nb, _ = xw.shape
    hs = h0.shape[1]
    y = np.zeros((t_len, nb, hs), dtype=xw.dtype)
    h_last = h0.copy()
    c_last = c0.copy()
    for b in range(nb):
        h = h0[b].copy()
        c = c0[b].copy()
        n = lens[b]
        for step in range(n):
            t = n - 1 - step if reverse else step
            rh = np.dot(r, h) + rb
            g = xw[t, b]
            hn = np.empty(hs, dtype=xw.dtype)
            if cell == 0:
                for j in range(hs):
                    hn[j] = _act(_clipv(g[j] + rh[j], clip), acts[0])
            elif cell == 1:
                # gates z, r, h; acts: update, reset, hidden
                z = np.empty(hs, dtype=xw.dtype)
                rr = np.empty(hs, dtype=xw.dtype)
                for j in range(hs):
                    z[j] = _act(g[j] + rh[j], acts[0])
                    rr[j] = _act(g[hs + j] + rh[hs + j], acts[1])
                if lbr:
                    for j in range(hs):
                        cand = _act(g[2 * hs + j] + rr[j] * rh[2 * hs + j], acts[2])
                        hn[j] = (1.0 - z[j]) * cand + z[j] * h[j]
                else:
                    rhh = rr * h
                    rec = np.dot(r[2 * hs:], rhh) + rb[2 * hs:]
                    for j in range(hs):
                        cand = _act(g[2 * hs + j] + rec[j], acts[2])
                        hn[j] = (1.0 - z[j]) * cand + z[j] * h[j]
            else:
                # gates i, o, f, c; acts: input, output, forget, cell, hidden-output
                cn = np.empty(hs, dtype=xw.dtype)
                for j in range(hs):
                    ig = _act(_clipv(g[j] + rh[j] + p[j] * c[j], clip), acts[0])
                    fg = _act(_clipv(g[2 * hs + j] + rh[2 * hs + j] + p[2 * hs + j] * c[j],
                                     clip), acts[2])
                    if input_forget:
                        fg = 1.0 - ig
                    cc = _act(_clipv(g[3 * hs + j] + rh[3 * hs + j], clip), acts[3])
                    cn[j] = fg * c[j] + ig * cc
                    og = _act(_clipv(g[hs + j] + rh[hs + j] + p[hs + j] * cn[j], clip), acts[1])
                    hn[j] = og * _act(cn[j], acts[4])
                c = cn
            h = hn
            y[t, b] = h
        h_last[b] = h
        c_last[b] = c
    return y, h_last, c_last


def _act_codes(names: Sequence[Any], n: int, op: str) -> list[int]:
    out = []
    for a in names:
        a = a.decode() if isinstance(a, bytes) else str(a)
        if a.lower() not in _ACT:
            raise MDFError(f"onnx::{op}: activation {a!r} is not one of sigmoid, tanh, relu")
        out.append(_ACT[a.lower()])
    if len(out) != n:
        raise MDFError(f"onnx::{op}: expected {n} activations per direction, got {len(out)}")
    return out


def _order_state_inputs(initial_h: Any, sequence_lens: Any) -> tuple[Any, Any]:
    """Seed 002 passes initial_h before sequence_lens; an integer 5th input (or a float 6th one)
    means the model uses the later order, so the two are swapped."""
    a, b = initial_h, sequence_lens
    a_int = a is not None and _arr(a).dtype.kind in "iu"
    b_float = b is not None and _arr(b).dtype.kind == "f"
    if a_int or b_float:
        a, b = b, a
    return a, b


def recurrent(cell: int, op: str, X: Any, W: Any, R: Any, B: Any, initial_h: Any,
              sequence_lens: Any, initial_c: Any, P: Any, acts: list[int], direction: str,
              hidden_size: int | None, clip: float | None, lbr: int, input_forget: int) -> tuple:
    """The seed-002 RNN/GRU/LSTM (``acts`` per direction, codes of :data:`_ACT`)."""
    x = _float_dtype(_arr(X))
    dt = x.dtype
    gates = {0: 1, 1: 3, 2: 4}[cell]
    w = _arr(W).astype(dt)
    r = _arr(R).astype(dt)
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    dirs = 2 if direction == "bidirectional" else 1
    if direction not in ("forward", "reverse", "bidirectional"):
        raise MDFError(f"onnx::{op}: direction must be forward, reverse or bidirectional, got "
                       f"{direction!r}")
    if x.ndim != 3 or w.ndim != 3 or r.ndim != 3 or w.shape[0] != dirs:
        raise MDFError(f"onnx::{op}: expected X [seq, batch, input] and W/R with "
                       f"{dirs} direction(s), got X {x.shape}, W {w.shape}, R {r.shape}")
    hs = r.shape[2]
    if hidden_size is not None and int(hidden_size) != hs:
        raise MDFError(f"onnx::{op}: hidden_size {hidden_size} does not match R {r.shape}")
    if w.shape[1] != gates * hs or r.shape[1] != gates * hs or w.shape[2] != x.shape[2]:
        raise MDFError(f"onnx::{op}: W must be [{dirs}, {gates * hs}, {x.shape[2]}] and R "
                       f"[{dirs}, {gates * hs}, {hs}], got {w.shape} and {r.shape}")
    t_len, nb, _ = x.shape
    b = np.zeros((dirs, 2 * gates * hs), dt) if B is None else _arr(B).astype(dt)
    h0 = np.zeros((dirs, nb, hs), dt) if initial_h is None else _arr(initial_h).astype(dt)
    c0 = np.zeros((dirs, nb, hs), dt) if initial_c is None else _arr(initial_c).astype(dt)
    if P is None:
        p = np.zeros((dirs, 3 * hs), dt)
    else:
        p = _arr(P).astype(dt)
        if p.shape != (dirs, 3 * hs):
            raise MDFError(f"onnx::LSTM: P must be [{dirs}, {3 * hs}] (element-wise peepholes; "
                           f"the seed's matrix form is not supported), got {p.shape}")
    if sequence_lens is None:
        lens = np.full(nb, t_len, dtype=np.int64)
    else:
        lens = _arr(sequence_lens).astype(np.int64).ravel()
        if lens.size != nb or lens.min(initial=0) < 0 or lens.max(initial=0) > t_len:
            raise MDFError(f"onnx::{op}: sequence_lens must hold {nb} lengths in 0..{t_len}")
    clipv = 0.0 if clip is None else float(clip)
    ys, hl, cl = [], [], []
    per = len(acts) // dirs
    for d in range(dirs):
        xw = np.ascontiguousarray(
            (x.reshape(t_len * nb, -1) @ w[d].T + b[d, :gates * hs]).reshape(t_len, nb, -1))
        reverse = direction == "reverse" or d == 1
        a = np.asarray(acts[d * per:(d + 1) * per], dtype=np.int64)
        yd, hd, cd = _rnn_dir(xw, np.ascontiguousarray(r[d]),
                              np.ascontiguousarray(b[d, gates * hs:]),
                              np.ascontiguousarray(h0[d]), lens, reverse, a, dt.type(clipv),
                              cell, np.ascontiguousarray(c0[d]),
                              np.ascontiguousarray(p[d]), int(lbr), int(input_forget))
        ys.append(yd)
        hl.append(hd)
        cl.append(cd)
    y = np.stack(ys, axis=1)
    out = (y, np.stack(hl))
    return out + (np.stack(cl),) if cell == 2 else out


_RNN_ATTRS = {"activation": None, "activations": None, "direction": "forward",
              "hidden_size": None, "output_sequence": 0, "clip": None}


@legacy_op("RNN", inputs=("X", "W", "R", "B", "initial_h", "sequence_lens"),
           optional=("B", "initial_h", "sequence_lens"), outputs=("Y", "Y_h"),
           attributes=_RNN_ATTRS)
def rnn_legacy(X, W, R, B=None, initial_h=None, sequence_lens=None, *, activation=None,
               activations=None, direction="forward", hidden_size=None, output_sequence=0,
               clip=None):
    """RNN of seed 002: Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi); ``activation`` is tanh
    (default) or ReLU (``activations`` per direction is also accepted); inputs in the seed's
    order (initial_h before sequence_lens; the later order is recognised by dtype)."""
    h0, lens = _order_state_inputs(initial_h, sequence_lens)
    dirs = 2 if str(direction) in ("bidirectional", "b'bidirectional'") else 1
    if activations is not None:
        acts = _act_codes(activations, len(activations), "RNN")
        if len(acts) == 1 and dirs == 2:
            acts = acts * 2
    else:
        acts = _act_codes([activation or "tanh"], 1, "RNN") * dirs
    return recurrent(0, "RNN", X, W, R, B, h0, lens, None, None, acts, direction, hidden_size,
                     clip, 1, 0)


@legacy_op("GRU", inputs=("X", "W", "R", "B", "initial_h", "sequence_lens"),
           optional=("B", "initial_h", "sequence_lens"), outputs=("Y", "Y_h"),
           attributes={"activations": None, "direction": "forward", "hidden_size": None,
                       "output_sequence": 0, "clip": None, "linear_before_reset": 1})
def gru_legacy(X, W, R, B=None, initial_h=None, sequence_lens=None, *, activations=None,
               direction="forward", hidden_size=None, output_sequence=0, clip=None,
               linear_before_reset=1):
    """GRU of seed 002: gates z, r, h (W/R/B in that order); 3 activations per direction
    (update, reset, hidden; default sigmoid, sigmoid, tanh);
    ht = g(Wh Xt + rt * (Rh Ht-1 + Rbh) + Wbh) (``linear_before_reset=1``, the seed's form);
    Ht = (1 - zt) * ht + zt * Ht-1. Inputs in the seed's order (initial_h before
    sequence_lens)."""
    h0, lens = _order_state_inputs(initial_h, sequence_lens)
    dirs = 2 if "bidirectional" in str(direction) else 1
    names = list(activations) if activations is not None else ["sigmoid", "sigmoid", "tanh"]
    if len(names) == 3 and dirs == 2:
        names = names * 2
    acts = _act_codes(names, 3 * dirs, "GRU")
    return recurrent(1, "GRU", X, W, R, B, h0, lens, None, None, acts, direction, hidden_size,
                     clip, linear_before_reset, 0)


@legacy_op("LSTM",
           inputs=("X", "W", "R", "B", "initial_h", "sequence_lens", "initial_c", "P"),
           optional=("B", "initial_h", "sequence_lens", "initial_c", "P"),
           outputs=("Y", "Y_h", "Y_c"),
           attributes={"activations": None, "clip": None, "direction": "forward",
                       "hidden_size": None, "input_forget": 0, "output_sequence": 0})
def lstm_legacy(X, W, R, B=None, initial_h=None, sequence_lens=None, initial_c=None, P=None,
                *, activations=None, clip=None, direction="forward", hidden_size=None,
                input_forget=0, output_sequence=0):
    """LSTM of seed 002: gates i, o, f, c; 4 activations per direction (input, output, forget,
    cell; default sigmoid x3, tanh) with the output tanh of Ct fixed (a 3-name list f, g, h is
    read as i/o/f = f, cell = g, output = h); element-wise peepholes P [dirs, 3H] (i, o, f);
    ``clip`` bounds activation inputs; ``input_forget`` couples f = 1 - i. Outputs Y, Y_h (and
    Y_c)."""
    h0, lens = _order_state_inputs(initial_h, sequence_lens)
    dirs = 2 if "bidirectional" in str(direction) else 1
    names = list(activations) if activations is not None else \
        ["sigmoid", "sigmoid", "sigmoid", "tanh"]
    if len(names) in (3, 4):
        names = names * dirs
    per = len(names) // dirs
    if per not in (3, 4) or per * dirs != len(names):
        raise MDFError(f"onnx::LSTM: expected 4 (or 3) activations per direction, got {names}")
    acts: list[int] = []
    for d in range(dirs):
        c = _act_codes(names[d * per:(d + 1) * per], per, "LSTM")
        # per direction: input, output, forget, cell, output-of-Ct
        acts += c + [_ACT["tanh"]] if per == 4 else [c[0], c[0], c[0], c[1], c[2]]
    return recurrent(2, "LSTM", X, W, R, B, h0, lens, initial_c, P, acts, direction,
                     hidden_size, clip, 0, input_forget)


# ---------------------------------------------------------------- thin adapters


@legacy_op("Constant", outputs=("output",), attributes={"value": REQUIRED})
def constant_legacy(*, value):
    """Constant of opsets 1-8: the tensor attribute ``value`` (a copy)."""
    return (np.array(value),)


def _make_delegate(op: str, inputs: tuple[str, ...], optional: tuple[str, ...],
                   attrs: tuple[str, ...], outputs: tuple[str, ...] = ("Y",)) -> None:
    name = "onnx::" + op

    @legacy_op(op, inputs=inputs, optional=optional, outputs=outputs,
               attributes={a: None for a in attrs})
    def kernel(*args, **kw):
        std = [v for v in REGISTRY.versions(name) if v.namespace == "onnx"]
        if not std:
            raise MDFError(f"{name} at an early opset runs the standard kernel, which is not "
                           "registered")
        return std[0].call(list(args), _given(**kw))

    kernel.__doc__ = (f"{op} of the early opsets: the same numerics as the earliest standard "
                      f"version; the early attributes ({', '.join(attrs) or 'none'}) are passed "
                      "through.")


_make_delegate("Conv", ("X", "W", "B"), ("B",),
               ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
_make_delegate("ConvTranspose", ("X", "W", "B"), ("B",),
               ("auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                "output_shape", "pads", "strides"))
_make_delegate("AveragePool", ("X",), (), ("auto_pad", "kernel_shape", "pads", "strides"))
_make_delegate("MaxPool", ("X",), (),
               ("auto_pad", "dilations", "kernel_shape", "pads", "strides"))
_make_delegate("GlobalAveragePool", ("X",), (), ())
_make_delegate("GlobalMaxPool", ("X",), (), ())
_make_delegate("LRN", ("X",), (), ("alpha", "beta", "bias", "size"))
_make_delegate("MatMul", ("A", "B"), (), ())
_make_delegate("Transpose", ("data",), (), ("perm",), ("transposed",))
_make_delegate("RandomNormal", (), (), ("dtype", "mean", "scale", "seed", "shape"),
               ("output",))
_make_delegate("RandomUniform", (), (), ("dtype", "high", "low", "seed", "shape"),
               ("output",))
_make_delegate("RandomNormalLike", ("input",), (), ("dtype", "mean", "scale", "seed"),
               ("output",))
_make_delegate("RandomUniformLike", ("input",), (), ("dtype", "high", "low", "seed"),
               ("output",))
