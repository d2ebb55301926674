"""Pictures: plots of results and drawings of graphs (matplotlib only, the ``plot`` extra).

* :mod:`.runs` -- :func:`~mdf_engine.viz.runs.plot_run`, the traces of one run (``mdf run
  --plot``);
* :mod:`.sweeps` -- :func:`~mdf_engine.viz.sweeps.plot_sweep`, final values against swept
  parameters (``mdf sweep --plot``), with :mod:`.sweep_table` (a sweep as numpy arrays) and
  :mod:`.facets` (three or more swept parameters);
* :mod:`.drawing` -- :func:`~mdf_engine.viz.drawing.draw`, a picture of a graph (``mdf draw``),
  with :mod:`.labels` (its text), :mod:`.edges` (where its arrows go) and
  :mod:`.drawing_large` (the compact drawing of graphs of many nodes);
* :mod:`.figures` -- what they share: image formats, figures without pyplot, atomic and
  reproducible writes, axis labels with units.

Nothing is imported here, so ``import mdf_engine.viz`` does not load matplotlib.
"""
