"""PsyNeuLink's combination functions (namespace ``pnl``).

* ``linearcombination``: items of ``variable0`` (axis 0) raised to ``exponents``, multiplied by
  ``weights`` (one per item), combined by ``operation`` ("sum" or "product") across items, then
  ``*scale + offset``; a 0-d/1-d variable is just ``variable0*scale + offset``; items of shape
  ``(1, n)`` (ports declared 2-d) are PsyNeuLink's ``(n,)`` items.
* ``reduce``: the same on the elements of each item (axis 1 of the variable made 2-d).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from ...registry import register
from ._common import SINCE, f64


def _operation(operation: Any, where: str) -> str:
    op = str(operation).lower().replace("_", "-")
    if op not in ("sum", "product"):
        raise MDFError(f"{where}: operation must be 'sum' or 'product', got {operation!r}")
    return op


def _weighted(v: np.ndarray, weights: Any, exponents: Any, item_axis: int) -> np.ndarray:
    """``v**exponents * weights``, a 1-d weight/exponent vector applying one value per item."""

    def shaped(p: Any) -> np.ndarray:
        p = f64(p)
        if p.ndim == 1 and v.ndim == 2 and item_axis == 0 and p.shape[0] == v.shape[0]:
            return p.reshape(-1, 1)
        return p

    if exponents is not None:
        v = v ** shaped(exponents)
    if weights is not None:
        v = v * shaped(weights)
    return v


def _scaled(v: np.ndarray, scale: Any, offset: Any) -> np.ndarray:
    """``v * scale + offset`` (an omitted scale is 1, an omitted offset 0)."""
    return v * (1.0 if scale is None else f64(scale)) + (0.0 if offset is None else f64(offset))


def _combined(v: np.ndarray, axis: int, op: str, scale: Any, offset: Any) -> np.ndarray:
    """``v`` (2-d, already weighted) summed or multiplied along ``axis``, then scaled."""
    return _scaled(v.sum(axis=axis) if op == "sum" else v.prod(axis=axis), scale, offset)


#: the schema both functions share: one variable, the same attributes, one output
_SCHEMA: dict[str, Any] = {
    "inputs": ("variable0",),
    "attributes": {
        "weights": None,
        "exponents": None,
        "operation": "sum",
        "scale": 1.0,
        "offset": 0.0,
    },
    "outputs": ("out",),
    "since": SINCE,
    "python_only": True,
}


@register("pnl", "linearcombination", **_SCHEMA)
def linearcombination(
    variable0: Any,
    *,
    weights: Any = None,
    exponents: Any = None,
    operation: Any = "sum",
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """Combine the items of variable0 (axis 0) elementwise; see the module docstring."""
    v = f64(variable0)
    op = _operation(operation, "linearcombination")
    if v.ndim < 2:  # one item: nothing to combine
        return _scaled(v, scale, offset)
    if v.ndim == 3 and v.shape[1] == 1:  # items read from (1, n) ports: PsyNeuLink's are (n,)
        v = v[:, 0, :]
    return _combined(_weighted(v, weights, exponents, 0), 0, op, scale, offset)


@register("pnl", "reduce", **_SCHEMA)
def reduce(
    variable0: Any,
    *,
    weights: Any = None,
    exponents: Any = None,
    operation: Any = "sum",
    scale: Any = 1.0,
    offset: Any = 0.0,
) -> np.ndarray:
    """Combine the elements of each item of variable0 (axis 1 of it made 2-d)."""
    v = np.atleast_2d(f64(variable0))
    op = _operation(operation, "reduce")
    return _combined(_weighted(v, weights, exponents, 1), 1, op, scale, offset)
