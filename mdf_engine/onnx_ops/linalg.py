"""``onnx::`` linear algebra: MatMul, Gemm, MatMulInteger, Det and Einsum.

MatMul and Gemm go to BLAS: ``np.matmul``/``np.dot`` from Python, and ``np.dot`` inside the
nopython ``jit=`` versions (2-D operands; a batched MatMul is a loop of 2-D products), where a
small Gemm of one float dtype runs in own loops instead. Det is
an LU factorisation with partial pivoting in an njit kernel (:mod:`._jitb_linalg`, with
its ``jit=`` twin). Einsum parses the equation and
reduces it to diagonals, sums, transposes and batched matrix products (``np.matmul``); it never
hands the equation to ``np.einsum``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..errors import MDFError
from . import onnx_op
from ._blas import blas_threads_for
from ._jitb_linalg import det_batch, det_like_jit

# ---------------------------------------------------------------- MatMul


@numba.njit(cache=True)
def matmul_jit(A, B):
    """nopython MatMul of two 2-D float arrays (BLAS ``np.dot``)."""
    return np.dot(np.ascontiguousarray(A), np.ascontiguousarray(B))


@onnx_op("MatMul", inputs=("A", "B"), jit=matmul_jit)
def matmul(A, B):
    """Matrix product with numpy ``matmul`` semantics (1-D promotion, batch broadcasting)."""
    a = A if isinstance(A, np.ndarray) else np.asarray(A)
    b = B if isinstance(B, np.ndarray) else np.asarray(B)
    if a.ndim == 0 or b.ndim == 0:
        raise MDFError("MatMul: operands must have rank >= 1")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise MDFError(f"MatMul: inner dimensions differ: {a.shape} @ {b.shape}")
    with blas_threads_for(a.size * (b.shape[-1] if b.ndim > 1 else 1)):
        return (np.matmul(a, b),)


# ---------------------------------------------------------------- Gemm


#: In :func:`gemm_jit`, products of up to this many multiply-adds of one float dtype run in
#: :func:`_gemm_small` (the small CNN's 1x2048 by 2048x10 classifier: ~2 us against ~14 us
#: for a copy of ``B.T`` and BLAS); nopython code cannot lower BLAS's thread count per call,
#: and a small product on OpenBLAS's threads waits for them on a busy machine.
GEMM_OWN_MACS = 1 << 22
#: the dtypes the interpreted Gemm also multiplies by own loops below GEMM_OWN_MACS
_OWN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _gemm_small(A, B, transA, transB):  # pragma: no cover - an overload, nopython only
    """``A' @ B'`` by own loops (nopython only; see :data:`GEMM_OWN_MACS`), or an empty
    (0, 0) array of ``np.dot``'s result dtype when BLAS should do it."""
    raise NotImplementedError


@overload(_gemm_small, jit_options={"cache": True, "fastmath": {"contract", "reassoc"}})
def _gemm_small_ov(A, B, transA, transB):
    if (
        not (isinstance(A, types.Array) and isinstance(B, types.Array))
        or A.dtype != B.dtype
        or not isinstance(A.dtype, types.Float)
    ):  # (mixed dtypes: BLAS's np.dot, in float64)
        return lambda A, B, transA, transB: np.empty((0, 0), dtype=np.float64)

    def impl(A, B, transA, transB):
        M = A.shape[1] if transA else A.shape[0]
        K = A.shape[0] if transA else A.shape[1]
        N = B.shape[0] if transB else B.shape[1]
        if K != (B.shape[1] if transB else B.shape[0]):
            raise ValueError("Gemm: inner dimensions differ")
        if M * N * K > GEMM_OWN_MACS or M * N == 0:
            return np.empty((0, 0), dtype=A.dtype)
        y = np.zeros((M, N), dtype=A.dtype)
        for i in range(M):
            if transB:  # rows of B: one dot product per output
                for j in range(N):
                    s = y[i, j]
                    if transA:
                        for k in range(K):
                            s += A[k, i] * B[j, k]
                    else:
                        for k in range(K):
                            s += A[i, k] * B[j, k]
                    y[i, j] = s
            else:  # rows of B scaled into the output row
                for k in range(K):
                    a = A[k, i] if transA else A[i, k]
                    for j in range(N):
                        y[i, j] += a * B[k, j]
        return y

    return impl


@numba.njit(cache=True)
def gemm_jit(A, B, C, alpha, beta, transA, transB):
    """nopython Gemm: ``alpha * A' @ B' + beta * C``, small products of one float dtype by own
    loops (:data:`GEMM_OWN_MACS`), others by BLAS ``np.dot``; C may be None."""
    y = _gemm_small(A, B, transA, transB)
    if y.size == 0:
        a = A.T if transA else A
        b = B.T if transB else B
        y = np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b))
    if alpha != 1.0:
        y *= alpha
    if C is not None:
        y += beta * C
    return y


