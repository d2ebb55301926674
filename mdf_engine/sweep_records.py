"""What a sweep records of each value: its kind (dtype and shape) and its numbers per step.

A sweep's variable holds, at each parameter set and step, the value a single interpreted run
of that set gives, in that value's dtype and shape: an int64 counter stays int64, a float32
value float32, a boolean boolean. A value whose kind follows the argument ``max()``/``min()``
chose (a *variant*, :mod:`.backends.compiled.variants`: PsyNeuLink's DDI clipping gives a
float ``(1, 1)`` below the threshold, the int64 ``(1,)`` threshold once clipped) is one
variable in the kind that holds every alternative exactly (numpy's promotion of their
dtypes, the shape with most axes: every alternative holds one number), on both backends
alike.

While they run, records travel as float64 numbers (one array per chunk of runs); an integer
beyond 2**53, which float64 does not hold, is never rounded silently: the interpreted sweep
refuses it with an MDFError naming the record, and a compiled chunk whose integer record
reaches 2**53 runs again on the interpreter (which keeps it exact or refuses it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from .errors import MDFError, NotCompilable


class Kind(NamedTuple):
    """A recorded value's dtype and shape in the sweep, and whether it may hold an integer
    (an integer dtype, or a variant with an integer alternative)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    ints: bool


#: integers of larger magnitude are not all held by float64
EXACT_INT = 2**53


def record_kinds(
    model: Any,
    graph: str,
    keys: Sequence[tuple[str, str]],
    initializer: Mapping[str, Any] | None,
    dt: float | None,
) -> list[Kind]:
    """The kind of each recorded ``(node, name)`` after one interpreted step of ``model``:
    the value's own, or a variant's storage kind."""
    from .backends.compiled.layout import output_key, value_key
    from .backends.compiled.variants import storage_kind
    from .simulation import Simulation

    sim = Simulation(model, graph=graph, backend="interpreted")
    sim.run(steps=1, dt=dt, initializer=initializer)

    try:
        from .backends.compiled.variants import find_variants

        variants = find_variants(sim.plan, sim.runner)
    except (NotCompilable, MDFError):  # (the compiled backend refuses it too: the warm-up kind)
        variants = {}
    kinds = []
    for nid, name in keys:
        var = variants.get(output_key(nid, name))
        if var is None and name not in dict(sim.plan.nodes[nid].outputs):
            var = variants.get(value_key(nid, name))
        if var is not None:
            dtype, shape = storage_kind(var.alts)
            ints = any(np.dtype(d).kind in "biu" for d, _ in var.alts)
            kinds.append(Kind(np.dtype(dtype), tuple(shape), ints))
            continue
        a = np.asarray(sim.value(nid, name))
        dtype = a.dtype if a.dtype.kind in "biuf" else np.dtype(np.float64)
        kinds.append(Kind(dtype, tuple(a.shape), dtype.kind in "biu"))
    return kinds


def columns(trace: Sequence[Any], key: str, kind: Kind) -> tuple[np.ndarray, np.dtype]:
    """One recorded value per step as a row of float64 numbers, ``(steps, size)`` (a value
    whose shape changes but not its size is read flat), and numpy's promotion of the kind's
    dtype and every value's."""
    size = int(np.prod(kind.shape)) if kind.shape else 1
    rows = np.empty((len(trace), size))
    dtype = kind.dtype
    for step, v in enumerate(trace):
        a = np.asarray(v)
        if a.size != size:
            raise MDFError(
                f"record '{key}': its value changes size from step to step ({size} and "
                f"{a.size} numbers); a sweep records values of one size"
            )
        if a.dtype.kind not in "biuf":
            raise MDFError(f"record '{key}': its value at step {step} is not a number")
        flat = a.reshape(-1)
        if a.dtype.kind in "iu" and flat.size and np.abs(flat).max() > EXACT_INT:
            raise MDFError(
                f"record '{key}': at step {step} it holds the integer {flat[0]} beyond "
                "2**53, which a sweep's record (float64 numbers while it runs) cannot hold "
                "exactly; record it with Simulation.run"
            )
        dtype = np.result_type(dtype, a.dtype)
        rows[step] = flat
    return rows, dtype


def compiled_dtypes(runner: Any, keys: Sequence[tuple[str, str]]) -> list[np.dtype]:
    """The dtype of each recorded value's slot in a compiled ``runner`` prepared for a batch
    (the one its record is read from, as ``generator`` picks it: the output port, else the
    value)."""
    from .backends.compiled.layout import Storage, output_key, value_key

    slots = runner._layout.slots
    arrays = None
    out = []
    for nid, name in keys:
        slot = slots.get(output_key(nid, name)) or slots[value_key(nid, name)]
        if slot.won >= 0:
            out.append(np.result_type(*(np.dtype(d) for d, _ in slot.alts)))
        elif slot.kind is Storage.ARRAY:
            arrays = runner.cold_state()["A"] if arrays is None else arrays
            out.append(arrays[slot.index].dtype)
        else:
            out.append(np.dtype(slot.dtype))
    return out


def needs_interpreter(part: np.ndarray, kinds: Sequence[Kind]) -> bool:
    """Whether a compiled chunk's float64 record may have rounded an integer: a record that
    may hold integers reaching magnitude 2**53."""
    col = 0
    for _, shape, ints in kinds:
        size = int(np.prod(shape)) if shape else 1
        if ints and part[:, :, col : col + size].size:
            if np.abs(part[:, :, col : col + size]).max() >= EXACT_INT:
                return True
        col += size
    return False


def typed(block: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A record's float64 numbers in its dtype (exact: checked as they were recorded)."""
    return block if block.dtype == dtype else block.astype(dtype)
