"""The registration shortcut of the Hexagon backend: ``@hexop("Op", inputs=..., ...)`` registers a
kernel as ``hexagon::Op`` with a ``padding`` attribute (the node's padding_type) and the
document's input and output names."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..registry import register

Q8_OUT = ("output", "output_min", "output_max")


def hexop(
    op: str,
    inputs: Iterable[str] = (),
    outputs: Iterable[str] = Q8_OUT,
    optional: Iterable[str] = (),
    padding: str = "NA",
    variadic: bool = False,
    python_only: bool = False,
    unsupported: bool = False,
    **attributes: Any,
) -> Callable[[Callable[..., Any]], Any]:
    """Register the decorated kernel as ``hexagon::op``; every kernel takes ``padding=``.
    ``unsupported=True`` marks an op registered by name only (its kernel raises)."""
    return register(
        "hexagon",
        op,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        optional=tuple(optional),
        variadic=variadic,
        python_only=python_only,
        attributes={"padding": padding, **attributes},
        unsupported=unsupported,
    )
