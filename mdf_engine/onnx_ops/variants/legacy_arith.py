"""Early (opsets 1-6/7) arithmetic, logic, variadic and matrix forms, as adapters over the
``elementwise``, ``logic``, ``variadic`` and ``linalg`` family kernels.

* Add Sub Mul Div Pow And Or Xor Equal Greater Less take the attributes ``broadcast`` and ``axis``
  with the *limited* broadcast: the output has A's shape; B is a scalar or matches a contiguous run
  of A's dims, starting at ``axis`` or suffix-matched when ``axis`` is unset. The adapter checks
  that rule, reshapes B so that numpy-style broadcasting applies it the same way, and calls the
  family kernel. B takes A's dtype. Seed 000's Pow takes the attribute ``exponent`` instead of a
  second input.
* Max Min Sum (opsets 1-7) need inputs of one shape (no broadcasting).
* Gemm (opsets 1-6): C is required and must be M x N unless ``broadcast`` is set.
* Dot (seed 000) is ``numpy.dot`` (a sum product over the last axis of X and the second-to-last
  of Y), run as one 2-D product by the Gemm kernel.
* ``consumed_inputs`` is accepted and ignored wherever opset 1 had it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from .. import _ew_kernels as K
from ..elementwise import binary, pow_
from ..linalg import gemm
from ..logic import compare
from ..variadic import max_, min_, sum_
from .legacy import arr, float_dtype, legacy_op

# ---------------------------------------------------------------- limited (legacy) broadcast


def legacy_broadcast_shape(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], broadcast: int, axis: int | None, op: str
) -> tuple[int, ...]:
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
    ok = (
        0 <= s
        and s + k <= r
        and all(bd == ad or bd == 1 for bd, ad in zip(b_shape, a_shape[s : s + k]))
    )
    if not ok:
        where = "suffix-matched" if axis is None else f"starting at axis {axis}"
        raise MDFError(
            f"onnx::{op} (opset < 7, broadcast=1): B of shape {tuple(b_shape)} must match a "
            f"contiguous run of A's shape {tuple(a_shape)} ({where}) or be a scalar"
        )
    return (1,) * s + tuple(b_shape) + (1,) * (r - s - k)


def _limited(op: str, A: Any, B: Any, broadcast: int, axis: int | None) -> tuple:
    """A (float16 as float32) and B in A's dtype, reshaped for the limited broadcast."""
    A = arr(A)
    B = arr(B)
    if A.dtype == np.float16:
        A = A.astype(np.float32)
    if B.dtype != A.dtype:
        B = B.astype(A.dtype)
    return A, B.reshape(legacy_broadcast_shape(A.shape, B.shape, broadcast, axis, op))


def _legacy_arith(op: str, code: int, A: Any, B: Any, broadcast: int, axis: int | None) -> tuple:
    A, B = _limited(op, A, B, broadcast, axis)
    if A.dtype.kind == "b":
        raise MDFError(f"onnx::{op} needs numeric inputs, got bool")
    if code == K.POW:
        return pow_(A, B)
    if code == K.DIV and A.dtype.kind in "iu" and np.any(B == 0):
        raise MDFError(f"onnx::{op}: integer division by zero")
    return (binary(code, A, B, f"onnx::{op}"),)


_BIN_ATTRS = {"broadcast": 0, "axis": None, "consumed_inputs": None}


