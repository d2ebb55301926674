"""Kernels that write their values straight into their slots, and the fused Conv ->
BatchNormalization -> Relu chains of generated code (issue 22, goal 5).

A parameter computed by one call of a kernel of :data:`INTO_KERNELS` (Conv, inference
BatchNormalization) passes its slot to the kernel, which writes the value there: no new array
per update and no ``_put`` copy into the slot. The plan stage decides which nodes may run as
one (``plan.fusion``: ``conv_bn_pairs``, ``bn_relu_pairs``); here, under a fixed schedule in
one loop (each node runs once per update, in the plan's order) and without NaN checks (which
could stop a run between the nodes), a fused node's kernel writes the values of the nodes
after it too:

* a BatchNormalization read by a Relu alone writes the Relu's value in the same pass;
* a Conv read by a BatchNormalization alone (whose other inputs are constants or constant
  parameters of its node) writes the normalization's value, and that Relu's, as it writes its
  own (``onnx_ops._conv_bn``); the normalization's constant parameters are given their first
  values in the Conv node's code (the normalization's node sets them again, unchanged).

The nodes whose values were written emit no call. Every node keeps its own value, bit for bit
what its own kernel gives (the same kernels and float operations; the Relu the engine's).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ...errors import NotCompilable
from ...plan import ParameterPlan
from ...plan.fusion import bn_relu_pairs, conv_bn_pairs, inference_bn
from .calls import has_kernel, shape_from_values
from .layout import Slot, Storage, value_key

#: The registered ONNX functions whose Numba kernel takes its value's slot as the argument
#: ``Y`` after its attributes and writes the value there: Conv's (then ``BN``: a fused
#: normalization) and BatchNormalization's (then ``R``: a fused Relu). MaxPool's does too
#: (``IntoEmitter._pool_target``: after ``wanted``, into its slot or its one tuple item).
INTO_KERNELS = frozenset({"onnx::Conv", "onnx::BatchNormalization"})
#: Write kernels' values into their slots and fuse the chains above (tests compare against
#: the generated code without them by turning this off).
WRITE_INTO_SLOTS = True
_SLOT_VAR = re.compile(r"\ba\d+\b")


class IntoEmitter:
    """Code of the parameters whose kernel writes into slots (see the module docstring)."""

    def kernel_into(
        self, nid: str, i: int, pp: ParameterPlan, slot: Slot, names: dict[str, str], ind: str
    ) -> list[str] | None:
        """The code of parameter ``pp`` of ``nid`` when its kernel writes its value (and a
        fused chain's) into the slots, or ``[]`` when a kernel before it did; None when it is
        computed the general way."""
        fused = self._into_fused()
        if (nid, pp.id) in fused["done"]:
            return []
        pool = None
        if not self._into_ok(nid, pp, slot):
            pool = self._pool_target(nid, pp, slot)
            if pool is None:
                return None
        node = self.plan.nodes[nid]
        lines: list[str] = []
        written = [slot.var]
        # (MaxPool: its ``wanted`` 1, then where Y goes)
        into = [slot.var] if pool is None else [self.consts.literal(1), pool]
        chain = None if pool is not None else fused["conv"].get(nid) or fused["bn"].get(nid)
        if chain is not None:
            bn, bn_pp, bn_slot, relu_slot = chain
            if nid in fused["bn"]:  # (the normalization with its Relu: R)
                written.append(relu_slot.var)
                into.append(relu_slot.var)
            else:  # (the Conv with its normalization and maybe its Relu: BN)
                tup, pre = self._bn_tuple(bn, bn_pp, bn_slot, relu_slot, ind)
                lines += pre
                written += [bn_slot.var] + ([relu_slot.var] if relu_slot is not None else [])
                into.append(tup)
        tag = f"{i}_{len(node.functions) + node.parameters.index(pp)}"
        before = len(lines)
        expr = self.call(pp.call, names, lines, ind, tag, slot, fuse=False, into=into)
        tail = ", " + ", ".join(into) + ")"
        if expr is None or not expr.startswith("F") or tail not in expr:
            if chain is not None:
                raise NotCompilable(f"{node.where}.{pp.id}: no kernel writes its fused values")
            return None  # (not a Numba kernel's call: the general way)
        head = " ".join(lines[before:]) + " " + expr[: expr.rindex(tail)]
        if set(_SLOT_VAR.findall(head)) & set(written):  # (an input is a slot written)
            if chain is not None:
                raise NotCompilable(f"{node.where}.{pp.id}: its kernel would read its own slot")
            return None
        return [*lines, f"{ind}{expr}"]

    def _bn_tuple(
        self, bn: str, bn_pp: ParameterPlan, bn_slot: Slot, relu: Slot | None, ind: str
    ) -> tuple[str, list[str]]:
        """The ``BN`` argument of a Conv writing normalization ``bn``'s value (and its Relu's):
        ``(scale, B, mean, var, epsilon, BNY, R, relu)``, and the code giving the
        normalization's constant parameters their first values before it."""
        cp = bn_pp.call
        node = self.plan.nodes[bn]
        names = {p.id: self.text_source(self.slots[value_key(bn, p.id)]) for p in node.parameters}
        args = dict(cp.args)
        pre: list[str] = []
        parts = []
        for name in cp.input_names[1:5]:
            vp = args[name]
            ref = vp.expr.tree.body.id if vp.expr is not None else None
            if ref is not None:
                pre += self.first_value(bn, _param(node, ref), names, ind)
            parts.append(self.value(vp, names))
        eps = args.get("epsilon")
        if eps is None:
            parts.append(self.consts.const(cp.schema.attributes["epsilon"]))
        else:
            if eps.expr is not None:
                pre += self.first_value(bn, _param(node, eps.expr.tree.body.id), names, ind)
            parts.append(self.value(eps, names))
        parts += [bn_slot.var, (relu or bn_slot).var, "True" if relu is not None else "False"]
        return "(" + ", ".join(parts) + ")", pre

    def _into_ok(self, nid: str, pp: ParameterPlan, slot: Slot) -> bool:
        """Whether parameter ``pp`` of ``nid`` is one call of a kernel of
        :data:`INTO_KERNELS` giving one value (BatchNormalization in inference mode), computed
        at every run of its node into ``slot``, a whole float array of its own."""
        cp = pp.call
        return (
            self._into_slot(slot)
            and cp is not None
            and cp.schema is not None
            and has_kernel(cp)
            and not shape_from_values(cp)
            and not pp.stateful
            and pp.derivative is None
            and not pp.conditions
            and pp.value is None
            and (nid, pp.id) not in self.swept
            and cp.schema.namespace == "onnx"
            and cp.schema.name in INTO_KERNELS
            and not cp.keep_tuple
            and cp.outputs_wanted in (None, 1)
            and (cp.schema.name != "onnx::BatchNormalization" or inference_bn(cp))
        )

    def _pool_target(self, nid: str, pp: ParameterPlan, slot: Slot) -> str | None:
        """Where a MaxPool parameter whose Indices nobody reads writes its values: its slot,
        or the one item of its slot when the model keeps its result as a tuple read as
        ``pool[0]`` (modeci's ``onnx_to_mdf``); None when it is computed the general way."""
        cp = pp.call
        if (
            cp is None
            or cp.schema is None
            or cp.schema.namespace != "onnx"
            or cp.schema.name != "onnx::MaxPool"
            or cp.outputs_wanted != 1
            or not has_kernel(cp)
            or shape_from_values(cp)
            or pp.stateful
            or pp.derivative is not None
            or pp.conditions
            or pp.value is not None
            or (nid, pp.id) in self.swept
        ):
            return None
        if not cp.keep_tuple:
            return slot.var if self._into_slot(slot) else None
        whole = dataclasses.replace(slot, seq="")
        one = slot.seq and len(slot.shape) > 1 and slot.shape[0] == 1
        return f"{slot.var}[0]" if one and self._into_slot(whole) else None

    def _into_slot(self, slot: Slot) -> bool:
        """Whether a kernel may write a value into ``slot``: a whole float array of its own."""
        return (
            WRITE_INTO_SLOTS
            and slot.kind is Storage.ARRAY
            and not slot.seq
            and not slot.alts
            and _SLOT_VAR.fullmatch(slot.var) is not None
            and self.slot_dtype(slot) in ("float32", "float64")
        )

    def _constant_inputs(self, nid: str, pp: ParameterPlan) -> bool:
        """Whether a BatchNormalization call's scale, B, mean, var and epsilon are constants
        or constant parameters of its node (known before the node runs)."""
        cp = pp.call
        node = self.plan.nodes[nid]
        args = dict(cp.args)
        if len(cp.input_names) != 5 or any(n not in args for n in cp.input_names[1:]):
            return False
        for name in [*cp.input_names[1:], "epsilon"]:
            vp = args.get(name)
            if vp is None or vp.expr is None:
                continue
            if not vp.expr.is_bare_name():
                return False
            p = _param(node, vp.expr.tree.body.id)
            if (
                p is None
                or p.value is None
                or p.value.expr is not None
                or p.stateful
                or p.conditions
                or (nid, p.id) in self.swept
            ):
                return False
        return True

    def _into_fused(self) -> dict[str, Any]:
        """The fused chains of this graph's code, decided once: ``bn`` maps a normalization
        that writes its Relu to (bn, parameter, slot, the Relu's slot), ``conv`` a Conv that
        writes its normalization to (bn, parameter, slot, the Relu's slot or None), ``done``
        holds the (node, parameter) of the values written by a kernel before them."""
        memo = getattr(self, "_into_memo", None)
        if memo is not None:
            return memo
        self._into_memo = memo = {"bn": {}, "conv": {}, "done": set()}
        if self.static is None or self.node_by_node is not None or self.spec.check_finite:
            return memo
        runs = [m for members in self.static for m in members]

        def once_in_order(*nodes: str) -> bool:
            idx = [self.node_index[n] for n in nodes]
            return all(runs.count(k) == 1 for k in idx) and idx == sorted(
                idx, key=lambda k: runs.index(k)
            )

        def param(nid: str, pid: str) -> tuple[ParameterPlan, Slot] | None:
            pp = _param(self.plan.nodes[nid], pid)
            slot = self.slots[value_key(nid, pid)]
            return (pp, slot) if pp is not None and self._into_ok(nid, pp, slot) else None

        relu_of: dict[str, Slot] = {}
        for pair in bn_relu_pairs(self.plan):
            bn = param(pair.conv, pair.conv_param)
            s_relu = self.slots[value_key(pair.relu, pair.relu_param)]
            if bn is None or not self._into_slot(s_relu) or not once_in_order(pair.conv, pair.relu):
                continue
            if s_relu.var == bn[1].var or tuple(s_relu.shape) != tuple(bn[1].shape):
                continue
            if (pair.relu, pair.relu_param) in self.swept:  # (its value comes from a sweep)
                continue
            if self.slot_dtype(s_relu) != self.slot_dtype(bn[1]):
                continue
            relu_of[pair.conv] = s_relu
            memo["bn"][pair.conv] = (pair.conv, bn[0], bn[1], s_relu)
            memo["done"].add((pair.relu, pair.relu_param))
        for pair in conv_bn_pairs(self.plan):
            conv, bn = param(pair.conv, pair.conv_param), param(pair.relu, pair.relu_param)
            if conv is None or bn is None or not once_in_order(pair.conv, pair.relu):
                continue
            if not self._constant_inputs(pair.relu, bn[0]):
                continue
            if conv[1].var == bn[1].var or tuple(conv[1].shape) != tuple(bn[1].shape):
                continue
            if self.slot_dtype(conv[1]) != self.slot_dtype(bn[1]):
                continue
            memo["conv"][pair.conv] = (pair.relu, bn[0], bn[1], relu_of.get(pair.relu))
            memo["done"].add((pair.relu, pair.relu_param))
            memo["bn"].pop(pair.relu, None)  # (its Relu is written by the Conv now)
        return memo


def _param(node: Any, pid: str) -> ParameterPlan | None:
    """Parameter ``pid`` of a node's plan, or None."""
    return next((p for p in node.parameters if p.id == pid), None)
