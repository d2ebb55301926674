"""The one error type that mdf_engine raises for bad models, bad arguments and bad input.

An :class:`MDFError` message is written for a person: it names the file (when there is one),
the field path inside the model (``graphs.g1.nodes.A.parameters.x.value``) and what was expected.
"""

from __future__ import annotations


class MDFError(ValueError):
    """A model, an argument or an input that mdf_engine cannot accept.

    ``path`` is the dotted field path of the offending field (may be empty), ``source`` the
    file it came from (may be None).
    """

    def __init__(self, message: str, path: str = "", source: str | None = None):
        self.message = message
        self.path = path
        self.source = source
        where = []
        if source:
            where.append(str(source))
        if path:
            where.append(path)
        text = f"{': '.join(where)}: {message}" if where else message
        super().__init__(text)


class UnsupportedOperatorError(MDFError, NotImplementedError):
    """An operator that is registered by name but whose semantics are not implemented."""


class NotCompilable(Exception):
    """Internal to the compiled backend: a part of a graph it cannot compile (a condition, a
    function without a Numba kernel, a value that is not numeric). The graph then runs on the
    interpreted backend, with a log line giving this message; users never see it raised."""
