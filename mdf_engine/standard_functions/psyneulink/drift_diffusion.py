"""PsyNeuLink's ``driftdiffusionanalytical`` (namespace ``pnl``): Bogacz et al. (2006) closed
forms for the mean response time and error rate of a drift diffusion process with drift
``drift_rate*variable0``, and the conditional moments of the response times; it returns
``[rt, er, mean_rt_plus, var_rt_plus, skew_rt_plus, mean_rt_minus, var_rt_minus,
skew_rt_minus]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64


def _first(x: Any) -> float:
    """The first number of a number or an array (the DDM's arguments are read so)."""
    return float(f64(x).reshape(-1)[0])


@overload(_first)
def _first_nopython(x):
    if isinstance(x, types.Array):
        return lambda x: float(x.flat[0])
    return lambda x: float(x)


#: The smallest normal float64: a result below it (and not 0 exactly) has underflowed.
_TINY = 2.2250738585072014e-308


@njit(cache=True, error_model="numpy")
def _product_error(r, a, b, quotient):
    """Whether ``r = a*b`` (``quotient``: ``a/b``) overflowed (infinite from finite operands)
    or underflowed (below the smallest normal number, or 0 from a non-zero exact result):
    what ``np.errstate(over="raise", under="raise")`` turns into a FloatingPointError. A
    division by zero raises neither."""
    if not (np.isfinite(a) and np.isfinite(b)) or np.isnan(r) or (quotient and b == 0.0):
        return False
    if np.isinf(r):
        return True
    exact_zero = a == 0.0 or (b == 0.0 and not quotient)
    return (r != 0.0 and abs(r) < _TINY) or (r == 0.0 and not exact_zero)


@njit(cache=True, error_model="numpy")
def _sum_error(r, a, b):
    """Whether ``r = a + b`` overflowed (a sum that underflows is exact: no error)."""
    return np.isinf(r) and np.isfinite(a) and np.isfinite(b)


@njit(cache=True, error_model="numpy")
def _exp_error(x, r):
    """Whether ``exp(x) = r`` overflowed or underflowed (exp(+-inf) is exact)."""
    return np.isfinite(x) and (np.isinf(r) or r < _TINY)


@njit(cache=True, error_model="numpy")
def _ddm_rt_er(drift, threshold, starting_value, noise, t0):
    """Mean decision time + t0 and error rate (Bogacz et al. 2006, eqs. A47-A48). Where the
    exponentials (or the terms built from them) leave float64's normal range, diffusion is
    negligible against drift (PsyNeuLink's near-deterministic limit): error rate 0 (1 for a
    negative drift), decision time ztil/atil - x0."""
    z = threshold
    bias = (starting_value + z) / (2 * z)
    bias = min(max(bias, 1e-8), 1 - 1e-8)
    if abs(drift) < 1e-8:
        x0 = bias * 2 * z - z
        return t0 + (z**2 - x0**2) / noise**2, (z - x0) / (2 * z)
    a = abs(drift)
    negative = drift < 0
    b = 1 - bias if negative else bias
    ztil = z / a
    atil = (a / noise) ** 2
    y0 = (noise**2 / 2) * np.log(b / (1 - b))
    if abs(y0) > z:
        y0 = -z if negative else z
    x0 = y0 / a
    ax0, apz, anz = -2 * x0 * atil, 2 * ztil * atil, -2 * ztil * atil
    e_x0, e_pz, e_nz = np.exp(ax0), np.exp(apz), np.exp(anz)
    bad = _exp_error(ax0, e_x0) or _exp_error(apz, e_pz) or _exp_error(anz, e_nz)
    za = ztil * atil
    th = np.tanh(za)
    bad = bad or (za != 0.0 and abs(za) < _TINY and np.isfinite(za))
    first = ztil * th
    one_x0 = 1 - e_x0
    num = 2 * ztil * one_x0
    den = e_pz - e_nz
    q1 = num / den
    rt1 = first + q1
    rt = rt1 - x0
    p = 1 + e_pz
    q2 = 1 / p
    q3 = one_x0 / den
    er = q2 - q3
    bad = (
        bad
        or _product_error(first, ztil, th, False)
        or _sum_error(one_x0, 1.0, -e_x0)
        or _product_error(num, 2 * ztil, one_x0, False)
        or _sum_error(den, e_pz, -e_nz)
        or _product_error(q1, num, den, True)
        or _sum_error(rt1, first, q1)
        or _sum_error(rt, rt1, -x0)
        or _sum_error(p, 1.0, e_pz)
        or _product_error(q2, 1.0, p, True)
        or _product_error(q3, one_x0, den, True)
        or _sum_error(er, q2, -q3)
        or _sum_error(rt + t0, rt, t0)
    )
    if bad:
        er = 0.0
        rt = ztil / atil - x0 + t0
    else:
        rt = rt + t0
    if negative:
        er = 1 - er
    return rt, er


def _coth_series(terms: int) -> list[float]:
    """``a[n]``, the coefficients of ``u*coth(u) = sum(a[n] * u**(2n))``: 2**(2n) B(2n) / (2n)!
    (B the Bernoulli numbers, computed exactly with fractions)."""
    from fractions import Fraction
    from math import comb, factorial

    b = [Fraction(1)]
    for m in range(1, 2 * terms):
        b.append(-sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return [float(Fraction(4) ** n * b[2 * n] / factorial(2 * n)) for n in range(terms)]


_COTH = _coth_series(48)
# With f = u*coth(u), h = u**2*csch(u)**2 and k = u**3*coth(u)*csch(u)**2 (all even in u):
#   mean term  f - 1              = sum_{n>=1} a[n] u^2n
#   var term   f + h - 2          = sum_{n>=2} a[n] (2 - 2n) u^2n
#   third term 3f + 3h + 2k - 8   = sum_{n>=3} a[n] 4 (n-1)(n-2) u^2n
# For small u the closed forms lose every digit to cancellation (the var and third terms are
# O(u**4) and O(u**6) differences of O(1) numbers); the series keeps them.
_MEAN_C = np.array([0.0] + _COTH[1:])
_VAR_C = np.array([0.0] + [a * (2 - 2 * n) for n, a in enumerate(_COTH)][1:])
_THIRD_C = np.array([a * 4 * (n - 1) * (n - 2) for n, a in enumerate(_COTH)])
_SERIES_BELOW = 2.0  # |u| < 2: the terms fall by (2/pi)**2 per power of u**2; 48 reach 1e-18


@njit(cache=True, error_model="numpy")
def _moment_terms(u):
    """(f - 1, f + h - 2, 3f + 3h + 2k - 8) at ``u`` (see above), accurate for every ``u``."""
    if abs(u) < _SERIES_BELOW:
        u2 = u * u
        m = v = t = 0.0
        for n in range(_MEAN_C.shape[0] - 1, 0, -1):  # Horner, highest power first
            m = m * u2 + _MEAN_C[n]
            v = v * u2 + _VAR_C[n]
            t = t * u2 + _THIRD_C[n]
        return m * u2, v * u2, t * u2
    if u == 0.0:
        return 0.0, 0.0, 0.0
    f = u / np.tanh(u)
    h = (u / np.sinh(u)) ** 2
    return f - 1.0, f + h - 2.0, 3.0 * f + 3.0 * h + 2.0 * f * h - 8.0


@njit(cache=True, error_model="numpy")
def _ddm_moments(drift, noise, z, bias, t0, out):
    """Conditional response-time moments (mean, variance, skewness; correct then error) into
    ``out[0:6]``.

    PsyNeuLink's formula (after Matlab's ddm_metrics_cond_Mat.m): with X and Z the starting
    point and the threshold scaled by drift/noise**2 and q = Z +- X,
    mean = s**2/A**2 * (f(2Z) - f(q)), var = s**4/A**4 * ((h+f)(2Z) - (h+f)(q)),
    third = s**6/A**6 * ((3h+2k+3f)(2Z) - (3h+2k+3f)(q)), skew = third / var**1.5.
    Each difference is taken between the cancellation-free terms of ``_moment_terms``, so the
    results are the formula's exact values to a few ulps, where PsyNeuLink's own float64
    evaluation of the same formula loses up to 6 digits for small drift rates."""
    x = (bias - 0.5) * 2.0 * z
    if abs(drift) < 0.01:
        drift = 0.01
    X = min(100.0, max(-100.0, drift * x / noise**2))
    Z = min(100.0, max(-100.0, drift * z / noise**2))
    if abs(Z) < 0.0001:
        Z = 0.0001
    m2, v2, t2 = _moment_terms(2 * Z)
    r = noise**2 / drift**2
    for k in range(2):
        q = Z + X if k == 0 else Z - X
        mq, vq, tq = _moment_terms(q)
        var = r * r * (v2 - vq)
        third = r**3 * (t2 - tq)
        out[3 * k] = r * (m2 - mq) + t0
        out[3 * k + 1] = var
        out[3 * k + 2] = third / var**1.5


@njit(cache=True, error_model="numpy")
def _ddm_jit(
    variable0, drift_rate, threshold, starting_value, noise, non_decision_time, bias, shape
):
    """``driftdiffusionanalytical`` in nopython code (``bias`` and ``shape`` unused); the
    Python kernel checks threshold and noise, and calls it."""
    drift = _first(drift_rate) * _first(variable0)
    z = _first(threshold)
    s = _first(starting_value)
    sigma = _first(noise)
    t0 = _first(non_decision_time)
    if z <= 0 or sigma <= 0:
        raise MDFError("driftdiffusionanalytical: threshold and noise must be > 0")
    out = np.empty(8)
    out[0], out[1] = _ddm_rt_er(drift, z, s, sigma, t0)
    b = min(max((s + z) / (2 * z), 1e-8), 1 - 1e-8)
    _ddm_moments(drift, sigma, z, b, t0, out[2:])
    return out


@register(
    "pnl",
    "driftdiffusionanalytical",
    inputs=("variable0",),
    attributes={
        "drift_rate": 1.0,
        "threshold": 1.0,
        "starting_value": 0.0,
        "noise": 0.5,
        "non_decision_time": 0.2,
        "bias": None,
        "shape": None,
    },
    outputs=("out",),
    since=SINCE,
    jit=_ddm_jit,
)
def driftdiffusionanalytical(
    variable0: Any,
    *,
    drift_rate: Any = 1.0,
    threshold: Any = 1.0,
    starting_value: Any = 0.0,
    noise: Any = 0.5,
    non_decision_time: Any = 0.2,
    bias: Any = None,
    shape: Any = None,
) -> np.ndarray:
    """[rt, er, mean/var/skew of correct RTs, mean/var/skew of error RTs] (``bias`` and
    ``shape`` are written by PsyNeuLink for information; the bias used is the one implied by
    ``starting_value``)."""
    z, sigma = _first(threshold), _first(noise)
    if z <= 0 or sigma <= 0:
        raise MDFError(
            f"driftdiffusionanalytical: threshold and noise must be > 0, got {z} and {sigma}"
        )
    return _ddm_jit(
        _first(variable0),
        _first(drift_rate),
        z,
        _first(starting_value),
        sigma,
        _first(non_decision_time),
        None,
        None,
    )
