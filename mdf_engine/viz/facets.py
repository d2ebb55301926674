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

from ..safe_text import mpl_text
from .figures import MAX_HEIGHT, axis_label, new_figure, numeric_values, save_figure
from .sweep_table import SweepTable, coord_values, select_values

#: The most panels per variable (values of the third parameter).
MAX_FACETS = 6


def swept_dims(t: SweepTable, name: str) -> list[str]:
    """The swept (``NODE.PARAM``) dimensions of variable ``name``, time left out."""
    dims, _, _ = select_values(t, name, {})
    return [d for d in dims if not d.startswith(f"{name}_dim")]


def plot_facets(
    t: SweepTable,
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
    dims, vals, _ = select_values(t, names[0], {})
    n_facet = vals.shape[dims.index(facet)]
    picks = np.unique(np.linspace(0, n_facet - 1, min(n_facet, MAX_FACETS)).round().astype(int))
    fixed: dict[str, Any] = {}
    notes = []
    for d in first[3:]:
        c = coord_values(t, d, vals.shape[dims.index(d)])
        fixed[d] = c[len(c) // 2]
        notes.append(f"{d} = {fixed[d]:.4g}")
    cols = len(picks)
    fig = new_figure(
        size or (min(3.2 * cols + 1.2, 24.0), min(3.0 * len(names) + 0.9, MAX_HEIGHT)), dpi
    )
    axes = fig.subplots(len(names), cols, squeeze=False, sharex=True, sharey=True)
    for row, name in zip(axes, names):
        d_all, v_all, reduced = select_values(t, name, fixed)
        elem = [d for d in d_all if d.startswith(f"{name}_dim")]
        for d in elem:  # an array value: its first element
            v_all = np.take(v_all, 0, axis=d_all.index(d))
            d_all.remove(d)
            if f"{name}[0]" not in notes:
                notes.append(f"{name}[0]")
        v_all = numeric_values(v_all, f"'{name}'")
        xs = coord_values(t, x, v_all.shape[d_all.index(x)])
        ys = coord_values(t, y, v_all.shape[d_all.index(y)])
        fs = coord_values(t, facet, v_all.shape[d_all.index(facet)])
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
            ax.set_title(mpl_text(f"{facet} = {fs[k]:.4g}"), fontsize="small")
        row[0].set_ylabel(axis_label(y, known.get(y)))
        cbar = fig.colorbar(mesh, ax=list(row))
        cbar.set_label(axis_label(name, known.get(name)) + (" (final)" if reduced else ""))
    for ax in axes[-1]:
        ax.set_xlabel(axis_label(x, known.get(x)))
    head = title or ""
    if notes:
        head = (head + "\n" if head else "") + "at " + ", ".join(notes)
    if head:
        fig.suptitle(mpl_text(head), fontsize="medium")
    return save_figure(fig, path)
