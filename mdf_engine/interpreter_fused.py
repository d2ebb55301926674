"""The interpreter's fused nodes (decided in :mod:`mdf_engine.plan.fusion`): what they compute
is exactly what the nodes compute one by one; only where and when changes.

* **Conv -> Relu**: the Conv node, once its outputs are set, computes the Relu of its output
  (the Relu node's own bound call on that array) and leaves it in a cell; the Relu node takes
  it when the value it reads *is* that array (the same object: nothing ran in between that
  could have made another), else it calls the kernel itself. Both nodes keep their own values.
* **BatchNormalization -> Relu**: the same, the normalization's kernel writing the Relu of
  each value in the same pass (:func:`~mdf_engine.onnx_ops.normalization.prepare_bn_relu`).
* **Concat of such Relus**: once a Concat has run on the Relus' values, the shapes of its parts
  and of its value are known; from then on each Relu writes its value straight into its part
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

    __slots__ = ("n", "axis", "layout", "buf", "parts")

    def __init__(self, n: int, axis: int):
        self.n, self.axis = n, axis
        #: (shape, dtype, index of each part) learned from the last Concat that ran the kernel
        self.layout: tuple[tuple[int, ...], np.dtype, list[tuple]] | None = None
        self.buf: np.ndarray | None = None
        self.parts: list[np.ndarray | None] = [None] * n

    def part(self, k: int, x: np.ndarray) -> np.ndarray | None:
        """A new part ``k`` to write a Relu of ``x`` into, or None (layout unknown, or x is
        not the shape and dtype of that part)."""
        lay = self.layout
        if lay is None:
            return None
        shape, dtype, index = lay
        if x.dtype != dtype:
            return None
        if self.buf is None or self.parts[k] is not None:  # a new update's first part
            self.buf = np.empty(shape, dtype)
            self.parts = [None] * self.n
        view = self.buf[index[k]]
        return view if view.shape == x.shape else None

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
        self.layout = None
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
            self.layout = (out.shape, out.dtype, index)


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
    """Whether a Conv's filters are 1x1 (or 1, 1x1x1): their kernel with the Relu beside
    measured 1.3-2.5x the time of the convolution and then the Relu (SqueezeNet's squeeze and
    expand layers, one thread), so those pairs keep the Relu right after the Conv."""
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
        if buffer is None or not CONCAT_IN_PLACE:
            conv_call = conv.call_of(pair.conv_param)
            if isinstance(conv_call, BoundCall) and conv_call.first is not None:
                if not _one_by_one(conv_call):
                    both = conv_call.prepared(prepare_conv_relu)
        if both is not None:  # the Conv's kernel writes the Relu beside its value
            conv.replace_call(pair.conv_param, _ConvAndRelu(both, cell))
        else:  # the Relu right after the Conv, into its part of a Concat if it has one
            conv.then = _after_conv(cell, call, buffer, k)
            conv.then_port = pair.conv_port
        n += 1
    return n
