"""``_put(dst, src)`` (mdf_engine/backends/compiled/copies.py), generated code's ``dst[...] =
src`` written as loops, against numpy's own assignment (the oracle): every broadcast the
compiled backend's slots meet, in one jitted function, and the error for shapes that do not
broadcast."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from mdf_engine.backends.compiled.helpers import _put


@njit(cache=False)
def _copy(dst, src):
    _put(dst, src)


CASES = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (1, 3, 1)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (3, 4)),
    ((1, 5), (5,)),
    ((3, 5), (3, 1)),
    ((2, 3, 4, 5), (1, 3, 1, 5)),
    ((4,), (1,)),
    ((5,), (1, 5)),  # a PsyNeuLink export's (1, n) value for an (n,) slot
    ((2, 3), (1, 1, 3)),
]


@pytest.mark.parametrize("dshape,sshape", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_put_broadcasts_as_numpy(dshape, sshape, dtype) -> None:
    src = np.random.default_rng(0).standard_normal(sshape).astype(dtype)
    want, got = np.zeros(dshape), np.zeros(dshape)
    want[...] = src
    _copy(got, src)
    np.testing.assert_array_equal(got, want)


def test_put_reads_a_strided_source_and_refuses_other_shapes() -> None:
    src = np.random.default_rng(1).standard_normal((4, 3, 2)).T  # (a view, not C-ordered)
    want, got = np.zeros((2, 3, 4)), np.zeros((2, 3, 4))
    want[...] = src
    _copy(got, src)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        np.zeros((2, 3, 4))[...] = np.ones((2, 2, 4))
    with pytest.raises(ValueError, match="another shape than its compiled slot"):
        _copy(np.zeros((2, 3, 4)), np.ones((2, 2, 4)))
