"""Where a compiled graph keeps its values: slots, the layout, and the kind of a value.

Every port, parameter and function value of a compiled graph lives in one *slot* of the
compiled state (its :class:`Storage`: a float64 scalar in the table ``S``, an array ``A<k>``
of a fixed shape and the dtype the value has (:func:`array_dtype`: float32, float64, integers
and booleans keep their dtype), or a tuple of such slots). A slot is found by its
:class:`SlotKey`:
the node, the :class:`Role` the value plays there (a port's value, its pending value, ...) and
the port, parameter or function id. :class:`Layout` maps every key to its slot and records what
the generated code reports (NaN/inf checks, recorded columns, bounds-checked fields); it is
stored in the compile cache as JSON.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

from ...errors import NotCompilable


class Storage(Enum):
    """Where a slot's value lives; the value is the prefix of its variable in generated code."""

    #: a float64 in the scalar table ``S`` (a local ``s<k>`` in generated code)
    SCALAR = "s"
    #: an array of a fixed shape and dtype (the argument ``a<k>``)
    ARRAY = "a"
    #: a tuple of slots whose items differ in shape (``T<k>`` is never emitted: its items are
    #: read by constant indices)
    TUPLE = "T"
    #: no value at all: a parameter declared without one (an ONNX optional input exported as
    #: omitted, ``"sequence_lens": {}``), read as ``None`` (a kernel's omitted input)
    NONE = "None"
    #: a parameter whose constant value is text (a string, or a list of strings: an
    #: attribute such as RNN's ``activations``): not in the state; code names it by
    #: constant-table entries (``Slot.text``)
    TEXT = "text"


class Role(Enum):
    """What a slot holds for its node."""

    #: an input port's value as its node last read it, a function's value or a parameter's
    #: value (MDF gives the three one namespace of ids per node)
    VALUE = "value"
    #: an output port's value
    OUTPUT = "out"
    #: what edges (or the initializer) delivered to an input port since its node last ran
    PENDING = "pend"
    #: 1.0 while an input port has a pending value, else 0.0
    FLAG = "flag"
    #: 1.0 until a parameter's first evaluation, then 0.0
    UNSET = "unset"
    #: PsyNeuLink files: an output port's value from before its node's run in this time step
    #: (read by later members of the step, see pnl_rules.py)
    SNAPSHOT = "snap"
    #: a model constant array held in the state instead of frozen into the machine code
    #: (:mod:`.constants`): read-only, shared by every run and never copied
    CONSTANT = "const"
    #: which alternative a value whose kind is the argument max()/min() chose holds now
    #: (its index into the value slot's ``alts``, :mod:`.variants`)
    WON = "won"


class SlotKey(NamedTuple):
    """The key of a slot: ``node``, ``role``, the port, parameter or function id ``name``,
    and for an item of a tuple slot its place ``part`` (outermost index last)."""

    node: str
    role: Role
    name: str
    part: tuple[int, ...] = ()

    def item(self, k: int) -> SlotKey:
        """The key of item ``k`` of this key's tuple slot."""
        return self._replace(part=(k, *self.part))

    def to_json(self) -> list[Any]:
        """The key as JSON (the compile cache)."""
        return [self.node, self.role.value, self.name, list(self.part)]

    @classmethod
    def from_json(cls, r: list[Any]) -> SlotKey:
        """A key written by :meth:`to_json`."""
        return cls(str(r[0]), Role(r[1]), str(r[2]), tuple(int(k) for k in r[3]))


def value_key(node: str, name: str) -> SlotKey:
    """The key of an input port's, a function's or a parameter's value."""
    return SlotKey(node, Role.VALUE, name)


def output_key(node: str, port: str) -> SlotKey:
    """The key of an output port's value."""
    return SlotKey(node, Role.OUTPUT, port)


