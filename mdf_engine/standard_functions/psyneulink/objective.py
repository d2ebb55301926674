"""PsyNeuLink's objective functions (namespace ``pnl``).

* ``distance``: ``metric`` between the two items of ``variable0``: ``max_abs_diff``,
  ``difference`` (sum of absolute differences), ``dot_product``, ``euclidean``, ``cosine``
  (``1 - |cos|``), ``correlation`` (``1 - |r|``), ``cross-entropy``, ``energy``
  (``-sum(v1*v2)/2``); ``normalize`` divides by the length (its square for energy; not for
  max_abs_diff/cosine/correlation).
* ``energy(variable0, matrix) = -sum(v * ((matrix with zero diagonal) @ v)) / 2`` (``normalize``
  divides by ``len(v)**2``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64

_METRICS = (
    "max_abs_diff",
    "difference",
    "dot_product",
    "euclidean",
    "cosine",
    "correlation",
    "cross-entropy",
    "energy",
)


def _two_items(variable0: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    v = variable0
    if isinstance(v, np.ndarray) and v.dtype != object:
        if v.shape[0] != 2:
            raise MDFError(f"{where}: variable0 must hold two items, got shape {v.shape}")
        return f64(v[0]).reshape(-1), f64(v[1]).reshape(-1)
    if len(v) != 2:
        raise MDFError(f"{where}: variable0 must hold two items, got {len(v)}")
    return f64(np.hstack(v[0])).reshape(-1), f64(np.hstack(v[1])).reshape(-1)


@register(
    "pnl",
    "distance",
    inputs=("variable0",),
    attributes={"metric": "difference", "normalize": False},
    outputs=("out",),
    since=SINCE,
    python_only=True,
)
def distance(variable0: Any, *, metric: Any = "difference", normalize: Any = False) -> np.ndarray:
    """The ``metric`` between the two items of variable0 (see the module docstring)."""
    a, b = _two_items(variable0, "distance")
    m = str(metric).lower().replace("_", "-").replace("-", "_")
    m = "cross-entropy" if m in ("cross_entropy", "crossentropy") else m
    m = "cosine" if m == "cosine_similarity" else m
    if m not in _METRICS:
        raise MDFError(
            f"distance: unknown metric {metric!r} (expected one of {', '.join(_METRICS)})"
        )
    if m == "max_abs_diff":
        r = np.max(np.abs(a - b))
    elif m == "difference":
        r = np.sum(np.abs(a - b))
    elif m == "dot_product":
        r = np.dot(a, b)
    elif m == "euclidean":
        r = np.sqrt(np.sum((b - a) ** 2))
    elif m == "cosine":
        r = 1.0 - abs(np.dot(a, b) / (np.sqrt(np.dot(a, a)) * np.sqrt(np.dot(b, b))))
    elif m == "correlation":
        da, db = a - a.mean(), b - b.mean()
        r = 1.0 - abs(np.sum(da * db) / np.sqrt(np.sum(da * da) * np.sum(db * db)))
    elif m == "cross-entropy":
        both = (a == 0) & (b == 0)
        safe_b = np.where(both, 1.0, b)
        r = -np.sum(np.where(both, 0.0, a * np.log(safe_b)))
    else:
        r = -np.sum(a * b) / 2.0
    if normalize and m not in ("max_abs_diff", "cosine", "correlation"):
        r = r / (len(a) ** 2 if m == "energy" else len(a))
    return np.asarray(r, dtype=np.float64)


@njit(cache=True)
def _energy_core(v, matrix, normalize):
    """The energy of the flat ``v`` under ``matrix`` (its diagonal skipped; None: -1 off
    the diagonal)."""
    n = v.shape[0]
    total = 0.0
    for i in range(n):
        acc = 0.0
        for j in range(n):
            if i != j:
                acc += (-1.0 if matrix is None else matrix[i, j]) * v[j]
        total += v[i] * acc
    r = -total / 2.0
    if normalize:
        r = r / (n * n)
    return r


@njit(cache=True)
def _energy_jit(variable0, matrix, normalize):
    """``energy`` in nopython code (the compiled loop): variable0 of any shape, read flat.
    The warm-up ran the Python kernel on the same shapes, which checked the matrix's."""
    return _energy_core(np.asarray(variable0).ravel(), matrix, normalize)


@register(
    "pnl",
    "energy",
    inputs=("variable0",),
    attributes={"matrix": None, "normalize": False},
    outputs=("out",),
    since=SINCE,
    jit=_energy_jit,
)
def energy(variable0: Any, *, matrix: Any = None, normalize: Any = False) -> np.ndarray:
    """-sum(v * (hollow(matrix) @ v)) / 2; matrix defaults to -1 off the diagonal."""
    v = f64(variable0).reshape(-1)
    n = v.shape[0]
    m = None if matrix is None else np.ascontiguousarray(f64(matrix))
    if m is not None and m.shape != (n, n):
        raise MDFError(
            f"energy: matrix must be {n}x{n} for a variable of length {n}, got shape {m.shape}"
        )
    return np.asarray(_energy_core(v, m, bool(normalize)))
