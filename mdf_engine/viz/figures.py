"""What every picture of :mod:`mdf_engine.viz` shares: the image formats, a figure that is not
attached to pyplot, an atomic and reproducible write, axis labels with the units a model
declares, and the check that plotted values are numbers.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot, no global backend
switch) and written atomically; the format (PNG, SVG, PDF) follows the extension. The size of a
written image is ``size`` inches times ``dpi`` pixels (SVG/PDF: times 72 points).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import MDFError
from ..results import atomic_write_bytes
from ..safe_text import mpl_text

#: Extensions an image can be written as.
IMAGE_FORMATS = ("png", "svg", "pdf")


#: Default figures grow with their panels up to this height (inches).
MAX_HEIGHT = 60.0

#: A figure's side at most (pixels at its dpi), and its area (pixels): a PNG of 10^8 pixels
#: is 400 MB in memory; matplotlib itself fails past 2^23 pixels a side, or with a MemoryError.
MAX_SIDE_PIXELS = 2**15
MAX_PIXELS = 10**8


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
    from ..extras import require

    Figure = require("matplotlib.figure").Figure
    w, h, dpi = float(size[0]), float(size[1]), float(dpi)
    if not all(math.isfinite(x) and x > 0 for x in (w, h, dpi)):
        raise MDFError(
            f"figure size and dpi must be finite and positive, got size=({w:g}, {h:g}) dpi={dpi:g}"
        )
    if max(w, h) * dpi > MAX_SIDE_PIXELS or w * h * dpi * dpi > MAX_PIXELS:
        raise MDFError(
            f"a figure of {w:g} x {h:g} inches at {dpi:g} dpi is {w * dpi:.3g} x {h * dpi:.3g} "
            f"pixels: at most {MAX_SIDE_PIXELS} a side and {MAX_PIXELS:.0e} in all "
            "(a smaller --size or --dpi)"
        )
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


def unit_of(meta: Any) -> str | None:
    """The ``units`` (or ``unit``) entry of a metadata mapping, if it is a non-empty string."""
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
    from ..loader import load

    m = load(model)
    g = m.get_graph(graph)
    out: dict[str, str] = {}
    for meta in (m.metadata, g.metadata):
        if isinstance(meta, Mapping) and isinstance(meta.get("time_units"), str):
            out["time"] = meta["time_units"]
    for node in g.nodes:
        u = unit_of(node.metadata)
        if u:
            out[node.id] = u
        for kind in ("input_ports", "functions", "parameters", "output_ports"):
            for item in getattr(node, kind):
                u = unit_of(item.metadata)
                if u:
                    out[f"{node.id}.{item.id}"] = u
    return out


def axis_label(name: str, unit: str | None) -> str:
    """An axis label from model text (escaped for matplotlib)."""
    return mpl_text(f"{name} ({unit})" if unit else name)


def numeric_values(values: Any, what: str) -> np.ndarray:
    """``values`` as a float array (``None``, a node that had not run yet, as NaN), or an
    MDFError naming ``what`` when they are not numbers or change shape."""
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
