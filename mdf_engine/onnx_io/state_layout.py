"""The state of one MDF graph as the stateful ONNX export lays it out.

One ``evaluate()`` of our engine reads values left by the previous one; the exported step is a
function of exactly those values. :func:`layout` finds them, with their shapes, by running the
graph a few steps on the interpreted backend (the compiled backend learns shapes the same way):

* ``("p", node, param)``: every parameter that is not a constant (stateful ones, and
  expressions, whose previous value functions see);
* ``("o", node, port)``: every output port (edges and ``Threshold`` conditions read the last
  value);
* ``("evals",)``: how many ``evaluate()`` calls were made (the first one initialises
  ``time_derivative`` states, as ``Simulation.run`` makes it without a time increment);
* ``("time",)``: the simulation time (the sum of the increments given);
* ``("q", local)``: the scheduler counters that some condition reads, named as in
  :mod:`mdf_engine.schedulers.codegen` (``q_c1`` passes ever, ``q_t1_3`` calls of node 3 in
  this update, ``q_ev2`` node 2 has ever run, ``q_th0`` the value Threshold 0 compares, ...).

Every value must be numeric (a float, int or bool array); anything else (ACT-R's dicts and
strings) is refused with an :class:`MDFError` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from .step_translate import safe_name

__all__ = ["StateVar", "Layout", "layout", "WARM_UP_STEPS"]

#: evaluate() calls made to learn every value's shape (more, up to the maximum, while some node
#: has not run yet; the shapes of a node that still has not run come from a run of the graph
#: without its conditions)
WARM_UP_STEPS = 3
MAX_WARM_UP_STEPS = 20


@dataclass
class StateVar:
    """One piece of state: its key, ONNX names (input, next-state output), element kind
    (``float`` in the export dtype, ``int`` as int64, ``bool``), initial value and a
    description for the metadata."""

    key: tuple
    name: str
    next_name: str
    kind: str
    initial: np.ndarray
    role: str
    node: str | None = None
    field: str | None = None

    @property
    def declared(self) -> list[int]:
        """The shape written in the ONNX value info."""
        return list(self.initial.shape)


@dataclass
class Layout:
    """The state variables (ordered) and the shapes of the graph's values after the warm-up."""

    state: dict[tuple, StateVar]
    shapes: dict[tuple[str, str], tuple[int, ...]]
    warm: Any  # the interpreted graph after the warm-up (its scheduler, its values)
    constants: dict[tuple[str, str], Any]


