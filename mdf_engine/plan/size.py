"""How large a plan is for the compiled backend, and the bound beyond which a graph is not
compiled.

The compiled backend writes one function for the whole graph; Python's parser, Numba's typing
and LLVM's optimization of it grow with its length (and LLVM's faster than linearly), so a
graph of thousands of nodes compiles for minutes and gigabytes: a 1,000-node chain about
6.5 CPU s and 420 MB, 2,000 nodes 14.5 CPU s and 790 MB (docs/performance.md, "scale"). Such a
graph is left to the interpreted backend at once, with the log line the compiled backend
writes for every graph it does not compile, before any warm-up or hashing of the graph;
``MDF_ENGINE_COMPILE_MAX_NODES`` moves the bound.
"""

from __future__ import annotations

from ..errors import NotCompilable
from ..limits import LIMITS, limit
from .parts import GraphPlan


def check_compile_size(plan: GraphPlan) -> None:
    """NotCompilable (the graph runs interpreted) when ``plan`` has more nodes than the
    ``compiled_nodes`` limit."""
    most = limit("compiled_nodes")
    n = len(plan.nodes)
    if n > most:
        var = LIMITS["compiled_nodes"][0]
        raise NotCompilable(
            f"the graph has {n} nodes, more than the {most} the compiled backend compiles "
            f"(its compile would take minutes; set {var} to compile larger graphs)"
        )
