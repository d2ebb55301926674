"""What a tier 0 program is made of while it is translated: operands (runs of heap elements
with a shape), the heap's layout, and the refusal :class:`NotTier0`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import NotCompilable


class NotTier0(NotCompilable):
    """Tier 0 cannot run this graph (the message says what); the generated code runs it."""


@dataclass
class Operand:
    """``size(shape)`` heap elements from ``off``; ``is_int``: the generated code would hold
    an integer (literals, loop counters)."""

    off: int
    shape: tuple[int, ...]
    is_int: bool = False

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class Heap:
    """The heap's layout while a program is translated: its initial contents."""

    values: list[float] = field(default_factory=list)

    def alloc(self, n: int, init: Any = None) -> int:
        off = len(self.values)
        if init is None:
            self.values.extend([0.0] * n)
        else:
            self.values.extend(float(x) for x in np.asarray(init, dtype=np.float64).reshape(-1))
        return off

    def image(self) -> np.ndarray:
        return np.array(self.values or [0.0], dtype=np.float64)
