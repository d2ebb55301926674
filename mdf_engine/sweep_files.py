"""Sweep result files written while the sweep runs, chunk of parameter sets by chunk.

A sweep that saves to a file does not hold its series in memory: each chunk of runs is written
as it finishes, so the memory a sweep needs is one chunk plus the final values, whatever the
number of runs times steps. The formats are those of :func:`mdf_engine.sweep.save_dataset`
(which writes a Dataset already in memory) and read back with
:func:`mdf_engine.sweep.open_dataset`:

* ``.nc``: NetCDF-3 with 64-bit offsets (CDF-2, what xarray writes without netCDF4), every
  variable at a fixed place, so a chunk is written at its offset;
* ``.npz``: each recorded series goes to a temporary file of raw numbers next to the target,
  then into the archive (stored, as ``np.savez``) when the sweep ends;
* ``.csv``: one row per parameter set, the swept values then each recorded value at the last
  step (a final-values file: the sweep keeps no series for it).

Every file is written under a temporary name in the target's folder and renamed when
complete; a failed sweep leaves no partial file.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from .errors import MDFError
from .results import csv_cell, json_text

#: File extensions a sweep streams to.
STREAM_EXTENSIONS = (".nc", ".npz", ".csv")


@dataclass
class Layout:
    """What a sweep file holds: coordinates ``name -> (dims, values)``, recorded variables
    ``name -> (dims, shape, first column, width)`` of the per-run record array (one row per
    parameter set in design order, ``(steps, columns)`` per row), and attributes."""

    coords: dict[str, tuple[list[str], np.ndarray]]
    variables: dict[str, tuple[list[str], tuple[int, ...], int, int]]
    attrs: dict[str, Any]
    rows: int
    steps: int
    swept_values: np.ndarray
    swept_names: list[str]


class StreamWriter:
    """Writes a sweep file chunk by chunk: ``write(start_row, block)`` with ``block`` of shape
    ``(rows, steps, columns)``, then ``close()`` (or ``abort()`` on failure)."""

    def __init__(self, path: str | os.PathLike, layout: Layout) -> None:
        self.path = os.fspath(path)
        self.ext = os.path.splitext(self.path)[1].lower()
        if self.ext not in STREAM_EXTENSIONS:
            raise MDFError(f"'{self.path}': sweep results are written as .nc, .csv or .npz")
        self.layout = layout
        folder = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(folder, exist_ok=True)
            fd, self.tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        except OSError as e:
            raise MDFError(f"'{self.path}': cannot write the file ({e.strerror})") from None
        self.fh: BinaryIO = os.fdopen(fd, "w+b")
        self.parts: dict[str, tuple[BinaryIO, str]] = {}
        if self.ext == ".nc":
            self.offsets = _write_netcdf_header(self.fh, layout)
        elif self.ext == ".csv":
            self.fh.write((",".join(map(csv_cell, _csv_header(layout))) + "\n").encode())
        else:  # one temporary file per variable: a process may open too many (EMFILE)
            try:
                for name in layout.variables:
                    pfd, ptmp = tempfile.mkstemp(prefix=".tmp-part-", dir=folder)
                    self.parts[name] = (os.fdopen(pfd, "w+b"), ptmp)
            except OSError as e:
                self.abort()
                raise MDFError(f"'{self.path}': cannot write the file ({e.strerror})") from None

    def write(self, start: int, block: np.ndarray) -> None:
        """The records of parameter sets ``start .. start + len(block) - 1``."""
        lay = self.layout
        if self.ext == ".csv":  # (written from the final values by close())
            return
        for name, (_dims, _shape, col, width) in lay.variables.items():
            part = np.ascontiguousarray(block[:, :, col : col + width])
            if self.ext == ".nc":
                per_row = lay.steps * width * 8
                self.fh.seek(self.offsets[name] + start * per_row)
                self.fh.write(part.astype(">f8").tobytes())
            else:
                fh, _ = self.parts[name]
                fh.seek(start * lay.steps * width * 8)
                fh.write(part.astype("<f8").tobytes())

    def close(self, finals: np.ndarray) -> None:
        """Finish the file and move it into place; ``finals`` holds the last step's record of
        every parameter set, shape ``(rows, columns)`` (a CSV file is written from it)."""
        try:
            if self.ext == ".npz":
                self._write_npz()
            elif self.ext == ".csv":
                self._write_csv(finals)
            self.fh.flush()
            os.fchmod(self.fh.fileno(), 0o666 & ~_umask())
            self.fh.close()
            os.replace(self.tmp, self.path)
        except OSError as e:
            self.abort()
            raise MDFError(f"'{self.path}': cannot write the file ({e.strerror})") from None
        finally:
            self._drop_parts()

    def abort(self) -> None:
        """Remove the temporary files."""
        self.fh.close()
        self._drop_parts()
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)

    def _drop_parts(self) -> None:
        for fh, tmp in self.parts.values():
            fh.close()
            if os.path.exists(tmp):
                os.unlink(tmp)
        self.parts = {}

    def _write_csv(self, finals: np.ndarray) -> None:
        lay = self.layout
        for start in range(0, lay.rows, 10_000):
            lines = []
            for k in range(start, min(lay.rows, start + 10_000)):
                vals = [*lay.swept_values[k], *_csv_columns(lay, finals[k])]
                lines.append(",".join(repr(float(x)) for x in vals))
            self.fh.write(("\n".join(lines) + "\n").encode())

    def _write_npz(self) -> None:
        lay = self.layout
        with zipfile.ZipFile(self.fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, (dims, values) in lay.coords.items():
                _npz_member(zf, f"coord:{name}", np.asarray(values))
                _npz_member(zf, f"dims:coord:{name}", np.array(dims, dtype=str))
            for name, (dims, shape, _col, _width) in lay.variables.items():
                fh, _ = self.parts[name]
                header = {"descr": "<f8", "fortran_order": False, "shape": shape}
                with zf.open(f"var:{name}.npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array_header_2_0(out, header)
                    fh.seek(0)
                    while chunk := fh.read(1 << 22):
                        out.write(chunk)
                _npz_member(zf, f"dims:var:{name}", np.array(dims, dtype=str))
            _npz_member(zf, "attrs", np.array(json_text(lay.attrs)))


def _npz_member(zf: zipfile.ZipFile, key: str, arr: np.ndarray) -> None:
    with zf.open(f"{key}.npy", "w", force_zip64=True) as out:
        np.lib.format.write_array(out, arr, allow_pickle=False)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _csv_header(lay: Layout) -> list[str]:
    header = list(lay.swept_names)
    for name, (dims, _shape, _col, width) in lay.variables.items():
        if width == 1 and dims[-1] == "time":  # a number: its own column
            header.append(name)
        else:
            header += [f"{name}[{i}]" for i in range(width)]
    return header


def _csv_columns(lay: Layout, last: np.ndarray) -> list[float]:
    out: list[float] = []
    for _dims, _shape, col, width in lay.variables.values():
        out += list(last[col : col + width])
    return out


# -- NetCDF-3 (64-bit offset format) ------------------------------------------------------------

_NC_DIMENSION, _NC_VARIABLE, _NC_ATTRIBUTE = 0x0A, 0x0B, 0x0C
_NC_CHAR, _NC_INT, _NC_DOUBLE = 2, 4, 6


def _pad(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def _nc_name(name: str) -> bytes:
    raw = name.encode("utf-8")
    return struct.pack(">i", len(raw)) + _pad(raw)


def _nc_attr(name: str, value: Any) -> bytes:
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _nc_name(name) + struct.pack(">ii", _NC_CHAR, len(raw)) + _pad(raw)
    if isinstance(value, (bool, int, np.integer)) and -(2**31) <= int(value) < 2**31:
        return _nc_name(name) + struct.pack(">iii", _NC_INT, 1, int(value))
    return _nc_name(name) + struct.pack(">iid", _NC_DOUBLE, 1, float(value))


def _nc_attrs(attrs: dict[str, Any]) -> bytes:
    if not attrs:
        return b"\0" * 8
    return struct.pack(">ii", _NC_ATTRIBUTE, len(attrs)) + b"".join(
        _nc_attr(k, v) for k, v in attrs.items()
    )


def _nc_type(values: np.ndarray) -> tuple[int, str]:
    if values.dtype.kind in "iub":
        if values.size and (values.min() < -(2**31) or values.max() >= 2**31):
            raise MDFError("a sweep coordinate does not fit a NetCDF-3 integer")
        return _NC_INT, ">i4"
    return _NC_DOUBLE, ">f8"


def _write_netcdf_header(fh: BinaryIO, lay: Layout) -> dict[str, int]:
    """Write the header and the coordinates; return the byte offset of each recorded
    variable's data (written later, chunk by chunk)."""
    sizes: dict[str, int] = {}
    for dims, values in lay.coords.values():
        for d, n in zip(dims, np.shape(values)):
            sizes.setdefault(d, int(n))
    for dims, shape, _col, _width in lay.variables.values():
        for d, n in zip(dims, shape):
            sizes.setdefault(d, int(n))
    dim_ids = {d: k for k, d in enumerate(sizes)}
    dim_part = struct.pack(">ii", _NC_DIMENSION, len(sizes)) + b"".join(
        _nc_name(d) + struct.pack(">i", n) for d, n in sizes.items()
    )
    # coordinates that are not a dimension of their own ride along as ``coordinates``
    aux = [n for n, (dims, _v) in lay.coords.items() if dims != [n]]
    entries: list[tuple[str, list[str], dict[str, Any], int, int]] = []
    for name, (dims, values) in lay.coords.items():
        typ, _ = _nc_type(np.asarray(values))
        size = int(np.size(values)) * (4 if typ == _NC_INT else 8)
        attrs = {} if typ == _NC_INT else {"_FillValue": float("nan")}
        entries.append((name, dims, attrs, typ, size))
    for name, (dims, shape, _col, _width) in lay.variables.items():
        attrs = {"coordinates": " ".join(aux)} if aux else {}
        attrs["_FillValue"] = float("nan")
        entries.append((name, dims, attrs, _NC_DOUBLE, int(np.prod(shape)) * 8))

    def var_list(begins: Sequence[int]) -> bytes:
        out = struct.pack(">ii", _NC_VARIABLE, len(entries))
        for (name, dims, attrs, typ, size), begin in zip(entries, begins):
            vsize = min(size + (-size % 4), 2**32 - 1)
            out += _nc_name(name) + struct.pack(">i", len(dims))
            out += b"".join(struct.pack(">i", dim_ids[d]) for d in dims)
            out += _nc_attrs(attrs) + struct.pack(">iIq", typ, vsize, begin)
        return out

    head = b"CDF\x02" + struct.pack(">i", 0) + dim_part + _nc_attrs(lay.attrs)
    start = len(head) + len(var_list([0] * len(entries)))
    begins, at = [], start
    for e in entries:
        begins.append(at)
        at += e[4] + (-e[4] % 4)
    fh.write(head + var_list(begins))
    for (name, *_), begin in zip(entries, begins):
        if name in lay.coords:
            values = np.asarray(lay.coords[name][1])
            fh.seek(begin)
            fh.write(values.astype(_nc_type(values)[1]).tobytes())
    fh.seek(at)
    fh.truncate(at)
    return {name: b for (name, *_), b in zip(entries, begins) if name in lay.variables}


