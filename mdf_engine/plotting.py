"""Pictures of results, for ``mdf run --plot`` and ``mdf sweep --plot``.

* :func:`plot_run` draws the recorded traces of a :class:`~mdf_engine.results.Results` against
  time (or step number when the run had no time increment), one panel per node.
* :func:`plot_sweep` draws a recorded final value against one swept parameter (a line, or a
  family of lines for a second parameter) or against two (a heat map with a colour bar), from the
  ``xarray.Dataset`` a sweep returns: dimensions named ``NODE.PARAM`` (plus possibly ``time``)
  and data variables named ``NODE.PORT``. A random design (one ``sample`` dimension with the
  parameters as coordinates along it) is drawn as a scatter plot.

Axis labels carry units where the model gives them: a ``units`` (or ``unit``) entry in the
``metadata`` of a port, parameter or node, or a ``units`` attribute on a Dataset variable or
coordinate. Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot, no
global backend switch) and written atomically; the format (PNG, SVG, PDF) follows the extension.
The size of a written image is ``size`` inches times ``dpi`` pixels (SVG/PDF: times 72 points).
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import MDFError
from .results import Results, atomic_write_bytes
from .safe_text import mpl_text

__all__ = ["plot_run", "plot_traces", "plot_sweep", "model_units", "save_figure", "IMAGE_FORMATS"]

#: Extensions an image can be written as.
IMAGE_FORMATS = ("png", "svg", "pdf")

#: Dimension names treated as time in a sweep Dataset (the final value is plotted).
TIME_DIMS = ("time", "step", "steps")

#: Default figures grow with their panels up to this height (inches).
_MAX_HEIGHT = 60.0


# --------------------------------------------------------------------------------------------
# shared helpers
def image_format(path: str | os.PathLike) -> str:
    """The image format for ``path`` from its extension, or an MDFError naming the choices."""
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in IMAGE_FORMATS:
        raise MDFError(
            f"cannot write an image to '{os.fspath(path)}': expected a file ending in "
            + ", ".join(f".{e}" for e in IMAGE_FORMATS)
        )
    return ext


def new_figure(size: tuple[float, float], dpi: float) -> Any:
    """A matplotlib Figure not attached to pyplot (so no global state and no GUI)."""
    from .extras import require

    Figure = require("matplotlib.figure").Figure
    w, h = float(size[0]), float(size[1])
    if not (w > 0 and h > 0 and dpi > 0):
        raise MDFError(f"figure size and dpi must be positive, got size={size} dpi={dpi}")
    return Figure(figsize=(w, h), dpi=dpi)


def save_figure(fig: Any, path: str | os.PathLike) -> tuple[int, int]:
    """Write ``fig`` to ``path`` (format from the extension) atomically.

    Returns the image size: (width, height) in pixels for PNG, in points for SVG/PDF. SVG
    text stays text (searchable, small files); files carry no date, so they are reproducible.
    """
    fmt = image_format(path)
    # whole pixels (PNG) or points (SVG/PDF), so the size reported is the size written
    w, h = fig.get_size_inches()
    scale = fig.dpi if fmt == "png" else 72.0
    size = max(1, int(round(w * scale))), max(1, int(round(h * scale)))
    nudge = 1e-4 if fmt == "png" else 0.0  # Agg truncates the pixel count
    fig.set_size_inches((size[0] + nudge) / scale, (size[1] + nudge) / scale)
    buf = io.BytesIO()
    # no dates or tool versions in the file: the same figure gives the same bytes
    metadata = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
    }[fmt]
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mdf_engine"}):
        fig.savefig(buf, format=fmt, metadata=metadata)
    atomic_write_bytes(path, buf.getvalue())
    return size


def _unit_of(meta: Any) -> str | None:
    if isinstance(meta, Mapping):
        for key in ("units", "unit"):
            u = meta.get(key)
            if isinstance(u, str) and u:
                return u
    return None


def model_units(model: Any, graph: str | None = None) -> dict[str, str]:
    """Units the model declares: ``{"NODE.NAME": unit}`` for ports, parameters and functions
    whose ``metadata`` has ``units``/``unit``, ``{"NODE": unit}`` for nodes, and ``{"time":
    unit}`` from the graph's or model's ``metadata`` key ``time_units``."""
    from .loader import load

    m = load(model)
    g = m.get_graph(graph)
    out: dict[str, str] = {}
    for meta in (m.metadata, g.metadata):
        if isinstance(meta, Mapping) and isinstance(meta.get("time_units"), str):
            out["time"] = meta["time_units"]
    for node in g.nodes:
        u = _unit_of(node.metadata)
        if u:
            out[node.id] = u
        for kind in ("input_ports", "functions", "parameters", "output_ports"):
            for item in getattr(node, kind):
                u = _unit_of(item.metadata)
                if u:
                    out[f"{node.id}.{item.id}"] = u
    return out


def _label(name: str, unit: str | None) -> str:
    """An axis label from model text (escaped for matplotlib)."""
    return mpl_text(f"{name} ({unit})" if unit else name)


def _numeric(values: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except ValueError as exc:  # ragged lists
        raise MDFError(f"cannot plot {what}: its values change shape from step to step") from exc
    if arr.dtype == object and arr.ndim == 1 and any(v is None for v in arr):
        # None: the node had not run yet (conditions); drawn as a gap
        try:
            arr = np.array([np.nan if v is None else float(v) for v in arr])
        except (TypeError, ValueError):
            pass
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise MDFError(f"cannot plot {what}: expected numbers, got {arr.dtype} values")
    return arr.astype(float)


# --------------------------------------------------------------------------------------------
# traces of one run
def plot_run(
    results: Results,
    path: str | os.PathLike,
    *,
    model: Any = None,
    graph: str | None = None,
    title: str | None = None,
    units: Mapping[str, str] | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = 100,
    fired: Sequence[Sequence[str]] | None = None,
) -> tuple[int, int]:
    """Plot every recorded trace of ``results`` against time, one panel per node, to ``path``.

    ``fired`` (``Results.fired``: the nodes that ran in each step) adds a bottom panel with a
    tick at each step where each node ran, for models whose conditions skip nodes.

    ``model`` (a Model or file) supplies units from port/parameter metadata; ``units`` (keys
    ``NODE.PORT``, ``NODE`` or ``time``) adds to or overrides them. The x axis is the model time
    after each step, or the step number when no time increment was given. ``size`` is in inches
    (default 8 wide, 2.4 per panel, at most 60 high). Returns the written image size (see
    :func:`save_figure`).
    """
    if not results.traces:
        raise MDFError("nothing was recorded to plot; use --record NODE.PORT")
    known: dict[str, str] = {}
    if model is not None:
        known.update(model_units(model, graph if graph is not None else results.graph))
    known.update(units or {})

    by_node: dict[str, list[str]] = {}
    for key in results.traces:
        by_node.setdefault(key.split(".", 1)[0], []).append(key)
    n_steps = max(len(v) for v in results.traces.values())
    times = np.asarray(results.times, dtype=float)
    if len(times) == n_steps and n_steps > 1 and np.ptp(times) > 0:
        x, xlabel = times, _label("time", known.get("time"))
    else:
        x, xlabel = np.arange(1, n_steps + 1, dtype=float), "step"

    panels = len(by_node) + (fired is not None)
    fig = new_figure(size or (8.0, min(2.4 * panels + 0.8, _MAX_HEIGHT)), dpi)
    marker = "o" if n_steps <= 30 else None
    axes = fig.subplots(panels, 1, squeeze=False, sharex=True)[:, 0]
    if fired is not None:
        _fired_panel(axes[-1], x, fired)
    for ax, (node, keys) in zip(axes, by_node.items()):
        port_units = []
        for key in keys:
            y = _numeric(results.traces[key], f"the trace of {key}")
            if len(y) == 0:
                continue
            y = y.reshape(len(y), -1)
            unit = known.get(key) or known.get(node)
            port_units.append(unit)
            port = key.split(".", 1)[1]
            for j in range(y.shape[1]):
                label = port if y.shape[1] == 1 else f"{port}[{j}]"
                ax.plot(
                    x[: len(y)],
                    y[:, j],
                    marker=marker,
                    markersize=3,
                    label=_label(label, unit) if len(keys) > 1 else mpl_text(label),
                )
        ax.set_title(mpl_text(node), loc="left", fontsize="medium")
        if len(keys) == 1:
            ax.set_ylabel(_label(keys[0].split(".", 1)[1], port_units[0] if port_units else None))
        else:
            same = {u for u in port_units}
            ax.set_ylabel(_label("value", same.pop() if len(same) == 1 else None))
        if len(keys) > 1 or ax.get_legend_handles_labels()[0][1:]:
            ax.legend(loc="best", fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel(xlabel)
    if title:
        fig.suptitle(mpl_text(title))
    fig.tight_layout()
    return save_figure(fig, path)


def _fired_panel(ax: Any, x: np.ndarray, fired: Sequence[Sequence[str]]) -> None:
    """A tick for each node at each step in which it ran (nodes in order of first run)."""
    nodes = list(dict.fromkeys(n for step in fired for n in step))
    row = {n: i for i, n in enumerate(nodes)}
    when: dict[str, list[float]] = {n: [] for n in nodes}
    for k, step in enumerate(fired[: len(x)]):
        for n in step:
            when[n].append(x[k])
    for n, xs in when.items():
        ax.plot(xs, [row[n]] * len(xs), marker="|", markersize=10, color="C0", linestyle="none")
    ax.set_yticks(range(len(nodes)), nodes)
    ax.set_ylim(-0.6, len(nodes) - 0.4)
    ax.invert_yaxis()
    ax.set_title("nodes that ran", loc="left", fontsize="medium")
    ax.grid(True, axis="x", alpha=0.3)


def plot_traces(
    res: Results,
    path: str | os.PathLike,
    title: str | None = None,
    units: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> tuple[int, int]:
    """The earlier name of :func:`plot_run` (same arguments)."""
    return plot_run(res, path, title=title, units=units, **kwargs)


# --------------------------------------------------------------------------------------------
# sweeps
@dataclass
class _Table:
    """A Dataset reduced to numpy: variables and coordinates as (dims, values), plus units."""

    variables: dict[str, tuple[tuple[str, ...], np.ndarray]]
    coords: dict[str, tuple[tuple[str, ...], np.ndarray]]
    units: dict[str, str] = field(default_factory=dict)


def _as_table(data: Any, coords: Mapping[str, Sequence[float]] | None) -> _Table:
    if hasattr(data, "data_vars") and hasattr(data, "coords"):  # an xarray.Dataset
        t = _Table({}, {})
        for name, da in data.data_vars.items():
            t.variables[str(name)] = (tuple(str(d) for d in da.dims), np.asarray(da.values))
            u = _unit_of(da.attrs)
            if u:
                t.units[str(name)] = u
        for name, c in data.coords.items():
            t.coords[str(name)] = (tuple(str(d) for d in c.dims), np.asarray(c.values))
            u = _unit_of(c.attrs)
            if u:
                t.units[str(name)] = u
        return t
    if hasattr(data, "dims") and hasattr(data, "values") and hasattr(data, "name"):
        return _as_table(data.to_dataset(name=data.name or "value"), None)
    if isinstance(data, Mapping):
        if not coords:
            raise MDFError(
                "plot_sweep on plain arrays needs coords={'NODE.PARAM': values, ...} "
                "in the order of the arrays' axes"
            )
        dims = tuple(coords)
        t = _Table({}, {d: ((d,), np.asarray(v)) for d, v in coords.items()})
        shape = tuple(len(np.asarray(v)) for v in coords.values())
        for name, values in data.items():
            arr = np.asarray(values)
            if arr.shape[: len(dims)] != shape or arr.ndim > len(dims) + 1:
                raise MDFError(
                    f"sweep variable '{name}' has shape {arr.shape}: expected "
                    f"{shape} (one axis per swept parameter), optionally followed "
                    "by a time axis"
                )
            t.variables[str(name)] = (dims + (("time",) if arr.ndim > len(dims) else ()), arr)
        return t
    raise MDFError(
        f"cannot plot a sweep from {type(data).__name__}: expected an xarray.Dataset "
        "or a dict of arrays with coords="
    )


def _coord(t: _Table, dim: str, n: int) -> np.ndarray:
    c = t.coords.get(dim)
    if c is not None and c[0] == (dim,):
        return np.asarray(c[1])
    return np.arange(n)


def _select(t: _Table, var: str, sel: Mapping[str, Any]) -> tuple[list[str], np.ndarray, bool]:
    """The variable with ``sel`` applied (nearest coordinate value) and time reduced to its
    final entry; returns (dims, values, whether time was reduced)."""
    dims, vals = t.variables[var]
    dims = list(dims)
    vals = np.asarray(vals)
    for name, want in sel.items():
        if name not in dims:
            raise MDFError(
                f"sel: '{name}' is not a dimension of '{var}' (dimensions: {', '.join(dims)})"
            )
        axis = dims.index(name)
        c = _coord(t, name, vals.shape[axis])
        if np.issubdtype(np.asarray(c).dtype, np.number):
            i = int(np.argmin(np.abs(np.asarray(c, dtype=float) - float(want))))
        else:
            hits = np.nonzero(np.asarray(c) == want)[0]
            if len(hits) == 0:
                raise MDFError(f"sel: {name}={want!r} is not one of its values")
            i = int(hits[0])
        vals = np.take(vals, i, axis=axis)
        dims.pop(axis)
    reduced = False
    for name in TIME_DIMS:
        if name in dims and name not in sel:
            axis = dims.index(name)
            vals = np.take(vals, -1, axis=axis)
            dims.pop(axis)
            reduced = True
    return dims, vals, reduced


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
    maps (see :mod:`mdf_engine.plotting_facets`); otherwise more dimensions must be fixed with
    ``sel={"NODE.PARAM": value}`` (nearest value). A random
    design (a ``sample`` dimension with ``NODE.PARAM`` coordinates along it) is drawn as a
    scatter (coloured by value for two parameters). ``var`` defaults to every variable.
    """
    t = _as_table(data, coords)
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
        from .plotting_facets import plot_facets, swept_dims

        if len(swept_dims(t, names[0])) >= 3:  # the default for 3+ swept parameters
            return plot_facets(t, names, path, known, title, size, dpi)
    n = len(names)
    fig = new_figure(size or (7.0, min(4.2 * n, _MAX_HEIGHT)), dpi)
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    for ax, name in zip(axes, names):
        dims, vals, reduced = _select(t, name, sel or {})
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
    t: _Table,
    name: str,
    dims: list[str],
    vals: np.ndarray,
    x: str | None,
    y: str | None,
    known: Mapping[str, str],
) -> None:
    vals = _numeric(vals, f"'{name}'")
    # size-1 dimensions that were not asked for are dropped
    for d in [d for d in dims if vals.shape[dims.index(d)] == 1 and d not in (x, y)]:
        vals = np.take(vals, 0, axis=dims.index(d))
        dims.remove(d)
    vlabel = _label(name, known.get(name))
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
    xs = _coord(t, x, vals.shape[dims.index(x)])
    if y is None:
        order = (
            np.argsort(xs, kind="stable")
            if np.issubdtype(xs.dtype, np.number)
            else np.arange(len(xs))
        )
        ax.plot(xs[order], vals[order], marker="o" if len(xs) <= 40 else None, markersize=4)
        ax.set_xlabel(_label(x, known.get(x)))
        ax.set_ylabel(vlabel)
        if np.issubdtype(xs.dtype, np.number) and _log_spaced(xs):
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        return
    ys = _coord(t, y, vals.shape[dims.index(y)])
    z = vals if dims.index(y) == 0 else vals.T  # rows follow y, columns follow x
    ox, oy = np.argsort(xs, kind="stable"), np.argsort(ys, kind="stable")
    z = np.ma.masked_invalid(z[np.ix_(oy, ox)])
    mesh = ax.pcolormesh(xs[ox], ys[oy], z, shading="nearest", cmap="viridis")
    cbar = fig.colorbar(mesh, ax=ax)
    cbar.set_label(vlabel)
    ax.set_xlabel(_label(x, known.get(x)))
    ax.set_ylabel(_label(y, known.get(y)))
    if _log_spaced(xs):
        ax.set_xscale("log")
    if _log_spaced(ys):
        ax.set_yscale("log")


