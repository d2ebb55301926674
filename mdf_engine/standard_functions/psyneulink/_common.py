"""What PsyNeuLink's function families share: their registration version and their number type."""

from __future__ import annotations

from typing import Any

import numpy as np

#: The ``since`` of every ``pnl`` kernel: 0, so that the standard version stays the default of a
#: shared bare name (``linear``, ``logistic``, ``exponential``) and every (name, since) pair
#: names one kernel.
SINCE = 0


def f64(x: Any) -> np.ndarray:
    """Numbers and arrays as float64 (PsyNeuLink computes in double precision)."""
    return np.asarray(x, dtype=np.float64)