def _numeric(v: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(v)
    except Exception:  # noqa: BLE001 - any value numpy cannot hold is refused below
        arr = np.asarray(None, dtype=object)
    if arr.dtype.kind not in "biuf":
        kind = type(v).__name__
        raise MDFError(
            f"holds a {kind} value; only numbers and arrays of numbers can be exported to ONNX",
            what,
        )
    return arr


def layout(
    plan: Any,
    names: set[str],
    sched: Any = None,
    thresholds: list | None = None,
    warm_steps: int = WARM_UP_STEPS,
    initializer: dict | None = None,
) -> Layout:
    """The state of ``plan``'s graph. ``names`` is the set of ONNX names already taken (the
    new ones are added); ``sched`` the :class:`SchedulerSource` when the step is scheduled,
    ``thresholds`` its (node, name, indices) per Threshold slot; ``initializer`` the external
    inputs every warm-up update is given (a model may need them to run at all)."""
    from ..interpreter import InterpretedGraph

    warm = InterpretedGraph(plan)
    thr0 = []
    if sched is not None:
        for node, name, indices in thresholds or []:
            v = warm.threshold_value(node, name)
            thr0.append(_index_scalar(v, indices))
    seen: dict = {}
    for k in range(MAX_WARM_UP_STEPS):
        if k >= warm_steps and len(warm.ever_ran) == len(plan.nodes):
            break
        warm.evaluate(time_increment=None if k == 0 else 1e-3, initializer=initializer)
        # values whose shape grows by broadcasting in the first updates (a synapse starting to
        # deliver) take the shape they settle at: warm up while some shape still changes
        now = _value_shapes(warm)
        if now != seen:
            warm_steps, seen = max(warm_steps, k + 2), now
    state: dict[tuple, StateVar] = {}
    shapes: dict[tuple[str, str], tuple[int, ...]] = {}
    constants: dict[tuple[str, str], Any] = {}

    def add(
        key: tuple,
        base: str,
        kind: str,
        initial: Any,
        role: str,
        node: str | None = None,
        fld: str | None = None,
    ) -> None:
        name = _fresh(names, "state__" + base)
        nxt = _fresh(names, "next__" + base)
        state[key] = StateVar(key, name, nxt, kind, np.asarray(initial), role, node, fld)

    where = plan.where
    for nid, np_ in plan.nodes.items():
        st = warm.states[nid]
        nw = f"{where}.nodes.{nid}"
        if nid not in warm.ever_ran:
            # not run yet under its conditions: shapes from a run of the graph without them
            st = _unconditioned(plan, initializer).states[nid]
        for ip in np_.inputs:
            v = st.inputs_read.get(ip.id)
            shapes[(nid, ip.id)] = _numeric(v, f"{nw}.input_ports.{ip.id}").shape
        for fid, _ in np_.functions:
            v = st.funcs.get(fid)
            if isinstance(v, tuple):
                continue
            shapes[(nid, fid)] = _numeric(v, f"{nw}.functions.{fid}").shape
        for pp in np_.parameters:
            pw = f"{nw}.parameters.{pp.id}"
            v = st.params.get(pp.id)
            if is_constant(pp):
                constants[(nid, pp.id)] = pp.value.const
                continue
            arr = _numeric(v if v is not None else 0.0, pw)
            shapes[(nid, pp.id)] = arr.shape
            add(
                ("p", nid, pp.id),
                safe_name(nid, pp.id),
                "float",
                np.zeros(arr.shape),
                "parameter",
                nid,
                pp.id,
            )
        for oid, _ in np_.outputs:
            arr = _numeric(st.outputs.get(oid), f"{nw}.output_ports.{oid}")
            shapes[(nid, "out:" + oid)] = arr.shape
            add(
                ("o", nid, oid),
                safe_name(nid, oid),
                "float",
                np.zeros(arr.shape),
                "output_port",
                nid,
                oid,
            )
    add(("evals",), "evaluations", "int", np.int64(0), "evaluations")
    add(("time",), "time", "float", 0.0, "time")
    if sched is not None:
        for local, _ in sched.held():
            if local == "q_lp":
                continue
            if local.startswith("q_th"):
                add(("q", local), local[2:], "float", thr0[int(local[4:])], "scheduler")
            elif local.startswith(("q_ls", "q_ev")):
                add(("q", local), local[2:], "bool", np.bool_(False), "scheduler")
            else:
                add(("q", local), local[2:], "int", np.int64(0), "scheduler")
    return Layout(state, shapes, warm, constants)


def _value_shapes(warm: Any) -> dict:
    """The shape of every value of every node of ``warm`` (an interpreted graph)."""
    out = {}
    for nid, st in warm.states.items():
        for kind, d in (("p", st.params), ("o", st.outputs), ("i", st.inputs_read)):
            for k, v in d.items():
                out[(nid, kind, k)] = (
                    np.shape(v) if isinstance(v, (np.ndarray, float, int)) else None
                )
    return out


def _unconditioned(plan: Any, initializer: dict | None = None) -> Any:
    """The graph of ``plan`` run for WARM_UP_STEPS updates with no conditions (every node runs
    in every update)."""
    import dataclasses

    from ..interpreter import InterpretedGraph
    from ..plan import plan_graph

    g = dataclasses.replace(plan.graph, conditions=None)
    warm = InterpretedGraph(plan_graph(None, g))
    for k in range(WARM_UP_STEPS):
        warm.evaluate(time_increment=None if k == 0 else 1e-3, initializer=initializer)
    return warm


def is_constant(pp: Any) -> bool:
    """A parameter whose value never changes: a constant ``value`` and nothing stateful."""
    return pp.value is not None and pp.value.expr is None and not pp.stateful and not pp.conditions


def _index_scalar(v: Any, indices: Any) -> float:
    """The number a Threshold compares, as the schedulers read it (PsyNeuLink's (0, 0) on a
    value held as one number included)."""
    from ..schedulers.kinds.calls import threshold_number

    return threshold_number(v, indices, "a Threshold's value")


def _fresh(names: set[str], base: str) -> str:
    out, k = base, 1
    while out in names:
        out = f"{base}_{k}"
        k += 1
    names.add(out)
    return out
