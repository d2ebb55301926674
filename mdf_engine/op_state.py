"""State that an operator keeps across the ``evaluate()`` calls of one simulation.

A few registered functions mean to keep data between calls (Hexagon's ``Variable``/``Assign``: a
later reader sees what an Assign wrote). Kernels stay plain functions; the runner of a graph owns
one dict per simulation and binds it while it evaluates, and such a kernel reads it with
:func:`current`. Outside a simulation (a kernel called directly) there is no store unless the
caller binds one with :func:`bound`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_STORE: ContextVar[dict[Any, Any] | None] = ContextVar("mdf_op_state", default=None)


def current() -> dict[Any, Any] | None:
    """The op-state dict of the simulation being evaluated, or None outside one."""
    return _STORE.get()


@contextmanager
def bound(store: dict[Any, Any]) -> Iterator[dict[Any, Any]]:
    """Make ``store`` the op-state dict for the calls made inside the ``with`` block."""
    token = _STORE.set(store)
    try:
        yield store
    finally:
        _STORE.reset(token)
