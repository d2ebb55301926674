"""The plan of a graph: every node's ports, parameters, functions and outputs compiled into
checked expressions and bound function calls, in the order the reference engine evaluates them.

This is the stage between the typed model and a backend. It decides, once, everything that does
not change from step to step:

* which parameters are stateful (a ``time_derivative``, a ``default_initial_value``, or a
  ``value`` that mentions the parameter itself);
* the order of node functions (by dependency; parameters keep their declared order, as in
  modeci-mdf);
* that every name an expression uses is known in its node (else :class:`MDFError` naming the
  field), and which registered function each call binds to, with its arguments split into
  inputs and attributes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import MDFError
from .expressions import Expr, looks_numeric, parse
from .model import Function, Graph, Model, Node, Parameter
from .registry import REGISTRY, OpSchema

_LIBRARY_OF_PREFIX = {"onnx::": "onnx_ops", "onnx_mod::": "onnx_ops", "hexagon::": "hexagon"}


def load_function_libraries(names: Iterable[str] | None = None) -> None:
    """Import the function libraries that ``names`` need (all of them for None), so that the
    registry knows them. Standard and ACT-R functions are always loaded; ``onnx::`` and
    ``hexagon::`` libraries only when a name asks for them (they take a while to import)."""
    from . import standard_functions  # noqa: F401

    wanted = {"actr"}
    if names is None:
        wanted |= set(_LIBRARY_OF_PREFIX.values())
    else:
        for n in names:
            for prefix, lib in _LIBRARY_OF_PREFIX.items():
                if n and n.startswith(prefix):
                    wanted.add(lib)
    for mod in sorted(wanted):
        # every library is part of the package: a failing import is a bug and must surface
        __import__(f"mdf_engine.{mod}")


def graph_function_names(graph: Graph) -> set[str]:
    """Every function name a graph's parameters and node functions call."""
    return {
        f.function
        for n in graph.nodes
        for f in list(n.parameters) + list(n.functions)
        if f.function
    }


def expression_functions() -> dict[str, Any]:
    """Registered functions callable by bare name inside expressions (``linear(x, 2, 1)``)."""
    load_function_libraries(())
    out = {}
    for name in REGISTRY.names():
        if "::" in name:
            continue
        sch = REGISTRY.lookup(name)
        out[name] = _positional_caller(sch)
    return out


def _positional_caller(sch: OpSchema):
    names = sch.argument_names

    def call(*args, **kwargs):
        bound = dict(zip(names, args))
        bound.update(kwargs)
        inputs, attrs = sch.bind(bound, sch.name)
        out = sch.call(inputs, attrs)
        return out[0] if len(out) == 1 else out

    call.__name__ = sch.op
    return call


@dataclass
class ValuePlan:
    """A value: a constant, or an expression over the node's names."""

    const: Any = None
    expr: Expr | None = None
    text: Any = None

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        if self.expr is None:
            return self.const
        return self.expr.evaluate(env)

    @property
    def names(self) -> frozenset[str]:
        return self.expr.names if self.expr is not None else frozenset()


@dataclass
class CallPlan:
    """A call of a registered function with MDF arguments, or a ``value`` over its args."""

    name: str
    schema: OpSchema | None
    args: list[tuple[str, ValuePlan]]
    input_names: list[str | None] = field(default_factory=list)
    attribute_names: list[str] = field(default_factory=list)
    value: ValuePlan | None = None
    #: how many leading outputs are used (None: all); set for onnx_to_mdf's bare ports
    outputs_wanted: int | None = None
    #: give the outputs as a tuple even when there is one (the node indexes them)
    keep_tuple: bool = False

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        fp = dict(env)
        for name, v in self.args:
            fp[name] = v.evaluate(fp)
        if self.schema is None:
            return self.value.evaluate(fp)
        inputs = [fp[n] if n is not None else None for n in self.input_names]
        attrs = {n: fp[n] for n in self.attribute_names}
        out = self.schema.call(inputs, attrs, self.outputs_wanted)
        if self.outputs_wanted is not None:
            out = out[: self.outputs_wanted]
        return out[0] if len(out) == 1 and not self.keep_tuple else out


