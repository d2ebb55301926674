"""The compiled runner's short path for a repeated ``evaluate()`` (issue 22, goal 5).

One inference of a small CNN is ~60 us of machine code; spelling the generated function's
arguments from dicts, checking the initializer's keys, allocating the ``err`` row, naming
the fixed schedule's time steps and looking a value's slot up cost ~15 us of Python more per
``evaluate`` + ``value``. :class:`QuickEvaluate` keeps, after a first plain evaluate(), the
argument list of that call (one update, no time increment) and replays it with the new
initializer arrays put in place, as long as nothing it was made from changed: the same
compiled state, function and log arrays, no tier 0, no hand-over, and an initializer with the
same keys whose arrays the generated code takes as they are (C-contiguous, in a slot dtype;
anything else goes the general way, which converts it or raises). The generated code, its
errors and the values it leaves are those of the general path.

The call goes to the machine code Numba compiled for exactly these argument types (its
overload's entry point), skipping the dispatcher's typing of 47 arguments at every call
(~2 us of a ~75 us inference): every argument but the initializer's arrays is the very
object the general call passed, and an initializer array is replayed only when its dtype,
number of axes, C order, writeability and alignment (what Numba types it by) are those of
that call's array.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import EVALUATION_ERRORS
from .handback import hand_back, hand_back_failure
from .runtime import ERR_WIDTH, PythonCallFailed, kept_dtype


class QuickEvaluate:
    """A replayable one-update call of a compiled graph's generated function.

    ``args`` is the argument list of a plain evaluate() (``nsteps`` 1, no time increment),
    ``at_err`` where its ``err`` row sits and ``at_init`` where the initializer's values
    start; ``keys`` are the initializer keys, sorted as the generated code takes them."""

    def __init__(self, state: dict, fn: Any, args: list, at_err: int, keys: tuple, static: bool):
        self.state = state
        self.fn = fn
        self.args = args
        self.at_err = at_err
        self.at_init = len(args) - len(keys)
        self.keys = keys
        self.static = static
        self.err = np.zeros(ERR_WIDTH, dtype=np.int64)
        args[at_err] = self.err
        self.kinds = [_kind(v) for v in args[self.at_init :]]
        if None in self.kinds:  # (the first call's array was converted: never replayed)
            self.keys = (None,) * len(keys)
        self.entry = _entry_point(fn, args)
        self.clock = state["clock"]
        self._steps: list[frozenset[str]] | None = None
        #: the ``(time steps, times)`` of every replayed update, when they never change (a
        #: fixed schedule's one update, no absolute clock): :func:`evaluate_again`
        self.pair: tuple[list[frozenset[str]], list[float]] | None = None

    def one_update(self, log: Any) -> list[frozenset[str]] | None:
        """The time steps of the last evaluate() when it was one update of a fixed schedule
        (named once: frozen sets, shared by every call), else None."""
        if log.static is None or log.static_updates - log.mark[1] != 1:
            return None
        if self._steps is None:
            mark = (log.mark[0], log.static_updates - 1)
            self._steps = [frozenset(m) for m in log.steps_since(mark)]
        return list(self._steps)

    def fits(self, graph: Any, initializer: Mapping[str, Any] | None) -> bool:
        """Whether ``graph`` (a :class:`.graph.CompiledGraph`) can replay this call with
        ``initializer`` now (its arrays then put in place)."""
        return (
            self.state is graph._state
            and graph.tier0 is None
            and graph.handover is None
            and self.inits(initializer)
        )

    def inits(self, initializer: Mapping[str, Any] | None) -> bool:
        """Put ``initializer``'s arrays into the argument list; False when it does not have
        this call's keys or an array is not taken as it is (the general path handles it)."""
        keys = self.keys
        if not initializer:
            return not keys
        if len(initializer) != len(keys):
            return False
        args, k, kinds = self.args, self.at_init, self.kinds
        for key in keys:
            v = initializer.get(key, None)
            if type(v) is not np.ndarray:
                return False
            dtype, ndim, _, writeable, aligned = kinds[k - self.at_init]
            f = v.flags  # (what _kind compares, without a tuple made per call)
            if not (
                f.c_contiguous
                and v.ndim == ndim
                and v.dtype == dtype
                and f.writeable == writeable
                and f.aligned == aligned
            ):
                return False
            args[k] = v
            k += 1
        return True

    def run(self, call: Callable[..., Any], log: Any, direct: bool = False) -> np.ndarray | None:
        """One update through ``call(fn, *args)`` (``direct``: the machine code called
        itself, its errors mapped by ``call`` only when it raises); the ``err`` row if the
        code set it (a copy: this object's row is cleared for the next call), else None."""
        updates = int(self.clock[2])
        log.mark = (int(log.pos[0]), log.static_updates)
        if not direct:
            call(self.entry, *self.args)
        else:
            try:
                self.entry(*self.args)
            except (ValueError, IndexError, SystemError):  # (mapped as call_checked does)
                call(_reraise, sys.exc_info()[1])
        if self.static:
            log.static_updates += int(self.clock[2]) - updates
        err = self.err
        if err[0] != 0:
            out = err.copy()
            err[:] = 0
            return out
        return None


