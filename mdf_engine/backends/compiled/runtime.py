"""What the compiled backend's generated code imports, and what it is called with.

A generated module calls registered kernels through :func:`_jit` (a Numba kernel) and
:func:`_python_kernel` (a kernel without one, called from Numba's object mode); the Numba
helpers of its arithmetic live in :mod:`.helpers`. The ``err`` row every generated function
writes is :data:`ERR_WIDTH` long; the initializer's values are passed to it by
:func:`initializer_args`.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import MDFError, NotCompilable
from ...registry import REGISTRY
from .helpers import index_error
from .intdiv import BEYOND_53, INT_BY_ZERO
from .layout import SLOT_DTYPES, Storage, array_dtype, kind_of, scalar_dtype

#: Passes of the scheduler's loop after which one update is reported as never ending.
MAX_PASSES_PER_UPDATE = 10_000_000
#: Length of a compiled run's ``err`` row: ``err[0]`` says what stopped it (-2: an update that
#: never ended; -5: integer overflow, -4: int() beyond 64 bits or of NaN, -6: a non-integer
#: for a value that was an integer in the warm-up, -7: an integer beyond 2**53 held as a float,
#: -8: an integer ``//``/``%``/``**`` whose answer is a float there (intdiv.py), with field and step
#: in ``err[1:3]``; -3: an index out of bounds, with field, step, index, size and axis in
#: ``err[1:6]``; > 0: a NaN/inf under check_finite, with node, step and value in ``err[1:4]``)
ERR_WIDTH = 8


#: The arguments of a generated ``run`` (and ``run_quiet``), in order: the step count and time
#: increment, the state (the scalar table ``S``, every array slot, the scheduler's counters and
#: clock, which nodes ran, the Threshold values), the schedule log, the ``err`` row, the swept
#: parameters ``P``, the recorded values ``rec``, the random stream ``rng`` (``draws.py``: None
#: for a graph that draws nothing) and the initializer's values. ``A`` stands for
#: every array slot (``a0, a1, ...``) and ``I`` for every initializer value (``I0, ...``, sorted
#: by key); see :func:`parameters` and :func:`arguments`.
RUN_ARGS = (
    "nsteps",
    "dt",
    "dt_given",
    "first_without_dt",
    "S",
    "A",
    "useable",
    "total",
    "clock",
    "last_set",
    "ever",
    "thr",
    "logbuf",
    "logpos",
    "err",
    "P",
    "rec",
    "rng",
    "I",
)
#: The arguments of ``run_batch``: the cold state (``S0``, the arrays ``A0`` = ``a0_0, ...``,
#: ``thr0``), the parameter table ``PT`` (a row per run), the recorded values ``REC`` and the
#: ``err`` rows ``ERR`` of every run.
BATCH_ARGS = (
    "nsteps",
    "dt",
    "dt_given",
    "first_without_dt",
    "S0",
    "A0",
    "thr0",
    "PT",
    "REC",
    "ERR",
    "rng",
    "I",
)
#: The arguments of a node-by-node module's ``node_<i>`` (``q_c2``: the update count).
NODE_ARGS = ("dt", "has_dt", "S", "A", "ever", "err", "P", "q_c2")
#: The arguments of a node-by-node module's ``inputs`` (which delivers the initializer).
INPUTS_ARGS = ("S", "A", "I")
#: How a group argument is spelled, item ``k``
_GROUPS = {"A": "a{k}", "A0": "a{k}_0", "I": "I{k}"}


def parameters(
    args: tuple[str, ...], n_arrays: int, n_inits: int, rename: Mapping[str, str] | None = None
) -> list[str]:
    """The names a generated function taking ``args`` spells (``rename``: another spelling
    for some arguments, such as ``PT[b]`` for ``P`` in a call)."""
    out: list[str] = []
    for a in args:
        if a in _GROUPS:
            n = n_inits if a == "I" else n_arrays
            out += [_GROUPS[a].format(k=k) for k in range(n)]
        else:
            out.append((rename or {}).get(a, a))
    return out


def arguments(args: tuple[str, ...], values: Mapping[str, Any]) -> list[Any]:
    """The values to call a generated function taking ``args`` with: ``values[name]`` for each
    argument, the lists ``values["A"]`` (or ``"A0"``) and ``values["I"]`` spread."""
    out: list[Any] = []
    for a in args:
        if a in _GROUPS:
            out += list(values[a])
        else:
            out.append(values[a])
    return out


class RunCall:
    """The argument list of a generated ``run``/``run_quiet`` call (:data:`RUN_ARGS`), built
    once per state, function and log arrays and then reused with the per-call values (step
    count, time increment, ``err`` row, initializer) put in place: spelling 70 arguments from
    a dict at every call cost a one-inference CNN (issue 22, goal 5) ~10 us. A call that does
    not write the log gets this object's own dummy log arrays."""

    _PER_CALL = ("nsteps", "dt", "dt_given", "first_without_dt", "err", "rng")

    def __init__(self) -> None:
        self._key: tuple = ()
        self._args: list[Any] = []
        self._at: list[int] = []
        self._i0 = 0
        self.at_err = 0  # (where the ``err`` row sits in the list)
        self.no_logbuf = np.zeros(1, dtype=np.int64)
        self.no_logpos = np.zeros(2, dtype=np.int64)

    def args(self, fn: Any, st: Mapping[str, Any], fixed: Mapping[str, Any], call: dict) -> list:
        """The arguments of ``fn`` over the state ``st``, the values ``fixed`` that stay
        (log arrays, ``P``, ``rec``) and this call's values ``call`` (:data:`_PER_CALL` and
        ``I``); the cached list is rebuilt when any object of the key changes."""
        key = (fn, st, *fixed.values())
        if len(key) != len(self._key) or not all(map(operator.is_, key, self._key)):
            marks = {name: object() for name in self._PER_CALL}
            base = arguments(RUN_ARGS, {**st, **fixed, **marks, "I": []})
            where = {id(a): k for k, a in enumerate(base)}
            self._at = [where[id(marks[name])] for name in self._PER_CALL]
            self.at_err = self._at[self._PER_CALL.index("err")]
            self._i0 = len(base)  # ("I" is the last argument)
            self._args, self._key = base, key
        out = self._args.copy()
        for pos, name in zip(self._at, self._PER_CALL):
            out[pos] = call[name]
        out += call["I"]
        return out


