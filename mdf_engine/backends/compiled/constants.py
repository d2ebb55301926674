"""Model values as generated code names them: constant-table entries and literals.

The security guarantee (see :mod:`.generated_source`): a number, string or array of the model
never becomes source text; it is an entry ``c<k>`` of the module's constant table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NotCompilable
from .generated_source import ConstantTable


class ConstantEmitter:
    """How generated code names a model value: an entry of the constant table, never text of
    the model (``self.constants``: the module's ConstantTable, ``self.globals``: its global
    definitions)."""

    constants: ConstantTable
    globals: list[str]

    def const(self, value: Any) -> str:
        """The name of a model value in the constant table (numbers as float64): generated
        source never holds model text (see :mod:`mdf_engine.generated_source`)."""
        if value is None:  # an attribute left at its default "not given"
            return "None"
        if isinstance(value, (bool, np.bool_)):
            return "True" if value else "False"
        if isinstance(value, (int, float, np.integer, np.floating)):
            return self.constants.number(float(value))
        if isinstance(value, str):
            return self.constants.text(value)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            if value.ndim == 0:
                return self.const(value.item())
            return self.constants.array(value)
        if isinstance(value, (list, tuple)) and all(isinstance(x, (int, float)) for x in value):
            return self.constants.array(np.array([float(x) for x in value]))
        raise NotCompilable(f"constant of type {type(value).__name__}")

    def literal(self, value: Any) -> str:
        """The name of an expression's literal (ints stay ints, for indexing)."""
        if value is None:
            return "None"
        if isinstance(value, str):
            return self.constants.text(value)
        return self.constants.number(value)

    def _kernel_global(self, var: str, helper: str, sch: Any, extra: str = "") -> None:
        """``var = helper(name, since, namespace[, extra])`` with the registry's strings from
        the constant table."""
        args = [
            self.constants.text(sch.name),
            self.constants.number(int(sch.since)),
            self.constants.text(sch.namespace),
        ]
        self.globals.append(f"{var} = {helper}({', '.join(args)}{extra})")
