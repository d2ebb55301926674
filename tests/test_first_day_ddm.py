"""PsyNeuLink's DriftDiffusionAnalytical conditional moments against its formula evaluated in
exact arithmetic (mpmath, 50 digits): the oracle for the digits PsyNeuLink's float64 evaluation
loses to cancellation when the drift rate is small (issue 24, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mdf_engine.plan import load_function_libraries
from mdf_engine.registry import REGISTRY

mp = pytest.importorskip("mpmath")

CASES = [
    c
    for c in json.loads(
        (Path(__file__).resolve().parent / "data" / "pnl" / "functions.expected.json").read_text()
    )["cases"]
    if c["function"] == "driftdiffusionanalytical"
]
EXTRA = [  # near-zero and moderate drifts, a start near a bound, a large threshold
    {"drift_rate": 1e-3, "threshold": 0.5, "starting_value": 0.2, "noise": 1.0},
    {"drift_rate": 0.05, "threshold": 2.0, "starting_value": -1.5, "noise": 0.3},
    {"drift_rate": 0.4, "threshold": 1.0, "starting_value": 0.0, "noise": 0.5},
    {"drift_rate": -2.0, "threshold": 3.0, "starting_value": 0.5, "noise": 0.2},
]


def _exact_moments(drift: float, z: float, s0: float, noise: float, t0: float) -> list:
    """PsyNeuLink's _compute_conditional_rt_moments, term for term, in 50-digit arithmetic
    (the float64 inputs it derives -- bias, the clamped drift -- rounded as it rounds them)."""
    mp.mp.dps = 50
    bias = min(max((s0 + z) / (2 * z), 1e-8), 1 - 1e-8)
    drift = 0.01 if abs(drift) < 0.01 else drift
    A, S, T = mp.mpf(drift), mp.mpf(noise), mp.mpf(z)
    x = (mp.mpf(bias) - mp.mpf("0.5")) * 2 * T
    X = max(-100, min(100, A * x / S**2))
    Z = max(-100, min(100, A * T / S**2))
    Z = mp.mpf("0.0001") if abs(Z) < mp.mpf("0.0001") else Z

    def coth(u):
        return 1 / mp.tanh(u)

    def csch(u):
        return 1 / mp.sinh(u)

    out = []
    for q in (Z + X, Z - X):
        mean = S**2 / A**2 * (2 * Z * coth(2 * Z) - q * coth(q)) + t0
        var = (
            S**4
            / A**4
            * (
                (2 * Z) ** 2 * csch(2 * Z) ** 2
                + 2 * Z * coth(2 * Z)
                - q**2 * csch(q) ** 2
                - q * coth(q)
            )
        )
        third = (
            S**6
            / A**6
            * (
                3 * (2 * Z) ** 2 * csch(2 * Z) ** 2
                + 2 * (2 * Z) ** 3 * coth(2 * Z) * csch(2 * Z) ** 2
                + 3 * 2 * Z * coth(2 * Z)
                - 3 * q**2 * csch(q) ** 2
                - 2 * q**3 * coth(q) * csch(q) ** 2
                - 3 * q * coth(q)
            )
        )
        out += [float(mean), float(var), float(third / var ** mp.mpf("1.5"))]
    return out


@pytest.mark.parametrize(
    "args,v",
    [(c["args"], c["variable0"][0]) for c in CASES]
    + [({**a, "non_decision_time": 0.25}, 1.0) for a in EXTRA],
)
def test_ddm_moments_equal_the_exact_formula(args, v):
    load_function_libraries(())
    (sch,) = [s for s in REGISTRY.versions("driftdiffusionanalytical") if s.namespace == "pnl"]
    got = np.ravel(sch.call([np.array([v])], args))
    want = _exact_moments(
        args["drift_rate"] * v,
        args["threshold"],
        args["starting_value"],
        args["noise"],
        args["non_decision_time"],
    )
    np.testing.assert_allclose(got[2:], want, rtol=1e-12)
