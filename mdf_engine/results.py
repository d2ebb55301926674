"""Results of a run: final outputs, recorded traces, and writing them (CSV, NPZ, JSON), always
atomically (a temporary file in the same folder, then a rename), so a saved file is never left
half written."""

from __future__ import annotations

import json
import math
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
    if os.path.isdir(path):  # a rename onto it would fail naming the temporary file
        raise MDFError("is a directory, not a file", source=path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError as e:
        raise MDFError(
            f"cannot write the file ({e.strerror or type(e).__name__})", source=path
        ) from None
    try:
        # mkstemp makes the file 0600: give it the mode a plain open() would (the umask's)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):  # say which file, not the temporary one
            raise MDFError(
                f"cannot write the file ({e.strerror or type(e).__name__})", source=path
            ) from None
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


#: Most numbers a value may hold to be printed or written as JSON in full.
MAX_PLAIN_ELEMENTS = 10_000_000


def plain(value: Any) -> Any:
    """A value as JSON data (complex numbers as ``{"real": ..., "imag": ...}``, anything else
    JSON cannot hold as its text); MDFError for a value too large to write out."""
    _check_size(value)
    return _plain(value)


#: What a JSON file of the engine says where it wrote a non-finite number as a string.
NONFINITE_NOTE = (
    'NaN, Infinity and -Infinity are written as the strings "NaN", "Infinity" and "-Infinity" '
    "(strict JSON has no such numbers)"
)
_NONFINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def json_text(data: Any, indent: int | None = None, note: bool = True) -> str:
    """``data`` (JSON data, as :func:`plain` gives) as strict JSON, which every JSON reader
    takes: a NaN or infinity is the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``
    (Python's ``float()`` reads each back), and ``data``, a dict, then gets the key
    ``"nonfinite"`` saying so (``note=False``: not)."""
    try:
        return json.dumps(data, indent=indent, allow_nan=False)
    except ValueError:  # (a non-finite number somewhere: the walk below is the rare path)
        pass
    strict = _spell_nonfinite(data)
    if note and isinstance(strict, dict):
        strict["nonfinite"] = NONFINITE_NOTE
    return json.dumps(strict, indent=indent, allow_nan=False)


def _spell_nonfinite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else _NONFINITE[repr(value)]
    if isinstance(value, list):
        return [_spell_nonfinite(v) for v in value]
    if isinstance(value, dict):
        return {k: _spell_nonfinite(v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic, complex)) and np.iscomplexobj(value):
        return {"real": _plain(np.real(value)), "imag": _plain(np.imag(value))}
    if isinstance(value, np.ndarray):
        return value.tolist() if value.dtype.kind in "biufUS" else [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _check_size(value: Any) -> None:
    """Refuse a value of more than MAX_PLAIN_ELEMENTS numbers, counting without building it
    (a list may repeat one huge list many times)."""
    budget = [MAX_PLAIN_ELEMENTS]

    def walk(v: Any) -> None:
        if isinstance(v, np.ndarray):
            budget[0] -= v.size
        elif isinstance(v, (list, tuple, dict)):
            budget[0] -= 1
            for x in v.values() if isinstance(v, dict) else v:
                if budget[0] < 0:
                    return
                walk(x)
        else:
            budget[0] -= 1

    walk(value)
    if budget[0] < 0:
        raise MDFError(
            f"a value of more than {MAX_PLAIN_ELEMENTS} numbers is too large to "
            "print or write as JSON; save it with -o FILE.npz"
        )


def summary(value: Any, depth: int = 0) -> str:
    """A short text of ``value`` for a terminal: arrays and long lists shortened with
    ``...`` (never walking a whole huge value)."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=20, edgeitems=3, max_line_width=100)
    if isinstance(value, (list, tuple)):
        if depth > 3:
            return "[...]"
        items = list(value[:3]) if len(value) > 6 else list(value)
        text = ", ".join(summary(v, depth + 1) for v in items)
        if len(value) > 6:
            text += f", ... ({len(value)} items), " + ", ".join(
                summary(v, depth + 1) for v in value[-3:]
            )
        return f"[{text}]"
    if isinstance(value, dict):
        keys = list(value)[:6]
        more = ", ..." if len(value) > 6 else ""
        return "{" + ", ".join(f"{k!r}: {summary(value[k], depth + 1)}" for k in keys) + more + "}"
    if isinstance(value, np.generic):
        return repr(value.item())
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _numbers(v: Any) -> int:
    """How many numbers a recorded value holds, at least one (an ACT-R chunk or list counts
    its items)."""
    if isinstance(v, np.ndarray):
        return max(1, v.size)
    if isinstance(v, (list, tuple, dict)):
        return max(1, len(v))
    return 1


def csv_cell(text: str) -> str:
    """A CSV field that a spreadsheet shows as text: a leading ``= + - @`` or tab/CR gets a
    ``'`` (no formula runs), and a field holding a comma, quote or line break is quoted."""
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        text = "'" + text
    if any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text


def _real(key: str, v: Any) -> np.ndarray:
    """``v`` as a flat float array for CSV; MDFError for values that are not real numbers."""
    try:
        a = np.asarray(v) if not isinstance(v, np.ndarray) else v
    except ValueError:  # a ragged nesting of lists
        a = np.asarray([v], dtype=object)
    if a.dtype.kind not in "biuf":
        what = "complex numbers" if a.dtype.kind == "c" else f"{type(v).__name__} values"
        raise MDFError(f"'{key}' holds {what}; CSV holds real numbers (save as .npz or .json)")
    return np.ravel(a.astype(float))


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
    #: numbers kept by :meth:`record` so far (held to the ``record_values`` limit)
    recorded: int = field(default=0, repr=False, compare=False)

    def record(self, values: Mapping[str, Any], planned: int) -> None:
        """Append one step's recorded ``values`` (by ``NODE.PORT``) to the traces, counting
        the numbers kept: a value counts its elements (at least one), the step's time and the
        ids in ``fired`` one each. Beyond the ``record_values`` limit (``limits.py``) this is
        an MDFError; after the first step, so is a run of ``planned`` steps that would pass it
        at this rate, before it runs on for hours to get there."""
        from .limits import LIMITS, limit

        step = 1 + (len(self.fired[-1]) if self.fired else 0)
        for key, v in values.items():
            step += _numbers(v)
            self.traces[key].append(v)
        self.recorded += step
        most = limit("record_values")
        done = len(self.times)
        ahead = self.recorded if done != 1 else max(self.recorded, step * planned)
        if ahead > most:
            keys = ", ".join(values)
            what = (
                f"{self.recorded:.3g} numbers after {done} steps"
                if done != 1
                else f"{step} numbers a step, {ahead:.3g} for {planned} steps"
            )
            raise MDFError(
                f"recording {keys[:200]} keeps {what}; the limit is {most:.3g} "
                f"(record fewer ports or steps, or set {LIMITS['record_values'][0]})"
            )

    def trace(self, node: str, port: str) -> np.ndarray:
        key = f"{node}.{port}"
        if key not in self.traces:
            raise MDFError(
                f"'{key}' was not recorded (recorded: "
                f"{', '.join(self.traces) or 'nothing'}); pass record=['{key}']"
            )
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
        traces = ", ".join(
            f"{k} {np.shape(v) if not isinstance(v, list) else (len(v),)}"
            for k, v in list(self.traces.items())[:4]
        )
        if len(self.traces) > 4:
            traces += f", ... ({len(self.traces)} traces)"
        state = "" if self.completed else f", {self.note}"
        times = ""
        if len(self.times):
            times = f", times {float(self.times[0]):.6g}..{float(self.times[-1]):.6g}"
        return (
            f"Results(graph={self.graph!r}, steps={self.steps}{state}, outputs: "
            f"{shown or 'none'}, traces: {traces or 'none'}{times})"
        )

    def to_dataframe(self) -> Any:
        """A ``pandas.DataFrame``: with traces, one row per step (index ``step`` from 1, a
        ``time`` column, then a column per recorded value, ``NODE.PORT[i]`` per element of an
        array value); without, one row of the final output values."""
        from .extras import require

        pd = require("pandas")
        data: dict[str, Any] = {}
        if self.traces:
            n = max(len(v) for v in self.traces.values())
            data["time"] = (
                np.asarray(self.times, dtype=float) if len(self.times) == n else np.full(n, np.nan)
            )
            for key, series in self.traces.items():
                try:
                    arr = np.asarray(series, dtype=float).reshape(len(series), -1)
                except ValueError:
                    raise MDFError(
                        f"to_dataframe: the values of '{key}' are not numbers of one "
                        "shape at every step"
                    ) from None
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
        """The results as strict JSON text (written to ``path`` when given): ``graph``,
        ``steps``, ``outputs``, and with traces ``times`` and ``traces``. A NaN or infinity is
        the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` and the document has a
        ``"nonfinite"`` key saying so (:func:`json_text`)."""
        data = {"graph": self.graph, "steps": self.steps, "outputs": plain(self.outputs)}
        if self.traces:
            data["times"] = list(self.times)
            data["traces"] = {k: plain(v) for k, v in self.traces.items()}
        if not self.completed:
            data["note"] = self.note
            data["interrupted_at_step"] = self.interrupted_at_step
        text = json_text(data, indent=2)
        if path is not None:
            atomic_write_text(path, text)
        return text

    def to_npz(self, path: str | os.PathLike) -> None:
        import io

        arrays: dict[str, Any] = {"times": np.asarray(self.times, dtype=float)}
        for k, v in self.traces.items():
            arrays["trace:" + k] = _npz_value(v)
        for name, v in _flat_outputs(self.outputs):
            arrays[f"final:{name}"] = _npz_value(v)
        if not self.completed:
            arrays["note"] = np.asarray(self.note)
            arrays["interrupted_at_step"] = np.asarray(
                -1 if self.interrupted_at_step is None else self.interrupted_at_step
            )
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
                arr = [_real(k, v) for v in series]
                width = max((a.size for a in arr), default=1)
                if width == 1:
                    cols.append((k, [a[0] if a.size else np.nan for a in arr]))
                else:
                    for j in range(width):
                        cols.append((f"{k}[{j}]", [a[j] if j < a.size else np.nan for a in arr]))
        else:
            for name, v in _flat_outputs(self.outputs):
                a = _real(name, v)
                if a.size == 1:
                    cols.append((name, [a[0]]))
                else:
                    cols.extend((f"{name}[{j}]", [a[j]]) for j in range(a.size))
        nrows = max((len(c) for _, c in cols), default=0)
        lines = [",".join(csv_cell(name) for name, _ in cols)]
        for i in range(nrows):
            lines.append(",".join(repr(float(c[i])) if i < len(c) else "" for _, c in cols))
        if not self.completed:
            lines.append(csv_cell(f"# {self.note}"))
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


def _flat_outputs(outputs: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``("NODE.PORT", value)`` of every output; ids may hold dots, and two outputs that would
    share a name (node ``A``'s ``B.o`` and node ``A.B``'s ``o``) are refused rather than one
    silently overwriting the other."""
    out, seen = [], {}
    for node, ports in outputs.items():
        for port, v in ports.items():
            name = f"{node}.{port}"
            if name in seen:
                raise MDFError(
                    f"the outputs '{seen[name][1]}' of node '{seen[name][0]}' and '{port}' of "
                    f"node '{node}' would both be named '{name}'; save as .json, which keeps "
                    "them apart"
                )
            seen[name] = (node, port)
            out.append((name, v))
    return out


def _npz_value(v: Any) -> np.ndarray:
    """``v`` as an array an ``.npz`` holds without pickling (readable with
    ``allow_pickle=False``): numbers as they are, anything else as its JSON text."""
    try:
        a = np.asarray(v)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype.kind not in "biufcUS":
        return np.asarray(json_text(plain(v), note=False))
    return a


def outputs_of(states: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {nid: dict(st.outputs) for nid, st in states.items()}