@dataclass
class ParameterPlan:
    id: str
    stateful: bool
    value: ValuePlan | None = None
    call: CallPlan | None = None
    derivative: ValuePlan | None = None
    initial: ValuePlan | None = None
    conditions: list[tuple[str, ValuePlan, ValuePlan]] = field(default_factory=list)


@dataclass
class InputPlan:
    id: str
    shape: tuple[int, ...] | None
    type: str | None
    default_value: Any
    reduce: str

    def initial_pending(self) -> Any:
        """What the port holds before anything is sent (the reference's initial curr_value)."""
        if self.reduce != "overwrite":
            return None
        if self.default_value is not None:
            return self.default_value
        fill = 0.0 if (self.type and "float" in self.type) else 0
        return np.full(self.shape or (), fill)

    def fallback(self) -> Any:
        """What a read returns when nothing was sent since the last read."""
        if self.default_value is not None:
            return self.default_value
        return np.full(self.shape or (), 0.0)


@dataclass
class NodePlan:
    id: str
    inputs: list[InputPlan]
    functions: list[tuple[str, CallPlan]]
    parameters: list[ParameterPlan]
    outputs: list[tuple[str, ValuePlan]]
    where: str


@dataclass
class EdgePlan:
    id: str
    sender: str
    sender_port: str
    receiver: str
    receiver_port: str
    weight: Any
    has_weight: bool
    #: PsyNeuLink projection matrix: the receiver gets ``sender_value @ matrix``
    matrix: Any = None


@dataclass
class GraphPlan:
    graph: Graph
    nodes: dict[str, NodePlan]
    edges: list[EdgePlan]
    incoming: dict[str, list[EdgePlan]]
    opset: int | None
    where: str
    #: graph-scheduler's mode: "standard" or "exact_time" (``SchedulingMode.EXACT_TIME``)
    scheduling_mode: str = "standard"
    #: the file was written by PsyNeuLink: its execution rules apply (docs/semantics.md)
    psyneulink: bool = False


SCHEDULING_MODES = ("standard", "exact_time")


def plan_graph(
    model: Model | None, graph: Graph, source: str | None = None, scheduling_mode: str = "standard"
) -> GraphPlan:
    """Check and compile a graph for execution (``scheduling_mode``: graph-scheduler's
    standard mode or ``"exact_time"``, PsyNeuLink's ``SchedulingMode.EXACT_TIME``)."""
    where = f"graphs.{graph.id}"
    if scheduling_mode not in SCHEDULING_MODES:
        raise MDFError(
            f"unknown scheduling mode '{scheduling_mode}' (choose from "
            f"{', '.join(SCHEDULING_MODES)})"
        )
    opset = getattr(model, "onnx_opset_version", None) if model is not None else None
    prefer = _preferred_namespace(model)
    if prefer == "pnl":
        from .psyneulink_files import ddm_outputs, fold_projection_nodes, older_writer

        graph = ddm_outputs(fold_projection_nodes(older_writer(graph, model)))
    load_function_libraries(graph_function_names(graph))
    funcs = expression_functions()
    try:
        nodes = {
            n.id: _plan_node(n, f"{where}.nodes.{n.id}", funcs, opset, prefer) for n in graph.nodes
        }
    except MDFError as e:
        if source and not e.source:
            raise MDFError(e.message, e.path, source) from None
        raise
    edges = []
    for e in graph.edges:
        w = e.weight
        if isinstance(w, list):
            w = np.asarray(w)
        has_weight = not (isinstance(w, (int, float)) and not isinstance(w, bool) and w == 1)
        matrix = (e.parameters or {}).get("matrix") if prefer == "pnl" else None
        edges.append(
            EdgePlan(
                e.id, e.sender, e.sender_port, e.receiver, e.receiver_port, w, has_weight, matrix
            )
        )
    incoming: dict[str, list[EdgePlan]] = {n: [] for n in nodes}
    for ep in edges:
        incoming[ep.receiver].append(ep)
    return GraphPlan(graph, nodes, edges, incoming, opset, where, scheduling_mode, prefer == "pnl")


