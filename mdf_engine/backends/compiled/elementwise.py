"""Fusion of element-wise loops: values computed one array element at a time.

PsyNeuLink's models hold many small arrays ((1, 1), (1, 2)); a whole-array expression allocates
a temporary per operation. When a value (a function's, a parameter's with its conditions and
Euler step) is element-wise over scalars and arrays of its slot's shape, the generated code
writes it as one loop over the elements with the element expression inlined; a matrix product
of the right shape is written straight into the slot.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping

import numpy as np

from ...expressions import to_element_source
from ...plan import CallPlan, ParameterPlan, ValuePlan
from .calls import constant_axes
from .layout import Slot, Storage

#: A number literal as generated code writes one (a name standing for a fixed value)
NUMBER = re.compile(r"^-?\d+(\.\d*)?(e[-+]?\d+)?$")


def flat(var: str, shape: tuple[int, ...]) -> str:
    """A C-contiguous array of ``shape`` as a 1-D view (itself when it has one axis)."""
    return var if len(shape) == 1 else f"{var}.reshape({int(np.prod(shape))})"


def element_at(
    var: str, shape: tuple[int, ...], index: str = "i_", lead: tuple[int, ...] = ()
) -> str:
    """Element ``index`` (C order) of the C-contiguous array ``var[lead]`` of ``shape``
    (``shape`` includes the ``lead`` axes). PsyNeuLink's (1, n) values are indexed
    ``var[0, i_]``: a reshape to a flat view is a call into Numba's runtime at every use
    (~15 ns), which cost more than a small node's arithmetic."""
    rest = tuple(int(d) for d in shape[len(lead) :])
    ones = all(d == 1 for d in rest[:-1])
    if ones or not lead:
        pre = "".join(f"{k}, " for k in lead) + ("0, " * (len(rest) - 1) if ones else "")
        if ones:
            return f"{var}[{pre}{index}]"
        return f"{flat(var, rest)}[{index}]"
    sub = ", ".join(str(k) for k in lead)
    return f"{flat(f'{var}[{sub}]', rest)}[{index}]"


def _whole_number(node: ast.expr) -> int | None:
    """The whole number a subscript's index spells (``0``, ``-1``), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def aligned(a: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether an array of shape ``a`` has, in C order, the elements of an array of ``shape``
    it broadcasts to: the same shape up to leading axes of length 1 (``(2,)`` in ``(1, 2)``)."""
    a, shape = tuple(int(d) for d in a), tuple(int(d) for d in shape)
    n = max(len(a), len(shape))
    return (1,) * (n - len(a)) + a == (1,) * (n - len(shape)) + shape


