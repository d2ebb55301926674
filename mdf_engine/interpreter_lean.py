"""Fast paths of the interpreted backend for plain dataflow graphs (ONNX imports above all),
which give the same values, time steps and errors as the general path with less Python per
node and per step.

* :class:`Replay`: a graph without conditions (every node ``Always``, the default termination),
  run in the standard scheduling mode and not written by PsyNeuLink, takes the same time steps
  at the same times in every ``evaluate()``: graph-scheduler's conditions read nothing that
  changes. The first two updates are run by graph-scheduler and recorded; if they agree, later
  updates replay them without asking the scheduler (whose condition checks and clock, a pint
  quantity per step, cost about a millisecond per time step).
* :func:`lean_node`: a node whose parameters are constants or calls of registered functions
  with constant attributes and inputs that are plain names gets a runner that binds each call
  once (kernel, attribute defaults merged and checked, input names resolved) and then does per
  execution only what :func:`mdf_engine.interpreter.evaluate_node` would do for such a node:
  read and consume the inputs, set the parameters in order, evaluate the output ports. A kernel
  registered with ``prepare=`` (Conv) is bound further to its constant inputs (the weights):
  ``prepare([(known, value) per input], attributes)`` returns a callable of the inputs that
  gives the kernel's values with the per-call preparation done once, or None.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .errors import EVALUATION_ERRORS, MDFError, evaluation_failed
from .plan import GraphPlan, NodePlan
from .plan.parts import CallPlan, ValuePlan


def static_schedule(plan: GraphPlan) -> bool:
    """Whether the graph's schedule cannot depend on values: no conditions at all, standard
    scheduling, not a PsyNeuLink file (whose input nodes re-read their trial inputs)."""
    cs = plan.graph.conditions
    if cs is not None and (cs.node_specific or cs.termination):
        return False
    return plan.scheduling_mode == "standard" and not plan.psyneulink


class Replay:
    """The recorded time steps of an update of a graph with a static schedule (see the
    module docstring): ``steps`` is set once two scheduler-run updates agreed."""

    __slots__ = ("first", "steps")

    def __init__(self) -> None:
        self.first: list[tuple[tuple[str, ...], float]] | None = None
        #: (node ids in run order, absolute time in ms) per time step, once confirmed
        self.steps: list[tuple[tuple[str, ...], float]] | None = None

    def observe(self, steps: list[tuple[tuple[str, ...], float]]) -> None:
        """Record the time steps of one scheduler-run update; replay once two agree."""
        if self.first is None:
            self.first = steps
        elif steps == self.first:
            self.steps = steps
        else:  # not the same every update after all: keep asking the scheduler
            self.first = steps


def _bare_name(vp: ValuePlan) -> str | None:
    """The name a value is exactly (``x``, not ``x[0]``), else None."""
    e = vp.expr
    if e is None or not isinstance(e.tree.body, ast.Name):
        return None
    name = e.tree.body.id
    return None if name in ("True", "False", "None") else name


class _BoundCall:
    """One call of a registered function with its kernel, attributes and inputs resolved:
    each input is a constant or a name read from the node's values."""

    __slots__ = ("pid", "kernel", "attrs", "inputs", "wanted", "keep_tuple", "where")

    def __init__(self, pid: str, call: CallPlan, consts: dict[str, Any], where: str):
        self.pid = pid
        schema = call.schema
        args = dict(call.args)
        fp_consts: dict[str, Any] = {}
        refs: dict[str, str] = {}
        for k, vp in call.args:
            if vp.expr is None:
                fp_consts[k] = vp.const
                continue
            name = _bare_name(vp)
            if name is None or name in args:
                raise _NotLean
            if name in consts:  # a constant parameter of the node (sibling attributes)
                fp_consts[k] = consts[name]
            else:
                refs[k] = name
        attrs = {}
        for n in call.attribute_names:
            if n not in fp_consts:
                raise _NotLean
            attrs[n] = fp_consts[n]
        # what OpSchema.call checks and merges per call, done once (a call that fails the
        # checks is left to the general path, which reports it when the node runs)
        merged = dict(schema._defaults)
        if any(k not in schema.attributes for k in attrs):
            raise _NotLean
        merged.update(attrs)
        if any(k not in merged for k in schema._required_attributes):
            raise _NotLean
        if call.outputs_wanted is not None and schema.extra.get("skips_outputs"):
            merged["outputs_wanted"] = int(call.outputs_wanted)
        inputs: list[tuple[bool, Any]] = []  # (read from the node's values, name or value)
        for n in call.input_names:
            if n is None:
                inputs.append((False, None))
            elif n in refs:
                inputs.append((True, refs[n]))
            elif n in fp_consts:
                inputs.append((False, fp_consts[n]))
            else:
                raise _NotLean
        self.kernel = schema.kernel
        self.attrs = merged
        prepare = schema.extra.get("prepare")
        known = [(not ref, None if ref else v) for ref, v in inputs]
        fast = prepare(known, merged) if prepare is not None else None
        if fast is not None:  # the kernel bound to its known inputs and attributes
            self.kernel = fast
            self.attrs = {}
        self.inputs = inputs
        self.wanted = call.outputs_wanted
        self.keep_tuple = call.keep_tuple
        self.where = f"{where}.parameters.{pid}"

    def __call__(self, env: dict[str, Any]) -> Any:
        try:
            out = self.kernel(*[env[v] if ref else v for ref, v in self.inputs], **self.attrs)
        except MDFError as e:
            if e.path:
                raise
            raise MDFError(e.message, self.where) from None
        except EVALUATION_ERRORS as e:
            raise evaluation_failed(e, self.where) from None
        if not isinstance(out, tuple):
            out = (out,)
        if self.wanted is not None:
            out = out[: self.wanted]
        return out[0] if len(out) == 1 and not self.keep_tuple else out


