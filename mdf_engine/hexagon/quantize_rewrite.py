"""The node rewriter of the float-to-quantized pass (:mod:`.quantize_pass`), part 1: the quantized
tensor record :class:`QT` and :class:`RewriterBase`, which holds the calibrated ranges of a node,
names the new hexagon parameters, quantizes references, requantizes accumulators and writes the
final Dequantize of each rewritten parameter. The per-op rewrites are in :mod:`.quantize_ops`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from ..model import Node, Parameter
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    adjust_range,
    as4d,
    quantize_u8,
)

SUPPORTED = (
    "Conv",
    "Gemm",
    "MatMul",
    "Add",
    "Relu",
    "Clip",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Concat",
    "Reshape",
    "Flatten",
    "Softmax",
)
TO_NHWC = np.array([0, 2, 3, 1], np.int32)
TO_NCHW = np.array([0, 3, 1, 2], np.int32)


# -- the rewrite -------------------------------------------------------------------------------
@dataclass
class QT:
    """A quantized tensor inside a node: expressions of its codes/min/max, and its layout."""

    data: str
    mn: str
    mx: str
    layout: str  # "nchw" = NHWC codes of a 4-D NCHW float; "flat" = as4d(float)
    shape: tuple[int, ...]  # the float tensor's shape
    rng: tuple[float, float] | None = None


class RewriterBase:
    """The plumbing of rewriting one node: calibrated ranges, new parameter names, quantized
    references, requantization of accumulators and the final Dequantize; :meth:`rewrite` hands
    each supported onnx:: parameter to the subclass's ``op_<Op>`` method."""

    def __init__(self, node: Node, stats: Mapping[tuple[str, str], Mapping[str, Any]]):
        self.node = node
        self.stats = stats
        self.out: list[Parameter] = []
        self.q: dict[str, QT] = {}
        self.consts = {
            p.id: p.value
            for p in node.parameters
            if p.function is None
            and p.value is not None
            and not isinstance(p.value, str)
            and not p.time_derivative
        }
        self.n = 0

    # helpers ---------------------------------------------------------------------------------
    def stat(self, name: str) -> Mapping[str, Any]:
        s = self.stats.get((self.node.id, name))
        if s is None and self.multi(name):
            s = self.stats.get((self.node.id, name + "[0]"))
        if s is None:
            raise MDFError(
                f"quantize: no calibration data for {self.node.id}.{name} "
                "(was it computed during the calibration run?)"
            )
        return s

    def multi(self, name: str) -> bool:
        """Whether float ``name`` was a tuple (a multi-output op such as MaxPool's Y, Indices)."""
        key = (self.node.id, name)
        return key not in self.stats and (self.node.id, name + "[0]") in self.stats

    def range_of(self, name: str) -> tuple[float, float]:
        s = self.stat(name)
        mn, mx = adjust_range(F32(s["min"]), F32(s["max"]))
        return float(mn), float(mx)

    def add(self, base: str, op: str, args: dict[str, Any], function_prefix="hexagon::") -> str:
        self.n += 1
        pid = f"{base}__{self.n}_{op}"
        self.out.append(Parameter(id=pid, function=function_prefix + op, args=args))
        return pid

    def triple(self, pid: str, layout: str, shape, rng=None) -> QT:
        return QT(f"{pid}[0]", f"{pid}[1]", f"{pid}[2]", layout, tuple(shape), rng)

    def const_of(self, v: Any) -> np.ndarray | None:
        if isinstance(v, str):
            if v in self.consts:
                return np.asarray(self.consts[v], dtype=np.float64)
            return None
        if v is None:
            return None
        return np.asarray(v, dtype=np.float64)

    def qref(self, arg: Any, layout: str | None = None, base: str = "t") -> QT:
        """The quantized form of a tensor argument (a name or a constant), in ``layout``."""
        if isinstance(arg, str) and arg in self.q:
            t = self.q[arg]
        else:
            c = self.const_of(arg)
            if c is not None:
                mn, mx = adjust_range(F32(c.min()), F32(c.max()))
                codes = quantize_u8(as4d(c.astype(F32)), mn, mx)
                pid = self.add(base, "Const", {"value": codes})
                t = QT(
                    pid, repr(float(mn)), repr(float(mx)), "flat", c.shape, (float(mn), float(mx))
                )
            elif isinstance(arg, str) and re.fullmatch(r"[A-Za-z_]\w*(\[\d+\])?", arg):
                mn, mx = self.range_of(arg)
                pid = self.add(arg, "Quantize", {"input": arg, "input_min": mn, "input_max": mx})
                t = self.triple(pid, "flat", self.stat(arg)["shape"], (mn, mx))
            else:
                raise MDFError(
                    f"quantize: argument {arg!r} of {self.node.id} must be a parameter "
                    "or port name or a constant"
                )
            if isinstance(arg, str):
                self.q[arg] = t
        return self.to_layout(t, layout, base)

    def to_layout(self, t: QT, layout: str | None, base: str) -> QT:
        if layout is None or layout == t.layout:
            return t
        if len(t.shape) != 4:
            raise MDFError(
                f"quantize: {self.node.id}: a {len(t.shape)}-D tensor cannot be used "
                "where a 4-D NCHW tensor is needed"
            )
        perm = TO_NHWC if layout == "nchw" else TO_NCHW
        pid = self.add(
            base,
            "Transpose_8",
            {"input": t.data, "perm": perm, "input_min": t.mn, "input_max": t.mx},
        )
        return self.triple(pid, layout, t.shape, t.rng)

    def requant32(self, base: str, acc: str, rng: tuple[float, float]) -> str:
        return self.add(
            base,
            "Requantize_32to8",
            {
                "input": f"{acc}[0]",
                "input_min": f"{acc}[1]",
                "input_max": f"{acc}[2]",
                "output_min": rng[0],
                "output_max": rng[1],
            },
        )

    def bias_q32(self, bias: np.ndarray, step_x: np.float32, step_w: np.float32):
        """qint32 bias codes on the accumulator step of an 8x8 product, and that range."""
        s = F32(step_x * step_w)
        lo, hi = F32(F32(INT32_MIN) * s), F32(F32(INT32_MAX) * s)
        step_acc = float(F32((hi - lo) / F32(4294967296.0)))
        codes = np.clip(np.round(bias / step_acc), INT32_MIN, INT32_MAX).astype(np.int32)
        return as4d(codes.reshape(-1)), float(lo), float(hi)

    def finish(self, pid: str, t: QT) -> None:
        """Give the float parameter ``pid`` its value back: Dequantize in the float layout."""
        multi = self.multi(pid)
        self.q[pid + "[0]" if multi else pid] = t
        if t.layout == "nchw":
            t = self.to_layout(t, "flat", pid)
        self.n += 1
        deq = f"{pid}__{self.n}_Dequantize"
        final = f"{pid}__y" if multi else pid
        if len(t.shape) == 4:
            deq = final
        self.out.append(
            Parameter(
                id=deq,
                function="hexagon::Dequantize",
                args={"input": t.data, "input_min": t.mn, "input_max": t.mx},
            )
        )
        if deq != final:
            self.out.append(
                Parameter(
                    id=final,
                    function="onnx::Reshape",
                    args={"data": deq, "shape": np.array(t.shape, np.int64)},
                )
            )
        if multi:  # only the first output is quantized; the others (MaxPool Indices) are None
            self.out.append(Parameter(id=pid, value=f"({final}, None)"))

    def call_args(self, p: Parameter) -> dict[str, Any]:
        """``p``'s arguments with the ONNX attributes given as constant sibling parameters
        (``kernel_shape``, ``pads``: onnx_to_mdf writes them so), as the plan binds them (an
        attribute in ``args`` wins)."""
        from ..registry import REGISTRY

        args = dict(p.args or {})
        attrs = REGISTRY.lookup(p.function, None, f"{self.node.id}.{p.id}.function").attributes
        for q in self.node.parameters:
            if q is p or q.id not in attrs or q.id in args or q.function is not None:
                continue
            if q.value is not None and not isinstance(q.value, str):
                args[q.id] = q.value
        return args

    # rewriting ---------------------------------------------------------------------------------
    def rewrite(self) -> list[Parameter]:
        for p in self.node.parameters:
            fn = p.function or ""
            op = fn.split("::", 1)[1] if fn.startswith("onnx::") else None
            if op in SUPPORTED and not p.time_derivative and not p.conditions:
                t = getattr(self, "op_" + op)(p.id, self.call_args(p))
                self.finish(p.id, t)
            else:
                self.out.append(p)
        return self.out