class ElementwiseEmitter:
    """Fusion of element-wise code: one loop over an array slot's elements with the
    expression's element inlined, instead of whole-array temporaries."""

    def element(
        self,
        names: Mapping[str, str],
        shape: tuple[int, ...],
        inline: Mapping[str, tuple[ValuePlan, dict]] | None = None,
    ) -> Callable[[str], str | None]:
        """One element of a name's value, for code that loops over the elements of an array
        of ``shape``: ``a3[i_]`` for an array of that shape (of its C-order flat view when it
        has more than one axis), the variable for a scalar, the parenthesised element of an
        ``inline`` argument's value; None for anything else."""
        by_var = self.slot_of_var

        def element(name: str) -> str | None:
            if inline and name in inline:
                vp, earlier = inline[name]
                src = self.element_value(vp, names, shape, earlier)
                return None if src is None else f"({src})"
            var = names.get(name)
            slot = by_var.get(var) if var is not None else None
            if slot is None:
                if var is not None and (NUMBER.match(var) or self.consts.is_float(var)):
                    return var
                return None
            if (
                slot.kind is Storage.TUPLE or slot.seq
            ):  # (a list computes as a list, not element-wise)
                return None
            if slot.kind is Storage.SCALAR:
                return var
            return element_at(var, tuple(slot.shape)) if aligned(slot.shape, shape) else None

        return element

    def element_value(
        self,
        vp: ValuePlan,
        names: Mapping[str, str],
        shape: tuple[int, ...],
        inline: Mapping[str, tuple[ValuePlan, dict]] | None = None,
    ) -> str | None:
        """Source of one element of ``vp``'s value (see :meth:`element`), or None when it is
        not an element-wise expression over scalars and arrays of ``shape``."""
        if vp.expr is None:
            c = np.asarray(vp.const)
            if c.dtype.kind not in "biuf":
                return None
            if c.ndim == 0:
                return self.consts.const(c.item())
            if not aligned(c.shape, shape):
                return None
            return element_at(self.consts.const(c), c.shape)
        row = self.row_element(vp, names, shape, inline)
        if row is not None:
            return row
        return to_element_source(vp.expr, self.element(names, shape, inline), self.consts.literal)

    def row_element(
        self,
        vp: ValuePlan,
        names: Mapping[str, str],
        shape: tuple[int, ...],
        inline: Mapping[str, tuple[ValuePlan, dict]] | None = None,
    ) -> str | None:
        """One element of ``x[k]``, a row of an array slot ``x`` (or item of a tuple slot)
        under a whole-number ``k`` within its first axis (PsyNeuLink's ``variable0[0]`` of
        its input ports' (1, n) sums, FHN's ``(v, w, time)`` items): ``a17[0, i_]``, read in
        place. The index is checked here, once, against the slot's fixed shape; the generic
        subscript (``_ix1``, a bounds check and a view at every run, copied by ``_put``) cost
        a PsyNeuLink LCA pass more than its arithmetic. None for any other expression."""
        body = vp.expr.tree.body
        if not isinstance(body, ast.Subscript) or not isinstance(body.value, ast.Name):
            return None
        k = _whole_number(body.slice)
        name = body.value.id
        while inline and name in inline:  # an argument naming another value (t_1 = t_0)
            arg, inline = inline[name]
            if arg.expr is None or not arg.expr.is_bare_name():
                return None
            name = arg.expr.tree.body.id
        slot = self.slot_of_var.get(names.get(name, ""))
        if k is None or slot is None or slot.alts:
            return None
        if slot.kind is Storage.TUPLE:  # (an item of a tuple of mixed shapes: its own slot)
            if not -len(slot.parts) <= k < len(slot.parts):
                return None
            part = slot.parts[k % len(slot.parts)]
            if part.alts:
                return None
            if part.kind is Storage.SCALAR:
                return part.var
            if part.kind is not Storage.ARRAY or part.seq or not aligned(part.shape, shape):
                return None
            if any(int(d) != 1 for d in part.shape[:-1]):
                return None  # (an N-D item would be reshaped at every element)
            return element_at(part.var, tuple(part.shape))
        if (
            slot.kind is not Storage.ARRAY
            or len(slot.shape) < 2
            or not -int(slot.shape[0]) <= k < int(slot.shape[0])
            or not aligned(tuple(slot.shape[1:]), shape)
        ):  # (a list of items of one shape is an array of them, item k its row k)
            return None
        if len(slot.shape) > 2 and any(int(d) != 1 for d in slot.shape[1:-1]):
            return None  # (a CNN's (1, C, H, W) item would be reshaped at every element)
        return element_at(slot.var, tuple(slot.shape), lead=(k % int(slot.shape[0]),))

    def call_elementwise(
        self, cp: CallPlan, names: Mapping[str, str], slot: Slot | None, ind: str
    ) -> list[str] | None:
        """A function given by a ``value`` over its arguments, computed one element of its
        array slot at a time with the arguments' element-wise values inlined (no temporary
        arrays: PsyNeuLink's (1, 1) arrays); None when it is not element-wise."""
        if slot is None or slot.kind is not Storage.ARRAY or slot.seq:
            return None
        if cp.schema is not None:
            return self.kernel_elementwise(cp, names, slot, ind) or self.stacked_sum(
                cp, names, slot, ind
            )
        if cp.value is None or cp.value.expr is None:
            return None
        inline: dict[str, tuple[ValuePlan, dict]] = {}
        for argname, vp in cp.args:  # an argument sees the arguments before it
            inline[argname] = (vp, dict(inline))
        value = self.element_value(cp.value, names, tuple(slot.shape), inline)
        return None if value is None else self.element_loop(slot, value, [], ind)

    def kernel_elementwise(
        self, cp: CallPlan, names: Mapping[str, str], slot: Slot, ind: str
    ) -> list[str] | None:
        """A registered kernel marked ``elementwise`` (its value at each element is the kernel
        of that element's inputs: PsyNeuLink's transfer functions and integrators) called once
        per element of its float64 slot with scalar arguments, instead of on whole arrays
        (which allocates a result array per call); None when an argument is not a scalar or an
        array of the slot's shape."""
        sch = cp.schema
        if (
            sch.jit is None
            or not sch.extra.get("elementwise")
            or sch.variadic
            or self.slot_dtype(slot) != "float64"
            or None in cp.input_names
        ):
            return None
        inline: dict[str, tuple[ValuePlan, dict]] = {}
        for argname, vp in cp.args:  # an argument sees the arguments before it
            inline[argname] = (vp, dict(inline))
        element = self.element(names, tuple(slot.shape), inline)
        args = [element(n) for n in cp.input_names]
        if len(args) != len(sch.inputs) or any(a not in sch.attributes for a in cp.attribute_names):
            return None
        for a, default in sch.attributes.items():
            if a in cp.attribute_names:
                args.append(element(a))
            elif isinstance(default, (int, float)) and not isinstance(default, bool):
                args.append(self.consts.const(default))
            else:
                return None
        if any(a is None for a in args):
            return None
        return self.element_loop(slot, f"{self.function_schema(cp)}({', '.join(args)})", [], ind)

    def stacked_sum(
        self, cp: CallPlan, names: Mapping[str, str], slot: Slot, ind: str
    ) -> list[str] | None:
        """``onnx::ReduceSum`` over axis 0 of a list of arrays of the slot's elements
        (PsyNeuLink's input ports combining their afferents, ``[a, b]``): each element the
        items' elements added in order onto 0, as the registered kernel adds them, without stacking them into a
        temporary; None for any other call."""
        if cp.schema.name != "onnx::ReduceSum" or self.slot_dtype(slot) != "float64":
            return None
        args = dict(cp.args)
        data = args.get(cp.input_names[0]) if cp.input_names else None
        if constant_axes(cp, "axes", args.get("axes")) != [0] or data is None:
            return None
        node = data.expr.tree.body if data.expr is not None else None
        seen = {cp.input_names[0]}
        while isinstance(node, ast.Name) and node.id in args and node.id not in seen:
            seen.add(node.id)  # an argument naming an earlier one (t_1 = t_0)
            earlier = args[node.id]
            node = earlier.expr.tree.body if earlier.expr is not None else None
        if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
            return None
        items = []
        for e in node.elts:
            s = self.slot_of_var.get(names.get(e.id, "")) if isinstance(e, ast.Name) else None
            if (
                s is None
                or s.kind is not Storage.ARRAY
                or s.seq
                or not aligned(s.shape, slot.shape)
                or self.slot_dtype(s) != "float64"
            ):
                return None
            items.append(element_at(s.var, tuple(s.shape)))
        value = "0.0"  # (the registered kernel adds onto 0: -0.0 + 0.0 is 0.0)
        for item in items:
            value = f"({value} + {item})"
        return self.element_loop(slot, value, [], ind)

    def element_loop(
        self, slot: Slot, value: str, conditions: list[tuple[str, str]], ind: str
    ) -> list[str]:
        """A loop writing one element of ``slot`` at a time: ``value``, replaced by the value of
        each condition whose test holds, in order (tests and values read the slot's old
        element: each element is written after it was read, and only by its own step).
        Instead of a whole-array expression, it allocates no temporary arrays."""
        size = int(np.prod(slot.shape))
        exact = self.arrays[slot.index].dtype.kind in "biu"  # (an integer or boolean slot)
        cast = f"_cast({slot.var}, {{}})" if exact else "float({})"
        out = [f"{ind}for i_ in range({size}):", f"{ind}    e_ = {cast.format(value)}"]
        for test, val in conditions:
            out += [f"{ind}    if {test}:", f"{ind}        e_ = {cast.format(val)}"]
        return out + [f"{ind}    {element_at(slot.var, tuple(slot.shape))} = e_"]

    def assign_value(
        self, slot: Slot, vp: ValuePlan, names: Mapping[str, str], ind: str
    ) -> list[str]:
        """Code giving ``slot`` the value of ``vp``: element by element when it is an
        element-wise expression over a 1-D array slot, a matrix product written straight into
        the slot, else as a whole."""
        lines = self.seq_assign(slot, vp, names, ind)
        if lines is not None:
            return lines
        if (
            slot.kind is Storage.ARRAY
            and vp.expr is not None
            and not vp.expr.is_bare_name()
            and not slot.alts  # (a variant sets its tag too: variants.py)
        ):
            element = self.element_value(vp, names, tuple(slot.shape))
            if element is not None:
                return self.element_loop(slot, element, [], ind)
            product = self.matmul_into(slot, vp, names)
            if product is not None:
                return [f"{ind}{product}"]
        return [self.assign(slot, self.value(vp, names), ind)]

    def matmul_into(self, slot: Slot, vp: ValuePlan, names: Mapping[str, str]) -> str | None:
        """``np.dot(a, b, slot)`` for a value ``a @ b`` of a matrix and a vector or matrix whose
        product has the slot's shape and which are not the slot itself (BLAS writes the
        result in place, without a temporary); None otherwise."""
        operands = vp.expr.matmul_operands() if vp.expr is not None else None
        if operands is None:
            return None
        a, b = (self.slot_of_var.get(names.get(n, "")) for n in operands)
        if (
            a is None
            or b is None
            or a.kind is not Storage.ARRAY
            or b.kind is not Storage.ARRAY
            or slot.var in (a.var, b.var)
            or len(a.shape) != 2
            or len(b.shape) not in (1, 2)
            or a.shape[1] != b.shape[0]
            or (a.shape[0], *b.shape[1:]) != tuple(slot.shape)
        ):
            return None
        return f"np.dot({a.var}, {b.var}, {slot.var})"

    def fused_parameter(
        self, nid: str, pp: ParameterPlan, slot: Slot, names: dict[str, str], ind: str
    ) -> list[str] | None:
        """An array parameter of one row (1-D, or (1, n) as PsyNeuLink's values) whose value
        (or Euler step) and conditions are element-wise, updated element by element in place
        (a stateful value copied from its function's value, as the LCA's ``previous_value``,
        is a loop of loads and stores, not a ``_put`` call); None when it is not such a
        parameter. (A stateful parameter whose first value the table ``P`` gives, a float
        initial value, is updated from its value as any other.)"""
        if (
            slot.kind is not Storage.ARRAY
            or not slot.shape
            or any(int(d) != 1 for d in slot.shape[:-1])
            or ((nid, pp.id) in self.swept and not (pp.stateful and pp.value is not None))
            or pp.call is not None
            or slot.alts  # (a variant sets its tag too: variants.py)
        ):
            return None
        shape = tuple(slot.shape)
        conditions = []
        for _cid, test, val in pp.conditions:
            t, v = self.element_value(test, names, shape), self.element_value(val, names, shape)
            if t is None or v is None:
                return None
            conditions.append((t, v))
        if pp.value is not None and pp.value.expr is not None:
            value = self.element_value(pp.value, names, shape)
            return None if value is None else self.element_loop(slot, value, conditions, ind)
        if pp.value is None and pp.derivative is not None and pp.initial is not None:
            d = self.element_value(pp.derivative, names, shape)
            first = self.element_value(pp.initial, names, shape)
            if d is None or first is None:
                return None
            own = element_at(slot.var, shape)
            return [
                f"{ind}if has_dt:",
                *self.element_loop(slot, f"{own} + ({d}) * dt", conditions, ind + "    "),
                f"{ind}else:",
                *self.element_loop(slot, first, conditions, ind + "    "),
            ]
        return None
