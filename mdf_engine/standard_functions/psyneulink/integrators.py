"""PsyNeuLink's integrators as one-step kernels (namespace ``pnl``): the previous state is an
input and the new state the output.

Stateful PsyNeuLink integrators are exported as ``value`` expressions over ``previous_value``;
these kernels (``simpleintegrator``, ``adaptiveintegrator``, ``leakycompetingintegrator``,
``fitzhughnagumointegrator``) serve models that call them by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64


@njit(cache=True)
def _simple_jit(variable0, previous_value, rate, noise, offset):
    return previous_value + variable0 * rate + noise + offset


@register(
    "pnl",
    "simpleintegrator",
    inputs=("variable0", "previous_value"),
    attributes={"rate": 1.0, "noise": 0.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_simple_jit,
    elementwise=True,
)
def simpleintegrator(
    variable0: Any, previous_value: Any, *, rate: Any = 1.0, noise: Any = 0.0, offset: Any = 0.0
) -> np.ndarray:
    """previous_value + variable0*rate + noise + offset"""
    return f64(previous_value) + f64(variable0) * rate + noise + offset


@njit(cache=True)
def _adaptive_jit(variable0, previous_value, rate, noise, offset):
    return (1 - rate) * previous_value + rate * variable0 + noise + offset


@register(
    "pnl",
    "adaptiveintegrator",
    inputs=("variable0", "previous_value"),
    attributes={"rate": 1.0, "noise": 0.0, "offset": 0.0},
    outputs=("out",),
    since=SINCE,
    jit=_adaptive_jit,
    elementwise=True,
)
def adaptiveintegrator(
    variable0: Any, previous_value: Any, *, rate: Any = 1.0, noise: Any = 0.0, offset: Any = 0.0
) -> np.ndarray:
    """(1 - rate)*previous_value + rate*variable0 + noise + offset"""
    return (1 - f64(rate)) * f64(previous_value) + f64(rate) * f64(variable0) + noise + offset


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
    since=SINCE,
    jit=_lci_jit,
    elementwise=True,
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
    p = f64(previous_value)
    return (
        p
        + (-f64(rate) * p + f64(variable0)) * time_step_size
        + noise * time_step_size**0.5
        + offset
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
    since=SINCE,
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
        f64(variable0),
        f64(v),
        f64(w),
        f64(time),
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