# -- files of a Dataset in memory --------------------------------------------------------------------------------------


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
        atomic_write_bytes(path, _as_bytes_names(_as_floats(ds), "utf-8", "latin-1").to_netcdf())
    elif ext == ".csv":
        header, table = final_table(ds)
        buf = io.StringIO()
        buf.write(",".join(map(csv_cell, header)) + "\n")
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
        arrays["attrs"] = np.array(json_text({k: v for k, v in ds.attrs.items()}))
        np.savez(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())
    else:
        raise MDFError(f"'{path}': sweep results are written as .nc, .csv or .npz")


def _as_floats(ds: Any) -> Any:
    """``ds`` with integer and boolean variables as float64, as a streamed ``.nc`` holds them
    (NetCDF-3 has no int64 and no bool); an integer float64 does not hold is refused."""
    out = ds.copy()
    for k, v in ds.data_vars.items():
        if v.dtype.kind in "biu":
            if v.size and np.abs(v.values.astype(np.int64)).max() > 2**53:
                raise MDFError(
                    f"'{k}' holds integers beyond 2**53, which a .nc file (float64) cannot "
                    "hold exactly; save it as .npz"
                )
            out[k] = v.astype(np.float64)
    return out


def _as_bytes_names(ds: Any, encoding: str, decoding: str) -> Any:
    """``ds`` with every name (variables, coordinates, dimensions) and text attribute
    re-spelled from ``encoding`` to ``decoding``. NetCDF names are UTF-8, but scipy's NetCDF-3
    code (xarray's writer and reader without netCDF4) spells them in Latin-1: an id such as
    ``é∂漢`` could not be written (UnicodeEncodeError) and came back as mojibake. Writing
    passes UTF-8 bytes through it as Latin-1 text, reading undoes that (a name whose bytes are
    no UTF-8 stays as read)."""

    def spell(text: Any) -> Any:
        if not isinstance(text, str) or text.isascii():
            return text
        try:
            return text.encode(encoding).decode(decoding)
        except UnicodeError:
            return text

    names = {n: spell(n) for n in [*ds.variables, *ds.dims] if spell(n) != n}
    out = ds.rename(names) if names else ds.copy()
    out.attrs = {spell(k): spell(v) for k, v in ds.attrs.items()}
    for name in out.variables:
        out[name].attrs = {spell(k): spell(v) for k, v in out[name].attrs.items()}
    return out


def open_dataset(path: str | os.PathLike) -> Any:
    """Read a sweep written by :func:`save_dataset` as ``.nc`` or ``.npz``."""
    from .extras import require

    xr = require("xarray")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise MDFError("no such file" if not os.path.exists(path) else "not a file", source=path)
    if path.endswith(".nc"):
        with xr.open_dataset(path) as ds:
            return _as_bytes_names(ds.load(), "latin-1", "utf-8")
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
