"""MDF -> ONNX for stateful graphs: one update as a function of the state (``step``), or a
whole run as one ``Loop`` (``run``).

* :func:`to_onnx_step`: inputs are the graph's external input ports (``NODE_PORT``, each with
  its default as an initializer, so feeding it is optional), ``dt`` and every piece of state
  (``state__...``, each with its initial value as an initializer); outputs are every output
  port (``NODE_PORT``) and the next state (``next__...``, in the order of the state inputs).
  Calling it N times, feeding each ``next__X`` back as ``state__X``, is ``Simulation.run(
  steps=N, dt=DT)``: the first call (``state__evaluations`` = 0) initialises the
  ``time_derivative`` states, as an ``evaluate()`` without a time increment does.
* :func:`to_onnx_run`: the step inside an ONNX ``Loop`` of N iterations, ``dt`` a constant;
  outputs are the final value of every output port (``NODE_PORT``) and, for each recorded
  ``NODE.PORT``, its value after every step (``NODE_PORT__series``, first axis the step).

Both store the layout in the model's ``metadata_props`` under ``mdf_engine.stateful`` (JSON:
the state's names and initial values' roles, the ports' names, ``dt``, ``steps``); see
docs/onnx_io.md.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import MDFError, NotCompilable
from ..results import atomic_write_bytes
from .exporter import choose_opset, port_type
from .state_layout import Layout, layout
from .step_nodes import precheck
from .step_schedule import (
    UpdateEmitter,
    emit_loop,
    kind_elem,
    repeating_schedule,
    static_sets,
)
from .step_translate import StepTranslator, safe_name
from .translate import Builder, Val

__all__ = ["to_onnx_step", "to_onnx_run", "export_stateful", "METADATA_KEY"]

METADATA_KEY = "mdf_engine.stateful"


class _Export:
    """Everything one stateful export shares: the plan, the state layout, the builder."""

    def __init__(
        self,
        model: Any,
        graph: str | None,
        dtype: str | None,
        opset: int | None,
        scheduling_mode: str = "standard",
        initializer: dict | None = None,
    ):
        from ..loader import load
        from ..plan import plan_graph
        from ..schedulers.codegen import SchedulerSource
        from ..schedulers.compiled import encode

        self.model = model = load(model)
        self.source = getattr(model, "_source", None)
        g = self.g = model.get_graph(graph)
        self.where = f"graphs.{g.id}"
        dtype = dtype or "float64"
        if dtype not in ("float32", "float64"):
            raise MDFError(f"dtype must be float32 or float64, got {dtype!r}")
        if scheduling_mode not in ("standard", "exact_time"):
            raise MDFError(
                f"scheduling mode must be 'standard' or 'exact_time', got {scheduling_mode!r}",
                f"{self.where}.conditions",
                self.source,
            )
        self.plan = plan_graph(model, g, self.source, scheduling_mode)
        # the graph as planned: a writer's conventions may rewrite it (PsyNeuLink's projection
        # nodes fold into edge weights)
        g = self.g = self.plan.graph
        precheck(self.plan, self.source)
        self.opset = opset or choose_opset(model, g)
        self.b = Builder(dtype, self.opset)
        self.b.names.add("dt")  # the step model's time increment input
        self.node_ids = [n.id for n in g.nodes]
        from ..interpreter import InterpretedGraph

        probe = InterpretedGraph(self.plan)
        # graph-scheduler gives nodes without a condition their default one when it first
        # runs (EveryNCalls of a sender): encode the conditions of a scheduler that has run
        self.initializer = dict(initializer or {})
        try:
            probe.evaluate(initializer=self.initializer)
        except MDFError as e:
            if self.initializer:
                raise
            hint = " (the export runs the graph once to learn its shapes: give example inputs)"
            raise MDFError(e.message + hint, e.path, e.source) from None
        try:
            table, roots, term, queue = encode(probe.scheduler, self.node_ids)
            sched = SchedulerSource(table, roots, term, queue, len(self.node_ids))
        except NotCompilable as e:
            raise MDFError(
                f"a scheduling condition cannot be exported to ONNX: {e}",
                f"{self.where}.conditions",
                self.source,
            ) from None
        sets = static_sets(table, roots, term, queue, len(self.node_ids))
        if sets is None:
            sets = repeating_schedule(sched, probe.time_steps, self.node_ids)
        self.sched = None if sets is not None else sched
        self.lay: Layout = layout(
            self.plan, self.b.names, self.sched, table.thresholds, initializer=self.initializer
        )
        self.upd = UpdateEmitter(
            self.b, self.plan, self.lay, self.node_ids, sets, self.sched, table.thresholds
        )
        self.tr = StepTranslator(self.b, SimpleNamespace(id="state"), self.where, {})
        self.inputs: list[Any] = []
        self.ext: dict[tuple[str, str], Val] = {}
        self.ext_names: dict[str, str] = {}
        self._external_inputs()

    def _external_inputs(self) -> None:
        from onnx import helper

        for n in self.g.nodes:
            for ip in n.input_ports:
                given = self.initializer.get(f"{n.id}.{ip.id}", self.initializer.get(ip.id))
                if any(e.receiver == n.id and e.receiver_port == ip.id for e in self.g.edges):
                    # PsyNeuLink files: a trial's input to a port with edges adds to them
                    if not (self.plan.psyneulink and given is not None):
                        continue
                name = self.b.fresh(safe_name(n.id, ip.id))
                pp = next(p for p in self.plan.nodes[n.id].inputs if p.id == ip.id)
                elem, _ = port_type(ip, self.b.dtype.name)
                default = np.asarray(pp.fallback() if given is None else given, dtype=float)
                self.b.inits.append(_tensor(default.astype(self.b.dtype), name))
                self.inputs.append(
                    helper.make_tensor_value_info(
                        name, kind_elem(self.b, "float"), list(default.shape)
                    )
                )
                self.ext[(n.id, ip.id)] = Val(name, "float")
                self.ext_names[f"{n.id}.{ip.id}"] = name

    def aliases(self) -> dict[tuple, tuple]:
        """Output ports whose value is the name of a non-constant parameter of their node: in a
        fixed schedule, from the end of the first update on, they hold that parameter's value
        (the same ONNX value), so a run's Loop carries it once."""
        if self.upd.sets is None:
            return {}
        out = {}
        for nid, np_ in self.plan.nodes.items():
            for oid, vp in np_.outputs:
                target = ("p", nid, vp.text.strip()) if isinstance(vp.text, str) else None
                if vp.expr is not None and target in self.lay.state:
                    out[("o", nid, oid)] = target
        return out

    def initial_state(self) -> dict[tuple, Val]:
        """The state as initializers (the initial state)."""
        S = {}
        for k, sv in self.lay.state.items():
            arr = sv.initial.astype({"float": self.b.dtype, "int": np.int64, "bool": bool}[sv.kind])
            self.b.inits.append(_tensor(arr, sv.name))
            S[k] = Val(sv.name, sv.kind)
        return S

    def port_outputs(self, S: dict[tuple, Val]) -> list[tuple[str, Val, str, tuple]]:
        """(ONNX name, value, "node.port", shape) of every output port."""
        outs = []
        for n in self.g.nodes:
            for op_ in n.output_ports:
                k = ("o", n.id, op_.id)
                outs.append(
                    (
                        self.b.fresh(safe_name(n.id, op_.id)),
                        S[k],
                        f"{n.id}.{op_.id}",
                        self.lay.state[k].declared,
                    )
                )
        return outs

    def finish(self, inputs: list[Any], outputs: list[tuple[str, Val]], meta: dict) -> Any:
        import onnx
        from onnx import helper

        outs = []
        for name, v, shape in outputs:
            v = self.tr.as_kind(v, v.kind, name)
            self.b.node("Identity", [v.name], [name], name)
            outs.append(
                helper.make_tensor_value_info(
                    name, kind_elem(self.b, v.kind), None if shape is None else list(shape)
                )
            )
        gp = helper.make_graph(
            self.b.nodes,
            safe_name(self.g.id),
            inputs,
            outs,
            initializer=self.b.inits,
            doc_string=f"stateful export by mdf_engine of model {json.dumps(self.model.id)}",
        )
        mp = helper.make_model(
            gp, opset_imports=[helper.make_opsetid("", self.opset)], producer_name="mdf_engine"
        )
        mp.ir_version = min(mp.ir_version, 8 if self.opset <= 16 else 9)
        meta = {
            "format": 1,
            "graph": self.g.id,
            "dtype": self.b.dtype.name,
            "inputs": self.ext_names,
            **meta,
            "state": [
                {
                    "input": sv.name,
                    "output": sv.next_name,
                    "role": sv.role,
                    "node": sv.node,
                    "field": sv.field,
                    "kind": sv.kind,
                    "shape": sv.declared,
                }
                for sv in self.lay.state.values()
            ],
        }
        helper.set_model_props(mp, {METADATA_KEY: json.dumps(meta)})
        try:
            onnx.checker.check_model(mp, full_check=True)
        except Exception as e:
            raise MDFError(
                f"the exported ONNX model does not check: {e}", self.where, self.source
            ) from None
        return mp


