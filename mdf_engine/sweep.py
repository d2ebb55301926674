"""Parameter sweeps: run one model for many parameter sets and gather a labelled dataset.

A sweep sets ``NODE.PARAM`` values: a constant parameter gets the value, a stateful one
(``time_derivative``, ``default_initial_value`` or a value that refers to itself) gets it as its
initial value. Designs:

* ``grid``: every combination of the value lists (one dataset dimension per parameter);
* ``list``: the i-th values of all lists together (equal lengths; dimension ``set``);
* ``samples``: ``n`` points drawn uniformly in each parameter's ``[low, high]`` range with a
  seeded generator (dimension ``sample``).

On the compiled backend all parameter sets of a chunk run in one jitted call (threads over
the rows); chunks go to Dask workers when a cluster is used (``cluster="local"`` starts a
LocalCluster; an address such as ``tcp://host:8786`` joins that scheduler). The result is an
``xarray.Dataset``: a data variable per recorded ``NODE.PORT`` with the design dimensions, then
``time``, then the port's own dimensions.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import MDFError
from .loader import load
from .model import Model

DESIGNS = ("grid", "list", "samples")


def parse_range(text: str) -> np.ndarray:
    """``START:STOP:N`` (N evenly spaced values, both ends included), ``START:STOP`` (for a
    sampled design: the range) or a comma-separated list ``1,2,5``."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [float(p) for p in text.split(":")]
            if len(parts) == 3:
                n = int(parts[2])
                if n < 1 or n != parts[2]:
                    raise MDFError(f"'{text}': N must be a whole number >= 1")
                return np.linspace(parts[0], parts[1], n)
            if len(parts) == 2:
                return np.array(parts)
            raise ValueError
        return np.array([float(p) for p in text.split(",")])
    except ValueError:
        raise MDFError(
            f"'{text}': expected START:STOP:N, START:STOP or a list like 1,2,5"
        ) from None


@dataclass
class Design:
    """The parameter sets of a sweep: ``values`` has one row per set, one column per name."""

    names: list[str]
    values: np.ndarray
    kind: str
    axes: list[np.ndarray]

    @property
    def dims(self) -> list[str]:
        if self.kind == "grid":
            return list(self.names)
        return ["set" if self.kind == "list" else "sample"]

    @property
    def shape(self) -> tuple[int, ...]:
        if self.kind == "grid":
            return tuple(len(a) for a in self.axes)
        return (self.values.shape[0],)


def make_design(
    params: Mapping[str, Any], kind: str = "grid", samples: int | None = None, seed: int = 0
) -> Design:
    """Parameter sets from ``{"NODE.PARAM": values or "START:STOP:N"}``."""
    if not params:
        raise MDFError("a sweep needs at least one parameter (NODE.PARAM=START:STOP:N)")
    if samples is not None:
        kind = "samples"
    if kind not in DESIGNS:
        raise MDFError(f"unknown design '{kind}' (choose from {', '.join(DESIGNS)})")
    names = list(params)
    axes = []
    for name in names:
        v = params[name]
        arr = parse_range(v) if isinstance(v, str) else np.atleast_1d(np.asarray(v, float))
        if arr.ndim != 1 or arr.size == 0:
            raise MDFError(f"sweep '{name}': expected a non-empty list of numbers")
        axes.append(arr)
    from .limits import check_sweep_design

    check_sweep_design(axes, kind, samples)
    if kind == "grid":
        values = np.array(list(itertools.product(*axes)), dtype=np.float64)
    elif kind == "list":
        sizes = {len(a) for a in axes}
        if len(sizes) != 1:
            raise MDFError(
                "a list design needs lists of one length, got "
                + ", ".join(f"{n}: {len(a)}" for n, a in zip(names, axes))
            )
        values = np.stack(axes, axis=1)
    else:
        if samples is None or samples < 1:
            raise MDFError("a sampled design needs samples >= 1")
        rng = np.random.default_rng(seed)
        cols = [rng.uniform(a.min(), a.max(), size=samples) for a in axes]
        values = np.stack(cols, axis=1)
    return Design(names, values.reshape(-1, len(names)), kind, axes)


