"""A sweep reduced to numpy for plotting: :class:`SweepTable` holds the variables and
coordinates of an ``xarray.Dataset`` (or of a dict of arrays with their coordinates) as plain
arrays with their dimension names and units; :func:`select_values` picks values along
dimensions and reduces time to its final entry. Shared by :mod:`mdf_engine.viz.sweeps` and
:mod:`mdf_engine.viz.facets`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MDFError
from .figures import unit_of

#: Dimension names treated as time in a sweep Dataset (the final value is plotted).
TIME_DIMS = ("time", "step", "steps")


@dataclass
class SweepTable:
    """A Dataset reduced to numpy: variables and coordinates as (dims, values), plus units."""

    variables: dict[str, tuple[tuple[str, ...], np.ndarray]]
    coords: dict[str, tuple[tuple[str, ...], np.ndarray]]
    units: dict[str, str] = field(default_factory=dict)


def as_table(data: Any, coords: Mapping[str, Sequence[float]] | None) -> SweepTable:
    """A Dataset, DataArray or dict of arrays (with ``coords`` in axis order) as a table."""
    if hasattr(data, "data_vars") and hasattr(data, "coords"):  # an xarray.Dataset
        t = SweepTable({}, {})
        for name, da in data.data_vars.items():
            t.variables[str(name)] = (tuple(str(d) for d in da.dims), np.asarray(da.values))
            u = unit_of(da.attrs)
            if u:
                t.units[str(name)] = u
        for name, c in data.coords.items():
            t.coords[str(name)] = (tuple(str(d) for d in c.dims), np.asarray(c.values))
            u = unit_of(c.attrs)
            if u:
                t.units[str(name)] = u
        return t
    if hasattr(data, "dims") and hasattr(data, "values") and hasattr(data, "name"):
        return as_table(data.to_dataset(name=data.name or "value"), None)
    if isinstance(data, Mapping):
        if not coords:
            raise MDFError(
                "plot_sweep on plain arrays needs coords={'NODE.PARAM': values, ...} "
                "in the order of the arrays' axes"
            )
        dims = tuple(coords)
        t = SweepTable({}, {d: ((d,), np.asarray(v)) for d, v in coords.items()})
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


def coord_values(t: SweepTable, dim: str, n: int) -> np.ndarray:
    """The coordinate values along ``dim`` (``0..n-1`` when it has none)."""
    c = t.coords.get(dim)
    if c is not None and c[0] == (dim,):
        return np.asarray(c[1])
    return np.arange(n)


def select_values(
    t: SweepTable, var: str, sel: Mapping[str, Any]
) -> tuple[list[str], np.ndarray, bool]:
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
        c = coord_values(t, name, vals.shape[axis])
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
