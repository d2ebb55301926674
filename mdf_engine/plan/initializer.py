"""What an initializer key sets, the same on every backend: a key is an input port id (in every
node that has such a port) or one ``NODE.PORT``, read against the graph's real ids."""

from __future__ import annotations

from ..errors import MDFError
from .parts import GraphPlan


def initializer_targets(plan: GraphPlan, key: str) -> list[tuple[str, str]]:
    """The (node, input port) pairs that the initializer key ``key`` sets, on every backend:
    the input ports whose id is ``key`` (in every node that has one; ``onnx_to_mdf`` names
    weight ports after ONNX initializers such as ``fc1.weight``), or one ``NODE.PORT``. Ids may
    hold dots, so the key is read against the graph's real ids, never split blindly; a key
    with more than one reading (port ``A.B`` of one node, port ``B`` of node ``A``) or none
    is refused."""
    if not isinstance(key, str):
        raise MDFError(f"an initializer key must be a text, got {key!r:.80}", "initializer")
    by_id = [
        (nid, key) for nid, node in plan.nodes.items() if any(ip.id == key for ip in node.inputs)
    ]
    readings = [by_id] if by_id else []
    readings += [[found] for found in plan.graph.node_port(key, ("input_ports",))]
    if not readings:
        raise MDFError(
            f"initializer key '{key:.200}' is neither an input port id nor NODE.PORT of an input "
            "port of the graph",
            "initializer",
        )
    if len(readings) > 1:
        ways = "; ".join(
            f"port '{r[0][1]:.80}' of node '{r[0][0]:.80}'"
            + (" (and others)" if len(r) > 1 else "")
            for r in readings
        )
        raise MDFError(f"initializer key '{key:.200}' is ambiguous: it names {ways}", "initializer")
    return readings[0]
