"""PsyNeuLink's transfer functions (namespace ``pnl``): its ``linear``, ``logistic`` and
``exponential``, which take more arguments than the MDF standard functions of the same names.

* ``linear = scale*(variable0*slope + intercept) + offset``
* ``logistic = scale / (1 + exp(-gain*(variable0 + bias - x_0))) + offset`` (``offset`` is
  *outside* the exponential, unlike the standard ``logistic``)
* ``exponential = scale*exp(rate*variable0 + bias) + offset``
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...registry import register
from ._common import SINCE, f64


@njit(cache=True)
def _linear_jit(variable0, slope, intercept, scale, offset):
    return scale * (variable0 * slope + intercept) + offset


@register(
    "pnl",
    "linear",
    inputs=("variable0",),
    attributes={"slope": 1.0, "intercept": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_linear_jit,
    elementwise=True,
)
def linear(
    variable0: Any, *, slope: Any = 1.0, intercept: Any = 0.0, scale: Any = 1.0, offset: Any = 0.0
) -> np.ndarray:
    """scale*(variable0*slope + intercept) + offset"""
    return scale * (f64(variable0) * slope + intercept) + offset


@njit(cache=True)
def _logistic_jit(variable0, gain, bias, x_0, scale, offset):
    return scale * (1.0 / (1.0 + np.exp(-gain * (variable0 + bias - x_0)))) + offset


@register(
    "pnl",
    "logistic",
    inputs=("variable0",),
    attributes={"gain": 1.0, "bias": 0.0, "x_0": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_logistic_jit,
    elementwise=True,
)
def logistic(
    variable0: Any,
    *,
    gain: Any = 1.0,
    bias: Any = 0.0,
    x_0: Any = 0.0,
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """scale / (1 + exp(-gain*(variable0 + bias - x_0))) + offset"""
    return scale * (1.0 / (1.0 + np.exp(-gain * (f64(variable0) + bias - x_0)))) + offset


@njit(cache=True)
def _exponential_jit(variable0, rate, bias, scale, offset):
    return scale * np.exp(rate * variable0 + bias) + offset


@register(
    "pnl",
    "exponential",
    inputs=("variable0",),
    attributes={"rate": 1.0, "bias": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_exponential_jit,
    elementwise=True,
)
def exponential(
    variable0: Any, *, rate: Any = 1.0, bias: Any = 0.0, scale: Any = 1.0, offset: Any = 0.0
) -> np.ndarray:
    """scale*exp(rate*variable0 + bias) + offset"""
    return scale * np.exp(rate * f64(variable0) + bias) + offset
