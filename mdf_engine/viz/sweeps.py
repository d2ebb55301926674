"""Pictures of sweeps, for ``mdf sweep --plot``: :func:`plot_sweep` draws a recorded final value
against one swept parameter (a line, or a family of lines for a second parameter) or against two
(a heat map with a colour bar), from the ``xarray.Dataset`` a sweep returns: dimensions named
``NODE.PARAM`` (plus possibly ``time``) and data variables named ``NODE.PORT``. A random design
(one ``sample`` dimension with the parameters as coordinates along it) is drawn as a scatter
plot; three or more swept parameters as facets of heat maps (:mod:`mdf_engine.viz.facets`).

Axis labels carry units where the model gives them (``metadata`` ``units``), or a ``units``
attribute on a Dataset variable or coordinate.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import MDFError
from ..safe_text import mpl_text
from .facets import plot_facets, swept_dims
from .figures import MAX_HEIGHT, axis_label, model_units, new_figure, numeric_values, save_figure
from .sweep_table import SweepTable, as_table, coord_values, select_values

__all__ = ["plot_sweep"]


def _log_spaced(v: np.ndarray) -> bool:
    v = np.sort(np.asarray(v, dtype=float))
    if len(v) < 3 or v[0] <= 0 or v[-1] / v[0] < 100:
        return False
    r = v[1:] / v[:-1]
    return bool(np.allclose(r, r[0], rtol=1e-6))


def plot_sweep(
    data: Any,
    path: str | os.PathLike,
    x: str | None = None,
    y: str | None = None,
    var: str | Sequence[str] | None = None,
    *,
    sel: Mapping[str, Any] | None = None,
    coords: Mapping[str, Sequence[float]] | None = None,
    model: Any = None,
    graph: str | None = None,
    units: Mapping[str, str] | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = 100,
) -> tuple[int, int]:
    """Plot a sweep's recorded final values against the swept parameters, one panel per
    variable, to ``path``.

    ``data`` is an ``xarray.Dataset`` (dims ``NODE.PARAM``..., maybe ``time``; variables
    ``NODE.PORT``), or a dict ``{"NODE.PORT": array}`` with ``coords={"NODE.PARAM": values}`` in
    axis order (one more trailing axis is time). A time dimension is reduced to its final value.
    With one swept dimension left: a line of ``var`` against ``x``; with two: a heat map (``x``
    across, ``y`` up) unless only ``x`` is given, which draws one line per value of the other.
    With three or more swept parameters and none of ``x``, ``y``, ``sel`` given: facets of heat
    maps (see :mod:`mdf_engine.viz.facets`); otherwise more dimensions must be fixed with
    ``sel={"NODE.PARAM": value}`` (nearest value). A random
    design (a ``sample`` dimension with ``NODE.PARAM`` coordinates along it) is drawn as a
    scatter (coloured by value for two parameters). ``var`` defaults to every variable.
    """
    t = as_table(data, coords)
    if not t.variables:
        raise MDFError("the sweep has no recorded variables to plot")
    if var is None:
        names = list(t.variables)
    else:
        names = [var] if isinstance(var, str) else list(var)
    for name in names:
        if name not in t.variables:
            raise MDFError(
                f"'{name}' is not a variable of the sweep (variables: {', '.join(t.variables)})"
            )
    known: dict[str, str] = {}
    if model is not None:
        known.update(model_units(model, graph))
    known.update(t.units)
    known.update(units or {})

    if (
        x is None
        and y is None
        and not sel
        and not any(k == "sample" or k == "set" for k in t.coords)
    ):
        if len(swept_dims(t, names[0])) >= 3:  # the default for 3+ swept parameters
            return plot_facets(t, names, path, known, title, size, dpi)
    n = len(names)
    fig = new_figure(size or (7.0, min(4.2 * n, MAX_HEIGHT)), dpi)
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    for ax, name in zip(axes, names):
        dims, vals, reduced = select_values(t, name, sel or {})
        _draw_sweep_panel(fig, ax, t, name, dims, vals, x, y, known)
        ax.set_title(
            mpl_text(f"{name}" + (" (final value)" if reduced else "")),
            loc="left",
            fontsize="medium",
        )
    if title:
        fig.suptitle(mpl_text(title))
    fig.tight_layout()
    return save_figure(fig, path)


def _draw_sweep_panel(
    fig: Any,
    ax: Any,
    t: SweepTable,
    name: str,
    dims: list[str],
    vals: np.ndarray,
    x: str | None,
    y: str | None,
    known: Mapping[str, str],
) -> None:
    vals = numeric_values(vals, f"'{name}'")
    # size-1 dimensions that were not asked for are dropped
    for d in [d for d in dims if vals.shape[dims.index(d)] == 1 and d not in (x, y)]:
        vals = np.take(vals, 0, axis=dims.index(d))
        dims.remove(d)
    vlabel = axis_label(name, known.get(name))
    aux = [
        c
        for c, (cd, _) in t.coords.items()
        if len(cd) == 1 and len(dims) == 1 and cd[0] == dims[0] and c != dims[0]
    ]
    swept_aux = [c for c in aux if "." in c]
    wanted = [a for a in (x, y) if a is not None]
    if wanted and all(a in aux for a in wanted):
        _scatter(fig, ax, t, name, vals, wanted, known, vlabel)
        return
    if not wanted and swept_aux and "." not in dims[0]:
        _scatter(fig, ax, t, name, vals, swept_aux[:2], known, vlabel)
        return
    for a in wanted:
        if a not in dims:
            raise MDFError(
                f"'{a}' is not a swept dimension of '{name}' (dimensions left: "
                f"{', '.join(dims) or 'none'})"
            )
    if not dims:
        raise MDFError(f"'{name}' has no swept dimension left to plot against")
    # the port's own axes (vector values) are named NODE.PORT_dim0, ...
    elem = [d for d in dims if d.startswith(f"{name}_dim") and d not in wanted]
    swept = [d for d in dims if d not in elem]
    if x is None:
        x = next((d for d in swept if d != y), None) or next(d for d in dims if d != y)
    rest = [d for d in dims if d not in (x, y)]
    if (
        y is None
        and len(rest) == 1
        and vals.shape[dims.index(rest[0])] <= 12
        and (rest[0] in elem or wanted)
    ):
        _family(ax, t, vals, dims, x, rest[0], known, vlabel)
        return
    if y is None and rest and rest[0] not in elem:
        y = rest[0]
    if len(dims) > (2 if y is not None else 1):
        others = [d for d in dims if d not in (x, y)]
        raise MDFError(
            f"'{name}' varies along {len(dims)} dimensions ({', '.join(dims)}); "
            f"fix {', '.join(others)} with sel={{...}} or choose x= and y="
        )
    xs = coord_values(t, x, vals.shape[dims.index(x)])
    if y is None:
        order = (
            np.argsort(xs, kind="stable")
            if np.issubdtype(xs.dtype, np.number)
            else np.arange(len(xs))
        )
        ax.plot(xs[order], vals[order], marker="o" if len(xs) <= 40 else None, markersize=4)
        ax.set_xlabel(axis_label(x, known.get(x)))
        ax.set_ylabel(vlabel)
        if np.issubdtype(xs.dtype, np.number) and _log_spaced(xs):
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        return
    ys = coord_values(t, y, vals.shape[dims.index(y)])
    z = vals if dims.index(y) == 0 else vals.T  # rows follow y, columns follow x
    ox, oy = np.argsort(xs, kind="stable"), np.argsort(ys, kind="stable")
    z = np.ma.masked_invalid(z[np.ix_(oy, ox)])
    mesh = ax.pcolormesh(xs[ox], ys[oy], z, shading="nearest", cmap="viridis")
    cbar = fig.colorbar(mesh, ax=ax)
    cbar.set_label(vlabel)
    ax.set_xlabel(axis_label(x, known.get(x)))
    ax.set_ylabel(axis_label(y, known.get(y)))
    if _log_spaced(xs):
        ax.set_xscale("log")
    if _log_spaced(ys):
        ax.set_yscale("log")


def _family(
    ax: Any,
    t: SweepTable,
    vals: np.ndarray,
    dims: list[str],
    x: str,
    hue: str,
    known: Mapping[str, str],
    vlabel: str,
) -> None:
    """One line of the variable against ``x`` per value of ``hue``."""
    xs = coord_values(t, x, vals.shape[dims.index(x)])
    hs = coord_values(t, hue, vals.shape[dims.index(hue)])
    z = vals if dims.index(hue) == 0 else vals.T
    order = np.argsort(xs, kind="stable")
    for i, h in enumerate(hs):
        ax.plot(
            xs[order],
            z[i][order],
            marker="o" if len(xs) <= 40 else None,
            markersize=3,
            label=mpl_text(
                f"{hue} = {h:.4g}" if isinstance(h, (float, int, np.number)) else f"{hue} = {h}"
            ),
        )
    ax.legend(loc="best", fontsize="small")
    ax.set_xlabel(axis_label(x, known.get(x)))
    ax.set_ylabel(vlabel)
    ax.grid(True, alpha=0.3)


def _scatter(
    fig: Any,
    ax: Any,
    t: SweepTable,
    name: str,
    vals: np.ndarray,
    params: list[str],
    known: Mapping[str, str],
    vlabel: str,
) -> None:
    """A random design: values against one parameter, or two parameters coloured by value."""
    if vals.ndim != 1:
        raise MDFError(
            f"'{name}' has shape {vals.shape} over the samples: expected one value per "
            "sample (fix other dimensions with sel={...})"
        )
    px = np.asarray(t.coords[params[0]][1], dtype=float)
    if len(params) == 1:
        ax.scatter(px, vals, s=12)
        ax.set_xlabel(axis_label(params[0], known.get(params[0])))
        ax.set_ylabel(vlabel)
        ax.grid(True, alpha=0.3)
        return
    py = np.asarray(t.coords[params[1]][1], dtype=float)
    pts = ax.scatter(px, py, c=np.ma.masked_invalid(vals), s=16, cmap="viridis")
    cbar = fig.colorbar(pts, ax=ax)
    cbar.set_label(vlabel)
    ax.set_xlabel(axis_label(params[0], known.get(params[0])))
    ax.set_ylabel(axis_label(params[1], known.get(params[1])))
