"""Functions of modeci-mdf 0.4.15's ``mdf_functions`` table that are not in the v0.2 spec and not
registered elsewhere (the trigonometric ones live in :mod:`.trigonometric`, the ACT-R helpers in
:mod:`mdf_engine.actr`): ``drift_diffusion_integrator``.

``drift_diffusion_integrator(starting_point, non_decision_time, drift_rate, threshold, noise, dt)``
simulates one trial of a drift diffusion process by Euler-Maruyama steps
``x += N(drift_rate*dt, noise*sqrt(dt))`` from ``x = starting_point`` until ``|x| >= threshold``,
and returns the response time ``non_decision_time + steps*dt``, positive when the particle ended
above ``threshold`` (strictly), negative otherwise (modeci-mdf's convention: a particle that lands
exactly on ``+threshold`` counts as the lower boundary).

Randomness: the extra attribute ``seed`` (not in modeci-mdf's table, default None) makes a call
reproducible: the normal draws then come from numpy's MT19937 ``RandomState(seed)`` stream, the
stream modeci-mdf uses after ``numpy.random.seed(seed)``. Without a seed each call draws from a
fresh generator seeded from OS entropy; the kernel keeps no state between calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from ..randomness import generator
from ..registry import register

#: Steps after which a trial that never reaches a boundary is reported as an error.
MAX_STEPS = 100_000_000


def _rng(seed: Any) -> Any:
    if seed is None:
        return generator()  # OS entropy, or the run's --seed stream
    return np.random.RandomState(int(seed) & 0xFFFFFFFF)


@register(
    "mdf",
    "drift_diffusion_integrator",
    inputs=("starting_point", "non_decision_time", "drift_rate", "threshold", "noise", "dt"),
    optional=("noise", "dt"),
    attributes={"seed": None},
    outputs=("rt",),
    python_only=True,
)
def drift_diffusion_integrator(
    starting_point: Any,
    non_decision_time: Any,
    drift_rate: Any,
    threshold: Any,
    noise: Any = None,
    dt: Any = None,
    *,
    seed: Any = None,
) -> float:
    """One drift diffusion trial; signed response time (see the module docstring)."""
    noise = 1.0 if noise is None else float(noise)
    dt = 0.01 if dt is None else float(dt)
    x = float(starting_point)
    threshold = float(threshold)
    if not np.isfinite(threshold):
        raise MDFError(f"drift_diffusion_integrator: threshold must be finite, got {threshold}")
    rng = _rng(seed)
    loc = float(drift_rate) * dt
    sd = noise * np.sqrt(dt)
    steps = 0
    while abs(x) < threshold:
        x = x + rng.normal(loc=loc, scale=sd)
        steps += 1
        if steps >= MAX_STEPS:
            raise MDFError(
                "drift_diffusion_integrator: the particle did not reach the threshold "
                f"in {MAX_STEPS} steps (expected a drift or noise that moves it)"
            )
    t = float(non_decision_time) + steps * dt
    return t if x > threshold else -t
