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
import copy
import sys
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


class BoundCall:
    """One call of a registered function with its kernel, attributes and inputs resolved:
    each input is a constant or a name read from the node's values."""

    __slots__ = (
        "pid",
        "kernel",
        "attrs",
        "inputs",
        "wanted",
        "keep_tuple",
        "where",
        "first",
        "rest",
        "known",
        "merged",
    )

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
        #: what ``prepare`` got: (known, value) per input, and the attributes
        self.known, self.merged = known, merged
        self.inputs = inputs
        self.wanted = call.outputs_wanted
        self.keep_tuple = call.keep_tuple
        self.where = f"{where}.parameters.{pid}"
        #: the name of the one input read from the node's values when it is the first input
        #: (then :meth:`one` calls the kernel), and the constant inputs after it
        refs_at = [i for i, (ref, _v) in enumerate(inputs) if ref]
        self.first = inputs[0][1] if refs_at == [0] else None
        self.rest = tuple(v for _ref, v in inputs[1:])

    def prepared(self, prepare: Callable) -> BoundCall | None:
        """This call with its kernel bound by ``prepare`` instead (the schema's ``prepare=``
        protocol), giving the kernel's result as a tuple; None when ``prepare`` declines."""
        fast = prepare(self.known, self.merged)
        if fast is None:
            return None
        other = copy.copy(self)
        other.kernel, other.attrs, other.wanted, other.keep_tuple = fast, {}, None, True
        return other

    def one(self, x: Any) -> Any:
        """The call given the value ``x`` of its one input read from the node (see ``first``),
        the same as ``self({first: x})``."""
        try:
            if self.attrs:
                out = self.kernel(x, *self.rest, **self.attrs)
            else:
                out = self.kernel(x, *self.rest)
        except MDFError as e:
            if e.path:
                raise
            raise MDFError(e.message, self.where) from None
        except EVALUATION_ERRORS as e:
            raise evaluation_failed(e, self.where) from None
        return self._result(out)

    def one_into(self, x: Any, out: Any) -> Any:
        """:meth:`one` with the kernel also given ``relu_out=out`` (a kernel bound by
        :func:`~mdf_engine.onnx_ops._conv_relu.prepare_conv_relu`, see :meth:`prepared`)."""
        try:
            out = self.kernel(x, *self.rest, relu_out=out)
        except MDFError as e:
            if e.path:
                raise
            raise MDFError(e.message, self.where) from None
        except EVALUATION_ERRORS as e:
            raise evaluation_failed(e, self.where) from None
        return self._result(out)

    def __call__(self, env: dict[str, Any]) -> Any:
        try:
            if self.attrs:
                out = self.kernel(*[env[v] if ref else v for ref, v in self.inputs], **self.attrs)
            else:
                out = self.kernel(*[env[v] if ref else v for ref, v in self.inputs])
        except MDFError as e:
            if e.path:
                raise
            raise MDFError(e.message, self.where) from None
        except EVALUATION_ERRORS as e:
            raise evaluation_failed(e, self.where) from None
        return self._result(out)

    def _result(self, out: Any) -> Any:
        """The parameter's value from the kernel's result ``out``."""
        if type(out) is tuple:
            if len(out) == 1 and self.wanted is None and not self.keep_tuple:
                return out[0]
        elif not isinstance(out, tuple):
            out = (out,)
        if self.wanted is not None:
            out = out[: self.wanted]
        return out[0] if len(out) == 1 and not self.keep_tuple else out


class _NotLean(Exception):
    """The node needs the general path."""


def _item(vp: ValuePlan) -> tuple[str, int] | None:
    """``(name, i)`` when a value is exactly ``name[i]`` for an int constant ``i`` (the
    ``maxpool[0]`` output of an ONNX import), else None."""
    e = vp.expr
    if e is None:
        return None
    b = e.tree.body
    if not (isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name)):
        return None
    i = b.slice
    if not (isinstance(i, ast.Constant) and type(i.value) is int):
        return None
    return b.value.id, i.value


