"""Results of a run: final outputs, recorded traces, and writing them (CSV, NPZ, JSON), always
atomically (a temporary file in the same folder, then a rename), so a saved file is never left
half written."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import MDFError


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def plain(value: Any) -> Any:
    """A value as JSON data."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


@dataclass
class Results:
    """What a run produced.

    ``outputs[node][port]`` is the final value of every output port; ``trace(node, port)`` the
    recorded series (one entry per step, after the step); ``times`` the model time after each
    step (0 after the first, initialising step). After a run, ``times`` and each trace are numpy
    arrays with one row per step; :meth:`to_dataframe` gives them as a pandas DataFrame.
    """

    graph: str
    steps: int
    outputs: dict[str, dict[str, Any]]
    times: list[float] | np.ndarray = field(default_factory=list)
    traces: dict[str, list[Any] | np.ndarray] = field(default_factory=dict)
    #: with ``run(record_fired=True)``: the ids of the nodes that ran in each step
    fired: list[list[str]] = field(default_factory=list)
    completed: bool = True
    note: str = ""
    #: For an interrupted run (Ctrl-C), the number of steps completed before the interrupt
    #: (traces hold exactly those steps; outputs are the values at the interrupt, which may
    #: include part of the interrupted step); None for a run that completed.
    interrupted_at_step: int | None = None

    def trace(self, node: str, port: str) -> np.ndarray:
        key = f"{node}.{port}"
        if key not in self.traces:
            raise MDFError(f"'{key}' was not recorded (recorded: "
                           f"{', '.join(self.traces) or 'nothing'}); pass record=['{key}']")
        return np.asarray(self.traces[key])

    def final(self, node: str, port: str) -> Any:
        return self.outputs[node][port]

    # -- views ----------------------------------------------------------------------------
    def finish(self) -> None:
        """Turn the recorded lists into arrays: ``times`` a float array and each trace an array
        with one row per step (a trace whose values change shape stays a list)."""
        self.times = np.asarray(self.times, dtype=float)
        for key, series in self.traces.items():
            if isinstance(series, list):
                try:
                    arr = np.asarray(series)
                except ValueError:  # ragged: values changed shape from step to step
                    continue
                if arr.dtype != object and len(series):
                    self.traces[key] = arr

    def __repr__(self) -> str:
        ports = [f"{n}.{p}" for n, ps in self.outputs.items() for p in ps]
        shown = ", ".join(ports[:4]) + (f", ... ({len(ports)} ports)" if len(ports) > 4 else "")
        traces = ", ".join(f"{k} {np.shape(v) if not isinstance(v, list) else (len(v),)}"
                           for k, v in list(self.traces.items())[:4])
        if len(self.traces) > 4:
            traces += f", ... ({len(self.traces)} traces)"
        state = "" if self.completed else f", {self.note}"
        times = ""
        if len(self.times):
            times = f", times {float(self.times[0]):.6g}..{float(self.times[-1]):.6g}"
        return (f"Results(graph={self.graph!r}, steps={self.steps}{state}, outputs: "
                f"{shown or 'none'}, traces: {traces or 'none'}{times})")

    def to_dataframe(self) -> Any:
        """A ``pandas.DataFrame``: with traces, one row per step (index ``step`` from 1, a
        ``time`` column, then a column per recorded value, ``NODE.PORT[i]`` per element of an
        array value); without, one row of the final output values."""
        from .extras import require

        pd = require("pandas")
        data: dict[str, Any] = {}
        if self.traces:
            n = max(len(v) for v in self.traces.values())
            data["time"] = np.asarray(self.times, dtype=float) if len(self.times) == n \
                else np.full(n, np.nan)
            for key, series in self.traces.items():
                try:
                    arr = np.asarray(series, dtype=float).reshape(len(series), -1)
                except ValueError:
                    raise MDFError(f"to_dataframe: the values of '{key}' are not numbers of one "
                                   "shape at every step") from None
                for j in range(arr.shape[1]):
                    data[key if arr.shape[1] == 1 else f"{key}[{j}]"] = arr[:, j]
            return pd.DataFrame(data, index=pd.RangeIndex(1, n + 1, name="step"))
        for node, ports in self.outputs.items():
            for port, v in ports.items():
                try:
                    a = np.ravel(np.asarray(v, dtype=float))
                except (TypeError, ValueError):
                    continue
                for j, x in enumerate(a):
                    data[f"{node}.{port}" if a.size == 1 else f"{node}.{port}[{j}]"] = [x]
        return pd.DataFrame(data, index=pd.RangeIndex(self.steps, self.steps + 1, name="step"))

    # -- writers --------------------------------------------------------------------------
    def to_json(self, path: str | os.PathLike | None = None) -> str:
        data = {"graph": self.graph, "steps": self.steps, "outputs": plain(self.outputs)}
        if self.traces:
            data["times"] = list(self.times)
            data["traces"] = {k: plain(v) for k, v in self.traces.items()}
        if not self.completed:
            data["note"] = self.note
            data["interrupted_at_step"] = self.interrupted_at_step
        text = json.dumps(data, indent=2)
        if path is not None:
            atomic_write_text(path, text)
        return text

    def to_npz(self, path: str | os.PathLike) -> None:
        import io

        arrays: dict[str, Any] = {"times": np.asarray(self.times, dtype=float)}
        for k, v in self.traces.items():
            arrays["trace:" + k] = np.asarray(v)
        for node, ports in self.outputs.items():
            for port, v in ports.items():
                try:
                    arrays[f"final:{node}.{port}"] = np.asarray(v)
                except (TypeError, ValueError):
                    continue
        if not self.completed:
            arrays["note"] = np.asarray(self.note)
            arrays["interrupted_at_step"] = np.asarray(
                -1 if self.interrupted_at_step is None else self.interrupted_at_step)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """One row per recorded step (time, then one column per recorded value element); without
        traces, one row of final values."""
        cols: list[tuple[str, list[Any]]] = []
        if self.traces:
            cols.append(("time", list(self.times)))
            for k, series in self.traces.items():
                arr = [np.ravel(np.asarray(v, dtype=float)) for v in series]
                width = max((a.size for a in arr), default=1)
                if width == 1:
                    cols.append((k, [a[0] if a.size else np.nan for a in arr]))
                else:
                    for j in range(width):
                        cols.append((f"{k}[{j}]", [a[j] if j < a.size else np.nan for a in arr]))
        else:
            for node, ports in self.outputs.items():
                for port, v in ports.items():
                    try:
                        a = np.ravel(np.asarray(v, dtype=float))
                    except (TypeError, ValueError):
                        continue
                    if a.size == 1:
                        cols.append((f"{node}.{port}", [a[0]]))
                    else:
                        cols.extend((f"{node}.{port}[{j}]", [a[j]]) for j in range(a.size))
        nrows = max((len(c) for _, c in cols), default=0)
        lines = [",".join(name for name, _ in cols)]
        for i in range(nrows):
            lines.append(",".join(repr(float(c[i])) if i < len(c) else "" for _, c in cols))
        if not self.completed:
            lines.append(f"# {self.note}")
        text = "\n".join(lines) + "\n"
        if path is not None:
            atomic_write_text(path, text)
        return text

    def save(self, path: str | os.PathLike) -> None:
        """Write by extension: .csv, .npz or .json."""
        p = os.fspath(path)
        if p.endswith(".csv"):
            self.to_csv(p)
        elif p.endswith(".npz"):
            self.to_npz(p)
        elif p.endswith(".json"):
            self.to_json(p)
        else:
            raise MDFError(f"cannot write results to '{p}': use .csv, .npz or .json")


def outputs_of(states: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {nid: dict(st.outputs) for nid, st in states.items()}
