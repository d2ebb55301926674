"""Read MDF models: JSON and YAML files as modeci-mdf 0.4.x writes them, plain dicts, and
``modeci_mdf.mdf.Model`` objects, into the typed model of :mod:`mdf_engine.model`.

Every problem raises :class:`~mdf_engine.errors.MDFError` naming the file and the field path
(``graphs.g1.nodes.A.parameters.x.value``). YAML is read with the safe loader only; files are
limited in size and nesting depth.
"""

from __future__ import annotations

import ast
import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from .errors import MDFError
from .model import (
    ELEMENTS,
    Condition,
    ConditionSet,
    Model,
    element_fields,
    field_default,
    to_dict,
)
from .nested_graphs import flatten_nested_graphs
from .sidecar import resolve_sidecar

log = logging.getLogger("mdf_engine")

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
MAX_DIM = 2**31 - 1
MAX_ELEMENTS = 10**9
#: Most items (counting repeats of shared YAML anchors) a file may expand to.
MAX_EXPANDED = 10**7
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
            _modeci_to_dict(source), source="<modeci_mdf.mdf.Model>", graph_check=graph_check
        )
    raise MDFError(
        f"cannot load a model from {type(source).__name__}: expected a path, a dict or a "
        "modeci_mdf.mdf.Model"
    )


def read_file(path: str) -> Any:
    """Parse a .json/.yaml/.yml file into plain data, with size and depth limits."""
    p = Path(path)
    if not p.exists():
        raise MDFError("no such file", source=path)
    # a directory, FIFO or device is refused before it is opened (a FIFO would block)
    if p.is_dir():
        raise MDFError("is a directory, not a model file", source=path)
    if not p.is_file():
        raise MDFError("is not a regular file (a FIFO, device or socket)", source=path)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise MDFError(f"file is {size} bytes; the limit is {MAX_FILE_BYTES}", source=path)
    ext = p.suffix.lower()
    try:
        text = p.read_bytes().decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise MDFError(f"the file is not UTF-8 text (byte {e.start})", source=path) from None
    try:
        if ext == ".json":
            data = json.loads(text)
        elif ext in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            raise MDFError("expected a .json, .yaml or .yml file", source=path)
    except MDFError:
        raise
    except RecursionError:
        raise MDFError(f"nesting deeper than {MAX_DEPTH} levels", source=path) from None
    except json.JSONDecodeError as e:
        raise MDFError(
            f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=path
        ) from None
    except Exception as e:  # yaml errors, unicode errors
        msg = str(e).replace("\n", " ")
        raise MDFError(f"cannot parse file: {type(e).__name__}: {msg}", source=path) from None
    _check_depth(data, path)
    return data


def _check_depth(data: Any, source: str | None) -> None:
    """Refuse data nested deeper than MAX_DEPTH, data that contains itself (YAML aliases), and
    shared subtrees (YAML anchors) that would expand to more than MAX_EXPANDED items."""
    # Each distinct container is measured once: (height, expanded item count).
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(data, 0, False)]
    while stack:
        item, depth, done = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        key = id(item)
        children = list(item.values()) if isinstance(item, dict) else item
        if done:
            active.discard(key)
            height, size = 0, 1
            for c in children:
                if isinstance(c, (dict, list)):
                    h, n = memo[id(c)]
                    height, size = max(height, h + 1), size + n
                else:
                    size += 1
            if size > MAX_EXPANDED:
                raise MDFError(
                    f"the data expands to more than {MAX_EXPANDED} items (repeated YAML aliases?)",
                    source=source,
                )
            memo[key] = (height, size)
            continue
        if key in active:
            raise MDFError("the data refers to itself (a recursive YAML alias)", source=source)
        if key in memo:
            if depth + memo[key][0] > MAX_DEPTH:
                raise MDFError(f"nesting deeper than {MAX_DEPTH} levels", source=source)
            continue
        if depth > MAX_DEPTH:
            raise MDFError(f"nesting deeper than {MAX_DEPTH} levels", source=source)
        active.add(key)
        stack.append((item, depth, True))
        stack.extend((c, depth + 1, False) for c in children if isinstance(c, (dict, list)))


def from_dict(data: Any, source: str | None = None, graph_check: bool = True) -> Model:
    """A typed model from MDF's dict layout ``{model_id: {...}}`` (or a body with an ``id``)."""
    _check_depth(data, source)
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
    builder = _Builder(source)
    model = builder.element(Model, str(model_id), body, "")
    if builder.unknown:
        shown = ", ".join(builder.unknown[:5]) + (" ..." if len(builder.unknown) > 5 else "")
        log.warning(
            "%s: ignored %d field(s) that no MDF version defines: %s",
            source or "<model>",
            len(builder.unknown),
            shown,
        )
    if graph_check:
        for g in model.graphs:
            _check_graph(g, f"graphs.{g.id}", source)
    model._source = source  # type: ignore[attr-defined]
    return model


