"""PsyNeuLink's two rules in the generated code (files whose ``generating_application`` is
PsyNeuLink; docs/semantics.md, "PsyNeuLink files"), as the interpreted backend runs them:

* **held external input**: an input node reads its trial input at every run of the update,
  not only at the first: before a node runs, each input port the initializer feeds that has
  no pending value gets the run's input argument (``I<k>``) again;
* **time steps read the values from before the step**: nodes of one time step (one
  consideration set) read their senders' outputs from before that step. Members of a set run
  in node order, so only an edge whose sender comes earlier in the receiver's set is affected:
  the sender copies the output it is about to replace into a snapshot slot
  (role ``SNAPSHOT``) and whether it had run before (``q_sv<i>``) when it runs; the receiver
  reads the snapshot when the sender ran in this time step (``q_x<s>``, or always under a
  fixed schedule where every member runs), else the sender's output.

In the node-by-node mode (graph-scheduler runs the schedule) neither rule is written: a graph
that needs one stays interpreted (:func:`mdf_engine.psyneulink_files.not_compiled_reason`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...errors import NotCompilable
from . import small_products
from .elementwise import aligned, element_at
from .layout import Role, SlotKey, Storage, output_key


class PsyNeuLinkRules:
    """The generator's code for PsyNeuLink's held inputs and time steps."""

    def psyneulink_rules(self) -> None:
        """Find the edges that read a snapshot and allocate the snapshots (after the slots and
        the schedule are known); a node-by-node graph refuses the rules it would need."""
        #: sender -> its output ports read from before the time step
        self.snapped: dict[str, list[str]] = {}
        #: (node, input port) -> k of the initializer argument ``I<k>`` it holds
        self.held: dict[tuple[str, str], int] = {}
        if not self.plan.psyneulink:
            return
        if self.node_by_node is not None:
            from ...psyneulink_files import not_compiled_reason

            why = not_compiled_reason(
                self.plan, self.interp.scheduler, self.initializer, self.interp.initial_outputs
            )
            if why:
                raise NotCompilable(why)
            return
        for k, key in enumerate(sorted(self.initializer)):
            for nid, port in self._initializer_targets(key):
                self.held[(nid, port)] = k
        for nid in self.spec.node_ids:
            for ep in self.plan.incoming[nid]:
                if self.reads_before_step(ep):
                    ports = self.snapped.setdefault(ep.sender, [])
                    if ep.sender_port not in ports:
                        ports.append(ep.sender_port)
        for sender, ports in self.snapped.items():
            outs = self.interp.states[sender].outputs
            where = self.plan.nodes[sender].where
            for port in ports:
                self.state.allocate(
                    SlotKey(sender, Role.SNAPSHOT, port), outs[port], f"{where}.output_ports.{port}"
                )

    def reads_before_step(self, ep: Any) -> bool:
        """``ep``'s sender runs earlier in its receiver's time step (PsyNeuLink files)."""
        if not self.plan.psyneulink or self.queue is None:
            return False
        s, r = self.node_index[ep.sender], self.node_index[ep.receiver]
        return s < r and self.set_of[s] == self.set_of[r]

    @functools.cached_property
    def set_of(self) -> dict[int, int]:
        """The consideration set of each node index."""
        starts, qnodes = self.queue
        return {
            int(qnodes[k]): q
            for q in range(len(starts) - 1)
            for k in range(starts[q], starts[q + 1])
        }

    def rules_before_run(self, nid: str, ind: str) -> list[str]:
        """Code at the start of node ``nid``'s run: its held inputs, then the snapshots of
        the outputs later members of its time step read."""
        out: list[str] = []
        i = self.node_index[nid]
        for (tn, port), k in self.held.items():
            if tn == nid:
                out.append(f"{ind}if {self.slots[SlotKey(nid, Role.FLAG, port)].var} == 0.0:")
                out += self.set_input(nid, port, f"I{k}", ind + "    ")
        for port in self.snapped.get(nid, ()):
            snap = self.slots[SlotKey(nid, Role.SNAPSHOT, port)]
            out.append(self.assign(snap, self.slots[output_key(nid, port)].var, ind))
        if nid in self.snapped:
            out.append(f"{ind}q_sv{i} = q_ev{i}")
        return out

    def snapshot_flags(self, ind: str) -> list[str]:
        """The ``q_sv`` locals, defined before the loop."""
        return [f"{ind}q_sv{self.node_index[n]} = False" for n in self.snapped]

    def edge_code(self, nid: str, ep: Any, ind: str) -> list[str]:
        """Code delivering edge ``ep`` into node ``nid`` (from a snapshot where the rule
        says so)."""
        s = self.node_index[ep.sender]
        if not self.reads_before_step(ep):
            return self.deliver(nid, ep, Role.OUTPUT, f"q_ev{s}", ind)
        if self.static is not None:  # every member of a set runs: always the snapshot
            return self.deliver(nid, ep, Role.SNAPSHOT, f"q_sv{s}", ind)
        return [
            f"{ind}if q_x{s}:",  # the sender ran earlier in this time step
            *self.deliver(nid, ep, Role.SNAPSHOT, f"q_sv{s}", ind + "    "),
            f"{ind}else:",
            *self.deliver(nid, ep, Role.OUTPUT, f"q_ev{s}", ind + "    "),
        ]

    def deliver(self, nid: str, ep: Any, role: Role, ever: str, ind: str) -> list[str]:
        """Code delivering edge ``ep`` into node ``nid``'s port: if ``ever`` (the sender has
        run), the sender's output (``role`` OUTPUT) or its snapshot (SNAPSHOT). In a
        PsyNeuLink file a sender that has not run sends its initial value (its outputs from
        its default inputs), and an edge into a port holding the trial's input adds to that
        input (the external input is one of the port's afferents)."""
        sender = self.slots[SlotKey(ep.sender, role, ep.sender_port)]
        out = [
            f"{ind}if {ever}:",
            *(
                self._projected_into(nid, ep, sender, sender.var, ind + "    ")
                or self.set_input(
                    nid, ep.receiver_port, self._sent(nid, ep, sender, sender.var), ind + "    "
                )
            ),
        ]
        first = self.interp.initial_outputs(ep.sender) if self.node_by_node is None else None
        if first is not None:
            value = np.asarray(first[ep.sender_port], dtype=float)
            if sender.kind is Storage.ARRAY and value.size == int(np.prod(sender.shape)):
                value = value.reshape(sender.shape)
            elif sender.kind is Storage.SCALAR and value.size == 1:
                value = float(value.reshape(-1)[0])
            else:
                raise NotCompilable(
                    f"edge '{ep.id}': the initial value of '{ep.sender}' has another shape "
                    "than its output"
                )
            src = self.consts.const(value)
            out += [
                f"{ind}else:",
                *(
                    self._projected_into(nid, ep, sender, src, ind + "    ")
                    or self.set_input(
                        nid, ep.receiver_port, self._sent(nid, ep, sender, src), ind + "    "
                    )
                ),
            ]
        return out

    def _projected_into(
        self, nid: str, ep: Any, sender: Any, src: str, ind: str
    ) -> list[str] | None:
        """A projection's product written straight into the receiving port's pending value,
        when the edge has no weight, the port takes it whole and holds no trial input (None
        otherwise): a small product (:mod:`.small_products`) as own arithmetic in the order
        this machine's BLAS sums it, a larger one by BLAS (``np.dot(src, M, pend)``: the same
        numbers as the product then copied, without a temporary array per delivery)."""
        m = getattr(ep, "matrix", None)
        if m is None or ep.has_weight or (nid, ep.receiver_port) in self.held:
            return None
        m = np.asarray(m, dtype=float)
        ip = next(p for p in self.plan.nodes[nid].inputs if p.id == ep.receiver_port)
        pend = self.slots[SlotKey(nid, Role.PENDING, ep.receiver_port)]
        if (
            ip.reduce != "overwrite"
            or m.ndim != 2
            or sender.kind is not Storage.ARRAY
            or sender.seq
            or len(sender.shape) not in (1, 2)
            or sender.shape[-1] != m.shape[0]
            or pend.kind is not Storage.ARRAY
            or pend.seq
            or pend.var == sender.var
            or self.slot_dtype(pend) != "float64"
            or self.slot_dtype(sender) != "float64"
        ):
            return None
        flag = self.slots[SlotKey(nid, Role.FLAG, ep.receiver_port)].var
        product = (*sender.shape[:-1], m.shape[1])
        if m.shape[0] == 1 and int(np.prod(sender.shape)) == 1 and aligned(pend.shape, product):
            # one row by a (1, n) matrix: each element one product added onto 0, as BLAS
            # computes it (a call and its setup cost more than the product)
            n = m.shape[1]
            x = element_at(src, tuple(sender.shape), "0")
            value = f"(0.0 + ({x} * {element_at(self.consts.const(m), m.shape)}))"
            return [
                f"{ind}for i_ in range({n}):",
                f"{ind}    e_ = float({value})",
                f"{ind}    {element_at(pend.var, tuple(pend.shape))} = e_",
                f"{ind}{flag} = 1.0",
            ]
        k, n = m.shape
        order = small_products.formula(k, n, len(sender.shape) == 2)
        if (
            order is not None
            and m.flags.c_contiguous  # (as the interpreter's matrix: another layout, another
            and int(np.prod(sender.shape)) == k  # BLAS kernel)
            and aligned(pend.shape, (n,))
        ):
            # a small product in the generated code's own arithmetic, summed as np.matmul
            # (the interpreter's BLAS) sums it here: a BLAS call costs more than its terms
            mat = self.consts.const(m)
            xs = [element_at(src, tuple(sender.shape), str(t)) for t in range(k)]
            value = small_products.element_source(order, xs, [f"{mat}[{t}, i_]" for t in range(k)])
            return [
                f"{ind}for i_ in range({n}):",
                f"{ind}    e_ = float({value})",
                f"{ind}    {element_at(pend.var, tuple(pend.shape))} = e_",
                f"{ind}{flag} = 1.0",
            ]
        if tuple(pend.shape) != product:
            return None
        return [f"{ind}np.dot({src}, {self.consts.const(m)}, {pend.var})", f"{ind}{flag} = 1.0"]

    def _sent(self, nid: str, ep: Any, sender: Any, src: str) -> str:
        """What edge ``ep`` delivers when its sender's value is ``src``."""
        if getattr(ep, "matrix", None) is not None:  # a PsyNeuLink projection
            m = np.asarray(ep.matrix, dtype=float)
            if (
                sender.kind is not Storage.ARRAY
                or sender.seq
                or len(sender.shape) not in (1, 2)
                or m.ndim != 2
                or sender.shape[-1] != m.shape[0]
            ):
                raise NotCompilable(
                    f"edge '{ep.id}': its projection matrix does not compile for this sender value"
                )
            src = f"np.dot({src}, {self.consts.const(m)})"
        val = f"{self.consts.const(ep.weight)} * {src}" if ep.has_weight else src
        if (nid, ep.receiver_port) in self.held:
            val = f"I{self.held[(nid, ep.receiver_port)]} + {val}"
        return val
