"""A drop-in for ``modeci_mdf.execution_engine``: change one import and an existing script or
test suite runs on mdf_engine.

    from mdf_engine.compat import EvaluableGraph, EvaluableParameter, main
    eg = EvaluableGraph(graph)          # a modeci_mdf.mdf.Graph or an mdf_engine Graph
    eg.evaluate(time_increment=None, array_format="numpy", initializer=None)
    eg.enodes["A"].evaluable_outputs["out"].curr_value
    eg.scheduler.execution_list[None]   # [set of nodes per consideration-set execution]
    eg = main("model.json")             # load, build, evaluate once

Expressions are compiled by :mod:`mdf_engine.expressions` (never Python ``eval``), and
modeci-mdf itself is not needed. Only numpy arrays are supported (``array_format="tensorflow"``
raises :class:`~mdf_engine.errors.MDFError`).
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
