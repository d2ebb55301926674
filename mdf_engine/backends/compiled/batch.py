"""A compiled graph's batches (sweeps): ``steps`` updates from a cold start per parameter set.

:func:`run_cold` runs every parameter set in one jitted call (``run_batch`` of the generated
module, the rows spread over threads); a graph whose first steps the interpreted backend runs
(:mod:`.handover`) runs each set on an interpreter of its own for those steps and then the
compiled ``run_quiet`` from its handed-over state (:func:`run_handed_over`).

A batch the generated code stops with an exception of a model value (a kernel's index out of
range, Numba's own failure; a parallel batch's ``SystemError`` caused by one) is reported as
the interpreted backend reports it, naming the parameter set, the node and the field: the
interpreter runs the sets in order until one fails (:func:`_replayed_error`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import EVALUATION_ERRORS, MDFError, evaluation_failed
from .draws import stream_for
from .handback import REPLAY_UPDATES
from .handover import plan_with, write_schedule, write_state
from .layout import Layout
from .runtime import (
    BATCH_ARGS,
    ERR_WIDTH,
    RUN_ARGS,
    arguments,
    first_failure,
    initializer_args,
    record_buffer,
)


def run_cold(
    runner: Any,
    values: np.ndarray,
    steps: int,
    dt: float | None,
    initializer: Mapping[str, Any] | None,
    first_without_dt: bool,
    keep: int,
) -> np.ndarray:
    """Every row of ``values`` in one jitted call of the generated ``run_batch``: the values
    recorded at the last ``keep`` steps, ``(rows, keep, width)``."""
    cold = runner._cold
    width = runner._layout.record_width
    rec = record_buffer(values.shape[0], keep, width)
    err = np.zeros((values.shape[0], ERR_WIDTH), dtype=np.int64)
    args = {
        "nsteps": steps,
        "dt": 0.0 if dt is None else float(dt),
        "dt_given": dt is not None,
        "first_without_dt": first_without_dt,
        "S0": cold["S"],
        "A0": cold["A"],
        "thr0": cold["thr"],
        "PT": values,
        "REC": rec,
        "ERR": err,
        "rng": stream_for(runner.plan),
        "I": initializer_args(initializer),
    }
    try:
        runner.call_jitted(runner._batch_fn, *arguments(BATCH_ARGS, args))
    except (SystemError, *EVALUATION_ERRORS) as e:
        rows = range(values.shape[0])
        found = _replayed_error(e, runner, values, rows, steps, dt, initializer, first_without_dt)
        if found is None:
            raise
        raise found from None
    bad = first_failure(err)
    if bad is not None:
        runner.check_error(err[bad], f"parameter set {bad}: ")
    return rec[:, :, :width]


def run_handed_over(
    runner: Any,
    values: np.ndarray,
    steps: int,
    dt: float | None,
    initializer: Mapping[str, Any] | None,
    first_without_dt: bool,
    keep: int,
) -> np.ndarray:
    """``runner.run_batch`` of a graph handed over after its first steps: per parameter set,
    an interpreter of the plan with that set's values runs the first steps (its recorded
    values taken from it), then the compiled ``run_quiet`` the rest from its state."""
    from ...interpreter import InterpretedGraph

    layout, handover = runner._layout, runner.first_steps
    width = layout.record_width
    rec = record_buffer(values.shape[0], keep, width)
    inits = initializer_args(initializer)
    for b, row in enumerate(values):
        interp = InterpretedGraph(
            plan_with(runner.plan, runner.swept, row), check_finite=runner.check_finite
        )
        state = None
        k = 0
        while k < steps:
            if k == handover.steps:
                state = runner.cold_state()
                if write_state(state, layout, interp, runner.plan) is None:
                    break
                state = None  # (a value that does not fit: the interpreter runs the rest)
            inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
            try:
                interp.evaluate(time_increment=inc, initializer=initializer)
            except MDFError as e:
                raise MDFError(f"parameter set {b}: {e.message}", e.path) from None
            k += 1
            _record(rec[b], k - 1 - (steps - keep), layout, interp)
        if state is None:
            continue
        write_schedule(state, runner, interp)
        rest = steps - k
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        args = {
            **state,
            "nsteps": rest,
            "dt": 0.0 if dt is None else float(dt),
            "dt_given": dt is not None,
            "first_without_dt": False,
            "logbuf": np.zeros(1, dtype=np.int64),
            "logpos": np.zeros(2, dtype=np.int64),
            "err": err,
            "P": np.ascontiguousarray(row, dtype=np.float64),
            "rec": rec[b, keep - min(keep, rest) :],
            "rng": stream_for(runner.plan),
            "I": inits,
        }
        try:
            runner.call_jitted(runner._quiet_fn, *arguments(RUN_ARGS, args))
        except (SystemError, *EVALUATION_ERRORS) as e:
            rows = (b,)
            found = _replayed_error(
                e, runner, values, rows, steps, dt, initializer, first_without_dt
            )
            if found is None:
                raise
            raise found from None
        runner.check_error(err, f"parameter set {b}: ")
    return rec[:, :, :width]


def _replayed_error(
    e: BaseException,
    runner: Any,
    values: np.ndarray,
    rows: Any,
    steps: int,
    dt: float | None,
    initializer: Mapping[str, Any] | None,
    first_without_dt: bool,
) -> MDFError | None:
    """The MDFError for ``e``, which a batch's generated code raised: None when ``e`` is an
    MDFError (the code's own checks) or not a model value's failure; else the first error
    the interpreted backend meets running the parameter sets ``rows`` of ``values`` in order
    (prefixed with the set), or, when it meets none or the sets are more than
    ``REPLAY_UPDATES`` updates, the cause naming the graph."""
    cause = e.__cause__ if isinstance(e, SystemError) else e
    if isinstance(cause, MDFError) or not isinstance(cause, EVALUATION_ERRORS):
        return None
    from ...interpreter import InterpretedGraph

    if len(rows) * steps <= REPLAY_UPDATES:
        for b in rows:
            plan = plan_with(runner.plan, runner.swept, values[b])
            interp = InterpretedGraph(plan, check_finite=runner.check_finite)
            for k in range(steps):
                inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
                try:
                    interp.evaluate(time_increment=inc, initializer=initializer)
                except MDFError as found:
                    return MDFError(f"parameter set {b}: {found.message}", found.path)
    return evaluation_failed(cause, runner.plan.where)


def _record(rec: np.ndarray, row: int, layout: Layout, interp: Any) -> None:
    """Write the recorded values ``interp`` holds into ``rec[row]`` (nothing when the row is
    before the kept steps)."""
    if row < 0:
        return
    for nid, name, col, shape in layout.record_columns:
        value = np.asarray(interp.value(nid, name), dtype=np.float64)
        size = int(np.prod(shape))
        if value.size != size:
            raise MDFError(
                f"record '{nid}.{name}': its shape {value.shape} in the first steps is not "
                f"{tuple(shape)}, as later"
            )
        rec[row, col : col + size] = value.reshape(-1)
