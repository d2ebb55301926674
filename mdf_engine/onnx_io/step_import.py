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
            except ValueError:
                raise MDFError(f"metadata '{_KEY}' is not JSON") from None
    return None


def import_stateful(proto: Any, meta: dict, model_id: str | None = None) -> Any:
    """An MDF model that runs the exported step (see the module docstring)."""
    import onnx
    from onnx import numpy_helper

    from .importer import import_model

    state = meta.get("state") or []
    if not isinstance(state, list):
        raise MDFError(f"metadata '{_KEY}': 'state' must be a list")
    if meta.get("kind") == "run":
        if meta.get("first_update") != "in_loop":
            raise MDFError(
                "this whole-run ONNX file computes its first update before its Loop "
                "(for speed), so its Loop body is not the whole step: import the "
                "'--step' export of the model, or one written by to_onnx_run(..., "
                "unroll_first=False)"
            )
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
            defaults[name] = numpy_helper.to_array(inits[name])
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