def _make_arith(op: str, code: int) -> None:
    @legacy_op(op, inputs=("A", "B"), attributes=_BIN_ATTRS, outputs=("C",))
    def kernel(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
        return _legacy_arith(op, code, A, B, broadcast, axis)

    kernel.__doc__ = (
        f"{op} of opsets 1-6: C = A {op.lower()} B with the limited broadcast "
        "(attributes broadcast, axis); C has A's shape and dtype."
    )


for _op, _code in (("Add", K.ADD), ("Sub", K.SUB), ("Mul", K.MUL), ("Div", K.DIV)):
    _make_arith(_op, _code)


@legacy_op(
    "Pow",
    inputs=("X", "Y"),
    optional=("Y",),
    outputs=("Z",),
    attributes={"broadcast": 0, "axis": None, "exponent": None},
)
def pow_legacy(X, Y=None, *, broadcast=0, axis=None, exponent=None):
    """Pow of opsets 1-6: Z = X ** Y with the limited broadcast; seed 000's form takes a single
    input and the float attribute ``exponent``."""
    X = arr(X)
    if Y is None:
        if exponent is None:
            raise MDFError("onnx::Pow (opset < 7) needs input Y or attribute exponent")
        return _legacy_arith("Pow", K.POW, X, np.asarray(exponent, dtype=X.dtype), 1, None)
    return _legacy_arith("Pow", K.POW, X, Y, broadcast, axis)


def _make_compare(op: str, code: int, logical: bool) -> None:
    @legacy_op(op, inputs=("A", "B"), attributes={"broadcast": 0, "axis": None}, outputs=("C",))
    def kernel(A, B, *, broadcast=0, axis=None):
        if logical and (arr(A).dtype != np.bool_ or arr(B).dtype != np.bool_):
            raise MDFError(f"onnx::{op} needs bool inputs, got {arr(A).dtype} and {arr(B).dtype}")
        A, B = _limited(op, A, B, broadcast, axis)
        return (compare(code, A, B, f"onnx::{op}"),)

    kernel.__doc__ = f"{op} of opset 1: elementwise, bool output, limited broadcast (attributes broadcast, axis)."


for _op, _code, _logical in (
    ("And", K.AND, True),
    ("Or", K.OR, True),
    ("Xor", K.XOR, True),
    ("Equal", K.EQ, False),
    ("Greater", K.GT, False),
    ("Less", K.LT, False),
):
    _make_compare(_op, _code, _logical)


# ---------------------------------------------------------------- Max Min Sum without broadcast


def _make_variadic(op: str, fold: Any, out_name: str) -> None:
    @legacy_op(
        op,
        inputs=("data_0",),
        variadic=True,
        outputs=(out_name,),
        attributes={"consumed_inputs": None},
    )
    def kernel(*data, consumed_inputs=None):
        arrs = [arr(a) for a in data if a is not None]
        if not arrs:
            raise MDFError(f"onnx::{op} needs at least one input")
        for a in arrs[1:]:
            if a.shape != arrs[0].shape:
                raise MDFError(
                    f"onnx::{op} (opset < 8) needs inputs of the same shape, got "
                    f"{arrs[0].shape} and {a.shape}"
                )
        return fold(*arrs)

    kernel.__doc__ = f"{op} of opsets 1-7: all inputs have the same shape (no broadcasting)."


for _op, _fold, _out in (("Max", max_, "max"), ("Min", min_, "min"), ("Sum", sum_, "sum")):
    _make_variadic(_op, _fold, _out)


# ---------------------------------------------------------------- Gemm, Dot


@legacy_op(
    "Gemm",
    inputs=("A", "B", "C"),
    outputs=("Y",),
    attributes={"alpha": 1.0, "beta": 1.0, "broadcast": 0, "transA": 0, "transB": 0},
)
def gemm_legacy(A, B, C, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):
    """Gemm of opsets 1-6: Y = alpha * A' B' + beta * C; C is required and must be M x N unless
    ``broadcast`` is set (then it is broadcast numpy-style onto M x N)."""
    A = float_dtype(arr(A))
    dt = A.dtype
    B = arr(B).astype(dt)
    ash = A.shape[::-1] if transA and A.ndim == 2 else A.shape
    bsh = B.shape[::-1] if transB and B.ndim == 2 else B.shape
    if len(ash) != 2 or len(bsh) != 2 or ash[1] != bsh[0]:
        raise MDFError(f"onnx::Gemm needs 2-D A' (M x K) and B' (K x N), got {ash} and {bsh}")
    mn = (ash[0], bsh[1])
    C = arr(C).astype(dt)
    if not broadcast and C.shape != mn:
        raise MDFError(
            f"onnx::Gemm (opset < 7) with broadcast=0 needs C of shape {mn}, got "
            f"{C.shape}; set broadcast=1"
        )
    try:
        np.broadcast_shapes(C.shape, mn)
    except ValueError:
        raise MDFError(f"onnx::Gemm: C of shape {C.shape} does not broadcast to {mn}") from None
    return gemm(A, B, C, alpha=alpha, beta=beta, transA=transA, transB=transB)


@legacy_op("Dot", inputs=("X", "Y"), outputs=("Z",))
def dot(X, Y):
    """Dot of seed 000: ``numpy.dot`` semantics (for N-D inputs: a sum product over the last axis
    of X and the second-to-last axis of Y; not ``matmul``)."""
    X = arr(X)
    Y = arr(Y)
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
        raise MDFError(f"onnx::Dot: shapes {X.shape} and {Y.shape} are not aligned ({k} != {kb})")
    x2 = X.reshape(-1, k)
    if Y.ndim == 1:
        y2 = Y.reshape(k, 1)
        out_shape = X.shape[:-1]
    else:
        y2 = np.moveaxis(Y, -2, 0).reshape(k, -1)
        out_shape = X.shape[:-1] + Y.shape[:-2] + Y.shape[-1:]
    return (gemm(x2, y2)[0].reshape(out_shape),)
