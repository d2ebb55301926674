"""Reading a model file into plain data: regular .json/.yaml/.yml files only, UTF-8, within the
size and nesting limits below (YAML with the safe loader; shared YAML anchors counted as often
as they expand)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import MDFError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
#: Most items (counting repeats of shared YAML anchors) a file may expand to.
MAX_EXPANDED = 10**7
#: a lone surrogate (JSON's ``"\\ud800"`` escape): no Unicode character, and no file, CSV,
#: ONNX or NetCDF name can hold it
_SURROGATE = re.compile("[\ud800-\udfff]")
#: YAML 1.1 numbers that YAML 1.2 reads otherwise (``017``: octal 15; ``1:30``: base 60)
_YAML11_ONLY = re.compile(r"[-+]?(0[0-7]+|[0-9][0-9]*(:[0-5]?[0-9])+(\.[0-9]*)?)")


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
            data = json.loads(text, object_pairs_hook=_unique_keys)
        elif ext in (".yaml", ".yml"):
            data = _yaml_load(text)
        else:
            raise MDFError("expected a .json, .yaml or .yml file", source=path)
    except MDFError as e:
        if e.source is None:
            raise MDFError(e.message, e.path, path) from None
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
    check_depth(data, path)
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object, refused when a key repeats (the parser would keep the last silently:
    two nodes with one id would be one)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise MDFError(f"the key {key!r:.80} appears twice in one object")
    return d


def _yaml_load(text: str) -> Any:
    """YAML with the safe loader, refusing a key that repeats in one mapping (merge keys
    ``<<`` aside, whose values explicit keys override)."""
    import yaml

    # libyaml's parser under the same safe constructor, where PyYAML has it: three times
    # faster on large files (a 2,000-node model: 0.7 CPU s instead of 2.2)
    safe = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class UniqueKeyLoader(safe):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = (key_node.tag, getattr(key_node, "value", None))
                    if isinstance(key[1], str) and key in seen:
                        raise MDFError(
                            f"the key {key[1]!r:.80} appears twice in one mapping "
                            f"(line {key_node.start_mark.line + 1})"
                        )
                    seen.add(key)
            return super().construct_mapping(node, deep)

    def yaml11_number(loader: Any, node: Any) -> Any:
        # YAML 1.1 reads 017 as octal 15 and 12:30 as 750 (base 60); YAML 1.2 and people
        # read 17 and a text: such a number is refused rather than guessed
        value = CONSTRUCT[node.tag](loader, node)
        text = node.value.replace("_", "")
        if _YAML11_ONLY.fullmatch(text) and (":" in text or int(text, 10) != value):
            raise MDFError(
                f"the number {node.value!r:.40} means {value} in "
                "YAML 1.1 (a leading 0 is octal, ':' counts in base 60) but not in YAML 1.2; "
                f"write it plainly or quote it (line {node.start_mark.line + 1})"
            )
        return value

    CONSTRUCT = {
        "tag:yaml.org,2002:int": yaml.SafeLoader.construct_yaml_int,
        "tag:yaml.org,2002:float": yaml.SafeLoader.construct_yaml_float,
    }
    for tag in CONSTRUCT:
        UniqueKeyLoader.add_constructor(tag, yaml11_number)
    _check_yaml_nesting(text, safe)
    return yaml.load(text, Loader=UniqueKeyLoader)


def _check_yaml_nesting(text: str, loader: Any) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before it is composed: libyaml's composer
    recurses in C once per level, and 30,000 levels (``[[[...``, 60 KB) overflow the C stack,
    killing the process with a segmentation fault. The parser's event stream is flat (a third
    of the cost of loading)."""
    import yaml

    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    events = yaml.parse(text, Loader=loader)
    while True:
        try:
            event = next(events, None)
        except yaml.MarkedYAMLError as e:
            # (PyYAML 6.0.4's scanner refuses 1,000 flow levels itself, before any event)
            if "nesting depth" not in str(e.problem) or e.problem_mark is None:
                raise
            line = e.problem_mark.line + 1
            raise MDFError(f"nesting deeper than {MAX_DEPTH} levels (line {line})") from None
        if event is None:
            return
        if isinstance(event, opening):
            depth += 1
            if depth > MAX_DEPTH:
                raise MDFError(
                    f"nesting deeper than {MAX_DEPTH} levels (line {event.start_mark.line + 1})"
                )
        elif isinstance(event, closing):
            depth -= 1  # noqa: S506 - a SafeLoader subclass


def check_depth(data: Any, source: str | None) -> None:
    """Refuse data nested deeper than MAX_DEPTH, data that contains itself (YAML aliases),
    shared subtrees (YAML anchors) that would expand to more than MAX_EXPANDED items, and text
    holding a lone surrogate."""
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
        texts = [*item, *children] if isinstance(item, dict) else children
        if any(isinstance(t, str) and _SURROGATE.search(t) for t in texts):
            _refuse_surrogate(data, item, source)
        active.add(key)
        stack.append((item, depth, True))
        stack.extend((c, depth + 1, False) for c in children if isinstance(c, (dict, list)))


def _refuse_surrogate(data: Any, holder: Any, source: str | None) -> None:
    """The MDFError for a lone surrogate in a key or text of ``holder`` (inside ``data``),
    naming its field path."""
    path: list[str] = []
    stack: list[tuple[Any, list[str]]] = [(data, [])]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if item is holder:
            path = where
            break
        if not isinstance(item, (dict, list)) or id(item) in seen:
            continue
        seen.add(id(item))
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        stack.extend((v, [*where, str(k)]) for k, v in pairs)
    pairs = holder.items() if isinstance(holder, dict) else enumerate(holder)
    for k, v in pairs:
        for text, sub in ((k, ""), (v, str(k))):
            if isinstance(text, str) and _SURROGATE.search(text):
                field = ".".join(p for p in [*path, sub] if p)
                raise MDFError(
                    f"the text {text!a:.80} holds a lone surrogate, which is not Unicode text",
                    field,
                    source,
                )
