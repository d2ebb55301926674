"""Checks of a whole graph once its elements are built: unique ids, edges between existing nodes
and ports, conditions for existing nodes, and no cycle of edges that cannot be scheduled."""

from __future__ import annotations

from typing import Any

from ..errors import MDFError


def check_graph(g: Any, path: str, source: str | None, cycles: bool = False) -> None:
    """Refuse (MDFError at ``path``) a graph whose ids, edges or conditions do not fit together
    (``cycles``: a cycle of edges is allowed, as in PsyNeuLink files, whose cycles run in one
    time step)."""

    def err(msg: str, sub: str) -> MDFError:
        return MDFError(msg, f"{path}.{sub}", source)

    seen: set[str] = set()
    for n in g.nodes:
        if n.id in seen:
            raise err(f"node id '{n.id}' is used twice", f"nodes.{n.id}")
        seen.add(n.id)
        ids: set[str] = set()
        for kind in ("input_ports", "functions", "parameters", "output_ports"):
            for item in getattr(n, kind):
                if item.id in ids and kind != "output_ports":
                    raise err(
                        f"'{item.id}' names two things in node '{n.id}'",
                        f"nodes.{n.id}.{kind}.{item.id}",
                    )
                ids.add(item.id)
    nodes = {n.id: n for n in g.nodes}
    for e in g.edges:
        ep = f"edges.{e.id}"
        for end, port_kind, port in (
            ("sender", "output_ports", e.sender_port),
            ("receiver", "input_ports", e.receiver_port),
        ):
            node_id = getattr(e, end)
            if node_id not in nodes:
                raise err(
                    f"{end} '{node_id}' is not a node of graph '{g.id}' (nodes: "
                    f"{', '.join(nodes) or 'none'})",
                    f"{ep}.{end}",
                )
            if nodes[node_id].get(port_kind, port) is None:
                names = ", ".join(p.id for p in getattr(nodes[node_id], port_kind)) or "none"
                raise err(
                    f"node '{node_id}' has no {port_kind[:-1].replace('_', ' ')} "
                    f"'{port}' ({port_kind.replace('_', ' ')}: {names})",
                    f"{ep}.{end}_port",
                )
    if g.conditions is not None:
        for node_id in g.conditions.node_specific:
            if node_id not in nodes:
                raise err(
                    f"condition for unknown node '{node_id}'", f"conditions.node_specific.{node_id}"
                )
    if not cycles:
        _check_cycles(g, nodes, err)


def _check_cycles(g: Any, nodes: dict[str, Any], err: Any) -> None:
    """Edges into input ports without a ``default_value`` are scheduling dependencies; a cycle
    of them cannot be scheduled (graph-scheduler refuses it), and a node depending on itself
    with no condition of its own would wait for itself forever."""
    conditioned = set(g.conditions.node_specific) if g.conditions is not None else set()
    deps: dict[str, list[Any]] = {n: [] for n in nodes}
    for e in g.edges:
        port = nodes[e.receiver].get("input_ports", e.receiver_port)
        if port is None or port.default_value is not None:
            continue
        if e.sender == e.receiver:
            if e.receiver not in conditioned:
                raise err(
                    f"edge '{e.id}' feeds node '{e.receiver}' its own output with no "
                    f"condition for '{e.receiver}': give the input port '{e.receiver_port}'"
                    " a default_value or the node a condition",
                    f"edges.{e.id}",
                )
            continue
        deps[e.receiver].append(e)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in nodes:
        if start in state:
            continue
        path: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while path:
            nid, k = path[-1]
            if k < len(deps[nid]):
                path[-1] = (nid, k + 1)
                e = deps[nid][k]
                if state.get(e.sender) == 1:
                    raise err(
                        f"edge '{e.id}' closes a cycle of edges ({e.sender} -> "
                        f"{e.receiver} -> ... -> {e.sender}) that cannot be scheduled: "
                        "give one receiving input port a default_value",
                        f"edges.{e.id}",
                    )
                if e.sender not in state:
                    state[e.sender] = 1
                    path.append((e.sender, 0))
            else:
                state[nid] = 2
                path.pop()
