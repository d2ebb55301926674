"""What may appear in the Python source the compiled backend writes, and the constant table.

The compiled backend writes a Python module for every graph and jits it with Numba. Model text
(ids, expression strings, attribute values) must never become part of that source: an id
holding a newline and Python statements would otherwise run when the module is imported.
So the generated source holds only

* names the engine made (``s3``, ``a0``, ``c12``, ``F2``, ``q_u1_0``, ...) and the names of
  the engine's own helpers, numpy/math functions of the expression whitelist and Python
  keywords;
* whole numbers the engine computed (slot indices, shapes, node indices, loop bounds);
* comments and strings of a few fixed engine forms.

Every number, string and array that comes from the model (an expression's literals, a
parameter's constant value, a kernel's attribute, a function's registered name) is an entry of
a :class:`ConstantTable`: the source names it ``c<k>``, and the module loads the table from an
``.npz`` file (``allow_pickle=False``) next to it. Numba freezes such module globals into the
machine code, so a table constant costs what a literal costs; a large array is therefore not a
table entry but a read-only array of the compiled state (:mod:`.constants`).

:func:`check_source` enforces all of this on every generated module before it is written: a
token of any other kind is an engine bug, reported as :class:`GeneratedSourceError`.
"""

from __future__ import annotations

import hashlib
import io
import keyword
import re
import tokenize
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MDFError
from ...expressions import MATH_FUNCTIONS, NUMPY_CONSTANTS, NUMPY_FUNCTIONS
from .helpers import HELPERS
from .layout import SLOT_DTYPES, array_dtype, numba_type

#: Integers the table keeps as 64-bit (larger ones cannot be compiled).
_INT64 = (-(2**63), 2**63 - 1)


def _kept_dtype(dtype: np.dtype) -> type:
    """The dtype the table holds an array of ``dtype`` in (that of a compiled slot)."""
    return array_dtype(np.empty(0, dtype=dtype))


class GeneratedSourceError(MDFError):
    """The compiled backend wrote source holding a token it does not make itself (a bug)."""


class ConstantTable:
    """The numbers, strings and arrays a generated module reads by name (``c<k>``)."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[tuple, str] = {}

    def __len__(self) -> int:
        return len(self.values)

    def _add(self, key: tuple, value: Any) -> str:
        name = self._index.get(key)
        if name is None:
            name = f"c{len(self.values)}"
            self.values.append(value)
            self._index[key] = name
        return name

    def number(self, value: Any) -> str:
        """The name of a number (a Python ``int``, ``float`` or ``complex``)."""
        from ...errors import NotCompilable

        if isinstance(value, (bool, np.bool_)):
            return "True" if value else "False"
        if isinstance(value, (int, np.integer)):
            v = int(value)
            if not _INT64[0] <= v <= _INT64[1]:
                raise NotCompilable("an integer constant does not fit in 64 bits")
            return self._add(("i", v), v)
        if isinstance(value, (float, np.floating)):
            v = float(value)
            # keyed by bits: 0.0 and -0.0 (and every NaN payload) stay apart
            return self._add(("f", np.float64(v).tobytes()), v)
        if isinstance(value, (complex, np.complexfloating)):
            v = complex(value)
            return self._add(("z", np.complex128(v).tobytes()), v)
        raise NotCompilable(f"constant of type {type(value).__name__}")

    def text(self, value: str) -> str:
        """The name of a string."""
        return self._add(("s", str(value)), str(value))

    def array(self, value: np.ndarray) -> str:
        """The name of an array (float32, float64, integer and boolean arrays keep their
        dtype, other numbers are float64; equal arrays share an entry)."""
        arr = np.array(value, dtype=_kept_dtype(np.asarray(value).dtype))
        return self._add(("a", arr.dtype.str, arr.shape, arr.tobytes()), arr)

    def digest(self) -> str:
        """A hash of the table's content (part of the module's source, so that a module and
        Numba's cache of it always belong to one table)."""
        h = hashlib.sha256()
        for v in self.values:
            h.update(type(v).__name__.encode())
            h.update(
                np.asarray(v).tobytes()
                if not isinstance(v, str)
                else v.encode("utf-8", "surrogatepass")
            )
            h.update(b"\x00")
        return h.hexdigest()[:24]

    def header(self) -> list[str]:
        """The module lines that bind every table entry to its name."""
        lines = [
            "from mdf_engine.backends.compiled.generated_source import load_constants",
            "T_ = load_constants(__file__)",
        ]
        return lines + [f"c{k} = T_[{k}]" for k in range(len(self.values))]

    def save(self, path: Path) -> None:
        """Write the table to ``path`` (an ``.npz``)."""
        kinds, arrays = [], {}
        for k, v in enumerate(self.values):
            if isinstance(v, str):
                kinds.append("s")
                arrays[f"v{k}"] = np.frombuffer(v.encode("utf-8", "surrogatepass"), np.uint8)
            elif isinstance(v, np.ndarray):
                kinds.append("a")
                arrays[f"v{k}"] = v
            else:
                kinds.append({int: "i", float: "f", complex: "z"}[type(v)])
                arrays[f"v{k}"] = np.array(v)
        with open(path, "wb") as f:
            np.savez(f, kinds=np.array("".join(kinds)), **arrays)


