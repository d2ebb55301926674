"""The generated code of one node: what one run of a node does to the compiled state.

The same body is inlined into the whole-graph loop and wrapped as ``node_<i>`` for the
node-by-node mode; it follows the reference engine's order (incoming edges, input ports,
functions, parameters, outputs).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...errors import NotCompilable
from ...plan import ParameterPlan
from .into import IntoEmitter
from .layout import Role, Slot, SlotKey, Storage, output_key, value_key


class NodeCodeEmitter(IntoEmitter):
    """The code of one node's run: edges into input ports, input reads, functions,
    parameters (first values, Euler steps, conditions), outputs, Threshold values and
    NaN/inf checks."""

    def node_body(self, nid: str, ind: str) -> list[str]:
        """The code of one run of node ``nid`` (indented by ``ind``), in the reference's order."""
        np_ = self.plan.nodes[nid]
        i = self.node_index[nid]
        out = [f"{ind}# node {i}", *self.rules_before_run(nid, ind)]
        shared = self.shared_inputs  # (ports that are their sender's output: sharing.py)
        for ep in self.plan.incoming[nid]:  # (pnl_rules.py: edges, PsyNeuLinkRules's rules)
            if (nid, ep.receiver_port) not in shared:
                out += self.edge_code(nid, ep, ind)
        names: dict[str, str] = {}
        for ip in np_.inputs:
            if (nid, ip.id) in shared:
                names[ip.id] = self.slots[value_key(nid, ip.id)].var
                continue
            direct = getattr(self, "direct_inputs", {}).get((nid, ip.id))
            if direct is not None:  # (the initializer's argument: read_directly)
                slot = self.slots[value_key(nid, ip.id)]
                out.append(self.assign(slot, direct, ind))
                names[ip.id] = slot.var
                continue
            slot, pend = (
                self.slots[value_key(nid, ip.id)],
                self.slots[SlotKey(nid, Role.PENDING, ip.id)],
            )
            flag = self.slots[SlotKey(nid, Role.FLAG, ip.id)].var
            out.append(f"{ind}if {flag} != 0.0:")
            out.append(self.assign(slot, pend.var, ind + "    "))
            out.append(f"{ind}else:")
            default = self.fallback(ip, slot)
            out.append(self.assign(slot, self.consts.const(default), ind + "    "))
            out.append(f"{ind}{flag} = 0.0")
            names[ip.id] = slot.var
        for pp in np_.parameters:
            names[pp.id] = self.text_source(self.slots[value_key(nid, pp.id)])
        for pp in np_.parameters:
            out += self.first_value(nid, pp, names, ind)
        for k, (fid, cp) in enumerate(np_.functions):
            slot = self.slots[value_key(nid, fid)]
            expr = self.call(cp, names, out, ind, f"{i}_{k}", slot)
            if expr is not None:  # (None: the call wrote a sequence into its slot)
                out.append(self.assign(slot, expr, ind))
            names[fid] = slot.var
        for pp in np_.parameters:
            out += self.parameter(nid, i, pp, names, ind)
        for oid, vp in np_.outputs:
            slot = self.slots[output_key(nid, oid)]
            bare = vp.expr is not None and vp.expr.is_bare_name()
            if not (bare and names.get(vp.expr.tree.body.id) == slot.var):
                out += self.assign_value(slot, vp, names, ind)  # (else its value's slot)
        for k, (tn, name, indices) in enumerate(self.thresholds):
            if tn != nid:
                continue
            key = value_key(nid, name)
            if key not in self.slots:
                key = output_key(nid, name)
            slot = self.slots[key]
            v = slot.var
            for idx in indices or []:
                v += f"[{int(idx)}]"
            rest = slot.shape[len(indices or []) :] if slot.kind is Storage.ARRAY else ()
            if rest and int(np.prod(rest)) == 1:  # a one-element array is its element
                v += "[" + ", ".join(["0"] * len(rest)) + "]"
            out.append(f"{ind}q_th{k} = _scalar({v})")
        if self.spec.check_finite:
            checked = [
                ("parameter", pp.id, self.slots[value_key(nid, pp.id)])
                for pp in np_.parameters
                if self.slots[value_key(nid, pp.id)].kind not in (Storage.NONE, Storage.TEXT)
            ]
            checked += [("output port", o, self.slots[output_key(nid, o)]) for o, _ in np_.outputs]
            for kind, name, slot in checked:
                if self.slot_dtype(slot) != "float32" and self.slot_dtype(slot) != "float64":
                    continue  # (integers and booleans are finite)
                k = len(self.finite_checks)
                self.finite_checks.append((kind, name))
                out.append(f"{ind}if err[0] == 0 and not np.all(np.isfinite({slot.var})):")
                out.append(f"{ind}    err[0] = 1; err[1] = {i}; err[2] = q_c2; err[3] = {k}")
        out.append(f"{ind}q_ev{i} = True")
        return out

    def zero(self, slot: Slot) -> str:
        """The literal 0 in the kind of a slot's numbers: an integer for integers, else a
        float (a boolean slot refuses it at typing: its kind would change)."""
        return "0" if np.dtype(self.slot_dtype(slot)).kind in "iu" else "0.0"

    def fallback(self, ip: Any, slot: Slot) -> Any:
        """An unset port's value, in the kind of its slot (a size-1 array read by a scalar
        slot is its one element; a scalar read by an array slot fills the shape)."""
        fb = np.asarray(ip.fallback(), dtype=float)
        if slot.kind is Storage.SCALAR:
            if fb.size != 1:
                raise NotCompilable(
                    f"input port '{ip.id}' default has shape {fb.shape} but receives scalars"
                )
            x = fb.reshape(()).item()
            if slot.dtype == "float64":
                return x
            if x != int(x) or (slot.dtype == "bool" and x not in (0, 1)):
                raise NotCompilable(
                    f"input port '{ip.id}' default {x} is not of the {slot.dtype} it receives"
                )
            return bool(x) if slot.dtype == "bool" else int(x)
        dtype = self.arrays[slot.index].dtype  # (integer and boolean slots keep theirs)
        if fb.shape == slot.shape:
            return fb.astype(dtype)
        if fb.size == 1:
            return np.full(slot.shape, fb.reshape(()).item(), dtype=dtype)
        if fb.size == int(np.prod(slot.shape)):  # PsyNeuLink's (2,) default of (1, 2) values
            return fb.reshape(slot.shape).astype(dtype)
        raise NotCompilable(
            f"input port '{ip.id}' default has shape {fb.shape}, values {slot.shape}"
        )

    def text_source(self, slot: Slot) -> str:
        """How code names a slot's value: its variable, or for a ``TEXT`` slot its constant
        (a string's table entry, a tuple of them for a list)."""
        if slot.kind is not Storage.TEXT:
            return slot.var
        if isinstance(slot.text, str):
            return self.consts.table.text(slot.text)
        return "(" + "".join(f"{self.consts.table.text(t)}, " for t in slot.text) + ")"

    def read_directly(self, nid: str, ip: Any, val: str) -> bool:
        """Whether input port ``ip`` of ``nid`` reads the initializer argument ``val``
        (``I<k>``) straight into its value instead of through its pending value: under a fixed
        schedule where its node runs once per update and nothing else sends to the port, the
        pending value would be that argument at every read (and is read by no one else)."""
        if not hasattr(self, "direct_inputs"):
            self.direct_inputs: dict[tuple[str, str], str] = {}
        static = self.static
        return (
            static is not None
            and self.node_by_node is None
            and not self.plan.psyneulink
            and re.fullmatch(r"I\d+", val) is not None
            and ip.reduce == "overwrite"
            and not any(e.receiver_port == ip.id for e in self.plan.incoming[nid])
            and sum(m.count(self.node_index[nid]) for m in static) == 1
        )

    def initialized_ports(self) -> set[tuple[str, str]]:
        """The (node, input port) pairs an initializer key sets."""
        return {t for key in self.initializer for t in self._initializer_targets(key)}

    def set_input(self, nid: str, port: str, val: str, ind: str) -> list[str]:
        """Code delivering ``val`` to an input port (its pending value, combined by the port's
        reduce)."""
        ip = next(p for p in self.plan.nodes[nid].inputs if p.id == port)
        if self.read_directly(nid, ip, val):  # (its node reads the argument itself)
            self.direct_inputs[(nid, port)] = val
            return []
        pend = self.slots[SlotKey(nid, Role.PENDING, port)]
        flag = self.slots[SlotKey(nid, Role.FLAG, port)].var
        if ip.reduce == "overwrite":
            return [self.assign(pend, val, ind), f"{ind}{flag} = 1.0"]
        op = "+" if ip.reduce == "add" else "*"
        return [
            f"{ind}if {flag} != 0.0:",
            self.assign(pend, f"{pend.var} {op} {val}", ind + "    "),
            f"{ind}else:",
            self.assign(pend, val, ind + "    "),
            f"{ind}{flag} = 1.0",
        ]

    def first_value(
        self, nid: str, pp: ParameterPlan, names: dict[str, str], ind: str
    ) -> list[str]:
        """Code giving a never-evaluated parameter its first current value (the reference's
        get_current_value): the initial value of a stateful one (or 0), else its value with
        its own name read as 0."""
        slot = self.slots[value_key(nid, pp.id)]
        if (pp.value is None and pp.initial is None) or slot.kind is Storage.TEXT:
            return []
        flag = self.slots[SlotKey(nid, Role.UNSET, pp.id)].var
        if (nid, pp.id) in self.swept:
            expr = f"P[{self.swept[(nid, pp.id)]}]"
        elif pp.stateful:
            expr = self.zero(slot)
            if pp.initial is not None:
                expr = self.value(pp.initial, names)
        else:
            own = {**names, pp.id: "0.0"}
            lines = self.seq_assign(slot, pp.value, own, ind + "    ")
            if lines is not None:
                return [f"{ind}if {flag} != 0.0:", *lines]
            expr = self.value(pp.value, own)
        return [f"{ind}if {flag} != 0.0:", self.assign(slot, expr, ind + "    ")]

    def parameter(
        self, nid: str, i: int, pp: ParameterPlan, names: dict[str, str], ind: str
    ) -> list[str]:
        """Code evaluating a parameter (value, function, Euler step, conditions) into its slot."""
        slot = self.slots[value_key(nid, pp.id)]
        if slot.kind in (Storage.NONE, Storage.TEXT):  # (named by its constant, see text_source)
            return []
        out: list[str] = []
        node = self.plan.nodes[nid]
        tmp = f"p_{i}_{node.parameters.index(pp)}"
        swept = self.swept.get((nid, pp.id))
        unset = self.slots[SlotKey(nid, Role.UNSET, pp.id)].var
        if (
            swept is None
            and pp.value is not None
            and pp.value.expr is None
            and not pp.conditions
            and not pp.stateful
        ):
            # a constant: its slot holds it from the first evaluation on (first_value)
            return [f"{ind}{unset} = 0.0"]
        if slot.alts and swept is None and pp.value is not None and not pp.conditions:
            # (a value whose kind is the argument max()/min() chose sets its tag: variants.py)
            return [self.assign(slot, self.value(pp.value, names), ind), f"{ind}{unset} = 0.0"]
        into = self.kernel_into(nid, i, pp, slot, names, ind)
        if into is not None:  # (the kernel wrote the value into its slot, or its pair's did)
            return [*into, f"{ind}{unset} = 0.0"]
        fused = self.fused_parameter(nid, pp, slot, names, ind)
        if (
            fused is None
            and swept is None
            and not pp.conditions
            and pp.value is not None
            and slot.kind is Storage.ARRAY
        ):
            product = self.matmul_into(slot, pp.value, names)
            fused = [f"{ind}{product}"] if product is not None else None
        if fused is None and swept is None and not pp.conditions:
            fused = self.seq_assign(slot, pp.value, names, ind)
        if fused is not None:
            return [*fused, f"{ind}{unset} = 0.0"]
        if swept is not None and not pp.stateful and pp.derivative is None:
            out.append(f"{ind}{tmp} = P[{swept}]")
        elif pp.value is not None:
            out.append(f"{ind}{tmp} = {self.value(pp.value, names)}")
        elif pp.call is not None:
            expr = self.call(
                pp.call,
                names,
                out,
                ind,
                f"{i}_{len(node.functions) + node.parameters.index(pp)}",
                slot,
                fuse=not pp.conditions,
            )
            if expr is None:
                if pp.conditions:
                    raise NotCompilable(f"parameter {nid}.{pp.id}: a sequence with conditions")
                return [*out, f"{ind}{unset} = 0.0"]
            out.append(f"{ind}{tmp} = {expr}")
        elif pp.derivative is not None:
            if pp.initial is None:
                raise NotCompilable(
                    f"parameter {nid}.{pp.id} has a time_derivative but no default_initial_value"
                )
            out.append(f"{ind}if has_dt:")
            out.append(f"{ind}    {tmp} = {slot.var} + ({self.value(pp.derivative, names)}) * dt")
            out.append(f"{ind}else:")
            first = f"P[{swept}]" if swept is not None else self.value(pp.initial, names)
            if slot.kind is Storage.ARRAY:  # an integer initial value of a float value
                first = f"_like({slot.var}, {first})"
            out.append(f"{ind}    {tmp} = {first}")
        elif pp.conditions:
            # set only by its conditions: the previous value, 0 before the first evaluation
            # (the reference: None, then 0.0 under the first condition)
            out.append(f"{ind}if {unset} != 0.0:")
            out.append(f"{ind}    {tmp} = {self.zero(slot)} * {slot.var}")
            out.append(f"{ind}else:")
            out.append(f"{ind}    {tmp} = {slot.var}")
        else:
            raise NotCompilable(f"parameter {nid}.{pp.id} has only a default_initial_value")
        for k, (_cid, test, val) in enumerate(pp.conditions):
            out.append(
                f"{ind}{tmp} = _where({self.value(test, names)}, "
                f"{self.value(val, names)}, {tmp})  # condition {k}"
            )
        out.append(self.assign(slot, tmp, ind))
        out.append(f"{ind}{unset} = 0.0")
        return out
