"""Nested graphs: a node that is itself a graph (``nodes``/``edges``/``conditions`` in a node's
body, as PsyNeuLink writes a composition nested in another) is flattened into its parent graph
before the model is typed.

Flattening rules (applied inside out, on the raw dict layout):

* the inner nodes and edges join the parent graph (an id used twice is an error);
* the inner graph's node conditions join the parent's; a condition the parent gives the nested
  node itself applies to each inner node that has none of its own;
* an edge of the parent that names the nested node as sender or receiver is rewired to the inner
  node that owns the named port (an error if none does);
* the inner graph's own termination must be the default one (absent, ``Never``, or
  ``AllHaveRun``: the inner nodes each run once per parent trial, which is what they do as
  nodes of the parent); anything else is refused, as are the inner graph's ``parameters``
  unless they are plain metadata-like values, which are dropped.

This matches the nested composition's behaviour when the inner nodes' inputs come from the
parent's inputs or edges and the inner graph runs once per parent trial.
"""

from __future__ import annotations

from typing import Any

from .errors import MDFError

_INNER_KEYS = ("nodes", "edges", "conditions")
_DEFAULT_TERMINATION = ("Never", "AllHaveRun")


def has_nested_graphs(body: Any) -> bool:
    """Whether any graph of a model body holds a node with nodes of its own."""
    graphs = body.get("graphs") if isinstance(body, dict) else None
    if not isinstance(graphs, dict):
        return False
    return any(isinstance(g, dict) and _has_nested(g) for g in graphs.values())


def _has_nested(g: dict) -> bool:
    nodes = g.get("nodes")
    return isinstance(nodes, dict) and any(
        isinstance(n, dict) and "nodes" in n for n in nodes.values()
    )


def flatten_nested_graphs(body: dict, source: str | None = None) -> dict:
    """A copy of the model ``body`` (``{"graphs": {...}, ...}``) with nested graphs flattened."""
    if not has_nested_graphs(body):
        return body
    out = dict(body)
    out["graphs"] = {
        gid: _flatten(g, f"graphs.{gid}", source) if isinstance(g, dict) else g
        for gid, g in body["graphs"].items()
    }
    return out


def _flatten(g: dict, path: str, source: str | None) -> dict:
    if not _has_nested(g):
        return g
    g = dict(g)
    nodes: dict[str, Any] = {}
    edges = dict(g.get("edges") or {})
    conditions = dict(g.get("conditions") or {})
    node_specific = dict(conditions.get("node_specific") or {})
    owner_of_port: dict[tuple[str, str], str] = {}
    for nid, node in g["nodes"].items():
        npath = f"{path}.nodes.{nid}"
        if not (isinstance(node, dict) and "nodes" in node):
            _add(nodes, nid, node, npath, source)
            continue
        inner = _flatten({k: v for k, v in node.items() if k in _INNER_KEYS}, npath, source)
        _check_inner_termination(inner.get("conditions"), npath, source)
        outer_cond = node_specific.pop(nid, None)
        inner_specific = dict((inner.get("conditions") or {}).get("node_specific") or {})
        for iid, inode in inner["nodes"].items():
            _add(nodes, iid, inode, f"{npath}.nodes.{iid}", source)
            for kind in ("input_ports", "output_ports"):
                for pid in (inode.get(kind) or {}) if isinstance(inode, dict) else ():
                    owner_of_port[(nid, pid)] = iid
            if outer_cond is not None and iid not in inner_specific:
                inner_specific[iid] = outer_cond
        for cid, cond in inner_specific.items():
            if cid in node_specific:
                raise MDFError(
                    f"node '{cid}' has a condition in both the nested graph and its parent",
                    f"{npath}.conditions.node_specific.{cid}",
                    source,
                )
            node_specific[cid] = cond
        for eid, edge in (inner.get("edges") or {}).items():
            if eid in edges:
                raise MDFError(
                    f"edge id '{eid}' is used in both the nested graph and its parent",
                    f"{npath}.edges.{eid}",
                    source,
                )
            edges[eid] = edge
    for eid, edge in list(edges.items()):
        if not isinstance(edge, dict):
            continue
        edge = dict(edge)
        for end, port in (("sender", "sender_port"), ("receiver", "receiver_port")):
            key = (edge.get(end), edge.get(port))
            if any(k[0] == key[0] for k in owner_of_port):
                if key not in owner_of_port:
                    raise MDFError(
                        f"edge {end} '{key[0]}' is a nested graph with no node that "
                        f"has port '{key[1]}'",
                        f"{path}.edges.{eid}.{port}",
                        source,
                    )
                edge[end] = owner_of_port[key]
        edges[eid] = edge
    g["nodes"] = nodes
    g["edges"] = edges
    if node_specific or "node_specific" in conditions:
        conditions["node_specific"] = node_specific
    if conditions:
        g["conditions"] = conditions
    return g


def _add(nodes: dict, nid: str, node: Any, path: str, source: str | None) -> None:
    if nid in nodes:
        raise MDFError(
            f"node id '{nid}' is used twice after flattening nested graphs", path, source
        )
    nodes[nid] = node


def _check_inner_termination(conditions: Any, path: str, source: str | None) -> None:
    term = (conditions or {}).get("termination") or {}
    for scale, cond in term.items():
        ctype = cond.get("type") if isinstance(cond, dict) else None
        deps = (cond.get("kwargs") or {}).get("dependencies") if isinstance(cond, dict) else None
        if ctype not in _DEFAULT_TERMINATION or deps:
            raise MDFError(
                f"a nested graph's termination condition '{ctype}' ({scale}) is not "
                "supported: only the default (Never, AllHaveRun) can be flattened",
                f"{path}.conditions.termination.{scale}",
                source,
            )
