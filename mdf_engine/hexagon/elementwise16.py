"""Hexagon 16-bit arithmetic: QuantizedAdd/Sub/Mul_16 (qint16, symmetric) and _u16 (quint16): the
real result quantized to the required output range, enlarged when it is below 1/8192 of the
largest input range (add/sub) or below 1/32768 of the product of the input ranges (mul).
"""

from __future__ import annotations

import numpy as np

from ._registry import hexop
from .quant import (
    check_broadcast,
    fval,
    real_i16,
    real_u16,
    scalar,
    to_i16,
    to_u16,
)

BIN16 = ("a", "b", "a_min", "a_max", "b_min", "b_max", "output_min", "output_max")


def _binary16(op: str, signed: bool, a, b, a_min, a_max, b_min, b_max, out_min, out_max):
    if signed:
        ra, rb = real_i16(a, a_max), real_i16(b, b_max)
    else:
        ra, rb = real_u16(a, a_min, a_max), real_u16(b, b_min, b_max)
    check_broadcast(ra, rb)
    r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](ra, rb)
    rng_a = float(fval(a_max)) - float(fval(a_min))
    rng_b = float(fval(b_max)) - float(fval(b_min))
    least = rng_a * rng_b / 32768.0 if op == "mul" else max(rng_a, rng_b) / 8192.0
    lo, hi = float(fval(out_min)), float(fval(out_max))
    if signed:
        m = max(abs(lo), abs(hi), least / 2)
        return to_i16(r, m), scalar(-m), scalar(m)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < least:
        k = least / (hi - lo) if hi > lo else None
        lo, hi = (lo * k, hi * k) if k else (0.0, least)
    return to_u16(r, lo, hi), scalar(lo), scalar(hi)


for _name, _op, _signed in (
    ("QuantizedAdd_16", "add", True),
    ("QuantizedSub_16", "sub", True),
    ("QuantizedMul_16", "mul", True),
    ("QuantizedAdd_u16", "add", False),
    ("QuantizedSub_u16", "sub", False),
    ("QuantizedMul_u16", "mul", False),
):

    def _k16(
        a,
        b,
        a_min,
        a_max,
        b_min,
        b_max,
        out_min,
        out_max,
        *,
        padding="NA",
        _op=_op,
        _signed=_signed,
    ):
        return _binary16(_op, _signed, a, b, a_min, a_max, b_min, b_max, out_min, out_max)

    _k16.__doc__ = (
        f"{_name}: {_op} of {'qint16' if _signed else 'quint16'} tensors into the "
        "required output range (broadcast)."
    )
    hexop(_name, BIN16)(_k16)
