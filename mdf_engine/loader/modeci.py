"""Reading ``modeci_mdf.mdf`` objects (a Model or any element) into MDF dict data, field by field
through the model's field table."""

from __future__ import annotations

from typing import Any

from ..model import ELEMENTS, Condition, ConditionSet, Model, element_fields


def modeci_to_dict(obj: Any) -> dict:
    """Read a modeci_mdf.mdf.Model through our field table (its own to_dict fails on models
    whose parameter conditions were loaded as dicts)."""
    return {obj.id: modeci_element_to_dict(Model, obj)}


def modeci_element_to_dict(cls: type, obj: Any) -> dict:
    """One modeci-mdf element (Model, Graph, Node, ...) as MDF dict data, read field by field."""

    def cond_arg(x: Any) -> Any:
        if _is_condition(x):
            return walk(Condition, x)
        if isinstance(x, (list, tuple)):
            return [cond_arg(e) for e in x]
        return x

    def walk(cls: type, o: Any) -> Any:
        out: dict[str, Any] = {}
        for f in element_fields(cls):
            v = getattr(o, f.name, None) if not isinstance(o, dict) else o.get(f.name)
            if v is None or f.name == "id":
                continue
            meta = f.metadata
            if "children" in meta:
                child_cls = ELEMENTS[meta["children"]]
                if meta["keyed"]:
                    out[f.name] = {c.id: walk(child_cls, c) for c in v}
                else:
                    out[f.name] = [
                        {"id": (c["id"] if isinstance(c, dict) else c.id), **walk(child_cls, c)}
                        for c in v
                    ]
            elif "mapping" in meta:
                out[f.name] = {k: walk(Condition, c) for k, c in (v or {}).items()}
            elif "child" in meta:
                out[f.name] = walk(ConditionSet, v)
            elif cls is Condition and f.name == "kwargs":
                out[f.name] = {k: cond_arg(x) for k, x in v.items()}
            else:
                out[f.name] = _plain_value(v)
        return out

    return walk(cls, obj)


def _is_condition(x: Any) -> bool:
    return type(x).__name__ == "Condition" and hasattr(x, "kwargs")


def _plain_value(v: Any) -> Any:
    import numpy as np

    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, tuple):
        return list(v)
    return v
