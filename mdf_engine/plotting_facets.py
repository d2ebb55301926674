"""The default picture of a grid sweep over three or more parameters: facets of heat maps.

Each recorded variable gets a row of panels: a heat map of its final value over the first two
swept parameters (x across, y up), one panel per value of the third (at most
:data:`MAX_FACETS`, evenly chosen, all on one colour scale). A fourth and later parameter is
held at its middle value, and an array value's own axes at element 0; the figure title says so.
``plot_sweep`` uses this when neither ``x``, ``y`` nor ``sel`` is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .plotting import (
    _MAX_HEIGHT,
    _coord,
    _label,
    _numeric,
    _select,
    _Table,
    new_figure,
    save_figure,
)

#: The most panels per variable (values of the third parameter).
MAX_FACETS = 6


def swept_dims(t: _Table, name: str) -> list[str]:
    """The swept (``NODE.PARAM``) dimensions of variable ``name``, time left out."""
    dims, _, _ = _select(t, name, {})
    return [d for d in dims if not d.startswith(f"{name}_dim")]


def plot_facets(
    t: _Table,
    names: Sequence[str],
    path: str | os.PathLike,
    known: Mapping[str, str],
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = 100,
) -> tuple[int, int]:
    """Facets of heat maps (see the module docstring) to ``path``."""
    first = swept_dims(t, names[0])
    x, y, facet = first[:3]
    dims, vals, _ = _select(t, names[0], {})
    n_facet = vals.shape[dims.index(facet)]
    picks = np.unique(np.linspace(0, n_facet - 1, min(n_facet, MAX_FACETS)).round().astype(int))
    fixed: dict[str, Any] = {}
    notes = []
    for d in first[3:]:
        c = _coord(t, d, vals.shape[dims.index(d)])
        fixed[d] = c[len(c) // 2]
        notes.append(f"{d} = {fixed[d]:.4g}")
    cols = len(picks)
    fig = new_figure(
        size or (min(3.2 * cols + 1.2, 24.0), min(3.0 * len(names) + 0.9, _MAX_HEIGHT)), dpi
    )
    axes = fig.subplots(len(names), cols, squeeze=False, sharex=True, sharey=True)
    for row, name in zip(axes, names):
        d_all, v_all, reduced = _select(t, name, fixed)
        elem = [d for d in d_all if d.startswith(f"{name}_dim")]
        for d in elem:  # an array value: its first element
            v_all = np.take(v_all, 0, axis=d_all.index(d))
            d_all.remove(d)
            if f"{name}[0]" not in notes:
                notes.append(f"{name}[0]")
        v_all = _numeric(v_all, f"'{name}'")
        xs = _coord(t, x, v_all.shape[d_all.index(x)])
        ys = _coord(t, y, v_all.shape[d_all.index(y)])
        fs = _coord(t, facet, v_all.shape[d_all.index(facet)])
        finite = v_all[np.isfinite(v_all)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
        ox, oy = np.argsort(xs, kind="stable"), np.argsort(ys, kind="stable")
        mesh = None
        for ax, k in zip(row, picks):
            z = np.take(v_all, k, axis=d_all.index(facet))
            rest = [d for d in d_all if d != facet]
            z = z if rest.index(y) == 0 else z.T
            z = np.ma.masked_invalid(z[np.ix_(oy, ox)])
            mesh = ax.pcolormesh(
                xs[ox], ys[oy], z, shading="nearest", cmap="viridis", vmin=lo, vmax=hi
            )
            ax.set_title(f"{facet} = {fs[k]:.4g}", fontsize="small")
        row[0].set_ylabel(_label(y, known.get(y)))
        cbar = fig.colorbar(mesh, ax=list(row))
        cbar.set_label(_label(name, known.get(name)) + (" (final)" if reduced else ""))
    for ax in axes[-1]:
        ax.set_xlabel(_label(x, known.get(x)))
    head = title or ""
    if notes:
        head = (head + "\n" if head else "") + "at " + ", ".join(notes)
    if head:
        fig.suptitle(head, fontsize="medium")
    return save_figure(fig, path)
