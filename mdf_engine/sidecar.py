"""Large array values kept beside a model file, in a sidecar ``.npz`` that the model names.

An MDF file written as JSON or YAML spells every number out: SqueezeNet's 1.2 million weights
become a 245 MB JSON file that is slow to write, slow to parse and larger than the loader's file
limit. :func:`offload_arrays` and :func:`write_sidecar` put arrays of at least ``min_elements``
elements into ``<stem>.weights.npz`` next to the model file instead (dtype and shape exact; used
by ``mdf import``), and the model file refers to them:

* the model's ``metadata`` holds ``{"weights_file": "<stem>.weights.npz"}``, a file name
  relative to the model file's directory;
* an element whose value lives there has, instead of that field, ``metadata: {"sidecar":
  {"<field>": "<key>"}}`` -- ``value`` of a parameter, ``default_value`` of an input port --
  where the key is an engine-made name (``a0``, ``a1``, ...).

:func:`resolve_sidecar` (called by :func:`mdf_engine.loader.load` for files) puts the arrays
back. A model file is data from anywhere, so the sidecar is read defensively:

* the name must be a plain relative ``.npz`` path inside the model file's directory (no
  absolute path, no ``..``, no symlink leading out); anything else is an MDFError;
* ``np.load(allow_pickle=False)``: no object arrays, no code;
* limits on structure, checked from the zip directory and each array's header before any data
  is read: at most :data:`MAX_ARRAYS` arrays, numeric dtypes only, each array's declared size
  equal to its header's shape, and at most :data:`MAX_TOTAL_BYTES` bytes over the arrays the
  model refers to; a key the model names but the file lacks is an MDFError naming the field.
"""

from __future__ import annotations

import dataclasses
import io
import os
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from .errors import MDFError
from .model import Graph, Model, Node
from .results import atomic_write_bytes

__all__ = [
    "write_sidecar",
    "resolve_sidecar",
    "offload_arrays",
    "sidecar_name",
    "MIN_ELEMENTS",
    "MAX_ARRAYS",
    "MAX_TOTAL_BYTES",
]

#: Arrays with at least this many elements go to the sidecar; smaller ones stay inline.
MIN_ELEMENTS = 256
#: Most arrays a sidecar may hold.
MAX_ARRAYS = 100_000
#: Most bytes, over the arrays a model refers to, that a sidecar may make the loader allocate.
MAX_TOTAL_BYTES = 2 * 1024**3
#: Model metadata key naming the sidecar; element metadata key holding field -> array key.
WEIGHTS_FILE = "weights_file"
SIDECAR = "sidecar"
#: Element fields that may live in the sidecar.
FIELDS = ("value", "default_value")
_KINDS = "biuf"  # bool, signed and unsigned integers, floats


def sidecar_name(model_path: str | os.PathLike) -> str:
    """The sidecar's file name for a model file: ``net.json`` -> ``net.weights.npz``."""
    return Path(model_path).stem + ".weights.npz"


def _big(v: Any, min_elements: int) -> bool:
    return (
        isinstance(v, np.ndarray)
        and v.dtype.kind in _KINDS
        and v.size >= min_elements
        and v.dtype.itemsize <= 8
    )


def offload_arrays(
    model: Model, min_elements: int = MIN_ELEMENTS
) -> tuple[Model, dict[str, np.ndarray]]:
    """A copy of ``model`` whose large array values (parameter values, input port default
    values) are replaced by sidecar references, and the arrays by key. ``model`` is unchanged
    (the copy shares everything it does not replace)."""
    arrays: dict[str, np.ndarray] = {}

    def ref(el: Any, field: str) -> Any:
        v = getattr(el, field)
        if not _big(v, min_elements):
            return el
        key = f"a{len(arrays)}"
        arrays[key] = v
        meta = dict(el.metadata or {})
        meta[SIDECAR] = {**meta.get(SIDECAR, {}), field: key}
        return dataclasses.replace(el, **{field: None, "metadata": meta})

    def node(n: Node) -> Node:
        params = [ref(p, "value") for p in n.parameters]
        ports = [ref(p, "default_value") for p in n.input_ports]
        return dataclasses.replace(n, parameters=params, input_ports=ports)

    def graph(g: Graph) -> Graph:
        return dataclasses.replace(g, nodes=[node(n) for n in g.nodes])

    out = dataclasses.replace(model, graphs=[graph(g) for g in model.graphs])
    return out, arrays