class _NotLean(Exception):
    """The node needs the general path."""


def lean_node(plan: NodePlan, unset: Any) -> Callable[[Any, float | None], None] | None:
    """A runner ``(state, dt)`` of ``plan`` equal to ``evaluate_node`` for it, or None when
    the node has functions, state, conditions or calls the lean path does not bind.
    ``unset``: the interpreter's marker of a parameter that has no value yet."""
    if plan.functions:
        return None
    consts: dict[str, Any] = {}
    order: list[tuple[str, Any]] = []  # (pid, constant) or (pid, _BoundCall)
    try:
        for pp in plan.parameters:
            if pp.stateful or pp.derivative is not None or pp.conditions or pp.initial is not None:
                return None
            if pp.value is not None:
                if pp.value.expr is not None:
                    return None
                consts[pp.id] = pp.value.const
                order.append((pp.id, pp.value.const))
            elif pp.call is not None and pp.call.schema is not None:
                order.append((pp.id, _BoundCall(pp.id, pp.call, consts, plan.where)))
            else:
                return None
    except _NotLean:
        return None
    outputs = []
    for oid, vp in plan.outputs:
        name = _bare_name(vp)
        outputs.append((oid, name, vp, f"{plan.where}.output_ports.{oid}"))
    inputs = [(ip.id, ip) for ip in plan.inputs]
    calls = [(pid, c) for pid, c in order if isinstance(c, _BoundCall)]
    constants = [(pid, c) for pid, c in order if not isinstance(c, _BoundCall)]

    def run(st: Any, dt: float | None) -> None:
        env: dict[str, Any] = {}
        pending = st.pending
        for iid, ip in inputs:
            v = pending[iid]
            if v is None:
                v = ip.fallback()
            pending[iid] = None
            env[iid] = v
        st.inputs_read = dict(env)
        params = st.params
        for pid, c in constants:
            env[pid] = params[pid] = c
        for pid, _c in calls:  # a call sees the previous value of the calls after it
            v = params[pid]
            env[pid] = None if v is unset else v
        for pid, c in calls:
            env[pid] = params[pid] = c(env)
        outs = st.outputs
        for oid, name, vp, where in outputs:
            if name is not None:
                v = env.get(name, unset)
                outs[oid] = _evaluate(vp, env, where) if v is unset else v
            else:
                outs[oid] = _evaluate(vp, env, where)

    return run


def _evaluate(vp: ValuePlan, env: dict[str, Any], where: str) -> Any:
    """``vp`` over ``env`` with the general path's error wrapping."""
    try:
        return vp.evaluate(env)
    except MDFError as e:
        if e.path:
            raise
        raise MDFError(e.message, where) from None
    except EVALUATION_ERRORS as e:
        raise evaluation_failed(e, where) from None
