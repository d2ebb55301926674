"""The log lines and Python warnings of one ``mdf`` command on stderr.

A command that fails prints exactly one line (``mdf: error: ...``); the warnings that came
before it (a field no MDF version defines, a warning of a library) would make it several, and
a Python warning is printed as two lines (the warning and its source line). So, unless ``-v``
asks to see them as they come, the lines of a command are held: a command that succeeds
prints them after its work, a failing one leaves them out and its one line says how many
there were. Every line is ``mdf: ...`` with model text escaped (:func:`errors.one_line`).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Iterator

from ..errors import one_line


class HeldLines(logging.Handler):
    """A handler that writes each record as one ``mdf: ...`` line on stderr, or holds it."""

    def __init__(self, hold: bool) -> None:
        super().__init__()
        self.hold = hold
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = "mdf: " + one_line(record.getMessage())
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left out
            return
        if self.hold:
            self.lines.append(line)
        else:
            print(line, file=sys.stderr)

    def print_held(self) -> None:
        """Print the held lines (the command succeeded)."""
        for line in self.lines:
            print(line, file=sys.stderr)
        self.lines.clear()

    def drop(self) -> str:
        """Forget the held lines (the command failed); a note for its one line, or ''."""
        n = len(self.lines)
        self.lines.clear()
        return f" ({n} earlier warning(s) not shown; -v shows them)" if n else ""


@contextlib.contextmanager
def command_lines(level: int, verbose: bool) -> Iterator[HeldLines | None]:
    """Log lines (and Python warnings) of one command go to a :class:`HeldLines` on the root
    logger, which holds them unless ``verbose``. When the root logger already has a handler
    (``mdf`` called from a program that configured logging), its configuration is kept and
    this yields None."""
    root = logging.getLogger()
    if root.handlers:
        yield None
        return
    handler = HeldLines(hold=not verbose)
    saved_level, saved_show = root.level, warnings.showwarning
    root.addHandler(handler)
    root.setLevel(level)
    log = logging.getLogger("mdf_engine")

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        log.warning("%s: %s", category.__name__, message)

    warnings.showwarning = show
    try:
        yield handler
    finally:
        warnings.showwarning = saved_show
        root.removeHandler(handler)
        root.setLevel(saved_level)
