"""Short text for values that may be large: what ``mdf run`` and ``mdf info`` print.

A value with more than :data:`MAX_ELEMENTS` elements (a weight matrix, an image batch) is shown
as its shape, dtype and range, ``array(shape=(512, 1000), dtype=float32, min=-0.41,
max=0.52)``; smaller values are shown whole. ``full=True`` shows every value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Values with more elements than this are summarised.
MAX_ELEMENTS = 16


def summarize(value: Any, full: bool = False) -> str:
    """``value`` as text: whole when small or ``full``, else its shape, dtype and range."""
    from .results import plain

    if full or isinstance(value, (str, bytes, bool, int, float, type(None))):
        return str(plain(value))
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        return _shorten(str(plain(value)))
    if arr.dtype == object or arr.size <= MAX_ELEMENTS:
        return _shorten(str(plain(value)))
    text = f"array(shape={arr.shape}, dtype={arr.dtype}"
    if arr.dtype.kind in "biuf":
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        if finite.size:
            text += f", min={finite.min():.6g}, max={finite.max():.6g}"
        if finite.size < arr.size:
            text += f", {arr.size - finite.size} not finite"
    return text + ")"


def _shorten(text: str, limit: int = 400) -> str:
    """At most ``limit`` characters of ``text`` (an object array or a long list)."""
    return text if len(text) <= limit else text[: limit - 20] + f"... ({len(text)} chars)"