def to_onnx_step(
    model: Any,
    graph: str | None = None,
    dtype: str | None = None,
    opset: int | None = None,
    scheduling_mode: str = "standard",
    initializer: dict | None = None,
) -> Any:
    """One update of a (stateful) MDF graph as an ``onnx.ModelProto`` (see the module doc).
    ``initializer``: example external inputs ({port id or NODE.PORT: value}, as
    ``evaluate(initializer=...)`` takes), used to learn shapes and as the inputs' defaults."""
    from ..loader import load

    model = load(model)
    with _named_source(model):
        from onnx import helper

        ex = _Export(model, graph, dtype, opset, scheduling_mode, initializer)
        S = ex.initial_state()
        dt = Val("dt", "float")
        inputs = list(ex.inputs) + [
            helper.make_tensor_value_info("dt", kind_elem(ex.b, "float"), [])
        ]
        for sv in ex.lay.state.values():
            inputs.append(
                helper.make_tensor_value_info(sv.name, kind_elem(ex.b, sv.kind), sv.declared)
            )
        new = ex.upd.update(S, dt, ex.ext)
        ports = ex.port_outputs(new)
        outputs = [(n, v, s) for n, v, _, s in ports]
        outputs += [(sv.next_name, new[k], sv.declared) for k, sv in ex.lay.state.items()]
        meta = {"kind": "step", "dt": "dt", "outputs": {p: n for n, _, p, _ in ports}}
        return ex.finish(inputs, outputs, meta)