class _Builder:
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
        kwargs = value.get("kwargs", value.get("args")) or {}
        if not isinstance(kwargs, dict):
            raise self.error("condition kwargs must be a mapping", f"{path}.kwargs")
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
            except (ValueError, SyntaxError):
                raise self.error(f"shape {value!r} is not a tuple of integers", path) from None
            if isinstance(value, int):
                value = (value,)
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value,)
        if not isinstance(value, (list, tuple)):
            raise self.error(f"shape must be a list of integers, got {type(value).__name__}", path)
        dims = []
        for d in value:
            if not isinstance(d, int) or isinstance(d, bool):
                raise self.error(f"shape entries must be integers, got {d!r}", path)
            if d < 0:
                raise self.error(f"shape has a negative dimension {d}", path)
            if d > MAX_DIM:
                raise self.error(f"shape dimension {d} is larger than {MAX_DIM}", path)
            dims.append(d)
        if dims and math.prod(dims) > MAX_ELEMENTS:
            raise self.error(f"shape {tuple(dims)} has more than {MAX_ELEMENTS} elements", path)
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


def _check_graph(g: Any, path: str, source: str | None) -> None:
    def err(msg: str, sub: str) -> MDFError:
        return MDFError(msg, f"{path}.{sub}", source)

    seen: set[str] = set()
    for n in g.nodes:
        if n.id in seen:
            raise err(f"node id '{n.id}' is used twice", f"nodes.{n.id}")
        seen.add(n.id)
        ids: set[str] = set()
        for kind in ("input_ports", "functions", "parameters", "output_ports"):
            for item in getattr(n, kind):
                if item.id in ids and kind != "output_ports":
                    raise err(
                        f"'{item.id}' names two things in node '{n.id}'",
                        f"nodes.{n.id}.{kind}.{item.id}",
                    )
                ids.add(item.id)
    nodes = {n.id: n for n in g.nodes}
    for e in g.edges:
        ep = f"edges.{e.id}"
        for end, port_kind, port in (
            ("sender", "output_ports", e.sender_port),
            ("receiver", "input_ports", e.receiver_port),
        ):
            node_id = getattr(e, end)
            if node_id not in nodes:
                raise err(
                    f"{end} '{node_id}' is not a node of graph '{g.id}' (nodes: "
                    f"{', '.join(nodes) or 'none'})",
                    f"{ep}.{end}",
                )
            if nodes[node_id].get(port_kind, port) is None:
                names = ", ".join(p.id for p in getattr(nodes[node_id], port_kind)) or "none"
                raise err(
                    f"node '{node_id}' has no {port_kind[:-1].replace('_', ' ')} "
                    f"'{port}' ({port_kind.replace('_', ' ')}: {names})",
                    f"{ep}.{end}_port",
                )
    if g.conditions is not None:
        for node_id in g.conditions.node_specific:
            if node_id not in nodes:
                raise err(
                    f"condition for unknown node '{node_id}'", f"conditions.node_specific.{node_id}"
                )
    _check_cycles(g, nodes, err)


def _check_cycles(g: Any, nodes: dict[str, Any], err: Any) -> None:
    """Edges into input ports without a ``default_value`` are scheduling dependencies; a cycle
    of them cannot be scheduled (graph-scheduler refuses it), and a node depending on itself
    with no condition of its own would wait for itself forever."""
    conditioned = set(g.conditions.node_specific) if g.conditions is not None else set()
    deps: dict[str, list[Any]] = {n: [] for n in nodes}
    for e in g.edges:
        port = nodes[e.receiver].get("input_ports", e.receiver_port)
        if port is None or port.default_value is not None:
            continue
        if e.sender == e.receiver:
            if e.receiver not in conditioned:
                raise err(
                    f"edge '{e.id}' feeds node '{e.receiver}' its own output with no "
                    f"condition for '{e.receiver}': give the input port '{e.receiver_port}'"
                    " a default_value or the node a condition",
                    f"edges.{e.id}",
                )
            continue
        deps[e.receiver].append(e)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in nodes:
        if start in state:
            continue
        path: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while path:
            nid, k = path[-1]
            if k < len(deps[nid]):
                path[-1] = (nid, k + 1)
                e = deps[nid][k]
                if state.get(e.sender) == 1:
                    raise err(
                        f"edge '{e.id}' closes a cycle of edges ({e.sender} -> "
                        f"{e.receiver} -> ... -> {e.sender}) that cannot be scheduled: "
                        "give one receiving input port a default_value",
                        f"edges.{e.id}",
                    )
                if e.sender not in state:
                    state[e.sender] = 1
                    path.append((e.sender, 0))
            else:
                state[nid] = 2
                path.pop()


def _modeci_to_dict(obj: Any) -> dict:
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


def save(model: Model, path: str | os.PathLike) -> None:
    """Write a model as JSON or YAML (by extension), atomically."""
    from .results import atomic_write_text

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
