"""Expression values in generated code, and their assignment into slots.

An MDF expression becomes source through :func:`mdf_engine.expressions.to_source` with the
model's names renamed to slot variables; subscripts are bounds-checked (the field of each
check is recorded for the error message). Tuples of values of mixed shapes have no variable of
their own: their items are read by constant indices.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Mapping

import numpy as np

from ...errors import NotCompilable
from ...expressions import to_source
from ...plan import ValuePlan
from .elementwise import element_at
from .layout import Role, Slot, Storage
from .variants import assign_variant

#: a tuple slot's variable, which generated code never holds (see ``Slot.var``)
TUPLE_VAR = re.compile(r"\bT\d+\b")


class ValueEmitter:
    """Code for values: an expression over slot variables, tuple items, sequences written item
    by item, and assignments into slots."""

    def value(self, vp: ValuePlan, names: Mapping[str, str]) -> str:
        """Source of a value: a constant's table name, or the expression over ``names`` (model
        name -> variable)."""
        if vp.expr is None:
            return self.consts.const(vp.const)

        def rename(n: str) -> str:
            if n not in names:
                raise NotCompilable(f"name '{n}' is not compiled")
            return names[n]

        where = vp.expr.where
        self._check_sequence_use(vp, names)
        tuples = self.tuple_of_var

        def index(value: str, indices: list[str]) -> str:
            if value in tuples:
                return self.tuple_item(tuples[value], indices, where)
            k = len(self.index_fields)
            self.index_fields.append(where)
            if len(indices) <= 2:
                return f"_ix{len(indices)}({value}, {', '.join(indices)}, {k}, q_c2, err)"
            checked = [
                f"_ck({i}, {value}.shape[{axis}], {k}, {axis}, q_c2, err)"
                for axis, i in enumerate(indices)
            ]
            return f"{value}[{', '.join(checked)}]"

        def checked(helper: str, operands: list[str]) -> str:
            k = len(self.index_fields)
            self.index_fields.append(where)
            return f"{helper}({', '.join(operands)}, {k}, q_c2, err)"

        src = to_source(vp.expr, rename, self.function, self.consts.literal, index, checked)
        if src not in tuples and TUPLE_VAR.search(src):
            raise NotCompilable(
                f"{where}: a tuple of values of mixed shapes is used other than by a constant index"
            )
        return src

    def stacked(self, vp: ValuePlan, names: Mapping[str, str]) -> str | None:
        """``np.stack((a1, a2))`` for a list or tuple expression of names of arrays of one
        shape (``np.array`` of arrays does not compile), else None."""
        node = vp.expr.tree.body if vp.expr is not None else None
        if (
            not isinstance(node, (ast.List, ast.Tuple))
            or not node.elts
            or not all(isinstance(e, ast.Name) for e in node.elts)
        ):
            return None
        slots = [self.slot_of_var.get(names.get(e.id, "")) for e in node.elts]
        if any(
            s is None or s.kind is not Storage.ARRAY or s.seq or s.shape != slots[0].shape
            for s in slots
        ):
            return None
        return "np.stack((" + "".join(f"{s.var}, " for s in slots) + "))"

    @functools.cached_property
    def tuple_of_var(self) -> dict[str, Slot]:
        """The tuple slot behind each ``T<k>`` name."""
        return {s.var: s for s in self.slots.values() if s.kind is Storage.TUPLE}

    def tuple_item(self, slot: Slot, indices: list[str], where: str) -> str:
        """The variable of item ``indices[0]`` of a tuple slot: the index must be a constant
        integer (the items have different shapes, so their place is fixed at compile time)."""
        name = indices[0]
        value = self.consts.table.values[int(name[1:])] if re.fullmatch(r"c\d+", name) else None
        if len(indices) != 1 or type(value) is not int:
            raise NotCompilable(
                f"{where}: a tuple of values of mixed shapes is indexed by "
                "something other than a constant integer"
            )
        n = len(slot.parts)
        if not -n <= value < n:
            raise NotCompilable(f"{where}: index {value} of a tuple of {n} items")
        return slot.parts[value].var

    def _check_sequence_use(self, vp: ValuePlan, names: Mapping[str, str]) -> None:
        """A list held as an array may only be indexed, passed to a function or copied whole:
        in arithmetic a list concatenates or repeats where an array computes."""
        seqs = {v for v, s in self.slot_of_var.items() if s.seq and s.kind is Storage.ARRAY}
        if not seqs:
            return
        tree = vp.expr.tree.body
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                if (
                    isinstance(child, ast.Name)
                    and names.get(child.id) in seqs
                    and not (
                        (isinstance(node, ast.Subscript) and child is node.value)
                        or (isinstance(node, ast.Call) and child in node.args)
                    )
                ):
                    raise NotCompilable(
                        f"{vp.expr.where}: the {child.id!r} sequence is used "
                        "in an operation that differs for lists and arrays"
                    )

    def seq_assign(
        self, slot: Slot, vp: ValuePlan | None, names: Mapping[str, str], ind: str
    ) -> list[str] | None:
        """Code giving a sequence slot (a tuple slot, or an array slot holding a list) the
        value of a list or tuple expression ``[x, y, ...]`` item by item; None for any other
        slot or value."""
        if vp is None or vp.expr is None or not (slot.seq or slot.kind is Storage.TUPLE):
            return None
        node = vp.expr.tree.body
        n = len(slot.parts) if slot.kind is Storage.TUPLE else slot.shape[0]
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) != n:
            return None
        out = []
        for k, elt in enumerate(node.elts):
            item = ValuePlan(expr=dataclasses.replace(vp.expr, tree=ast.Expression(body=elt)))
            if slot.kind is Storage.TUPLE:
                part = slot.parts[k]
                lines = self.seq_assign(part, item, names, ind)
                out += lines if lines is not None else self.assign_value(part, item, names, ind)
            elif len(slot.shape) == 1:
                out.append(f"{ind}{slot.var}[{k}] = _scalar({self.value(item, names)})")
            else:
                shape = tuple(slot.shape[1:])
                element = self.element_value(item, names, shape)
                if element is None:
                    out.append(f"{ind}_put({slot.var}[{k}], {self.value(item, names)})")
                else:  # item by item, element by element (no temporary arrays)
                    out += [
                        f"{ind}for i_ in range({int(np.prod(shape))}):",
                        f"{ind}    {element_at(slot.var, tuple(slot.shape), lead=(k,))}"
                        f" = float({element})",
                    ]
        return out

    @functools.cached_property
    def slot_of_var(self) -> dict[str, Slot]:
        """The slot behind each variable name of the generated code (read once every slot is
        allocated)."""
        return {s.var: s for s in self.slots.values()}

    def slot_field(self, slot: Slot) -> str:
        """The field of the value a slot holds (for error messages)."""
        key = next(k for k, s in self.slots.items() if s is slot)
        np_ = self.plan.nodes[key.node]
        if key.role is Role.OUTPUT:
            group = "output_ports"
        elif any(ip.id == key.name for ip in np_.inputs):
            group = "input_ports"
        elif any(fid == key.name for fid, _ in np_.functions):
            group = "functions"
        else:
            group = "parameters"
        return f"{np_.where}.{group}.{key.name}"

    def assign(self, slot: Slot, expr: str, ind: str) -> str:
        """Code storing ``expr`` into ``slot`` (item by item for a tuple slot; a value whose
        kind is the argument max()/min() chose sets its tag too, variants.py)."""
        if slot.alts or getattr(self.slot_of_var.get(expr), "alts", None):
            return assign_variant(self, slot, expr, ind)
        return self.plain_assign(slot, expr, ind)

    def plain_assign(self, slot: Slot, expr: str, ind: str) -> str:
        """:meth:`assign` without a variant's tag."""
        if slot.kind is Storage.TUPLE or expr in self.tuple_of_var:
            src = self.tuple_of_var.get(expr)
            if slot.kind is not Storage.TUPLE or src is None or len(src.parts) != len(slot.parts):
                raise NotCompilable(
                    "a tuple of values of mixed shapes is assigned to a value of another kind"
                )
            return "\n".join(self.assign(d, s.var, ind) for d, s in zip(slot.parts, src.parts))
        if slot.kind is Storage.SCALAR and slot.dtype == "int64":
            k = len(self.index_fields)  # (err -6 names the field)
            self.index_fields.append(self.slot_field(slot))
            return f"{ind}{slot.var} = _iscalar({expr}, {k}, q_c2, err)"
        if slot.kind is Storage.SCALAR:
            src = self.slot_of_var.get(expr)  # (a float64 slot into one: no call to type)
            if (
                src is not None
                and src.kind is Storage.SCALAR
                and src.dtype == slot.dtype == "float64"
            ):
                return f"{ind}{slot.var} = {expr}"
            helper = "_bscalar" if slot.dtype == "bool" else "_scalar"
            return f"{ind}{slot.var} = {helper}({expr})"
        return self.copy_loop(slot, expr, ind) or f"{ind}_put({slot.var}, {expr})"

    def copy_loop(self, slot: Slot, expr: str, ind: str) -> str | None:
        """A copy of the array slot or constant array ``expr`` of ``slot``'s shape and dtype
        as a loop over its elements, which compiles to a few loads and stores (``_put``
        checks shapes and broadcasts at every call: a cost per node per trial on PsyNeuLink's
        small arrays); None for any other ``expr``."""
        if slot.kind is not Storage.ARRAY or expr == slot.var:
            return None
        src = self.slot_of_var.get(expr)
        if src is not None:
            if src.kind is not Storage.ARRAY or self.slot_dtype(src) != self.slot_dtype(slot):
                return None
            shape = tuple(src.shape)
        elif self.consts.is_array(expr):
            c = self.consts.table.values[int(expr[1:])]
            if c.dtype != self.arrays[slot.index].dtype:
                return None
            shape = c.shape
        else:
            return None
        if shape != tuple(slot.shape) or not shape:
            return None
        if len(shape) > 1 and any(int(d) != 1 for d in shape[:-1]):
            return None  # (an N-D activation: element_at would reshape at every element,
            # 40 ms a CNN inference; _put copies it in one flat loop)
        size = int(np.prod(shape))
        return (
            f"{ind}for i_ in range({size}):\n"
            f"{ind}    {element_at(slot.var, shape)} = {element_at(expr, shape)}"
        )
