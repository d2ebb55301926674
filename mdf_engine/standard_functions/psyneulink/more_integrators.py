"""PsyNeuLink's integrators that its 0.21 export calls by name with the state in the node's
``previous_value`` parameter (namespace ``pnl``; one step each, the previous state an input):

* ``interactiveactivationintegrator``: per element, the distance to the asymptote is
  ``max_val - previous_value`` for a positive input, ``previous_value - min_val`` for a negative
  one and 0 for zero; ``previous_value + rate*(variable0 + noise)*distance
  - decay*(previous_value - rest)``.
* ``ornsteinuhlenbeckintegrator``: ``previous_value + (decay*previous_value - rate*variable0)
  *time_step_size + offset`` (its noise term draws from PsyNeuLink's random stream, which a file
  does not hold: a nonzero ``noise`` is refused). PsyNeuLink also returns the time, which the
  export's ports do not read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64


@njit(cache=True)
def _iai_jit(variable0, previous_value, rate, decay, rest, max_val, min_val, noise):
    if variable0 > 0:
        d = max_val - previous_value
    elif variable0 < 0:
        d = previous_value - min_val
    else:
        d = 0.0
    return previous_value + rate * (variable0 + noise) * d - decay * (previous_value - rest)


@register(
    "pnl",
    "interactiveactivationintegrator",
    inputs=("variable0", "previous_value"),
    attributes={
        "rate": 1.0,
        "decay": 0.0,
        "rest": 0.0,
        "max_val": 1.0,
        "min_val": -1.0,
        "noise": 0.0,
    },
    outputs=("out",),
    since=SINCE,
    jit=_iai_jit,
    elementwise=True,
)
def interactiveactivationintegrator(
    variable0: Any,
    previous_value: Any,
    *,
    rate: Any = 1.0,
    decay: Any = 0.0,
    rest: Any = 0.0,
    max_val: Any = 1.0,
    min_val: Any = -1.0,
    noise: Any = 0.0,
) -> np.ndarray:
    """One step of the interactive activation integrator (module docstring)."""
    x, p = np.broadcast_arrays(f64(variable0), f64(previous_value))
    d = np.where(x > 0, max_val - p, np.where(x < 0, p - min_val, 0.0))
    return p + rate * (x + noise) * d - decay * (p - rest)


@njit(cache=True)
def _ou_jit(variable0, previous_value, rate, decay, offset, time_step_size):
    return previous_value + (decay * previous_value - rate * variable0) * time_step_size + offset


def _ou_checked(noise: Any) -> None:
    if np.any(f64(noise) != 0):
        raise MDFError(
            "ornsteinuhlenbeckintegrator: a nonzero noise draws from PsyNeuLink's random "
            "stream, which the file does not hold"
        )


@register(
    "pnl",
    "ornsteinuhlenbeckintegrator",
    inputs=("variable0", "previous_value"),
    attributes={
        "rate": 1.0,
        "decay": 1.0,
        "offset": 0.0,
        "time_step_size": 1.0,
        "noise": 0.0,
        "non_decision_time": 0.0,
        "seed": -1,
        "initializer": 0.0,
    },
    outputs=("out",),
    since=SINCE,
    python_only=True,
)
def ornsteinuhlenbeckintegrator(
    variable0: Any,
    previous_value: Any,
    *,
    rate: Any = 1.0,
    decay: Any = 1.0,
    offset: Any = 0.0,
    time_step_size: Any = 1.0,
    noise: Any = 0.0,
    non_decision_time: Any = 0.0,
    seed: Any = -1,
    initializer: Any = 0.0,
) -> np.ndarray:
    """One noiseless step of the Ornstein-Uhlenbeck integrator (module docstring)."""
    _ou_checked(noise)
    p = np.atleast_2d(f64(previous_value))
    return p + (decay * p - rate * f64(variable0)) * time_step_size + offset
