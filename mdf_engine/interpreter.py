"""The interpreted backend: runs a :class:`~mdf_engine.plan.GraphPlan` step by step with numpy,
driven by graph-scheduler, with the reference engine's semantics.

One :meth:`InterpretedGraph.evaluate` call is one reference ``EvaluableGraph.evaluate()``: the
initializer sets input ports (by port id, in every node that has such a port), then each time step
that graph-scheduler yields runs its nodes; before a node runs, its incoming edges whose sender has
ever run deliver the sender's output (times the edge weight). A node reads (and consumes) its
inputs, sets every parameter to its previous value, evaluates its functions, then its parameters
in order (each sees the new values of those before it), then its output ports.

Where the reference has known bugs we do not copy them (see docs/semantics.md): ``reduce``
add/multiply never modify the sender's arrays in place, and nodes of one time step run in the
graph's declaration order (the reference uses Python set order).

In files PsyNeuLink wrote (``plan.psyneulink``), nodes of one time step read their senders'
outputs from before that step, as PsyNeuLink runs a consideration set (docs/semantics.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import interpreter_lean as lean_mod
from . import op_state
from .errors import EVALUATION_ERRORS, MDFError, evaluation_failed
from .interpreter_fused import fuse
from .interpreter_lean import Replay, lean_node, replay_step, static_schedule
from .plan import GraphPlan, NodePlan, ParameterPlan
from .plan.initializer import initializer_targets
from .psyneulink_files import to_port_shape

_UNSET = object()
#: The most time steps one evaluate() may take before the run is stopped as endless.
MAX_TIME_STEPS_PER_UPDATE = 100_000


class NodeState:
    """The current values of one node: pending inputs, parameters, functions and outputs."""

    __slots__ = ("plan", "pending", "params", "funcs", "outputs", "inputs_read")

    def __init__(self, plan: NodePlan):
        self.plan = plan
        self.pending = {ip.id: ip.initial_pending() for ip in plan.inputs}
        self.params: dict[str, Any] = {p.id: _UNSET for p in plan.parameters}
        self.funcs: dict[str, Any] = {fid: None for fid, _ in plan.functions}
        self.outputs: dict[str, Any] = {oid: None for oid, _ in plan.outputs}
        self.inputs_read: dict[str, Any] = {}

    def set_input(self, port_id: str, value: Any) -> None:
        cur = self.pending[port_id]
        if cur is None:
            self.pending[port_id] = value
            return
        mode = next(ip.reduce for ip in self.plan.inputs if ip.id == port_id)
        if mode == "overwrite":
            self.pending[port_id] = value
        elif mode == "add":
            self.pending[port_id] = cur + value
        else:
            self.pending[port_id] = cur * value

    def lookup(self, name: str) -> Any:
        """Current value of a port, parameter, function or output port by id."""
        if name in self.inputs_read:
            return self.inputs_read[name]
        if name in self.params:
            v = self.params[name]
            return None if v is _UNSET else v
        if name in self.funcs:
            return self.funcs[name]
        if name in self.outputs:
            return self.outputs[name]
        raise KeyError(name)


class InterpretedGraph:
    """A graph ready to run with the interpreted backend."""

    def __init__(self, plan: GraphPlan, check_finite: bool = False, own_scheduler: bool = False):
        """``own_scheduler``: run the schedule with the engine's own scheduler where it can
        (:mod:`mdf_engine.schedulers.own`: the compiled backend's warm-up, which then imports
        no graph-scheduler), else with graph-scheduler's."""
        self.plan = plan
        self.check_finite = check_finite
        self.states = {nid: NodeState(np_) for nid, np_ in plan.nodes.items()}
        self.order = list(plan.nodes)
        self.ever_ran: set[str] = set()
        #: each initializer key's (node, port) pairs, read once
        self._init_targets: dict[str, list[tuple[str, str]]] = {}
        #: what stateful ops (hexagon Variable/Assign) keep across evaluate() calls
        self.op_state: dict[Any, Any] = {}
        self.ran_this_trial: set[str] = set()
        self.order_of_execution: list[str] = []
        self.time_steps: list[set[str]] = []
        #: graph-scheduler's absolute time (a pint quantity) of each entry of ``time_steps``
        self.step_times: list[Any] = []
        #: index in ``time_steps`` of the first step of the last evaluate()
        self.update_start = 0
        self.evaluations = 0
        own = None
        if own_scheduler:
            from .schedulers.own import OwnScheduler

            own = OwnScheduler.make(
                plan.graph, self.threshold_value, plan.where, plan.scheduling_mode
            )
        if own is not None:
            self.scheduler, self.sched_nodes = own, own.sched_nodes
            #: graph-scheduler's absolute time (a pint quantity, or ms) of the current step
            self._now = own.now
        else:
            from .schedulers.conditions import make_scheduler  # (imports graph-scheduler)

            self.scheduler, self.sched_nodes = make_scheduler(
                plan.graph,
                value_getter=self.threshold_value,
                finished=self.is_finished,
                where=plan.where,
                mode=plan.scheduling_mode,
            )
            clock = self.scheduler.get_clock(self.scheduler.default_execution_id)
            self._now = lambda: clock.time.absolute
        #: PsyNeuLink files: per node, the (port, value) inputs of this update, which every
        #: execution of the node in the update reads again
        self.held: dict[str, list[tuple[str, Any]]] = {}
        self._rank = {nid: i for i, nid in enumerate(self.order)}
        #: fast paths (see mdf_engine.interpreter_lean): the replayed schedule of a graph
        #: without conditions, and per node a runner with its calls bound once (or None)
        self._replay = Replay() if static_schedule(plan) else None
        lean = {nid: lean_node(p, _UNSET) for nid, p in plan.nodes.items()}
        #: how many nodes run within another (mdf_engine.plan.fusion, interpreter_fused)
        self.fused = fuse(plan, lean)
        self._lean = {nid: None if n is None else n.runner() for nid, n in lean.items()}
        #: the replayed updates' time steps with each node's step bound (see _program_of)
        self._program: tuple[Any, list] | None = None
        self._initial: dict[str, dict[str, Any]] = {}
        self._port_shapes = {
            (nid, ip.id): ip.shape for nid, np_ in plan.nodes.items() for ip in np_.inputs
        }

    #: see :class:`mdf_engine.backends.base.Runner`: a plain graph is never finished, and a
    #: run given no step count takes one step
    finished = False
    default_steps = 1
    must_finish = False

    # -- values used by conditions -----------------------------------------------------------
    def threshold_value(self, node_id: str, name: str) -> Any:
        """The value a ``Threshold`` condition reads: the node's current value of ``name``, or
        (not computed yet) the zeros of its declared shape or its initial value."""
        st = self.states[node_id]
        plan = st.plan
        for kind in ("inputs_read", "params", "funcs", "outputs"):
            d = getattr(st, kind)
            if name in d:
                v = d[name]
                if v is not None and v is not _UNSET:
                    return v
                break
        for ip in plan.inputs:
            if ip.id == name:
                return np.zeros(ip.shape or ())
        node = self.plan.graph.get_node(node_id)
        op = node.get("output_ports", name)
        if op is not None and op.shape is not None:
            return np.zeros(op.shape)
        par = node.get("parameters", name)
        if par is not None and par.default_initial_value is not None:
            return par.default_initial_value
        return 0

    def is_finished(self, node_id: str) -> bool:
        """What ``WhenFinished`` reads: the node ran in this update and its ``is_finished``
        parameter or output (if any) is true."""
        if node_id not in self.ran_this_trial:
            return False
        st = self.states[node_id]
        for d in (st.params, st.outputs):
            if "is_finished" in d and d["is_finished"] not in (None, _UNSET):
                return bool(np.all(d["is_finished"]))
        return True

    # -- one reference evaluate() ------------------------------------------------------------
    def set_initializer(self, initializer: Mapping[str, Any] | None) -> None:
        self.held = {}
        if not initializer:
            return
        for key, value in initializer.items():
            targets = self._init_targets.get(key) if isinstance(key, str) else None
            if targets is None:
                targets = initializer_targets(self.plan, key)
                self._init_targets[key] = targets
            for nid, port in targets:
                self.states[nid].set_input(port, value)
                self._hold(nid, port, value)

    def _hold(self, nid: str, port: str, value: Any) -> None:
        if self.plan.psyneulink:
            self.held.setdefault(nid, []).append((port, value))

    def evaluate(
        self, time_increment: float | None = None, initializer: Mapping[str, Any] | None = None
    ) -> None:
        with op_state.bound(self.op_state):
            self._evaluate(time_increment, initializer)

    def _evaluate(
        self, time_increment: float | None, initializer: Mapping[str, Any] | None
    ) -> None:
        self.set_initializer(initializer)
        self.ran_this_trial = set()
        rank = self._rank
        self.update_start = len(self.time_steps)
        replay = self._replay
        if replay is not None and replay.steps is not None:
            ran, order = self.ran_this_trial, self.order_of_execution
            for nodes, t, steps in self._program_of(replay.steps):
                self.time_steps.append(set(nodes))
                self.step_times.append(t)
                for nid, step in steps:  # every node here has run before (ever_ran)
                    order.append(nid)
                    step(time_increment)
                    ran.add(nid)
            self.evaluations += 1
            lean_mod.rest_workers()
            return
        before_step = self.plan.psyneulink
        for k, ts in enumerate(self.scheduler.run()):
            if k >= MAX_TIME_STEPS_PER_UPDATE:
                raise MDFError(
                    f"no termination after {MAX_TIME_STEPS_PER_UPDATE} time steps "
                    "of one update: check the termination conditions",
                    self.plan.where,
                )
            nodes = sorted((str(n) for n in ts), key=rank.__getitem__)
            self.time_steps.append(set(nodes))
            self.step_times.append(self._now())
            frozen = None
            if before_step and len(nodes) > 1:
                frozen = {
                    n: dict(self.states[n].outputs) if n in self.ever_ran else None for n in nodes
                }
            for nid in nodes:
                self.order_of_execution.append(nid)
                if frozen is None:
                    self.run_node(nid, time_increment)
                else:
                    self.run_node(nid, time_increment, frozen)
                self.ever_ran.add(nid)
                self.ran_this_trial.add(nid)
        self.evaluations += 1
        if replay is not None:
            start = self.update_start
            replay.observe(
                [
                    (tuple(sorted(s, key=rank.__getitem__)), _ms(t))
                    for s, t in zip(self.time_steps[start:], self.step_times[start:])
                ]
            )

    def _program_of(self, steps: list) -> list:
        """The replayed time steps with each node's execution bound once: its plain incoming
        edges (no weight or matrix, every sender run before) delivered as ``run_node`` does,
        then its lean runner; other nodes (and ``check_finite``) go through ``run_node``."""
        if self._program is None or self._program[0] is not steps:
            par = not (self.check_finite or self.plan.psyneulink)  # (else run_node's)
            prog = [(nodes, t, [(n, self._step_of(n)) for n in nodes]) for nodes, t in steps]
            if par:  # independent nodes of a step overlap (interpreter_lean.parallel_step)
                group = lean_mod.parallel_program
                prog = [(n, t, group(self.plan, self._lean, b)) for n, t, b in prog]
            self._program = (steps, prog)
        return self._program[1]

    def _step_of(self, nid: str) -> Any:
        st = self.states[nid]
        modes = {ip.id: ip.reduce for ip in st.plan.inputs}
        feeds = []
        if self.check_finite or self.plan.psyneulink:
            return lambda dt: self.run_node(nid, dt)
        for ep in self.plan.incoming[nid]:
            mode = modes.get(ep.receiver_port)
            if ep.matrix is not None or ep.has_weight or mode is None:
                return lambda dt: self.run_node(nid, dt)
            if ep.sender not in self.ever_ran:
                return lambda dt: self.run_node(nid, dt)
            feeds.append((self.states[ep.sender].outputs, ep.sender_port, ep.receiver_port, mode))
        return replay_step(st, feeds, self._lean[nid] or evaluate_node)

    def prepare(self, initializer: Mapping[str, Any] | None, dt: float | None) -> None:
        """Nothing to get ready: the interpreted backend runs the plan as it is."""

    def run_steps(
        self,
        steps: int,
        dt: float | None,
        initializer: Mapping[str, Any] | None,
        first_without_dt: bool = True,
    ) -> None:
        """``steps`` evaluate() calls: the first without a time increment if
        ``first_without_dt``, the rest with ``dt``."""
        for k in range(steps):
            inc = None if ((k == 0 and first_without_dt) or dt is None) else dt
            self.evaluate(time_increment=inc, initializer=initializer)

    def value(self, node: str, name: str) -> Any:
        """Current value of a port, parameter, function or output port of ``node``."""
        if node not in self.states:
            raise MDFError(f"no node '{node}'")
        try:
            return self.states[node].lookup(name)
        except KeyError:
            raise MDFError(f"node '{node}' has no port, parameter or function '{name}'") from None

    def outputs(self) -> dict[str, dict[str, Any]]:
        """``{node: {output port: current value}}``."""
        return {nid: dict(st.outputs) for nid, st in self.states.items()}

    def last_update_steps(self) -> tuple[list[set[str]], list[float]]:
        """The time steps of the last evaluate() and their absolute times in ms."""
        start = self.update_start
        return self.time_steps[start:], [
            t if type(t) is float else _ms(t) for t in self.step_times[start:]
        ]

    def run_node(
        self,
        nid: str,
        dt: float | None,
        frozen: Mapping[str, Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Deliver ``nid``'s incoming edges and run it. ``frozen`` (PsyNeuLink files): the
        nodes of this time step with their outputs from before it (None: not run before)."""
        st = self.states[nid]
        held = dict(self.held.get(nid, ()))
        for port, value in held.items():
            if st.pending[port] is None:
                st.set_input(port, value)
        for ep in self.plan.incoming[nid]:
            if frozen is not None and ep.sender in frozen:
                outs = frozen[ep.sender]
                if outs is None:
                    outs = self.initial_outputs(ep.sender)
                    if outs is None:
                        continue
                value = outs[ep.sender_port]
            elif ep.sender in self.ever_ran:
                value = self.states[ep.sender].outputs[ep.sender_port]
            else:
                outs = self.initial_outputs(ep.sender)
                if outs is None:
                    continue
                value = outs[ep.sender_port]
            if ep.matrix is not None:
                value = _project(value, ep, self.plan.where)
            if ep.has_weight:
                try:
                    value = ep.weight * value
                except (ValueError, TypeError, OverflowError) as e:  # (an int beyond float)
                    raise MDFError(
                        f"cannot apply the weight: {type(e).__name__}: {e}",
                        f"{self.plan.where}.edges.{ep.id}.parameters.weight",
                    ) from None
            if self.plan.psyneulink:
                value = to_port_shape(value, self._port_shapes.get((nid, ep.receiver_port)))
                if ep.receiver_port in held:  # PsyNeuLink sums a port's afferents, the
                    value = held[ep.receiver_port] + value  # external input one of them
            st.set_input(ep.receiver_port, value)
        (self._lean[nid] or evaluate_node)(st, dt)
        if self.check_finite:
            _check_finite(st, self.evaluations)

    def initial_outputs(self, nid: str) -> dict[str, Any] | None:
        """PsyNeuLink files: what a node that has not run yet sends, its outputs computed from
        its default inputs (PsyNeuLink gives each mechanism that value when it is built: an
        unrun Logistic sends 0.5), without changing its state; None for other files."""
        if not self.plan.psyneulink:
            return None
        if nid not in self._initial:
            probe = NodeState(self.plan.nodes[nid])
            evaluate_node(probe, None)
            self._initial[nid] = dict(probe.outputs)
        return self._initial[nid]


def _project(value: Any, ep: Any, where: str) -> Any:
    """A PsyNeuLink projection: the sender's value times the edge's matrix."""
    try:
        return np.matmul(value, ep.matrix)
    except (ValueError, TypeError, OverflowError) as e:  # e.g. an int beyond float range
        raise MDFError(
            f"cannot apply the projection matrix: {e}", f"{where}.edges.{ep.id}"
        ) from None


def _ms(t: Any) -> float:
    """graph-scheduler's absolute time (a pint quantity) in milliseconds."""
    return float(t.to("ms").m) if hasattr(t, "to") else float(t)


def evaluate_node(st: NodeState, dt: float | None) -> None:
    """One node execution with the reference semantics (see the module docstring)."""
    plan = st.plan
    env: dict[str, Any] = {}
    for ip in plan.inputs:
        v = st.pending[ip.id]
        if v is None:
            v = ip.fallback()
        st.pending[ip.id] = None
        env[ip.id] = v
    st.inputs_read = {ip.id: env[ip.id] for ip in plan.inputs}
    for pp in plan.parameters:
        env[pp.id] = _current_value(st, pp, env)
    for fid, call in plan.functions:
        env[fid] = st.funcs[fid] = _guard(call.evaluate, env, plan.where, f"functions.{fid}")
    for pp in plan.parameters:
        env[pp.id] = st.params[pp.id] = _evaluate_parameter(st, pp, env, dt, plan.where)
    for oid, vp in plan.outputs:
        st.outputs[oid] = _guard(vp.evaluate, env, plan.where, f"output_ports.{oid}")


def _current_value(st: NodeState, pp: ParameterPlan, env: dict) -> Any:
    cur = st.params[pp.id]
    if cur is not _UNSET:
        return cur
    if pp.value is not None or pp.initial is not None:
        if pp.stateful:
            return pp.initial.evaluate(env) if pp.initial is not None else 0.0
        env[pp.id] = 0.0
        v = pp.value.evaluate(env)
        st.params[pp.id] = v
        return v
    return None


def _evaluate_parameter(
    st: NodeState, pp: ParameterPlan, env: dict, dt: float | None, where: str
) -> Any:
    w = f"parameters.{pp.id}"
    old = st.params[pp.id]
    cur = None if old is _UNSET else old
    if pp.value is not None:
        cur = _guard(pp.value.evaluate, env, where, w)
    elif pp.call is not None:
        cur = _guard(pp.call.evaluate, env, where, w)
    elif pp.derivative is not None:
        if dt is None:
            cur = _guard(pp.initial.evaluate, env, where, w) if pp.initial is not None else None
        else:
            td = _guard(pp.derivative.evaluate, env, where, w + ".time_derivative")
            base = (
                cur
                if cur is not None
                else (_guard(pp.initial.evaluate, env, where, w) if pp.initial is not None else 0.0)
            )
            # a state and its derivative that do not broadcast is the model's error, not ours
            cur = _guard(
                lambda _: np.add(base, td * dt, casting="safe"), env, where, w + ".time_derivative"
            )
    for _cid, test, value in pp.conditions:
        mask = _guard(test.evaluate, env, where, w + ".conditions")
        val = _guard(value.evaluate, env, where, w + ".conditions")
        if cur is None:
            cur = 0.0
        cur = _guard(
            lambda _, m=mask, v=val, c=cur: np.where(m, v, c), env, where, f"{w}.conditions.{_cid}"
        )
    return cur


def _guard(fn, env, where: str, what: str) -> Any:
    try:
        return fn(env)
    except MDFError as e:
        if e.path:
            raise
        raise MDFError(e.message, f"{where}.{what}") from None
    except EVALUATION_ERRORS as e:
        raise evaluation_failed(e, f"{where}.{what}") from None


def _check_finite(st: NodeState, step: int) -> None:
    for kind, values in (("parameter", st.params), ("output port", st.outputs)):
        for k, v in values.items():
            if v is None or v is _UNSET:
                continue
            try:
                arr = np.asarray(v, dtype=float)
            except (TypeError, ValueError):
                continue
            if not np.all(np.isfinite(arr)):
                raise MDFError(
                    f"non-finite value in {kind} '{k}' at step {step}", f"{st.plan.where}"
                )
