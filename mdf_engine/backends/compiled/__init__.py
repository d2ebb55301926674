"""The compiled backend: a whole graph, scheduler included, as generated Numba code.

The modules, in the order a graph goes through them:

* :mod:`.graph` -- :class:`CompiledGraph`, the runner (state, runs, batches, fallbacks);
  :mod:`.schedule_log` decodes the log of time steps the compiled loop writes;
* :mod:`.build` -- the warm-up, the generated module's file, and the compile cache's use;
  :mod:`.cache` -- the on-disk record of a compiled graph (keyed by the engine's sources);
* :mod:`.generator` -- the code generator, made of one emitter per concern: :mod:`.state`
  (slots from a warm-up), :mod:`.layout` (slots and the layout), :mod:`.constants`,
  :mod:`.calls`, :mod:`.values`, :mod:`.elementwise` (fused loops), :mod:`.node_code` and
  :mod:`.module_code`;
* :mod:`.generated_source` -- the constant table and the check of every generated module;
* :mod:`.runtime` and :mod:`.helpers` -- what generated code imports;
* :mod:`.node_by_node` -- graph-scheduler calling jitted node functions, for schedules that
  do not compile.
"""

from .graph import CompiledGraph

__all__ = ["CompiledGraph"]
