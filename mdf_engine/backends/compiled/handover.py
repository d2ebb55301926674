"""Handing a graph over from the interpreted backend to its compiled loop after its first steps.

A value that numpy broadcasting grows over a graph's first steps (NeuroML's PyNN_IF_net: a
synapse current starts at its ``(2,)`` initial value and becomes ``(2, 2)`` once the ``(2, 2)``
weights reach it; modeci-mdf's RNNs example: a number growing into the input's shape) has one
compiled slot of the size it settles at. The interpreted backend (the oracle) runs the steps up
to the last change of a size (:attr:`Handover.steps`, found by the warm-up in :mod:`.build`);
then its state is written into the compiled state and the compiled loop carries on from there.
So every step shows the interpreter's values, shapes and dtypes, and later steps run at the
compiled loop's speed.

What is handed over, at the boundary of two updates: every value the interpreter holds (ports
as last read, pending inputs, functions, parameters and whether each was ever set, outputs),
which nodes ever ran, the scheduler's counters that outlive an update (updates, passes and time
steps so far, calls of each node, the last time step for ``JustRan``, the absolute clock, the
values Threshold conditions read) and the time steps of the schedule log. A value that does not
fit its slot at that step (another initializer or ``dt`` than the warm-up's) keeps the graph on
the interpreted backend, with a log line naming it. A sweep (:func:`run_batch`) hands each
parameter set over alike, its own interpreter running its first steps.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...plan import GraphPlan
from .layout import Layout, Role, Slot, Storage, scalar_bits, scalar_dtype
from .state import threshold_values
from .variants import kind

log = logging.getLogger("mdf_engine")


@dataclass(frozen=True)
class Handover:
    """The interpreted backend runs the first ``steps`` updates of a graph; ``why`` names the
    value whose size changed last in them (the log line's text)."""

    steps: int
    why: str

    def to_json(self) -> list[Any]:
        """The hand-over as JSON (the compile cache's record)."""
        return [self.steps, self.why]

    @classmethod
    def from_json(cls, data: Any) -> Handover | None:
        """A hand-over written by :meth:`to_json` (None stays None)."""
        return None if data is None else cls(int(data[0]), str(data[1]))


def run_prefix(
    runner: Any,
    steps: int,
    dt: float | None,
    initializer: Mapping[str, Any] | None,
    first_without_dt: bool,
) -> tuple[int, bool]:
    """Run ``runner``'s first updates on its interpreter, up to the hand-over, and hand the
    graph over when an update remains to run compiled. Returns the updates left and whether
    the first of them runs without a time increment."""
    handover, interp = runner.handover, runner.interp
    done = 0
    while done < steps and interp.evaluations < handover.steps:
        inc = None if ((done == 0 and first_without_dt) or dt is None) else dt
        interp.evaluate(time_increment=inc, initializer=initializer)
        done += 1
    if done < steps:
        hand_over(runner)
    return steps - done, first_without_dt and done == 0


def hand_over(runner: Any) -> None:
    """Write ``runner``'s interpreter into its compiled state (a graph that has not run), or
    give up compiling naming the value that does not fit."""
    interp = runner.interp
    why = write_state(runner.compiled_state, runner._layout, interp, runner.plan)
    if why is not None:
        runner.handover = None
        runner._give_up(f"{why} after the first {interp.evaluations} steps")
        return
    write_schedule(runner.compiled_state, runner, interp)
    write_log(runner, interp)
    log.info(
        "compiled backend: %s; the interpreted backend ran the first %d steps, the compiled "
        "loop runs the rest",
        runner.handover.why,
        interp.evaluations,
    )
    runner.handover = None
    runner.handed_over = True
    runner.history.clear()  # (the interpreter held this state: handback.py)


def write_state(state: dict[str, Any], layout: Layout, interp: Any, plan: GraphPlan) -> str | None:
    """Write every value ``interp`` holds into the compiled ``state`` (in place); the field of
    a value that does not fit its slot (and why), else None."""
    from ...interpreter import _UNSET

    S = state["S"]
    for key, slot in layout.slots.items():
        if key.part or key.role is Role.WON:  # (an item of a tuple: written with the tuple;
            continue  # a variant's tag: with its value, in _put)
        st = interp.states[key.node]
        if key.role is Role.UNSET:
            S[slot.index] = 1.0 if st.params[key.name] is _UNSET else 0.0
            continue
        if key.role is Role.FLAG:
            S[slot.index] = 0.0 if st.pending[key.name] is None else 1.0
            continue
        if key.role in (Role.OUTPUT, Role.SNAPSHOT):
            value = st.outputs[key.name]
        elif key.role is Role.PENDING:
            value = st.pending[key.name]
        elif key.name in st.funcs:
            value = st.funcs[key.name]
        elif key.name in st.params:
            value = st.params[key.name]
            value = None if value is _UNSET else value
        else:
            value = st.inputs_read.get(key.name)
        if value is None:  # (not computed yet: as in a graph that has not run)
            continue
        why = _put(state, slot, value)
        if why is not None:
            return f"{plan.nodes[key.node].where} '{key.name}' {why}"
    return None


def _put(state: dict[str, Any], slot: Slot, value: Any) -> str | None:
    """Write ``value`` into ``slot``; why it does not fit, else None. A value of the slot's
    size and of a dtype that casts to the slot's within its kind (an integer into a float
    slot, never a float into an integer one) fits."""
    if slot.kind in (Storage.NONE, Storage.TEXT):
        return None
    if slot.kind is Storage.TUPLE:
        if not isinstance(value, (list, tuple)) or len(value) != len(slot.parts):
            return f"holds a {type(value).__name__}, not a sequence of {len(slot.parts)}"
        for part, item in zip(slot.parts, value):
            why = _put(state, part, item)
            if why is not None:
                return why
        return None
    given = np.asarray(value)
    if given.dtype.kind not in "biuf":
        return f"holds {given.dtype}"
    if slot.won >= 0:  # (a variant: its tag says which alternative it holds, variants.py)
        k = kind(value)
        if k not in slot.alts:
            return f"holds {given.dtype} {given.shape}, which max()/min() does not give"
        state["S"][slot.won] = float(slot.alts.index(k))
    if slot.kind is Storage.SCALAR:
        target = np.dtype(slot.dtype)
        if given.size != 1 or not np.can_cast(given.dtype, target, "same_kind"):
            return f"holds {given.dtype} {given.shape}, not a {slot.dtype} number"
        state["S"][slot.index] = scalar_bits(given.reshape(-1)[0], scalar_dtype(target.type(0)))
        return None
    target_array = state["A"][slot.index]
    if given.size != target_array.size or not np.can_cast(
        given.dtype, target_array.dtype, "same_kind"
    ):
        return (
            f"holds {given.dtype} {given.shape}, not {target_array.dtype} {target_array.shape} "
            "as compiled"
        )
    target_array[...] = given.reshape(target_array.shape)
    return None


def write_schedule(state: dict[str, Any], runner: Any, interp: Any) -> None:
    """The scheduler's state after ``interp``'s updates into ``state``, as the compiled loop
    keeps it: the counters that outlive an update (:mod:`mdf_engine.schedulers.codegen`; the
    others start again at every update)."""
    from graph_scheduler import TimeScale

    from ...schedulers.compiled import encode

    index = {nid: i for i, nid in enumerate(runner.node_ids)}
    steps = interp.time_steps
    clock = state["clock"]
    clock[2] = interp.evaluations
    replayed = interp._replay is not None and interp._replay.steps is not None
    if runner._layout.static is not None or replayed:
        # (a fixed schedule: one pass per update; the interpreter replays it uncounted)
        clock[1] = interp.evaluations
    else:
        clock[1] = _clock(interp).get_total_times_relative(TimeScale.PASS, TimeScale.LIFE)
    clock[5] = len(steps)
    absolute = runner.absolute_clock()
    if absolute.enabled:
        ms = interp._now()
        clock[6] = int(round(float(getattr(ms, "magnitude", ms)) * absolute.ticks_per_ms))
    last = steps[-1] if steps else set()
    for nid, i in index.items():
        state["ever"][i] = nid in interp.ever_ran
        state["last_set"][i] = nid in last
        state["total"][2, i] = 0
    for nid in interp.order_of_execution:
        state["total"][2, index[nid]] += 1
    state["thr"][...] = threshold_values(
        interp, encode(runner.interp.scheduler, runner.node_ids)[0].thresholds
    )


def _clock(interp: Any) -> Any:
    """graph-scheduler's clock of ``interp``'s scheduler (a hand-over's interpreter runs
    graph-scheduler's, not the warm-up's own scheduler)."""
    return interp.scheduler.get_clock(interp.scheduler.default_execution_id)


def write_log(runner: Any, interp: Any) -> None:
    """``interp``'s time steps into ``runner``'s schedule log, as the compiled loop writes
    them (a fixed schedule's log counts its updates only)."""
    logbook = runner.log
    if runner._layout.static is not None:
        logbook.static_updates = interp.evaluations
        return
    if logbook.size == 0:
        return
    index = {nid: i for i, nid in enumerate(runner.node_ids)}
    n = len(logbook.ring)
    for members in interp.time_steps:
        for i in [*sorted(index[m] for m in members), -1]:
            logbook.ring[logbook.pos[0] % n] = i
            logbook.pos[0] += 1


def plan_with(plan: GraphPlan, swept: list[tuple[str, str]], row: np.ndarray) -> GraphPlan:
    """``plan`` with the ``swept`` parameters' constants (or initial values, for a stateful
    parameter) set to ``row``'s values, as the compiled code reads them from its ``P`` table."""
    nodes = dict(plan.nodes)
    for (nid, pid), v in zip(swept, row):
        params = []
        for pp in nodes[nid].parameters:
            if pp.id == pid:
                if pp.stateful or pp.derivative is not None:
                    pp = dataclasses.replace(pp, initial=dataclasses.replace(pp.initial, const=v))
                else:
                    pp = dataclasses.replace(pp, value=dataclasses.replace(pp.value, const=v))
            params.append(pp)
        nodes[nid] = dataclasses.replace(nodes[nid], parameters=params)
    return dataclasses.replace(plan, nodes=nodes)
