"""The compiled MatMul kernel against numpy's ``@`` (the oracle) for arrays of mixed and integer
dtypes: modeci-mdf's IaF examples multiply an int64 weight by a float64 spike input, which
Numba's own ``@`` refuses."""

from __future__ import annotations

import numpy as np
import pytest

import mdf_engine.standard_functions  # noqa: F401  (registers the std kernels)
from mdf_engine.registry import REGISTRY

CASES = [
    (np.array([40]), np.array([1.0])),
    (np.array([[1, 2], [3, 4]]), np.array([5, 6])),
    (np.array([1, 2]), np.array([[1, 2], [3, 4]])),
    (np.array([[1, 2], [3, 4]], np.int32), np.array([[1, 2], [3, 4]])),
    (np.array([1, 2]), np.array([3, 4])),
    (np.array([[1.0, 2.0]], np.float32), np.array([[1.0], [2.0]])),
    (np.array([[True, False]]), np.array([[2.5], [1.0]])),
]


@pytest.mark.parametrize("a, b", CASES)
def test_matmul_jit_equals_numpy(a: np.ndarray, b: np.ndarray) -> None:
    kernel = REGISTRY.lookup("MatMul").jit
    got = kernel(a, b)
    want = a @ b
    assert np.asarray(got).dtype == want.dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)
