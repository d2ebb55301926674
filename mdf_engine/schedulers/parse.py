"""The one reader of MDF conditions: ``{"type": ..., "kwargs": {...}}`` -> a condition kind.

A condition's ``type`` names a kind (:data:`~mdf_engine.schedulers.kinds.KINDS`, graph-scheduler's
class names); its ``kwargs`` are the kind's fields. Each value is read by the field's role: node
ids must name nodes of the graph, counts are whole numbers (``2.0`` is 2), time scales take the
spellings MDF files use (``TimeScale.PASS``, ``.ENVIRONMENT_STATE_UPDATE``, PsyNeuLink's older
``TRIAL``/``RUN``), nested conditions are read recursively. A kind's list argument (graph-
scheduler's ``*args``) is given as a list under its name or under ``dependencies``; a kind that
takes one ``dependency`` also accepts it as ``dependencies``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import MISSING, Field, fields
from typing import Any

from ..errors import MDFError
from ..model import Condition, Graph
from .kinds import KINDS, ConditionKind
from .time_scales import TimeScale

_TIME_SCALE_RE = re.compile(r"^(TimeScale)?\.?([A-Z_]+)$")
_OLD_NAMES = {
    "TRIAL": "ENVIRONMENT_STATE_UPDATE",
    "RUN": "ENVIRONMENT_SEQUENCE",
    "TIME_STEP": "CONSIDERATION_SET_EXECUTION",
}


def time_scale(name: Any, where: str = "") -> TimeScale:
    """A ``TimeScale`` from the spellings MDF files use."""
    if isinstance(name, TimeScale):
        return name
    if isinstance(name, enum.Enum):  # (graph-scheduler's own, from modeci-mdf objects)
        name = name.name
    text = str(name).strip()
    m = _TIME_SCALE_RE.match(text.upper()) or _TIME_SCALE_RE.match(text.upper().split(".")[-1])
    key = m.group(2) if m else text.upper()
    key = _OLD_NAMES.get(key, key)
    try:
        return TimeScale[key]
    except KeyError:
        raise MDFError(
            f"unknown time scale '{name}' (known: {', '.join(t.name for t in TimeScale)})", where
        ) from None


def parse_condition(cond: Condition | dict, where: str, graph: Graph) -> ConditionKind:
    """The condition kind of ``cond`` (an MDF condition of ``graph`` at field path
    ``where``), or an :class:`MDFError` naming what is wrong."""
    if isinstance(cond, dict):
        cond = Condition(type=cond.get("type"), kwargs=dict(cond.get("kwargs") or {}))
    name = str(cond.type)
    cls = KINDS.get(name)
    if cls is None:
        _refuse(name, where)
    own = {f.name: f for f in fields(cls) if f.init}
    values: dict[str, Any] = {}
    for key, raw in cond.kwargs.items():
        f = _field_for(cls, own, key)
        if f is None:
            takes = ", ".join(own) or "no arguments"
            raise MDFError(
                f"cannot build {name}({', '.join(cond.kwargs)}): it takes {takes}",
                f"{where}.kwargs.{key}",
            )
        values[f.name] = _read(f, raw, f"{where}.kwargs.{key}", graph)
    missing = [k for k, f in own.items() if k not in values and f.default is MISSING]
    if missing:
        raise MDFError(f"{name} needs {' and '.join(map(repr, missing))}", where)
    made = cls(**values)
    made.check(graph, where)
    return made


def _refuse(name: str, where: str) -> None:
    """Why ``name`` is no condition a model file can give."""
    import graph_scheduler

    gs_cls = getattr(graph_scheduler.condition, name, None)
    structural = getattr(graph_scheduler.condition, "GraphStructureCondition", None)
    if isinstance(gs_cls, type) and structural is not None and issubclass(gs_cls, structural):
        raise MDFError(
            f"{name} is a graph structure condition (it edits the "
            "scheduler's graph); an MDF graph's structure comes from its edges, "
            "so it cannot be used as a node or termination condition",
            f"{where}.type",
        )
    if isinstance(gs_cls, type) and issubclass(gs_cls, graph_scheduler.condition.Condition):
        raise MDFError(f"{name} needs a Python function and cannot be given in a model file", where)
    raise MDFError(f"unknown condition type '{name}'", f"{where}.type")


def _field_for(cls: type[ConditionKind], own: dict[str, Field], key: str) -> Field | None:
    """The field of ``cls`` that MDF's ``key`` gives."""
    if key in own:
        return own[key]
    if key in ("args", "dependencies"):
        if cls.variadic is not None:
            return own[cls.variadic]
        if key == "dependencies" and "dependency" in own:
            return own["dependency"]
    return None


def _read(f: Field, raw: Any, where: str, graph: Graph) -> Any:
    """The value of field ``f`` from the file's ``raw``."""
    role = f.metadata.get("role")
    if role == "node":
        return _node(raw, where, graph)
    if role == "nodes":
        items = raw if isinstance(raw, (list, tuple)) else [raw]
        return tuple(_node(v, where, graph) for v in items)
    if role == "cond":
        return _nested(raw, where, graph)
    if role == "conds":
        items = raw if isinstance(raw, (list, tuple)) else [raw]
        return tuple(_nested(v, f"{where}[{i}]", graph) for i, v in enumerate(items))
    if role == "count":
        return _count(f.name, raw, f.metadata["least"], where)
    if role == "scale":
        return time_scale(raw, where)
    return raw


def _node(raw: Any, where: str, graph: Graph) -> str:
    if not isinstance(raw, str):
        raise MDFError(f"expected a node id, got {raw!r}", where)
    if graph.get_node(raw) is None:
        raise MDFError(f"'{raw}' is not a node of this graph", where)
    return raw


def _nested(raw: Any, where: str, graph: Graph) -> ConditionKind:
    if isinstance(raw, Condition) or (isinstance(raw, dict) and "type" in raw):
        return parse_condition(raw, where, graph)
    raise MDFError(f"expected a condition ({{'type': ..., 'kwargs': ...}}), got {raw!r}", where)


def _count(name: str, v: Any, least: int, where: str) -> int:
    """A whole number of at least ``least`` (graph-scheduler divides by an ``Every...``
    count)."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MDFError(f"'{name}' must be a whole number, got {v!r}", where)
    if v < least:
        raise MDFError(f"'{name}' must be at least {least}, got {v}", where)
    return v
