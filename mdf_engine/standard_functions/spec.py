"""The seven standard functions of the MDF v0.2 spec: linear, logistic, exponential, sin, cos,
MatMul, Relu, with the spec's argument names.

Each kernel is written once, in numpy-compatible arithmetic, and the same source is jitted by
Numba (``jit=``) for the compiled backend.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..registry import register


def _both(fn):
    """Return (python kernel, numba kernel) built from the same source."""
    return fn, njit(cache=True)(fn)


def linear(variable0, slope, intercept):
    """linear(variable0, slope, intercept) = variable0 * slope + intercept"""
    return variable0 * slope + intercept


def logistic(variable0, gain, bias, offset):
    """logistic(variable0, gain, bias, offset) = 1/(1 + exp(-1*gain*(variable0 + bias) + offset))"""
    return 1 / (1 + np.exp(-1 * gain * (variable0 + bias) + offset))


def exponential(variable0, scale, rate, bias, offset):
    """exponential(variable0, scale, rate, bias, offset) = scale * exp(rate*variable0 + bias) + offset"""
    return scale * np.exp((rate * variable0) + bias) + offset


def sin(variable0, scale):
    """sin(variable0, scale) = scale * sin(variable0)"""
    return scale * np.sin(variable0)


def cos(variable0, scale):
    """cos(variable0, scale) = scale * cos(variable0)"""
    return scale * np.cos(variable0)


def matmul(A, B):
    """MatMul(A, B) = A @ B"""
    return A @ B


def relu(A):
    """Relu(A) = maximum(A, 0), computed as A * (A > 0) like modeci-mdf."""
    return A * (A > 0)


for _name, _fn, _args in (
    ("linear", linear, ("variable0", "slope", "intercept")),
    ("logistic", logistic, ("variable0", "gain", "bias", "offset")),
    ("exponential", exponential, ("variable0", "scale", "rate", "bias", "offset")),
    ("sin", sin, ("variable0", "scale")),
    ("cos", cos, ("variable0", "scale")),
    ("MatMul", matmul, ("A", "B")),
    ("Relu", relu, ("A",)),
):
    register("std", _name, inputs=_args, outputs=("out",), jit=njit(cache=True)(_fn))(_fn)
