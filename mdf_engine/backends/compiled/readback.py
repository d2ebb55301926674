"""Reading a compiled graph's output ports back after a run, with the lookups done once.

``Simulation.run`` returns every output port's value after each call; for a PsyNeuLink trial
(one ``run(steps=1)``) that read was a quarter of the call's Python time (a slot key built,
hashed and looked up per port, the node's index searched in a list). :func:`output_table`
resolves each port's slot once per layout; :func:`read_outputs` reads them as
:func:`.layout.read_slot` does (a copy of an array, a numpy number for a scalar).
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
