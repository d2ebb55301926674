"""When tier 0 runs a compiled graph, and how it runs one call of ``run`` on the state.

Policy (see docs/compiled.md, "Tier 0"): a graph whose generated ``run`` has no machine code
yet (none in this process, none in Numba's cache) starts on tier 0 instead of compiling it,
if its program translates. Each call of ``run`` (``n`` updates) then goes to

* tier 0 while the updates run on it, this call's included, stay within
  :data:`TIER0_UPDATES` and the program's length times those updates within
  :data:`TIER0_WORK`: on the Python machine (:mod:`.pyvm`: no Numba function loaded) while
  the instructions it has executed and is predicted to execute in this call stay within
  :data:`PYTHON_WORK` (the prediction: ``n`` times its instructions per update so far, or
  the program's length before its first call), else on the Numba machine (:mod:`.machine`,
  loaded from Numba's cache once: ~0.5 s, Numba's own start in a process);
* else the generated code, compiled now: it carries on from the same state (tier 0 works on
  the compiled state's own arrays), and tier 0 is done for this graph.

The choice depends on the call sequence only (never on a clock), so a run repeats itself bit
for bit. ``MDF_ENGINE_TIER0=0`` switches tier 0 off (the generated code is compiled at once).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MDFError
from ..compiled.runtime import RUN_ARGS, parameters

if TYPE_CHECKING:  # (a cached start imports no more of tier 0 than this module)
    from .translate import Program

log = logging.getLogger("mdf_engine")

#: instructions the Python machine executes at most for one graph (~0.2-0.4 s; a call per
#: instruction is 1-3 us there, against a few nanoseconds on the Numba machine)
PYTHON_WORK = 100_000
#: updates a graph runs on tier 0 at most (in all its calls) before its code is compiled
TIER0_UPDATES = 1000
#: program rows times updates run on tier 0 at most (a big graph compiles sooner)
TIER0_WORK = 2_000_000


def enabled() -> bool:
    """Tier 0 is on unless ``MDF_ENGINE_TIER0=0``."""
    return os.environ.get("MDF_ENGINE_TIER0", "1") not in ("0", "")


def forced() -> bool:
    """``MDF_ENGINE_TIER0=always``: tier 0 even when the generated code has machine code
    (tests and benchmarks of tier 0 itself)."""
    return os.environ.get("MDF_ENGINE_TIER0", "") == "always"


def has_machine_code(fn: Any) -> bool:
    """Whether the jitted ``fn`` has machine code already: compiled in this process, or an
    entry in Numba's cache (its index file exists)."""
    if getattr(fn, "overloads", None):
        return True
    cache = getattr(fn, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return bool(index) and os.path.exists(index)


def start(graph: Any, inits: list[Any]) -> Tier0 | None:
    """Tier 0 for a compiled ``graph`` (a ``CompiledGraph`` whose generated module is loaded
    and state set), or None when it does not apply: switched off, a batch (recorded values),
    the generated ``run`` already has machine code (unless forced), or it does not translate
    (a log line says why)."""
    logged = graph.schedule_log > 0 and graph._layout.static is None
    fn = graph._fn if logged else graph._quiet_fn
    if graph.recorded or not enabled() or (has_machine_code(fn) and not forced()):
        return None
    module = sys.modules.get(fn.__module__)
    return Tier0.make(module, graph.compiled_state, inits, graph.sweep_values)


class Tier0:
    """A graph's tier 0 program and what it has run (see the module docstring)."""

    def __init__(self, program: Program):
        self.program = program
        self.updates = 0
        self._rows: list[list[int]] | None = None  # the program's rows, for the Python machine
        #: instructions the Python machine executed (in ``python_updates`` updates)
        self.executed = 0
        self.python_updates = 0
        self.active = True
        #: no limit: the generated code did not compile
        self.unlimited = False

    @classmethod
    def make(
        cls, module: Any, state: Mapping[str, Any], inits: list[Any], sweep: np.ndarray
    ) -> Tier0 | None:
        """Tier 0 for the generated ``module`` over the compiled ``state``, or None (with a
        log line saying why) when its ``run`` does not translate."""
        from .expressions import NotTier0

        dtypes = [np.asarray(a).dtype for a in [*state["A"], *inits]]
        odd = [d for d in dtypes if d not in (np.float64, np.int64)]
        if odd:  # (tier 0 computes in float64; the generated code keeps float32 float32)
            log.info("compiled backend: tier 0 cannot run a graph of %s values", odd[0])
            return None
        names = parameters(RUN_ARGS, len(state["A"]), len(inits))
        values = _values(state, inits, sweep, np.zeros((0, 0)), 0, 0.0, False, False)
        shapes = {k: np.shape(v) for k, v in zip(names, values)}
        try:
            from .translate import Translator

            program = Translator(module, shapes).program()
        except NotTier0 as e:
            log.info("compiled backend: tier 0 cannot run this graph (%s); compiling it", e)
            return None
        return cls(program)

    def takes(self, n: int) -> bool:
        """Whether tier 0 runs a call of ``n`` updates (once it declines, it is done)."""
        if self.unlimited:
            return True
        total = self.updates + n
        rows = self.program.code.shape[0]
        self.active = self.active and total <= TIER0_UPDATES and rows * total <= TIER0_WORK
        return self.active

    def _python(self, n: int) -> bool:
        """Whether the call goes to the Python machine (see the module docstring)."""
        rows = self.program.code.shape[0]
        per_update = self.executed / self.python_updates if self.python_updates else rows
        return self.executed + n * per_update <= PYTHON_WORK

    def for_good(self) -> Tier0:
        """This tier 0, running every later update too (the generated code failed)."""
        self.unlimited = True
        return self

    def call(self, graph: Any, fn: Any, values: Mapping[str, Any], n: int) -> Tier0 | None:
        """One call of the generated ``fn`` (``values``: its arguments by name) of ``graph``:
        on tier 0 if it takes ``n`` updates, else ``fn`` itself (compiled now). Returns the
        tier 0 that runs later calls (None: the generated code does from now on)."""
        n_arrays, n_inits = len(values["A"]), len(values["I"])
        if self.takes(n):
            if self.run(values, n_arrays, n_inits):
                return self
            # an integer tier 0 cannot hold exactly (beyond 2**53): the state is untouched,
            # and the generated code (int64) runs this call and every later one
            log.info(
                "compiled backend: an integer value beyond 2**53 (tier 0 computes in "
                "float64); compiling the graph"
            )
            self.active = False
        try:
            graph.call_jitted(fn, *_spread(values))
        except Exception as e:
            from ..compiled.build import from_numba, numba_failure

            if not from_numba(e):
                raise
            # the generated code does not compile: tier 0 runs the graph from now on
            log.warning("compiled backend: %s; tier 0 runs the graph", numba_failure(e))
            if not self.for_good().run(values, n_arrays, n_inits):
                raise MDFError(
                    "the compiled backend's generated code does not compile and its tier 0 "
                    "computes in float64, which cannot hold an integer value beyond 2**53: "
                    "use backend='interpreted'"
                ) from None
            return self
        return None

    def run(self, values: Mapping[str, Any], n_arrays: int, n_inits: int) -> bool:
        """One call of ``run`` (``values``: its arguments by name, as the runner passes them
        to the generated function; the state arrays among them are updated in place). False,
        with the state untouched, when an integer value read or computed is not exact in
        float64 (beyond 2**53, or not whole): the generated code (int64) must run the call."""
        prog = self.program
        H = prog.heap.copy()
        names = parameters(RUN_ARGS, n_arrays, n_inits)
        flat = _spread(values)
        for name, value in zip(names, flat):
            if name in ("logbuf", "rng"):  # (rng: a graph that draws is not on tier 0)
                continue
            off, shape = prog.args[name]
            n = int(np.prod(shape)) if shape else 1
            if np.asarray(value).dtype == np.int64 and not _exact(value):
                return False
            H[off : off + n] = np.asarray(value, dtype=np.float64).reshape(-1)
        S_off = prog.args["S"][0]
        ints = values["S"].view(np.int64)[list(prog.int_slots)]
        if not _exact(ints):
            return False
        for k in prog.int_slots:  # (integer slots hold int64 bits in the float64 table)
            H[S_off + k] = float(values["S"].view(np.int64)[k])
        n = int(values["nsteps"])
        if not self._python(n):
            from .machine import execute  # (loads it from Numba's cache)

            execute(prog.code, H, values["logbuf"], prog.meta)
        else:
            from .pyvm import execute as execute_python

            if self._rows is None:
                self._rows = prog.code.tolist()
            self.executed += execute_python(self._rows, H, values["logbuf"], prog.meta)
            self.python_updates += n
        back = []
        for name, value in zip(names, flat):
            if (
                isinstance(value, np.ndarray)
                and value.flags.writeable  # (not a held constant)
                and name not in ("logbuf", "P", "rec")
                and (not name.startswith("I"))
            ):
                off, shape = prog.args[name]
                part = H[off : off + value.size].reshape(value.shape)
                if value.dtype == np.int64 and not _exact(part):
                    return False
                back.append((value, part))
        if not _exact(H[[S_off + k for k in prog.int_slots]]):
            return False
        for value, part in back:  # (every value checked first: all or nothing is written)
            value[...] = part != 0.0 if value.dtype == np.bool_ else part
        for k in prog.int_slots:
            values["S"].view(np.int64)[k] = int(H[S_off + k])
        self.updates += n
        return True


def _exact(part: Any) -> bool:
    """Whether integers (int64, or computed in float64) are exact in float64: whole and below
    2**53. Beyond that tier 0 could be wrong where the generated code (int64) is not."""
    part = np.asarray(part)
    if part.dtype == np.int64:
        return bool(np.all((part < 2**53) & (part > -(2**53))))
    return bool(np.all((part == np.trunc(part)) & (np.abs(part) < 2.0**53)))


def _spread(values: Mapping[str, Any]) -> list[Any]:
    from ..compiled.runtime import arguments

    return arguments(RUN_ARGS, values)


def _values(
    state: Mapping[str, Any],
    inits: list[Any],
    sweep: np.ndarray,
    rec: np.ndarray,
    n: int,
    dt: float,
    dt_given: bool,
    first_without_dt: bool,
) -> list[Any]:
    """The arguments of ``run`` in order (for their shapes)."""
    from ..compiled.runtime import ERR_WIDTH, arguments

    values = {
        **state,
        "nsteps": n,
        "dt": dt,
        "dt_given": dt_given,
        "first_without_dt": first_without_dt,
        "logbuf": np.zeros(1, dtype=np.int64),
        "logpos": np.zeros(2, dtype=np.int64),
        "err": np.zeros(ERR_WIDTH, dtype=np.int64),
        "P": sweep,
        "rec": rec,
        "rng": None,
        "I": inits,
    }
    return arguments(RUN_ARGS, values)
