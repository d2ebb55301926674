"""Graph state and printing: Variable, Assign and the PPrint family.

``Variable`` holds tensors that live as long as the simulation (hexagon "graph preparation" is the
first call): its outputs are references to the stored arrays, not copies, and ``Assign`` writes a
new value into such a reference in place, so every later reader of the Variable -- in this
``evaluate()`` or a later one -- sees it. A Variable is identified by its ``name`` attribute
(the hexagon node id); the store is the simulation's op state (:mod:`mdf_engine.op_state`), bound
by the interpreter for each ``evaluate()`` (a direct caller binds one with ``op_state.bound``).
An Assign's variable inputs must be a Variable's outputs themselves (same node), not values
computed from them.

``PPrint_*`` log the tensor (optionally limited to ``start <= i < stop`` on one dimension)
through :mod:`logging` (logger ``mdf_engine.hexagon``, level INFO) and pass the input through as
their one output. The plain layout has no padding, so PPrintWithPadding_8_d32 shows the data.
"""

from __future__ import annotations

import logging

import numpy as np

from .. import op_state
from ..errors import MDFError
from ._registry import hexop
from .quant import as4d, ival

LOG = logging.getLogger("mdf_engine.hexagon")
_KEY = "hexagon::Variable"


def _store() -> dict:
    st = op_state.current()
    if st is None:
        raise MDFError(
            "hexagon::Variable/Assign keep state and need a simulation (or a store bound "
            "with mdf_engine.op_state.bound) to keep it in"
        )
    return st.setdefault(_KEY, {})


@hexop("Variable", ("values",), outputs=("outputs",), variadic=True, python_only=True, name=None)
def variable(*values, name=None, padding="NA"):
    """Outputs i = the stored value i of Variable ``name`` (initialised from input i on the first
    call of the simulation; later calls ignore the inputs)."""
    if name is None:
        raise MDFError("hexagon::Variable needs attribute 'name' (which variable it is)")
    store = _store()
    key = str(name)
    if key not in store:
        if not values or any(v is None for v in values):
            raise MDFError(f"hexagon::Variable '{key}' needs its initial values as inputs")
        store[key] = tuple(np.array(as4d(v), copy=True) for v in values)
    return store[key]


@hexop("Assign", ("variable", "value"), outputs=("outputs",), variadic=True, python_only=True)
def assign(*pairs, padding="NA"):
    """Inputs (2i, 2i+1) = (a Variable output, its new value): writes value into the variable in
    place; output i is a copy of value i."""
    if len(pairs) % 2:
        raise MDFError(f"hexagon::Assign takes pairs (variable, value), got {len(pairs)} inputs")
    held = [a for arrays in _store().values() for a in arrays]
    out = []
    for i in range(0, len(pairs), 2):
        var, val = pairs[i], as4d(pairs[i + 1])
        if not any(var is a for a in held):
            raise MDFError(
                f"hexagon::Assign input {i} must be an output of a hexagon::Variable "
                "(the variable itself, in the same node)"
            )
        if val.shape != var.shape:
            raise MDFError(
                f"hexagon::Assign: value {i + 1} has shape {val.shape}, the variable "
                f"has {var.shape}"
            )
        np.copyto(var, val.astype(var.dtype))
        out.append(np.array(val, copy=True))
    return tuple(out)


def _pprint(op: str, x, dim, start, stop):
    a = as4d(x)
    view = a
    d = -1 if dim is None else ival(dim)
    if d >= 0:
        if d > 3:
            raise MDFError(f"hexagon::{op}: dimension to limit must be -1..3, got {d}")
        lo = 0 if start is None else max(0, ival(start))
        hi = lo + 1 if stop is None else ival(stop)
        view = np.take(a, np.arange(lo, min(hi, a.shape[d])), axis=d)
    if LOG.isEnabledFor(logging.INFO):
        LOG.info(
            "%s shape %s dtype %s:\n%s",
            op,
            a.shape,
            a.dtype,
            np.array2string(view, threshold=10_000),
        )
    return (a,)


def _register_pprint(op: str) -> None:
    def kernel(x, dim=None, start=None, stop=None, *, padding="NA"):
        return _pprint(op, x, dim, start, stop)

    kernel.__doc__ = (
        f"{op}: logs the tensor (optionally the indices start..stop-1 of one "
        "dimension) and passes it through."
    )
    hexop(
        op,
        ("input", "dim", "start", "stop"),
        outputs=("output",),
        optional=("dim", "start", "stop"),
        python_only=True,
    )(kernel)


for _op in ("PPrint_8", "PPrint_8_d32", "PPrintWithPadding_8_d32", "PPrint_32", "PPrint_f"):
    _register_pprint(_op)
