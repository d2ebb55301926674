"""Model values as generated code names them: constant-table entries, held arrays, literals.

The security guarantee (see :mod:`.generated_source`): a number, string or array of the model
never becomes source text; it is an entry ``c<k>`` of the module's constant table, or, for a
large array, a read-only array of the compiled state (``a<k>``, a slot of role
:attr:`~.layout.Role.CONSTANT`) passed to the generated function at run time.

Why large arrays are held, not frozen: Numba compiles a module global array into the machine
code as a literal (its bytes spelled out in the LLVM module, which is copied while linking),
so a network's weights and its ports' zero defaults (SqueezeNet 1.1: 3.5 M numbers) cost
gigabytes and minutes to compile. A held array costs an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import NotCompilable
from .generated_source import ConstantTable
from .layout import array_dtype

#: An array of more elements than this is held in the state, not frozen into machine code.
HOLD_ABOVE = 4096
#: Numbers frozen into one module at most: once the frozen arrays hold this many, every
#: further array is held whatever its size (so a graph of many small arrays compiles fast too).
FROZEN_MOST = 100_000


class Constants:
    """How one generated module names model values: entries of its constant table
    (``table``) or held arrays (``hold``), never text of the model; and the module's global
    definitions (``globals``) of the kernels it calls, whose registry strings come from the
    table too."""

    def __init__(self) -> None:
        #: every model number, string and small array the source names (``c<k>``)
        self.table = ConstantTable()
        #: ``F<k> = _jit(...)`` and ``PY<k> = _python_kernel(...)`` lines of the module
        self.globals: list[str] = []
        #: numbers held by the constant arrays so far (frozen and held)
        self.array_numbers = 0
        #: numbers of the arrays frozen into the table so far
        self.frozen_numbers = 0
        #: where a large array goes: the name of a read-only state array holding it (the
        #: generator's :meth:`.state.CompiledState.hold`); None freezes every array
        self.hold: Callable[[np.ndarray], str] | None = None
        self._held: dict[tuple, str] = {}

    def const(self, value: Any) -> str:
        """The name of a model value in the constant table or the held arrays (integers and
        booleans keep their kind, other numbers are float64): generated source never holds
        model text (see :mod:`.generated_source`)."""
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
            return self.array(value)
        if isinstance(value, (list, tuple)) and all(isinstance(x, (int, float)) for x in value):
            return self.array(np.array([float(x) for x in value]))
        raise NotCompilable(f"constant of type {type(value).__name__}")

    def array(self, value: np.ndarray) -> str:
        """The name of a numeric array: a table entry while it is small and the frozen
        numbers stay within :data:`FROZEN_MOST`, else a held array (equal arrays share one)."""
        n = int(value.size)
        if self.hold is None or (n <= HOLD_ABOVE and self.frozen_numbers + n <= FROZEN_MOST):
            before = len(self.table)
            name = self.table.array(value)
            if len(self.table) > before:  # (a new entry)
                self._count(n)
                self.frozen_numbers += n
            return name
        arr = np.ascontiguousarray(value, dtype=array_dtype(value))
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        name = self._held.get(key)
        if name is None:
            self._count(n)
            name = self._held[key] = self.hold(arr)
        return name

    def _count(self, numbers: int) -> None:
        """Count an array's numbers; NotCompilable beyond the ``compiled_constants`` limit
        (a memory bound: the compiled state holds its own copy of the model's arrays)."""
        from ...limits import LIMITS, limit

        self.array_numbers += numbers
        most = limit("compiled_constants")
        if self.array_numbers > most:
            raise NotCompilable(
                f"its constant arrays hold more than {most:,} numbers, more than the compiled "
                f"backend copies into its state ({LIMITS['compiled_constants'][0]} allows more)"
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
