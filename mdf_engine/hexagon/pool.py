"""Hexagon pooling: QuantizedMaxPool_8 / AvgPool_8 / L2Pool_8 (window and stride are shape-only
tensors [1,wh,ww,1]; the output range is the input's; average = integer mean of the in-bounds
codes rounded half up; L2 = sqrt of the mean square of the real values, re-quantized and clipped)
and the float MaxPool_f / AvgPool_f / L2Pool_f. Output size follows the padding attribute."""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from . import _kernels as K
from ._registry import hexop
from .quant import (
    F32,
    as4d,
    codes,
    fval,
    out_size_and_pad,
    padding_code,
    q8_triple,
    shape_of,
    step_u8,
    zero_code,
)

KINDS = {"max": 0, "avg": 1, "l2": 2}


def _geometry(x: np.ndarray, window, stride, padding):
    pad = padding_code(padding)
    wb, wh, ww, wd = shape_of(window)
    sb, sh, sw, sd = shape_of(stride)
    if wb != 1 or wd != 1 or sb != 1 or sd != 1:
        raise MDFError(
            f"pooling window and stride must be [1,h,w,1], got {(wb, wh, ww, wd)} "
            f"and {(sb, sh, sw, sd)}"
        )
    oh, pt = out_size_and_pad(x.shape[1], wh, sh, pad)
    ow, pl = out_size_and_pad(x.shape[2], ww, sw, pad)
    return wh, ww, sh, sw, pt, pl, oh, ow


def pool_q8(kind: str, q, q_min, q_max, window, stride, padding):
    x = np.ascontiguousarray(codes(q))
    mn, mx = fval(q_min), fval(q_max)
    g = _geometry(x, window, stride, padding)
    out = K.pool_u8(x, KINDS[kind], *g, zero_code(mn, mx), float(step_u8(mn, mx)))
    return q8_triple(out, mn, mx)


def pool_float(kind: str, x, window, stride, padding):
    a = np.ascontiguousarray(as4d(x, F32))
    return (K.pool_f(a, KINDS[kind], *_geometry(a, window, stride, padding)),)


Q_POOL_IN = ("input", "input_min", "input_max", "window", "stride")
F_POOL_IN = ("input", "window", "stride")


def _register() -> None:
    for kind, label in (("max", "Max"), ("avg", "Avg"), ("l2", "L2")):

        def q_kernel(q, q_min, q_max, window, stride, *, padding="VALID", _k=kind):
            return pool_q8(_k, q, q_min, q_max, window, stride, padding)

        q_kernel.__doc__ = f"Quantized {label} pooling of quint8 data; range copied."
        hexop(f"Quantized{label}Pool_8", Q_POOL_IN, padding="VALID")(q_kernel)

        def f_kernel(x, window, stride, *, padding="VALID", _k=kind):
            return pool_float(_k, x, window, stride, padding)

        f_kernel.__doc__ = f"Float {label} pooling."
        hexop(f"{label}Pool_f", F_POOL_IN, outputs=("output",), padding="VALID")(f_kernel)


_register()
