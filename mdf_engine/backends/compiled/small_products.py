"""Small matrix products as the generated code's own arithmetic, summed in the order this
machine's BLAS sums them.

A PsyNeuLink projection multiplies a sender's (k,) or (1, k) value by a (k, n) matrix; in the
Stroop model's LCA k = n = 2. A BLAS call (with its argument checks and dispatch) costs ~40 ns,
ten times the four multiply-adds, and a model calls one per projection per pass. The
interpreted backend computes the product with ``np.matmul``, i.e. numpy's BLAS (a gemv), whose
kernels sum the k terms of an element in an order and with fused multiply-adds that depend on
the library, the CPU and the shape (OpenBLAS on a Haswell core: ``fma(x1, m1, x0 * m0)`` for
k = 2 and n < 4, another order for n >= 4). Own code equal to the interpreter bit for bit must
therefore use the same order: :func:`formula` probes numpy's ``matmul`` for one shape against
the candidate orders of :data:`ORDERS` (random and signed-zero operands, compared bit for bit)
and gives the first that matches every case, or None (the product then stays a BLAS call).
:func:`blas_identity` is part of the compiled record's key, so a cached module written for
another BLAS is not reused.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

#: Own code for products whose inner dimension k and number of columns n stay within these
#: (beyond them the arithmetic outweighs a BLAS call, and the generated code grows)
MAX_INNER = 4
MAX_COLUMNS = 8

#: The candidate orders of an element's k terms ``p_t = x_t * m_t``: "fma" accumulates
#: ``acc = fma(x_t, m_t, acc)`` from ``p_0`` upwards, "rev" from ``p_(k-1)`` downwards, "plain"
#: adds the rounded products left to right onto 0.0; "+0" adds the sum onto 0.0 (a gemv
#: writing ``y = 0 + alpha * sum`` turns a -0.0 sum into 0.0)
ORDERS = ("fma+0", "fma", "rev+0", "rev", "plain")

T = TypeVar("T")


def combine(
    order: str,
    terms: Sequence[tuple[T, T]],
    mul: Callable[[T, T], T],
    fma: Callable[[T, T, T], T],
    add: Callable[[T, T], T],
    zero: T,
) -> T:
    """The sum of ``x_t * m_t`` over ``terms`` in ``order``, over any arithmetic: numbers (the
    probe) or source text (the generated code), so both are spelled by this one function."""
    if order == "plain":
        acc = zero
        for x, m in terms:
            acc = add(acc, mul(x, m))
        return acc
    seq = list(terms) if order.startswith("fma") else list(reversed(terms))
    acc = mul(*seq[0])
    for x, m in seq[1:]:
        acc = fma(x, m, acc)
    return add(zero, acc) if order.endswith("+0") else acc


def exact_fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once (Fraction arithmetic is exact, its float() correctly
    rounded; an exact zero takes IEEE's sign rules for a product plus an addend)."""
    from fractions import Fraction  # (imported when a product is generated, not at start)

    r = Fraction(a) * Fraction(b) + Fraction(c)
    if r == 0:
        return (a * b) + c  # (exact here: the sign of zero of the sum of two zeros, or 0.0)
    return float(r)


def _number(order: str, x: np.ndarray, col: np.ndarray) -> float:
    return combine(
        order,
        list(zip(x.tolist(), col.tolist())),
        lambda a, b: a * b,
        exact_fma,
        lambda a, b: a + b,
        0.0,
    )


def _cases(k: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random operands (of several magnitudes and signs) and zeros of both signs."""
    rng = np.random.default_rng(20261124 + 31 * k + n)
    out = []
    for scale in (1.0, 1e-3, 1e3, 1.0, 1.0, 1.0):
        for _ in range(8):
            out.append((rng.standard_normal(k) * scale, rng.standard_normal((k, n))))
    z = np.zeros(k)
    out.append((z, -np.ones((k, n))))
    out.append((-z, np.ones((k, n))))
    out.append((-z, -np.ones((k, n))))
    x = np.ones(k)
    x[0] = -1.0
    out.append((x, np.ones((k, n))))
    return out


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


@functools.cache
def formula(k: int, n: int, row: bool) -> str | None:
    """The member of :data:`ORDERS` that gives ``np.matmul(x, M)`` bit for bit for an x of
    shape (k,) (``row``: (1, k)) and a C-contiguous float64 (k, n) matrix on this machine, or
    None when none does or the shape is beyond :data:`MAX_INNER`/:data:`MAX_COLUMNS`."""
    if not (2 <= k <= MAX_INNER and 1 <= n <= MAX_COLUMNS):
        return None
    cases = []
    for x, m in _cases(k, n):
        got = np.matmul(x.reshape(1, k) if row else x, m)
        cases.append((x, m, _bits(np.ravel(got))))
    for order in ORDERS:
        if all(
            _bits(np.array([_number(order, x, m[:, j]) for j in range(n)])) == want
            for x, m, want in cases
        ):
            return order
    return None


@functools.lru_cache(maxsize=1)
def blas_identity() -> str:
    """What identifies the arithmetic of numpy's small products here: numpy's version, its
    BLAS, and the bits of a few products (OpenBLAS picks its kernels by CPU at run time)."""
    h = hashlib.sha256(np.__version__.encode())
    rng = np.random.default_rng(7)
    for k, n in ((2, 2), (2, 4), (3, 3), (4, 8)):
        x, m = rng.standard_normal((4, k)), rng.standard_normal((k, n))
        for row in x:
            h.update(_bits(np.matmul(row, m)))
    return h.hexdigest()[:16]


def element_source(order: str, xs: Sequence[str], ms: Sequence[str]) -> str:
    """Source of one element of a product: the terms ``xs[t] * ms[t]`` summed in ``order``
    (``_fma`` is the generated code's fused multiply-add, :mod:`.helpers`)."""
    return combine(
        order,
        list(zip(xs, ms)),
        lambda a, b: f"({a} * {b})",
        lambda a, b, c: f"_fma({a}, {b}, {c})",
        lambda a, b: f"({a} + {b})",
        "0.0",
    )
