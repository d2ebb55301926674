"""The on-disk record of a compiled graph, so that a new process starts without compiling.

A first compiled run of a graph warms up on the interpreted backend (to learn the kind and
shape of every value), writes the model's code, and jits it; Numba caches the machine code.
This module keeps what a later process needs to skip all of that: which generated module
holds the code, where each value lives in the compiled state, and the state of a graph that
has not run yet. Records are keyed by the graph's content (its MDF fields and the function
version each call binds to), the initializer's keys and kinds, the run options that change
the code, and the source of the engine itself; a record whose kernels' sources changed since
it was written is not used.

Records are JSON plus an ``.npz`` of arrays (loaded with ``allow_pickle=False``), written
atomically; a damaged or foreign record is ignored, never trusted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...model import element_to_dict
from ...plan import GraphPlan

FORMAT = 3  # 2: generated modules read their constants from a table; 3: slot keys by role
_MODULE_NAME = re.compile(r"mdf_model_[0-9a-f]{24}\.py")


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


#: The ``mdf_engine`` package folder (this module is ``mdf_engine/backends/compiled/cache.py``).
_PACKAGE = Path(__file__).parents[2]


def engine_sources() -> list[Path]:
    """Every Python source file of the package, recursively, in a fixed order."""
    return sorted(_PACKAGE.rglob("*.py"))


@functools.lru_cache(maxsize=1)
def _engine_digest() -> str:
    """A hash of every source file of the package, sub-packages included: a record written
    by another version of the engine is not used. Read once per process (a sweep compiles one
    graph per chunk)."""
    root = _PACKAGE
    h = hashlib.sha256()
    for f in engine_sources():
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def engine_digest() -> str:
    """The hash of the engine's sources (:func:`_engine_digest`), for names that must change
    with the engine (a generated module whose machine code Numba caches next to it)."""
    return _engine_digest()


def graph_key(plan: GraphPlan, options: dict[str, Any]) -> str:
    """The key of a compiled graph: its content, the bound function versions and ``options``
    (initializer kinds, check_finite, swept and recorded values)."""
    calls = []
    for nid, np_ in plan.nodes.items():
        bound = [(fid, cp.schema) for fid, cp in np_.functions]
        bound += [(pp.id, pp.call.schema) for pp in np_.parameters if pp.call is not None]
        for name, sch in bound:
            if sch is not None:
                calls.append([nid, name, sch.name, sch.since, sch.namespace])
    text = json.dumps(
        {
            "graph": element_to_dict(plan.graph),
            "opset": plan.opset,
            "calls": calls,
            "options": options,
            "format": FORMAT,
        },
        sort_keys=True,
        default=_plain,
    )
    h = hashlib.sha256(text.encode())
    h.update(_engine_digest().encode())
    return h.hexdigest()[:32]


def files_digest(files: list[str]) -> str:
    """A hash of the named files' contents (a missing file hashes as empty)."""
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.encode())
        try:
            h.update(Path(f).read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]


def _paths(folder: Path, key: str) -> tuple[Path, Path]:
    return folder / f"mdf_graph_{key}.json", folder / f"mdf_graph_{key}.npz"


def save(folder: Path, key: str, record: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write a record (JSON-able ``record`` and named ``arrays``) atomically."""
    meta_path, npz_path = _paths(folder, key)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npz.tmp")
    with os.fdopen(fd, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, npz_path)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".json.tmp")
    with os.fdopen(fd, "w") as f:
        json.dump({"format": FORMAT, "key": key, **record}, f)
    os.replace(tmp, meta_path)


def load(folder: Path, key: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The record stored under ``key``, or None when there is none or it cannot be used
    (unreadable, another format, or kernels whose source changed since it was written)."""
    meta_path, npz_path = _paths(folder, key)
    try:
        with open(meta_path) as f:
            record = json.load(f)
        if record.get("format") != FORMAT or record.get("key") != key:
            return None
        if files_digest(record["kernel_files"]) != record["kernel_digest"]:
            return None
        module = record["module"]
        # a module name of the engine's own form, in the cache folder, beside its constants
        if (
            not isinstance(module, str)
            or not _MODULE_NAME.fullmatch(module)
            or not (folder / module).is_file()
            or not (folder / module).with_suffix(".npz").is_file()
        ):
            return None
        with np.load(npz_path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record, arrays
