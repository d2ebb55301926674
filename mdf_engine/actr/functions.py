"""The ACT-R production-system functions of the MDF standard (namespace ``actr``).

Chunks, patterns and productions are plain dicts of strings, the data model of MDF's ACT-R
graphs (as written by ``modeci_mdf.interfaces.actr.actr_to_mdf`` and by
:func:`mdf_engine.actr.build_model`):

* a **chunk** is ``{"name": ..., "ISA": type, slot: value, ...}``; its slots are *positional*:
  the chunk is read as the sequence of its values without ``name`` (see :func:`chunk_to_string`);
* a **pattern** is ``{"buffer": ..., "ISA": type, slot: value, ...}`` whose first entry (the
  buffer) is dropped and whose other values are matched position by position. A value is a
  literal (``two``), a variable (``=x``: binds on first use, must be equal afterwards), a negated
  variable (``-=x``), a negated literal (``!two``) or a wildcard (``=`` alone, or ``?``);
* a **production** is ``{"name": ..., "lhs": [pattern, ...], "rhs": [pattern, ...]}``; a matched
  production carries ``"bindings"``, the variable values of the match.

The semantics are those of modeci-mdf 0.4.15's ``modeci_mdf.functions.actr`` (which runs the
vendored ``ccm`` matcher on the string forms); the matcher here is our own implementation of that
pattern language. Differences, all deliberate:

* **Pure functions.** The reference mutates its inputs (``change_goal`` updates the goal dict in
  place, ``match_production``/``pattern_matching_function`` store ``bindings`` into the given
  production dicts). Here every function returns new dicts and leaves its inputs untouched;
  matched productions are returned as shallow copies carrying their ``bindings``.
* **Seeded conflict resolution.** The reference picks among several matching productions with
  the global ``random.choice``. :func:`conflict_resolution_function` instead draws from a
  ``random.Random`` seeded by its ``seed`` attribute and the names and bindings of the candidates,
  so the choice is reproducible and a pure function of its inputs. With zero or one matching
  production (as in every deterministic ACT-R model) the result is identical to the reference.
* Malformed input raises :class:`mdf_engine.errors.MDFError` saying what was expected, where the
  reference raises ``KeyError``/``TypeError``/``PatternException`` from deep inside ``ccm``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..errors import MDFError
from ..registry import register

__all__ = [
    "chunk_to_string",
    "pattern_to_string",
    "change_goal",
    "retrieve_chunk",
    "match_production",
    "pattern_matching_function",
    "update_buffer",
    "update_goal",
    "update_retrieval",
    "conflict_resolution_function",
    "check_termination",
]

Chunk = dict[str, Any]

# --------------------------------------------------------------------------------------------
# String forms and the tokenised ("slot table") form of a chunk
# --------------------------------------------------------------------------------------------


def _values_as_text(values: list[Any], what: str) -> str:
    for v in values:
        if not isinstance(v, str):
            raise MDFError(f"{what} values must be strings, got {v!r} ({type(v).__name__})")
    return " ".join(values)


def _as_mapping(x: Any, what: str) -> Mapping:
    if not isinstance(x, Mapping):
        raise MDFError(f"{what} must be a dict, got {type(x).__name__}: {x!r}")
    return x


@register(
    "actr",
    "chunk_to_string",
    inputs=("chunk",),
    outputs=("string",),
    python_only=True,
    origin="modeci-mdf",
)
def chunk_to_string(chunk: Mapping[str, str]) -> str:
    """The values of a chunk except its ``name``, joined by single spaces, in dict order."""
    chunk = _as_mapping(chunk, "a chunk")
    return _values_as_text([v for k, v in chunk.items() if k != "name"], "chunk")


# modeci-mdf's function table names this argument "chunk" (its Python parameter is "pattern")
@register(
    "actr",
    "pattern_to_string",
    inputs=("chunk",),
    outputs=("string",),
    python_only=True,
    origin="modeci-mdf",
)
def pattern_to_string(pattern: Mapping[str, str]) -> str:
    """A pattern in the matcher's text syntax.

    The first entry (by convention ``buffer``) is dropped; the other values are joined by
    spaces, then ``-=`` becomes ``!?`` (negated variable) and ``=`` becomes ``?`` (variable).
    """
    pattern = _as_mapping(pattern, "a pattern")
    text = _values_as_text(list(pattern.values())[1:], "pattern")
    return text.replace("-=", "!?").replace("=", "?")


def _slot_table(text: str) -> dict[Any, str]:
    """Tokenise a chunk string into ``{position or name: value}``.

    Each whitespace-separated token is one slot keyed by its position, unless it is written
    ``name:value``, in which case it is keyed by ``name`` (a string).
    """
    table: dict[Any, str] = {}
    for pos, tok in enumerate(text.split()):
        key: Any = pos
        if ":" in tok:
            key, tok = tok.split(":", 1)
        if tok.startswith("?"):
            raise MDFError(f"a chunk value cannot be a variable, got '{tok}' in '{text}'")
        table[key] = tok
    return table


def _chunk_table(chunk: Any, what: str) -> dict[Any, str]:
    return _slot_table(chunk_to_string(_as_mapping(chunk, what)))


# --------------------------------------------------------------------------------------------
# The pattern language
# --------------------------------------------------------------------------------------------

_NAMED_SLOT = re.compile(r"(\??[\w.]+):")
_TERMS = (  # tried in this order at the start of what is left of a slot's text
    ("is", re.compile(r"[\w.\-]+")),  # literal value
    ("is_not", re.compile(r"!([\w.\-]+)")),  # negated literal
    ("var", re.compile(r"\?(\w+)")),  # variable
    ("not_var", re.compile(r"!\?(\w+)")),  # negated variable
)

#: One test of a compiled pattern: (kind, buffer or None, slot key, literal or variable name).
Test = tuple[str, Any, Any, str]


class _NoMatch(Exception):
    """Raised inside matching when a slot or buffer that a test needs is absent."""


def _next_term(text: str) -> tuple[str, re.Match | None]:
    for kind, rx in _TERMS:
        m = rx.match(text)
        if m:
            return kind, m
    return "", None


@lru_cache(maxsize=1024)
def _compile(patterns: tuple[tuple[Any, str], ...]) -> tuple[Test, ...]:
    """Compile ``((buffer, pattern text), ...)`` into an ordered tuple of tests.

    Kinds: ``is``/``is_not`` compare with a literal, ``bind`` binds a variable at its first
    occurrence (over all buffers, in order), ``same``/``differ`` compare with a bound variable.
    All ``same``/``differ`` tests come after every direct test, so a variable may be used before
    the slot that binds it. Cached: compilation is a pure function of the text.
    """
    first: list[Test] = []
    later: list[Test] = []
    seen: set[str] = set()
    for buf, text in patterns:
        named = False
        for pos, tok in enumerate(text.split()):
            key: Any = pos
            m = _NAMED_SLOT.match(tok)
            if m:
                key = m.group(1)
                try:
                    key = int(key)
                except ValueError:
                    pass
                tok = tok[m.end() :]
                if not tok:
                    raise MDFError(f"slot '{key}' has no value in pattern '{text}'")
                named = True
            elif named:
                raise MDFError(f"positional slot '{tok}' after a named slot in pattern '{text}'")
            if tok == "?":
                continue
            rest = tok
            while rest:
                kind, m = _next_term(rest)
                if m is None:
                    raise MDFError(
                        f"cannot read '{rest}' in pattern '{text}' (expected a value, "
                        "=variable, -=variable or !value)"
                    )
                rest = rest[m.end() :]
                if kind == "is":
                    first.append(("is", buf, key, m.group(0)))
                elif kind == "is_not":
                    first.append(("is_not", buf, key, m.group(1)))
                elif kind == "not_var":
                    later.append(("differ", buf, key, m.group(1)))
                elif m.group(1) in seen:
                    later.append(("same", buf, key, m.group(1)))
                else:
                    seen.add(m.group(1))
                    first.append(("bind", buf, key, m.group(1)))
    return tuple(first + later)


def _lookup(context: Any, buf: Any, key: Any) -> str:
    """The value of slot ``key`` of buffer ``buf``; dotted keys walk into nested values."""
    try:
        obj = context if buf is None else context[buf]
        while isinstance(key, str) and "." in key:
            head, key = key.split(".", 1)
            obj = obj[head]
        value = obj[key]
    except (KeyError, TypeError, IndexError) as exc:
        raise _NoMatch from exc
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else repr(value)


def _run_tests(tests: tuple[Test, ...], context: Any) -> dict[str, str] | None:
    """The variable bindings if every test passes on ``context``, else None."""
    bound: dict[str, str] = {}
    try:
        for kind, buf, key, arg in tests:
            if kind == "bind":
                bound[arg] = _lookup(context, buf, key)
                continue
            if kind in ("is", "same") and isinstance(key, str) and key.startswith("?"):
                if key[1:] not in bound:
                    return None
                key = bound[key[1:]]
            value = _lookup(context, buf, key)
            if kind == "is":
                ok = value == arg
            elif kind == "is_not":
                ok = value != arg
            else:
                if arg not in bound:
                    return None
                ok = (value == bound[arg]) if kind == "same" else (value != bound[arg])
            if not ok:
                return None
    except _NoMatch:
        return None
    return bound


# --------------------------------------------------------------------------------------------
# The ACT-R functions
# --------------------------------------------------------------------------------------------


def _is_zero(x: Any) -> bool:
    try:
        return not isinstance(x, (str, Mapping)) and bool(x == 0)
    except (TypeError, ValueError):
        return False


@register(
    "actr", "change_goal", inputs=("pattern", "curr_goal"), outputs=("goal",), python_only=True
)
def change_goal(pattern: Mapping[str, str], curr_goal: Mapping[str, str]) -> Chunk:
    """The goal ``curr_goal`` with the slots of ``pattern`` written into it (``buffer`` removed).

    A ``curr_goal`` equal to 0 (an uninitialised state) gives ``{}``. Returns a new dict; the
    reference updates ``curr_goal`` in place and returns it.
    """
    if _is_zero(curr_goal):
        return {}
    goal = dict(_as_mapping(curr_goal, "change_goal's curr_goal (the current goal chunk)"))
    goal.update(_as_mapping(pattern, "change_goal's pattern (a goal update pattern)"))
    goal.pop("buffer", None)
    return goal


@register(
    "actr",
    "retrieve_chunk",
    inputs=("pattern", "dm_chunks", "types"),
    outputs=("chunk",),
    python_only=True,
)
def retrieve_chunk(
    pattern: Mapping[str, str],
    dm_chunks: Sequence[Mapping[str, str]],
    types: Mapping[str, Sequence[str]],
) -> Chunk:
    """The first chunk of declarative memory that matches ``pattern``, or ``{}``.

    The retrieved chunk is ``{"ISA": type, slot: value, ...}``, its slots named by
    ``types[type]`` in order. An empty pattern, or no match, gives ``{}``.
    """
    pattern = _as_mapping(pattern, "retrieve_chunk's pattern (a retrieval request)")
    if len(pattern) == 0:
        return {}
    tests = _compile(((None, pattern_to_string(pattern)),))
    for chunk in dm_chunks:
        table = _chunk_table(chunk, "a declarative memory chunk")
        if _run_tests(tests, table) is None:
            continue
        try:
            isa = table[0]
            slots = list(_as_mapping(types, "retrieve_chunk's types")[isa])
            retrieved = {"ISA": isa}
            for i in range(1, len(table)):
                retrieved[slots[i - 1]] = table[i]
        except (KeyError, IndexError) as exc:
            raise MDFError(
                f"chunk {dict(chunk)!r} does not fit its chunk type: types must map its ISA "
                f"to a list of at least {len(table) - 1} slot names (types: {dict(types)!r})"
            ) from exc
        return retrieved
    return {}


def _context_tables(context: Mapping[str, Any]) -> dict[str, Any]:
    return {
        buf: (None if chunk is None else _chunk_table(chunk, f"the '{buf}' buffer chunk"))
        for buf, chunk in _as_mapping(context, "a match context").items()
    }


def _production_tests(production: Mapping[str, Any]) -> tuple[Test, ...]:
    production = _as_mapping(production, "a production")
    if "lhs" not in production:
        raise MDFError(f"a production needs 'lhs' (a list of patterns), got {production!r}")
    by_buffer: dict[Any, str] = {}
    for p in production["lhs"]:
        p = _as_mapping(p, "a left-hand-side pattern")
        if "buffer" not in p:
            raise MDFError(f"a left-hand-side pattern needs 'buffer', got {dict(p)!r}")
        by_buffer[p["buffer"]] = pattern_to_string(p)  # a later pattern replaces an earlier one
    return _compile(tuple(by_buffer.items()))


def _bindings(production: Mapping[str, Any], tables: Mapping[str, Any]) -> dict | None:
    return _run_tests(_production_tests(production), tables)


@register(
    "actr",
    "match_production",
    inputs=("production", "context"),
    outputs=("matches",),
    python_only=True,
    origin="modeci-mdf",
)
def match_production(production: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    """Whether the left-hand side of ``production`` matches ``context``.

    ``context`` maps buffer names (``goal``, ``retrieval``) to chunks (dicts; ``None`` for an
    empty buffer). The reference also stores the bindings into ``production``; this pure version
    does not (:func:`pattern_matching_function` returns copies that carry them).
    """
    return _bindings(production, _context_tables(context)) is not None


@register(
    "actr",
    "pattern_matching_function",
    inputs=("productions", "goal", "retrieval"),
    outputs=("productions",),
    python_only=True,
)
def pattern_matching_function(
    productions: Sequence[Mapping[str, Any]],
    goal: Mapping[str, str],
    retrieval: Mapping[str, str],
) -> list[dict[str, Any]]:
    """The productions whose left-hand sides match the goal and retrieval buffers, in order.

    Each is returned as a shallow copy with ``"bindings"`` set to the variables of the match.
    An empty ``retrieval`` dict means an empty retrieval buffer (any test on it fails).
    """
    retrieval = _as_mapping(retrieval, "pattern_matching_function's retrieval (a chunk)")
    tables = {
        "goal": _chunk_table(goal, "pattern_matching_function's goal (a chunk)"),
        "retrieval": _chunk_table(retrieval, "the retrieval chunk") if len(retrieval) else None,
    }
    matched = []
    for production in productions:
        b = _bindings(production, tables)
        if b is not None:
            matched.append({**production, "bindings": b})
    return matched


@register(
    "actr",
    "conflict_resolution_function",
    inputs=("productions",),
    attributes={"seed": 0},
    outputs=("production",),
    python_only=True,
)
def conflict_resolution_function(
    productions: Sequence[Mapping[str, Any]], seed: int = 0
) -> Mapping[str, Any]:
    """The production to fire among the matched ones: ``{}`` if none, the only one if one.

    Among several, a seeded draw: ``random.Random`` seeded with ``seed`` and the names and
    bindings of the candidates (so the same situation always picks the same production). The
    reference uses the global ``random.choice`` instead, so with several candidates the two may
    pick differently.
    """
    candidates = list(productions)
    if len(candidates) == 0:
        return {}
    if len(candidates) == 1:
        return candidates[0]
    key = repr(
        (int(seed), [(p.get("name"), sorted(p.get("bindings", {}).items())) for p in candidates])
    )
    return random.Random(key).choice(candidates)


@register(
    "actr",
    "update_buffer",
    inputs=("production", "buffer"),
    outputs=("pattern",),
    python_only=True,
    origin="modeci-mdf",
)
def update_buffer(production: Mapping[str, Any], buffer: str) -> dict[str, Any]:
    """The right-hand-side pattern of ``production`` for ``buffer``, variables replaced.

    The last right-hand-side pattern naming ``buffer`` is copied; a value whose text without
    ``=`` is the name of a bound variable is replaced by its binding (as in the reference, this
    also replaces a bare word that happens to name a variable). ``{}`` for an empty production
    or when no pattern names ``buffer``.
    """
    production = _as_mapping(production, "a production")
    if len(production) == 0:
        return {}
    if "rhs" not in production:
        raise MDFError(f"a production needs 'rhs' (a list of patterns), got {dict(production)!r}")
    pattern: dict[str, Any] = {}
    for p in production["rhs"]:
        p = _as_mapping(p, "a right-hand-side pattern")
        if p.get("buffer") == buffer:
            pattern = dict(p)
    if not pattern:
        return pattern
    if "bindings" not in production:
        raise MDFError(
            f"production {production.get('name', '?')!r} has no 'bindings'; only a production "
            "returned by pattern_matching_function can be fired"
        )
    bindings = production["bindings"]
    for k, v in pattern.items():
        if not isinstance(v, str):
            raise MDFError(f"pattern values must be strings, got {k}: {v!r}")
        name = v.replace("=", "")
        if name in bindings:
            pattern[k] = bindings[name]
    return pattern


@register("actr", "update_goal", inputs=("production",), outputs=("pattern",), python_only=True)
def update_goal(production: Mapping[str, Any]) -> dict[str, Any]:
    """The pattern with which firing ``production`` updates the goal buffer (``{}`` if none)."""
    return update_buffer(production, "goal")


@register(
    "actr", "update_retrieval", inputs=("production",), outputs=("pattern",), python_only=True
)
def update_retrieval(production: Mapping[str, Any]) -> dict[str, Any]:
    """The retrieval request made by firing ``production`` (``{}`` if none)."""
    return update_buffer(production, "retrieval")


@register(
    "actr", "check_termination", inputs=("production",), outputs=("terminate",), python_only=True
)
def check_termination(production: Any) -> bool:
    """True when no production was selected (the selected production is ``{}``)."""
    return isinstance(production, Mapping) and len(production) == 0
