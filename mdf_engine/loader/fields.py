"""The one place that knows MDF's field names beyond the model's dataclasses: the fields that some
schema version or writer adds without meaning, and each field's check. :class:`ElementBuilder`
builds the typed elements of :mod:`mdf_engine.model` from dict data, field by field, and
reports the first bad one by its path."""

from __future__ import annotations

import ast
import math
from typing import Any

from ..errors import MDFError
from ..model import ELEMENTS, Condition, element_fields

MAX_DIM = 2**31 - 1
#: most dimensions of a shape (numpy 1.x's limit; numpy 2 allows 64)
MAX_NDIM = 32
REDUCE_MODES = ("overwrite", "add", "multiply")

#: Keys some writers add that carry no semantics; accepted and dropped.
IGNORED_KEYS = {"notes"}
#: Fields that some MDF schema version or writer defines but that do not change a run: accepted
#: silently and dropped. (Model ``version`` and edge ``name`` appear in MDF v0.1-v0.3 files,
#: node ``type`` in PsyNeuLink's v0.1 exports, ``is_stateful`` in some serialised parameters.)
SCHEMA_ONLY_FIELDS: dict[str, set[str]] = {
    "Model": {"version", "notes", "dependencies"},
    "Graph": {"version", "notes"},
    "Node": {"type", "notes"},
    "Edge": {"name", "type", "notes"},
    "InputPort": {"notes"},
    "OutputPort": {"notes"},
    "Parameter": {"notes", "is_stateful"},
    "Function": {"notes"},
}