def evaluate_again(graph: Any, initializer: Mapping[str, Any] | None) -> tuple | None:
    """A repeated ``evaluate()`` without a time increment replayed on ``graph`` (a
    :class:`.graph.CompiledGraph`) when its :class:`QuickEvaluate` fits: the ``(time steps,
    times)`` of the update (``last_update_steps``), or None when nothing was run (or a stop
    handed the graph back to the interpreter), and the general path must run the call."""
    q = graph._quick
    if q is None or not q.fits(graph, initializer):
        return None
    try:  # (errors as run_steps gives them after a first call)
        graph._raise_error(q.run(graph.call_jitted, graph.log, not graph.blas_macs))
    except PythonCallFailed as e:  # (the interpreter runs it: handback.py)
        hand_back(graph, e)
        graph._give_up(str(e))
        return None
    except EVALUATION_ERRORS as e:  # (the interpreter names the node: handback.py)
        hand_back_failure(graph, e)
        graph._give_up(f"{type(e).__name__}: {e}", quiet=True)
        return None
    graph.history.add(1, None, initializer, True)
    pair = q.pair
    if pair is None:
        pair = graph.last_update_steps()
        if q._steps is not None and not graph.absolute_clock().enabled:
            q.pair = pair  # (the same frozen sets and zero times at every call)
    return pair


def _reraise(error: BaseException) -> None:
    """Raise ``error`` again (inside ``call``, which maps it as generated code's own)."""
    raise error


def _kind(v: Any) -> tuple | None:
    """What Numba types an initializer array by, when the generated code takes it as it is
    (C-contiguous, in a slot dtype; else None: never replayed)."""
    if type(v) is not np.ndarray or not v.ndim or not kept_dtype(v):
        return None
    f = v.flags
    return (v.dtype, v.ndim, f.c_contiguous, f.writeable, f.aligned) if f.c_contiguous else None


def _entry_point(fn: Any, args: list) -> Any:
    """The machine code ``fn`` (a Numba dispatcher) has for exactly ``args``' types, called
    without the dispatcher's typing; ``fn`` itself when there is none."""
    overloads = getattr(fn, "overloads", None)
    if overloads is None or not hasattr(fn, "typeof_pyval"):
        return fn
    compiled = overloads.get(tuple(fn.typeof_pyval(a) for a in args))
    return getattr(compiled, "entry_point", None) or fn


def quick_from(
    state: dict, fn: Any, args: list, at_err: int, keys: tuple, static: bool
) -> QuickEvaluate:
    """A :class:`QuickEvaluate` over a copy of ``args`` (the list of a general call)."""
    return QuickEvaluate(state, fn, list(args), at_err, keys, static)
