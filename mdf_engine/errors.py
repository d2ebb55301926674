"""The one error type that mdf_engine raises for bad models, bad arguments and bad input.

An :class:`MDFError` message is written for a person: it names the file (when there is one),
the field path inside the model (``graphs.g1.nodes.A.parameters.x.value``) and what was expected.
"""

from __future__ import annotations

import logging
import re

#: Characters that would break a message into lines or drive a terminal (C0/C1 controls,
#: DEL, line/paragraph separators, bidirectional overrides) and lone surrogates (a JSON
#: ``"\\ud800"`` escape: they cannot be written as UTF-8)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


#: The longest piece of model text (a field path, a reason quoting ids) a message or log line
#: shows whole; a longer one (a 2 MB id) shows its start and end
MAX_QUOTED = 2000


def clip(text: str, limit: int = MAX_QUOTED) -> str:
    """``text``, or its start and end around ``...(N characters)...`` if it is longer than
    ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}...({len(text) - 2 * half} characters)...{text[-half:]}"


def one_line(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``): one
    line, and nothing a terminal acts on."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


class _OneLineRecords(logging.Filter):
    """Log lines of the engine name model text (ids, reasons): each stays one line with no
    terminal control sequences."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = one_line(clip(text, 4 * MAX_QUOTED))
        if clean != text:
            record.msg, record.args = clean, ()
        return True


logging.getLogger("mdf_engine").addFilter(_OneLineRecords())


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
            where.append(clip(path))
        message = clip(message, 2 * MAX_QUOTED)
        text = f"{': '.join(where)}: {message}" if where else message
        # model text (ids, expressions) may hold newlines or terminal escapes: the message
        # stays one line
        super().__init__(one_line(text))


#: What evaluating a model's expression or function may raise besides MDFError (Python's and
#: numpy's own failures on the values it meets): each becomes :func:`evaluation_failed`.
EVALUATION_ERRORS = (
    ArithmeticError,
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    MemoryError,
    RecursionError,
)


def evaluation_failed(e: BaseException, path: str) -> MDFError:
    """The MDFError of one of :data:`EVALUATION_ERRORS` raised while evaluating the field at
    ``path``."""
    first = str(e).split("\n", 1)[0]  # (Numba adds lines naming its own source)
    return MDFError(f"evaluation failed: {type(e).__name__}: {first}", path)


class UnsupportedOperatorError(MDFError, NotImplementedError):
    """An operator that is registered by name but whose semantics are not implemented."""


class NotCompilable(Exception):
    """Internal to the compiled backend: a part of a graph it cannot compile (a condition, a
    function without a Numba kernel, a value that is not numeric). The graph then runs on the
    interpreted backend, with a log line giving this message; users never see it raised."""