@dataclass
class Slot:
    """Where one value lives in compiled state: scalar ``S[index]``, array ``A<index>``, or a
    tuple of such slots (``parts``: a tuple or list whose items differ in shape, such as
    PsyNeuLink's ``(v, w, time)``). ``seq`` is ``"list"`` or ``"tuple"`` when the model's value
    is one: a sequence of items of one shape lives in an array slot whose first axis are the
    items, and is read back as the sequence."""

    kind: Storage
    index: int
    shape: tuple[int, ...] = ()
    seq: str = ""
    parts: list[Slot] = dataclasses.field(default_factory=list)
    #: a scalar's dtype: ``float64``, or ``int64`` / ``bool`` for an integer or boolean
    #: number, whose ``S`` entry holds its int64 bits (:func:`scalar_load`)
    dtype: str = "float64"
    #: a ``TEXT`` slot's constant: a string, or a tuple of them (a list in the model)
    text: str | tuple[str, ...] | None = None
    #: a variant's alternatives (dtype, shape) and its tag's ``S`` index (:mod:`.variants`)
    alts: list[tuple[str, tuple[int, ...]]] = dataclasses.field(default_factory=list)
    won: int = -1

    @property
    def var(self) -> str:
        """The slot's variable in generated code (a tuple's ``T<k>`` is never emitted: its
        items are read by constant indices, see ``ValueEmitter.value``; a ``NONE`` slot's
        is ``None`` itself)."""
        if self.kind is Storage.NONE:
            return "None"
        return self.kind.value + str(self.index)


#: The dtypes an array slot keeps as they are (issue 22: float32 stays float32, integers stay
#: integers, booleans booleans, as the interpreted backend and onnxruntime hold them); any
#: other number (float16, Python numbers, ...) is held as float64.
SLOT_DTYPES = frozenset(
    "float64 float32 int64 int32 int16 int8 uint64 uint32 uint16 uint8 bool".split()
)


def array_dtype(value: Any) -> type:
    """The dtype an array slot holds a value in: its own when it is one of
    :data:`SLOT_DTYPES`, else float64."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.name in SLOT_DTYPES:
        return dtype.type
    return np.float64


def numba_type(dtype: Any) -> str:
    """Numba's name of a slot dtype (``boolean`` for numpy's ``bool``)."""
    name = np.dtype(dtype).name
    return "boolean" if name == "bool" else name


def scalar_dtype(value: Any) -> str:
    """The dtype a scalar slot holds a number in: ``bool`` for a boolean, ``int64`` for an
    integer (Python's or numpy's, of up to 64 bits), else ``float64``."""
    dtype = np.asarray(value).dtype
    if dtype.kind == "b":
        return "bool"
    if dtype.kind in "iu" and dtype.name != "uint64":
        return "int64"
    return "float64"


def scalar_bits(value: Any, dtype: str) -> np.float64:
    """The ``S`` entry of a number held in a scalar slot of ``dtype`` (an integer or boolean:
    its int64 bits, so that every 64-bit integer is exact)."""
    if dtype == "float64":
        return np.float64(value)
    return np.array([int(value)], dtype=np.int64).view(np.float64)[0]


def scalar_load(slot: Slot) -> str:
    """Generated code reading a scalar slot from ``S``."""
    if slot.dtype == "float64":
        return f"S[{slot.index}]"
    bits = f"S.view(np.int64)[{slot.index}]"
    return f"{bits} != 0" if slot.dtype == "bool" else bits


def scalar_store(slot: Slot, ind: str) -> str:
    """Generated code storing a scalar slot's local into ``S``."""
    target = f"S[{slot.index}]" if slot.dtype == "float64" else f"S.view(np.int64)[{slot.index}]"
    return f"{ind}{target} = {slot.var}"


def kind_of(value: Any, what: str) -> tuple[Storage, tuple[int, ...]]:
    """The storage (scalar or array) and shape a value needs; NotCompilable for anything that
    is not a number or a numeric array (``what`` names it)."""
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return Storage.SCALAR, ()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return (Storage.SCALAR, ()) if value.ndim == 0 else (Storage.ARRAY, value.shape)
    raise NotCompilable(f"{what} holds a {type(value).__name__}, not a number or numeric array")


def fresh_state(cold: dict[str, Any], n_nodes: int) -> dict[str, Any]:
    """Compiled state equal to a graph of ``n_nodes`` nodes that has not run yet, from its
    ``cold`` values (``S``, the arrays ``A`` and the Threshold values ``thr``): the arrays a
    generated ``run`` updates in place."""
    n = n_nodes
    return {
        "S": cold["S"].copy(),
        # (a held constant is read-only: shared, never copied)
        "A": [a.copy() if a.flags.writeable else a for a in cold["A"]],
        "useable": np.zeros((n, n), dtype=np.int64),
        "total": np.zeros((3, n), dtype=np.int64),
        "clock": np.zeros(7, np.int64),
        "last_set": np.zeros(n, dtype=np.bool_),
        "ever": np.zeros(n, dtype=np.bool_),
        "thr": cold["thr"].copy(),
    }


