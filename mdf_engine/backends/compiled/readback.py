"""Reading a compiled graph's output ports back after a run, with the lookups done once.

``Simulation.run`` returns every output port's value after each call; for a PsyNeuLink trial
(one ``run(steps=1)``) that read was a quarter of the call's Python time (a slot key built,
hashed and looked up per port, the node's index searched in a list). :func:`output_table`
resolves each port's slot once per layout; :func:`read_outputs` reads them as
:func:`.layout.read_slot` does (a copy of an array, a numpy number for a scalar).
:class:`Reader` holds that table and, for ``value(node, name)``, each name's slot and its
node's ``ever`` entry, resolved at the first read (a one-inference CNN's ``value`` took
~4 us looking them up again); :class:`StateReads` is the compiled runner's reading side
(``value``, ``outputs``, ``slot_value``) over it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .layout import Layout, Slot, Storage, output_key, read_slot

#: per node: (node id, its index in the ``ever`` row, [(output port id, slot)])
OutputTable = list[tuple[str, int, list[tuple[str, Slot]]]]


def output_table(layout: Layout, node_ids: list[str], outputs: Mapping[str, Any]) -> OutputTable:
    """Each node's output slots (``outputs[node]``: the plan's ``(port id, ...)`` pairs)."""
    return [
        (nid, k, [(oid, layout.slots[output_key(nid, oid)]) for oid, _ in outputs[nid]])
        for k, nid in enumerate(node_ids)
    ]


def read_outputs(
    state: dict[str, Any], table: OutputTable, unrun: Callable[[], dict[str, dict[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Every node's output values in ``state``; a node that has not run (its ``ever`` entry
    False) gets its values from ``unrun()``, called at most once."""
    ever = state.get("ever")
    arrays, scalars = state["A"], state["S"]
    out: dict[str, dict[str, Any]] = {}
    others = None
    for nid, k, ports in table:
        if ever is not None and not ever[k]:
            if others is None:
                others = unrun()
            out[nid] = others[nid]
            continue
        values = {}
        for oid, slot in ports:
            if slot.won >= 0:  # (a variant: read in the kind it holds, variants.py)
                values[oid] = read_slot(state, slot)
            elif slot.kind is Storage.ARRAY and not slot.seq:
                values[oid] = arrays[slot.index].copy()
            elif slot.kind is Storage.SCALAR and slot.dtype == "float64":
                values[oid] = np.float64(scalars[slot.index])
            else:
                values[oid] = read_slot(state, slot)
        out[nid] = values
    return out


#: :meth:`Reader.read`'s answer for a value the compiled state does not hold
UNREAD = object()


class Reader:
    """The values of one layout's compiled state, as ``value`` and ``outputs`` read them
    (``outputs[node]``: the plan's ``(port id, ...)`` pairs of each node)."""

    def __init__(self, layout: Layout, node_ids: list[str], outputs: Mapping[str, Any]):
        self.layout = layout
        self._index = {nid: k for k, nid in enumerate(node_ids)}
        #: per (node, name): its slot, its node's ``ever`` index, and a plain array slot's
        #: index in ``A`` (else -1)
        self._slots: dict[tuple[str, str], tuple[Slot | None, int, int]] = {}
        self._node_ids, self._outputs = node_ids, outputs
        self._table: OutputTable | None = None

    def outputs(
        self, state: dict[str, Any], unrun: Callable[[], dict[str, dict[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """Every node's output values (:func:`read_outputs`)."""
        if self._table is None:
            self._table = output_table(self.layout, self._node_ids, self._outputs)
        return read_outputs(state, self._table, unrun)

    def read(self, state: dict, node: str, name: str) -> Any:
        """The value of ``node``'s ``name`` in ``state``; :data:`UNREAD` when the layout has
        no slot for it or ``node`` has not run (its ``ever`` entry False)."""
        hit = self._slots.get((node, name))
        if hit is None:
            slot = self.layout.lookup(node, name)
            plain = slot is not None and slot.kind is Storage.ARRAY and not slot.seq
            hit = (slot, self._index.get(node, -1), slot.index if plain and slot.won < 0 else -1)
            self._slots[(node, name)] = hit
        slot, k, plain = hit
        ever = state.get("ever")
        if slot is None or (ever is not None and not ever[k]):
            return UNREAD
        return state["A"][plain].copy() if plain >= 0 else read_value(state, slot)


def read_value(state: dict, slot: Slot) -> Any:
    """A slot's value (:func:`.layout.read_slot`), a plain array slot read directly."""
    if slot.kind is Storage.ARRAY and not slot.seq and slot.won < 0:
        return state["A"][slot.index].copy()
    return read_slot(state, slot)


class StateReads:
    """The compiled runner's reads of its state (:class:`.graph.CompiledGraph` derives from
    it): ``_layout``, ``_state``, ``_reader``, ``plan``, ``node_ids``, ``_live``, ``_nodes``
    and ``interp`` are the runner's."""

    _layout: Layout
    _state: dict[str, Any]
    _reader: Reader | None
    plan: Any
    node_ids: list[str]
    _live: bool
    _nodes: Any
    handover: Any
    interp: Any

    def value(self, node: str, name: str) -> Any:
        """The current value of an input port, parameter, function or output port (looked up
        in that order, as the interpreted backend does)."""
        state = self._state  # (not _live, and no nodes run node by node: the interpreter's)
        if self._nodes is None and (state is None or self.handover is not None):
            return self.interp.value(node, name)
        reader = self._reader
        if reader is None or reader.layout is not self._layout:
            reader = self._reads()
        got = reader.read(state, node, name)
        # (unread: its error names what is missing; an unrun node's slot holds warm-up values)
        return self.interp.value(node, name) if got is UNREAD else got

    def outputs(self) -> dict[str, dict[str, Any]]:
        """Every node's output port values."""
        if not self._live and self._nodes is None:
            return self.interp.outputs()
        return self._reads().outputs(self._state, lambda: self.interp.outputs())

    def slot_value(self, key: Any) -> Any:
        """The compiled state's value of the slot ``key`` (a :class:`.layout.SlotKey`)."""
        return read_value(self._state, self._layout.slots[key])

    def _reads(self) -> Reader:
        """The reader of the current layout's values."""
        if self._reader is None or self._reader.layout is not self._layout:
            outs = {nid: self.plan.nodes[nid].outputs for nid in self.node_ids}
            self._reader = Reader(self._layout, self.node_ids, outs)
        return self._reader