class LeanNode:
    """A node bound for the lean path (see :func:`lean_node`); :meth:`runner` gives its run."""

    def __init__(self, plan: NodePlan, unset: Any):
        if plan.functions:
            raise _NotLean
        consts: dict[str, Any] = {}
        calls: list[tuple[str, Any]] = []
        for pp in plan.parameters:
            if pp.stateful or pp.derivative is not None or pp.conditions or pp.initial is not None:
                raise _NotLean
            if pp.value is not None:
                if pp.value.expr is not None:
                    raise _NotLean
                consts[pp.id] = pp.value.const
            elif pp.call is not None and pp.call.schema is not None:
                calls.append((pp.id, BoundCall(pp.id, pp.call, consts, plan.where)))
            else:
                raise _NotLean
        self.unset = unset
        self.consts = consts
        self.calls = calls
        # a call that reads a call's parameter sees its previous value (or None)
        ids = {pid for pid, _ in calls}
        self.prev = any(ref and v in ids for _, c in calls for ref, v in c.inputs)
        self.inputs = [(ip.id, ip.fallback) for ip in plan.inputs]
        self.outputs = []
        for oid, vp in plan.outputs:
            item = _item(vp)
            name, index = item if item is not None else (_bare_name(vp), None)
            self.outputs.append((oid, name, index, vp, f"{plan.where}.output_ports.{oid}"))
        #: what runs after the node's outputs are set, given the value of ``then_port``
        #: (a fused pair's Conv node: the Relu, see :mod:`mdf_engine.interpreter_fused`)
        self.then: Callable[[Any], None] | None = None
        self.then_port: str | None = None

    def call_of(self, pid: str) -> Any:
        """The bound call of parameter ``pid``."""
        return next(c for p, c in self.calls if p == pid)

    def replace_call(self, pid: str, call: Any) -> None:
        """Run ``call`` (``call(env)``, and ``call.one(x)`` with ``call.first`` as a
        :class:`BoundCall` has them) for parameter ``pid``."""
        self.calls = [(p, call if p == pid else c) for p, c in self.calls]

    def runner(self) -> Callable[[Any, float | None], None]:
        """The run ``(state, dt)`` of the node, equal to ``evaluate_node`` for it."""
        unset, consts, calls, prev = self.unset, self.consts, self.calls, self.prev
        inputs, outputs, then, then_port = self.inputs, self.outputs, self.then, self.then_port
        if (
            len(inputs) == 1
            and len(calls) == 1
            and len(outputs) == 1
            and calls[0][1].first == inputs[0][0]
            and outputs[0][1] == calls[0][0]
            and inputs[0][0] not in consts
            and inputs[0][0] != calls[0][0]
        ):
            return self._one_runner()

        def run(st: Any, dt: float | None) -> None:
            pending = st.pending
            read = {}
            for iid, fallback in inputs:
                v = pending[iid]
                if v is None:
                    v = fallback()
                pending[iid] = None
                read[iid] = v
            st.inputs_read = read
            env = dict(read)
            params = st.params
            if consts:
                params.update(consts)
                env.update(consts)
            if prev:
                for pid, _c in calls:  # a call sees the previous value of the calls after it
                    v = params[pid]
                    env[pid] = None if v is unset else v
            for pid, c in calls:
                env[pid] = params[pid] = c(env)
            outs = st.outputs
            for oid, name, index, vp, where in outputs:
                v = unset if name is None else env.get(name, unset)
                if index is None:
                    outs[oid] = _evaluate(vp, env, where) if v is unset else v
                elif type(v) is tuple and -len(v) <= index < len(v):
                    outs[oid] = v[index]
                else:
                    outs[oid] = _evaluate(vp, env, where)
            if then is not None:
                then(outs[then_port])

        return run

    def _one_runner(self) -> Callable[[Any, float | None], None]:
        """The run of a node with one input port, one call reading it first (the others
        constants), one output port that is the call's value or an item of it: the general
        run without its dictionaries (an ONNX import's node)."""
        consts, then = self.consts, self.then
        (iid, fallback), ((pid, call),) = self.inputs[0], self.calls
        oid, _name, index, vp, where = self.outputs[0]
        one = call.one

        def run(st: Any, dt: float | None) -> None:
            pending = st.pending
            v = pending[iid]
            if v is None:
                v = fallback()
            pending[iid] = None
            st.inputs_read = {iid: v}
            params = st.params
            if consts:
                params.update(consts)
            r = params[pid] = one(v)
            if index is None:
                st.outputs[oid] = r
            elif type(r) is tuple and -len(r) <= index < len(r):
                st.outputs[oid] = r[index]
            else:
                st.outputs[oid] = _evaluate(vp, {iid: v, **consts, pid: r}, where)
            if then is not None:
                then(st.outputs[oid])

        return run


