"""Where the arrows of a graph drawing go: each edge is matplotlib's ``arc3`` curve (a quadratic
Bezier) between two node boxes, bent as little as keeps it and its label clear of the other
boxes, of the labels placed before and of the other edges between the same two nodes; self-edges
loop above their box. :func:`visible_path` cuts a curve at the box borders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import Graph
from .labels import edge_label


@dataclass
class Box:
    """A node's box: its heading and body text, size and centre, in inches."""

    id: str
    head: str
    body: str
    w: float = 0.0  # inches
    h: float = 0.0
    head_h: float = 0.0
    x: float = 0.0  # centre
    y: float = 0.0


@dataclass
class Edge:
    """An arrow: the ``arc3`` curve from ``p1`` to ``p2`` bent by ``rad``, its label and where the
    label sits; ``loop``: a self-edge drawn above its box."""

    sender: str
    receiver: str
    p1: tuple[float, float]
    p2: tuple[float, float]
    rad: float
    label: str
    label_at: tuple[float, float] = (0.0, 0.0)
    loop: bool = False


def _control(p1: tuple[float, float], p2: tuple[float, float], rad: float) -> np.ndarray:
    """The middle control point of matplotlib's ``arc3`` connection from p1 to p2."""
    (x1, y1), (x2, y2) = p1, p2
    return np.array([(x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)])


def _bezier(p1: Any, c: Any, p2: Any, t: Any) -> np.ndarray:
    t = np.asarray(t, dtype=float)[..., None]
    return (1 - t) ** 2 * np.asarray(p1) + 2 * (1 - t) * t * c + t**2 * np.asarray(p2)


def curve(p1: tuple[float, float], p2: tuple[float, float], rad: float, n: int = 61) -> np.ndarray:
    """Points of the ``arc3`` curve from p1 to p2 (a quadratic Bezier)."""
    return _bezier(p1, _control(p1, p2, rad), p2, np.linspace(0.0, 1.0, n))


def _inside(pts: np.ndarray, b: Box) -> np.ndarray:
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


def visible_path(e: Edge, a: Box, b: Box) -> Any:
    """The part of an edge's curve outside both boxes, as a matplotlib Path (a quadratic
    Bezier cut at the box borders by bisection; cheaper than patch clipping)."""
    from matplotlib.path import Path

    c = _control(e.p1, e.p2, e.rad)

    def cut(t_in: float, t_out: float, box: Box) -> float:
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


def route_edges(
    graph: Graph, boxes: dict[str, Box], labels: dict[int, tuple[float, float]]
) -> list[Edge]:
    """Arrow geometry: for each edge the least bent ``arc3`` curve, and the spot on it for the
    label, that keep clear of the other boxes, of the labels placed before and of the other
    edges between the same two nodes; loops above the box for self-edges."""
    out: list[Edge] = []
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
            edge = Edge(
                e.sender,
                e.receiver,
                (a.x + a.w / 4, top),
                (a.x - a.w / 4, top),
                1.2 + 0.5 * nth,
                edge_label(e),
                loop=True,
            )
            pts = curve(edge.p1, edge.p2, edge.rad)
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
            pts = curve((a.x, a.y), (b.x, b.y), rad)
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
            pts = curve((a.x, a.y), (b.x, b.y), rad)
            best = (None, rad, pts[len(pts) // 2])
        _, rad, at = best
        taken.append(rad * flip)
        placed.append((float(at[0]), float(at[1]), lw / 2, lh / 2))
        out.append(
            Edge(
                e.sender,
                e.receiver,
                (a.x, a.y),
                (b.x, b.y),
                rad,
                edge_label(e),
                (float(at[0]), float(at[1])),
            )
        )
    return out
