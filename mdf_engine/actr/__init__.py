"""ACT-R in MDF: the ACT-R functions (registered in namespace ``actr``), a builder for ACT-R
production-system graphs in the layout of modeci-mdf's ``actr_to_mdf``, and the cycle driver.

Importing this package registers the functions. ``build_model``/``build_model_dict``/``run_model``
come from :mod:`mdf_engine.actr.builder`.
"""

from .builder import build_model, build_model_dict, run_model
from .functions import (
    change_goal,
    check_termination,
    chunk_to_string,
    conflict_resolution_function,
    match_production,
    pattern_matching_function,
    pattern_to_string,
    retrieve_chunk,
    update_buffer,
    update_goal,
    update_retrieval,
)

__all__ = [
    "build_model",
    "build_model_dict",
    "run_model",
    "change_goal",
    "check_termination",
    "chunk_to_string",
    "conflict_resolution_function",
    "match_production",
    "pattern_matching_function",
    "pattern_to_string",
    "retrieve_chunk",
    "update_buffer",
    "update_goal",
    "update_retrieval",
]
