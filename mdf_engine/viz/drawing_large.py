"""Readable pictures of large graphs (ONNX networks of hundreds of nodes) for ``mdf draw``.

A graph of more than :data:`LARGE` nodes is drawn compactly, top-down:

* each node is a small box with its id and the operator it calls (``Conv``, ``Relu``, ...);
* a chain of nodes that pass their value only to one another (``Conv -> BatchNorm -> Relu``)
  becomes one box listing its operators;
* a run of identical blocks (the same sequence of boxes, in topological order, two or more
  times in a row: ResNet's residual blocks, ShuffleNet's units) becomes one box ``x k`` showing
  the block once, with the ids of the first and last node it stands for;
* boxes are placed in layers from top to bottom (longest path), without edge labels, and the
  figure is at most :data:`MAX_INCHES` inches a side (fonts shrink to fit, down to a minimum).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..model import Graph, Node
from ..safe_text import mpl_text
from .figures import new_figure, save_figure

#: Graphs with more nodes than this are drawn with the compact layout.
LARGE = 40
#: The longest repeated block looked for (in boxes).
MAX_PERIOD = 12
#: The most inches of each side of the figure.
MAX_INCHES = 40.0
_BOX_W, _BOX_H, _GAP_X, _GAP_Y = 2.2, 0.55, 0.35, 0.4  # inches at font size 9


@dataclass
class Unit:
    """One box: a node, a chain of nodes, or a repeated block of chains."""

    nodes: list[str]
    lines: list[str]
    repeat: int = 1
    kind: str = ""  # what identical units share
    succ: set[int] = field(default_factory=set)


def _op(node: Node) -> str:
    """The operator a node calls: its first function's name without namespace, else 'expr'."""
    for item in list(node.functions) + list(node.parameters):
        if item.function:
            name = item.function if isinstance(item.function, str) else next(iter(item.function))
            return str(name).split("::")[-1]
    return "expr"


def _topological(ids: list[str], succ: dict[str, list[str]]) -> list[str]:
    """Kahn's order, file order among the ready nodes (edges closing a cycle are ignored)."""
    indeg = {i: 0 for i in ids}
    for i in ids:
        for j in succ[i]:
            indeg[j] += 1
    pos = {i: k for k, i in enumerate(ids)}
    ready = sorted((i for i in ids if indeg[i] == 0), key=pos.__getitem__)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < len(ids):
        if not ready:  # a cycle: take the first node not yet placed
            ready = [next(i for i in ids if i not in seen)]
        i = ready.pop(0)
        if i in seen:
            continue
        seen.add(i)
        out.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0 and j not in seen:
                ready.append(j)
        ready.sort(key=pos.__getitem__)
    return out


def units_of(graph: Graph) -> list[Unit]:
    """The boxes of the compact drawing, in topological order, with their successors."""
    ids = [n.id for n in graph.nodes]
    known = set(ids)
    succ: dict[str, list[str]] = {i: [] for i in ids}
    pred: dict[str, list[str]] = {i: [] for i in ids}
    for e in graph.edges:
        if (
            e.sender in known
            and e.receiver in known
            and e.sender != e.receiver
            and e.receiver not in succ[e.sender]
        ):
            succ[e.sender].append(e.receiver)
            pred[e.receiver].append(e.sender)
    order = _topological(ids, succ)
    ops = {n.id: _op(n) for n in graph.nodes}
    # chains: a node joins its predecessor's chain when each is the other's only neighbour
    chains: list[list[str]] = []
    chain_of: dict[str, int] = {}
    for i in order:
        p = pred[i][0] if len(pred[i]) == 1 else None
        if p is not None and len(succ[p]) == 1 and p in chain_of:
            chains[chain_of[p]].append(i)
            chain_of[i] = chain_of[p]
        else:
            chain_of[i] = len(chains)
            chains.append([i])
    units = [
        Unit(c, [" → ".join(ops[i] for i in c)], kind=" → ".join(ops[i] for i in c)) for c in chains
    ]
    units = _collapse_repeats(units)
    where = {i: k for k, u in enumerate(units) for i in u.nodes}
    for k, u in enumerate(units):
        for i in u.nodes:
            u.succ |= {where[j] for j in succ[i] if where[j] != k}
    return units


def _collapse_repeats(units: list[Unit]) -> list[Unit]:
    """Runs of two or more identical blocks of units (same kinds in the same order) as one."""
    kinds = [u.kind for u in units]
    out: list[Unit] = []
    i = 0
    while i < len(units):
        best_p, best_k = 1, 1
        for p in range(1, MAX_PERIOD + 1):
            k = 1
            while kinds[i + k * p : i + (k + 1) * p] == kinds[i : i + p] and i + (k + 1) * p <= len(
                kinds
            ):
                k += 1
            if k >= 2 and k * p > best_k * best_p:
                best_p, best_k = p, k
        if best_k == 1:
            out.append(units[i])
            i += 1
            continue
        block = units[i : i + best_k * best_p]
        nodes = [n for u in block for n in u.nodes]
        lines = [line for u in block[:best_p] for line in u.lines]
        out.append(Unit(nodes, lines, best_k, kind="×" + "|".join(kinds[i : i + best_p])))
        i += best_k * best_p
    return out


