"""Slot sharing: values the generated code would only copy live in one array instead.

A compiled node's value used to travel through four array slots, each a copy of the last: the
function's (or parameter's) value, the output port, the next node's pending input and the
input port it reads. Two kinds of slot are shared, decided once the slots and the schedule are
known (before any code is written), and only where every value a user can read afterwards
(``Simulation.value``, outputs, recorded columns, the compile cache's state) stays the one the
copies gave:

* **an output port whose value is one of its node's names** (``"value": "Conv_1"``: a function,
  parameter or input port of the same node, with the same array shape and dtype) *is* that
  value's slot. Both are written only in their node's body, the output last, from that very
  value, so after every run of the node they hold the same numbers; before the node's first
  run ``value()`` asks the interpreter. This holds under any schedule.
* **an input port fed by one plain edge** (no weight, no PsyNeuLink projection, an
  ``overwrite`` port that no initializer key sets, the sender's output of the same shape and
  dtype) *is* the sender's output slot when the schedule is fixed (every node runs once per
  update, ``static_sets``) and the sender runs before the receiver: the edge is
  delivered (and the port read) at every run of the receiver, always after the sender's run
  of the same update, and the sender does not run again before the update ends. So at the end
  of every update, where runs end and records are taken, the port holds what it read. Under
  conditions (a sender that may run twice, or after its receiver), in cycles and in
  PsyNeuLink files (their time-step and held-input rules) ports keep their own slots.

Several receivers of one sender all read its one slot: none of them writes to an input port.
Every shared array has one writer (its node's value); nothing is reused between values that
merely do not live at the same time, since a user may read any of them after a run.

A run stopped by an error in the middle of an update (a failed bounds check) leaves the
ports of the nodes after the failing one showing their senders' new outputs, where the
interpreter's show the previous update's: the state after an error is not a result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...plan import GraphPlan
from .layout import Role, Slot, SlotKey, Storage, output_key, value_key


def share_slots(
    state: Any,
    plan: GraphPlan,
    node_ids: list[str],
    static: list[list[int]] | None,
    initialized: Iterable[tuple[str, str]],
) -> set[tuple[str, str]]:
    """Share slots in ``state`` (a :class:`~.state.CompiledState`, changed in place: its
    slots, and its arrays renumbered without the ones no key uses any more) as the module
    docstring says. ``static`` is the fixed schedule's consideration sets of node indices (or
    None), ``initialized`` the (node, port) pairs an initializer key sets. Returns the
    (node, input port) pairs that read their sender's output slot: their code reads no edge
    and no pending value."""
    slots: dict[SlotKey, Slot] = state.slots
    arrays: list[np.ndarray] = state.arrays

    def same(a: Slot | None, b: Slot | None) -> bool:
        return (
            a is not None
            and b is not None
            and a.kind is Storage.ARRAY
            and b.kind is Storage.ARRAY
            and tuple(a.shape) == tuple(b.shape)
            and a.seq == b.seq
            and arrays[a.index].dtype == arrays[b.index].dtype
            and a.alts == b.alts  # (a variant's tag, variants.py)
        )

    parent: dict[SlotKey, SlotKey] = {}  # key -> the key whose slot it shares
    for nid, np_ in plan.nodes.items():  # outputs that are one of their node's values
        for oid, vp in np_.outputs:
            if vp.expr is None or not vp.expr.is_bare_name():
                continue
            source = value_key(nid, vp.expr.tree.body.id)
            if same(slots.get(source), slots.get(output_key(nid, oid))):
                parent[output_key(nid, oid)] = source
    shared: set[tuple[str, str]] = set()
    if static is not None and not plan.psyneulink:
        runs = [m for members in static for m in members]  # (one update, in order)
        index = {nid: i for i, nid in enumerate(node_ids)}
        initialized = set(initialized)
        for nid, np_ in plan.nodes.items():
            for ip in np_.inputs:
                edges = [e for e in plan.incoming[nid] if e.receiver_port == ip.id]
                if len(edges) != 1 or ip.reduce != "overwrite" or (nid, ip.id) in initialized:
                    continue
                e = edges[0]
                s, r = index[e.sender], index[nid]
                if (
                    e.has_weight
                    or getattr(e, "matrix", None) is not None
                    or runs.count(s) != 1
                    or runs.count(r) != 1
                    or not runs.index(s) < runs.index(r)
                ):
                    continue
                sender = output_key(e.sender, e.sender_port)
                if not same(slots.get(sender), slots.get(value_key(nid, ip.id))):
                    continue
                parent[value_key(nid, ip.id)] = sender
                del slots[SlotKey(nid, Role.PENDING, ip.id)]
                del slots[SlotKey(nid, Role.FLAG, ip.id)]
                shared.add((nid, ip.id))
    for key in parent:  # (chains end: a receiver reads its sender's earlier senders' values)
        root = key
        while root in parent:
            root = parent[root]
        slots[key] = slots[root]
    _drop_unused_arrays(slots, arrays)
    return shared


def _drop_unused_arrays(slots: dict[SlotKey, Slot], arrays: list[np.ndarray]) -> None:
    """Remove the arrays no slot uses any more and renumber the array slots (in place)."""
    unique = {id(s): s for s in slots.values() if s.kind is Storage.ARRAY}
    used = sorted({s.index for s in unique.values()})
    if len(used) == len(arrays):
        return
    new = {old: k for k, old in enumerate(used)}
    arrays[:] = [arrays[old] for old in used]
    for s in unique.values():
        s.index = new[s.index]
