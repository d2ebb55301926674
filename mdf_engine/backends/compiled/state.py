"""The compiled state of a graph: a slot for every value, and its not-yet-run contents.

From a warmed-up interpreter every input port (its read value, its pending value and a flag),
function, parameter (and an "unset" flag) and output port gets a slot of the kind and shape
its value has; :meth:`CompiledState.cold_arrays` gives the state of a graph that has not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import NotCompilable
from ...plan import GraphPlan, ParameterPlan
from .layout import (
    Role,
    Slot,
    SlotKey,
    Storage,
    array_dtype,
    kind_of,
    output_key,
    scalar_bits,
    scalar_dtype,
    value_key,
)
from .variants import allocate_variant, find_variants


class CompiledState:
    """A slot for every value of a warmed-up graph (``slots``, with the scalar table's and the
    arrays' warm-up values), from which :meth:`cold_arrays` gives a graph that has not run."""

    def __init__(self, plan: GraphPlan, warm: Any, initializer: Mapping[str, Any]):
        self.slots: dict[SlotKey, Slot] = {}
        self.scalars: list[float] = []
        self.arrays: list[np.ndarray] = []
        self.n_tuples = 0
        #: values whose kind is the argument max()/min() chose (variants.py)
        self.variants = find_variants(plan, warm)
        self._allocate(plan, warm, initializer)
        if any(k not in self.slots or not self.slots[k].alts for k in self.variants):
            raise NotCompilable(
                "a value whose kind is the argument max()/min() chose is held in a sequence"
            )

    def allocate(self, key: SlotKey, value: Any, what: str) -> Slot:
        """A new slot ``key`` of the kind and shape of ``value`` (its warm-up value, which
        ``what`` names in an error); lists and tuples as in :meth:`_seq_slot`."""
        if key in self.variants:
            return allocate_variant(self, key, self.variants[key], value, what)
        if isinstance(value, (list, tuple)):
            return self._seq_slot(key, value, what)
        kind, shape = kind_of(value, what)
        if kind is Storage.SCALAR:
            dtype = scalar_dtype(value)
            slot = Slot(Storage.SCALAR, len(self.scalars), dtype=dtype)
            self.scalars.append(scalar_bits(value, dtype))
        else:
            slot = Slot(Storage.ARRAY, len(self.arrays), shape)
            self.arrays.append(np.array(value, dtype=array_dtype(value)))
        self.slots[key] = slot
        return slot

    def hold(self, value: np.ndarray) -> str:
        """The variable of a new read-only array slot holding the model constant ``value``
        (role :attr:`~.layout.Role.CONSTANT`; :mod:`.constants` decides which arrays)."""
        held = np.array(value, dtype=array_dtype(value))
        held.flags.writeable = False
        slot = Slot(Storage.ARRAY, len(self.arrays), held.shape)
        self.arrays.append(held)
        self.slots[SlotKey("", Role.CONSTANT, str(slot.index))] = slot
        return slot.var

    def _seq_slot(self, key: SlotKey, value: list | tuple, what: str) -> Slot:
        """A list or tuple of numbers and numeric arrays: one array slot when every item has
        one shape and dtype (the items along its first axis), else a tuple of slots (their
        keys ``key.item(k)``)."""
        seq = "tuple" if isinstance(value, tuple) else "list"
        if not value:
            raise NotCompilable(f"{what} holds an empty {seq}")
        flat = not any(isinstance(x, (list, tuple)) for x in value)
        if flat:
            for k, x in enumerate(value):
                kind_of(x, f"{what}[{k}]")
        dtypes = {array_dtype(np.asarray(x)) for x in value} if flat else set()
        if flat and len({np.shape(x) for x in value}) == 1 and len(dtypes) == 1:
            # (items of one shape and dtype: TopK's values and int64 indices are two slots)
            dtype = dtypes.pop()
            slot = self.allocate(key, np.array(value, dtype=dtype), what)
            if slot.kind is Storage.SCALAR:  # (a 0-d array cannot hold a sequence)
                raise NotCompilable(f"{what} holds an empty {seq}")
            slot.seq = seq
            return slot
        parts = [self.allocate(key.item(k), x, f"{what}[{k}]") for k, x in enumerate(value)]
        slot = Slot(Storage.TUPLE, self.n_tuples, (), seq, parts)
        self.n_tuples += 1
        self.slots[key] = slot
        return slot

    def _allocate(self, plan: GraphPlan, warm: Any, initializer: Mapping[str, Any]) -> None:
        for nid, np_ in plan.nodes.items():
            st = warm.states[nid]
            w = f"{np_.where}"
            for ip in np_.inputs:
                read = st.inputs_read.get(ip.id)
                slot = self.allocate(value_key(nid, ip.id), read, f"{w}.input_ports.{ip.id}")
                pend = st.pending[ip.id]
                pslot = self.allocate(
                    SlotKey(nid, Role.PENDING, ip.id),
                    read if pend is None else pend,
                    f"{w}.input_ports.{ip.id}",
                )
                if pslot.kind != slot.kind or pslot.shape != slot.shape:
                    raise NotCompilable(f"input port {nid}.{ip.id} changes shape")
                self.slots[SlotKey(nid, Role.FLAG, ip.id)] = Slot(Storage.SCALAR, len(self.scalars))
                self.scalars.append(0.0 if pend is None else 1.0)
            for fid, _ in np_.functions:
                self.allocate(value_key(nid, fid), st.funcs[fid], f"{w}.functions.{fid}")
            for pp in np_.parameters:
                key, value = value_key(nid, pp.id), st.lookup(pp.id)
                if value is None and is_absent(pp):
                    self.slots[key] = Slot(Storage.NONE, 0)
                elif text_constant(pp, value) is not None:
                    self.slots[key] = Slot(Storage.TEXT, 0, text=text_constant(pp, value))
                else:
                    self.allocate(key, value, f"{w}.parameters.{pp.id}")
                self.slots[SlotKey(nid, Role.UNSET, pp.id)] = Slot(
                    Storage.SCALAR, len(self.scalars)
                )
                self.scalars.append(0.0)
            for oid, _ in np_.outputs:
                self.allocate(output_key(nid, oid), st.outputs[oid], f"{w}.output_ports.{oid}")
        for key, value in initializer.items():
            kind_of(value, f"initializer '{key}'")

    def cold_arrays(
        self, fresh: Any, thresholds: list[tuple[str, str, Any]]
    ) -> dict[str, np.ndarray]:
        """The scalar table ``S``, every array ``A<k>`` and the values the ``thresholds``
        conditions read of a graph that has not run yet (``fresh``: an interpreter that has
        not run)."""
        S = np.array(self.scalars, dtype=np.float64) if self.scalars else np.zeros(1)
        A = [np.zeros_like(a) for a in self.arrays]
        for key, slot in self.slots.items():
            if key.role is Role.CONSTANT:
                A[slot.index] = self.arrays[slot.index]  # (read-only, shared)
            elif key.role is Role.UNSET:
                S[slot.index] = 1.0
            elif key.role is Role.FLAG:
                pend = fresh.states[key.node].pending[key.name]
                S[slot.index] = 0.0 if pend is None else 1.0
                if pend is not None:
                    target = self.slots[SlotKey(key.node, Role.PENDING, key.name)]
                    value = np.asarray(pend, dtype=np.float64)
                    if target.kind is Storage.SCALAR:
                        item = np.asarray(pend).reshape(-1)[0] if value.size else 0.0
                        S[target.index] = scalar_bits(item, target.dtype)
                    else:
                        A[target.index][...] = value
        return {
            "S": S,
            **{f"A{k}": a for k, a in enumerate(A)},
            "thr": threshold_values(fresh, thresholds),
        }


def is_absent(pp: ParameterPlan) -> bool:
    """A parameter declared with nothing to compute (no value, function, initial value,
    derivative or condition): its value is always None (an omitted optional input)."""
    return (
        pp.value is None
        and pp.call is None
        and pp.initial is None
        and pp.derivative is None
        and not pp.conditions
    )


def text_constant(pp: ParameterPlan, value: Any) -> str | tuple[str, ...] | None:
    """A constant parameter's text (a string, or a tuple of the strings of a list), else
    None."""
    if (
        pp.value is None
        or pp.value.expr is not None
        or pp.stateful
        or pp.conditions
        or pp.derivative is not None
        or pp.initial is not None
    ):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) == 1 and len(value):
        if all(isinstance(x, str) for x in value):
            return tuple(str(x) for x in value)
    return None


def threshold_values(interp: Any, thresholds: list[tuple[str, str, Any]]) -> np.ndarray:
    """The value each Threshold condition (``(node, name, indices)``) reads, as ``interp``
    holds it now."""
    # (imported here: the kinds import graph-scheduler, which a cached start does without)
    from ...schedulers.kinds.calls import threshold_number

    thr = np.zeros(max(1, len(thresholds)), dtype=np.float64)
    for k, (nid, name, indices) in enumerate(thresholds):
        thr[k] = threshold_number(interp.threshold_value(nid, name), indices, f"{nid}.{name}")
    return thr
