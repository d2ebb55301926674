"""ONNX -> MDF for the stateful exports of :mod:`mdf_engine.onnx_io.step_export`.

A file carrying the ``mdf_engine.stateful`` metadata is imported as the stateless importer
imports any graph (one MDF node per ONNX node), and then its state is closed into a loop:

* every state input ``state__X`` becomes input ports (on the nodes that read it) whose
  ``default_value`` is the stored initial state, each fed by an edge from the port holding
  ``next__X``. An edge into a port with a ``default_value`` is not a scheduling dependency and
  delivers only once its sender has run, so the first ``evaluate()`` reads the initial state
  and every later one the state the previous one left: N evaluations of the imported model are
  N calls of the step;
* external inputs keep their default as ``default_value``; ``dt`` stays an input port, fed by
  an initializer (``Simulation.run(steps=N, initializer={"dt": DT})``);
* a whole-run file (``--steps``) is imported as its loop body, the step: run it for the
  recorded number of steps (``metadata["onnx_stateful"]["steps"]``), with its ``dt`` built in.

What cannot be recovered is refused with an :class:`MDFError`: a step whose update itself is an
ONNX ``Loop`` over scheduler passes (graphs with scheduling conditions), which MDF nodes cannot
express.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..errors import MDFError

__all__ = ["stateful_metadata", "import_stateful"]

_KEY = "mdf_engine.stateful"


def stateful_metadata(proto: Any) -> dict | None:
    """The stateful-export metadata of ``proto``, or None for any other ONNX model."""
    for p in proto.metadata_props:
        if p.key == _KEY:
            try:
                return json.loads(p.value)
            except (ValueError, RecursionError):
                raise MDFError(f"metadata '{_KEY}' is not JSON") from None
    return None


def import_stateful(proto: Any, meta: dict, model_id: str | None = None) -> Any:
    """An MDF model that runs the exported step (see the module docstring)."""
    import onnx

    from ..onnx_ops.graph import tensor_array
    from .importer import import_model

    state = meta.get("state") or []
    if not isinstance(state, list):
        raise MDFError(f"metadata '{_KEY}': 'state' must be a list")
    if meta.get("kind") == "run":
        if meta.get("first_update") != "in_loop":
            return import_unrolled(proto, meta, model_id)
        step, finals = _body_as_step(proto, state)
    elif meta.get("kind") == "step":
        step, finals = onnx.ModelProto(), {}
        step.CopyFrom(proto)
    else:
        raise MDFError(f"metadata '{_KEY}': unknown kind {meta.get('kind')!r}")
    sg = step.graph
    if any(n.op_type in ("Loop", "Scan", "If") for n in sg.node):
        raise MDFError(
            "this stateful ONNX file computes each update with an ONNX Loop over "
            "scheduler passes (a graph with scheduling conditions); MDF nodes cannot "
            "express it, so it cannot be imported (the original MDF model runs it)"
        )
    inits = {t.name: t for t in sg.initializer}
    defaults = {}
    for name in [s["input"] for s in state] + list((meta.get("inputs") or {}).values()):
        if name in inits:
            defaults[name] = tensor_array(inits[name])
    kept = [t for t in sg.initializer if t.name not in defaults]
    del sg.initializer[:]
    sg.initializer.extend(kept)
    del step.metadata_props[:]
    model = import_model(step, model_id=model_id)
    graph = model.graphs[0]
    info = model.metadata["onnx"]
    from ..model import Edge

    taken = {e.id for e in graph.edges} | {n.id for n in graph.nodes}
    for s in state:
        port_id = info["inputs"].get(s["input"])
        src = info["outputs"].get(finals.get(s["output"], s["output"]))
        if port_id is None:
            continue  # a state nothing reads
        if src is None:
            raise MDFError(f"state output '{s['output']}' is not an output of the graph")
        snode, sport = src.split(".", 1)
        for node in graph.nodes:
            ip = node.get("input_ports", port_id)
            if ip is None:
                continue
            ip.default_value = _plain(defaults.get(s["input"]))
            eid, k = f"state_{port_id}_{node.id}", 1
            while eid in taken:
                eid, k = f"state_{port_id}_{node.id}_{k}", k + 1
            taken.add(eid)
            graph.edges.append(
                Edge(
                    id=eid, sender=snode, sender_port=sport, receiver=node.id, receiver_port=port_id
                )
            )
    for name in (meta.get("inputs") or {}).values():
        port_id = info["inputs"].get(name)
        for node in graph.nodes:
            ip = node.get("input_ports", port_id) if port_id else None
            if ip is not None and name in defaults:
                ip.default_value = _plain(defaults[name])
    model.metadata = dict(model.metadata or {})
    model.metadata["onnx_stateful"] = {
        "steps": meta.get("steps"),
        "dt": meta.get("dt"),
        "ports": {
            p: info["outputs"].get(finals.get(n, n)) for p, n in (meta.get("outputs") or {}).items()
        },
    }
    return model


def _body_as_step(proto: Any, state: list) -> tuple[Any, dict[str, str]]:
    """The body of a whole-run file's Loop as a step model: (model, {final output name: the
    body output that carries it})."""
    import onnx
    from onnx import helper

    g = proto.graph
    loops = [n for n in g.node if n.op_type == "Loop"]
    if len(loops) != 1:
        raise MDFError("a whole-run stateful ONNX file must hold exactly one Loop")
    loop = loops[0]
    body = next(a.g for a in loop.attribute if a.name == "body")
    carried_in = list(body.input[2:])
    carried_out = list(body.output[1 : 1 + len(carried_in)])
    n_state = len(carried_in)
    # outside the loop each final output is an Identity of a Loop output
    final_of = {o: k for k, o in enumerate(loop.output[:n_state])}
    finals: dict[str, str] = {}
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in final_of:
            finals[n.output[0]] = carried_out[final_of[n.input[0]]].name
    inits = {t.name: t for t in g.initializer}
    step_inputs, step_inits = [], []
    for k, vi in enumerate(carried_in):
        init_name = loop.input[2 + k]
        if init_name not in inits:
            raise MDFError("the Loop's initial state is not stored in the file")
        t = onnx.TensorProto()
        t.CopyFrom(inits[init_name])
        t.name = vi.name
        step_inits.append(t)
        step_inputs.append(vi)
    # every state entry of the metadata names its body input and output
    by_init = {loop.input[2 + k]: k for k in range(n_state)}
    for s in state:
        k = by_init.get(s["input"])
        if k is None:
            raise MDFError(f"state '{s['input']}' is not carried by the Loop")
        s["input"], s["output"] = carried_in[k].name, carried_out[k].name
    used = {i for n in body.node for i in n.input}
    step_inits += [t for t in g.initializer if t.name in used]
    step_inputs += [i for i in g.input if i.name in used]
    outputs = list(carried_out)
    gp = helper.make_graph(list(body.node), g.name, step_inputs, outputs, initializer=step_inits)
    mp = helper.make_model(gp, opset_imports=list(proto.opset_import))
    mp.ir_version = proto.ir_version
    return mp, finals


def _plain(v: Any) -> Any:
    if v is None:
        return None
    arr = np.asarray(v)
    return arr.item() if arr.ndim == 0 else arr.tolist()


def import_unrolled(proto: Any, meta: dict, model_id: str | None = None) -> Any:
    """A whole-run file whose first update is written before its Loop (``--steps``): the
    nodes before the Loop run in the first update only (``AtEnvironmentStateUpdate(0)``), the
    Loop body's nodes in every later one (``AfterEnvironmentStateUpdate(0)``), one pass per
    update. Each piece of state the Loop carries is an input port of the body fed by two
    edges: from the value the first update made, then from the body's own next value; the
    later edge whose sender has run delivers, so the second update reads the first one's
    result and every later one the body's. Each output is a node ``final_...`` fed the same
    way. ``Simulation.run(steps=N)`` then gives the file's numbers (its ``dt`` is built in)."""
    from onnx import helper

    from ..model import Condition, ConditionSet, Edge, InputPort, Node, OutputPort
    from .importer import import_graph

    g = proto.graph
    loops = [n for n in g.node if n.op_type == "Loop"]
    if not loops:
        raise MDFError("a whole-run stateful ONNX file must hold a Loop")
    loop = loops[-1]  # the run's Loop comes last; any other is an update's Loop over passes
    body = next(a.g for a in loop.attribute if a.name == "body")
    if len(loops) > 1 or any(n.op_type in ("Loop", "Scan", "If") for n in body.node):
        raise MDFError(
            "this stateful ONNX file computes each update with an ONNX Loop over "
            "scheduler passes (a graph with scheduling conditions); MDF nodes cannot "
            "express it, so it cannot be imported (the original MDF model runs it)"
        )
    n_state = len(body.input) - 2
    carried_in = [vi.name for vi in body.input[2:]]
    carried_out = [vi.name for vi in body.output[1 : 1 + n_state]]
    first = list(loop.input[2 : 2 + n_state])
    # what comes after the Loop (final Identities, recorded series) is left out
    after = set(loop.output)
    pre = []
    for n in g.node:
        if n is loop:
            continue
        if after & set(n.input):
            after |= set(n.output)
            continue
        pre.append(n)
    final_of = {o: k for k, o in enumerate(loop.output[:n_state])}
    finals = {
        n.output[0]: final_of[n.input[0]]
        for n in g.node
        if n.op_type == "Identity" and n.input and n.input[0] in final_of
    }
    inits = {t.name: t for t in g.initializer}
    names = {o for n in list(g.node) + list(body.node) for o in n.output}
    names |= {i for n in list(g.node) + list(body.node) for i in n.input}
    names |= {vi.name for vi in list(g.input) + list(body.input)} | set(inits)

    def fresh_name(base: str) -> str:
        out, j = base, 1
        while out in names:
            out, j = f"{base}_{j}", j + 1
        names.add(out)
        return out

    # every piece of state goes through an Identity ("held") that runs first in an update:
    # it reads the previous update's value before the body computes the next one
    produced = {o for n in pre for o in n.output}
    firsts, held_in, extra = [], [], []
    for k, name in enumerate(carried_in):
        if first[k] in produced:
            firsts.append(first[k])
        else:  # the first update leaves it as stored: an Identity makes it a node's value
            firsts.append(fresh_name(f"{first[k]}__first"))
            extra.append(
                helper.make_node("Identity", [first[k]], [firsts[-1]], name=fresh_name(f"first{k}"))
            )
        held_in.append(fresh_name(f"{name}__held"))
    holds = [
        helper.make_node("Identity", [held_in[k]], [carried_in[k]], name=fresh_name(f"held{k}"))
        for k in range(n_state)
    ]
    used = {i for n in list(pre) + extra + list(body.node) for i in n.input}
    ins = [vi for vi in g.input if vi.name in used]
    ins += [
        helper.make_tensor_value_info(h, vi.type.tensor_type.elem_type, None)
        for h, vi in zip(held_in, body.input[2:])
    ]
    kept_inits = [t for t in g.initializer if t.name in used]
    gp = helper.make_graph(
        holds + pre + extra + list(body.node), g.name, ins, [], initializer=kept_inits
    )
    combined = helper.make_model(gp, opset_imports=list(proto.opset_import))
    combined.ir_version = proto.ir_version
    imp = import_graph(combined, model_id)
    model = imp.model
    graph = model.graphs[0]
    info = model.metadata["onnx"]
    taken = {e.id for e in graph.edges} | {n.id for n in graph.nodes}

    def fresh(base: str) -> str:
        out, k = base, 1
        while out in taken:
            out, k = f"{base}_{k}", k + 1
        taken.add(out)
        return out

    def feed(node: str, port: str, k: int) -> None:
        """Edges into ``node.port``: the first update's value of state ``k``, then the body's."""
        for src in (firsts[k], carried_out[k]):
            snode, sport = imp.producer[src]
            graph.edges.append(
                Edge(
                    id=fresh(f"state_{port}_{node}"),
                    sender=snode,
                    sender_port=sport,
                    receiver=node,
                    receiver_port=port,
                )
            )

    for k in range(n_state):
        nid = imp.node_ids[holds[k].name]
        port = info["inputs"][held_in[k]]
        # never read (the first update's edge has delivered before the body runs); it makes
        # the edge from the body's own next value no scheduling dependency
        graph.get_node(nid).get("input_ports", port).default_value = 0.0
        feed(nid, port, k)
    body_nodes = {imp.node_ids[n.name] for n in holds + list(body.node) if n.name in imp.node_ids}
    cond = {
        n.id: Condition(
            "AfterEnvironmentStateUpdate" if n.id in body_nodes else "AtEnvironmentStateUpdate",
            {"n": 0},
        )
        for n in graph.nodes
    }
    ports = {}
    wanted = {**(meta.get("outputs") or {}), **(meta.get("parameters") or {})}
    for key, oname in wanted.items():
        k = finals.get(oname)
        if k is None:
            raise MDFError(f"output '{oname}' is not a final value of the Loop")
        nid = fresh(f"final_{oname}")
        graph.nodes.append(
            Node(
                id=nid,
                input_ports=[InputPort(id="v")],
                output_ports=[OutputPort(id="value", value="v")],
            )
        )
        feed(nid, "v", k)
        cond[nid] = Condition("Always")
        ports[key] = f"{nid}.value"
    graph.conditions = ConditionSet(
        node_specific=cond,
        termination={"environment_state_update": Condition("AfterNPasses", {"n": 1})},
    )
    model.metadata = {
        "onnx": info,
        "onnx_stateful": {"steps": meta.get("steps"), "dt": meta.get("dt"), "ports": ports},
    }
    return model