def _name_ref(name: str, where: str) -> Expr:
    """An expression that is exactly one known name, built as a syntax tree (never from
    source text): ids that are not Python identifiers (``/fc1/Gemm``, ``fc1.weight``, ``""``,
    as modeci-mdf's ONNX and PyTorch converters write them) stay data."""
    tree = ast.Expression(body=ast.Name(id=name, ctx=ast.Load()))

    def fetch(env: Mapping[str, Any]) -> Any:
        return env[name]

    return Expr(
        text=name, tree=tree, names=frozenset({name}), functions=frozenset(), _fn=fetch, where=where
    )


def _value(
    v: Any, where: str, funcs: Mapping[str, Any], known: set[str] | None, what: str = "value"
) -> ValuePlan:
    if isinstance(v, str) and known is not None and v in known and not v.isidentifier():
        return ValuePlan(expr=_name_ref(v, where), text=v)
    if isinstance(v, str):
        num = looks_numeric(v)
        if num is not None:
            return ValuePlan(const=num, text=v)
        expr = parse(v, where, funcs)
        if known is not None:
            unknown = sorted(expr.names - known)
            if unknown:
                raise MDFError(
                    f"unknown name '{unknown[0]}' in {what} {v!r} (known here: "
                    f"{', '.join(sorted(known)) or 'none'})",
                    where,
                )
        if expr.is_constant:
            return ValuePlan(const=expr.evaluate({}), text=v)
        return ValuePlan(expr=expr, text=v)
    if isinstance(v, list):
        try:
            return ValuePlan(const=np.array(v), text=v)
        except ValueError:
            return ValuePlan(const=list(v), text=v)
    if v is None or isinstance(v, (bool, int, float, dict, np.ndarray, np.generic)):
        return ValuePlan(const=v, text=v)
    raise MDFError(f"unsupported value of type {type(v).__name__}", where)


def _preferred_namespace(model: Model | None) -> str | None:
    """The namespace whose version of a shared bare name (``linear``, ``logistic``, ...) a model
    means: ``pnl`` for files PsyNeuLink wrote (its functions take more arguments, and its
    logistic adds ``offset`` outside the exponential), else the default version."""
    app = str(getattr(model, "generating_application", None) or "")
    return "pnl" if app.lower().startswith("psyneulink") else None


def _choose_version(schema: OpSchema, args: Mapping[str, Any], prefer: str | None) -> OpSchema:
    """Among the versions registered under ``schema.name`` in other namespaces, take the ``prefer`` namespace's one; else keep ``schema`` if the arguments bind,
    otherwise the first other version they bind to (so a PsyNeuLink-style call of ``linear``
    with ``scale``/``offset`` finds the ``pnl`` version)."""
    others = [v for v in REGISTRY.versions(schema.name) if v.namespace != schema.namespace]
    if not others:
        return schema
    if prefer is not None:
        for v in others:
            if v.namespace == prefer:
                return v
    bound = {k: k for k in args}
    try:
        schema.bind(bound)
        return schema
    except MDFError:
        pass
    for v in others:
        try:
            v.bind(bound)
            return v
        except MDFError:
            continue
    return schema


