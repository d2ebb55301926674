"""The functions PsyNeuLink writes into its MDF exports (namespace ``pnl``), with PsyNeuLink's
semantics and the argument names its exporter writes (``variable0`` plus the function's
parameters). Written from PsyNeuLink's documentation and observed behaviour.

A PsyNeuLink file calls them by bare, lower-case class name (``"function": "linear"``). Three
names are shared with the MDF standard functions (``linear``, ``logistic``, ``exponential``):
PsyNeuLink's take more arguments (``scale``, ``offset``, ``x_0``) and its logistic adds ``offset``
*outside* the exponential, so the planner picks these versions for files whose
``generating_application`` is PsyNeuLink (or whose arguments only bind here). They are
registered with ``since=0`` so that the standard version stays the default of the shared name
and every (name, since) pair names one kernel.

One family per module, each documenting its formulas: :mod:`.transfer` (linear, logistic,
exponential, tanh, relu, gaussian, identity, softmax), :mod:`.combination` (linearcombination, reduce), :mod:`.objective` (distance,
energy), :mod:`.integrators` (one-step simple, adaptive, leaky competing and FitzHugh-Nagumo
integrators), :mod:`.drift_diffusion` (driftdiffusionanalytical) and :mod:`.control`
(defaultallocationfunction), :mod:`.more_integrators` (interactive activation, Ornstein-Uhlenbeck).
Importing this package registers all of them.
"""

from __future__ import annotations

from . import (  # noqa: F401  (importing a family registers its kernels)
    combination,
    control,
    drift_diffusion,
    integrators,
    more_integrators,
    objective,
    transfer,
)
