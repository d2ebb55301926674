"""Pictures of results: traces of recorded ports against time, one panel per node (matplotlib,
non-interactive Agg backend)."""

from __future__ import annotations

import os

import numpy as np

from .errors import MDFError
from .results import Results


def plot_traces(res: Results, path: str | os.PathLike, title: str | None = None,
                units: dict[str, str] | None = None) -> None:
    """Write a PNG/SVG/PDF with one panel per node, each recorded value against time."""
    if not res.traces:
        raise MDFError("nothing was recorded to plot; use --record NODE.PORT")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_node: dict[str, list[str]] = {}
    for key in res.traces:
        by_node.setdefault(key.split(".", 1)[0], []).append(key)
    fig, axes = plt.subplots(len(by_node), 1, figsize=(8, 2.6 * len(by_node)), squeeze=False,
                             sharex=True)
    t = np.asarray(res.times, dtype=float)
    for ax, (node, keys) in zip(axes[:, 0], by_node.items()):
        for key in keys:
            y = np.asarray(res.traces[key], dtype=float).reshape(len(t), -1)
            for j in range(y.shape[1]):
                label = key if y.shape[1] == 1 else f"{key}[{j}]"
                ax.plot(t, y[:, j], label=label)
        unit = (units or {}).get(node)
        ax.set_ylabel(f"{node}" + (f" ({unit})" if unit else ""))
        ax.legend(loc="best", fontsize="small")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    tmp = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(tmp))
    os.makedirs(folder, exist_ok=True)
    fig.savefig(tmp)
    plt.close(fig)