def init_key(initializer: Mapping[str, Any] | None) -> tuple:
    """The initializer's keys, sorted: the compiled code delivers exactly these."""
    return tuple(sorted(initializer)) if initializer else ()


#: The dtypes an initializer array is passed in as it is (see :func:`initializer_args`).
_KEPT = frozenset(np.dtype(n) for n in SLOT_DTYPES)


def kept_dtype(v: np.ndarray) -> bool:
    """Whether the generated code takes an initializer array of ``v``'s dtype as it is."""
    return v.dtype in _KEPT


def initializer_args(initializer: Mapping[str, Any] | None) -> list[Any]:
    """The initializer's values as the generated function takes them (sorted by key)."""
    out = []
    for key in sorted(initializer or {}):
        v = initializer[key]
        if type(v) is np.ndarray and v.ndim and v.dtype in _KEPT and v.flags.c_contiguous:
            out.append(v)  # (what the general case below gives for it: v itself)
            continue
        kind, _ = kind_of(v, f"initializer '{key}'")
        a = np.asarray(v)
        if kind is Storage.SCALAR:  # (a number in its slot dtype: float64, int64 or bool)
            out.append(np.dtype(scalar_dtype(a)).type(a.item()))
        else:
            out.append(np.ascontiguousarray(a, dtype=array_dtype(a)))
    return out


