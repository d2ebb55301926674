"""The compiled state of a graph: a slot for every value, and its not-yet-run contents.

From a warmed-up interpreter every input port (its read value, its pending value and a flag),
function, parameter (and an "unset" flag) and output port gets a slot of the kind and shape
its value has; :meth:`StateAllocator.cold_arrays` gives the state of a graph that has not run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NotCompilable
from .layout import Layout, Slot, kind_of


class StateAllocator:
    """Slots for every value of a warmed-up graph (``self.interp``), and the cold state."""

    def _slot(self, key: tuple[str, str], value: Any, what: str) -> Slot:
        if isinstance(value, (list, tuple)):
            return self._seq_slot(key, value, what)
        kind, shape = kind_of(value, what)
        if kind == "s":
            slot = Slot("s", len(self.scalars))
            self.scalars.append(float(np.asarray(value, dtype=float)))
        else:
            slot = Slot("a", len(self.arrays), shape)
            self.arrays.append(np.array(value, dtype=np.float64))
        self.slots[key] = slot
        return slot

    def _seq_slot(self, key: tuple[str, str], value: list | tuple, what: str) -> Slot:
        """A list or tuple of numbers and numeric arrays: one array slot when every item has
        one shape (the items along its first axis), else a tuple of slots (``part<k>:``)."""
        seq = "tuple" if isinstance(value, tuple) else "list"
        if not value:
            raise NotCompilable(f"{what} holds an empty {seq}")
        flat = not any(isinstance(x, (list, tuple)) for x in value)
        if flat:
            for k, x in enumerate(value):
                kind_of(x, f"{what}[{k}]")
        if flat and len({np.shape(x) for x in value}) == 1:
            slot = self._slot(key, np.array(value, dtype=np.float64), what)
            if slot.kind == "s":  # (a 0-d array cannot hold a sequence)
                raise NotCompilable(f"{what} holds an empty {seq}")
            slot.seq = seq
            return slot
        parts = [
            self._slot((key[0], f"part{k}:{key[1]}"), x, f"{what}[{k}]")
            for k, x in enumerate(value)
        ]
        slot = Slot("t", self.n_tuples, (), seq, parts)
        self.n_tuples += 1
        self.slots[key] = slot
        return slot

    def _allocate(self) -> None:
        for nid, np_ in self.plan.nodes.items():
            st = self.interp.states[nid]
            w = f"{np_.where}"
            for ip in np_.inputs:
                read = st.inputs_read.get(ip.id)
                slot = self._slot((nid, ip.id), read, f"{w}.input_ports.{ip.id}")
                pend = st.pending[ip.id]
                pslot = self._slot(
                    (nid, "pend:" + ip.id),
                    read if pend is None else pend,
                    f"{w}.input_ports.{ip.id}",
                )
                if pslot.kind != slot.kind or pslot.shape != slot.shape:
                    raise NotCompilable(f"input port {nid}.{ip.id} changes shape")
                self.slots[(nid, "flag:" + ip.id)] = Slot("s", len(self.scalars))
                self.scalars.append(0.0 if pend is None else 1.0)
            for fid, _ in np_.functions:
                self._slot((nid, fid), st.funcs[fid], f"{w}.functions.{fid}")
            for pp in np_.parameters:
                self._slot((nid, pp.id), st.lookup(pp.id), f"{w}.parameters.{pp.id}")
                self.slots[(nid, "unset:" + pp.id)] = Slot("s", len(self.scalars))
                self.scalars.append(0.0)
            for oid, _ in np_.outputs:
                self._slot((nid, "out:" + oid), st.outputs[oid], f"{w}.output_ports.{oid}")
        for key, value in self.initializer.items():
            kind_of(value, f"initializer '{key}'")
        self._check_call_inputs()

    def layout(self) -> Layout:
        return Layout(
            self.slots,
            self.static,
            self.finite_checks,
            self.record_columns,
            self.record_width,
            self.index_fields,
        )

    def cold_arrays(self, fresh: Any) -> dict[str, np.ndarray]:
        """The scalar table ``S``, every array ``A<k>`` and the Threshold values of a graph
        that has not run yet (``fresh``: an interpreter that has not run)."""
        S = np.array(self.scalars, dtype=np.float64) if self.scalars else np.zeros(1)
        A = [np.zeros_like(a) for a in self.arrays]
        for (nid, key), slot in self.slots.items():
            if key.startswith("unset:"):
                S[slot.index] = 1.0
            elif key.startswith("flag:"):
                pend = fresh.states[nid].pending[key[5:]]
                S[slot.index] = 0.0 if pend is None else 1.0
                if pend is not None:
                    target = self.slots[(nid, "pend:" + key[5:])]
                    value = np.asarray(pend, dtype=np.float64)
                    if target.kind == "s":
                        S[target.index] = float(value.reshape(-1)[0]) if value.size else 0.0
                    else:
                        A[target.index][...] = value
        return {
            "S": S,
            **{f"A{k}": a for k, a in enumerate(A)},
            "thr": self.threshold_values(fresh),
        }

    def threshold_values(self, interp: Any) -> np.ndarray:
        """The value each Threshold condition reads, as ``interp`` holds it now."""
        thr = np.zeros(max(1, len(self.thresholds)), dtype=np.float64)
        for k, (nid, name, indices) in enumerate(self.thresholds):
            v = interp.threshold_value(nid, name)
            for i in indices or []:
                v = v[i]
            thr[k] = float(v)
        return thr

    # -- source ---------------------------------------------------------------------------
