"""Backends: the runners that :class:`~mdf_engine.simulation.Simulation` drives.

Every backend implements :class:`~mdf_engine.backends.base.Runner`; :func:`make_runner` is the
one place that maps a backend name to its runner class:

* ``interpreted`` -- :class:`mdf_engine.interpreter.InterpretedGraph` (numpy, graph-scheduler)
* ``compiled`` -- :class:`mdf_engine.backends.compiled.CompiledGraph` (generated Numba code)
  (a graph calling ``actr`` functions: :class:`mdf_engine.actr.compiled.CompiledActrGraph`,
  Numba kernels over integer tables)
* ``hexagon`` -- :class:`mdf_engine.backends.hexagon.HexagonRunner` (the graph quantized onto
  hexagon:: ops, then interpreted)
* ``actr`` -- :class:`mdf_engine.backends.actr.ActrRunner` (an ACT-R production system, one
  step per production cycle)
"""

from .base import RUNNER_BACKENDS, Runner, make_runner, uses_namespace

__all__ = ["RUNNER_BACKENDS", "Runner", "make_runner", "uses_namespace"]
