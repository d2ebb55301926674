"""Model values as generated code names them: constant-table entries and literals.

The security guarantee (see :mod:`.generated_source`): a number, string or array of the model
never becomes source text; it is an entry ``c<k>`` of the module's constant table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NotCompilable
from .generated_source import ConstantTable


class Constants:
    """How one generated module names model values: entries of its constant table
    (``table``), never text of the model; and the module's global definitions (``globals``)
    of the kernels it calls, whose registry strings come from the table too."""

    def __init__(self) -> None:
        #: every model number, string and array the source names (``c<k>``)
        self.table = ConstantTable()
        #: ``F<k> = _jit(...)`` and ``PY<k> = _python_kernel(...)`` lines of the module
        self.globals: list[str] = []
        #: numbers held by the table's arrays so far
        self.array_numbers = 0

    def const(self, value: Any) -> str:
        """The name of a model value in the constant table (integers and booleans keep their
        kind, other numbers are float64): generated source never holds model text (see
        :mod:`.generated_source`)."""
        if value is None:  # an attribute left at its default "not given"
            return "None"
        if isinstance(value, (bool, np.bool_)):
            return "True" if value else "False"
        if isinstance(value, (int, np.integer)):  # (an integer stays an integer, as its slot)
            return self.table.number(int(value))
        if isinstance(value, (float, np.floating)):
            return self.table.number(float(value))
        if isinstance(value, str):
            return self.table.text(value)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            if value.ndim == 0:
                return self.const(value.item())
            self._count(value.size)
            return self.table.array(value)
        if isinstance(value, (list, tuple)) and all(isinstance(x, (int, float)) for x in value):
            return self.table.array(np.array([float(x) for x in value]))
        raise NotCompilable(f"constant of type {type(value).__name__}")

    def _count(self, numbers: int) -> None:
        """Count an array's numbers; NotCompilable beyond the ``compiled_constants`` limit
        (Numba freezes every table array into the machine code it compiles)."""
        from ...limits import LIMITS, limit

        self.array_numbers += numbers
        most = limit("compiled_constants")
        if self.array_numbers > most:
            raise NotCompilable(
                f"its constant arrays hold more than {most:,} numbers, which the compiled "
                f"backend does not freeze into machine code ({LIMITS['compiled_constants'][0]} "
                "allows more)"
            )

    def is_float(self, name: str) -> bool:
        """Whether ``name`` is the table entry of a float64 number (an immutable scalar that
        element-wise code may read as it is)."""
        if not (name.startswith("c") and name[1:].isdigit()):
            return False
        k = int(name[1:])
        return k < len(self.table) and type(self.table.values[k]) is float

    def is_array(self, name: str) -> bool:
        """Whether ``name`` is the table entry of a numeric array."""
        if not (name.startswith("c") and name[1:].isdigit()):
            return False
        k = int(name[1:])
        return k < len(self.table) and isinstance(self.table.values[k], np.ndarray)

    def literal(self, value: Any) -> str:
        """The name of an expression's literal (ints stay ints, for indexing)."""
        if value is None:
            return "None"
        if isinstance(value, str):
            return self.table.text(value)
        return self.table.number(value)

    def kernel_global(self, var: str, helper: str, sch: Any, extra: str = "") -> None:
        """``var = helper(name, since, namespace[, extra])`` with the registry's strings from
        the constant table."""
        args = [
            self.table.text(sch.name),
            self.table.number(int(sch.since)),
            self.table.text(sch.namespace),
        ]
        self.globals.append(f"{var} = {helper}({', '.join(args)}{extra})")