@numba.njit(cache=True)
def gemm_product_own(A, B, transA, transB):
    """``A' @ B'`` by the compiled Gemm's own loops (the interpreter's small products: the
    same numbers as the compiled backend, and no BLAS thread count switched around them)."""
    return _gemm_small(A, B, transA, transB)


@onnx_op(
    "Gemm",
    inputs=("A", "B", "C"),
    optional=("C",),
    attributes={"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0},
    since=7,
    jit=gemm_jit,
)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    """``Y = alpha * A' @ B' + beta * C`` (A', B' optionally transposed; C broadcast)."""
    a = np.asarray(A)
    b = np.asarray(B)
    if a.ndim != 2 or b.ndim != 2:
        raise MDFError(f"Gemm: A and B must be 2-D, got shapes {a.shape} and {b.shape}")
    A2, B2 = a, b
    if transA:
        a = a.T
    if transB:
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise MDFError(f"Gemm: inner dimensions differ: {a.shape} @ {b.shape}")
    macs = a.size * b.shape[1]
    # the compiled Gemm makes small products of one float dtype by own loops (_gemm_small);
    # so does this one (a product of float32 or float64 arrays, the compiled slots' dtypes)
    if a.dtype == b.dtype and a.dtype in _OWN_DTYPES and 0 < macs <= GEMM_OWN_MACS:
        y = gemm_product_own(A2, B2, bool(transA), bool(transB))
    else:
        with blas_threads_for(macs):
            y = np.dot(a, b)
    dt = y.dtype
    if alpha != 1.0:
        y *= np.asarray(alpha, dtype=dt) if dt.kind == "f" else alpha
    if C is not None and beta != 0:
        c = np.asarray(C)
        if beta != 1.0:
            c = c * (np.asarray(beta, dtype=dt) if dt.kind == "f" else beta)
        y += c.astype(dt, copy=False)
    return (y,)


# ---------------------------------------------------------------- MatMulInteger


def _zero_point(zp: Any, m: int, axis_len: int, name: str) -> np.ndarray:
    """A zero point as an array broadcastable against the operand (scalar or per row/column)."""
    z = np.asarray(zp).astype(np.float64)
    if z.size == 1:
        return z.reshape(())
    if z.ndim == 1 and z.shape[0] == axis_len:
        return z
    raise MDFError(f"MatMulInteger: {name} must be a scalar or have {axis_len} elements")


@onnx_op(
    "MatMulInteger",
    inputs=("A", "B", "a_zero_point", "b_zero_point"),
    optional=("a_zero_point", "b_zero_point"),
    since=10,
)
def matmulinteger(A, B, a_zero_point=None, b_zero_point=None):
    """``(A - a_zero_point) @ (B - b_zero_point)`` of (u)int8 operands, as int32.

    The products are formed in float64 (exact for 8-bit operands at any realistic depth) so the
    BLAS path is used; the result is rounded back to int32."""
    a = np.asarray(A).astype(np.float64)
    b = np.asarray(B).astype(np.float64)
    if a_zero_point is not None:
        z = _zero_point(a_zero_point, a.ndim, a.shape[-2] if a.ndim > 1 else 1, "a_zero_point")
        a = a - (z[:, None] if z.ndim == 1 else z)
    if b_zero_point is not None:
        z = _zero_point(b_zero_point, b.ndim, b.shape[-1], "b_zero_point")
        b = b - z
    return (np.rint(np.matmul(a, b)).astype(np.int32),)


# ---------------------------------------------------------------- Det


@numba.njit(cache=True)
def det_jit(X):
    """nopython Det of one square 2-D matrix (float64 result)."""
    n = X.shape[0]
    return det_batch(np.ascontiguousarray(X).astype(np.float64).reshape((1, n, n)))[0]


@onnx_op("Det", inputs=("X",), since=11, jit=det_like_jit, jit_like=True)
def det(X):
    """Determinant of each square matrix in the last two dims of ``X``."""
    x = np.asarray(X)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise MDFError(f"Det: X must end in a square matrix, got shape {x.shape}")
    n = x.shape[-1]
    stack = np.ascontiguousarray(x, dtype=np.float64).reshape(-1, n, n)
    return (det_batch(stack).astype(x.dtype, copy=False).reshape(x.shape[:-2]),)


# ---------------------------------------------------------------- Einsum


@functools.lru_cache(maxsize=256)
def _parse_einsum(equation: str, ndims: tuple[int, ...]) -> tuple[list[str], str]:
    """Operand label strings and the output labels, with ``...`` expanded into capitals."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise MDFError(
            f"Einsum: equation '{equation}' names {len(terms)} operands, {len(ndims)} given"
        )
    ell_rank = 0
    for t, nd in zip(terms, ndims):
        if "..." in t:
            ell_rank = max(ell_rank, nd - (len(t) - 3))
        elif len(t) != nd:
            raise MDFError(f"Einsum: term '{t}' has {len(t)} labels for an operand of rank {nd}")
    ell = "".join(chr(ord("A") + i) for i in range(ell_rank))
    labels = []
    for t, nd in zip(terms, ndims):
        if "..." in t:
            k = nd - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - k :])
        labels.append(t)
    if explicit:
        out = rhs.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return labels, out


def _take_diagonals(x: np.ndarray, lab: str) -> tuple[np.ndarray, str]:
    """Collapse repeated labels of one operand onto their diagonal."""
    while True:
        dup = next((c for c in lab if lab.count(c) > 1), None)
        if dup is None:
            return x, lab
        i = lab.index(dup)
        j = lab.index(dup, i + 1)
        x = np.diagonal(x, axis1=i, axis2=j)  # diagonal becomes the last axis
        lab = lab[:i] + lab[i + 1 : j] + lab[j + 1 :] + dup


def _sum_labels(x: np.ndarray, lab: str, drop: set[str]) -> tuple[np.ndarray, str]:
    axes = tuple(i for i, c in enumerate(lab) if c in drop)
    if not axes:
        return x, lab
    return x.sum(axis=axes), "".join(c for c in lab if c not in drop)


def _contract(a: np.ndarray, la: str, b: np.ndarray, lb: str, keep: set[str]):
    """Product of two labelled operands summed over shared labels not in ``keep``."""
    batch = [c for c in la if c in lb and c in keep]
    contr = [c for c in la if c in lb and c not in keep]
    aonly = [c for c in la if c not in lb]
    bonly = [c for c in lb if c not in la]
    size = {}
    for c, s in list(zip(la, a.shape)) + list(zip(lb, b.shape)):
        size[c] = max(size.get(c, 1), s)
    at = np.transpose(a, [la.index(c) for c in batch + aonly + contr])
    bt = np.transpose(b, [lb.index(c) for c in batch + contr + bonly])
    at = np.broadcast_to(at, tuple(size[c] for c in batch) + at.shape[len(batch) :])
    bt = np.broadcast_to(bt, tuple(size[c] for c in batch) + bt.shape[len(batch) :])
    bsh = tuple(size[c] for c in batch)
    m = math.prod([size[c] for c in aonly])
    n = math.prod([size[c] for c in bonly])
    k_a = math.prod(at.shape[len(batch) + len(aonly) :])
    k_b = math.prod(bt.shape[len(batch) : len(batch) + len(contr)])
    if k_a != k_b:  # a contracted label of size 1 on one side: broadcast it
        ksh = tuple(size[c] for c in contr)
        at = np.broadcast_to(at, bsh + at.shape[len(batch) : len(batch) + len(aonly)] + ksh)
        bt = np.broadcast_to(bt, bsh + ksh + bt.shape[len(batch) + len(contr) :])
        k_a = math.prod(ksh)
    y = np.matmul(at.reshape(bsh + (m, k_a)), bt.reshape(bsh + (k_a, n)))
    out_lab = "".join(batch + aonly + bonly)
    return y.reshape(
        bsh
        + tuple(a.shape[la.index(c)] for c in aonly)
        + tuple(b.shape[lb.index(c)] for c in bonly)
    ), out_lab


def einsum_impl(equation: str, operands: list[np.ndarray]) -> np.ndarray:
    """Evaluate an einsum equation by diagonals, sums, transposes and matmuls (left to right)."""
    ops = [np.asarray(o) for o in operands]
    labels, out = _parse_einsum(equation, tuple(o.ndim for o in ops))
    dtype = np.result_type(*ops)
    terms = []
    for k, (x, lab) in enumerate(zip(ops, labels)):
        x, lab = _take_diagonals(x, lab)
        others = set(out).union(*[set(l) for j, l in enumerate(labels) if j != k])
        x, lab = _sum_labels(x, lab, {c for c in lab if c not in others})
        terms.append((x, lab))
    x, lab = terms[0]
    for k in range(1, len(terms)):
        b, lb = terms[k]
        keep = set(out).union(*[set(l) for _, l in terms[k + 1 :]])
        x, lab = _contract(x, lab, b, lb, keep)
    x, lab = _sum_labels(x, lab, {c for c in lab if c not in out})
    missing = [c for c in out if c not in lab]
    if missing:
        raise MDFError(f"Einsum: output label(s) {missing} do not appear in any operand")
    y = np.transpose(x, [lab.index(c) for c in out]) if lab != out else x
    y = np.asarray(y, order="C")  # (ascontiguousarray would turn a 0-d result into 1-d)
    return y.astype(dtype, copy=False)


@onnx_op(
    "Einsum",
    inputs=("Inputs",),
    variadic=True,
    attributes={"equation": ""},
    outputs=("Output",),
    since=12,
)
def einsum(*Inputs, equation=""):
    """Einstein summation over the operands as given by ``equation`` (explicit ``->`` or
    implicit form, with ``...`` broadcasting and repeated labels for diagonals)."""
    if not equation:
        raise MDFError("Einsum needs the attribute 'equation'")
    return (einsum_impl(equation, list(Inputs)),)
