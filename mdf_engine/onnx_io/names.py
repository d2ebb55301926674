"""Names shared by the ONNX importer and exporter: ONNX value/node names made into MDF ids.

MDF ids of ports and parameters are used as variable names inside expressions, so they must be
Python identifiers that the expression checker accepts (no keywords, no reserved module names
such as ``np``, no leading ``__``). ONNX names are free text (``input.1``, ``onnx::Gemm_5``,
``0``). :class:`NamePool` turns each ONNX name into a unique identifier, once.
"""

from __future__ import annotations

import keyword
import re

from ..expressions import RESERVED_NAMES

__all__ = ["NamePool", "identifier"]


def identifier(name: str, fallback: str = "v") -> str:
    """``name`` as an identifier the expression checker accepts (not yet made unique)."""
    s = re.sub(r"\W", "_", str(name))
    if not s:
        s = fallback
    if s[0].isdigit() or s.startswith("__"):
        s = f"{fallback}_{s}"
    if keyword.iskeyword(s) or s in RESERVED_NAMES:
        s += "_"
    return s


class NamePool:
    """Unique identifiers for names, stable per name: ``pool.get("input.1") -> "input_1"``."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.by_name: dict[tuple[str, str], str] = {}
        #: the next suffix to try for each stem (every smaller one is taken: the pool only
        #: grows), so that N names of one stem cost N tries, not N**2 / 2 (30,000 unnamed
        #: ``Relu`` nodes took minutes)
        self.next_suffix: dict[str, int] = {}

    def fresh(self, base: str, fallback: str = "v") -> str:
        """A new identifier built from ``base``, unique in this pool."""
        s = identifier(base, fallback)
        out, k = s, self.next_suffix.get(s, 1)
        while out in self.taken:
            out = f"{s}_{k}"
            k += 1
        self.next_suffix[s] = k
        self.taken.add(out)
        return out

    def get(self, name: str, kind: str = "value", fallback: str = "v") -> str:
        """The identifier of ``name`` in namespace ``kind`` (made on first use)."""
        key = (kind, name)
        if key not in self.by_name:
            self.by_name[key] = self.fresh(name, fallback)
        return self.by_name[key]
