"""Limits that keep a hostile or mistaken input from running forever or exhausting memory.

Each limit has a default and an environment variable that raises (or lowers) it; an input
beyond a limit is an :class:`~mdf_engine.errors.MDFError` whose message says which variable
allows more. docs/security.md lists them all.
"""

from __future__ import annotations

import math
import os

from .errors import MDFError

#: (environment variable, default) of each limit
LIMITS = {
    "steps": ("MDF_ENGINE_MAX_STEPS", 100_000_000),
    "sweep_values": ("MDF_ENGINE_MAX_SWEEP_VALUES", 200_000_000),
    # numbers one run keeps in its recorded traces (results.Results.record)
    "record_values": ("MDF_ENGINE_MAX_RECORD_VALUES", 100_000_000),
    # numbers of the constant arrays the compiled backend copies into its state (a memory
    # bound; large arrays are not frozen into machine code): beyond it a graph runs interpreted
    "compiled_constants": ("MDF_ENGINE_MAX_COMPILED_CONSTANTS", 50_000_000),
    # not a safety bound but a choice of backend: a graph whose constant arrays hold more
    # numbers runs interpreted, because its compile takes minutes and its code is no faster
    # (SqueezeNet 1.1: 139 CPU s, then 21 ms of CPU an inference against the interpreter's 13;
    # docs/performance.md, helper sqz)
    "compiled_weights": ("MDF_ENGINE_COMPILE_MAX_WEIGHTS", 500_000),
    # a choice of backend too: a graph of more nodes runs interpreted (its compile grows
    # faster than its length: minutes and gigabytes; mdf_engine/plan/size.py)
    "compiled_nodes": ("MDF_ENGINE_COMPILE_MAX_NODES", 2_000),
}


def limit(name: str) -> int:
    """The current value of limit ``name`` (its environment variable, else its default)."""
    var, default = LIMITS[name]
    text = os.environ.get(var)
    if text is None:
        return default
    try:
        value = int(float(text))
    except (ValueError, OverflowError):
        raise MDFError(f"{var}={text!r} is not a whole number") from None
    return max(value, 0)


def check_steps(steps: float, what: str = "the run") -> None:
    """Refuse a step count beyond the ``steps`` limit (saying how to allow more)."""
    most = limit("steps")
    if not steps <= most:  # also NaN
        var = LIMITS["steps"][0]
        shown = f"{steps:.3g}" if isinstance(steps, float) else str(steps)
        raise MDFError(
            f"{what} asks for {shown} steps; the limit is {most} (set {var} to allow more)"
        )


def steps_estimate(duration: float, dt: float | None) -> float:
    """About how many steps ``duration`` takes with ``dt`` (checked: finite, dt > 0)."""
    if not isinstance(duration, (int, float)) or not math.isfinite(duration) or duration < 0:
        raise MDFError(f"duration must be a finite number >= 0, got {duration!r}")
    if dt is None or not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0:
        raise MDFError(f"a duration needs a finite dt > 0, got {dt!r}")
    return duration / dt + 1


def check_elements(shape: object, what: str) -> None:
    """Refuse, before allocating, an array of more elements than an expression may make
    (``expressions.operators.MAX_RESULT_ELEMENTS``): ``shape`` is a shape or an element count."""
    from .expressions.operators import MAX_RESULT_ELEMENTS

    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    total = 1.0
    for d in dims:
        total *= max(float(d), 0.0)
    if total > MAX_RESULT_ELEMENTS:
        raise MDFError(
            f"{what} would have {total:.3g} elements; the limit is {MAX_RESULT_ELEMENTS}"
        )


def check_sweep_design(axes: list, kind: str, samples: int | None) -> None:
    """Refuse, before building it, a sweep design of more values (sets x parameters) than the
    ``sweep_values`` limit."""
    if kind == "grid":
        sets = math.prod(float(len(a)) for a in axes)
    elif kind == "list":
        sets = float(len(axes[0])) if axes else 0.0
    else:
        sets = float(samples or 0)
    total = sets * max(len(axes), 1)
    most = limit("sweep_values")
    if total > most:
        var = LIMITS["sweep_values"][0]
        raise MDFError(
            f"the sweep design has {sets:.3g} parameter sets ({total:.3g} values); "
            f"the limit is {most} values (set {var} to allow more)"
        )


#: worker processes a sweep's Dask LocalCluster may start, per CPU of the machine
LOCAL_WORKERS_PER_CPU = 4


def check_local_workers(workers: int) -> None:
    """Refuse a LocalCluster of more worker processes than ``LOCAL_WORKERS_PER_CPU`` per CPU
    (``workers=100000`` started processes until the machine stalled)."""
    most = LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1)
    if workers > most:
        raise MDFError(
            f"workers={workers}: a local cluster runs at most {most} worker processes "
            f"({LOCAL_WORKERS_PER_CPU} per CPU of this machine); use --cluster ADDRESS for more"
        )
