"""PsyNeuLink's transfer functions (namespace ``pnl``): its ``linear``, ``logistic`` and
``exponential``, which take more arguments than the MDF standard functions of the same names.

* ``linear = scale*(variable0*slope + intercept) + offset``
* ``logistic = scale / (1 + exp(-gain*(variable0 + bias - x_0))) + offset`` (``offset`` is
  *outside* the exponential, unlike the standard ``logistic``)
* ``exponential = scale*exp(rate*variable0 + bias) + offset``
* ``tanh = scale*tanh(gain*(variable0 + bias - x_0) + offset)``
* ``relu = scale*max(x, leak*x) + offset`` with ``x = gain*(variable0 - bias)``
* ``gaussian = scale*exp(-(variable0 - bias)**2 / (2*sd**2)) / sqrt(2*pi*sd) + offset``
* ``identity = variable0``; ``softmax``: per item, ``exp(gain*v) / sum``, or its largest
  value (``output`` "MAX_VAL") or an indicator of it ("MAX_INDICATOR")
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...errors import MDFError
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


@njit(cache=True)
def _tanh_jit(variable0, gain, bias, x_0, offset, scale):
    return scale * np.tanh(gain * (variable0 + bias - x_0) + offset)


@register(
    "pnl",
    "tanh",
    inputs=("variable0",),
    attributes={"gain": 1.0, "bias": 0.0, "x_0": 0.0, "offset": 0.0, "scale": 1.0},
    outputs=("out",),
    since=SINCE,
    jit=_tanh_jit,
    elementwise=True,
)
def tanh(
    variable0: Any,
    *,
    gain: Any = 1.0,
    bias: Any = 0.0,
    x_0: Any = 0.0,
    offset: Any = 0.0,
    scale: Any = 1.0,
) -> np.ndarray:
    """scale*tanh(gain*(variable0 + bias - x_0) + offset) (PsyNeuLink writes it with
    exponentials: scale*(1 - e**(-2z)) / (1 + e**(-2z)), the same function)"""
    return scale * np.tanh(gain * (f64(variable0) + bias - x_0) + offset)


@njit(cache=True)
def _relu_jit(variable0, gain, bias, leak, scale, offset):
    x = gain * (variable0 - bias)
    return scale * max(x, leak * x) + offset


@register(
    "pnl",
    "relu",
    inputs=("variable0",),
    attributes={"gain": 1.0, "bias": 0.0, "leak": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_relu_jit,
    elementwise=True,
)
def relu(
    variable0: Any,
    *,
    gain: Any = 1.0,
    bias: Any = 0.0,
    leak: Any = 0.0,
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """x = gain*(variable0 - bias); scale*max(x, leak*x) + offset"""
    x = gain * (f64(variable0) - bias)
    return scale * np.maximum(x, leak * x) + offset


@njit(cache=True)
def _gaussian_jit(variable0, standard_deviation, bias, scale, offset):
    g = np.exp(-((variable0 - bias) ** 2) / (2.0 * standard_deviation**2))
    return scale * (g / np.sqrt(2.0 * np.pi * standard_deviation)) + offset


@register(
    "pnl",
    "gaussian",
    inputs=("variable0",),
    attributes={"standard_deviation": 1.0, "bias": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_gaussian_jit,
    elementwise=True,
)
def gaussian(
    variable0: Any,
    *,
    standard_deviation: Any = 1.0,
    bias: Any = 0.0,
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """scale*exp(-(variable0 - bias)**2 / (2*sd**2)) / sqrt(2*pi*sd) + offset (PsyNeuLink's
    normalisation divides by sqrt(2*pi*sd), not sd*sqrt(2*pi): its numbers are honoured)"""
    g = np.exp(-((f64(variable0) - bias) ** 2) / (2.0 * standard_deviation**2))
    return scale * (g / np.sqrt(2.0 * np.pi * standard_deviation)) + offset


@njit(cache=True)
def _identity_jit(variable0):
    return variable0


@register(
    "pnl",
    "identity",
    inputs=("variable0",),
    outputs=("out",),
    since=SINCE,
    jit=_identity_jit,
    elementwise=True,
)
def identity(variable0: Any) -> np.ndarray:
    """variable0 unchanged"""
    return f64(variable0)


def _softmax_1d(v: np.ndarray, gain: Any, output: str) -> np.ndarray:
    x = f64(gain) * v
    x = np.exp(x - np.max(x))
    sm = x / np.sum(x) if np.any(x) else x
    if output == "ALL":
        return sm
    top = sm == np.max(sm)  # PsyNeuLink's OneHot keeps every tie ("tie": "all")
    if output == "MAX_VAL":
        return np.where(top, sm, 0.0)
    return top.astype(np.float64)  # MAX_INDICATOR


#: the ``output`` forms of SoftMax computed here (PROB draws at random: not in a file)
SOFTMAX_OUTPUTS = ("ALL", "MAX_VAL", "MAX_INDICATOR")


@register(
    "pnl",
    "softmax",
    inputs=("variable0",),
    attributes={
        "gain": 1.0,
        "output": "ALL",
        "adapt_scale": 1.0,
        "adapt_base": 1.0,
        "adapt_entropy_weighting": 0.95,
    },
    outputs=("out",),
    since=SINCE,
    python_only=True,
)
def softmax(
    variable0: Any,
    *,
    gain: Any = 1.0,
    output: Any = "ALL",
    adapt_scale: Any = 1.0,
    adapt_base: Any = 1.0,
    adapt_entropy_weighting: Any = 0.95,
) -> np.ndarray:
    """exp(gain*v - max) / sum per item (each row of a 2-d variable: PsyNeuLink's per_item);
    ``output`` (the export's ``metadata.output``) "MAX_VAL" keeps the largest probability (every
    tie) and zeros the rest, "MAX_INDICATOR" gives 1 there. The ``adapt_*`` arguments belong
    to an adaptive gain, which a file cannot ask for (gain is a number)."""
    out = str(output).upper()
    if out not in SOFTMAX_OUTPUTS:
        raise MDFError(f"softmax: output {out!r} is not computed (one of {SOFTMAX_OUTPUTS})")
    v = f64(variable0)
    if v.ndim > 1:
        return np.stack(
            [_softmax_1d(row, gain, out) for row in v.reshape(-1, v.shape[-1])]
        ).reshape(v.shape)
    return _softmax_1d(v, gain, out)