def to_onnx_run(
    model: Any,
    steps: int | None = None,
    dt: float | None = None,
    record: Iterable[str] = (),
    graph: str | None = None,
    dtype: str | None = None,
    opset: int | None = None,
    duration: float | None = None,
    unroll_first: bool = True,
    scheduling_mode: str = "standard",
    initializer: dict | None = None,
) -> Any:
    """A whole ``Simulation.run(steps=N, dt=DT)`` (or ``duration=T``) as one ONNX ``Loop``.
    ``unroll_first``: write the first update before the Loop (faster: the loop body then has
    no first-update logic). ``initializer``: the external inputs held for the whole run (their
    defaults; feeds may still replace them)."""
    from ..loader import load

    model = load(model)
    with _named_source(model):
        from ..simulation import steps_for_duration

        if duration is not None:
            if steps is not None:
                raise MDFError("give steps or duration, not both")
            steps = steps_for_duration(duration, dt)
        if steps is None or int(steps) < 1:
            raise MDFError(f"the number of steps must be at least 1, got {steps}")
        steps = int(steps)
        ex = _Export(model, graph, dtype, opset, scheduling_mode, initializer)
        keys = _record_keys(ex, record)
        S0 = ex.initial_state()
        dtv = None
        if dt is not None:
            dtv = ex.tr.materialize(Val(const=float(dt)), "dt", "float")
        init, trip_n, started, alias = S0, steps, None, {}
        if unroll_first:  # the first update before the Loop: the body needs no first-call logic
            init, trip_n, started = ex.upd.update(S0, dtv, ex.ext, started=False), steps - 1, True
            alias = ex.aliases()
        order = [k for k in S0 if k not in alias]
        carried = [
            (init[k], ex.lay.state[k].kind, "run_" + ex.lay.state[k].name[7:]) for k in order
        ]

        def body(_it: Val, vals: list[Val]) -> tuple[Any, list[Val], list[Val]]:
            state = dict(zip(order, vals))
            state.update({a: state[t] for a, t in alias.items()})
            new = ex.upd.update(state, dtv, ex.ext, started=started)
            return None, [new[k] for k in order], [new[k] for k in keys]

        trip = ex.tr.materialize(Val(const=np.int64(trip_n)), "steps", "int").name
        finals, series = emit_loop(ex.tr, trip, "", carried, body, ["float"] * len(keys), "run")
        if unroll_first and keys:
            axes = ex.tr.materialize(Val(const=np.asarray([0])), "axis0", "int")
            for j, k in enumerate(keys):
                v = ex.tr.as_kind(init[k], "float", "first")
                first = ex.tr.op("Unsqueeze", [v, axes], "first_record", "float")
                out = ex.b.fresh("series")
                ex.b.node("Concat", [first.name, series[j].name], [out], "series", axis=0)
                series[j] = Val(out, "float")
        final = dict(zip(order, finals))
        final.update({a: final[t] for a, t in alias.items()})
        ports = ex.port_outputs(final)
        outputs = [(n, v, s) for n, v, _, s in ports]
        rec = {}
        for k, v in zip(keys, series):
            name = ex.b.fresh(safe_name(k[1], k[2]) + "__series")
            outputs.append((name, v, [steps, *ex.lay.state[k].declared]))
            rec[f"{k[1]}.{k[2]}"] = name
        params = {}
        if not ports and not keys:  # nothing else to return: the final parameters
            for k, v in final.items():
                if k[0] == "p":
                    name = ex.b.fresh(safe_name(k[1], k[2]))
                    outputs.append((name, v, ex.lay.state[k].declared))
                    params[f"{k[1]}.{k[2]}"] = name
        meta = {
            "kind": "run",
            "steps": steps,
            "dt": dt,
            "parameters": params,
            "first_update": "unrolled" if unroll_first else "in_loop",
            "outputs": {p: n for n, _, p, _ in ports},
            "records": rec,
        }
        return ex.finish(list(ex.inputs), outputs, meta)


