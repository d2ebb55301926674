"""A drop-in for ``modeci_mdf.execution_engine``: change one import and an existing script or
test suite runs on mdf_engine.

    from mdf_engine.compat import EvaluableGraph, EvaluableParameter, main
    eg = EvaluableGraph(graph)          # a modeci_mdf.mdf.Graph or an mdf_engine Graph
    eg.evaluate(time_increment=None, array_format="numpy", initializer=None)
    eg.enodes["A"].evaluable_outputs["out"].curr_value
    eg.scheduler.execution_list[None]   # [set of nodes per consideration-set execution]
    eg = main("model.json")             # load, build, evaluate once

Expressions are compiled by :mod:`mdf_engine.expressions` (never Python ``eval``), and
modeci-mdf itself is not needed (``main`` reads files with mdf_engine's loader). Where this
differs from the reference:

* values are mdf_engine's (the same numbers; a whole-number result of a graph may be ``7.0``
  where the reference has ``7``, and ONNX ops keep the model's float32 where the reference
  returns float64); nodes of one time step run in declaration order (the reference: Python set
  order); ``reduce: add/multiply`` never changes the sender's arrays in place;
* inside a graph, ``curr_value`` is read-only and ``evaluate`` of a node or element belongs to
  the graph; an input port that has been read shows the value read (the reference: ``None``);
* ``main(file)`` runs the file's model as ``mdf run`` does: its ``onnx_opset_version`` (the
  reference always uses opset 15) and ``generating_application`` (PsyNeuLink's function
  versions) count; pass ``model=`` to ``EvaluableGraph`` for the same;
* ``array_format="tensorflow"`` raises; ``EvaluableGraph.parse_condition`` is not provided;
* errors are :class:`~mdf_engine.errors.MDFError` (a ``ValueError``) with a one-line message.
"""

from .elements import EvaluableFunction, EvaluableInput, EvaluableOutput, EvaluableParameter
from .expressions import (
    FORMAT_DEFAULT,
    FORMAT_NUMPY,
    FORMAT_TENSORFLOW,
    KNOWN_PARAMETERS,
    evaluate_expr,
    get_required_variables_from_expression,
)
from .graph import CompatScheduler, EvaluableGraph, EvaluableNode, main

__all__ = [
    "FORMAT_DEFAULT",
    "FORMAT_NUMPY",
    "FORMAT_TENSORFLOW",
    "KNOWN_PARAMETERS",
    "CompatScheduler",
    "EvaluableFunction",
    "EvaluableGraph",
    "EvaluableInput",
    "EvaluableNode",
    "EvaluableOutput",
    "EvaluableParameter",
    "evaluate_expr",
    "get_required_variables_from_expression",
    "main",
]
