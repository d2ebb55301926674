"""Progress bars for long runs and sweeps: a tqdm bar on a terminal, nothing otherwise.

``with progress(total, enabled) as bar: ... bar.update(n)`` is what ``Simulation.run`` and the
sweep engine use. The bar is shown only when ``enabled`` is true, the stream (stderr by default)
is a terminal and tqdm is installed; in every other case (``--quiet``, output piped to a file, a
CI log, a Dask worker) the same object is a no-op that only counts, so callers never branch.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["Progress", "progress", "is_terminal"]


def is_terminal(stream: Any) -> bool:
    """True when ``stream`` claims to be an interactive terminal."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None:
        return False
    try:
        return bool(isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


class Progress:
    """A context manager counting completed units, drawing a tqdm bar when one is attached.

    ``n`` is the number of units reported so far (kept whether or not a bar is drawn);
    ``shown`` says whether a bar is drawn.
    """

    def __init__(self, total: int | None, bar: Any = None):
        self.total = total
        self.n = 0
        self._bar = bar

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def update(self, n: int = 1) -> None:
        """Report ``n`` more completed units."""
        self.n += n
        if self._bar is not None:
            self._bar.update(n)

    def set_description(self, text: str) -> None:
        """Change the text in front of the bar (no-op without a bar)."""
        if self._bar is not None:
            self._bar.set_description_str(text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress(
    total: int | None,
    enabled: bool = True,
    *,
    desc: str | None = None,
    unit: str = "step",
    stream: TextIO | None = None,
) -> Progress:
    """A progress context manager for ``total`` units (``None`` if unknown).

    A tqdm bar is written to ``stream`` (default: ``sys.stderr``) only when ``enabled`` and the
    stream is a terminal and tqdm can be imported; otherwise :meth:`Progress.update` only counts.
    """
    out = sys.stderr if stream is None else stream
    if not enabled or not is_terminal(out):
        return Progress(total)
    try:
        from tqdm import tqdm
    except ImportError:
        return Progress(total)
    bar = tqdm(total=total, desc=desc, unit=unit, file=out, dynamic_ncols=True, mininterval=0.2)
    return Progress(total, bar)
