"""One node execution of our engine as ONNX nodes (the body the stateful export repeats).

:class:`NodeEmitter` writes what :func:`mdf_engine.interpreter.evaluate_node` does, with the
reference semantics (docs/semantics.md):

* incoming edges deliver (times their weight) only if the sender has ever run; several edges
  into a port combine by its ``reduce``; a port nothing was sent to reads its ``default_value``
  (else zeros); a port without edges is a graph input (its default is what an unset port
  reads);
* each parameter first holds its previous value; on the node's first execution that is the
  ``default_initial_value`` (stateful), or the ``value`` evaluated with the parameter itself as
  0 (others); functions see these previous values;
* then parameters are updated in declared order, each seeing the new values of those before it;
  a ``time_derivative`` takes an Euler step ``old + derivative * dt``, or, in an update without
  a time increment, its ``default_initial_value``; conditions test the old value and replace
  with ``Where``;
* then the output ports.

Flags that are known when the graph is built (a sender earlier in the same update has run) are
Python booleans, so the common case has no ``Where`` at all; flags known only at run time are
boolean ONNX values.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..errors import MDFError
from .exporter import function_value, subscripted_calls
from .state_layout import Layout, is_constant
from .step_translate import StepTranslator, const_array, safe_name
from .translate import Builder, Val

__all__ = ["Flags", "NodeEmitter", "where", "precheck"]

Flag = bool | Val


@dataclass
class Flags:
    """What one node execution needs to know besides the state: ``dt`` (a float value),
    ``has_dt`` (this update has a time increment), ``ever[node]`` (that node ran before),
    ``ext[(node, port)]`` (the graph input of a port without edges) and ``pend[(node, port)]``
    (that input was not read yet in this update)."""

    dt: Val | None
    has_dt: Flag
    ever: dict[str, Flag]
    ext: dict[tuple[str, str], Val]
    pend: dict[tuple[str, str], Flag] = field(default_factory=dict)


def where(tr: StepTranslator, cond: Flag, a: Val, b: Val, name: str) -> Val:
    """``a`` where ``cond`` else ``b`` (no ONNX node when ``cond`` is a Python bool)."""
    if cond is True:
        return a
    if cond is False:
        return b
    c = tr.as_kind(cond, "bool", name + "_c")
    x = tr.as_kind(a, "float", name + "_a")
    y = tr.as_kind(b, "float", name + "_b")
    return tr.op("Where", [c, x, y], name, "float")


def flag_or(tr: StepTranslator, a: Flag, b: Flag, name: str) -> Flag:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return tr.op("Or", [a, b], name, "bool")


class NodeEmitter:
    """Writes node executions of one graph plan into a :class:`Builder`."""

    def __init__(self, b: Builder, plan: Any, lay: Layout):
        self.b = b
        self.plan = plan
        self.lay = lay
        self.graph = plan.graph

    def translator(self, nid: str, scope: dict[str, Val]) -> StepTranslator:
        proxy = SimpleNamespace(id=safe_name(nid))
        return StepTranslator(self.b, proxy, f"{self.plan.where}.nodes.{nid}", scope)

    def run(self, nid: str, S: dict[tuple, Val], fl: Flags) -> tuple[dict, dict[str, Val]]:
        """Node ``nid`` executed on state ``S``: (writes {state key: value}, every value of the
        node by id, for Threshold conditions)."""
        np_ = self.plan.nodes[nid]
        node = self.graph.get_node(nid)
        env: dict[str, Val] = {}
        tr = self.translator(nid, env)
        sn = safe_name(nid)
        for ip in np_.inputs:
            env[ip.id] = self._input(tr, nid, ip, S, fl, f"{sn}_{safe_name(ip.id)}")
        inputs = dict(env)
        first = _not(tr, fl.ever[nid], f"{sn}_first")
        for pp in np_.parameters:
            t = f"{sn}_{safe_name(pp.id)}"
            if is_constant(pp):
                env[pp.id] = Val(const=const_array(pp.value.const), hint=t)
                continue
            prev = S[("p", nid, pp.id)]
            if first is False:
                env[pp.id] = prev
                continue
            init = self._first_value(tr, nid, pp, env, t + "_first")
            if first is True:  # as Where(first, init, prev) would: the state's shape
                init = _expand(tr, init, self.lay.state[("p", nid, pp.id)].declared, t)
            env[pp.id] = where(tr, first, init, prev, t + "_prev")
        funcs: dict[str, Val] = {}
        sub = subscripted_calls(node)
        for fid, cp in np_.functions:
            item = node.get("functions", fid)
            env[fid] = funcs[fid] = self._call(
                tr, item, cp, env, f"{sn}_{safe_name(fid)}", f"functions.{fid}", sub.get(fid)
            )
        writes: dict[tuple, Val] = {}
        for pp in np_.parameters:
            if is_constant(pp):
                continue
            t = f"{sn}_{safe_name(pp.id)}"
            new = self._update(tr, node, pp, env, fl, t, sub.get(pp.id))
            env[pp.id] = writes[("p", nid, pp.id)] = tr.as_kind(new, "float", t + "_new")
        outs = {}
        for oid, vp in np_.outputs:
            t = f"{sn}_{safe_name(oid)}"
            v = self._value(tr, vp, env, t, f"output_ports.{oid}.value")
            outs[oid] = writes[("o", nid, oid)] = tr.as_kind(v, "float", t + "_out")
        values = {**outs, **funcs, **{k: v for k, v in env.items() if k not in funcs}, **inputs}
        return writes, values

    # -- parts --------------------------------------------------------------------------------
    def _input(self, tr: StepTranslator, nid: str, ip: Any, S: dict, fl: Flags, t: str) -> Val:
        fallback = Val(const=np.asarray(ip.fallback(), dtype=float), hint=t + "_default")
        edges = [e for e in self.plan.incoming[nid] if e.receiver_port == ip.id]
        if not edges:
            if (nid, ip.id) not in fl.ext:
                return fallback
            return where(
                tr, fl.pend.get((nid, ip.id), True), fl.ext[(nid, ip.id)], fallback, t + "_read"
            )
        if self.plan.psyneulink:
            return self._input_pnl(tr, nid, ip, S, fl, t, edges)
        acc: Val | None = None
        has: Flag = False
        for k, ep in enumerate(edges):
            d = fl.ever[ep.sender]
            if d is False:
                continue
            v = S[("o", ep.sender, ep.sender_port)]
            et = f"{t}_e{k}"
            v = tr.carried(ep, v, et)
            if has is False:
                acc, has = v, d
                continue
            if ip.reduce == "add":
                c = tr.op("Add", [acc, v], et + "_add", "float")
            elif ip.reduce == "multiply":
                c = tr.op("Mul", [acc, v], et + "_mul", "float")
            else:
                c = v
            c = where(tr, has, c, v, et + "_c")
            acc = where(tr, d, c, acc, et + "_acc")
            has = flag_or(tr, has, d, et + "_has")
        if acc is None:
            return fallback
        return where(tr, has, acc, fallback, t + "_read")

    def _input_pnl(
        self, tr: StepTranslator, nid: str, ip: Any, S: dict, fl: Flags, t: str, edges: list
    ) -> Val:
        """A port with edges in a PsyNeuLink file, as the interpreter delivers it: a sender that
        has not run yet sends its initial outputs (its outputs from default inputs), a value
        with as many elements as the port takes the port's declared shape, and the trial's
        external input of the port (if any) is added to every afferent."""
        held = fl.ext.get((nid, ip.id))
        acc: Val | None = held
        for k, ep in enumerate(edges):
            et = f"{t}_e{k}"
            key = ("o", ep.sender, ep.sender_port)
            init = np.asarray(self.initial_outputs(ep.sender)[ep.sender_port], dtype=float)
            d = fl.ever[ep.sender]
            if d is True:
                v, shape = S[key], tuple(self.lay.state[key].declared)
            elif d is False:
                v, shape = Val(const=init, hint=et + "_initial"), init.shape
            else:
                v = where(tr, d, S[key], Val(const=init, hint=et + "_initial"), et + "_sent")
                shape = np.broadcast_shapes(tuple(self.lay.state[key].declared), init.shape)
            v = tr.carried(ep, v, et)
            z = np.zeros(shape)  # (the shape the edge delivers)
            if ep.matrix is not None:
                z = np.matmul(z, np.asarray(ep.matrix, dtype=float))
            if ep.has_weight:
                z = np.asarray(ep.weight, dtype=float) * z
            if ip.shape is not None and z.shape != tuple(ip.shape):
                if z.size == int(np.prod(ip.shape)):
                    s = tr.materialize(
                        Val(const=np.asarray(ip.shape, dtype=np.int64)), et + "_pshape", "int"
                    )
                    v = tr.op("Reshape", [tr.as_kind(v, "float", et), s], et + "_shaped", "float")
            if held is not None:
                v = tr.op("Add", [held, tr.as_kind(v, "float", et)], et + "_held", "float")
            if acc is None or ip.reduce not in ("add", "multiply"):
                acc = v
            elif ip.reduce == "add":
                acc = tr.op("Add", [tr.as_kind(acc, "float", et + "_a"), v], et + "_add", "float")
            else:
                acc = tr.op("Mul", [tr.as_kind(acc, "float", et + "_a"), v], et + "_mul", "float")
        return acc

    def initial_outputs(self, nid: str) -> dict[str, Any]:
        """What a PsyNeuLink node that has not run yet sends (computed with the interpreter)."""
        from .. import op_state

        warm = self.lay.warm
        with op_state.bound(warm.op_state):
            return warm.initial_outputs(nid)

    def _first_value(self, tr: StepTranslator, nid: str, pp: Any, env: dict, t: str) -> Val:
        shape = self.lay.shapes.get((nid, pp.id), ())
        if pp.stateful:
            if pp.initial is not None:
                return self._value(
                    tr, pp.initial, env, t, f"parameters.{pp.id}.default_initial_value"
                )
            return Val(const=0.0)
        if pp.value is not None:
            scope = dict(env)
            scope[pp.id] = Val(const=0.0)
            return self._value(tr, pp.value, scope, t, f"parameters.{pp.id}.value")
        return Val(const=np.zeros(shape))

    def _update(
        self,
        tr: StepTranslator,
        node: Any,
        pp: Any,
        env: dict,
        fl: Flags,
        t: str,
        n_sub: int | None,
    ) -> Val:
        w = f"parameters.{pp.id}"
        old = env[pp.id]
        if pp.value is not None:
            cur = self._value(tr, pp.value, env, t, w + ".value")
        elif pp.call is not None:
            cur = self._call(tr, node.get("parameters", pp.id), pp.call, env, t, w, n_sub)
        elif pp.derivative is not None:
            cur = old
            if fl.has_dt is not False:
                td = self._value(tr, pp.derivative, env, t + "_d", w + ".time_derivative")
                if (
                    td.name is None
                    and td.multi is None
                    and np.ndim(td.const) == 0
                    and td.const == 1
                ):
                    step = fl.dt  # time itself: d/dt = 1
                else:
                    td = tr.as_kind(td, "float", t + "_d")
                    step = tr.op("Mul", [td, fl.dt], t + "_step", "float")
                cur = tr.op(
                    "Add", [tr.as_kind(old, "float", t + "_old"), step], t + "_euler", "float"
                )
            if fl.has_dt is not True:
                init = (
                    self._value(tr, pp.initial, env, t + "_init", w + ".default_initial_value")
                    if pp.initial is not None
                    else Val(const=0.0)
                )
                cur = where(tr, fl.has_dt, cur, init, t + "_td")
        else:
            cur = old
        for k, (_cid, test, value) in enumerate(pp.conditions):
            cw = f"{w}.conditions.{_cid or k}"
            mask = self._value(tr, test, env, f"{t}_c{k}_test", cw + ".test")
            val = self._value(tr, value, env, f"{t}_c{k}_value", cw + ".value")
            mask = tr.as_kind(mask, "bool", f"{t}_c{k}_mask")
            cur = where(tr, mask, val, cur, f"{t}_c{k}")
        return cur

    def _value(self, tr: StepTranslator, vp: Any, scope: dict, t: str, what: str) -> Val:
        if vp.expr is None:
            return Val(const=const_array(vp.const), hint=t)
        return tr.expr(vp.text, t, what, scope)

    def _call(
        self,
        tr: StepTranslator,
        item: Any,
        cp: Any,
        env: dict,
        t: str,
        what: str,
        n_sub: int | None,
    ) -> Val:
        """A parameter's or function's call, with the function the plan bound (its namespace
        decides the formula: PsyNeuLink's ``logistic`` is not the standard one)."""
        plain = cp.schema is None
        own = set() if plain else set(item.args or {})
        scope = dict(env)
        for name, vp in cp.args:  # value-functions bind every argument; calls only the
            if name not in own:  # parameters evaluated fresh for them (PsyNeuLink)
                scope[name] = self._value(
                    tr, vp, scope, f"{t}_{safe_name(name)}", f"{what}.args.{name}"
                )
        if plain:
            if cp.value is None:
                raise MDFError("has neither a function nor a value", f"{tr.where}.{what}")
            return self._value(tr, cp.value, scope, t, f"{what}.value")
        ns = cp.schema.namespace
        if ns == "pnl" and cp.name == "energy":
            return _energy(tr, item, scope, t, what)
        if ns == "pnl" and cp.name == "driftdiffusionanalytical":
            from .step_ddm import ddm_analytical

            return ddm_analytical(tr, item, scope, t, what)
        if ns == "pnl" and cp.name in PNL_FORMULAS:
            formula, defaults = PNL_FORMULAS[cp.name]
            bound = {k: Val(const=v) for k, v in defaults.items()}
            for k, text in (item.args or {}).items():
                bound[k] = tr.expr(text, f"{t}_{safe_name(k)}", f"{what}.args.{k}", scope)
            tree = ast.parse(formula, mode="eval").body
            return tr.emit(tree, t, bound, what)
        if not (ns in ("std", "mdf") or str(item.function).startswith("onnx::")):
            raise MDFError(
                f"function '{cp.name}' (namespace {ns}) has no ONNX export", f"{tr.where}.{what}"
            )
        saved, tr.scope = tr.scope, scope
        try:
            return function_value(tr, item, t, what, n_sub)
        finally:
            tr.scope = saved


#: PsyNeuLink's forms of the standard functions (mdf_engine.standard_functions.psyneulink)
PNL_FORMULAS = {
    "linear": (
        "scale * (variable0 * slope + intercept) + offset",
        {"slope": 1.0, "intercept": 0.0, "scale": 1.0, "offset": 0.0},
    ),
    "logistic": (
        "scale * (1 / (1 + exp(-gain * (variable0 + bias - x_0)))) + offset",
        {"gain": 1.0, "bias": 0.0, "x_0": 0.0, "scale": 1.0, "offset": 0.0},
    ),
    "exponential": (
        "scale * exp(rate * variable0 + bias) + offset",
        {"rate": 1.0, "bias": 0.0, "scale": 1.0, "offset": 0.0},
    ),
}


def _energy(tr: StepTranslator, item: Any, scope: dict, t: str, what: str) -> Val:
    """PsyNeuLink's Energy, a quadratic form: -v . (hollow(matrix) @ v) / 2 (over n*n if
    normalize), with the matrix a constant of the file (the hollowing is done here)."""
    args = item.args or {}
    if "variable0" not in args or not isinstance(args.get("matrix"), list):
        raise MDFError(
            "energy is exported with a constant 'matrix' argument only", f"{tr.where}.{what}.args"
        )
    m = np.asarray(args["matrix"], dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise MDFError(
            f"energy: expected a square matrix, got shape {m.shape}", f"{tr.where}.{what}"
        )
    n = m.shape[0]
    scale = -0.5 / (n * n) if bool(args.get("normalize", False)) else -0.5
    v = tr.as_kind(
        tr.expr(args["variable0"], f"{t}_v", f"{what}.args.variable0", scope), "float", t
    )
    flat = tr.materialize(Val(const=np.asarray([-1], dtype=np.int64)), t + "_flat", "int")
    v = tr.op("Reshape", [v, flat], t + "_vflat", "float")
    h = tr.materialize(Val(const=m * (1.0 - np.eye(n))), t + "_hollow", "float")
    hv = tr.op("MatMul", [h, v], t + "_hv", "float")
    vhv = tr.op("Mul", [v, hv], t + "_vhv", "float")
    s = Val(tr.b.fresh(t + "_sum"), "float")
    tr.b.node("ReduceSum", [vhv.name], [s.name], t + "_sum", keepdims=0)
    k = tr.materialize(Val(const=np.asarray(scale)), t + "_scale", "float")
    return tr.op("Mul", [s, k], t + "_energy", "float")


def _not(tr: StepTranslator, f: Flag, name: str) -> Flag:
    if isinstance(f, bool):
        return not f
    return tr.op("Not", [f], name, "bool")


def _expand(tr: StepTranslator, v: Val, shape: list[int], t: str) -> Val:
    """``v`` broadcast to (at least) ``shape``: a first value such as ``-1.0`` takes the shape
    its state has in later updates, so values built from it keep one rank in every update."""
    if not shape:
        return v
    if v.name is None and v.multi is None:
        c = np.asarray(v.const, dtype=float)
        return Val(const=c + np.zeros(shape), hint=v.hint)
    s = tr.materialize(Val(const=np.asarray(shape, dtype=np.int64)), t + "_shape", "int")
    return tr.op("Expand", [tr.as_kind(v, "float", t + "_init"), s], t + "_expanded", "float")


#: ONNX operators that draw random numbers (their names start so)
RANDOM_OPS = ("Random", "Bernoulli", "Multinomial")


def precheck(plan: Any, source: str | None) -> None:
    """Refuse, before anything runs, the calls and constants ONNX cannot hold (an MDFError
    naming the parameter or function and why)."""

    for nid, np_ in plan.nodes.items():
        nw = f"{plan.where}.nodes.{nid}"
        calls = [(f"functions.{fid}", cp) for fid, cp in np_.functions]
        calls += [(f"parameters.{pp.id}", pp.call) for pp in np_.parameters if pp.call]
        for what, cp in calls:
            if cp.schema is None:
                continue
            ns = cp.schema.namespace
            if ns.startswith("onnx") and cp.schema.name.split("::")[-1].startswith(RANDOM_OPS):
                raise MDFError(
                    f"function '{cp.name}' draws random numbers: onnxruntime's generator "
                    "cannot give the engine's draws, so the exported run would differ",
                    f"{nw}.{what}",
                    source,
                )
            if (
                ns in ("std", "mdf")
                and cp.name != "drift_diffusion_integrator"
                or ns == "pnl"
                and (cp.name in PNL_FORMULAS or cp.name in ("energy", "driftdiffusionanalytical"))
                or ns.startswith("onnx")
            ):
                continue
            raise MDFError(
                f"function '{cp.name}' (namespace {ns}) has no ONNX export: {_why(ns)}",
                f"{nw}.{what}",
                source,
            )
        for pp in np_.parameters:
            for vp in (pp.value, pp.initial):
                if (
                    vp is not None
                    and vp.expr is None
                    and (
                        isinstance(vp.const, (dict, str))
                        or np.asarray(vp.const, dtype=object).dtype.kind == "O"
                        and not _numeric_list(vp.const)
                    )
                ):
                    raise MDFError(
                        f"parameter '{nid}.{pp.id}' holds a "
                        f"{type(vp.const).__name__}; ONNX tensors hold numbers only",
                        f"{nw}.parameters.{pp.id}",
                        source,
                    )


def _numeric_list(v: Any) -> bool:
    try:
        return np.asarray(v).dtype.kind in "biuf"
    except (TypeError, ValueError):
        return False


def _why(namespace: str) -> str:
    """Why a function of ``namespace`` is not exported (docs/onnx_io.md)."""
    if namespace == "actr":
        return (
            "ACT-R matches chunks (dicts) and productions (strings) by pattern, and ONNX "
            "tensors hold numbers only"
        )
    return "no ONNX form is written for it"
