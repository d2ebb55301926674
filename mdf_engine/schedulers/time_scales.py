"""graph-scheduler's time scales, named and ordered as graph-scheduler names them, without
importing graph-scheduler.

graph-scheduler's import costs a fresh process most of a second (pint's unit registry,
networkx, dask); the condition kinds, their parser and the compiled backend's scheduler code
need only the names. :func:`to_graph_scheduler` gives graph-scheduler's own member where a
graph-scheduler object is built (the interpreted backend's bridge).
"""

from __future__ import annotations

import enum
from typing import Any


class TimeScale(enum.Enum):
    """A time scale of graph-scheduler's clock (the same names and values as its
    ``graph_scheduler.TimeScale``)."""

    CONSIDERATION_SET_EXECUTION = 0
    PASS = 1
    ENVIRONMENT_STATE_UPDATE = 2
    ENVIRONMENT_SEQUENCE = 3
    LIFE = 4

    def __lt__(self, other: Any) -> bool:
        if self.__class__ is other.__class__:
            return self.value < other.value
        return NotImplemented


def to_graph_scheduler(ts: TimeScale) -> Any:
    """graph-scheduler's member of the same name (imports graph-scheduler)."""
    import graph_scheduler

    return graph_scheduler.TimeScale[ts.name]
