"""The plan of a graph: every node's ports, parameters, functions and outputs compiled into
checked expressions and bound function calls, in the order the reference engine evaluates them.

This is the stage between the typed model and a backend. It decides, once, everything that does
not change from step to step:

* which parameters are stateful (a ``time_derivative``, a ``default_initial_value``, or a
  ``value`` that mentions the parameter itself);
* the order of node functions (by dependency; parameters keep their declared order, as in
  modeci-mdf);
* that every name an expression uses is known in its node (else :class:`MDFError` naming the
  field), and which registered function each call binds to, with its arguments split into
  inputs and attributes.

One module per concern: :mod:`.parts` (the plan's dataclasses), :mod:`.graph`
(:func:`plan_graph`), :mod:`.values`, :mod:`.calls` (binding to the registry),
:mod:`.conventions` (writers' conventions) and :mod:`.libraries` (loading function libraries).
This package is the stage's one entry: the rest of the engine imports the names below from it.
"""

from __future__ import annotations

from .graph import SCHEDULING_MODES, plan_graph
from .libraries import expression_functions, graph_function_names, load_function_libraries
from .parts import CallPlan, EdgePlan, GraphPlan, InputPlan, NodePlan, ParameterPlan, ValuePlan

__all__ = [
    "SCHEDULING_MODES",
    "CallPlan",
    "EdgePlan",
    "GraphPlan",
    "InputPlan",
    "NodePlan",
    "ParameterPlan",
    "ValuePlan",
    "expression_functions",
    "graph_function_names",
    "load_function_libraries",
    "plan_graph",
]
