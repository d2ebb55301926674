"""The functions PsyNeuLink writes into its MDF exports (namespace ``pnl``), with PsyNeuLink's
semantics and the argument names its exporter writes (``variable0`` plus the function's
parameters). Written from PsyNeuLink's documentation and observed behaviour.

A PsyNeuLink file calls them by bare, lower-case class name (``"function": "linear"``). Three
names are shared with the MDF standard functions (``linear``, ``logistic``, ``exponential``):
PsyNeuLink's take more arguments (``scale``, ``offset``, ``x_0``) and its logistic adds ``offset``
*outside* the exponential, so the planner picks these versions for files whose
``generating_application`` is PsyNeuLink (or whose arguments only bind here). They are
registered with ``since=0`` so that the standard version stays the default of the shared name
and every (name, since) pair names one kernel.

Stateful PsyNeuLink integrators are exported as ``value`` expressions over ``previous_value``;
the one-step kernels here (``simpleintegrator``, ``adaptiveintegrator``,
``leakycompetingintegrator``, ``fitzhughnagumointegrator``) take the previous state as an input
and return the new state, for models that call them by name.

* ``linear = scale*(variable0*slope + intercept) + offset``
* ``logistic = scale / (1 + exp(-gain*(variable0 + bias - x_0))) + offset``
* ``exponential = scale*exp(rate*variable0 + bias) + offset``
* ``linearcombination``: items of ``variable0`` (axis 0) raised to ``exponents``, multiplied by
  ``weights`` (one per item), combined by ``operation`` ("sum" or "product") across items, then
  ``*scale + offset``; a 0-d/1-d variable is just ``variable0*scale + offset``.
* ``reduce``: the same on the elements of each item (axis 1 of the variable made 2-d).
* ``distance``: ``metric`` between the two items of ``variable0``: ``max_abs_diff``,
  ``difference`` (sum of absolute differences), ``dot_product``, ``euclidean``, ``cosine``
  (``1 - |cos|``), ``correlation`` (``1 - |r|``), ``cross-entropy``, ``energy``
  (``-sum(v1*v2)/2``); ``normalize`` divides by the length (its square for energy; not for
  max_abs_diff/cosine/correlation).
* ``energy(variable0, matrix) = -sum(v * ((matrix with zero diagonal) @ v)) / 2`` (``normalize``
  divides by ``len(v)**2``).
* ``driftdiffusionanalytical``: Bogacz et al. (2006) closed forms for the mean response time and
  error rate of a drift diffusion process with drift ``drift_rate*variable0``, and the conditional
  moments of the response times; returns ``[rt, er, mean_rt_plus, var_rt_plus, skew_rt_plus,
  mean_rt_minus, var_rt_minus, skew_rt_minus]``.
* ``defaultallocationfunction``: the first item of ``variable0`` repeated once per control
  signal (``num_control_signals``), the default allocation of a control mechanism.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..errors import MDFError
from ..registry import register

_SINCE = 0


def _f(x: Any) -> Any:
    """Numbers and arrays as float64 (PsyNeuLink computes in double precision)."""
    return np.asarray(x, dtype=np.float64)


# -- transfer functions ---------------------------------------------------------------------------


@njit(cache=True)
def _linear_jit(variable0, slope, intercept, scale, offset):
    return scale * (variable0 * slope + intercept) + offset


@register(
    "pnl",
    "linear",
    inputs=("variable0",),
    attributes={"slope": 1.0, "intercept": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=_SINCE,
    jit=_linear_jit,
)
def linear(
    variable0: Any, *, slope: Any = 1.0, intercept: Any = 0.0, scale: Any = 1.0, offset: Any = 0.0
) -> np.ndarray:
    """scale*(variable0*slope + intercept) + offset"""
    return scale * (_f(variable0) * slope + intercept) + offset


@njit(cache=True)
def _logistic_jit(variable0, gain, bias, x_0, scale, offset):
    return scale * (1.0 / (1.0 + np.exp(-gain * (variable0 + bias - x_0)))) + offset


@register(
    "pnl",
    "logistic",
    inputs=("variable0",),
    attributes={"gain": 1.0, "bias": 0.0, "x_0": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=_SINCE,
    jit=_logistic_jit,
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
    return scale * (1.0 / (1.0 + np.exp(-gain * (_f(variable0) + bias - x_0)))) + offset


@njit(cache=True)
def _exponential_jit(variable0, rate, bias, scale, offset):
    return scale * np.exp(rate * variable0 + bias) + offset


@register(
    "pnl",
    "exponential",
    inputs=("variable0",),
    attributes={"rate": 1.0, "bias": 0.0, "scale": 1.0, "offset": 0.0},
    outputs=("out",),
    since=_SINCE,
    jit=_exponential_jit,
)
def exponential(
    variable0: Any, *, rate: Any = 1.0, bias: Any = 0.0, scale: Any = 1.0, offset: Any = 0.0
) -> np.ndarray:
    """scale*exp(rate*variable0 + bias) + offset"""
    return scale * np.exp(rate * _f(variable0) + bias) + offset


# -- combination functions ------------------------------------------------------------------------


def _operation(operation: Any, where: str) -> str:
    op = str(operation).lower().replace("_", "-")
    if op not in ("sum", "product"):
        raise MDFError(f"{where}: operation must be 'sum' or 'product', got {operation!r}")
    return op


def _weighted(v: np.ndarray, weights: Any, exponents: Any, item_axis: int) -> np.ndarray:
    """``v**exponents * weights``, a 1-d weight/exponent vector applying one value per item."""

    def shaped(p: Any) -> np.ndarray:
        p = _f(p)
        if p.ndim == 1 and v.ndim == 2 and item_axis == 0 and p.shape[0] == v.shape[0]:
            return p.reshape(-1, 1)
        return p

    if exponents is not None:
        v = v ** shaped(exponents)
    if weights is not None:
        v = v * shaped(weights)
    return v


@register(
    "pnl",
    "linearcombination",
    inputs=("variable0",),
    attributes={
        "weights": None,
        "exponents": None,
        "operation": "sum",
        "scale": 1.0,
        "offset": 0.0,
    },
    outputs=("out",),
    since=_SINCE,
    python_only=True,
)
def linearcombination(
    variable0: Any,
    *,
    weights: Any = None,
    exponents: Any = None,
    operation: Any = "sum",
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """Combine the items of variable0 (axis 0) elementwise; see the module docstring."""
    v = _f(variable0)
    op = _operation(operation, "linearcombination")
    scale = 1.0 if scale is None else _f(scale)
    offset = 0.0 if offset is None else _f(offset)
    if v.ndim < 2:
        return v * scale + offset
    v = _weighted(v, weights, exponents, 0)
    combined = v.sum(axis=0) if op == "sum" else v.prod(axis=0)
    return combined * scale + offset


@register(
    "pnl",
    "reduce",
    inputs=("variable0",),
    attributes={
        "weights": None,
        "exponents": None,
        "operation": "sum",
        "scale": 1.0,
        "offset": 0.0,
    },
    outputs=("out",),
    since=_SINCE,
    python_only=True,
)
def reduce(
    variable0: Any,
    *,
    weights: Any = None,
    exponents: Any = None,
    operation: Any = "sum",
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """Combine the elements of each item of variable0 (axis 1 of it made 2-d)."""
    v = np.atleast_2d(_f(variable0))
    op = _operation(operation, "reduce")
    v = _weighted(v, weights, exponents, 1)
    combined = v.sum(axis=1) if op == "sum" else v.prod(axis=1)
    return combined * (1.0 if scale is None else _f(scale)) + (
        0.0 if offset is None else _f(offset)
    )


# -- objective functions --------------------------------------------------------------------------

_METRICS = (
    "max_abs_diff",
    "difference",
    "dot_product",
    "euclidean",
    "cosine",
    "correlation",
    "cross-entropy",
    "energy",
)


def _two_items(variable0: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    v = variable0
    if isinstance(v, np.ndarray) and v.dtype != object:
        if v.shape[0] != 2:
            raise MDFError(f"{where}: variable0 must hold two items, got shape {v.shape}")
        return _f(v[0]).reshape(-1), _f(v[1]).reshape(-1)
    if len(v) != 2:
        raise MDFError(f"{where}: variable0 must hold two items, got {len(v)}")
    return _f(np.hstack(v[0])).reshape(-1), _f(np.hstack(v[1])).reshape(-1)


@register(
    "pnl",
    "distance",
    inputs=("variable0",),
    attributes={"metric": "difference", "normalize": False},
    outputs=("out",),
    since=_SINCE,
    python_only=True,
)
def distance(variable0: Any, *, metric: Any = "difference", normalize: Any = False) -> np.ndarray:
    """The ``metric`` between the two items of variable0 (see the module docstring)."""
    a, b = _two_items(variable0, "distance")
    m = str(metric).lower().replace("_", "-").replace("-", "_")
    m = "cross-entropy" if m in ("cross_entropy", "crossentropy") else m
    m = "cosine" if m == "cosine_similarity" else m
    if m not in _METRICS:
        raise MDFError(
            f"distance: unknown metric {metric!r} (expected one of {', '.join(_METRICS)})"
        )
    if m == "max_abs_diff":
        r = np.max(np.abs(a - b))
    elif m == "difference":
        r = np.sum(np.abs(a - b))
    elif m == "dot_product":
        r = np.dot(a, b)
    elif m == "euclidean":
        r = np.sqrt(np.sum((b - a) ** 2))
    elif m == "cosine":
        r = 1.0 - abs(np.dot(a, b) / (np.sqrt(np.dot(a, a)) * np.sqrt(np.dot(b, b))))
    elif m == "correlation":
        da, db = a - a.mean(), b - b.mean()
        r = 1.0 - abs(np.sum(da * db) / np.sqrt(np.sum(da * da) * np.sum(db * db)))
    elif m == "cross-entropy":
        both = (a == 0) & (b == 0)
        safe_b = np.where(both, 1.0, b)
        r = -np.sum(np.where(both, 0.0, a * np.log(safe_b)))
    else:
        r = -np.sum(a * b) / 2.0
    if normalize and m not in ("max_abs_diff", "cosine", "correlation"):
        r = r / (len(a) ** 2 if m == "energy" else len(a))
    return np.asarray(r, dtype=np.float64)


@njit(cache=True)
def _energy_core(v, matrix, normalize):
    n = v.shape[0]
    total = 0.0
    for i in range(n):
        acc = 0.0
        for j in range(n):
            if i != j:
                acc += matrix[i, j] * v[j]
        total += v[i] * acc
    r = -total / 2.0
    if normalize:
        r = r / (n * n)
    return r


@register(
    "pnl",
    "energy",
    inputs=("variable0",),
    attributes={"matrix": None, "normalize": False},
    outputs=("out",),
    since=_SINCE,
)
def energy(variable0: Any, *, matrix: Any = None, normalize: Any = False) -> np.ndarray:
    """-sum(v * (hollow(matrix) @ v)) / 2; matrix defaults to -1 off the diagonal."""
    v = _f(variable0).reshape(-1)
    n = v.shape[0]
    m = _f(matrix) if matrix is not None else -(np.ones((n, n)) - np.eye(n))
    if m.shape != (n, n):
        raise MDFError(
            f"energy: matrix must be {n}x{n} for a variable of length {n}, got shape {m.shape}"
        )
    return np.asarray(_energy_core(v, np.ascontiguousarray(m), bool(normalize)))


# -- integrators (one step; the state is an input) ------------------------------------------------


@njit(cache=True)
def _simple_jit(variable0, previous_value, rate, noise, offset):
    return previous_value + variable0 * rate + noise + offset


@register(
    "pnl",
    "simpleintegrator",
    inputs=("variable0", "previous_value"),
    attributes={"rate": 1.0, "noise": 0.0, "offset": 0.0},
    outputs=("out",),
    since=_SINCE,
    jit=_simple_jit,
)
def simpleintegrator(
    variable0: Any, previous_value: Any, *, rate: Any = 1.0, noise: Any = 0.0, offset: Any = 0.0
) -> np.ndarray:
    """previous_value + variable0*rate + noise + offset"""
    return _f(previous_value) + _f(variable0) * rate + noise + offset


@njit(cache=True)
def _adaptive_jit(variable0, previous_value, rate, noise, offset):
    return (1 - rate) * previous_value + rate * variable0 + noise + offset


@register(
    "pnl",
    "adaptiveintegrator",
    inputs=("variable0", "previous_value"),
    attributes={"rate": 1.0, "noise": 0.0, "offset": 0.0},
    outputs=("out",),
    since=_SINCE,
    jit=_adaptive_jit,
)
def adaptiveintegrator(
    variable0: Any, previous_value: Any, *, rate: Any = 1.0, noise: Any = 0.0, offset: Any = 0.0
) -> np.ndarray:
    """(1 - rate)*previous_value + rate*variable0 + noise + offset"""
    return (1 - _f(rate)) * _f(previous_value) + _f(rate) * _f(variable0) + noise + offset


@njit(cache=True)
def _lci_jit(variable0, previous_value, rate, noise, offset, time_step_size):
    return (
        previous_value
        + (-rate * previous_value + variable0) * time_step_size
        + noise * time_step_size**0.5
        + offset
    )


@register(
    "pnl",
    "leakycompetingintegrator",
    inputs=("variable0", "previous_value"),
    attributes={"rate": 1.0, "noise": 0.0, "offset": 0.0, "time_step_size": 0.1},
    outputs=("out",),
    since=_SINCE,
    jit=_lci_jit,
)
def leakycompetingintegrator(
    variable0: Any,
    previous_value: Any,
    *,
    rate: Any = 1.0,
    noise: Any = 0.0,
    offset: Any = 0.0,
    time_step_size: Any = 0.1,
) -> np.ndarray:
    """previous_value + (-rate*previous_value + variable0)*dt + noise*sqrt(dt) + offset"""
    p = _f(previous_value)
    return (
        p + (-_f(rate) * p + _f(variable0)) * time_step_size + noise * time_step_size**0.5 + offset
    )


_FHN_ATTRS = {
    "a_v": -1 / 3,
    "b_v": 0.0,
    "c_v": 1.0,
    "d_v": 0.0,
    "e_v": -1.0,
    "f_v": 1.0,
    "time_constant_v": 1.0,
    "a_w": 1.0,
    "b_w": -0.8,
    "c_w": 0.7,
    "threshold": -1.0,
    "time_constant_w": 12.5,
    "mode": 1.0,
    "uncorrelated_activity": 0.0,
    "time_step_size": 0.05,
    "integration_method": "RK4",
}


@njit(cache=True)
def _fhn_dv(x, v, w, a_v, b_v, c_v, d_v, e_v, f_v, tau_v, threshold):
    return (
        a_v * v**3 + (1 + threshold) * b_v * v**2 + (-threshold) * c_v * v + d_v + e_v * w + f_v * x
    ) / tau_v


@njit(cache=True)
def _fhn_dw(v, w, a_w, b_w, c_w, mode, uncorrelated, tau_w):
    return (mode * a_w * v + b_w * w + c_w + (1 - mode) * uncorrelated) / tau_w


@njit(cache=True)
def _fhn_step(
    x,
    v,
    w,
    t,
    a_v,
    b_v,
    c_v,
    d_v,
    e_v,
    f_v,
    tau_v,
    a_w,
    b_w,
    c_w,
    threshold,
    tau_w,
    mode,
    unc,
    dt,
    rk4,
):
    kv1 = _fhn_dv(x, v, w, a_v, b_v, c_v, d_v, e_v, f_v, tau_v, threshold)
    kw1 = _fhn_dw(v, w, a_w, b_w, c_w, mode, unc, tau_w)
    if not rk4:
        return v + dt * kv1, w + dt * kw1, t + dt
    # PsyNeuLink's staging: each variable's stages move only that variable.
    kv2 = _fhn_dv(x, v + 0.5 * dt * kv1, w, a_v, b_v, c_v, d_v, e_v, f_v, tau_v, threshold)
    kv3 = _fhn_dv(x, v + 0.5 * dt * kv2, w, a_v, b_v, c_v, d_v, e_v, f_v, tau_v, threshold)
    kv4 = _fhn_dv(x, v + dt * kv3, w, a_v, b_v, c_v, d_v, e_v, f_v, tau_v, threshold)
    kw2 = _fhn_dw(v, w + 0.5 * dt * kw1, a_w, b_w, c_w, mode, unc, tau_w)
    kw3 = _fhn_dw(v, w + 0.5 * dt * kw2, a_w, b_w, c_w, mode, unc, tau_w)
    kw4 = _fhn_dw(v, w + dt * kw3, a_w, b_w, c_w, mode, unc, tau_w)
    v_new = v + (dt / 6) * (kv1 + 2 * (kv2 + kv3) + kv4)
    w_new = w + (dt / 6) * (kw1 + 2 * (kw2 + kw3) + kw4)
    return v_new, w_new, t + dt


@register(
    "pnl",
    "fitzhughnagumointegrator",
    inputs=("variable0", "v", "w", "time"),
    attributes=_FHN_ATTRS,
    outputs=("v", "w", "time"),
    since=_SINCE,
    python_only=True,
)
def fitzhughnagumointegrator(variable0: Any, v: Any, w: Any, time: Any, **params: Any) -> tuple:
    """One FitzHugh-Nagumo step (RK4 as PsyNeuLink stages it, or EULER) from state (v, w, time)."""
    p = {**_FHN_ATTRS, **params}
    method = str(p["integration_method"]).upper()
    if method not in ("RK4", "EULER"):
        raise MDFError(
            f"fitzhughnagumointegrator: integration_method must be 'RK4' or 'EULER', "
            f"got {p['integration_method']!r}"
        )
    out = _fhn_step(
        _f(variable0),
        _f(v),
        _f(w),
        _f(time),
        p["a_v"],
        p["b_v"],
        p["c_v"],
        p["d_v"],
        p["e_v"],
        p["f_v"],
        p["time_constant_v"],
        p["a_w"],
        p["b_w"],
        p["c_w"],
        p["threshold"],
        p["time_constant_w"],
        p["mode"],
        p["uncorrelated_activity"],
        float(p["time_step_size"]),
        method == "RK4",
    )
    return tuple(np.asarray(o, dtype=np.float64) for o in out)


# -- drift diffusion, analytical ------------------------------------------------------------------


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
    since=_SINCE,
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
    drift = float(_f(drift_rate).reshape(-1)[0]) * float(_f(variable0).reshape(-1)[0])
    z = float(_f(threshold).reshape(-1)[0])
    s = float(_f(starting_value).reshape(-1)[0])
    sigma = float(_f(noise).reshape(-1)[0])
    t0 = float(_f(non_decision_time).reshape(-1)[0])
    if z <= 0 or sigma <= 0:
        raise MDFError(
            f"driftdiffusionanalytical: threshold and noise must be > 0, got {z} and {sigma}"
        )
    rt, er = _ddm_rt_er(drift, z, s, sigma, t0)
    b = min(max((s + z) / (2 * z), 1e-8), 1 - 1e-8)
    return np.array([rt, er, *_ddm_moments(drift, sigma, z, b, t0)], dtype=np.float64)


# -- control -------------------------------------------------------------------------------------


@register(
    "pnl",
    "defaultallocationfunction",
    inputs=("variable0",),
    attributes={"num_control_signals": 1},
    outputs=("out",),
    since=_SINCE,
    python_only=True,
)
def defaultallocationfunction(variable0: Any, *, num_control_signals: Any = 1) -> np.ndarray:
    """The first item of variable0, once per control signal."""
    v = np.atleast_1d(_f(variable0))
    return np.array([v[0]] * int(num_control_signals))
