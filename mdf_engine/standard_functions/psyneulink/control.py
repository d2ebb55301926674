"""PsyNeuLink's control functions (namespace ``pnl``).

* ``defaultallocationfunction``: the first item of ``variable0`` repeated once per control
  signal (``num_control_signals``), the default allocation of a control mechanism.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...registry import register
from ._common import SINCE, f64


@register(
    "pnl",
    "defaultallocationfunction",
    inputs=("variable0",),
    attributes={"num_control_signals": 1},
    outputs=("out",),
    since=SINCE,
    python_only=True,
)
def defaultallocationfunction(variable0: Any, *, num_control_signals: Any = 1) -> np.ndarray:
    """The first item of variable0, once per control signal."""
    v = np.atleast_1d(f64(variable0))
    return np.array([v[0]] * int(num_control_signals))