def lean_node(plan: NodePlan, unset: Any) -> LeanNode | None:
    """``plan`` bound for the lean path (its :meth:`LeanNode.runner` runs it as
    ``evaluate_node`` would), or None when the node has functions, state, conditions or calls
    the lean path does not bind. ``unset``: the interpreter's marker of a parameter that has
    no value yet."""
    try:
        return LeanNode(plan, unset)
    except _NotLean:
        return None


def replay_step(
    st: Any, feeds: list[tuple[dict[str, Any], str, str, str]], run: Callable
) -> Callable[[float | None], None]:
    """One node's execution in a replayed update: deliver ``feeds`` (sender's outputs, sender
    port, receiver port, the port's reduce mode: the plain edges whose sender has run, as
    ``InterpretedGraph.run_node`` delivers them through ``NodeState.set_input``), then
    ``run(st, dt)``."""
    pending = st.pending

    def step(dt: float | None) -> None:
        for outs, sp, rp, mode in feeds:
            v = outs[sp]
            cur = pending[rp]
            if cur is None or mode == "overwrite":
                pending[rp] = v
            elif mode == "add":
                pending[rp] = cur + v
            else:
                pending[rp] = cur * v
        run(st, dt)

    return step


#: the worker threads of shared kernels (:mod:`mdf_engine.onnx_ops._threads_pool`), looked up
#: in ``sys.modules`` only: a graph without such kernels never imports them
POOL = "mdf_engine.onnx_ops._threads_pool"


def rest_workers() -> None:
    """The end of an update: the kernels' worker threads, if loaded, need not spin for more
    work (:func:`~mdf_engine.onnx_ops._threads_pool.rest`)."""
    pool = sys.modules.get(POOL)
    if pool is not None:
        pool.rest()


def parallel_program(
    plan: GraphPlan, lean: dict[str, Any], steps: list[tuple[str, Callable]]
) -> list[tuple[str, Callable]]:
    """The bound steps of one replayed time step, those of two or more lean nodes none of
    which is fed by another (see :func:`parallel_step`) run by the first one's step (the
    others' steps then do nothing)."""
    here = {n for n, _ in steps}
    if len(steps) < 2 or any(
        lean.get(n) is None or any(ep.sender in here for ep in plan.incoming[n]) for n in here
    ):
        return steps
    return [(steps[0][0], parallel_step(steps))] + [(n, _nothing) for n, _ in steps[1:]]


def _nothing(dt: float | None) -> None:
    """The step of a node that a :func:`parallel_step` runs."""


def parallel_step(steps: list[tuple[str, Callable[[float | None], None]]]):
    """One time step of independent nodes (none reads another's value in the step), run so
    that the first node's shared kernel, if it has one, overlaps the others: when it hands its
    items to a worker thread, the calling thread runs the other nodes' steps meanwhile (their
    Python, their own kernels), then takes what is left of its items
    (:func:`~mdf_engine.onnx_ops._threads_pool.while_sharing`). Each node computes exactly what
    it computes alone; a fire module's 1x1 and 3x3 expand convolutions (SqueezeNet) are such a
    step. Errors are those of the nodes one after another: the first node's, else the first of
    the others'."""
    first, rest = steps[0][1], [s for _, s in steps[1:]]

    def step(dt: float | None) -> None:
        pool = sys.modules.get(POOL)
        if pool is None or pool.numba_threads() == 1:  # (nothing is shared on one thread)
            first(dt)
            for s in rest:
                s(dt)
            return
        errors: list[BaseException] = []

        def others() -> None:
            for s in rest:
                try:
                    s(dt)
                except BaseException as e:  # noqa: BLE001 - raised after the first node
                    errors.append(e)
                    return

        pool.while_sharing(others)
        try:
            first(dt)
        finally:
            left = pool.while_sharing(None)
        if left is not None:  # the first node shared nothing: the others run now
            left()
        if errors:
            raise errors[0]

    return step


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