def reported_error(
    err: np.ndarray,
    index_fields: list[str],
    finite_checks: list[tuple[str, str]],
    node_ids: list[str],
    where: str,
    prefix: str = "",
) -> MDFError | None:
    """The MDFError a compiled run's ``err`` row reports (see :data:`ERR_WIDTH`), or None:
    ``index_fields`` and ``finite_checks`` are the layout's, ``where`` the graph's field."""
    if err[0] == -5:
        k, step = int(err[1]), int(err[2])
        return MDFError(
            f"{prefix}integer overflow: a result beyond 64-bit integers at step {step}",
            index_fields[k],
        )
    if err[0] == -6:
        k, step = int(err[1]), int(err[2])
        return KindChanged(
            f"{prefix}a value that was an integer in the compiled backend's warm-up is not a "
            f"whole number at step {step} (use backend='interpreted')",
            index_fields[k],
        )
    if err[0] == BEYOND_53:
        k, step = int(err[1]), int(err[2])
        return KindChanged(
            f"{prefix}an integer beyond 2**53 at step {step}, which the compiled code holds or "
            "compares as a float64 here (rounded; the interpreted backend keeps it exact)",
            index_fields[k],
        )
    if err[0] == INT_BY_ZERO:
        k, step = int(err[1]), int(err[2])
        return KindChanged(
            f"{prefix}an integer //, % or ** whose answer is a float at step {step} (by zero, "
            "to a negative power or beyond 62 bits), where the compiled code holds an integer "
            "(the interpreted backend gives the float)",
            index_fields[k],
        )
    if err[0] == -4:
        k, step = int(err[1]), int(err[2])
        return MDFError(
            f"{prefix}int() of a value beyond 64-bit integers (or NaN) at step {step}",
            index_fields[k],
        )
    if err[0] == -3:
        k, step, i, n, axis = (int(x) for x in err[1:6])
        mapped = index_error(IndexError(k, axis, i, n, step), index_fields, prefix)
        return mapped or MDFError(f"{prefix}an index out of bounds at step {step}", where)
    if err[0] == -2:
        return MDFError(
            f"{prefix}no termination after {MAX_PASSES_PER_UPDATE} passes of one update", where
        )
    if err[0] > 0:
        node = node_ids[int(err[1])]
        kind, name = finite_checks[int(err[3])]
        return MDFError(
            f"{prefix}non-finite value in {kind} '{name}' at step {int(err[2])}",
            f"{where}.nodes.{node}",
        )
    return None


def first_failure(errs: np.ndarray) -> int | None:
    """The batch row whose ``err`` row is reported (of the first kind that occurred, in the
    order overflow, a kind that changed, int(), index, endless update, NaN/inf: the first
    such row), or None."""
    code = errs[:, 0]
    kinds = (-5, -6, BEYOND_53, INT_BY_ZERO, -4, -3, -2)
    for failed in (*(code == c for c in kinds), code > 0):
        bad = np.nonzero(failed)[0]
        if bad.size:
            return int(bad[0])
    return None


def _jit(name: str, since: int, namespace: str | None = None):
    """The Numba kernel of a registered function version (name, since and origin)."""
    for sch in REGISTRY.versions(name):
        if (
            sch.since == since
            and sch.jit is not None
            and (namespace is None or sch.namespace == namespace)
        ):
            return sch.jit
    raise NotCompilable(f"function '{name}' has no Numba kernel")


def _schema(name: str, since: int, namespace: str):
    """The registered version ``since`` of ``name`` in ``namespace``."""
    for sch in REGISTRY.versions(name):
        if sch.since == since and sch.namespace == namespace:
            return sch
    raise NotCompilable(f"function '{name}' (since {since}) is not registered")


class PythonCallFailed(MDFError):
    """A function called through Python from the compiled loop failed there, or returned
    another kind of value than in the warm-up."""


class KindChanged(PythonCallFailed):
    """A value that was an integer in the warm-up is not a whole number later (err -6): the
    warm-up's first update has no time step, so ``time: 0`` and what reads it were integers.
    On a graph's first run nothing has been seen yet and the run restarts interpreted."""


