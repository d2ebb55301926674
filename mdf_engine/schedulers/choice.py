"""Which scheduler the interpreted backend runs a graph's schedule with.

graph-scheduler is the interpreted backend's scheduler and the oracle of every schedule the
engine makes. Its cost grows with the square of a graph's nodes: it keeps, for every pair of
nodes, how often one ran since the other (``counts_useable``: a dict of dicts, made at setup
and again at the start of every environment state update, and walked for every node that
runs), and its consideration queue comes from a toposort that rescans every node per level.
A chain of 5,000 nodes takes it about 21 CPU s to set up and 22 CPU s per update (about 97%
of the update in graph-scheduler itself), and a graph of 10,000 nodes a hundred million
dict entries (docs/performance.md, "scale"). The engine's own scheduler
(:mod:`.own`, the compiled loop's scheduler code run in Python, tested to give
graph-scheduler's time steps on every condition case and on generated graphs of thousands
of nodes) keeps only the counters some condition reads: the same chain sets up in about
1.7 CPU s and runs an update in 0.07 CPU s.

So the interpreted backend uses the own scheduler for a graph of :data:`OWN_FROM_NODES`
nodes or more, where it can (it declines absolute time, cycles, exact_time mode and the
conditions graph-scheduler must evaluate itself: then graph-scheduler runs them as ever).
The environment variable ``MDF_ENGINE_SCHEDULER`` chooses otherwise: ``graph-scheduler``
(always graph-scheduler), ``own`` (the own scheduler wherever it can), ``auto`` (the
default, as above).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..errors import MDFError

log = logging.getLogger("mdf_engine")

#: the environment variable that chooses the interpreted backend's scheduler
VARIABLE = "MDF_ENGINE_SCHEDULER"
CHOICES = ("auto", "graph-scheduler", "own")
#: under ``auto``, graphs of this many nodes or more run on the own scheduler where it can
OWN_FROM_NODES = 1000


def use_own_scheduler(n_nodes: int) -> bool:
    """Whether the interpreted backend should run a graph of ``n_nodes`` nodes on the engine's
    own scheduler (where it can; see the module docstring)."""
    choice = os.environ.get(VARIABLE, "auto").strip().lower() or "auto"
    if choice not in CHOICES:
        raise MDFError(f"{VARIABLE}={choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "auto":
        return n_nodes >= OWN_FROM_NODES
    return choice == "own"


def note_declined(scheduler: Any, n_nodes: int, wanted_own: bool) -> None:
    """A log line when a large graph (wanted on the own scheduler) runs on graph-scheduler's
    ``scheduler`` after all (its conditions need graph-scheduler): slow, not hung."""
    from .own import OwnScheduler

    if wanted_own and n_nodes >= OWN_FROM_NODES and not isinstance(scheduler, OwnScheduler):
        log.warning(
            "interpreted backend: graph-scheduler runs the schedule of this %d-node graph "
            "(the engine's own scheduler does not run its conditions or mode); its setup "
            "and every update grow with the square of the nodes (minutes at 10,000 nodes)",
            n_nodes,
        )


def interpreter_of_declined(plan: Any, check_finite: bool) -> Any:
    """The compiled backend's interpreter (for a graph it does not compile): on the own
    scheduler as the interpreted backend would run it, for a graph beyond the compiled
    backend's node limit; smaller graphs keep graph-scheduler there, whose state a hand-over
    reads."""
    from ..interpreter import InterpretedGraph
    from ..limits import limit

    n = len(plan.nodes)
    own = n > limit("compiled_nodes") and use_own_scheduler(n)
    return InterpretedGraph(plan, check_finite, own_scheduler=own)
