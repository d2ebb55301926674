"""PsyNeuLink's ``driftdiffusionanalytical`` (namespace ``pnl``): Bogacz et al. (2006) closed
forms for the mean response time and error rate of a drift diffusion process with drift
``drift_rate*variable0``, and the conditional moments of the response times; it returns
``[rt, er, mean_rt_plus, var_rt_plus, skew_rt_plus, mean_rt_minus, var_rt_minus,
skew_rt_minus]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64


def _ddm_rt_er(
    drift: float, threshold: float, starting_value: float, noise: float, t0: float
) -> tuple[float, float]:
    """Mean decision time + t0 and error rate (Bogacz et al. 2006, eqs. A47-A48)."""
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
    with np.errstate(over="raise", under="raise"):
        try:
            e_x0 = np.exp(-2 * x0 * atil)
            e_pz = np.exp(2 * ztil * atil)
            e_nz = np.exp(-2 * ztil * atil)
            rt = ztil * np.tanh(ztil * atil) + (2 * ztil * (1 - e_x0)) / (e_pz - e_nz) - x0
            er = 1 / (1 + e_pz) - (1 - e_x0) / (e_pz - e_nz)
            rt = rt + t0
        except FloatingPointError:
            er = 0.0
            rt = ztil / atil - x0 + t0
    if negative:
        er = 1 - er
    return float(rt), float(er)


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
_MEAN_C = [0.0] + _COTH[1:]
_VAR_C = [0.0] + [a * (2 - 2 * n) for n, a in enumerate(_COTH)][1:]
_THIRD_C = [a * 4 * (n - 1) * (n - 2) for n, a in enumerate(_COTH)]
_SERIES_BELOW = 2.0  # |u| < 2: the terms fall by (2/pi)**2 per power of u**2; 48 reach 1e-18


def _moment_terms(u: float) -> tuple[float, float, float]:
    """(f - 1, f + h - 2, 3f + 3h + 2k - 8) at ``u`` (see above), accurate for every ``u``."""
    if abs(u) < _SERIES_BELOW:
        u2 = u * u
        m = v = t = 0.0
        for n in range(len(_COTH) - 1, 0, -1):  # Horner, highest power first
            m = m * u2 + _MEAN_C[n]
            v = v * u2 + _VAR_C[n]
            t = t * u2 + _THIRD_C[n]
        return m * u2, v * u2, t * u2
    if u == 0.0:
        return 0.0, 0.0, 0.0
    f = u / np.tanh(u)
    h = (u / np.sinh(u)) ** 2
    return f - 1.0, f + h - 2.0, 3.0 * f + 3.0 * h + 2.0 * f * h - 8.0


def _ddm_moments(drift: float, noise: float, z: float, bias: float, t0: float) -> list[float]:
    """Conditional response-time moments (mean, variance, skewness; correct then error).

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
    out = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for q in (Z + X, Z - X):
            mq, vq, tq = _moment_terms(q)
            var = r * r * (v2 - vq)
            third = r**3 * (t2 - tq)
            skew = np.float64(third) / np.float64(var) ** 1.5
            out += [r * (m2 - mq) + t0, var, float(skew)]
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
    python_only=True,
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
    drift = float(f64(drift_rate).reshape(-1)[0]) * float(f64(variable0).reshape(-1)[0])
    z = float(f64(threshold).reshape(-1)[0])
    s = float(f64(starting_value).reshape(-1)[0])
    sigma = float(f64(noise).reshape(-1)[0])
    t0 = float(f64(non_decision_time).reshape(-1)[0])
    if z <= 0 or sigma <= 0:
        raise MDFError(
            f"driftdiffusionanalytical: threshold and noise must be > 0, got {z} and {sigma}"
        )
    rt, er = _ddm_rt_er(drift, z, s, sigma, t0)
    b = min(max((s + z) / (2 * z), 1e-8), 1 - 1e-8)
    return np.array([rt, er, *_ddm_moments(drift, sigma, z, b, t0)], dtype=np.float64)
