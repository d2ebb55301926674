"""Small projection products as own arithmetic (backends/compiled/small_products.py).

The oracle is numpy's own ``np.matmul`` (the interpreted backend's projection): the order the
probe finds must give its bits on operands the probe never saw, the generated ``_fma`` must be
a correctly rounded fused multiply-add (checked against exact rational arithmetic). A
compiled PsyNeuLink Stroop model, whose 2x2 projections become own loops, equals the
interpreted run bit for bit, trial by trial: tests/test_compiled_rows.py runs it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from mdf_engine.backends.compiled import small_products
from mdf_engine.backends.compiled.helpers import _fma


def _bits(a) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def test_fma_is_rounded_once():
    from numba import njit

    fma = njit(lambda a, b, c: _fma(a, b, c))
    rng = np.random.default_rng(5)
    abc = rng.standard_normal((2000, 3)) * rng.choice([1e-8, 1.0, 1e8], size=(2000, 3))
    abc[:5] = [
        [0.0, -1.0, -0.0],
        [0.0, -1.0, 0.0],
        [-0.0, 1.0, -0.0],
        [1e308, 10.0, -1e308],
        [3.0, 1 / 3, -1.0],
    ]
    for a, b, c in abc:
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        if abs(exact) > Fraction(np.finfo(np.float64).max):
            continue  # (beyond float64: an overflow, not a rounding)
        want = float(exact) if exact != 0 else a * b + c
        assert _bits(fma(a, b, c)) == _bits(want), (a, b, c)


@pytest.mark.parametrize("k, n", [(2, 1), (2, 2), (2, 3), (2, 5), (3, 2), (3, 4), (4, 1), (4, 4)])
@pytest.mark.parametrize("row", [False, True])
def test_the_probed_order_gives_numpys_bits_on_new_operands(k, n, row):
    order = small_products.formula(k, n, row)
    if order is None:  # (no known order on this machine's BLAS: the product stays a BLAS call)
        return
    rng = np.random.default_rng(99 + k * 10 + n)
    for _ in range(200):
        x = rng.standard_normal(k) * 10.0 ** rng.integers(-4, 5)
        m = rng.standard_normal((k, n))
        want = np.matmul(x.reshape(1, k) if row else x, m).ravel()
        got = [
            small_products.combine(
                order,
                list(zip(x.tolist(), m[:, j].tolist())),
                lambda a, b: a * b,
                small_products.exact_fma,
                lambda a, b: a + b,
                0.0,
            )
            for j in range(n)
        ]
        assert _bits(got) == _bits(want), (order, x, m)
