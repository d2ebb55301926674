"""Tier 0 of the compiled backend: a graph's first short runs without compiling its code.

The modules, in the order a graph goes through them (docs/compiled.md, "Tier 0"):

* :mod:`.tier` -- when tier 0 runs a graph (per call), and one call on the compiled state;
* :mod:`.translate` (statements), :mod:`.expressions` and :mod:`.heap` -- the generated
  ``run``'s syntax tree as a program: instructions (:mod:`.ops`) over one float64 heap;
* :mod:`.machine` -- the engine-wide ``@njit(cache=True)`` machine that runs a program;
  :mod:`.pyvm` -- the same machine in plain numpy, for the shortest runs.
"""