def _plan_call(
    owner: Parameter | Function,
    where: str,
    funcs: Mapping[str, Any],
    known: set[str],
    opset: int | None,
    prefer: str | None = None,
    sibling_params: set[str] | frozenset[str] = frozenset(),
) -> CallPlan:
    args = dict(owner.args or {})
    fname = owner.function
    if "opset" in args:
        opset = args.pop("opset")
    schema = None
    if fname is not None:
        load_function_libraries([fname])
        name = fname if fname in REGISTRY else _alias(fname)
        schema = REGISTRY.lookup(
            name, opset if name.startswith("onnx::") else None, f"{where}.function"
        )
        if "::" not in name:
            schema = _choose_version(schema, args, prefer)
        elif name.startswith("onnx::"):
            args.update(_sibling_attributes(schema, args, sibling_params, owner.id))
            args = _spread_name_list(schema, args, known)
    arg_plans: list[tuple[str, ValuePlan]] = []
    scope = set(known)
    attr_names = set(schema.attributes) if schema is not None else set()
    for k, v in args.items():
        w = f"{where}.args.{k}"
        if schema is not None and k in attr_names and isinstance(v, str):
            plan = _attribute_value(v, w, funcs, scope)
        else:
            plan = _value(v, w, funcs, scope, "argument")
        arg_plans.append((k, plan))
        scope.add(k)
    call = CallPlan(name=fname or "", schema=schema, args=arg_plans)
    if schema is None:
        if getattr(owner, "value", None) is None:
            raise MDFError("a function needs a 'function' name or a 'value'", where)
        call.value = _value(owner.value, f"{where}.value", funcs, scope)
        return call
    bound = {k: k for k in args}
    inputs, attrs = schema.bind(bound, f"{where}.args")
    call.input_names = inputs
    call.attribute_names = list(attrs)
    return call


def _sibling_attributes(
    schema: OpSchema, args: Mapping[str, Any], params: Iterable[str], own_id: str
) -> dict[str, str]:
    """ONNX attributes given as parameters of the calling node rather than in ``args``, as
    modeci-mdf's ``onnx_to_mdf`` and ``pytorch_to_mdf`` write them (``transB``, ``alpha``,
    ``kernel_shape``, ...): the reference engine binds every node parameter named like an
    attribute of the op to that attribute, and so do we (an attribute in ``args`` wins)."""
    return {p: p for p in params if p in schema.attributes and p not in args and p != own_id}