def _split_key(key: str, what: str) -> tuple[str, str]:
    if key.count(".") < 1:
        raise MDFError(f"{what} '{key}': expected NODE.NAME")
    node, name = key.split(".", 1)
    return node, name


def with_parameters(model: Any, values: Mapping[str, float], graph: str | None = None) -> Model:
    """A copy of ``model`` with swept values set: the single-run definition of a sweep point."""
    m = copy.deepcopy(load(model))
    g = m.get_graph(graph)
    for key, v in values.items():
        node_id, pid = _split_key(key, "sweep")
        node = g.get_node(node_id)
        if node is None:
            raise MDFError(f"sweep '{key}': graph '{g.id}' has no node '{node_id}'")
        par = node.get("parameters", pid)
        if par is None:
            raise MDFError(f"sweep '{key}': node '{node_id}' has no parameter '{pid}'")
        if par.function is not None:
            raise MDFError(
                f"sweep '{key}': the parameter is computed by a function and cannot be set"
            )
        if par.is_stateful():
            par.default_initial_value = float(v)
        else:
            par.value = float(v)
    return m


# -- running ------------------------------------------------------------------------------------


@dataclass
class _Job:
    """Everything a worker needs to run a chunk (plain data: it travels to Dask workers)."""

    model: dict
    graph: str | None
    names: list[str]
    record: list[str]
    steps: int
    dt: float | None
    initializer: dict | None
    backend: str


def _run_rows(job: _Job, rows: np.ndarray) -> np.ndarray:
    """Recorded values ``(rows, steps, width)`` of one chunk of parameter sets."""
    model = load(job.model)
    if job.backend == "compiled":
        from .backends.compiled import CompiledGraph
        from .plan import plan_graph

        g = model.get_graph(job.graph)
        cg = CompiledGraph(plan_graph(model, g, None), record_schedule=False)
        keys = [tuple(k.split(".", 1)) for k in job.names]
        rec = [tuple(k.split(".", 1)) for k in job.record]
        if cg.prepare_batch(keys, rec, job.dt, job.initializer):
            return cg.run_batch(rows, job.steps, job.dt, job.initializer)
    return _run_rows_interpreted(job, rows, model)


def _run_rows_interpreted(job: _Job, rows: np.ndarray, model: Model) -> np.ndarray:
    from .simulation import Simulation

    out = []
    for row in rows:
        sim = Simulation(
            with_parameters(model, dict(zip(job.names, row)), job.graph),
            graph=job.graph,
            backend="interpreted",
        )
        res = sim.run(steps=job.steps, dt=job.dt, initializer=job.initializer, record=job.record)
        cols = [
            np.asarray(res.trace(*_split_key(r, "record")), dtype=float).reshape(job.steps, -1)
            for r in job.record
        ]
        out.append(np.concatenate(cols, axis=1) if cols else np.zeros((job.steps, 0)))
    return np.stack(out) if out else np.zeros((0, job.steps, 0))


def _record_shapes(
    model: Model,
    graph: str | None,
    record: Sequence[str],
    initializer: Mapping[str, Any] | None,
    dt: float | None,
) -> list[tuple[int, ...]]:
    """The shape of each recorded value, from one interpreted step of the model itself."""
    from .simulation import Simulation

    sim = Simulation(model, graph=graph, backend="interpreted")
    sim.run(steps=1, dt=dt, initializer=initializer)
    return [np.shape(sim.value(*_split_key(r, "record"))) for r in record]


