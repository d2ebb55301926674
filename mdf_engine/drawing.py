"""A picture of an MDF graph, for ``mdf draw MODEL OUT.png|.svg``.

Each node is a box headed by its id and listing its input ports, output ports and the
scheduling condition under which it runs; each edge is an arrow labelled with the ports it joins
and its weight; the termination conditions are written in a caption. Drawn with matplotlib only
(no graphviz): nodes are placed in columns by a layered layout (edges that close a cycle are
drawn as curves going back), and text is measured with the Agg renderer so the boxes fit it.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import MDFError
from .model import Condition, Graph
from .plotting import image_format, new_figure, save_figure
from .safe_text import mpl_text

__all__ = ["draw", "condition_text", "graph_layers"]

#: graph-scheduler's termination conditions when a graph gives none for a time scale.
DEFAULT_TERMINATION = {
    "environment_state_update": "AllHaveRun()",
    "environment_sequence": "Never()",
}

_FONT = 9.0  # points, at natural size
_MAX_SIZE = 60.0  # inches: larger drawings are scaled down (fonts included)
_MIN_FONT = 3.0
_WRAP = 44  # characters per line inside a box


# --------------------------------------------------------------------------------------------
# text of conditions and edges
def _value_text(v: Any) -> str:
    if isinstance(v, (Condition, Mapping)) and _is_condition(v):
        return condition_text(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, np.ndarray):
        return _short(np.array2string(v, precision=3, separator=", ", threshold=6))
    return str(v)


def _is_condition(v: Any) -> bool:
    return isinstance(v, Condition) or (
        isinstance(v, Mapping) and "type" in v and set(v) <= {"type", "kwargs", "metadata"}
    )


def condition_text(cond: Any) -> str:
    """A condition as a call: ``EveryNCalls(A, n=2)``, ``And(AfterNCalls(C, n=2), JustRan(A))``
    (dependencies positional, other arguments by keyword)."""
    if isinstance(cond, Condition):
        kind, kwargs = cond.type, dict(cond.kwargs or {})
    elif isinstance(cond, Mapping) and "type" in cond:
        kind, kwargs = str(cond["type"]), dict(cond.get("kwargs") or {})
    else:
        return _value_text(cond)
    args: list[str] = []
    for key in ("dependency", "dependencies"):
        if key in kwargs:
            dep = kwargs.pop(key)
            deps = dep if isinstance(dep, (list, tuple)) else [dep]
            args.extend(_value_text(d) for d in deps)
    args.extend(f"{k}={_value_text(v)}" for k, v in kwargs.items())
    return f"{kind}({', '.join(args)})"


def _short(s: str, n: int = 40) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _edge_label(edge: Any) -> str:
    text = f"{edge.sender_port} → {edge.receiver_port}"
    params = edge.parameters or {}
    if "weight" in params:
        text += f"\nweight = {_short(_value_text(params['weight']), 30)}"
    return text


# --------------------------------------------------------------------------------------------
# layout
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


@dataclass
class _Box:
    id: str
    head: str
    body: str
    w: float = 0.0  # inches
    h: float = 0.0
    head_h: float = 0.0
    x: float = 0.0  # centre
    y: float = 0.0


def _node_text(node: Any, graph: Graph) -> str:
    lines = []
    ins = ", ".join(p.id for p in node.input_ports)
    outs = ", ".join(p.id for p in node.output_ports)
    if ins:
        lines += textwrap.wrap(f"in: {ins}", _WRAP, subsequent_indent="   ")
    if outs:
        lines += textwrap.wrap(f"out: {outs}", _WRAP, subsequent_indent="   ")
    conds = graph.conditions.node_specific if graph.conditions is not None else {}
    when = condition_text(conds[node.id]) if node.id in conds else "Always (default)"
    lines += textwrap.wrap(f"when: {when}", _WRAP, subsequent_indent="   ")
    return "\n".join(lines)


def _termination_text(graph: Graph, width: int) -> str:
    term = dict(graph.conditions.termination) if graph.conditions is not None else {}
    parts = [f"{scale}: {condition_text(c)}" for scale, c in term.items()]
    parts += [
        f"{scale}: {text} (default)"
        for scale, text in DEFAULT_TERMINATION.items()
        if scale not in term
    ]
    return "\n".join(
        textwrap.fill(p, width, subsequent_indent="    ") for p in ["Termination:"] + parts
    )


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
class _Edge:
    sender: str
    receiver: str
    p1: tuple[float, float]
    p2: tuple[float, float]
    rad: float
    label: str
    label_at: tuple[float, float] = (0.0, 0.0)
    loop: bool = False


@dataclass
class _Layout:
    boxes: dict[str, _Box]
    edges: list[_Edge]
    width: float
    height: float
    font: float
    title: str
    caption: str
    title_at: tuple[float, float]
    caption_at: tuple[float, float]


def _control(p1: tuple[float, float], p2: tuple[float, float], rad: float) -> np.ndarray:
    """The middle control point of matplotlib's ``arc3`` connection from p1 to p2."""
    (x1, y1), (x2, y2) = p1, p2
    return np.array([(x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)])