class ElementBuilder:
    """Builds typed model elements from dict data, checking each field; remembers the paths of
    fields that no MDF version defines (``unknown``), which the loader warns about once."""

    def __init__(self, source: str | None):
        self.source = source
        #: paths of fields that no MDF version defines (warned about once, then dropped)
        self.unknown: list[str] = []

    def error(self, msg: str, path: str) -> MDFError:
        return MDFError(msg, path, self.source)

    def element(self, cls: type, id: Any, body: Any, path: str) -> Any:
        if cls.__name__ == "Parameter" and not isinstance(body, dict):
            body = {"value": body}  # MDF v0.1 bare parameter values
        if not isinstance(body, dict):
            raise self.error(
                f"expected a mapping for {cls.__name__}, got {type(body).__name__}", path
            )
        if id is not None:
            self.check_id(id, path)
        known = {f.name: f for f in element_fields(cls)}
        kwargs: dict[str, Any] = {}
        if "id" in known and id is not None:
            kwargs["id"] = str(id)
        for key, value in body.items():
            sub = f"{path}.{key}" if path else str(key)
            if key in IGNORED_KEYS:
                continue
            if key == "id":
                if id is not None and str(value) != str(id):
                    raise self.error(f"id '{value}' differs from its key '{id}'", sub)
                continue
            if key not in known:
                if key not in SCHEMA_ONLY_FIELDS.get(cls.__name__, ()):
                    self.unknown.append(sub)
                continue
            kwargs[key] = self.field_value(cls, known[key], value, sub)
        if "id" in known and "id" not in kwargs:
            if "id" in body:
                self.check_id(body["id"], path)  # (a null id was the node 'None')
                kwargs["id"] = str(body["id"])
            else:
                raise self.error(f"{cls.__name__} has no id", path)
        obj = cls(**kwargs)
        self.post_check(obj, path)
        return obj

    def check_id(self, id: Any, path: str) -> None:
        # "" is an id modeci-mdf's onnx_to_mdf writes for unnamed ONNX nodes
        if not isinstance(id, (str, int)) or isinstance(id, bool):
            raise self.error(f"an id must be a string, got {id!r}", path)

    def field_value(self, cls: type, f: Any, value: Any, path: str) -> Any:
        meta = f.metadata
        if "children" in meta:
            child_cls = ELEMENTS[meta["children"]]
            if value is None:
                return []
            if isinstance(value, dict):
                return [self.element(child_cls, k, v, f"{path}.{k}") for k, v in value.items()]
            if isinstance(value, list):
                out = []
                for i, v in enumerate(value):
                    if not isinstance(v, dict):
                        raise self.error(
                            f"expected a mapping with an id, got {type(v).__name__}", f"{path}[{i}]"
                        )
                    out.append(self.element(child_cls, v.get("id"), v, f"{path}.{v.get('id', i)}"))
                return out
            raise self.error(f"expected a mapping of {child_cls.__name__} by id", path)
        if "mapping" in meta:
            if value is None:
                return {}
            if not isinstance(value, dict):
                raise self.error("expected a mapping", path)
            return {str(k): self.condition(v, f"{path}.{k}") for k, v in value.items()}
        if "child" in meta:
            if value is None:
                return None
            return self.element(ELEMENTS[meta["child"]], None, value, path)
        return self.scalar_field(cls.__name__, f.name, value, path)

    def condition(self, value: Any, path: str) -> Condition:
        if isinstance(value, Condition):
            return value
        if not isinstance(value, dict) or "type" not in value:
            raise self.error("expected a condition {type: ..., kwargs: {...}}", path)
        unknown = set(value) - {"type", "kwargs", "metadata", "args"}
        if unknown:
            raise self.error(f"unknown condition field '{sorted(unknown)[0]}'", path)
        if not isinstance(value["type"], str):
            raise self.error("a condition type must be a string", f"{path}.type")
        key = "kwargs" if "kwargs" in value else "args"
        kwargs = value.get(key) or {}
        if not isinstance(kwargs, dict):
            raise self.error(
                f"condition {key} must be a mapping of argument names to values, not a "
                f"{type(kwargs).__name__}",
                f"{path}.{key}",
            )
        return Condition(
            type=value["type"],
            kwargs={k: self.condition_arg(v, f"{path}.kwargs.{k}") for k, v in kwargs.items()},
            metadata=value.get("metadata"),
        )

    def condition_arg(self, v: Any, path: str) -> Any:
        if isinstance(v, dict) and "type" in v:
            return self.condition(v, path)
        if isinstance(v, list):
            return [self.condition_arg(x, f"{path}[{i}]") for i, x in enumerate(v)]
        return v

    def scalar_field(self, cls: str, name: str, value: Any, path: str) -> Any:
        if name == "metadata":
            if value is not None and not isinstance(value, dict):
                raise self.error("metadata must be a mapping", path)
            return value
        if name == "shape":
            return self.shape(value, path)
        if name in (
            "type",
            "sender",
            "receiver",
            "sender_port",
            "receiver_port",
            "time_derivative",
            "test",
            "format",
            "generating_application",
        ):
            if value is None:
                return None
            if (
                name == "time_derivative"
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
            ):
                return str(value)
            if not isinstance(value, str):
                raise self.error(f"expected a string, got {type(value).__name__}", path)
            return value
        if name == "reduce":
            if value not in REDUCE_MODES:
                raise self.error(
                    f"reduce must be one of {', '.join(REDUCE_MODES)}, got {value!r}", path
                )
            return value
        if name == "function":
            return value  # folded with args in post_check
        if name in ("args", "parameters"):
            if value is not None and not isinstance(value, dict):
                raise self.error("expected a mapping of names to values", path)
            return value
        if name == "default_value" and cls == "InputPort" and isinstance(value, list):
            import numpy as np

            try:  # the plan makes it an array: rows of one length
                np.array(value)
            except (ValueError, TypeError, RecursionError):
                raise self.error(
                    "expected a number or a rectangular (nested) list, got a ragged list", path
                ) from None
        if name == "onnx_opset_version":
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise self.error("expected an integer opset version", path)
            return value
        self.check_value(value, path)
        return value

    def check_value(self, value: Any, path: str) -> None:
        if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
            return
        if isinstance(value, float):
            return
        if isinstance(value, (list, dict)):
            return
        if _is_numeric_array(value):  # read from a sidecar .npz (see mdf_engine.sidecar)
            return
        raise self.error(f"unsupported value of type {type(value).__name__}", path)

    def shape(self, value: Any, path: str) -> tuple[int, ...] | None:
        if value is None:
            return None
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value.strip())
            # Python's parser runs out of memory or recursion on "-----...1" or "1+1+...+1"
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                raise self.error(f"shape {value!r:.80} is not a tuple of integers", path) from None
            if isinstance(value, int):
                value = (value,)
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value,)
        if not isinstance(value, (list, tuple)):
            raise self.error(f"shape must be a list of integers, got {type(value).__name__}", path)
        if len(value) > MAX_NDIM:
            raise self.error(f"shape has {len(value)} dimensions; the limit is {MAX_NDIM}", path)
        dims = []
        for d in value:
            if not isinstance(d, int) or isinstance(d, bool):
                raise self.error(f"shape entries must be integers, got {d!r}", path)
            if d < 0:
                raise self.error(f"shape has a negative dimension {d}", path)
            if d > MAX_DIM:
                raise self.error(f"shape dimension {d} is larger than {MAX_DIM}", path)
            dims.append(d)
        # one array as large as an expression may make (a default of this shape is allocated)
        from ..expressions.operators import MAX_RESULT_ELEMENTS

        if dims and math.prod(dims) > MAX_RESULT_ELEMENTS:
            raise self.error(
                f"shape {tuple(dims)} has more than {MAX_RESULT_ELEMENTS} elements", path
            )
        return tuple(dims)

    def post_check(self, obj: Any, path: str) -> None:
        name = type(obj).__name__
        if name in ("Parameter", "Function"):
            fn = obj.function
            if isinstance(fn, dict):
                if len(fn) != 1:
                    raise self.error(
                        "the {name: {args}} form of function takes exactly one function name",
                        f"{path}.function",
                    )
                fname, fargs = next(iter(fn.items()))
                if not isinstance(fargs, dict):
                    raise self.error(
                        "function arguments must be a mapping", f"{path}.function.{fname}"
                    )
                # PsyNeuLink 0.11 wrote the same args in both places: accepted when they agree
                if obj.args and obj.args != fargs:
                    raise self.error(
                        "args inside function and in args differ: give them in one place",
                        f"{path}.args",
                    )
                obj.function, obj.args = str(fname), dict(fargs)
            elif fn is not None and not isinstance(fn, str):
                raise self.error(
                    f"function must be a name, got {type(fn).__name__}", f"{path}.function"
                )
        if name == "Parameter":
            # A parameter with no value, function or time_derivative is set by its conditions
            # (None until one holds, then 0.0 where none holds, as the reference does), or is
            # None (pytorch_to_mdf writes an absent optional ONNX input as {}).
            if obj.value is not None and obj.function is not None:
                raise self.error("a parameter has either a value or a function, not both", path)
        if name == "OutputPort" and obj.value is None:
            raise self.error("an output port needs a value", f"{path}.value")
        if name == "Edge":
            for k in ("sender", "receiver", "sender_port", "receiver_port"):
                if not getattr(obj, k):
                    raise self.error(f"an edge needs a {k}", f"{path}.{k}")
            for k, w in (obj.parameters or {}).items():
                if k == "weight" and not _is_numeric(w):
                    raise self.error(
                        f"an edge weight must be a number or a (nested) list of "
                        f"numbers, got {w!r:.60}",
                        f"{path}.parameters.weight",
                    )


def _is_numeric_array(v: Any) -> bool:
    import numpy as np

    return isinstance(v, np.ndarray) and v.dtype.kind in "biuf"


def _is_numeric(w: Any) -> bool:
    if isinstance(w, list):
        return all(_is_numeric(x) for x in w)
    return isinstance(w, (int, float)) and not isinstance(w, bool)
