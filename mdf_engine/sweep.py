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

Memory follows what is saved: ``keep="final"`` computes only the last step's values (the
compiled loop writes no series), and ``output=PATH`` streams the series to the file chunk of
runs by chunk (:mod:`mdf_engine.sweep_files`) and returns the final values only. A chunk holds
at most about :data:`CHUNK_BYTES` of records.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import MDFError
from .limits import LIMITS, check_local_workers, limit
from .loader import load
from .model import Model
from .randomness import check_seed
from .run_arguments import check_sweep_arguments
from .sweep_files import final_table, open_dataset, save_dataset
from .sweep_records import (
    Kind,
    columns,
    compiled_dtypes,
    needs_interpreter,
    record_kinds,
    typed,
)

__all__ = [
    "sweep",
    "make_design",
    "with_parameters",
    "parse_range",
    "final_table",
    "save_dataset",
    "open_dataset",
]

DESIGNS = ("grid", "list", "samples")

#: Records held per chunk of runs when ``chunk`` is not given (bytes, roughly).
CHUNK_BYTES = 32 << 20

#: What a sweep keeps of each run: every step, or the last step's values.
KEEPS = ("series", "final")


def parse_range(text: str) -> np.ndarray:
    """``START:STOP:N`` (N evenly spaced values, both ends included), ``START:STOP`` (for a
    sampled design: the range) or a comma-separated list ``1,2,5``."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [float(p) for p in text.split(":")]
            if not all(math.isfinite(p) for p in parts[:2]):
                raise MDFError(f"'{text}': START and STOP must be finite numbers")
            if len(parts) == 3:
                if not math.isfinite(parts[2]) or parts[2] < 1 or parts[2] != int(parts[2]):
                    raise MDFError(f"'{text}': N must be a whole number >= 1")
                n = int(parts[2])
                if n > limit("sweep_values"):  # before allocating N values
                    raise MDFError(
                        f"'{text}': {n} values; the limit is {limit('sweep_values')} "
                        f"(set {LIMITS['sweep_values'][0]} to allow more)"
                    )
                return np.linspace(parts[0], parts[1], n)
            if len(parts) == 2:
                return np.array(parts)
            raise ValueError
        return np.array([float(p) for p in text.split(",")])
    except MDFError:
        raise
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
        try:  # (a list of texts, a dict: refused below)
            arr = None if isinstance(v, str) else np.atleast_1d(np.asarray(v, float))
        except (TypeError, ValueError, OverflowError):
            arr = np.zeros((0,))
        arr = parse_range(v) if arr is None else arr  # (its own errors name the range)
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
        rng = np.random.default_rng(check_seed(seed))
        cols = [rng.uniform(a.min(), a.max(), size=samples) for a in axes]
        values = np.stack(cols, axis=1)
    return Design(names, values.reshape(-1, len(names)), kind, axes)


_ALL_KINDS = ("output_ports", "parameters", "input_ports", "functions")


def _split_key(key: str, what: str, graph: Any, kinds: tuple[str, ...] = _ALL_KINDS) -> tuple:
    """``NODE.NAME`` as ``(node, name)`` in ``graph`` (ids may hold dots: the one split that
    names an element; an ambiguous key is refused)."""
    if key.count(".") < 1:
        raise MDFError(f"{what} '{key}': expected NODE.NAME")
    found = graph.node_port(key, kinds)
    if len(found) > 1:
        either = " and ".join(f"node '{n}' {p!r}" for n, p in found)
        raise MDFError(f"{what} '{key}': ambiguous, it names {either}")
    return found[0] if found else tuple(key.split(".", 1))


def with_parameters(model: Any, values: Mapping[str, float], graph: str | None = None) -> Model:
    """A copy of ``model`` with swept values set: the single-run definition of a sweep point."""
    m = copy.deepcopy(load(model))
    g = m.get_graph(graph)
    for key, v in values.items():
        node_id, pid = _split_key(key, "sweep", g, ("parameters",))
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
    keep: int  # the last ``keep`` steps are recorded
    kinds: list[Kind]  # each recorded value's dtype and shape (sweep_records)


def _run_rows(job: _Job, rows: np.ndarray) -> tuple[np.ndarray, list[np.dtype]]:
    """Recorded values ``(rows, keep, width)`` of one chunk of parameter sets (as float64
    numbers), and the dtype of each recorded value in that chunk (:mod:`.sweep_records`)."""
    model = load(job.model)
    if job.backend == "compiled":
        from .backends.compiled import CompiledGraph
        from .plan import plan_graph

        # (planned with a swept point's values: the warm-up sees them as floats, as every
        # point's run does)
        first = with_parameters(model, dict(zip(job.names, rows[0])), job.graph)
        g = first.get_graph(job.graph)
        cg = CompiledGraph(plan_graph(first, g, None), record_schedule=False)
        keys = [_split_key(k, "sweep", g, ("parameters",)) for k in job.names]
        rec = [_split_key(k, "record", g) for k in job.record]
        if cg.prepare_batch(keys, rec, job.dt, job.initializer):
            part = cg.run_batch(rows, job.steps, job.dt, job.initializer, keep=job.keep)
            if not needs_interpreter(part, job.kinds):
                return part, compiled_dtypes(cg, rec)
    return _run_rows_interpreted(job, rows, model)


def _run_rows_interpreted(
    job: _Job, rows: np.ndarray, model: Model
) -> tuple[np.ndarray, list[np.dtype]]:
    from .simulation import Simulation

    dtypes = [k.dtype for k in job.kinds]
    out = []
    for row in rows:
        sim = Simulation(
            with_parameters(model, dict(zip(job.names, row)), job.graph),
            graph=job.graph,
            backend="interpreted",
        )
        res = sim.run(steps=job.steps, dt=job.dt, initializer=job.initializer, record=job.record)
        cols = []
        for k, (r, kind) in enumerate(zip(job.record, job.kinds)):
            numbers, dtypes[k] = columns(res.traces[r], r, kind._replace(dtype=dtypes[k]))
            cols.append(numbers)
        rec = np.concatenate(cols, axis=1) if cols else np.zeros((job.steps, 0))
        out.append(rec[job.steps - job.keep :])
    return (np.stack(out) if out else np.zeros((0, job.keep, 0))), dtypes


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
    keep: str = "series",
    output: str | os.PathLike | None = None,
) -> Any:
    """Run ``model`` once per parameter set and return an ``xarray.Dataset``.

    ``params`` maps ``NODE.PARAM`` to a list of values or ``"START:STOP:N"``; ``record`` lists
    ``NODE.PORT`` (or ``NODE.PARAM``) values kept at every step. ``cluster=None`` runs here
    (all sets in one jitted call), ``"local"`` starts a Dask LocalCluster with ``workers``
    processes, any other string is a Dask scheduler address. ``progress(n)`` is called as
    chunks finish. ``duration=T`` (with ``dt``) runs the steps of the reference loop
    ``t=0; while t<=T: ...; t+=dt``, as ``Simulation.run(duration=T)`` does.

    ``keep="final"`` keeps only the last step (the Dataset's ``time`` has one entry, the last
    time). ``output`` (``.nc``, ``.npz``: the series; ``.csv``: final values) writes the
    result while the runs go, one chunk at a time, and returns the final values only.
    """
    from .extras import require

    xr = require("xarray")
    record = record if isinstance(record, str) else list(record)  # (an iterator is read once)
    check_sweep_arguments(params, steps, dt, initializer, record, chunk, workers)
    if duration is not None:
        from .simulation import steps_for_duration

        steps = steps_for_duration(duration, dt)
    steps = int(steps)
    m = load(model)
    g = m.get_graph(graph)
    if backend not in ("compiled", "interpreted"):
        raise MDFError(f"unknown backend '{backend}' (choose compiled or interpreted)")
    if keep not in KEEPS:
        raise MDFError(f"unknown keep '{keep}' (choose {' or '.join(KEEPS)})")
    d = make_design(params, design, samples, seed)
    for r in set(record) & set(d.names):
        raise MDFError(
            f"record '{r}': a swept parameter is a coordinate of the sweep, not a record"
        )
    point = with_parameters(m, dict(zip(d.names, d.values[0])), g.id)  # checks every name
    keys = [_split_key(r, "record", g) for r in record]
    kinds = record_kinds(point, g.id, keys, initializer, dt)
    shapes = [k.shape for k in kinds]
    final = keep == "final" or (output is not None and str(output).lower().endswith(".csv"))
    job = _Job(
        m.to_dict(),
        g.id,
        d.names,
        list(record),
        int(steps),
        dt,
        dict(initializer) if initializer else None,
        backend,
        1 if final else int(steps),
        kinds,
    )
    rows = d.values
    width = sum(int(np.prod(s)) if s else 1 for s in shapes)
    times = np.array([0.0 if dt is None else k * dt for k in range(steps)])
    attrs = _attrs(d, steps, dt, m, g.id)
    writer = None
    if output is not None:
        from .sweep_files import StreamWriter

        lay = _layout(d, record, shapes, times[-job.keep :], attrs)
        writer = StreamWriter(output, lay)
    if not (final or output is not None):
        from .limits import LIMITS, limit

        if len(rows) * steps * max(width, 1) > limit("sweep_values"):
            raise MDFError(
                f"keeping {width} values at {steps} steps of {len(rows)} parameter sets needs "
                f"{len(rows) * steps * width:.3g} numbers in memory; the limit is "
                f"{limit('sweep_values')} (set {LIMITS['sweep_values'][0]} to allow more, or "
                "use keep='final' or an output file)"
            )
    size = chunk or max(1, CHUNK_BYTES // (8 * job.keep * max(width, 1)))
    finals = np.zeros((len(rows), 1, width))
    series = None if (final or writer) else np.empty((len(rows), steps, width))
    dtypes = [k.dtype for k in kinds]
    try:
        if cluster is None:
            parts = ((s, _run_rows(job, rows[s : s + size])) for s in range(0, len(rows), size))
        else:
            parts = _run_on_dask(job, rows, cluster, workers, chunk)
        for start, (part, seen) in parts:
            dtypes = [np.result_type(a, b) for a, b in zip(dtypes, seen)]
            stop = start + len(part)
            finals[start:stop] = part[:, -1:]
            if series is not None:
                series[start:stop] = part
            if writer is not None:
                writer.write(start, part)
            if progress:
                progress(len(part))
            del part
        if writer is not None:
            writer.close(finals[:, 0, :])
            writer = None
    finally:
        if writer is not None:
            writer.abort()
    kept = finals if series is None else series
    kinds = [k._replace(dtype=t) for k, t in zip(kinds, dtypes)]
    return _dataset(xr, d, kept, record, kinds, times[-kept.shape[1] :], attrs)


def _run_on_dask(
    job: _Job,
    rows: np.ndarray,
    cluster: str,
    workers: int | None,
    chunk: int | None,
) -> Iterator[tuple[int, tuple[np.ndarray, list[np.dtype]]]]:
    """``(first row, records)`` of each chunk as the workers finish them (in any order)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise MDFError(
            "sweeps on a cluster need dask.distributed (pip install 'dask[distributed]')"
        ) from None
    local = None
    if cluster == "local":
        n = workers or max(1, (os.cpu_count() or 2))
        check_local_workers(n)
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
        for fut in as_completed(futures):
            yield futures[fut], fut.result()
            fut.release()
    finally:
        client.close()
        if local is not None:
            local.close()