def _record_keys(ex: _Export, record: Iterable[str]) -> list[tuple]:
    keys = []
    for r in record or ():
        node, _, port = str(r).partition(".")
        for k in (("o", node, port), ("p", node, port)):
            if k in ex.lay.state:
                keys.append(k)
                break
        else:
            raise MDFError(
                f"record '{r}': expected NODE.PORT naming an output port or a "
                "parameter that is not a constant",
                "--record",
                ex.source,
            )
    return keys


def export_stateful(
    model: Any,
    path: str | os.PathLike,
    step: bool = False,
    steps: int | None = None,
    dt: float | None = None,
    duration: float | None = None,
    record: Iterable[str] = (),
    graph: str | None = None,
    dtype: str | None = None,
    opset: int | None = None,
    initializer: dict | None = None,
) -> Any:
    """Write the ``step`` model (``step=True``) or the whole-run model (``steps``/``duration``)
    to ``path`` atomically; returns the ModelProto."""
    if step:
        if steps is not None or duration is not None or record or dt is not None:
            raise MDFError(
                "--step exports one update (dt is its input): it takes no --steps, --duration, "
                "--dt or --record"
            )
        mp = to_onnx_step(model, graph, dtype, opset, initializer=initializer)
    else:
        mp = to_onnx_run(
            model, steps, dt, record, graph, dtype, opset, duration, initializer=initializer
        )
    atomic_write_bytes(path, mp.SerializeToString())
    return mp


@contextlib.contextmanager
def _named_source(model: Any) -> Iterator[None]:
    """MDFErrors raised inside name the model's file (when it has one)."""
    source = getattr(model, "_source", None)
    try:
        yield
    except MDFError as e:
        if e.source or not source:
            raise
        raise MDFError(e.message, e.path, source) from None


def _tensor(arr: np.ndarray, name: str) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(arr), name)
