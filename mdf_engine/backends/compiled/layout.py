"""Where a compiled graph keeps its values: slots, the layout, and the kind of a value.

Every port, parameter and function value of a compiled graph lives in one *slot* of the
compiled state: a float64 scalar in the table ``S``, a float64 array ``A<k>`` of a fixed shape,
or a tuple of such slots. :class:`Layout` maps each ``(node, key)`` to its slot and records what
the generated code reports (NaN/inf checks, recorded columns, bounds-checked fields); it is
stored in the compile cache as JSON.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import NotCompilable


@dataclass
class Slot:
    """Where one value lives in compiled state: scalar ``S[index]``, array ``A<index>``, or a
    tuple of such slots (``kind == "t"``, ``parts``: a tuple or list whose items differ in
    shape, such as PsyNeuLink's ``(v, w, time)``). ``seq`` is ``"list"`` or ``"tuple"`` when
    the model's value is one: a sequence of items of one shape lives in an array slot whose
    first axis are the items, and is read back as the sequence."""

    kind: str  # "s", "a" or "t"
    index: int
    shape: tuple[int, ...] = ()
    seq: str = ""
    parts: list[Slot] = dataclasses.field(default_factory=list)

    @property
    def var(self) -> str:
        """The slot's variable in generated code (a tuple's ``T<k>`` is never emitted: its
        items are read by constant indices, see ``ValueEmitter.value``)."""
        return {"s": "s", "a": "a", "t": "T"}[self.kind] + str(self.index)


def kind_of(value: Any, what: str) -> tuple[str, tuple[int, ...]]:
    """The slot kind (``"s"`` scalar or ``"a"`` array) and shape a value needs; NotCompilable
    for anything that is not a number or a numeric array (``what`` names it)."""
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return "s", ()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return ("s", ()) if value.ndim == 0 else ("a", value.shape)
    raise NotCompilable(f"{what} holds a {type(value).__name__}, not a number or numeric array")


@dataclass
class Layout:
    """Where a compiled graph keeps its values, and what its code reports."""

    slots: dict[tuple[str, str], Slot]
    #: node indices of each consideration set when the schedule is fixed, else None
    static: list[list[int]] | None
    #: (kind, name) of each value checked for NaN/inf, indexed by ``err[3]``
    finite_checks: list[tuple[str, str]]
    #: (node, name, first column, shape) of each value ``run_batch`` records
    record_columns: list[tuple[str, str, int, tuple[int, ...]]]
    record_width: int
    #: the field of each bounds-checked subscript of the generated code
    index_fields: list[str] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        keys = {id(s): [n, k] for (n, k), s in self.slots.items()}
        return {
            "slots": [
                [n, k, s.kind, s.index, list(s.shape), s.seq, [keys[id(p)] for p in s.parts]]
                for (n, k), s in self.slots.items()
            ],
            "static": self.static,
            "finite_checks": self.finite_checks,
            "record_columns": [[n, k, c, list(sh)] for n, k, c, sh in self.record_columns],
            "record_width": self.record_width,
            "index_fields": self.index_fields,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Layout:
        slots = {(r[0], r[1]): Slot(r[2], int(r[3]), tuple(r[4]), r[5]) for r in d["slots"]}
        for r in d["slots"]:
            slots[(r[0], r[1])].parts = [slots[(n, k)] for n, k in r[6]]
        return cls(
            slots,
            d["static"],
            [tuple(x) for x in d["finite_checks"]],
            [(n, k, int(c), tuple(sh)) for n, k, c, sh in d["record_columns"]],
            int(d["record_width"]),
            [str(f) for f in d.get("index_fields", [])],
        )