def _python_kernel(
    name: str,
    since: int,
    namespace: str,
    kinds: tuple[tuple[tuple[int, ...] | None, str], ...],
    many: int | None = None,
    stacked: bool = False,
    wanted: int | None = None,
):
    """A registered function's Python kernel as the compiled loop calls it (object mode):
    positional inputs then attributes in schema order in, values of the kinds the warm-up saw
    out. ``kinds`` holds a (shape, dtype name) per value (shape None: a float): with ``many``
    None the first output, else the first ``many`` outputs as a tuple, or (``stacked``) stacked
    into one array of the one kind; ``wanted``: the outputs the model uses (the call's
    ``outputs_wanted``, as the interpreter passes it)."""
    sch = _schema(name, since, namespace)
    n_attrs = len(sch.attributes)

    def fail(why: str) -> PythonCallFailed:
        return PythonCallFailed(f"{name} {why}; use backend='interpreted'")

    def checked(value: Any, shape: tuple[int, ...] | None, dtype: str) -> Any:
        given = np.asarray(value)
        if np.dtype(dtype).kind in "biu" and not np.can_cast(given.dtype, dtype, "same_kind"):
            raise fail(f"returned {given.dtype} where the compiled backend's warm-up gave {dtype}")
        value = given.astype(dtype, copy=False)
        if shape is None:
            if value.size != 1:
                raise fail(
                    f"returned shape {value.shape} where the compiled backend expects a number"
                )
            item = value.reshape(-1)[0]
            return item.item() if value.dtype.kind in "biu" else float(item)
        if value.shape != shape:
            raise fail(
                f"returned shape {value.shape}, not {shape} as in the compiled backend's warm-up"
            )
        return np.ascontiguousarray(value)

    def call(*args: Any) -> Any:
        cut = len(args) - n_attrs
        attrs = dict(zip(sch.attributes, args[cut:]))
        try:
            outs = sch.call(list(args[:cut]), attrs, wanted)
        except Exception as e:  # noqa: BLE001 - e.g. an attribute it cannot take as a float
            raise fail(f"failed in the compiled backend ({type(e).__name__}: {e})") from e
        if stacked:
            shape, dtype = kinds[0]
            return checked(np.stack([np.asarray(o) for o in outs[: shape[0]]]), shape, dtype)
        if many is None:
            return checked(outs[0], *kinds[0])
        if len(outs) < many:
            raise fail(f"returned {len(outs)} outputs, not {many}")
        return tuple(checked(o, *k) for o, k in zip(outs, kinds))

    return call


def warn_python_calls(names: list[str]) -> None:
    """Log the functions without a Numba kernel that a graph's compiled code calls."""
    if names:
        logging.getLogger("mdf_engine").warning(
            "compiled backend: %s %s no Numba kernel; the compiled code calls %s through Python",
            ", ".join(names),
            "has" if len(names) == 1 else "have",
            "it" if len(names) == 1 else "them",
        )


def call_checked(fn: Callable[..., Any], args: tuple, index_fields: Any, blas_macs: int = 0) -> Any:
    """Call generated code; a failed bounds check is an MDFError naming the field
    (``index_fields``: the layout's fields of the bounds-checked subscripts). ``blas_macs``:
    the largest BLAS product of the graph's warm-up (``Built.blas_macs``); the call runs under
    the BLAS thread count such a product gets (``onnx_ops._blas``: one thread below 2**27
    multiply-adds, or ``MDF_ENGINE_BLAS_THREADS``), since nopython code cannot change it."""
    if blas_macs:
        from ...onnx_ops._blas import blas_threads_for

        with blas_threads_for(blas_macs):
            return call_checked(fn, args, index_fields)
    try:
        return fn(*args)
    except (ValueError, IndexError, SystemError) as e:
        # (a parallel batch reports an exception of its threads as a SystemError, caused by it)
        mapped = _compiled_error(e.__cause__ if isinstance(e, SystemError) else e, index_fields)
        if mapped is None:
            raise
        raise mapped from None


def _compiled_error(e: BaseException | None, index_fields: Any) -> MDFError | None:
    """The MDFError for an exception that generated code raised on purpose, or None."""
    if isinstance(e, ValueError):  # (pybuiltins._like: a value its slot cannot hold)
        if str(e) == "a value of another shape than its compiled slot":
            return KindChanged(
                "a value has another shape than in the compiled backend's warm-up (use "
                "backend='interpreted')"
            )
        op, _, rest = str(e).partition(": ")
        if rest == "the result's shape is not the compiled backend's warm-up's":
            # (a shape op's nopython kernel, ``jit_like``: onnx_ops/_shape_jit.py)
            return KindChanged(
                f"onnx::{op} returned shape other than in the compiled backend's warm-up"
            )
        return None
    if isinstance(e, IndexError):
        return index_error(e, index_fields)
    return None


def record_buffer(rows: int, keep: int, width: int) -> np.ndarray:
    """The zeroed ``(rows, keep, width)`` record of a batch, within the sweep-values limit."""
    from ...limits import LIMITS, limit

    size = float(rows) * keep * max(width, 1)
    if size > limit("sweep_values"):
        raise MDFError(
            f"recording {width} values at {keep} steps of {rows} parameter sets needs "
            f"{size:.3g} numbers; the limit is {limit('sweep_values')} (set "
            f"{LIMITS['sweep_values'][0]} to allow more)"
        )
    return np.zeros((rows, keep, max(width, 1)), dtype=np.float64)
