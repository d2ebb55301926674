"""The seven standard functions of the MDF v0.2 spec: linear, logistic, exponential, sin, cos,
MatMul, Relu, with the spec's argument names.

Each kernel is written once, in numpy-compatible arithmetic, and the same source is jitted by
Numba (``jit=``) for the compiled backend.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

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


def _matmul_jit(A, B):
    """MatMul for the compiled backend: Numba's ``@`` takes only two float arrays of one dtype,
    so arrays of different dtypes (an int64 weight and a float64 input, as modeci-mdf's IaF
    examples give) are cast to numpy's common dtype first, and integer ones are multiplied
    by loops (numpy gives an integer product there)."""
    return A @ B


@njit(cache=True)
def _int_matmul(A, B, dt):
    a2 = A if A.ndim == 2 else A.reshape((1, A.shape[0]))
    b2 = B if B.ndim == 2 else B.reshape((B.shape[0], 1))
    if a2.shape[1] != b2.shape[0]:
        raise ValueError("MatMul: the inner dimensions of A and B differ")
    out = np.zeros((a2.shape[0], b2.shape[1]), dt)
    for i in range(a2.shape[0]):
        for k in range(a2.shape[1]):
            x = a2[i, k]
            for j in range(b2.shape[1]):
                out[i, j] += x * b2[k, j]
    return out


@overload(_matmul_jit)
def _matmul_jit_ov(A, B):
    if not (isinstance(A, types.Array) and isinstance(B, types.Array)):
        return lambda A, B: A @ B
    dt = np.result_type(as_dtype(A.dtype), as_dtype(B.dtype))
    if dt.kind in "fc":
        if A.dtype == B.dtype:
            return lambda A, B: A @ B
        return lambda A, B: A.astype(dt) @ B.astype(dt)
    if A.ndim == 1 and B.ndim == 1:
        return lambda A, B: _int_matmul(A, B, dt)[0, 0]
    if A.ndim == 1:
        return lambda A, B: _int_matmul(A, B, dt)[0]
    if B.ndim == 1:
        return lambda A, B: _int_matmul(A, B, dt)[:, 0].copy()
    return lambda A, B: _int_matmul(A, B, dt)


def _matmul_numba(A, B):
    return _matmul_jit(A, B)


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
    _jit = njit(cache=True)(_matmul_numba if _fn is matmul else _fn)
    register("std", _name, inputs=_args, outputs=("out",), jit=_jit)(_fn)
