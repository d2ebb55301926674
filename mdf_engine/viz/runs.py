"""Pictures of one run, for ``mdf run --plot``: :func:`plot_run` draws the recorded traces of a
:class:`~mdf_engine.results.Results` against time (or step number when the run had no time
increment), one panel per node, optionally with a panel marking the steps at which each node ran.

Axis labels carry units where the model gives them: a ``units`` (or ``unit``) entry in the
``metadata`` of a port, parameter or node (see :func:`mdf_engine.viz.figures.model_units`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import MDFError
from ..results import Results
from ..safe_text import mpl_text
from .figures import MAX_HEIGHT, axis_label, model_units, new_figure, numeric_values, save_figure

__all__ = ["plot_run", "plot_traces"]


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
        x, xlabel = times, axis_label("time", known.get("time"))
    else:
        x, xlabel = np.arange(1, n_steps + 1, dtype=float), "step"

    panels = len(by_node) + (fired is not None)
    fig = new_figure(size or (8.0, min(2.4 * panels + 0.8, MAX_HEIGHT)), dpi)
    marker = "o" if n_steps <= 30 else None
    axes = fig.subplots(panels, 1, squeeze=False, sharex=True)[:, 0]
    if fired is not None:
        _fired_panel(axes[-1], x, fired)
    for ax, (node, keys) in zip(axes, by_node.items()):
        port_units = []
        for key in keys:
            y = numeric_values(results.traces[key], f"the trace of {key}")
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
                    label=axis_label(label, unit) if len(keys) > 1 else mpl_text(label),
                )
        ax.set_title(mpl_text(node), loc="left", fontsize="medium")
        if len(keys) == 1:
            ax.set_ylabel(
                axis_label(keys[0].split(".", 1)[1], port_units[0] if port_units else None)
            )
        else:
            same = {u for u in port_units}
            ax.set_ylabel(axis_label("value", same.pop() if len(same) == 1 else None))
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
    ax.set_yticks(range(len(nodes)), [mpl_text(n) for n in nodes])
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
