"""Values that grow by numpy broadcasting over a graph's first steps.

A NeuroML network (PyNN_IF_net) starts a synapse's state at its ``(2,)`` initial value; the
condition ``where(weights > 0, A + w, A)`` over the ``(2, 2)`` weight matrix makes it
``(2, 2)``, and the cells it feeds follow a step later. The interpreter (the oracle) computes
that with numpy's broadcasting. The compiled state holds every value in the shape it settles
to (the warm-up runs until no value changes shape, ``build._settled``): a smaller initial
value or port default is broadcast into its slot (:meth:`BroadcastEmitter.grown`,
:meth:`BroadcastEmitter.grown_default`). Every value computed from it then equals the
interpreter's broadcast to its slot's shape, as long as whatever reads such a value is
element-wise (arithmetic, comparisons, ufunc-like functions, a condition's ``where``), and
the generator checks that (:meth:`BroadcastEmitter.check_grown_readers`): a function call, a
subscript, a matrix product, an edge's matrix or a Threshold's index would compute something
else with the broadcast value, so such a graph is not compiled and the log line names the
field.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import NotCompilable
from ...expressions.elementwise import to_element_source
from ...plan import CallPlan, ValuePlan
from .layout import Slot, Storage, array_dtype

#: registered functions (namespace, name) that act on each element on its own
ELEMENTWISE_FUNCTIONS = frozenset(
    [("std", n) for n in ("Relu", "cos", "exponential", "linear", "logistic", "sin")]
    + [("mdf", n) for n in ("arccos", "arcsin", "arctan", "cosh", "sinh", "tan", "tanh")]
)


def _grows_into(shape: tuple[int, ...], slot: Slot) -> bool:
    """A value of ``shape`` broadcasts into the larger array ``slot``."""
    if slot.kind is not Storage.ARRAY or int(np.prod(shape)) == int(np.prod(slot.shape)):
        return False
    try:
        return np.broadcast_shapes(shape, tuple(slot.shape)) == tuple(slot.shape)
    except ValueError:
        return False


def _elementwise(vp: ValuePlan) -> bool:
    return to_element_source(vp.expr, lambda n: "x", lambda c: "1.0") is not None


def _reads(cp: CallPlan, name: str) -> bool:
    vps = [vp for _, vp in cp.args] + ([cp.value] if cp.value is not None else [])
    return any(vp.expr is not None and name in vp.names for vp in vps)


def _elementwise_call(cp: CallPlan) -> bool:
    """A call of a function of :data:`ELEMENTWISE_FUNCTIONS` over element-wise arguments."""
    sch = cp.schema
    return (
        sch is not None
        and (sch.namespace, sch.op) in ELEMENTWISE_FUNCTIONS
        and all(vp.expr is None or _elementwise(vp) for _, vp in cp.args)
    )


class BroadcastEmitter:
    """Initial values and port defaults broadcast into the settled shapes of their slots,
    and the check that only element-wise operations read what grew from them."""

    def grown(
        self, nid: str, name: str, vp: ValuePlan, slot: Slot, src: str, own: bool = False
    ) -> str:
        """The source of ``vp`` (``src``) going into ``slot``: broadcast to the slot's shape
        when the value is smaller (a constant at generation time, else a copy of
        ``np.broadcast_to``); ``own``: the value reads the parameter's own name as 0."""
        if slot.kind is not Storage.ARRAY:
            return src
        if vp.expr is None:
            value = np.asarray(vp.const)
            if not _grows_into(value.shape, slot):
                return src
            self.grown_from.add((nid, name))
            if value.size == 1:  # (a number fills the slot)
                return src
            return self.consts.const(
                np.broadcast_to(value.astype(array_dtype(value)), slot.shape).copy()
            )
        st = self.interp.states[nid]
        env = {**st.inputs_read, **{k: st.lookup(k) for k in st.params}, **st.funcs}
        if own:
            env[name] = 0.0
        try:
            shape = np.shape(vp.evaluate(env))
        except Exception:  # noqa: BLE001 - not knowable now: the value is written as it is
            return src
        if not _grows_into(shape, slot):
            return src
        self.grown_from.add((nid, name))
        if int(np.prod(shape)) == 1:  # (a number fills the slot)
            return src
        dims = "".join(f"{int(d)}, " for d in slot.shape)
        return f"np.broadcast_to({src}, ({dims})).copy()"

    def grown_default(self, nid: str, port: str, fb: np.ndarray, slot: Slot) -> Any:
        """An input port's default ``fb`` broadcast into its larger slot, or None when it
        does not grow into it."""
        if not _grows_into(fb.shape, slot):
            return None
        self.grown_from.add((nid, port))
        return np.broadcast_to(fb, slot.shape).copy()

    def check_grown_readers(self) -> None:
        """NotCompilable unless everything that reads a value grown by broadcasting (and
        what is computed from it, across edges) is element-wise."""
        todo = [(nid, name, False) for nid, name in self.grown_from]
        seen = set(todo)

        def reach(nid: str, name: str, output: bool) -> None:
            if (nid, name, output) not in seen:
                seen.add((nid, name, output))
                todo.append((nid, name, output))

        while todo:
            nid, name, output = todo.pop()
            if output:
                self._grown_edges(nid, name, reach)
                continue
            np_ = self.plan.nodes[nid]
            where = np_.where
            for pp in np_.parameters:
                field = f"{where}.parameters.{pp.id}"
                vps = [pp.value, pp.derivative, pp.initial]
                vps += [v for _, test, val in pp.conditions for v in (test, val)]
                for vp in vps:
                    if vp is not None and vp.expr is not None and name in vp.names:
                        self._must_be_elementwise(vp, field, name)
                        reach(nid, pp.id, False)
                if pp.call is not None and _reads(pp.call, name):
                    if not _elementwise_call(pp.call):
                        raise self._refused(field, name, "a function's argument")
                    reach(nid, pp.id, False)
            for fid, cp in np_.functions:
                if _reads(cp, name):
                    if not _elementwise_call(cp):
                        raise self._refused(
                            f"{where}.functions.{fid}", name, "a function's argument"
                        )
                    reach(nid, fid, False)
            for oid, vp in np_.outputs:
                if vp.expr is not None and name in vp.names:
                    self._must_be_elementwise(vp, f"{where}.output_ports.{oid}", name)
                    reach(nid, oid, True)
            for tn, tname, indices in self.thresholds:
                if tn == nid and tname == name and indices:
                    raise self._refused(f"{where}", name, "a Threshold condition's index")

    def _grown_edges(self, nid: str, port: str, reach: Any) -> None:
        """The input ports an output port that grew is delivered to (by a plain edge)."""
        for tn, tname, indices in self.thresholds:
            if tn == nid and tname == port and indices:
                raise self._refused(self.plan.nodes[nid].where, port, "a Threshold's index")
        for ep in self.plan.edges:
            if ep.sender != nid or ep.sender_port != port:
                continue
            if ep.matrix is not None or (ep.has_weight and np.size(ep.weight) != 1):
                raise self._refused(f"{self.plan.where}.edges.{ep.id}", port, "an edge's matrix")
            reach(ep.receiver, ep.receiver_port, False)

    def _must_be_elementwise(self, vp: ValuePlan, field: str, name: str) -> None:
        if not _elementwise(vp):
            raise self._refused(field, name, "an operation that is not element-wise")

    @staticmethod
    def _refused(field: str, name: str, what: str) -> NotCompilable:
        return NotCompilable(
            f"{field}: '{name}' grows by broadcasting in the first steps and is read by {what}"
        )
