"""Handing a graph back from its compiled loop to the interpreted backend when a run stops
because the compiled code cannot hold a value as the interpreter does (docs/compiled.md,
"When a later run cannot go on compiled").

Such a stop (a :class:`~.runtime.PythonCallFailed`: an integer beyond 2**53 held as a float,
an integer ``//``/``%`` by zero inside an expression, an integer slot given a fraction, a value
of another shape than its slot, a function called through Python returning another kind) comes
in the middle of an update, with the compiled state partly written, so that state cannot be
handed over. The interpreted backend's state is rebuilt instead: it is the state the
interpreter had when the compiled loop took over (a graph that had not run, or the one handed
over after its first steps, :mod:`.handover`), moved on by the same calls the compiled loop
has run since. :class:`History` keeps those calls (run-length coded, initializer values
copied); :func:`hand_back` replays them on the interpreter, which then runs the stopped call
and every later one. Every value the compiled loop gave was the interpreter's (exact, or
refused), so the replayed state is the one the interpreter would hold.

A run that fails on a model value (a kernel's index out of range, Numba's own failure on a
broadcast: an exception that is not an MDFError, :func:`hand_back_failure`) is handed back the
same way: the interpreter meets the failure itself and reports it as on a first run, naming the
node and the field rather than the graph.

A replay is refused, with a one-line MDFError naming the field, the cause and
``backend='interpreted'``, when the history is too long (:data:`REPLAY_UPDATES` updates, or
:data:`REPLAY_NUMBERS` numbers of initializer values kept) or the graph draws random numbers
(the interpreter's stream has moved on; its draws would differ).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import MDFError, evaluation_failed
from .draws import stream_for

log = logging.getLogger("mdf_engine")

#: Most updates a hand-back replays on the interpreted backend (a few seconds to a minute)
REPLAY_UPDATES = 100_000
#: Most numbers of initializer values the history keeps (copies, 8 MB)
REPLAY_NUMBERS = 1_000_000


class History:
    """The calls the compiled loop has run since the interpreter last held the graph's
    state: ``(repeats, steps, dt, initializer, first_without_dt)`` entries, a call equal to
    the one before (no initializer) counted in its entry. ``lost`` says why the calls are not
    kept (too many), else None."""

    __slots__ = ("calls", "updates", "numbers", "lost")

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []
        self.updates = 0
        self.numbers = 0
        self.lost: str | None = None

    def clear(self) -> None:
        """The interpreter holds the state now (a graph that has not run, or handed over)."""
        self.calls, self.updates, self.numbers, self.lost = [], 0, 0, None

    def add(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool,
    ) -> None:
        """Keep a call the compiled loop completed."""
        if self.lost is not None:
            return
        self.updates += steps
        if self.updates > REPLAY_UPDATES:
            self._lose(f"it has run more than {REPLAY_UPDATES} updates compiled")
            return
        if initializer:
            same = self.calls and _repeats(self.calls[-1], steps, dt, initializer, first_without_dt)
            # (the same arrays, bit for bit: counted as a copy would be, none kept)
            kept = (
                self.calls[-1][3]
                if same
                else {k: np.array(v, copy=True) for k, v in initializer.items()}
            )
            self.numbers += sum(v.size for v in kept.values())
            if self.numbers > REPLAY_NUMBERS:
                self._lose(f"its initializer values exceed {REPLAY_NUMBERS} numbers")
                return
            if same:
                self.calls[-1][0] += 1
            else:
                self.calls.append([1, steps, dt, kept, first_without_dt])
            return
        calls = self.calls
        if calls:  # (a loop of equal calls: one entry, counted; no list made per call)
            last = calls[-1]
            if (
                last[1] == steps
                and last[2] == dt
                and last[3] is None
                and last[4] == first_without_dt
            ):
                last[0] += 1
                return
        calls.append([1, steps, dt, None, first_without_dt])

    def _lose(self, why: str) -> None:
        self.calls, self.lost = [], why


def _repeats(last: list, steps: int, dt: Any, initializer: Mapping[str, Any], first: bool) -> bool:
    """Whether a call equals the kept call ``last``: its numeric arrays equal bit for bit
    (a copy costs a page fault per 4 KB of new memory: 13 us a call for a 32x32 image). Such
    a call counts towards :data:`REPLAY_NUMBERS` as a copy would, so the history is kept as
    long as before (and then costs nothing more per call)."""
    kept = last[3]
    if (
        kept is None
        or last[1:3] != [steps, dt]
        or last[4] != first
        or kept.keys() != initializer.keys()
    ):
        return False
    for k, v in initializer.items():
        w = kept[k]
        if type(v) is not np.ndarray or v.dtype.kind not in "biufc" or v.dtype != w.dtype:
            return False
        if v.shape != w.shape or v.tobytes() != w.tobytes():
            return False
    return True


def hand_back(graph: Any, error: MDFError) -> None:
    """Replay ``graph``'s :class:`History` on its interpreted backend (``graph.interp``) after
    ``error`` stopped a compiled run, so that the interpreter runs the stopped call from the
    state before it; a one-line MDFError when that cannot be done."""
    history: History = graph.history
    why = history.lost
    if why is None and history.calls and stream_for(graph.plan) is not None:
        why = "it draws random numbers, which the interpreted backend would draw anew"
    if why is not None:
        raise MDFError(
            f"{error.message}; the compiled run stopped and cannot be handed to the "
            f"interpreted backend, since {why}: run the model with backend='interpreted'",
            error.path,
            error.source,
        ) from None
    interp = graph.interp
    for repeats, steps, dt, initializer, first_without_dt in history.calls:
        for _ in range(repeats):
            for k in range(steps):
                inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
                interp.evaluate(time_increment=inc, initializer=initializer)
    if history.updates:
        log.info(
            "compiled backend: the interpreted backend replayed the %d updates the compiled "
            "loop had run, and runs the graph from here",
            history.updates,
        )
    history.clear()


def hand_back_failure(graph: Any, e: BaseException) -> None:
    """After a compiled run of ``graph`` raised ``e`` (one of ``errors.EVALUATION_ERRORS``):
    re-raise an MDFError (the generated code's own checks name their field); else replay the
    :class:`History`, so that the interpreter runs the failing call and reports the failure
    naming the node and the field, as a first run does. Where the replay is refused, the
    MDFError names the graph."""
    if isinstance(e, MDFError):
        raise e from None
    hand_back(graph, evaluation_failed(e, graph.plan.where))