def read_slot(state: dict[str, Any], slot: Slot) -> Any:
    """A slot's value in compiled ``state``, as the interpreted backend holds it (a float64,
    int64 or bool number, a copy of an array, a list or tuple of items)."""
    if slot.won >= 0:  # (a variant: its number in the kind of the alternative it holds)
        from .variants import read_variant

        held = dataclasses.replace(slot, won=-1)
        return read_variant(read_slot(state, held), slot, state["S"][slot.won])
    if slot.kind is Storage.SCALAR:
        if slot.dtype == "float64":
            return np.float64(state["S"][slot.index])
        bits = state["S"][slot.index : slot.index + 1].view(np.int64)[0]
        return np.bool_(bits != 0) if slot.dtype == "bool" else np.int64(bits)
    if slot.kind is Storage.NONE:
        return None
    if slot.kind is Storage.TEXT:  # (the interpreter holds a list of strings as an array)
        return slot.text if isinstance(slot.text, str) else np.array(slot.text)
    if slot.kind is Storage.TUPLE:
        items = [read_slot(state, p) for p in slot.parts]
    elif slot.seq:
        a = state["A"][slot.index]
        items = [a.dtype.type(x) if a.ndim == 1 else x.copy() for x in a]
    else:
        return state["A"][slot.index].copy()
    return tuple(items) if slot.seq == "tuple" else items


@dataclass
class Layout:
    """Where a compiled graph keeps its values, and what its code reports."""

    slots: dict[SlotKey, Slot]
    #: node indices of each consideration set when the schedule is fixed, else None
    static: list[list[int]] | None
    #: (kind, name) of each value checked for NaN/inf, indexed by ``err[3]``
    finite_checks: list[tuple[str, str]]
    #: (node, name, first column, shape) of each value ``run_batch`` records
    record_columns: list[tuple[str, str, int, tuple[int, ...]]]
    record_width: int
    #: the field of each bounds-checked subscript of the generated code
    index_fields: list[str] = dataclasses.field(default_factory=list)

    def lookup(self, node: str, name: str) -> Slot | None:
        """The slot of ``node``'s input port, parameter or function ``name``, else of its
        output port ``name`` (None when there is neither)."""
        return self.slots.get(value_key(node, name)) or self.slots.get(output_key(node, name))

    def to_json(self) -> dict[str, Any]:
        """The layout as JSON (the compile cache's record)."""
        keys = {id(s): key.to_json() for key, s in self.slots.items()}
        return {
            "slots": [
                [
                    key.to_json(),
                    s.kind.value,
                    s.index,
                    list(s.shape),
                    s.seq,
                    [keys[id(p)] for p in s.parts],
                    s.dtype,
                    s.text if s.text is None or isinstance(s.text, str) else list(s.text),
                    [[d, list(sh)] for d, sh in s.alts],
                    s.won,
                ]
                for key, s in self.slots.items()
            ],
            "static": self.static,
            "finite_checks": self.finite_checks,
            "record_columns": [[n, k, c, list(sh)] for n, k, c, sh in self.record_columns],
            "record_width": self.record_width,
            "index_fields": self.index_fields,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Layout:
        """A layout written by :meth:`to_json`."""
        rows = [(SlotKey.from_json(r[0]), r) for r in d["slots"]]
        slots = {
            key: Slot(
                Storage(r[1]),
                int(r[2]),
                tuple(r[3]),
                r[4],
                dtype=str(r[6]),
                text=r[7] if r[7] is None or isinstance(r[7], str) else tuple(r[7]),
                alts=[(str(d), tuple(sh)) for d, sh in r[8]] if len(r) > 8 else [],
                won=int(r[9]) if len(r) > 9 else -1,
            )
            for key, r in rows
        }
        for key, r in rows:
            slots[key].parts = [slots[SlotKey.from_json(p)] for p in r[5]]
        return cls(
            slots,
            d["static"],
            [tuple(x) for x in d["finite_checks"]],
            [(n, k, int(c), tuple(sh)) for n, k, c, sh in d["record_columns"]],
            int(d["record_width"]),
            [str(f) for f in d.get("index_fields", [])],
        )