def _layers(units: list[Unit]) -> list[list[int]]:
    level = [0] * len(units)
    for k, u in enumerate(units):  # units are in topological order
        for s in u.succ:
            if s > k:
                level[s] = max(level[s], level[k] + 1)
    rows: list[list[int]] = [[] for _ in range(max(level, default=0) + 1)]
    for k, lv in enumerate(level):
        rows[lv].append(k)
    return rows


def _text(u: Unit, width: int) -> tuple[str, str]:
    head = u.nodes[0] if len(u.nodes) == 1 else f"{u.nodes[0]} … {u.nodes[-1]}"
    if u.repeat > 1:
        head = f"× {u.repeat}  ({len(u.nodes)} nodes: {u.nodes[0]} … {u.nodes[-1]})"
    body = "\n".join(
        line if len(line) <= width else line[: width - 1] + "…" for line in u.lines[:8]
    )
    if len(u.lines) > 8:
        body += f"\n… {len(u.lines) - 8} more"
    return head, body


def draw_large(
    graph: Graph,
    path: str | os.PathLike,
    heading: str,
    dpi: float = 100,
    size: tuple[float, float] | None = None,
) -> tuple[int, int]:
    """The compact top-down drawing of ``graph`` (see the module docstring) to ``path``."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    units = units_of(graph)
    rows = _layers(units)
    lines_of = [min(len(u.lines), 9) + 1 for u in units]
    row_h = [max(lines_of[k] for k in r) for r in rows]
    widest = max(len(r) for r in rows)
    # natural size at font 9, then one scale factor so that no side exceeds the cap
    nat_w = widest * (_BOX_W + _GAP_X) + _GAP_X
    nat_h = sum(h * 0.18 + _GAP_Y for h in row_h) + 0.8
    limit = size if size is not None else (MAX_INCHES, MAX_INCHES)
    scale = min(1.0 if size is None else 10.0, limit[0] / nat_w, limit[1] / nat_h)
    font = 9.0 * scale
    w, h = size if size is not None else (nat_w * scale, nat_h * scale)
    fig = new_figure((max(w, 3.0), max(h, 1.5)), dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, nat_w)
    ax.set_ylim(-nat_h, 0)
    ax.text(
        nat_w / 2,
        -0.15,
        mpl_text(heading + f"  ({len(graph.nodes)} nodes, compact view)"),
        ha="center",
        va="top",
        fontsize=font * 1.2,
        fontweight="bold",
    )
    centre: dict[int, tuple[float, float, float]] = {}  # x, top, bottom
    y = -0.6
    chars = 30
    for r, hh in zip(rows, row_h):
        box_h = hh * 0.18
        x0 = (nat_w - len(r) * (_BOX_W + _GAP_X) + _GAP_X) / 2
        for j, k in enumerate(r):
            x = x0 + j * (_BOX_W + _GAP_X) + _BOX_W / 2
            u = units[k]
            bh = lines_of[k] * 0.18
            color = "#fdf1e3" if u.repeat > 1 else "#eef3fb"
            ax.add_patch(
                FancyBboxPatch(
                    (x - _BOX_W / 2, y - bh),
                    _BOX_W,
                    bh,
                    boxstyle="round,pad=0,rounding_size=0.05",
                    facecolor=color,
                    edgecolor="#3b5b8c",
                    linewidth=0.8,
                    zorder=2,
                )
            )
            head, body = _text(u, chars)
            ax.text(
                x,
                y - 0.03,
                mpl_text(head if len(head) <= chars + 12 else head[: chars + 11] + "…"),
                ha="center",
                va="top",
                fontsize=font * 0.85,
                fontweight="bold",
                zorder=3,
            )
            if body:
                ax.text(
                    x,
                    y - 0.2,
                    mpl_text(body),
                    ha="center",
                    va="top",
                    fontsize=font * 0.8,
                    linespacing=1.1,
                    zorder=3,
                )
            centre[k] = (x, y, y - bh)
        y -= box_h + _GAP_Y
    for k, u in enumerate(units):
        for s in sorted(u.succ):
            (x1, _, b1), (x2, t2, _) = centre[k], centre[s]
            back = t2 >= b1
            ax.add_patch(
                FancyArrowPatch(
                    (x1, b1),
                    (x2, t2),
                    arrowstyle="-|>",
                    mutation_scale=8 * scale,
                    lw=0.7,
                    color="#555555",
                    connectionstyle=f"arc3,rad={0.4 if back else 0.0}",
                    zorder=1,
                )
            )
    return save_figure(fig, path)


def is_large(graph: Graph) -> bool:
    """Whether ``mdf draw`` uses the compact drawing for ``graph``."""
    return len(graph.nodes) > LARGE


__all__: list[Any] = ["draw_large", "units_of", "is_large", "LARGE"]
