"""A picture of an MDF graph, for ``mdf draw MODEL OUT.png|.svg``.

Each node is a box headed by its id and listing its input ports, output ports and the
scheduling condition under which it runs; each edge is an arrow labelled with the ports it joins
and its weight; the termination conditions are written in a caption. Drawn with matplotlib only
(no graphviz): nodes are placed in columns by a layered layout (edges that close a cycle are
drawn as curves going back), and text is measured with the Agg renderer so the boxes fit it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from ..model import Graph
from ..safe_text import mpl_text
from .edges import Box, Edge, curve, route_edges, visible_path
from .figures import image_format, new_figure, save_figure
from .labels import edge_label, node_text, termination_text

__all__ = ["draw", "graph_layers"]


_FONT = 9.0  # points, at natural size
_MAX_SIZE = 60.0  # inches: larger drawings are scaled down (fonts included)
_MIN_FONT = 3.0


def graph_layers(graph: Graph) -> tuple[dict[str, int], set[int]]:
    """Columns for a left-to-right drawing: ``(layer of each node id, indices of the edges
    that go back)``. Edges closing a cycle (self-loops too; found by a depth-first search in
    file order) are set aside; every other edge goes from a lower layer to a higher one (longest path)."""
    ids = [n.id for n in graph.nodes]
    known = set(ids)
    out: dict[str, list[tuple[int, str]]] = {i: [] for i in ids}
    for k, e in enumerate(graph.edges):
        if e.sender in known and e.receiver in known:
            out[e.sender].append((k, e.receiver))
    back: set[int] = set()
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for root in ids:
        if root in state:
            continue
        stack = [(root, iter(out[root]))]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            step = next(it, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            k, nxt = step
            if state.get(nxt) == 1:
                back.add(k)
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(out[nxt])))
    preds: dict[str, list[str]] = {i: [] for i in ids}
    for node in ids:
        for k, nxt in out[node]:
            if k not in back and nxt != node:
                preds[nxt].append(node)
    layer: dict[str, int] = {}

    def depth(n: str) -> int:  # iterative longest path over the acyclic forward edges
        todo = [n]
        while todo:
            cur = todo[-1]
            missing = [p for p in preds[cur] if p not in layer]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            layer[cur] = 1 + max((layer[p] for p in preds[cur]), default=-1)
        return layer[n]

    for i in ids:
        depth(i)
    return layer, back


class _Measure:
    """Text sizes in inches from the Agg renderer."""

    def __init__(self, dpi: float):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        self.fig = new_figure((4, 4), dpi)
        self.renderer = FigureCanvasAgg(self.fig).get_renderer()

    def __call__(self, text: str, size: float, weight: str = "normal") -> tuple[float, float]:
        if not text:
            return 0.0, 0.0
        t = self.fig.text(0, 0, mpl_text(text), fontsize=size, fontweight=weight, linespacing=1.25)
        bb = t.get_window_extent(self.renderer)
        t.remove()
        return bb.width / self.fig.dpi, bb.height / self.fig.dpi


@dataclass
class _Layout:
    boxes: dict[str, Box]
    edges: list[Edge]
    width: float
    height: float
    font: float
    title: str
    caption: str
    title_at: tuple[float, float]
    caption_at: tuple[float, float]


def _layout(graph: Graph, title: str, measure: _Measure, font: float) -> _Layout:
    layer, _ = graph_layers(graph)
    k = font / _FONT
    pad = 0.1 * k
    gap_y = 0.45 * k
    margin = 0.3 * k
    boxes: dict[str, Box] = {}
    for n in graph.nodes:
        b = Box(n.id, n.id, node_text(n, graph))
        hw, hh = measure(b.head, font * 1.1, "bold")
        bw, bh = measure(b.body, font)
        b.head_h = hh
        b.w = max(hw, bw) + 2 * pad
        b.h = hh + bh + 2 * pad + (0.05 * k if b.body else 0.0)
        boxes[n.id] = b
    labels = {id(e): measure(edge_label(e), font * 0.85) for e in graph.edges}
    widest_label = max((w for w, _ in labels.values()), default=0.0)
    gap_x = max(1.0 * k, widest_label + 0.8 * k)

    columns: dict[int, list[str]] = {}
    for n in graph.nodes:
        columns.setdefault(layer[n.id], []).append(n.id)
    order = sorted(columns)
    # order each column by the mean row of its senders (fewer crossings), file order on ties
    row: dict[str, float] = {}
    senders: dict[str, list[str]] = {}
    for e in graph.edges:
        senders.setdefault(e.receiver, []).append(e.sender)
    for c in order:
        keyed = []
        for pos, i in enumerate(columns[c]):
            prev = [row[s] for s in senders.get(i, []) if s in row and layer[s] < c]
            keyed.append((float(np.mean(prev)) if prev else float(pos), pos, i))
        columns[c] = [i for _, _, i in sorted(keyed)]
        for r, i in enumerate(columns[c]):
            row[i] = float(r)

    # boxes, with the tallest column's top at y = 0 and columns centred on one another
    col_w = [max(boxes[i].w for i in columns[c]) for c in order]
    col_h = [sum(boxes[i].h for i in columns[c]) + gap_y * (len(columns[c]) - 1) for c in order]
    inner_h = max(col_h)
    x = 0.0
    for c, w, h in zip(order, col_w, col_h):
        y = -(inner_h - h) / 2
        for i in columns[c]:
            b = boxes[i]
            b.x, b.y = x + w / 2, y - b.h / 2
            y -= b.h + gap_y
        x += w + gap_x
    edges = route_edges(graph, boxes, labels)

    # extent of boxes, curves and labels
    xs: list[float] = []
    ys: list[float] = []
    for b in boxes.values():
        xs += [b.x - b.w / 2, b.x + b.w / 2]
        ys += [b.y - b.h / 2, b.y + b.h / 2]
    for e, ge in zip([e for e in graph.edges if e.sender in boxes and e.receiver in boxes], edges):
        pts = curve(ge.p1, ge.p2, ge.rad)
        xs += [float(pts[:, 0].min()), float(pts[:, 0].max())]
        ys += [float(pts[:, 1].min()), float(pts[:, 1].max())]
        lw, lh = labels[id(e)]
        lx, ly = ge.label_at
        xs += [lx - lw / 2 - 0.05, lx + lw / 2 + 0.05]
        ys += [ly + lh + 0.05, ly - 0.05] if ge.loop else [ly - lh / 2 - 0.05, ly + lh / 2 + 0.05]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    title_w, title_h = measure(title, font * 1.25, "bold")
    chars = max(40, int((x1 - x0) / (0.075 * k)))
    caption = termination_text(graph, chars)
    cap_w, cap_h = measure(caption, font)
    sep = 0.25 * k
    width = max(x1 - x0, title_w, cap_w) + 2 * margin
    height = title_h + sep + (y1 - y0) + sep + cap_h + 2 * margin
    dx = margin + (width - 2 * margin - (x1 - x0)) / 2 - x0
    dy = margin + cap_h + sep - y0
    for b in boxes.values():
        b.x, b.y = b.x + dx, b.y + dy
    for ge in edges:
        ge.p1 = (ge.p1[0] + dx, ge.p1[1] + dy)
        ge.p2 = (ge.p2[0] + dx, ge.p2[1] + dy)
        ge.label_at = (ge.label_at[0] + dx, ge.label_at[1] + dy)
    return _Layout(
        boxes,
        edges,
        width,
        height,
        font,
        title,
        caption,
        (width / 2, height - margin),
        (margin, margin),
    )


# --------------------------------------------------------------------------------------------
def draw(
    model: Any,
    path: str | os.PathLike,
    graph: str | None = None,
    *,
    size: tuple[float, float] | None = None,
    dpi: float = 100,
    title: str | None = None,
    detailed: bool = False,
) -> tuple[int, int]:
    """Draw ``graph`` (default: the first) of ``model`` (a Model or a file) to ``path``; PNG,
    SVG or PDF by extension.

    By default the figure is as large as its text needs (capped at 60 inches a side, shrinking
    the fonts); ``size=(width, height)`` in inches fixes it and scales the drawing to fit.
    Returns the image size: pixels for PNG, points for SVG/PDF. A graph of more than
    :data:`mdf_engine.viz.drawing_large.LARGE` nodes gets the compact drawing of
    :mod:`mdf_engine.viz.drawing_large` unless ``detailed``.
    """
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ..loader import load

    image_format(path)
    m = load(model)
    g = m.get_graph(graph)
    if not g.nodes:
        raise MDFError(f"graph '{g.id}' has no nodes to draw")
    heading = title if title is not None else f"{m.id} / {g.id}"
    if not detailed:
        from .drawing_large import draw_large, is_large

        if is_large(g):  # hundreds of nodes: layered top-down, repeated blocks collapsed
            return draw_large(g, path, heading, dpi=dpi, size=size)
    measure = _Measure(dpi)
    lay = _layout(g, heading, measure, _FONT)
    limit = size if size is not None else (_MAX_SIZE, _MAX_SIZE)
    scale = min(limit[0] / lay.width, limit[1] / lay.height)
    if size is not None or scale < 1:
        lay = _layout(g, heading, measure, max(_MIN_FONT, _FONT * min(scale, 1.6)))
    fig_w, fig_h = size if size is not None else (lay.width, lay.height)
    fig = new_figure((fig_w, fig_h), dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ox, oy = (fig_w - lay.width) / 2, (fig_h - lay.height) / 2
    ax.set_xlim(-ox, fig_w - ox)
    ax.set_ylim(-oy, fig_h - oy)
    f = lay.font
    k = f / _FONT

    ax.text(
        *lay.title_at,
        mpl_text(lay.title),
        ha="center",
        va="top",
        fontsize=f * 1.25,
        fontweight="bold",
    )
    ax.text(
        *lay.caption_at,
        mpl_text(lay.caption),
        ha="left",
        va="bottom",
        fontsize=f,
        linespacing=1.25,
        color="#333333",
    )

    for b in lay.boxes.values():
        p = FancyBboxPatch(
            (b.x - b.w / 2, b.y - b.h / 2),
            b.w,
            b.h,
            boxstyle=f"round,pad=0,rounding_size={0.06 * k}",
            facecolor="#eef3fb",
            edgecolor="#3b5b8c",
            linewidth=1.2,
            zorder=2,
        )
        ax.add_patch(p)
        top = b.y + b.h / 2 - 0.1 * k
        ax.text(
            b.x,
            top,
            mpl_text(b.head),
            ha="center",
            va="top",
            fontsize=f * 1.1,
            fontweight="bold",
            zorder=3,
        )
        if b.body:
            ax.text(
                b.x - b.w / 2 + 0.1 * k,
                top - b.head_h - 0.05 * k,
                mpl_text(b.body),
                ha="left",
                va="top",
                fontsize=f,
                linespacing=1.25,
                zorder=3,
            )

    for e in lay.edges:
        style = dict(arrowstyle="-|>", mutation_scale=12 * k, lw=1.1, color="#444444", zorder=1)
        curve = visible_path(e, lay.boxes[e.sender], lay.boxes[e.receiver])
        if curve is not None:  # None: the boxes overlap, nothing of the edge shows
            ax.add_patch(FancyArrowPatch(path=curve, **style))
        ax.text(
            *e.label_at,
            mpl_text(e.label),
            ha="center",
            va="bottom" if e.loop else "center",
            fontsize=f * 0.85,
            zorder=4,
            color="#7a2e0e",
            linespacing=1.15,
            bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.85),
        )
    return save_figure(fig, path)