def sweep(
    model: Any,
    params: Mapping[str, Any],
    *,
    steps: int = 1,
    dt: float | None = None,
    record: Sequence[str] = (),
    graph: str | None = None,
    initializer: Mapping[str, Any] | None = None,
    design: str = "grid",
    samples: int | None = None,
    seed: int = 0,
    backend: str = "compiled",
    cluster: str | None = None,
    workers: int | None = None,
    chunk: int | None = None,
    progress: Callable[[int], None] | None = None,
    duration: float | None = None,
) -> Any:
    """Run ``model`` once per parameter set and return an ``xarray.Dataset``.

    ``params`` maps ``NODE.PARAM`` to a list of values or ``"START:STOP:N"``; ``record`` lists
    ``NODE.PORT`` (or ``NODE.PARAM``) values kept at every step. ``cluster=None`` runs here
    (all sets in one jitted call), ``"local"`` starts a Dask LocalCluster with ``workers``
    processes, any other string is a Dask scheduler address. ``progress(n)`` is called as
    chunks finish. ``duration=T`` (with ``dt``) runs the steps of the reference loop
    ``t=0; while t<=T: ...; t+=dt``, as ``Simulation.run(duration=T)`` does.
    """
    from .extras import require

    xr = require("xarray")
    if duration is not None:
        from .simulation import steps_for_duration

        steps = steps_for_duration(duration, dt)
    m = load(model)
    g = m.get_graph(graph)
    if not record:
        raise MDFError("a sweep needs at least one recorded NODE.PORT")
    if backend not in ("compiled", "interpreted"):
        raise MDFError(f"unknown backend '{backend}' (choose compiled or interpreted)")
    if steps < 1:
        raise MDFError(f"steps must be >= 1, got {steps}")
    d = make_design(params, design, samples, seed)
    with_parameters(m, dict(zip(d.names, d.values[0])), g.id)  # checks every name
    shapes = _record_shapes(m, g.id, record, initializer, dt)
    job = _Job(
        m.to_dict(),
        g.id,
        d.names,
        list(record),
        int(steps),
        dt,
        dict(initializer) if initializer else None,
        backend,
    )
    rows = d.values
    if cluster is None:
        size = chunk or max(1, len(rows))
        parts = []
        for start in range(0, len(rows), size):
            parts.append(_run_rows(job, rows[start : start + size]))
            if progress:
                progress(len(parts[-1]))
        rec = np.concatenate(parts) if parts else np.zeros((0, steps, 0))
    else:
        rec = _run_on_dask(job, rows, cluster, workers, chunk, progress)
    return _dataset(xr, d, rec, record, shapes, steps, dt, m, g.id)


