"""The compiled loop's log of time steps, and how it is read back.

The whole-graph loop writes node indices (and ``-1`` at the end of each time step) into a ring
buffer in machine code; Python decodes it only when ``time_steps`` or ``order_of_execution`` is
read, so a run pays no Python work per pass. A graph with a fixed schedule is not logged at
all: its time steps are written out from the number of updates run.
"""

from __future__ import annotations

import numpy as np

#: Entries of the compiled loop's schedule log by default (a ring buffer: one entry per node
#: run and one per time step; ``time_steps`` and ``order_of_execution`` hold the most recent
#: ones). ``CompiledGraph(schedule_log=N)`` changes it, ``0`` (or ``record_schedule=False``)
#: switches the log off.
SCHEDULE_LOG = 1_000_000


class ScheduleLog:
    """The ring buffer of a compiled graph's time steps (``size`` entries; 0: no log).

    ``ring`` and ``pos`` are the arrays the generated ``run`` writes (``pos[0]``: entries
    written so far, ``pos[1]``: 1 while logging); ``static`` is the fixed schedule's
    consideration sets (node indices), when the graph has one, and ``static_updates`` the
    updates run under it. ``mark`` is where the log stood when the last evaluate() started."""

    def __init__(self, size: int, node_ids: list[str]):
        self.size = size
        self.node_ids = node_ids
        self.ring = np.zeros(max(size, 1), dtype=np.int64)
        self.pos = np.zeros(2, dtype=np.int64)
        self.pos[1] = 1 if size > 0 else 0
        self.static: list[list[int]] | None = None
        self.static_updates = 0
        self.mark = (0, 0)
        self._decoded: tuple[int, list[set[str]], list[str]] | None = None
        self._static_sets: tuple[list[list[int]], list[set[str]]] | None = None

    def here(self) -> tuple[int, int]:
        """Where the log stands now (ring position, static updates)."""
        return int(self.pos[0]), self.static_updates

    def truncated(self, evaluations: int) -> bool:
        """Older time steps fell out of the log (or it is off)."""
        if self.size == 0:
            return evaluations > 0
        if self.static is not None:
            per = sum(len(m) + 1 for m in self.static if m)
            return self.static_updates * per > self.size
        return int(self.pos[0]) > self.size

    def decoded(self) -> tuple[list[set[str]], list[str]]:
        """The log decoded (once per change): time steps and execution order."""
        if self.size == 0:
            return [], []
        static = self.static is not None
        stamp = self.static_updates if static else int(self.pos[0])
        if self._decoded is not None and self._decoded[0] == stamp:
            return self._decoded[1], self._decoded[2]
        if static:
            # a fixed schedule is not logged by the compiled loop: its time steps are written
            # out from the number of updates run (as many as the log would keep)
            sets = [[self.node_ids[m] for m in members] for members in self.static if members]
            per = max(sum(len(m) + 1 for m in sets), 1)
            updates = min(self.static_updates, self.size // per)
            steps = [set(m) for _ in range(updates) for m in sets]
            order = [n for _ in range(updates) for m in sets for n in m]
        else:
            n, total = len(self.ring), stamp
            if total <= n:
                entries = self.ring[:total]
            else:  # wrapped: oldest first, starting after the first complete time step
                start = total % n
                entries = _from_a_boundary(np.concatenate([self.ring[start:], self.ring[:start]]))
            steps, order = self._split(entries)
        self._decoded = (stamp, steps, order)
        return steps, order

    def steps_since(self, mark: tuple[int, int]) -> list[set[str]]:
        """The logged time steps after ``mark`` (those the ring buffer still holds)."""
        if self.static is not None:  # (the sets named once per schedule: an evaluate()
            # of a one-inference CNN reads them, ~2 us when named each time)
            if self._static_sets is None or self._static_sets[0] is not self.static:
                sets = [{self.node_ids[m] for m in members} for members in self.static if members]
                self._static_sets = (self.static, sets)
            sets = self._static_sets[1]
            return [set(m) for _ in range(self.static_updates - mark[1]) for m in sets]
        total, n = int(self.pos[0]), len(self.ring)
        if self.size == 0:
            return []
        first = max(mark[0], total - n)
        idx = np.arange(first, total) % n
        entries = self.ring[idx]
        if first > mark[0]:  # the start fell out of the ring: from a time step boundary
            entries = _from_a_boundary(entries)
        return self._split(entries)[0]

    def _split(self, entries: np.ndarray) -> tuple[list[set[str]], list[str]]:
        """Log entries (node indices, each time step closed by a negative entry) as the
        time steps they close and the execution order."""
        steps, order, cur = [], [], set()
        for v in entries.tolist():
            if v < 0:
                steps.append(cur)
                cur = set()
            else:
                cur.add(self.node_ids[v])
                order.append(self.node_ids[v])
        return steps, order


def _from_a_boundary(entries: np.ndarray) -> np.ndarray:
    """The entries after the first time step boundary (an earlier part of that time step fell
    out of the ring)."""
    cut = np.nonzero(entries < 0)[0]
    return entries[cut[0] + 1 :] if cut.size else entries[:0]
