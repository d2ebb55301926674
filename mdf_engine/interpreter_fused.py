"""The interpreter's fused nodes (decided in :mod:`mdf_engine.plan.fusion`): what they compute
is exactly what the nodes compute one by one; only where and when changes.

* **Conv -> Relu**: the Conv node's kernel writes the Relu of its output as it writes the
  output (:func:`~mdf_engine.onnx_ops._conv_relu.prepare_conv_relu`; where it cannot, the
  Conv node computes it right after, by the Relu node's own bound call on that array) and
  leaves it in a cell; the Relu node takes it when the value it reads *is* that array (the
  same object: nothing ran in between that could have made another), else it calls the kernel
  itself. Both nodes keep their own values.
* **BatchNormalization -> Relu**: the same, the normalization's kernel writing the Relu of
  each value in the same pass (:func:`~mdf_engine.onnx_ops.normalization.prepare_bn_relu`).
* **Concat of such Relus**: once a Concat has run on the Relus' values, the shapes of its parts
  and of its value are known; from then on each Relu is written straight into its part
  of a new array of the Concat's shape (a view, C-contiguous: nothing before the axis is longer
  than 1), and the Concat, when it reads exactly those parts, is that array (the values
  ``np.concatenate`` gives, without the copy). Each update gets a new array, so no value a user
  holds is ever written again; any other input (another shape, another array) goes to the
  kernel as before.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .interpreter_lean import BoundCall, LeanNode
from .plan import GraphPlan
from .plan.fusion import bn_relu_pairs, concat_of_relus, conv_relu_pairs

#: A Relu that is part of a Concat is written in place into the Concat's array rather than by
#: the Conv's kernel beside its value.
CONCAT_IN_PLACE = True
#: A Conv -> Relu pair's Relu is written by the Conv's kernel (into its Concat part, if it has
#: one); off: the Relu's kernel runs right after the Conv, as before (tests and measurements
#: compare the two; a 1x1 Conv then always keeps its Relu after it).
RELU_IN_KERNEL = True
#: A BatchNormalization -> Relu pair computes the Relu in the normalization's pass (tests
#: compare against the unfused run by turning this off).
FUSE_BN_RELU = True


class _FusedRelu:
    """The Relu call of a fused pair (see the module docstring)."""

    __slots__ = ("call", "cell", "port", "first")

    def __init__(self, call: BoundCall, cell: list, port: str):
        self.call, self.cell, self.port = call, cell, port
        self.first = call.first

    def one(self, x: Any) -> Any:
        cell = self.cell
        y = cell[0]
        if y is not None and x is y:
            out = cell[1]
            cell[0] = cell[1] = None
            return out
        return self.call.one(x)

    def __call__(self, env: dict[str, Any]) -> Any:
        return self.one(env[self.port])


class _ConcatBuffer:
    """The array a Concat of fused Relus will be, filled part by part by the Relus."""

    __slots__ = ("n", "axis", "layouts", "buf", "cur", "parts", "arrays")

    #: layouts kept (an input of ever new shapes starts over past this)
    KEEP = 64

    def __init__(self, n: int, axis: int):
        self.n, self.axis = n, axis
        #: (part k, its shape, dtype) -> (the Concat's shape, dtype, index of each part), as
        #: learned from the Concats that ran the kernel (the last one's wins)
        self.layouts: dict[tuple, tuple[tuple[int, ...], np.dtype, list[tuple]]] = {}
        self.buf: np.ndarray | None = None
        #: the layout ``buf`` was made for (its parts are that layout's only)
        self.cur: tuple | None = None
        self.parts: list[np.ndarray | None] = [None] * n
        from .onnx_ops._recycle import Recycler  # (ONNX graphs only)

        #: the arrays handed out, again once nothing refers to them
        self.arrays = Recycler()

    def part(self, k: int, x: np.ndarray) -> np.ndarray | None:
        """A new part ``k`` to write a Relu of ``x`` into, or None (no layout known for
        x's shape and dtype)."""
        return self.part_for(k, x.dtype, x.shape)

    def part_for(self, k: int, dtype: np.dtype, shape: tuple) -> np.ndarray | None:
        """A new part ``k`` for a Relu value of ``dtype`` and ``shape``, or None (no layout
        known with such a part ``k``)."""
        lay = self.layouts.get((k, shape, dtype))
        if lay is None:
            return None
        whole, dt, index = lay
        buf = self.buf
        if buf is None or self.parts[k] is not None or self.cur is not lay:  # a new update's
            self.buf = None  # (not a reference that keeps it from the recycler)
            buf = self.buf = self.arrays.empty(whole, dt)  # first part (or another layout's)
            self.cur = lay
            self.parts = [None] * self.n
        return buf[index[k]]

    def take(self, values: list[Any]) -> np.ndarray | None:
        """The array, when ``values`` are exactly its parts; it is then handed over."""
        buf = self.buf
        if buf is None or any(v is not p for v, p in zip(values, self.parts)):
            return None
        self.buf = None
        self.parts = [None] * self.n
        return buf

    def learn(self, values: list[Any], out: Any) -> None:
        """Read the layout from a Concat that ran the kernel on ``values`` giving ``out``."""
        if type(out) is not np.ndarray or out.dtype.kind != "f" or not out.flags.c_contiguous:
            return
        nd = out.ndim
        if not -nd <= self.axis < nd:
            return
        ax = self.axis % nd
        if math.prod(out.shape[:ax]) != 1:  # a part would not be contiguous
            return
        index, at = [], 0
        for v in values:
            if type(v) is not np.ndarray or v.dtype != out.dtype or v.ndim != nd:
                return
            index.append((slice(None),) * ax + (slice(at, at + v.shape[ax]),))
            at += v.shape[ax]
        if at == out.shape[ax]:
            if len(self.layouts) >= self.KEEP:
                self.layouts.clear()
            lay = (out.shape, out.dtype, index)
            for k, v in enumerate(values):
                self.layouts[(k, v.shape, v.dtype)] = lay


class _FusedConcat:
    """The Concat call of a Concat of fused Relus (see the module docstring)."""

    __slots__ = ("call", "buffer", "ports", "first")

    def __init__(self, call: BoundCall, buffer: _ConcatBuffer, ports: tuple[str, ...]):
        self.call, self.buffer, self.ports = call, buffer, ports
        self.first = None

    def __call__(self, env: dict[str, Any]) -> Any:
        values = [env[p] for p in self.ports]
        out = self.buffer.take(values)
        if out is not None:
            return out
        out = self.call(env)
        self.buffer.learn(values, out)
        return out


class _ConvAndRelu:
    """The Conv (or BatchNormalization) call of a fused pair whose kernel also writes the Relu
    of its value (:func:`~mdf_engine.onnx_ops._conv_relu.prepare_conv_relu`,
    :func:`~mdf_engine.onnx_ops.normalization.prepare_bn_relu`; the Relu bit for bit the
    engine's): the value is the convolution (normalization), the Relu goes to the cell."""

    __slots__ = ("both", "cell", "first")

    def __init__(self, both: BoundCall, cell: list):
        self.both, self.cell, self.first = both, cell, both.first

    def one(self, x: Any) -> Any:
        y, r = self.both.one(x)
        cell = self.cell
        cell[1] = r
        cell[0] = y
        return y

    def __call__(self, env: dict[str, Any]) -> Any:
        return self.one(env[self.first])


class _ConvReluInto:
    """The Conv call of a fused pair whose Relu is a part ``k`` of a Concat's array: the
    Conv's kernel writes the Relu straight into that part as it writes its own value
    (:func:`~mdf_engine.onnx_ops._conv_relu.prepare_conv_relu`'s ``relu_out``; in the vector
    tiles' last step, on every thread that shares the convolution). The part's shape is known
    once a Concat has run and a call has shown the Conv's output shape for the input's shape;
    until then (or for another input) the kernel writes a Relu array of its own."""

    __slots__ = ("both", "cell", "buffer", "k", "shapes", "first")

    def __init__(self, both: BoundCall, cell: list, buffer: _ConcatBuffer, k: int):
        self.both, self.cell, self.buffer, self.k = both, cell, buffer, k
        self.first = both.first
        #: the output's shape for each (input shape, dtype) seen
        self.shapes: dict[tuple, tuple] = {}

    def one(self, x: Any) -> Any:
        z = None
        if type(x) is np.ndarray:
            key = (x.shape, x.dtype)
            shape = self.shapes.get(key)
            if shape is not None:
                z = self.buffer.part_for(self.k, x.dtype, shape)
        if z is not None:
            y, r = self.both.one_into(x, z)
            self.buffer.parts[self.k] = r
        else:
            y, r = self.both.one(x)
            if type(x) is np.ndarray and type(y) is np.ndarray and y.dtype == x.dtype:
                if x.dtype.kind == "f" and x.dtype.itemsize >= 4:
                    self.shapes[(x.shape, x.dtype)] = y.shape
        cell = self.cell
        cell[1] = r
        cell[0] = y
        return y

    def __call__(self, env: dict[str, Any]) -> Any:
        return self.one(env[self.first])


def _after_conv(cell: list, relu: BoundCall, buffer: _ConcatBuffer | None, k: int):
    """What the Conv node of a fused pair runs after its outputs are set."""
    into = getattr(relu.kernel, "into", None) if buffer is not None else None

    def then(y: Any) -> None:
        if type(y) is not np.ndarray or y.dtype.kind != "f":
            return
        z = buffer.part(k, y) if into is not None else None
        if z is None or not into(y, z):
            z = relu.one(y)
        else:
            buffer.parts[k] = z
        cell[1] = z
        cell[0] = y

    return then


def _one_by_one(conv: BoundCall) -> bool:
    """Whether a Conv's filters are 1x1 (or 1, 1x1x1): without :data:`RELU_IN_KERNEL`, their
    Relu runs right after them (it was a second loop over the values)."""
    w = conv.known[1][1] if len(conv.known) > 1 else None
    return isinstance(w, np.ndarray) and w.ndim >= 3 and all(d == 1 for d in w.shape[2:])


def _fuse_bn_relu(plan: GraphPlan, lean: dict[str, LeanNode | None]) -> int:
    """Bind the BatchNormalization -> Relu pairs of ``plan`` (``plan.fusion.bn_relu_pairs``)
    whose nodes are lean and whose normalization has constant parameters: its call computes
    the Relu in the same pass, into the cell the Relu node takes it from (see
    :class:`_FusedRelu`). Returns how many Relus now run within their normalization."""
    n = 0
    for pair in bn_relu_pairs(plan):
        bn, relu = lean.get(pair.conv), lean.get(pair.relu)
        if bn is None or relu is None or bn.then is not None:
            continue
        call, bn_call = relu.call_of(pair.relu_param), bn.call_of(pair.conv_param)
        if not isinstance(call, BoundCall) or call.first != pair.relu_port:
            continue
        if not isinstance(bn_call, BoundCall) or bn_call.first is None:
            continue
        from .onnx_ops.normalization import prepare_bn_relu

        both = bn_call.prepared(prepare_bn_relu)
        if both is None:
            continue
        cell: list = [None, None]
        relu.replace_call(pair.relu_param, _FusedRelu(call, cell, pair.relu_port))
        bn.replace_call(pair.conv_param, _ConvAndRelu(both, cell))
        n += 1
    return n


def fuse(plan: GraphPlan, lean: dict[str, LeanNode | None]) -> int:
    """Bind the fused nodes of ``plan`` whose nodes are all lean; returns how many nodes now
    run within another (Relus, and Concats that are their Relus' array)."""
    if not FUSE_BN_RELU:
        return _fuse_conv_relu(plan, lean)
    return _fuse_bn_relu(plan, lean) + _fuse_conv_relu(plan, lean)


def _fuse_conv_relu(plan: GraphPlan, lean: dict[str, LeanNode | None]) -> int:
    """The Conv -> Relu pairs and Concats of them (see :func:`fuse`)."""
    pairs = []
    for pair in conv_relu_pairs(plan):
        conv, relu = lean.get(pair.conv), lean.get(pair.relu)
        if conv is None or relu is None or conv.then is not None:
            continue
        call = relu.call_of(pair.relu_param)
        if isinstance(call, BoundCall) and call.first == pair.relu_port:
            pairs.append((pair, conv, relu, call))
    if not pairs:
        return 0
    from .onnx_ops._conv_relu import prepare_conv_relu  # (the Conv kernels: ONNX graphs only)

    buffers: dict[str, tuple[_ConcatBuffer, int]] = {}
    fused = {p.relu for p, *_ in pairs}
    n = 0
    for group in concat_of_relus(plan, [p for p, *_ in pairs]):
        node = lean.get(group.concat)
        if node is None or not set(group.relus) <= fused:
            continue
        call = node.call_of(group.param)
        if not isinstance(call, BoundCall):
            continue
        buffer = _ConcatBuffer(len(group.ports), group.axis)
        node.replace_call(group.param, _FusedConcat(call, buffer, group.ports))
        for k, r in enumerate(group.relus):
            buffers[r] = (buffer, k)
        n += 1
    for pair, conv, relu, call in pairs:
        cell: list = [None, None]
        relu.replace_call(pair.relu_param, _FusedRelu(call, cell, pair.relu_port))
        buffer, k = buffers.get(pair.relu, (None, 0))
        both = None
        conv_call = conv.call_of(pair.conv_param)
        if isinstance(conv_call, BoundCall) and conv_call.first is not None:
            if RELU_IN_KERNEL or (buffer is None and not _one_by_one(conv_call)):
                both = conv_call.prepared(prepare_conv_relu)
        if both is not None and buffer is not None and CONCAT_IN_PLACE and RELU_IN_KERNEL:
            # the Conv's kernel writes the Relu into its part of the Concat's array
            conv.replace_call(pair.conv_param, _ConvReluInto(both, cell, buffer, k))
        elif both is not None:  # the Conv's kernel writes the Relu beside its value
            conv.replace_call(pair.conv_param, _ConvAndRelu(both, cell))
        else:  # the Relu right after the Conv, into its part of a Concat if it has one
            conv.then = _after_conv(cell, call, buffer, k)
            conv.then_port = pair.conv_port
        n += 1
    return n
