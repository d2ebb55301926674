"""The node rewriter of the float-to-quantized pass, part 2: one ``op_<Op>`` method per supported
onnx:: operator (Conv, Gemm, MatMul, Relu, Clip, pools, Add, Concat, Reshape, Flatten, Softmax),
each writing the hexagon chain of :mod:`.quantize_pass`'s docstring and returning the
quantized result as a :class:`~.quantize_rewrite.QT`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from .quant import (
    F32,
    PADDING,
    adjust_range,
    as4d,
    out_size_and_pad,
    quantize_u8,
    step_u8,
)
from .quantize_rewrite import QT, RewriterBase


class NodeRewriter(RewriterBase):
    """Rewrites the supported onnx:: parameters of one node into hexagon chains."""

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
            acc = self._bias_add(pid, conv, self.bias_q32(b, sx, sw))
        return self._requantized(pid, acc, "nchw")

    def _bias_add(self, pid: str, acc: str, bias: tuple) -> str:
        """The node adding int32 bias codes ``bias`` (codes, min, max) to the accumulator
        triple of node ``acc``."""
        codes, lo, hi = bias
        args = {"input": f"{acc}[0]", "bias": codes, "input_min": f"{acc}[1]"}
        args.update(input_max=f"{acc}[2]", bias_min=lo, bias_max=hi)
        return self.add(pid, "QuantizedBiasAdd_32p32to32", args)

    def _requantized(self, pid: str, acc: str, layout: str) -> QT:
        """The int32 accumulator ``acc`` requantized to 8 bits in ``pid``'s recorded range."""
        rng = self.range_of(pid)
        out = self.requant32(pid, acc, rng)
        return self.triple(out, layout, self.stat(pid)["shape"], rng)

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
            b = np.broadcast_to(bias.reshape(-1), (w.shape[1],))
            acc = self._bias_add(pid, mm, self.bias_q32(b, step_u8(*xr), step_u8(wmn, wmx)))
        return self._requantized(pid, acc, "flat")

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