def _family(
    ax: Any,
    t: _Table,
    vals: np.ndarray,
    dims: list[str],
    x: str,
    hue: str,
    known: Mapping[str, str],
    vlabel: str,
) -> None:
    """One line of the variable against ``x`` per value of ``hue``."""
    xs = _coord(t, x, vals.shape[dims.index(x)])
    hs = _coord(t, hue, vals.shape[dims.index(hue)])
    z = vals if dims.index(hue) == 0 else vals.T
    order = np.argsort(xs, kind="stable")
    for i, h in enumerate(hs):
        ax.plot(
            xs[order],
            z[i][order],
            marker="o" if len(xs) <= 40 else None,
            markersize=3,
            label=f"{hue} = {h:.4g}" if isinstance(h, (float, int, np.number)) else f"{hue} = {h}",
        )
    ax.legend(loc="best", fontsize="small")
    ax.set_xlabel(_label(x, known.get(x)))
    ax.set_ylabel(vlabel)
    ax.grid(True, alpha=0.3)


def _scatter(
    fig: Any,
    ax: Any,
    t: _Table,
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
        ax.set_xlabel(_label(params[0], known.get(params[0])))
        ax.set_ylabel(vlabel)
        ax.grid(True, alpha=0.3)
        return
    py = np.asarray(t.coords[params[1]][1], dtype=float)
    pts = ax.scatter(px, py, c=np.ma.masked_invalid(vals), s=16, cmap="viridis")
    cbar = fig.colorbar(pts, ax=ax)
    cbar.set_label(vlabel)
    ax.set_xlabel(_label(params[0], known.get(params[0])))
    ax.set_ylabel(_label(params[1], known.get(params[1])))
