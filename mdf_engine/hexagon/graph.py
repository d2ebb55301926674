"""Hexagon graph I/O and bookkeeping: INPUT/OUTPUT (the tensors given to and returned by
execute), Nop (copies), Const (the ``value`` attribute as a 4-D tensor), Sink (no outputs),
Rank_int32 (a copy of input 1) and Shape_int32 (the 4-D shape as int32 [1,1,1,4]).
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    O1,
    as4d,
)


@hexop("INPUT", ("inputs",), outputs=("outputs",), variadic=True)
def input_op(*tensors, padding="NA"):
    """The tensors given to execute, passed on unchanged (one output per input)."""
    return tuple(tensors)


@hexop("OUTPUT", ("inputs",), outputs=(), variadic=True)
def output_op(*tensors, padding="NA"):
    """The graph's results: returns its inputs (what execute returns)."""
    return tuple(tensors)


@hexop("Nop", ("inputs",), outputs=("outputs",), variadic=True)
def nop(*tensors, padding="NA"):
    """Copies input i to output i."""
    return tuple(np.array(t, copy=True) for t in tensors)


@hexop("Const", (), outputs=("output",), value=None)
def const(*, value=None, padding="NA"):
    """Constant data (attribute ``value``) as a 4-D tensor."""
    if value is None:
        raise MDFError("hexagon::Const needs attribute 'value' (the constant data)")
    return (as4d(np.array(value)),)


@hexop("Sink", ("inputs",), outputs=(), variadic=True)
def sink(*xs, padding="NA"):
    """Does nothing (keeps its producers alive); no outputs."""
    return ()


@hexop("Rank_int32", ("input", "rank"), outputs=O1)
def rank_int32(x, rank, *, padding="NA"):
    """A copy of input 1 (the rank given for input 0)."""
    return (np.array(as4d(rank), dtype=np.int32, copy=True),)


@hexop("Shape_int32", ("input",), outputs=("output",))
def shape_int32(x, *, padding="NA"):
    """The 4-D shape {b,h,w,d} as int32 [1,1,1,4]."""
    return (np.array(as4d(x).shape, dtype=np.int32).reshape(1, 1, 1, 4),)