def write_sidecar(model: Model, path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> Model:
    """Write ``arrays`` (from :func:`offload_arrays`) to the sidecar of the model file
    ``path`` and return ``model`` naming it in its metadata (nothing is written, and ``model``
    is returned as is, when there are no arrays). The model file itself is the caller's to
    write (e.g. :func:`mdf_engine.onnx_io.importer.save_imported`)."""
    if not arrays:
        return model
    name = sidecar_name(path)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(Path(path).resolve().parent / name, buf.getvalue())
    return dataclasses.replace(model, metadata={**(model.metadata or {}), WEIGHTS_FILE: name})


# ------------------------------------------------------------------------------ reading


def _sidecar_path(name: Any, model_path: str) -> Path:
    """The sidecar file named by a model file, confined to the model file's directory."""
    where = f"metadata.{WEIGHTS_FILE}"
    if not isinstance(name, str) or not name:
        raise MDFError(f"expected a file name, got {name!r:.60}", where, model_path)
    pure = PurePosixPath(name)
    if (
        "\\" in name
        or "\x00" in name
        or pure.is_absolute()
        or ".." in pure.parts
        or Path(name).is_absolute()
        or Path(name).drive
    ):
        raise MDFError(
            f"the weights file must be a relative path inside the model's "
            f"directory, got {name!r:.80}",
            where,
            model_path,
        )
    if pure.suffix != ".npz":
        raise MDFError(f"the weights file must be a .npz file, got {name!r:.80}", where, model_path)
    folder = Path(model_path).resolve().parent
    target = (folder / pure).resolve()
    if not target.is_relative_to(folder):
        raise MDFError(
            f"the weights file {name!r:.80} leads outside the model's directory", where, model_path
        )
    if not target.is_file():
        raise MDFError(f"no weights file {name!r:.80} beside the model", where, model_path)
    return target


def _collect(data: Any, path: str, out: list[tuple[dict, str, str, str]]) -> None:
    """Every (element dict, field, key, field path) that refers to the sidecar."""
    stack = [(data, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        if not isinstance(item, dict):
            continue
        meta = item.get("metadata")
        if isinstance(meta, dict) and SIDECAR in meta:
            refs = meta[SIDECAR]
            if not isinstance(refs, dict):
                raise MDFError(
                    "expected a mapping of field names to array keys", f"{where}.metadata.{SIDECAR}"
                )
            for field, key in refs.items():
                fpath = f"{where}.{field}"
                if field not in FIELDS:
                    raise MDFError(
                        f"only {' and '.join(FIELDS)} may live in the weights file, "
                        f"not {field!r:.40}",
                        f"{where}.metadata.{SIDECAR}",
                    )
                if not isinstance(key, str):
                    raise MDFError(
                        f"expected an array key, got {key!r:.40}",
                        f"{where}.metadata.{SIDECAR}.{field}",
                    )
                if item.get(field) is not None:
                    raise MDFError("the field is given both here and in the weights file", fpath)
                out.append((item, field, key, fpath))
        for k, v in item.items():
            if isinstance(v, (dict, list)) and k != "metadata":
                stack.append((v, f"{where}.{k}" if where else str(k)))


def _check_members(z: zipfile.ZipFile, keys: set[str], source: str) -> None:
    """Structure checks of the npz's zip directory and the array headers of ``keys``."""
    infos = z.infolist()
    if len(infos) > MAX_ARRAYS:
        raise MDFError(
            f"the weights file holds {len(infos)} arrays; the limit is {MAX_ARRAYS}", source=source
        )
    by_name = {i.filename: i for i in infos}
    total = 0
    for key in sorted(keys):
        info = by_name.get(key + ".npy")
        if info is None:
            continue  # reported with the field that names it
        with z.open(info) as f:
            try:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                else:
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
                header = f.tell()
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
                raise MDFError(
                    f"array {key!r}: not a readable .npy header ({e})", source=source
                ) from None
        if dtype.kind not in _KINDS or dtype.fields is not None or dtype.itemsize > 8:
            raise MDFError(
                f"array {key!r} has dtype {dtype}; expected bool, integer or float", source=source
            )
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if info.file_size != header + nbytes:
            raise MDFError(
                f"array {key!r}: its header declares {nbytes} bytes of data, the "
                f"file holds {info.file_size - header}",
                source=source,
            )
        total += nbytes
        if total > MAX_TOTAL_BYTES:
            raise MDFError(
                f"the arrays the model uses exceed {MAX_TOTAL_BYTES} bytes", source=source
            )


def resolve_sidecar(data: Any, model_path: str) -> Any:
    """``data`` (a model file's parsed content) with every sidecar reference replaced by its
    array, read from the weights file the model names. Data without references is returned
    as is; references without a ``weights_file`` are an MDFError."""
    refs: list[tuple[dict, str, str, str]] = []
    _collect(data, "", refs)
    body = data
    if isinstance(data, dict) and "graphs" not in data and len(data) == 1:
        body = next(iter(data.values()))
    meta = body.get("metadata") if isinstance(body, dict) else None
    name = meta.get(WEIGHTS_FILE) if isinstance(meta, dict) else None
    if not refs:
        return data
    if name is None:
        raise MDFError(
            f"values refer to a weights file but the model's metadata names none "
            f"('{WEIGHTS_FILE}')",
            refs[0][3],
            model_path,
        )
    target = _sidecar_path(name, model_path)
    src = str(target)
    keys = {key for _, _, key, _ in refs}
    try:
        with zipfile.ZipFile(target) as z:
            _check_members(z, keys, src)
        with np.load(target, allow_pickle=False) as npz:
            have = set(npz.files)
            arrays = {}
            for item, field, key, fpath in refs:
                if key not in have:
                    raise MDFError(f"the weights file has no array {key!r:.40}", fpath, model_path)
                if key not in arrays:
                    arrays[key] = npz[key]
                item[field] = arrays[key]
    except MDFError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise MDFError(
            f"not a readable .npz weights file: {type(e).__name__}: {e}", source=src
        ) from None
    for item, _, _, _ in refs:
        item["metadata"] = {k: v for k, v in item["metadata"].items() if k != SIDECAR} or None
    return data
