"""Conditions on absolute time: TimeInterval and TimeTermination.

When some condition is absolute, graph-scheduler gives every consideration set a fixed length
of time and runs a clock (see :mod:`mdf_engine.schedulers.compiled`). Times are numbers in
``unit`` (milliseconds by default) or strings with their own unit (``"1500us"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import MDFError, NotCompilable
from .base import ConditionKind, kind, value

if TYPE_CHECKING:  # (self.graph_scheduler() reads the units: it imports graph-scheduler)
    import graph_scheduler


@kind("TimeInterval")
@dataclass(frozen=True)
class TimeInterval(ConditionKind):
    """Satisfied at every ``repeat`` of time (counted from the owner node's place in the
    pass, or from ``start`` when every node is in one consideration set or the scheduler runs
    in exact time), from ``start`` through ``end`` (each bound inclusive unless
    ``start_inclusive``/``end_inclusive`` is false; any of the three may be left out)."""

    repeat: Any = value(None)
    start: Any = value(None)
    end: Any = value(None)
    unit: Any = value(None)
    start_inclusive: bool = value(True)
    end_inclusive: bool = value(True)

    def check(self, graph: Any, where: str) -> None:
        """A repeat > 0 as graph-scheduler reads it (it rounds ``1e-12`` ms to 0 and then
        divides by it) and bounds that are numbers (a NaN start never comes)."""
        try:
            built = self.graph_scheduler(None)
        except Exception:  # noqa: BLE001 - reported with the field path when it is built
            return
        for name in ("repeat", "start", "end"):
            q = getattr(built, name)
            m = getattr(q, "m", q)
            if m is None:
                continue
            if not math.isfinite(float(m)) or (name == "repeat" and m <= 0):
                what = "a time > 0" if name == "repeat" else "a finite time"
                raise MDFError(
                    f"expected {what}, got {getattr(self, name)!r:.80} (read as {q})",
                    f"{where}.kwargs.{name}",
                )

    def register(self, table: Any, owner: int) -> None:
        table.time_slot(self.times(table, owner))

    def times(self, table: Any, owner: int) -> Any:
        """This interval in milliseconds (graph-scheduler reads the units)."""
        built = self.graph_scheduler(None)
        tc = table.time_condition(
            repeat=built.repeat,
            start=built.start,
            end=built.end,
            start_inclusive=bool(self.start_inclusive),
            end_inclusive=bool(self.end_inclusive),
        )
        if tc.repeat is None:
            return tc
        if owner < 0 or owner not in table.set_of:
            # graph-scheduler itself fails on it (the offset comes from the owner)
            raise NotCompilable("TimeInterval with a repeat outside a node condition")
        if tc.repeat == 0:
            raise NotCompilable("TimeInterval(repeat=0)")
        return tc.at_set(table.set_of[owner])

    def code(self, w: Any, owner: int) -> str:
        tc = w.time(self.times(w.table, owner))
        parts = []
        if tc.repeat is not None:
            parts.append(f"({w.clock_time()} - {tc.offset}) % {tc.repeat} == 0")
        if tc.start is not None:
            parts.append(f"{w.clock_time()} {'>=' if tc.start_inclusive else '>'} {tc.start}")
        if tc.end is not None:
            parts.append(f"{w.clock_time()} {'<=' if tc.end_inclusive else '<'} {tc.end}")
        return "(" + " and ".join(parts) + ")"


@kind("TimeTermination")
@dataclass(frozen=True)
class TimeTermination(ConditionKind):
    """Satisfied from time ``t`` on (from just after ``t`` if not ``inclusive``): with it,
    an environment state update ends at time ``t``."""

    t: Any = value()
    inclusive: bool = value(True)
    unit: Any = value(None)

    def register(self, table: Any, owner: int) -> None:
        table.time_slot(self.times(table))

    def times(self, table: Any) -> Any:
        built: graph_scheduler.TimeTermination = self.graph_scheduler(None)
        return table.time_condition(start=built.t, start_inclusive=bool(self.inclusive))

    def code(self, w: Any, owner: int) -> str:
        tc = w.time(self.times(w.table))
        return f"({w.clock_time()} {'>=' if tc.start_inclusive else '>'} {tc.start})"
