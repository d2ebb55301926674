"""Read MDF models: JSON and YAML files as modeci-mdf 0.4.x writes them, plain dicts, and
``modeci_mdf.mdf.Model`` objects, into the typed model of :mod:`mdf_engine.model`.

Every problem raises :class:`~mdf_engine.errors.MDFError` naming the file and the field path
(``graphs.g1.nodes.A.parameters.x.value``). YAML is read with the safe loader only; files are
limited in size and nesting depth.

The entry points are here (:func:`load`, :func:`from_dict`, :func:`save`); the stages are
:mod:`.files` (reading a file, its limits), :mod:`.fields` (MDF's field names and each field's
check), :mod:`.graph_checks` (a whole graph) and :mod:`.modeci` (modeci-mdf objects).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from ..errors import MDFError, clip
from ..model import Model, field_default, to_dict
from ..nested_graphs import flatten_nested_graphs
from ..psyneulink_files import is_psyneulink
from ..sidecar import resolve_sidecar
from .fields import ElementBuilder
from .files import check_depth, read_file
from .graph_checks import check_graph
from .modeci import modeci_to_dict

log = logging.getLogger("mdf_engine")


def load(source: Any, *, graph_check: bool = True) -> Model:
    """A typed :class:`Model` from a file path, a dict in MDF layout, or a modeci-mdf Model."""
    if isinstance(source, Model):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = str(source)
        data = resolve_sidecar(read_file(path), path)
        return from_dict(data, source=path, graph_check=graph_check)
    if isinstance(source, dict):
        return from_dict(source, graph_check=graph_check)
    if type(source).__module__.startswith("modeci_mdf"):
        return from_dict(
            modeci_to_dict(source), source="<modeci_mdf.mdf.Model>", graph_check=graph_check
        )
    raise MDFError(
        f"cannot load a model from {type(source).__name__}: expected a path, a dict or a "
        "modeci_mdf.mdf.Model"
    )


def from_dict(data: Any, source: str | None = None, graph_check: bool = True) -> Model:
    """A typed model from MDF's dict layout ``{model_id: {...}}`` (or a body with an ``id``)."""
    check_depth(data, source)
    if not isinstance(data, dict) or not data:
        raise MDFError("expected a mapping {model_id: {...}} at the top level", source=source)
    if "graphs" in data:
        body = dict(data)
        model_id = body.pop("id", "model")
    else:
        if len(data) != 1:
            raise MDFError(
                f"expected exactly one model id at the top level, found {len(data)}: "
                f"{', '.join(map(str, data))}",
                source=source,
            )
        model_id, body = next(iter(data.items()))
        if not isinstance(body, dict):
            raise MDFError(f"expected a mapping, got {type(body).__name__}", str(model_id), source)
    body = flatten_nested_graphs(body, source)
    builder = ElementBuilder(source)
    model = builder.element(Model, str(model_id), body, "")
    if builder.unknown:
        shown = ", ".join(clip(u, 200) for u in builder.unknown[:5]) + (
            " ..." if len(builder.unknown) > 5 else ""
        )
        log.warning(
            "%s: ignored %d field(s) that no MDF version defines: %s",
            source or "<model>",
            len(builder.unknown),
            shown,
        )
    if graph_check:
        for g in model.graphs:
            check_graph(g, f"graphs.{g.id}", source, cycles=is_psyneulink(model))
    model._source = source  # type: ignore[attr-defined]
    return model


def save(model: Model, path: str | os.PathLike) -> None:
    """Write a model as JSON or YAML (by extension), atomically."""
    from ..results import atomic_write_text

    data = to_dict(model)
    p = str(path)
    if p.endswith((".yaml", ".yml")):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, indent=4)
    elif p.endswith(".json"):
        text = json.dumps(data, indent=4)
    else:
        raise MDFError("expected a .json, .yaml or .yml path", source=p)
    atomic_write_text(p, text)


__all__ = ["load", "save", "from_dict", "read_file", "field_default"]