def _spread_name_list(schema: OpSchema, args: dict[str, Any], known: set[str]) -> dict[str, Any]:
    """pytorch_to_mdf writes a variadic op's inputs as the text of a Python list of names,
    ``"['_10', '_11']"``: they are the op's inputs in that order (the reference engine instead
    feeds every value in scope to a variadic op)."""
    if not (schema.variadic and schema.inputs) or not isinstance(args.get(schema.inputs[0]), str):
        return args
    first = schema.inputs[0]
    try:
        names = ast.literal_eval(args[first].strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return args
    if not (
        isinstance(names, list) and names and all(isinstance(n, str) and n in known for n in names)
    ):
        return args
    out: dict[str, Any] = {}
    for k, v in args.items():
        if k != first:
            out[k] = v
            continue
        out[first] = names[0]
        for i, n in enumerate(names[1:], start=1):
            key = f"{first}{i}"
            while key in args or key in schema.attributes:
                key += "_"
            out[key] = n
    return out


def _attribute_value(v: str, where: str, funcs: Mapping[str, Any], scope: set[str]) -> ValuePlan:
    """An attribute given as a string: an expression over known names, else the string itself
    (ONNX string attributes such as ``mode: "reflect"`` or an Einsum equation)."""
    try:
        plan = _value(v, where, funcs, scope, "argument")
    except MDFError:
        return ValuePlan(const=v, text=v)
    return plan


def _alias(fname: str) -> str:
    """Spellings seen in files: ``onnx_ops.add`` -> ``onnx::Add`` is not guessed; only
    case-insensitive matches of a registered name are accepted."""
    lowered = {n.lower(): n for n in REGISTRY.names()}
    return lowered.get(fname.lower(), fname)


def _plan_node(
    node: Node, where: str, funcs: Mapping[str, Any], opset: int | None, prefer: str | None = None
) -> NodePlan:
    inputs = [
        InputPlan(
            p.id,
            p.shape,
            p.type,
            np.array(p.default_value) if isinstance(p.default_value, list) else p.default_value,
            p.reduce,
        )
        for p in node.input_ports
    ]
    port_ids = {p.id for p in node.input_ports}
    param_ids = {p.id for p in node.parameters}
    # Node functions: dependency order (repeated passes), seeing ports and all parameters.
    known = set(port_ids) | param_ids
    pending = list(node.functions)
    ordered: list[tuple[str, CallPlan]] = []
    ids = known | {f.id for f in node.functions}

    def _names(text: str) -> set[str]:
        return {text} if text in ids else _names_in(text)

    while pending:
        progressed = False
        for f in list(pending):
            fw = f"{where}.functions.{f.id}"
            needed = set()
            for v in (f.args or {}).values():
                if isinstance(v, str):
                    needed |= _names(v) - set(f.args or {})
            if isinstance(f.value, str):
                needed |= _names(f.value) - set(f.args or {})
            if needed <= known:
                ordered.append((f.id, _plan_call(f, fw, funcs, known, opset, prefer, param_ids)))
                known.add(f.id)
                pending.remove(f)
                progressed = True
        if not progressed:
            f = pending[0]
            missing = sorted(
                set().union(
                    *[_names(v) for v in (f.args or {}).values() if isinstance(v, str)],
                    _names(f.value) if isinstance(f.value, str) else set(),
                )
                - known
                - set(f.args or {})
            )
            raise MDFError(
                f"unknown name '{missing[0] if missing else '?'}' (functions may "
                "not depend on each other in a cycle)",
                f"{where}.functions.{f.id}",
            )
    known_params = port_ids | param_ids | {fid for fid, _ in ordered}
    params = [
        _plan_parameter(
            p, f"{where}.parameters.{p.id}", funcs, known_params, opset, prefer, param_ids
        )
        for p in node.parameters
    ]
    outputs = [
        (o.id, _value(o.value, f"{where}.output_ports.{o.id}.value", funcs, known_params))
        for o in node.output_ports
    ]
    _number_bare_output_ports(params, outputs)
    if prefer == "pnl":
        _fresh_parameters_in_calls(ordered, params, port_ids)
    return NodePlan(node.id, inputs, ordered, params, outputs, where)


def _number_bare_output_ports(
    params: list[ParameterPlan], outputs: list[tuple[str, ValuePlan]]
) -> None:
    """modeci-mdf's onnx_to_mdf gives every output port of a node the value ``<function id>``,
    one port per ONNX output the node uses: with a multi-output op (MaxPool, LSTM, Dropout) the
    k-th such port is the op's k-th output, and the op computes only as many outputs as there
    are ports. (The reference engine puts the whole tuple on every port, which the next op
    cannot read.) Only when nothing else in the node uses the call's value."""
    for pp in params:
        call = pp.call
        if (
            call is None
            or call.schema is None
            or len(call.schema.outputs) < 2
            or not call.name.startswith("onnx::")
        ):
            continue
        bare = [
            i
            for i, (_, vp) in enumerate(outputs)
            if vp.expr is not None and vp.expr.is_bare_name() and vp.expr.names == {pp.id}
        ]
        users = [vp for _, vp in outputs if pp.id in vp.names] + [
            v
            for q in params
            if q is not pp
            for v in (q.value, q.derivative, q.initial)
            if v is not None and pp.id in v.names
        ]
        wanted = _indexed_only(pp.id, users)
        if wanted is not None:
            # pytorch_to_mdf's ``f[0]``: index the outputs, even when the op returns only one
            call.keep_tuple = True
            call.outputs_wanted = wanted
            continue
        if not bare or len(users) != len(bare):
            continue
        call.outputs_wanted = len(bare)
        if len(bare) == 1:
            continue
        for k, i in enumerate(bare):
            oid, vp = outputs[i]
            outputs[i] = (oid, ValuePlan(expr=_output_ref(pp.id, k, vp.expr.where), text=vp.text))


def _indexed_only(name: str, users: list[ValuePlan]) -> int | None:
    """When every use of ``name`` in ``users`` is ``name[<int>]``: one more than the largest
    index; else None."""
    top = -1
    for vp in users:
        tree = vp.expr.tree if vp.expr is not None else None
        if tree is None:
            return None
        indexed = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == name
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, int)
                and node.slice.value >= 0
            ):
                indexed.add(id(node.value))
                top = max(top, node.slice.value)
        if any(
            isinstance(n, ast.Name) and n.id == name and id(n) not in indexed
            for n in ast.walk(tree)
        ):
            return None
    return top + 1 if top >= 0 else None