def load_constants(module_file: str) -> list[Any]:
    """The constant table of the generated module ``module_file`` (the ``.npz`` beside it)."""
    path = Path(module_file).with_suffix(".npz")
    out: list[Any] = []
    with np.load(path, allow_pickle=False) as z:
        kinds = str(z["kinds"])
        for k, kind in enumerate(kinds):
            v = z[f"v{k}"]
            if kind == "s":
                out.append(v.astype(np.uint8).tobytes().decode("utf-8", "surrogatepass"))
            elif kind == "a":
                out.append(np.ascontiguousarray(v, dtype=_kept_dtype(v.dtype)))
            else:
                out.append({"i": int, "f": float, "z": complex}[kind](v.item()))
    return out


# -- the check ------------------------------------------------------------------------------

#: Names the engine writes itself (helpers, arguments, locals, module attributes used).
ENGINE_NAMES = frozenset(HELPERS).union(
    """math np numpy numba njit prange objmode _jit _python_kernel
    _like _list _pymax _pymin _pywon pybuiltins _draw draws rng
    load_constants mdf_engine backends compiled generated_source runtime helpers pipeline T_
    __file__
    run run_quiet run_batch inputs nsteps dt dt_given first_without_dt S useable total clock
    last_set ever thr logbuf logpos err P rec step has_dt i_ e_ k_ b S0 thr0 PT REC ERR
    range float int abs min max round pow sum len bool cache error_model parallel
    no_cpython_wrapper no_cfunc_wrapper
    copy shape zeros int64 bool_ float64 view ascontiguousarray reshape dot array isfinite all
    nan inf""".split(),
    keyword.kwlist,
)

#: numpy/math attribute names an expression may reach (the whitelist of expressions.py).
_ATTRIBUTES = (
    frozenset(NUMPY_FUNCTIONS)
    | frozenset(NUMPY_CONSTANTS)
    | frozenset(MATH_FUNCTIONS)
    | frozenset(
        "arcsin arccos arctan arctan2 arcsinh arccosh arctanh power "
        "abs trunc erf erfc gamma lgamma".split()
    )
)

#: Keyword arguments an expression's call may pass in compiled code.
KEYWORDS = {
    k: k
    for k in "axis keepdims dtype shape fill_value reps axes ord num endpoint "
    "decimals ddof k a_min a_max out".split()
}

_ENGINE_NAME = re.compile(
    r"^(?:[sacFI]\d+|PY\d+|node_\d+|part_\d+|a\d+_0|[tr]_\d+(?:_\d+)*|p_\d+_\d+|"
    r"q_[a-z]+\d*(?:_\d+)?)$"
)
_ENGINE_COMMENT = re.compile(
    r"^# (?:node \d+|condition \d+|consideration set \d+: nodes \[[\d, ]*\]|"
    r"kernels: [0-9a-f]+|constants: [0-9a-f]+)$"
)
_ENGINE_STRING = re.compile(
    r"^(?:'(?:"
    + "|".join(sorted(numba_type(d) for d in SLOT_DTYPES))
    + r")(?:\[[:, 1]*\])?'|'numpy'|"
    r"\"\"\"Generated by mdf_engine\.backends\.compiled[^\"\\]*\"\"\")$"
)
_ENGINE_NUMBER = re.compile(r"^(?:\d+|\d+\.\d+)$")


def check_source(source: str) -> None:
    """Raise :class:`GeneratedSourceError` unless every token of ``source`` is one the engine
    makes (see the module docstring)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError) as e:
        raise GeneratedSourceError(f"generated source does not tokenize ({e})") from None
    prev = None
    for tok in tokens:
        kind, text = tok.type, tok.string
        bad = False
        if kind == tokenize.NAME:
            if prev is not None and prev.string == ".":
                bad = text not in _ATTRIBUTES and text not in ENGINE_NAMES
            else:
                bad = (
                    text not in ENGINE_NAMES
                    and not _ENGINE_NAME.match(text)
                    and text not in KEYWORDS
                )
        elif kind == tokenize.COMMENT:
            bad = not _ENGINE_COMMENT.match(text)
        elif kind == tokenize.STRING:
            bad = not _ENGINE_STRING.match(text)
        elif kind == tokenize.NUMBER:
            bad = not _ENGINE_NUMBER.match(text)
        elif kind == tokenize.ERRORTOKEN:
            bad = True
        if bad:
            raise GeneratedSourceError(
                f"internal error: the compiled backend wrote a {tokenize.tok_name[kind]} token "
                f"{text[:40]!r} at line {tok.start[0]} that it does not make; please report it"
            )
        if kind not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev = tok
