"""Post-training quantization of a float MDF graph onto Hexagon ops, and the ``--backend hexagon``
entry point.

``quantize(model, calibration_inputs) -> Model``
    Runs the float model with :class:`mdf_engine.Simulation` once per calibration input (each an
    initializer dict ``{port_id: array}``; ``None`` = the model's own defaults), records every
    input port and parameter of every node, and takes per-tensor ranges (min/max over all runs,
    widened by ``adjust_range`` for an exact zero). It then rewrites each parameter that calls
    one of ``onnx::Conv, Gemm, MatMul, Add, Relu, Clip, MaxPool, AveragePool, GlobalAveragePool,
    Concat, Reshape, Flatten, Softmax`` into a chain of ``hexagon::`` parameters, e.g. for Conv::

        Quantize -> [QuantizedPad_8] -> QuantizedConv2d_8x8to32 -> QuantizedBiasAdd_32p32to32
                 -> Requantize_32to8 (to the calibrated range)

    Gemm/MatMul use QuantizedMatMul_8x8to32 the same way; Relu/Clip become QuantizedRelu_8 /
    QuantizedClamp_8, pools QuantizedMaxPool_8 / QuantizedAvgPool_8, Add QuantizedAdd_8p8to8,
    Concat QuantizedConcat_8(_d32), Softmax QuantizedSoftmax_8, Flatten/Reshape QuantizedReshape.
    Weights are quantized once, at pass time, into constant uint8 codes; biases into qint32 codes
    on the accumulator's step. Quantized tensors stay quantized inside a node: ONNX's NCHW
    tensors are kept as NHWC codes (Transpose_8 where a layout change is needed). Each rewritten
    parameter keeps its id and becomes the Dequantize of its chain (back in the float layout and
    shape), so output ports, edges and any parameter the pass does not rewrite see floats as
    before; a receiving node re-quantizes with the same calibrated range, which is lossless.

``run_quantized(model, initializer=None, calibration_inputs=None) -> {node: {port: value}}``
    What ``mdf run --backend hexagon`` calls: quantizes ``model`` (calibrating on
    ``calibration_inputs``, or on ``initializer`` itself when none are given), evaluates the
    quantized model once with ``initializer`` and returns every node's output ports.

A multi-output op (onnx MaxPool gives (Y, Indices)) keeps only its first output: ``p[0]`` is
the dequantized Y and ``p[1]`` is None in the quantized model.

Limits (MDFError says which): Conv with group > 1 or dilation, non-constant weights, ONNX pads
on pools that are neither zero nor TF-SAME, ceil_mode pools, Gemm with transA, axis-specific
Softmax/Flatten other than the last/second axis.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MDFError
from ..model import Model, Node, Parameter
from .quant import (
    F32,
    INT32_MAX,
    INT32_MIN,
    PADDING,
    adjust_range,
    as4d,
    out_size_and_pad,
    quantize_u8,
    step_u8,
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


# -- calibration -------------------------------------------------------------------------------
def calibrate(
    model: Any,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None,
    graph: str | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """Run the float model on each input; ``{(node, name): {"min", "max", "shape"}}`` over every
    numeric input port and parameter value seen."""
    from ..simulation import Simulation

    if calibration_inputs is None:
        inputs: list[Mapping[str, Any] | None] = [None]
    elif isinstance(calibration_inputs, Mapping):
        inputs = [calibration_inputs]
    else:
        inputs = list(calibration_inputs)
    if not inputs:
        raise MDFError("quantize needs at least one calibration input")
    stats: dict[tuple[str, str], dict[str, Any]] = {}
    for init in inputs:
        sim = Simulation(model, graph=graph)
        sim.evaluate(initializer=init)
        for node in sim.graph.nodes:
            names = [p.id for p in node.input_ports] + [p.id for p in node.parameters]
            for name in names:
                try:
                    v = sim.value(node.id, name)
                except MDFError:
                    continue
                if isinstance(v, tuple):  # a multi-output function: name[i] per output
                    for i, vi in enumerate(v):
                        _record(stats, node.id, f"{name}[{i}]", vi)
                else:
                    _record(stats, node.id, name, v)
    return stats


def _record(stats: dict, node: str, name: str, v: Any) -> None:
    if v is None or isinstance(v, (str, dict, tuple, list)):
        return
    a = np.asarray(v)
    if a.dtype.kind not in "fiub" or a.size == 0:
        return
    s = stats.setdefault((node, name), {"min": np.inf, "max": -np.inf, "shape": a.shape})
    s["min"] = min(s["min"], float(np.nanmin(a)))
    s["max"] = max(s["max"], float(np.nanmax(a)))
    if s["shape"] != a.shape:
        raise MDFError(
            f"calibration: {node}.{name} changes shape between inputs "
            f"({s['shape']} vs {a.shape}); quantize needs fixed shapes"
        )


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


class _NodeRewriter:
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

    # rewriting ---------------------------------------------------------------------------------
    def rewrite(self) -> list[Parameter]:
        for p in self.node.parameters:
            fn = p.function or ""
            op = fn.split("::", 1)[1] if fn.startswith("onnx::") else None
            if op in SUPPORTED and not p.time_derivative and not p.conditions:
                t = getattr(self, "op_" + op)(p.id, dict(p.args or {}))
                self.finish(p.id, t)
            else:
                self.out.append(p)
        return self.out

    def _pads_2d(self, name: str, args, x_shape, k):
        """Explicit (top, left, bottom, right) pads of an ONNX conv/pool on NCHW input."""
        auto = str(args.get("auto_pad", "NOTSET"))
        strides = list(args.get("strides") or [1, 1])
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            pads = []
            for d in range(2):
                n = x_shape[2 + d]
                out = -(-n // strides[d])
                tot = max(0, (out - 1) * strides[d] + k[d] - n)
                pads.append(
                    (tot // 2, tot - tot // 2)
                    if auto == "SAME_UPPER"
                    else (tot - tot // 2, tot // 2)
                )
            return (pads[0][0], pads[1][0], pads[0][1], pads[1][1]), strides
        if auto == "VALID" or args.get("pads") is None:
            return (0, 0, 0, 0), strides
        p = [int(v) for v in np.asarray(args["pads"]).reshape(-1)]
        if len(p) != 4:
            raise MDFError(f"quantize: {self.node.id}.{name}: only 2-D pads are supported")
        return tuple(p), strides

    def op_Conv(self, pid: str, args):
        if int(args.get("group", 1)) != 1:
            raise MDFError(f"quantize: {self.node.id}.{pid}: grouped Conv is not supported")
        dil = args.get("dilations")
        if dil is not None and any(int(d) != 1 for d in np.asarray(dil).reshape(-1)):
            raise MDFError(f"quantize: {self.node.id}.{pid}: dilated Conv is not supported")
        w = self.const_of(args.get("W"))
        if w is None or w.ndim != 4:
            raise MDFError(f"quantize: {self.node.id}.{pid}: Conv needs constant 4-D weights W")
        x = self.qref(args["X"], "nchw", pid)
        pads, strides = self._pads_2d(pid, args, x.shape, w.shape[2:])
        if any(pads):
            t, l, b, r = pads
            pp = self.add(
                pid,
                "QuantizedPad_8",
                {
                    "input": x.data,
                    "input_min": x.mn,
                    "input_max": x.mx,
                    "paddings": np.array([[0, 0], [t, b], [l, r]], np.int32).reshape(1, 1, 3, 2),
                },
            )
            x = self.triple(pp, "nchw", x.shape, x.rng)
        wmn, wmx = adjust_range(F32(w.min()), F32(w.max()))
        wq = quantize_u8(w.transpose(2, 3, 1, 0).astype(F32), wmn, wmx)
        xr = x.rng or self.range_of(args["X"])
        sx, sw = step_u8(*xr), step_u8(wmn, wmx)
        conv = self.add(
            pid,
            "QuantizedConv2d_8x8to32",
            {
                "input": x.data,
                "filter": wq,
                "input_min": x.mn,
                "input_max": x.mx,
                "filter_min": float(wmn),
                "filter_max": float(wmx),
                "stride": np.zeros((1, int(strides[0]), int(strides[1]), 1)),
                "padding": "VALID",
            },
        )
        acc = conv
        b = self.const_of(args.get("B"))
        if b is not None:
            codes, lo, hi = self.bias_q32(b, sx, sw)
            acc = self.add(
                pid,
                "QuantizedBiasAdd_32p32to32",
                {
                    "input": f"{conv}[0]",
                    "bias": codes,
                    "input_min": f"{conv}[1]",
                    "input_max": f"{conv}[2]",
                    "bias_min": lo,
                    "bias_max": hi,
                },
            )
        rng = self.range_of(pid)
        out = self.requant32(pid, acc, rng)
        return self.triple(out, "nchw", self.stat(pid)["shape"], rng)

    def _matmul(self, pid: str, a_arg, w: np.ndarray, bias: np.ndarray | None):
        a = self.qref(a_arg, "flat", pid)
        if len(a.shape) != 2:
            raise MDFError(
                f"quantize: {self.node.id}.{pid}: MatMul/Gemm input must be 2-D, "
                f"got shape {a.shape}"
            )
        wmn, wmx = adjust_range(F32(w.min()), F32(w.max()))
        wq = quantize_u8(w.astype(F32), wmn, wmx).reshape(1, 1, *w.shape)
        mm = self.add(
            pid,
            "QuantizedMatMul_8x8to32",
            {
                "a": a.data,
                "b": wq,
                "a_min": a.mn,
                "a_max": a.mx,
                "b_min": float(wmn),
                "b_max": float(wmx),
            },
        )
        acc = mm
        if bias is not None:
            xr = a.rng or self.range_of(a_arg)
            codes, lo, hi = self.bias_q32(
                np.broadcast_to(bias.reshape(-1), (w.shape[1],)), step_u8(*xr), step_u8(wmn, wmx)
            )
            acc = self.add(
                pid,
                "QuantizedBiasAdd_32p32to32",
                {
                    "input": f"{mm}[0]",
                    "bias": codes,
                    "input_min": f"{mm}[1]",
                    "input_max": f"{mm}[2]",
                    "bias_min": lo,
                    "bias_max": hi,
                },
            )
        rng = self.range_of(pid)
        out = self.requant32(pid, acc, rng)
        return self.triple(out, "flat", self.stat(pid)["shape"], rng)

    def op_Gemm(self, pid: str, args):
        if int(args.get("transA", 0)):
            raise MDFError(f"quantize: {self.node.id}.{pid}: Gemm with transA is not supported")
        w = self.const_of(args.get("B"))
        if w is None or w.ndim != 2:
            raise MDFError(f"quantize: {self.node.id}.{pid}: Gemm needs a constant 2-D B")
        w = (w.T if int(args.get("transB", 0)) else w) * float(args.get("alpha", 1.0))
        c = self.const_of(args.get("C"))
        if args.get("C") is not None and c is None:
            raise MDFError(f"quantize: {self.node.id}.{pid}: Gemm needs a constant C")
        if c is not None:
            c = c * float(args.get("beta", 1.0))
            if c.size not in (1, w.shape[1]):
                raise MDFError(
                    f"quantize: {self.node.id}.{pid}: Gemm bias C must broadcast "
                    "along the output features"
                )
        return self._matmul(pid, args["A"], w, c)

    def op_MatMul(self, pid: str, args):
        w = self.const_of(args.get("B"))
        if w is None or w.ndim != 2:
            raise MDFError(f"quantize: {self.node.id}.{pid}: MatMul needs a constant 2-D B")
        return self._matmul(pid, args["A"], w, None)

    def _unary_layout(self, arg) -> str | None:
        return self.q[arg].layout if isinstance(arg, str) and arg in self.q else None

    def op_Relu(self, pid: str, args):
        x = self.qref(args["X"], self._unary_layout(args["X"]), pid)
        r = self.add(
            pid, "QuantizedRelu_8", {"input": x.data, "input_min": x.mn, "input_max": x.mx}
        )
        return self.triple(r, x.layout, x.shape, x.rng)

    def op_Clip(self, pid: str, args):
        x = self.qref(args["input"], self._unary_layout(args["input"]), pid)
        lo = self.const_of(args.get("min"))
        hi = self.const_of(args.get("max"))
        lo = -3.0e38 if lo is None else float(lo.reshape(-1)[0])
        hi = 3.0e38 if hi is None else float(hi.reshape(-1)[0])
        r = self.add(
            pid,
            "QuantizedClamp_8",
            {
                "input": x.data,
                "input_min": x.mn,
                "input_max": x.mx,
                "clamp_min": lo,
                "clamp_max": hi,
            },
        )
        return self.triple(r, x.layout, x.shape, x.rng)

    def _pool(self, pid: str, args, kind: str, k=None):
        x = self.qref(args["X"], "nchw", pid)
        if int(args.get("ceil_mode", 0)):
            raise MDFError(f"quantize: {self.node.id}.{pid}: ceil_mode pooling is not supported")
        if kind == "Avg" and int(args.get("count_include_pad", 0)):
            raise MDFError(f"quantize: {self.node.id}.{pid}: count_include_pad is not supported")
        k = k or [int(v) for v in np.asarray(args["kernel_shape"]).reshape(-1)]
        pads, strides = self._pads_2d(pid, args, x.shape, k)
        padding = "VALID"
        if any(pads):
            same = [
                out_size_and_pad(x.shape[2 + d], k[d], int(strides[d]), PADDING["SAME"])
                for d in range(2)
            ]
            h, w = x.shape[2], x.shape[3]
            tot = [max(0, (same[d][0] - 1) * strides[d] + k[d] - (h, w)[d]) for d in range(2)]
            if pads != (same[0][1], same[1][1], tot[0] - same[0][1], tot[1] - same[1][1]):
                raise MDFError(
                    f"quantize: {self.node.id}.{pid}: pool pads {pads} are neither 0 "
                    "nor TF-style SAME"
                )
            padding = "SAME"
        r = self.add(
            pid,
            f"Quantized{kind}Pool_8",
            {
                "input": x.data,
                "input_min": x.mn,
                "input_max": x.mx,
                "window": np.zeros((1, k[0], k[1], 1)),
                "stride": np.zeros((1, int(strides[0]), int(strides[1]), 1)),
                "padding": padding,
            },
        )
        return self.triple(r, "nchw", self.stat(pid)["shape"], x.rng)

    def op_MaxPool(self, pid: str, args):
        return self._pool(pid, args, "Max")

    def op_AveragePool(self, pid: str, args):
        return self._pool(pid, args, "Avg")

    def op_GlobalAveragePool(self, pid: str, args):
        x = self.qref(args["X"], "nchw", pid)
        return self._pool(pid, {"X": args["X"]}, "Avg", [x.shape[2], x.shape[3]])

    def op_Add(self, pid: str, args):
        names = [args["A"], args["B"]]
        layouts = [self._unary_layout(n) for n in names]
        layout = "nchw" if "nchw" in layouts else "flat"
        ops = []
        for n in names:
            c = self.const_of(n)
            if c is not None and layout == "nchw":
                c4 = c.reshape((1,) * (4 - c.ndim) + c.shape).transpose(0, 2, 3, 1)
                mn, mx = adjust_range(F32(c.min()), F32(c.max()))
                cid = self.add(pid, "Const", {"value": quantize_u8(c4.astype(F32), mn, mx)})
                ops.append(QT(cid, repr(float(mn)), repr(float(mx)), "nchw", c.shape))
            else:
                ops.append(self.qref(n, layout if c is None else None, pid))
        a, b = ops
        rng = self.range_of(pid)
        r = self.add(
            pid,
            "QuantizedAdd_8p8to8",
            {
                "a": a.data,
                "b": b.data,
                "a_min": a.mn,
                "a_max": a.mx,
                "b_min": b.mn,
                "b_max": b.mx,
                "output_min": rng[0],
                "output_max": rng[1],
            },
        )
        return self.triple(r, layout, self.stat(pid)["shape"], rng)

    def op_Concat(self, pid: str, args):
        axis = int(args.get("axis", 0))
        names = [v for k, v in args.items() if k not in ("axis",)]
        shape = self.stat(pid)["shape"]
        axis = axis % len(shape)
        layout = "nchw" if len(shape) == 4 and axis == 1 else "flat"
        ts = [self.qref(n, layout, pid) for n in names]
        ax4 = 3 if layout == "nchw" else axis + 4 - len(shape)
        flat_args: dict[str, Any] = {"axis": ax4}
        for i, t in enumerate(ts):
            flat_args[f"x{i}"] = t.data
        for i, t in enumerate(ts):
            flat_args[f"min{i}"] = t.mn
        for i, t in enumerate(ts):
            flat_args[f"max{i}"] = t.mx
        op = "QuantizedConcat_8" if ax4 == 3 else "QuantizedConcat_8_d32"
        r = self.add(pid, op, flat_args)
        return self.triple(r, layout, shape, None)

    def _reshape_to(self, pid: str, arg, shape) -> QT:
        x = self.qref(arg, "flat", pid)
        if len(shape) > 4:
            raise MDFError(f"quantize: {self.node.id}.{pid}: results of rank > 4 are not supported")
        r = self.add(
            pid,
            "QuantizedReshape",
            {
                "input": x.data,
                "shape": np.array(as4d(np.empty(shape)).shape, np.int32),
                "input_min": x.mn,
                "input_max": x.mx,
            },
        )
        return self.triple(r, "flat", shape, x.rng)

    def op_Reshape(self, pid: str, args):
        return self._reshape_to(pid, args["data"], self.stat(pid)["shape"])

    def op_Flatten(self, pid: str, args):
        return self._reshape_to(pid, args["input"], self.stat(pid)["shape"])

    def op_Softmax(self, pid: str, args):
        arg = args["input"]
        shape = self.stat(pid)["shape"]
        axis = int(args.get("axis", -1)) % len(shape)
        if axis == len(shape) - 1:
            x = self.qref(arg, "flat", pid)
        elif len(shape) == 4 and axis == 1:
            x = self.qref(arg, "nchw", pid)
        else:
            raise MDFError(
                f"quantize: {self.node.id}.{pid}: Softmax only along the last axis "
                "(or the channels of NCHW)"
            )
        r = self.add(
            pid, "QuantizedSoftmax_8", {"input": x.data, "input_min": x.mn, "input_max": x.mx}
        )
        return self.triple(r, x.layout, shape, (0.0, 1.0))


def quantize(
    model: Any,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None = None,
    graph: str | None = None,
) -> Model:
    """A copy of ``model`` whose supported onnx:: parameters run as quantized hexagon chains."""
    from ..loader import load

    src = load(model)
    stats = calibrate(src, calibration_inputs, graph)
    out = copy.deepcopy(src)
    g = out.get_graph(graph)
    for node in g.nodes:
        node.parameters = _NodeRewriter(node, stats).rewrite()
    return out


def run_quantized(
    model: Any,
    initializer: Mapping[str, Any] | None = None,
    calibration_inputs: Iterable[Mapping[str, Any] | None] | None = None,
    graph: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Quantize ``model`` (calibrated on ``calibration_inputs``, else on ``initializer``), run it
    once with ``initializer``; returns ``{node: {output port: value}}``."""
    from ..simulation import Simulation

    cal = calibration_inputs if calibration_inputs is not None else [initializer]
    qmodel = quantize(model, cal, graph)
    sim = Simulation(qmodel, graph=graph)
    sim.evaluate(initializer=initializer)
    return sim.outputs
