"""The integer tables of a compiled ACT-R production system (see :mod:`mdf_engine.actr.compiled`).

Model text is data: every string of the chunks, productions and goals is interned into an
integer id of one :class:`Symbols` table, and the Numba kernels of :mod:`.kernels` only ever see
integer arrays built here:

* a **dict** (a goal, a goal pattern, a retrieval request) is one row of the int64 matrix ``D``:
  ``[n, key0, value0, key1, value1, ...]`` in the dict's order (``n``: how many items);
* a **chunk of declarative memory** is one row of ``dm_rows``: position -> value id (-1: no
  value at that position), the positional slot table the matcher reads (``chunk_to_string``);
  the chunk it gives when retrieved is ``ret_rows`` (kept as a Python dict for the outputs);
* a **production** is a run of rows of the test table (kind, buffer, position, literal id or
  variable number), in the order :func:`mdf_engine.actr.functions._compile` makes them, and
  two templates (goal and retrieval patterns of its right-hand side: key, literal id, variable
  number or -1).

The pattern language is compiled by the interpreter's own compiler (``functions._compile``), so
both backends read a pattern alike. Every value a kernel may tokenise must be an *atom*: a
string without white space or ``:`` not starting with ``?``, which reads as at most one term of
the pattern language (:func:`atom_term`); a model whose values are not all atoms is not compiled
(the interpreter runs it), and an input dict that is not is refused with an MDFError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import MDFError
from .functions import _chunk_table, _compile, _production_tests, retrieve_chunk

#: kinds of a test or of a term of a retrieval request (kernels.py reads the same numbers)
WILD, IS, IS_NOT, BIND, SAME, DIFFER = 0, 1, 2, 3, 4, 5
#: buffers a test reads
GOAL, RETRIEVAL = 0, 1
_KINDS = {"is": IS, "is_not": IS_NOT, "bind": BIND, "same": SAME, "differ": DIFFER}
#: rows of the dict matrix D
GOAL_IN, DM_IN, CHANGE_GOAL, GOAL_STATE, OUT_GOAL, OUT_RETRIEVAL, FIRST_GOAL = range(7)
DICT_ROWS = 7
#: per-chunk flags: its slot table cannot be read / it does not fit its chunk type
BAD_TABLE, BAD_TYPE = 1, 2


class NotCompilable(Exception):
    """The model is outside what the compiled ACT-R kernels run (the message says why)."""


def atom_term(s: Any) -> tuple[int, str] | None:
    """``(kind, argument)`` of ``s`` read as one value of a retrieval request (``WILD``,
    ``IS``/``IS_NOT`` a literal, ``BIND`` a variable, ``DIFFER`` a negated variable); None if
    ``s`` is not an atom."""
    if not isinstance(s, str) or s.split() != [s] or ":" in s or s.startswith("?"):
        return None
    text = s.replace("-=", "!?").replace("=", "?")
    if text == "?":
        return WILD, ""
    try:
        tests = _compile(((None, text),))
    except MDFError:
        return None
    if len(tests) != 1 or tests[0][2] != 0:
        return None
    kind, _, _, arg = tests[0]
    return _KINDS[kind], arg


class Symbols:
    """Strings interned as ids, with each id's reading as a term of a retrieval request
    (``kind``/``arg``; kind -1: not an atom)."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.ids: dict[str, int] = {}
        self._kind: list[int] = []
        self._arg: list[int] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def id(self, s: str) -> int:
        """The id of ``s`` (interned now if new)."""
        found = self.ids.get(s)
        if found is not None:
            return found
        if not isinstance(s, str):
            raise TypeError(type(s).__name__)
        k = len(self.strings)
        self.ids[s] = k
        self.strings.append(s)
        self._kind.append(-1)
        self._arg.append(-1)
        term = atom_term(s)
        if term is not None:
            self._kind[k] = term[0]
            self._arg[k] = self.id(term[1]) if term[0] != WILD else -1
        self._arrays = None
        return k

    def is_atom(self, k: int) -> bool:
        return self._kind[k] >= 0

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(kind, arg)`` of every id, as the kernels read them."""
        if self._arrays is None:
            self._arrays = (
                np.array(self._kind, dtype=np.int64),
                np.array(self._arg, dtype=np.int64),
            )
        return self._arrays


def _positional(table: Mapping[Any, str], sym: Symbols, what: str) -> list[int]:
    """A slot table as position -> value id (-1: none); named slots are never read (every
    test of a compiled model is positional)."""
    width = 1 + max((k for k in table if isinstance(k, int)), default=-1)
    row = [-1] * width
    for k, v in table.items():
        if isinstance(k, int):
            row[k] = sym.id(v)
            if not sym.is_atom(row[k]):
                raise NotCompilable(
                    f"{what} holds {v!r}, which is not one word of the pattern language"
                )
    return row


def _matrix(rows: Sequence[Sequence[int]], width: int | None = None) -> np.ndarray:
    w = max([len(r) for r in rows] + [1 if width is None else width])
    out = np.full((max(1, len(rows)), w), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


class Tables:
    """The constant tables of one ACT-R graph and the encoding of its dicts.

    ``chunks``, ``types``, ``productions`` and ``first_goal`` are the values the interpreter
    holds for those parameters; ``initial_goal`` the goal state before the first cycle."""

    def __init__(
        self,
        chunks: Sequence[Any],
        types: Any,
        productions: Sequence[Any],
        first_goal: Any,
        initial_goal: Any,
    ):
        self.sym = sym = Symbols()
        self.NAME, self.BUFFER = sym.id("name"), sym.id("buffer")
        self.productions = list(productions)
        # declarative memory: slot tables, retrieved chunks and their slot tables
        dm_rows, ret_rows, flags, self.retrieved, self.dm_errors = [], [], [], [], []
        for c, chunk in enumerate(chunks):
            what = f"declarative memory chunk {c}"
            flag, err, got, row, rrow = 0, None, None, [], []
            try:
                row = _positional(_chunk_table(chunk, "a declarative memory chunk"), sym, what)
                try:
                    got = retrieve_chunk({"buffer": ""}, [chunk], types)
                    rrow = _positional(_chunk_table(got, "the retrieval chunk"), sym, what)
                except MDFError as e:
                    flag, err = BAD_TYPE, e
            except MDFError as e:
                flag, err = BAD_TABLE, e
            dm_rows.append(row)
            ret_rows.append(rrow)
            flags.append(flag)
            self.retrieved.append(got)
            self.dm_errors.append(err)
        self.dm_rows, self.ret_rows = _matrix(dm_rows), _matrix(ret_rows)
        self.dm_flags = np.array(flags + [0], dtype=np.int64)
        self.n_chunks = len(dm_rows)
        self._productions()
        self.first_goal = self._dict(first_goal, "the first goal", free=("name",))
        self.initial_goal = self._dict(initial_goal, "the initial goal state", free=("name",))

    # -- productions ----------------------------------------------------------------------
    def _productions(self) -> None:
        sym = self.sym
        tests: list[list[int]] = []
        starts, never, self.var_names = [], [], []
        templates: dict[str, list] = {"goal": [], "retrieval": []}
        for p, production in enumerate(self.productions):
            where = f"production {p}"
            try:
                ptests = _production_tests(production)
            except MDFError as e:
                raise NotCompilable(f"{where}: {e.message}") from None
            names: list[str] = []
            rows, dead = [], 0
            for kind, buf, key, arg in ptests:
                if buf not in ("goal", "retrieval"):
                    dead = 1  # a buffer the context lacks: the production never matches
                if not isinstance(key, int):
                    raise NotCompilable(f"{where} tests the named slot {key!r}")
                if kind == "bind":
                    names.append(arg)
                    a = len(names) - 1
                elif kind in ("same", "differ"):
                    a = names.index(arg) if arg in names else -1
                else:
                    a = sym.id(arg)
                rows.append([_KINDS[kind], GOAL if buf == "goal" else RETRIEVAL, key, a])
            starts.append(len(tests))
            tests.extend(rows)
            never.append(dead)
            self.var_names.append(names)
            for buffer, first_free in (("goal", False), ("retrieval", True)):
                templates[buffer].append(self._template(production, buffer, names, first_free))
        starts.append(len(tests))
        self.test_rows = _matrix(tests, 4)
        self.test_start = np.array(starts, dtype=np.int64)
        self.never = np.array(never + [0], dtype=np.int64)
        self.n_vars = max([len(n) for n in self.var_names] + [1])
        self.tg_key, self.tg_val, self.tg_ref, self.tg_n = _templates(templates["goal"])
        self.tr_key, self.tr_val, self.tr_ref, self.tr_n = _templates(templates["retrieval"])

    def _template(
        self, production: Any, buffer: str, names: list[str], first_free: bool
    ) -> list[tuple[int, int, int]]:
        """``update_buffer``'s pattern for ``buffer`` as (key, literal, variable) items."""
        rhs = production.get("rhs") if isinstance(production, Mapping) else None
        if not isinstance(rhs, Sequence) or isinstance(rhs, str):
            raise NotCompilable("a production has no list of right-hand-side patterns 'rhs'")
        pattern: dict = {}
        for p in rhs:
            if not isinstance(p, Mapping):
                raise NotCompilable(f"a right-hand-side pattern is not a dict: {p!r}")
            if p.get("buffer") == buffer:
                pattern = dict(p)
        items = []
        for i, (k, v) in enumerate(pattern.items()):
            if not isinstance(k, str) or not isinstance(v, str):
                raise NotCompilable(f"a right-hand-side pattern holds {k!r}: {v!r}")
            name = v.replace("=", "")
            ref = names.index(name) if name in names else -1
            lit = self.sym.id(v)
            free = (i == 0) if first_free else k in ("name", "buffer")
            if ref < 0 and not free and not self.sym.is_atom(lit):
                raise NotCompilable(f"a right-hand-side pattern holds {v!r}, not one word")
            items.append((self.sym.id(k), lit, ref))
        return items

    # -- dicts --------------------------------------------------------------------------------
    def _dict(self, d: Any, what: str, free: tuple[str, ...] = (), first_free: bool = False):
        """``d`` as (key id, value id) pairs; values outside ``free`` keys (and the first one
        if ``first_free``) must be atoms."""
        if not isinstance(d, Mapping):
            raise NotCompilable(f"{what} is not a dict")
        out = []
        for i, (k, v) in enumerate(d.items()):
            if not isinstance(k, str) or not isinstance(v, str):
                raise NotCompilable(f"{what} holds {k!r}: {v!r}, not text")
            kid, vid = self.sym.id(k), self.sym.id(v)
            if not (k in free or (first_free and i == 0) or self.sym.is_atom(vid)):
                raise NotCompilable(f"{what} holds {v!r}, which is not one word")
            out.append((kid, vid))
        return out

    def encode_input(self, d: Any, port: str) -> list[tuple[int, int]]:
        """An input dict (``goal_input`` or ``dm_input``) as items, or an MDFError."""
        try:
            if port == "goal_input":
                return self._dict(d, "goal_input", free=("name", "buffer"))
            return self._dict(d, "dm_input", first_free=True)
        except NotCompilable as e:
            raise MDFError(
                f"the compiled ACT-R backend takes a dict of words (text without spaces or "
                f"':', not starting with '?'): {e} (backend='interpreted' runs it)",
                f"input_ports.{port}",
            ) from None

    @property
    def width(self) -> int:
        """Items a dict row can hold: every key interned so far could be one."""
        return len(self.sym.strings)

    def write(self, D: np.ndarray, row: int, items: list[tuple[int, int]]) -> None:
        D[row, 0] = len(items)
        for i, (k, v) in enumerate(items):
            D[row, 1 + 2 * i] = k
            D[row, 2 + 2 * i] = v

    def read(self, D: np.ndarray, row: int) -> dict[str, str]:
        """Row ``row`` of ``D`` as the dict it encodes."""
        s, r = self.sym.strings, D[row]
        return {s[r[1 + 2 * i]]: s[r[2 + 2 * i]] for i in range(int(r[0]))}

    def bindings(self, p: int, values: np.ndarray) -> dict[str, str]:
        s = self.sym.strings
        return {n: s[values[j]] for j, n in enumerate(self.var_names[p])}


def _templates(items: list[list[tuple[int, int, int]]]) -> tuple[np.ndarray, ...]:
    keys = _matrix([[k for k, _, _ in t] for t in items])
    vals = _matrix([[v for _, v, _ in t] for t in items])
    refs = _matrix([[r for _, _, r in t] for t in items])
    n = np.array([len(t) for t in items] + [0], dtype=np.int64)
    return keys, vals, refs, n