def _attrs(d: Design, steps: int, dt: float | None, model: Model, graph: str) -> dict[str, Any]:
    return {
        "model": model.id,
        "graph": graph,
        "design": d.kind,
        "swept": ",".join(d.names),
        "steps": steps,
        "dt": "none" if dt is None else float(dt),
    }


def _coords(d: Design, times: np.ndarray) -> dict[str, tuple[list[str], np.ndarray]]:
    coords: dict[str, tuple[list[str], np.ndarray]] = {"time": (["time"], times)}
    if d.kind == "grid":
        for name, axis in zip(d.names, d.axes):
            coords[name] = ([name], axis)
    else:
        dim = d.dims[0]
        coords[dim] = ([dim], np.arange(d.values.shape[0]))
        for k, name in enumerate(d.names):
            coords[name] = ([dim], d.values[:, k])
    return coords


def _layout(
    d: Design,
    record: Sequence[str],
    shapes: list[tuple[int, ...]],
    times: np.ndarray,
    attrs: dict[str, Any],
) -> Any:
    """Where each recorded value sits in the record array, and the file's coordinates."""
    from .sweep_files import Layout

    variables = {}
    col = 0
    for r, shape in zip(record, shapes):
        size = int(np.prod(shape)) if shape else 1
        extra = [f"{r}_dim{k}" for k in range(len(shape))]
        full = (*d.shape, len(times), *shape)
        variables[r] = ([*d.dims, "time", *extra], full, col, size)
        col += size
    return Layout(
        _coords(d, times), variables, attrs, d.values.shape[0], len(times), d.values, d.names
    )


def _dataset(
    xr: Any,
    d: Design,
    rec: np.ndarray,
    record: Sequence[str],
    kinds: list[Kind],
    times: np.ndarray,
    attrs: dict[str, Any],
) -> Any:
    lay = _layout(d, record, [k.shape for k in kinds], times, attrs)
    data = {}
    for (r, (dims, full, col, size)), kind in zip(lay.variables.items(), kinds):
        data[r] = (dims, typed(rec[:, :, col : col + size].reshape(full), kind.dtype))
    coords = {k: (dims, v) for k, (dims, v) in lay.coords.items()}
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(attrs)
    return ds
