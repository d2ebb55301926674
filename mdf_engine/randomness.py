"""The stream that random operators draw from when the model gives them no ``seed``.

Unseeded, every call of a random operator (``onnx::RandomNormal``, ``Dropout`` in training mode,
``drift_diffusion_integrator``, ...) draws from a fresh generator seeded from OS entropy.
:func:`seed` (``Simulation(seed=S)``, ``mdf run --seed S``) makes those calls draw, one after the
other, from a single ``numpy.random.default_rng(S)`` stream instead: a run is reproducible and
every step still gets fresh draws. Calls with their own ``seed`` attribute are unaffected (they
repeat the same draws, as ONNX specifies). The stream is process-wide.

The compiled backend's loop draws from the same generator
(``backends/compiled/draws.compiled_stream``), so a
seeded run gives the same numbers on both backends and leaves the stream in the same state,
whichever backend drew from it, in whatever order graphs of either backend run. Unseeded, a
compiled loop draws from one generator seeded from OS entropy once per process, rather than
from a fresh one per call (the draws are alike independent; none can be reproduced).
"""

from __future__ import annotations

import numpy as np

from .errors import MDFError

_stream: np.random.Generator | None = None


def seed(value: int | None) -> None:
    """Draw unseeded random values from ``default_rng(value)`` from now on (None: OS entropy)."""
    global _stream
    _stream = None if value is None else np.random.default_rng(check_seed(value))


def check_seed(value: object, what: str = "seed") -> int:
    """``value`` as numpy's generators take a seed: a whole number >= 0 (MDFError if not)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise MDFError(f"{what} must be a whole number >= 0, got {value!r:.80}")
    return int(value)


def generator() -> np.random.Generator:
    """The generator an unseeded random call draws from."""
    return _stream if _stream is not None else np.random.default_rng()