def _bezier(p1: Any, c: Any, p2: Any, t: Any) -> np.ndarray:
    t = np.asarray(t, dtype=float)[..., None]
    return (1 - t) ** 2 * np.asarray(p1) + 2 * (1 - t) * t * c + t**2 * np.asarray(p2)


def _curve(p1: tuple[float, float], p2: tuple[float, float], rad: float, n: int = 61) -> np.ndarray:
    """Points of the ``arc3`` curve from p1 to p2 (a quadratic Bezier)."""
    return _bezier(p1, _control(p1, p2, rad), p2, np.linspace(0.0, 1.0, n))


def _inside(pts: np.ndarray, b: _Box) -> np.ndarray:
    return (np.abs(pts[:, 0] - b.x) <= b.w / 2) & (np.abs(pts[:, 1] - b.y) <= b.h / 2)


def _inside_any(
    pts: np.ndarray, cx: np.ndarray, cy: np.ndarray, hw: np.ndarray, hh: np.ndarray
) -> int:
    """How many (point, box) pairs have the point inside the box (boxes as arrays)."""
    if len(cx) == 0:
        return 0
    dx = np.abs(pts[:, 0:1] - cx[None, :]) <= hw[None, :]
    dy = np.abs(pts[:, 1:2] - cy[None, :]) <= hh[None, :]
    return int((dx & dy).sum())


def _visible_path(e: _Edge, a: _Box, b: _Box) -> Any:
    """The part of an edge's curve outside both boxes, as a matplotlib Path (a quadratic
    Bezier cut at the box borders by bisection; cheaper than patch clipping)."""
    from matplotlib.path import Path

    c = _control(e.p1, e.p2, e.rad)

    def cut(t_in: float, t_out: float, box: _Box) -> float:
        for _ in range(30):
            mid = (t_in + t_out) / 2
            if _inside(_bezier(e.p1, c, e.p2, [mid]), box)[0]:
                t_in = mid
            else:
                t_out = mid
        return t_out

    if e.loop:
        t0, t1 = 0.0, 1.0
    else:
        ts = np.linspace(0.0, 1.0, 201)
        pts = _bezier(e.p1, c, e.p2, ts)
        out_a = np.nonzero(~_inside(pts, a))[0]
        out_b = np.nonzero(~_inside(pts, b))[0]
        if len(out_a) == 0 or len(out_b) == 0:
            return None
        i, j = out_a[0], out_b[-1]
        t0 = cut(ts[i - 1], ts[i], a) if i > 0 else 0.0
        t1 = cut(ts[j + 1], ts[j], b) if j < len(ts) - 1 else 1.0
        if t1 <= t0:
            return None
    q0, q2 = _bezier(e.p1, c, e.p2, [t0, t1])
    q1 = (
        (1 - t0) * (1 - t1) * np.asarray(e.p1)
        + ((1 - t0) * t1 + t0 * (1 - t1)) * c
        + t0 * t1 * np.asarray(e.p2)
    )  # the blossom of the curve at (t0, t1)
    return Path([q0, q1, q2], [Path.MOVETO, Path.CURVE3, Path.CURVE3])


_RADS = (0.0, 0.15, -0.15, 0.3, -0.3, 0.45, -0.45, 0.6, -0.6, 0.8, -0.8, 1.0, -1.0)


_SPOTS = (0.5, 0.3, 0.7, 0.2, 0.8)  # where along the visible curve a label may sit


