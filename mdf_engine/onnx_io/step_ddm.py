"""PsyNeuLink's ``driftdiffusionanalytical`` (a DDM mechanism's function) as ONNX nodes.

The engine's function (:mod:`mdf_engine.standard_functions.psyneulink`) returns
``[rt, er, mean/var/skew of correct RTs, mean/var/skew of error RTs]`` from Bogacz et al.
(2006)'s closed forms and PsyNeuLink's conditional moments. Its branches become ``Where``
(both sides computed, the one the engine takes selected):

* a drift rate below 1e-8 in size: the zero-drift forms;
* the engine falls back to ``rt = z/a - x0 + t0, er = 0`` when numpy raises on over- or
  underflow in the exponentials; here the fallback is taken when an exponential's argument
  is beyond +-708.39 (where ``exp`` or ``1/(1 + exp)`` leaves the normal float64 range),
  which is where numpy raises for these forms;
* the moment terms ``u*coth(u) - 1``, ... use the engine's 48-term series for ``|u| < 2`` and
  the closed forms above, for the three arguments at once.

The threshold, starting value, noise, non-decision time and drift rate must be constants
(PsyNeuLink writes them so); the stimulus (``variable0``) may be any value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from .step_translate import StepTranslator
from .translate import Val

__all__ = ["ddm_analytical"]


def _series(terms: int = 48) -> np.ndarray:
    """Coefficients of the moment terms' power series in ``u**2`` (columns: ``f - 1``,
    ``f + h - 2``, ``3f + 3h + 2fh - 8`` with ``f = u*coth(u)``, ``h = (u/sinh(u))**2``), from
    ``u*coth(u) = sum 4**n B(2n) u**(2n) / (2n)!`` (B the Bernoulli numbers, exact fractions)."""
    from fractions import Fraction
    from math import comb, factorial

    b = [Fraction(1)]
    for m in range(1, 2 * terms):
        b.append(-sum(comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    a = [float(Fraction(4) ** n * b[2 * n] / factorial(2 * n)) for n in range(terms)]
    rows = [[0.0, 0.0, a[0] * 8]] + [
        [a[n], a[n] * (2 - 2 * n), a[n] * 4 * (n - 1) * (n - 2)] for n in range(1, terms)
    ]
    return np.asarray(rows)


#: |u| below this: the series (its terms fall by (2/pi)**2 per power; 48 reach 1e-18)
_SERIES_BELOW = 2.0
#: beyond this, exp(+x) or 1/(1 + exp(x)) leaves the normal float64 range (numpy raises)
_EXP_LIMIT = 708.39
_ARGS = {
    "drift_rate": 1.0,
    "threshold": 1.0,
    "starting_value": 0.0,
    "noise": 0.5,
    "non_decision_time": 0.2,
}


def ddm_analytical(tr: StepTranslator, item: Any, scope: dict, t: str, what: str) -> Val:
    """The function's 8 values as one 1-D value (read by index, as the engine's array)."""
    args = item.args or {}
    c: dict[str, float] = {}
    for k, default in _ARGS.items():
        v = tr.expr(args[k], f"{t}_{k}", f"{what}.args.{k}", scope) if k in args else None
        if v is not None and (v.name is not None or v.multi is not None):
            raise MDFError(
                f"driftdiffusionanalytical is exported with a constant '{k}' only",
                f"{tr.where}.{what}.args.{k}",
            )
        c[k] = default if v is None else float(np.asarray(v.const, float).reshape(-1)[0])
    z, s, sigma, t0 = c["threshold"], c["starting_value"], c["noise"], c["non_decision_time"]
    if z <= 0 or sigma <= 0:
        raise MDFError(
            f"driftdiffusionanalytical: threshold and noise must be > 0, got {z} and {sigma}",
            f"{tr.where}.{what}",
        )
    if "variable0" not in args:
        raise MDFError("driftdiffusionanalytical needs 'variable0'", f"{tr.where}.{what}.args")
    e = _Emit(tr, t)
    x = tr.as_kind(
        tr.expr(args["variable0"], f"{t}_x", f"{what}.args.variable0", scope), "float", t
    )
    flat = e.op("Reshape", x, e.k(np.asarray([-1], np.int64), "int"))
    first = e.op("Gather", flat, e.k(np.int64(0), "int"))
    drift = e.op("Mul", first, e.k(c["drift_rate"]))
    bias = min(max((s + z) / (2 * z), 1e-8), 1 - 1e-8)
    rt, er = _rt_er(e, drift, z, bias, sigma, t0)
    moments = _moments(e, drift, sigma, z, bias, t0)
    axes = e.k(np.asarray([0], np.int64), "int")
    parts = [e.op("Unsqueeze", v, axes) for v in [rt, er, *moments]]
    out = tr.b.fresh(t)
    tr.b.node("Concat", [p.name for p in parts], [out], tr.node_name(t), axis=0)
    return Val(out, "float")


class _Emit:
    """Small node writers over one translator (names from ``t``)."""

    def __init__(self, tr: StepTranslator, t: str):
        self.tr, self.t = tr, t

    def k(self, v: Any, kind: str = "float") -> Val:
        return self.tr.materialize(Val(const=v), f"{self.t}_c", kind)

    def op(self, op: str, *ins: Val) -> Val:
        kind = "bool" if op in ("Less", "Greater", "Or", "And", "Not") else "float"
        return self.tr.op(op, list(ins), f"{self.t}_{op.lower()}", kind)

    def where(self, cond: Val, a: Val, b: Val) -> Val:
        return self.op("Where", cond, a, b)

    def clip(self, v: Val, lo: float, hi: float) -> Val:
        return self.op("Min", self.op("Max", v, self.k(lo)), self.k(hi))


def _rt_er(e: _Emit, drift: Val, z: float, bias: float, sigma: float, t0: float) -> list[Val]:
    """Mean decision time + t0 and error rate (the engine's ``_ddm_rt_er``)."""
    x0_zero = bias * 2 * z - z
    rt_zero = t0 + (z**2 - x0_zero**2) / sigma**2
    er_zero = (z - x0_zero) / (2 * z)
    a = e.op("Abs", drift)
    small = e.op("Less", a, e.k(1e-8))
    a = e.where(small, e.k(1.0), a)  # the zero-drift branch is selected: any a > 0 will do
    negative = e.op("Less", drift, e.k(0.0))

    def y0(b: float, sign: float) -> float:
        v = (sigma**2 / 2) * np.log(b / (1 - b))
        return sign * z if abs(v) > z else float(v)

    y = e.where(negative, e.k(y0(1 - bias, -1.0)), e.k(y0(bias, 1.0)))
    ztil = e.op("Div", e.k(z), a)
    atil = e.op("Mul", e.op("Div", a, e.k(sigma)), e.op("Div", a, e.k(sigma)))
    x0 = e.op("Div", y, a)
    arg_x0 = e.op("Mul", e.op("Mul", x0, atil), e.k(-2.0))
    arg_z = e.op("Mul", e.op("Mul", ztil, atil), e.k(2.0))
    e_x0 = e.op("Exp", arg_x0)
    e_pz = e.op("Exp", arg_z)
    e_nz = e.op("Exp", e.op("Neg", arg_z))
    one = e.k(1.0)
    den = e.op("Sub", e_pz, e_nz)
    rt = e.op(
        "Sub",
        e.op(
            "Add",
            e.op("Mul", ztil, e.op("Tanh", e.op("Mul", ztil, atil))),
            e.op("Div", e.op("Mul", e.op("Mul", e.k(2.0), ztil), e.op("Sub", one, e_x0)), den),
        ),
        x0,
    )
    er = e.op(
        "Sub", e.op("Div", one, e.op("Add", one, e_pz)), e.op("Div", e.op("Sub", one, e_x0), den)
    )
    rt = e.op("Add", rt, e.k(t0))
    limit = e.k(_EXP_LIMIT)
    raised = e.op(
        "Or",
        e.op("Greater", e.op("Abs", arg_x0), limit),
        e.op("Greater", e.op("Abs", arg_z), limit),
    )
    # numpy also raises when any later result over- or underflows (er a difference of two
    # numbers near 1e-308): an infinite or subnormal intermediate takes the fallback too
    for v in (e_x0, e_pz, e_nz, den, rt, er):
        raised = e.op("Or", raised, _out_of_range(e, v))
    rt = e.where(raised, e.op("Add", e.op("Sub", e.op("Div", ztil, atil), x0), e.k(t0)), rt)
    er = e.where(raised, e.k(0.0), er)
    er = e.where(negative, e.op("Sub", one, er), er)
    return [e.where(small, e.k(rt_zero), rt), e.where(small, e.k(er_zero), er)]


def _out_of_range(e: _Emit, v: Val) -> Val:
    """``v`` is infinite or a nonzero subnormal float64 (numpy's over/underflow)."""
    a = e.op("Abs", v)
    tiny = e.op("And", e.op("Greater", a, e.k(0.0)), e.op("Less", a, e.k(np.finfo(float).tiny)))
    return e.op("Or", e.tr.op("IsInf", [v], f"{e.t}_isinf", "bool"), tiny)


def _moments(e: _Emit, drift: Val, sigma: float, z: float, bias: float, t0: float) -> list[Val]:
    """The six conditional RT moments (the engine's ``_ddm_moments``)."""
    x = (bias - 0.5) * 2.0 * z
    d = e.where(e.op("Less", e.op("Abs", drift), e.k(0.01)), e.k(0.01), drift)
    X = e.clip(e.op("Mul", d, e.k(x / sigma**2)), -100.0, 100.0)
    Z = e.clip(e.op("Mul", d, e.k(z / sigma**2)), -100.0, 100.0)
    Z = e.where(e.op("Less", e.op("Abs", Z), e.k(0.0001)), e.k(0.0001), Z)
    axes = e.k(np.asarray([0], np.int64), "int")
    us = [e.op("Add", Z, Z), e.op("Add", Z, X), e.op("Sub", Z, X)]
    u = e.tr.b.fresh(f"{e.t}_u")
    e.tr.b.node(
        "Concat", [e.op("Unsqueeze", v, axes).name for v in us], [u], e.tr.node_name(u), axis=0
    )
    u = Val(u, "float")  # [2Z, Z+X, Z-X]
    u_col = e.op("Unsqueeze", u, e.k(np.asarray([1], np.int64), "int"))  # [3, 1]
    u2 = e.op("Mul", u_col, u_col)
    # the series: Horner over n = 47..1 on [3 arguments, (mean, var, third)]
    coef = _series()  # [48, 3]
    acc = e.k(np.zeros(3))
    for n in range(len(coef) - 1, 0, -1):
        acc = e.op("Add", e.op("Mul", acc, u2), e.k(coef[n]))
    series = e.op("Mul", acc, u2)
    f = e.op("Div", u_col, e.op("Tanh", u_col))
    # sinh(u) as (exp(u) - exp(-u)) / 2 (onnxruntime has no float64 Sinh); used for |u| >= 2
    sinh = e.op("Sub", e.op("Exp", u_col), e.op("Exp", e.op("Neg", u_col)))
    h = e.op("Div", e.op("Mul", u_col, e.k(2.0)), sinh)
    h = e.op("Mul", h, h)
    closed_cols = [
        e.op("Sub", f, e.k(1.0)),
        e.op("Sub", e.op("Add", f, h), e.k(2.0)),
        e.op(
            "Sub",
            e.op(
                "Add",
                e.op("Mul", e.k(3.0), e.op("Add", f, h)),
                e.op("Mul", e.k(2.0), e.op("Mul", f, h)),
            ),
            e.k(8.0),
        ),
    ]
    closed = e.tr.b.fresh(f"{e.t}_closed")
    e.tr.b.node("Concat", [v.name for v in closed_cols], [closed], e.tr.node_name(closed), axis=1)
    use_series = e.op("Less", e.op("Abs", u_col), e.k(_SERIES_BELOW))
    terms = e.where(use_series, series, Val(closed, "float"))  # [3, 3]

    def term(i: int, j: int) -> Val:
        row = e.op("Gather", terms, e.k(np.int64(i), "int"))
        return e.op("Gather", row, e.k(np.int64(j), "int"))

    r = e.op("Div", e.k(sigma**2), e.op("Mul", d, d))
    m2, v2, t2 = (term(0, j) for j in range(3))
    out = []
    for i in (1, 2):
        mq, vq, tq = (term(i, j) for j in range(3))
        var = e.op("Mul", e.op("Mul", r, r), e.op("Sub", v2, vq))
        third = e.op("Mul", e.op("Mul", e.op("Mul", r, r), r), e.op("Sub", t2, tq))
        skew = e.op("Div", third, e.op("Pow", var, e.k(1.5)))
        out += [e.op("Add", e.op("Mul", r, e.op("Sub", m2, mq)), e.k(t0)), var, skew]
    return out