def _output_ref(name: str, k: int, where: str) -> Expr:
    """``name[k]`` as a syntax tree: output ``k`` of the multi-output call ``name``."""
    tree = ast.Expression(
        body=ast.Subscript(
            value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(value=k), ctx=ast.Load()
        )
    )

    def fetch(env: Mapping[str, Any]) -> Any:
        return env[name][k]

    return Expr(
        text=f"{name}[{k}]",
        tree=tree,
        names=frozenset({name}),
        functions=frozenset(),
        _fn=fetch,
        where=where,
    )


def _fresh_parameters_in_calls(
    ordered: list[tuple[str, CallPlan]], params: list[ParameterPlan], port_ids: set[str]
) -> None:
    """PsyNeuLink files: a function that uses a stateless parameter whose value is an
    expression over input ports (e.g. ``<port>_combination_function_input_data = [port_a,
    port_b]``) means this execution's value of it, not the previous one that functions see
    under the reference order (functions before parameters). Such parameters are evaluated
    again as the first arguments of the calls that use them."""
    fresh = {
        pp.id: pp.value
        for pp in params
        if not pp.stateful
        and pp.value is not None
        and pp.value.expr is not None
        and not pp.conditions
        and pp.value.names <= port_ids
    }
    if not fresh:
        return
    for _, call in ordered:
        used = set().union(*(v.names for _, v in call.args)) if call.args else set()
        if call.value is not None:
            used |= call.value.names
        own = {name for name, _ in call.args}
        extra = [(pid, vp) for pid, vp in fresh.items() if pid in used and pid not in own]
        if extra:
            call.args[:0] = extra


def _names_in(text: str) -> set[str]:
    from .expressions import names_in

    return names_in(text)


def _plan_parameter(
    p: Parameter,
    where: str,
    funcs: Mapping[str, Any],
    known: set[str],
    opset: int | None,
    prefer: str | None = None,
    sibling_params: set[str] | frozenset[str] = frozenset(),
) -> ParameterPlan:
    plan = ParameterPlan(id=p.id, stateful=p.is_stateful())
    if p.value is not None:
        plan.value = _value(p.value, f"{where}.value", funcs, known)
    elif p.function is not None:
        plan.call = _plan_call(p, where, funcs, known, opset, prefer, sibling_params)
    elif p.time_derivative is not None:
        plan.derivative = _value(p.time_derivative, f"{where}.time_derivative", funcs, known)
    if p.default_initial_value is not None:
        plan.initial = _value(
            p.default_initial_value, f"{where}.default_initial_value", funcs, known
        )
    for i, c in enumerate(p.conditions):
        cw = f"{where}.conditions.{c.id or i}"
        plan.conditions.append(
            (
                c.id,
                _value(c.test, f"{cw}.test", funcs, known),
                _value(c.value, f"{cw}.value", funcs, known),
            )
        )
    return plan
