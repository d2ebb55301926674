"""The arguments of a run through the Python API (``Simulation.run``/``evaluate``, ``sweep``),
checked as the ``mdf`` command checks its flags (``cli/checks.py``): a step count is a whole
number >= 0, a time increment a finite number > 0 (a NaN ``dt`` made every value NaN, a
negative one ran time backwards, ``steps=1.5`` ran one step, a list initializer was an
AttributeError)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import MDFError


def check_dt(dt: Any, name: str = "dt") -> None:
    """Refuse a time increment that is not a finite number > 0 (None: no increment)."""
    if dt is None or (type(dt) is float and math.isfinite(dt) and dt > 0):
        return
    import numpy as np

    if (
        isinstance(dt, bool)
        or not isinstance(dt, (int, float, np.integer, np.floating))
        or not math.isfinite(dt)
        or not dt > 0
    ):
        raise MDFError(f"{name} must be a finite number > 0, got {dt!r:.80}")


def check_count(n: Any, name: str) -> None:
    """Refuse a count (a sweep's ``chunk``, ``workers``) that is not a whole number >= 1
    (None: the default)."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise MDFError(f"{name} must be a whole number >= 1, got {n!r:.80}")


def check_run_arguments(steps: Any, dt: Any, initializer: Any, record: Any) -> None:
    """The arguments of ``Simulation.run`` have the types and ranges it takes."""
    if (
        type(steps) is int
        and (dt is None or (type(dt) is float and math.isfinite(dt) and dt > 0))
        and (initializer is None or type(initializer) is dict)
        and record is None
    ):
        return  # (the common call, checked without the general tests below)
    import numpy as np

    if isinstance(steps, bool) or not isinstance(steps, (int, float, np.integer, np.floating)):
        raise MDFError(f"steps must be a whole number, got {steps!r:.80}")
    if math.isfinite(steps) and steps != int(steps):  # (NaN, inf: the step limit names them)
        raise MDFError(f"steps must be a whole number, got {steps!r}")
    check_dt(dt)
    if initializer is not None and not isinstance(initializer, Mapping):
        raise MDFError(f"initializer must be a mapping {{port: value}}, got {initializer!r:.80}")
    if isinstance(record, str) or not all(isinstance(r, str) for r in record or ()):
        raise MDFError(f"record must be a list of 'NODE.PORT' strings, got {record!r:.80}")


def check_sweep_arguments(
    params: Any,
    steps: Any,
    dt: Any,
    initializer: Any,
    record: Any,
    chunk: Any,
    workers: Any,
) -> None:
    """The arguments of :func:`mdf_engine.sweep.sweep`: those of a run (at least one step,
    one record), a mapping of parameters, and counts >= 1."""
    if not isinstance(params, Mapping):
        raise MDFError(f"params must be a mapping {{NODE.PARAM: values}}, got {params!r:.80}")
    check_run_arguments(steps, dt, initializer, record)
    if not record:
        raise MDFError("a sweep needs at least one recorded NODE.PORT")
    if not steps >= 1:
        raise MDFError(f"steps must be >= 1, got {steps}")
    check_count(chunk, "chunk")  # (chunk=-1 gave zeros)
    check_count(workers, "workers")