def _run_on_dask(
    job: _Job,
    rows: np.ndarray,
    cluster: str,
    workers: int | None,
    chunk: int | None,
    progress: Callable[[int], None] | None,
) -> np.ndarray:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise MDFError(
            "sweeps on a cluster need dask.distributed (pip install 'dask[distributed]')"
        ) from None
    local = None
    if cluster == "local":
        n = workers or max(1, (os.cpu_count() or 2))
        local = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(local)
    else:
        try:
            client = Client(cluster, timeout="20s")
        except (OSError, TimeoutError, MemoryError, ValueError) as e:
            # (a port that answers with something else than a scheduler can ask for any size)
            raise MDFError(
                f"cannot reach a Dask scheduler at '{cluster}' ({type(e).__name__})"
            ) from None
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or 1)
        size = chunk or max(1, -(-len(rows) // (4 * n_workers)))
        starts = list(range(0, len(rows), size))
        futures = {client.submit(_run_rows, job, rows[s : s + size], pure=False): s for s in starts}
        parts: dict[int, np.ndarray] = {}
        for fut in as_completed(futures):
            parts[futures[fut]] = fut.result()
            if progress:
                progress(len(parts[futures[fut]]))
        return np.concatenate([parts[s] for s in starts]) if starts else np.zeros((0, job.steps, 0))
    finally:
        client.close()
        if local is not None:
            local.close()


def _dataset(
    xr: Any,
    d: Design,
    rec: np.ndarray,
    record: Sequence[str],
    shapes: list[tuple[int, ...]],
    steps: int,
    dt: float | None,
    model: Model,
    graph: str,
) -> Any:
    times = np.array([0.0 if dt is None else k * dt for k in range(steps)])
    coords: dict[str, Any] = {"time": ("time", times)}
    if d.kind == "grid":
        for name, axis in zip(d.names, d.axes):
            coords[name] = (name, axis)
    else:
        dim = d.dims[0]
        coords[dim] = (dim, np.arange(d.values.shape[0]))
        for k, name in enumerate(d.names):
            coords[name] = (dim, d.values[:, k])
    data = {}
    col = 0
    for r, shape in zip(record, shapes):
        size = int(np.prod(shape)) if shape else 1
        block = rec[:, :, col : col + size].reshape((*d.shape, steps, *shape))
        col += size
        extra = [f"{r}_dim{k}" for k in range(len(shape))]
        data[r] = ([*d.dims, "time", *extra], block)
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(
        {
            "model": model.id,
            "graph": graph,
            "design": d.kind,
            "swept": ",".join(d.names),
            "steps": steps,
            "dt": "none" if dt is None else float(dt),
        }
    )
    return ds


# -- files --------------------------------------------------------------------------------------


def final_table(ds: Any) -> tuple[list[str], np.ndarray]:
    """One row per parameter set: the swept values, then each recorded value at the last
    step (array values flattened to ``NODE.PORT[i]`` columns)."""
    swept = [s for s in ds.attrs["swept"].split(",") if s]
    first = ds[list(ds.data_vars)[0]]
    dims = list(first.dims[: first.dims.index("time")])
    shape = tuple(ds.sizes[d] for d in dims)
    n = int(np.prod(shape))
    cols, header = [], []
    for name in swept:
        c = ds[name]
        values = np.asarray(c.values, float)
        if c.dims == (name,) and len(dims) > 1:  # a grid axis: spread over the grid
            axis = dims.index(name)
            values = np.broadcast_to(
                values.reshape([-1 if k == axis else 1 for k in range(len(dims))]), shape
            )
        cols.append(np.asarray(values).reshape(n, 1))
        header.append(name)
    for var in ds.data_vars:
        last = ds[var].isel(time=-1)
        vals = np.asarray(last.transpose(*dims, ...).values, float).reshape(n, -1)
        cols.append(vals)
        if vals.shape[1] == 1 and last.ndim == len(dims):
            header.append(var)
        else:
            header += [f"{var}[{i}]" for i in range(vals.shape[1])]
    return header, np.concatenate(cols, axis=1)


def save_dataset(ds: Any, path: str | os.PathLike) -> None:
    """Write a sweep to ``.nc`` (NetCDF), ``.csv`` (final values) or ``.npz``, atomically."""
    import io

    from .results import atomic_write_bytes, atomic_write_text

    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".nc":
        atomic_write_bytes(path, ds.to_netcdf())
    elif ext == ".csv":
        header, table = final_table(ds)
        buf = io.StringIO()
        buf.write(",".join(header) + "\n")
        for row in table:
            buf.write(",".join(repr(float(x)) for x in row) + "\n")
        atomic_write_text(path, buf.getvalue())
    elif ext == ".npz":
        buf = io.BytesIO()
        arrays: dict[str, np.ndarray] = {}
        for prefix, items in (("coord", ds.coords.items()), ("var", ds.data_vars.items())):
            for k, v in items:
                arrays[f"{prefix}:{k}"] = np.asarray(v.values)
                arrays[f"dims:{prefix}:{k}"] = np.array(list(v.dims), dtype=str)
        arrays["attrs"] = np.array(json.dumps({k: v for k, v in ds.attrs.items()}))
        np.savez(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())
    else:
        raise MDFError(f"'{path}': sweep results are written as .nc, .csv or .npz")


def open_dataset(path: str | os.PathLike) -> Any:
    """Read a sweep written by :func:`save_dataset` as ``.nc`` or ``.npz``."""
    from .extras import require

    xr = require("xarray")
    path = os.fspath(path)
    if path.endswith(".nc"):
        with xr.open_dataset(path) as ds:
            return ds.load()
    if path.endswith(".npz"):
        with np.load(path) as z:
            parts: dict[str, dict[str, Any]] = {"coord": {}, "var": {}}
            for key in z.files:
                prefix, _, name = key.partition(":")
                if prefix in parts:
                    parts[prefix][name] = (list(z[f"dims:{key}"]), z[key])
            attrs = json.loads(str(z["attrs"])) if "attrs" in z.files else {}
        return xr.Dataset(parts["var"], coords=parts["coord"], attrs=attrs)
    raise MDFError(f"'{path}': expected a .nc or .npz sweep file")