def _edges(
    graph: Graph, boxes: dict[str, _Box], labels: dict[int, tuple[float, float]]
) -> list[_Edge]:
    """Arrow geometry: for each edge the least bent ``arc3`` curve, and the spot on it for the
    label, that keep clear of the other boxes, of the labels placed before and of the other
    edges between the same two nodes; loops above the box for self-edges."""
    out: list[_Edge] = []
    used: dict[tuple[str, str], list[float]] = {}
    bx = np.array([o.x for o in boxes.values()])
    by = np.array([o.y for o in boxes.values()])
    bw = np.array([o.w / 2 for o in boxes.values()])
    bh = np.array([o.h / 2 for o in boxes.values()])
    placed: list[tuple[float, float, float, float]] = []  # label centres and half sizes

    def label_cost(at: np.ndarray, lw: float, lh: float) -> int:
        gap = 0.06  # inches between a label and what it must not touch
        cost = 5 * _inside_any(at[None, :], bx, by, bw + lw / 2 + gap, bh + lh / 2 + gap)
        if placed:
            px, py, pw, ph = (np.array(v) for v in zip(*placed))
            cost += 3 * _inside_any(at[None, :], px, py, pw + lw / 2 + gap, ph + lh / 2 + gap)
        return cost

    for e in graph.edges:
        if e.sender not in boxes or e.receiver not in boxes:
            continue
        a, b = boxes[e.sender], boxes[e.receiver]
        lw, lh = labels[id(e)]
        if e.sender == e.receiver:
            nth = len(used.setdefault((e.sender, e.sender), []))
            used[(e.sender, e.sender)].append(0.0)
            top = a.y + a.h / 2
            edge = _Edge(
                e.sender,
                e.receiver,
                (a.x + a.w / 4, top),
                (a.x - a.w / 4, top),
                1.2 + 0.5 * nth,
                _edge_label(e),
                loop=True,
            )
            pts = _curve(edge.p1, edge.p2, edge.rad)
            edge.label_at = (a.x, float(pts[:, 1].max()))
            placed.append((a.x, edge.label_at[1] + lh / 2, lw / 2, lh / 2))
            out.append(edge)
            continue
        flip = 1.0 if e.sender < e.receiver else -1.0  # the same curve read the other way
        taken = used.setdefault((min(e.sender, e.receiver), max(e.sender, e.receiver)), [])
        mask = np.array([o.id not in (e.sender, e.receiver) for o in boxes.values()])
        best = None
        for order, rad in enumerate(_RADS):
            if any(abs(rad * flip - t) < 0.12 for t in taken):
                continue
            pts = _curve((a.x, a.y), (b.x, b.y), rad)
            free = pts[~(_inside(pts, a) | _inside(pts, b))]
            if len(free) == 0:
                free = pts
            cost = _inside_any(pts, bx[mask], by[mask], bw[mask], bh[mask])
            for spot_order, spot in enumerate(_SPOTS):
                at = free[min(len(free) - 1, int(spot * len(free)))]
                key = (cost + label_cost(at, lw, lh), order, spot_order)
                if best is None or key < best[0]:
                    best = (key, rad, at)
                if key[0] == 0:
                    break
            if best is not None and best[0][0] == 0:
                break
        if best is None:  # more parallel edges than preset bends: keep bending further
            rad = (1.0 + 0.2 * len(taken)) * flip
            pts = _curve((a.x, a.y), (b.x, b.y), rad)
            best = (None, rad, pts[len(pts) // 2])
        _, rad, at = best
        taken.append(rad * flip)
        placed.append((float(at[0]), float(at[1]), lw / 2, lh / 2))
        out.append(
            _Edge(
                e.sender,
                e.receiver,
                (a.x, a.y),
                (b.x, b.y),
                rad,
                _edge_label(e),
                (float(at[0]), float(at[1])),
            )
        )
    return out


def _layout(graph: Graph, title: str, measure: _Measure, font: float) -> _Layout:
    layer, _ = graph_layers(graph)
    k = font / _FONT
    pad = 0.1 * k
    gap_y = 0.45 * k
    margin = 0.3 * k
    boxes: dict[str, _Box] = {}
    for n in graph.nodes:
        b = _Box(n.id, n.id, _node_text(n, graph))
        hw, hh = measure(b.head, font * 1.1, "bold")
        bw, bh = measure(b.body, font)
        b.head_h = hh
        b.w = max(hw, bw) + 2 * pad
        b.h = hh + bh + 2 * pad + (0.05 * k if b.body else 0.0)
        boxes[n.id] = b
    labels = {id(e): measure(_edge_label(e), font * 0.85) for e in graph.edges}
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
    edges = _edges(graph, boxes, labels)

    # extent of boxes, curves and labels
    xs: list[float] = []
    ys: list[float] = []
    for b in boxes.values():
        xs += [b.x - b.w / 2, b.x + b.w / 2]
        ys += [b.y - b.h / 2, b.y + b.h / 2]
    for e, ge in zip([e for e in graph.edges if e.sender in boxes and e.receiver in boxes], edges):
        pts = _curve(ge.p1, ge.p2, ge.rad)
        xs += [float(pts[:, 0].min()), float(pts[:, 0].max())]
        ys += [float(pts[:, 1].min()), float(pts[:, 1].max())]
        lw, lh = labels[id(e)]
        lx, ly = ge.label_at
        xs += [lx - lw / 2 - 0.05, lx + lw / 2 + 0.05]
        ys += [ly + lh + 0.05, ly - 0.05] if ge.loop else [ly - lh / 2 - 0.05, ly + lh / 2 + 0.05]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    title_w, title_h = measure(title, font * 1.25, "bold")
    chars = max(40, int((x1 - x0) / (0.075 * k)))
    caption = _termination_text(graph, chars)
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
    :data:`mdf_engine.drawing_large.LARGE` nodes gets the compact drawing of
    :mod:`mdf_engine.drawing_large` unless ``detailed``.
    """
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from .loader import load

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
        curve = _visible_path(e, lay.boxes[e.sender], lay.boxes[e.receiver])
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
