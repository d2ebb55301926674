"""Every Hexagon pad op: Pad_f (zeros), QuantizedPad_8 (a real pad value quantized: ±inf give code
0/255, a value within two codes of the range is clipped, further out an error), QuantizedPad_V2_8
(a quint8 code), QuantizedPad_16/_u16 (clipped within 1536 codes of the range, else an error;
±inf give the min/max code), MirrorPad_f/_8 (h and w only; MIRROR_REFLECT excludes the edge,
MIRROR_SYMMETRIC repeats it). Pads are [1,1,n,2] = (before, after) for the first n of b,h,w,d;
quantized pads copy the input range.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import (
    F32,
    O1,
    PADDING,
    Q_IN,
    as4d,
    codes,
    fval,
    ival,
    padding_code,
    q8_triple,
    scalar,
    step_u8,
)


def pad_widths(pads, a: np.ndarray) -> list[tuple[int, int]]:
    p = np.asarray(pads).astype(np.int64).reshape(-1, 2)
    if p.shape[0] > 4 or np.any(p < 0):
        raise MDFError(f"pads must be [1,1,n,2] with n <= 4 and values >= 0, got {p.tolist()}")
    return [tuple(int(v) for v in r) for r in p] + [(0, 0)] * (4 - p.shape[0])


@hexop("Pad_f", ("input", "paddings"), outputs=O1)
def pad_f(x, pads, *, padding="NA"):
    """Zero padding; pads [1,1,n,2] = (before, after) for the first n of b,h,w,d."""
    a = as4d(x, F32)
    return (np.pad(a, pad_widths(pads, a)),)


@hexop(
    "QuantizedPad_8",
    ("input", "input_min", "input_max", "paddings", "pad_value", "pad_code"),
    optional=("pad_value", "pad_code"),
)
def quantized_pad_8(q, q_min, q_max, pads, pad_value=None, pad_code=None, *, padding="NA"):
    """Pad with the quantized pad value (default 0.0; ±inf -> code 0/255; a value quantizing to
    -2..257 is clipped, one further out is an error); range copied. ``pad_code`` (input 5, int32)
    if given is used as the code directly [judgement]."""
    a = codes(q)
    mn, mx = fval(q_min), fval(q_max)
    p = np.asarray(pads).astype(np.int64).reshape(-1, 2)
    if p.shape[0] > 4 or np.any(p < 0):
        raise MDFError(f"QuantizedPad_8: pads must be [1,1,n,2] with n <= 4 and >= 0, got {p}")
    width = [tuple(r) for r in p] + [(0, 0)] * (4 - p.shape[0])
    if pad_code is not None:
        code = ival(pad_code)
        if not 0 <= code <= 255:
            raise MDFError(f"QuantizedPad_8: supplied pad code must be 0..255, got {code}")
    else:
        v = 0.0 if pad_value is None else float(fval(pad_value))
        if np.isinf(v):
            code = 0 if v < 0 else 255
        else:
            r = (F32(v) - F32(mn)) / step_u8(mn, mx)
            code = int(np.sign(r) * np.floor(abs(r) + 0.5))
            if not -2 <= code <= 257:
                raise MDFError(
                    f"QuantizedPad_8: pad value {v} is too far outside the range "
                    f"[{mn}, {mx}] (code {code}, allowed -2..257)"
                )
            code = min(255, max(0, code))
    return q8_triple(np.pad(a, width, constant_values=np.uint8(code)), mn, mx)


@hexop("QuantizedPad_V2_8", Q_IN + ("paddings", "pad_value"))
def quantized_pad_v2_8(q, q_min, q_max, pads, pad_value, *, padding="NA"):
    """Pad with the given quint8 code (a required scalar); range copied."""
    a = codes(q)
    code = ival(pad_value)
    if not 0 <= code <= 255:
        raise MDFError(f"QuantizedPad_V2_8: pad value must be a quint8 code 0..255, got {code}")
    return q8_triple(
        np.pad(a, pad_widths(pads, a), constant_values=np.uint8(code)), fval(q_min), fval(q_max)
    )


def _pad16(q, q_min, q_max, pads, value, signed: bool):
    a = as4d(q)
    mn, mx = float(fval(q_min)), float(fval(q_max))
    lo_code, hi_code = (-32768, 32767) if signed else (0, 65535)
    v = 0.0 if value is None else float(fval(value))
    if np.isinf(v):
        code = lo_code if v < 0 else hi_code
    else:
        c = v * 32768.0 / mx if signed else (v - mn) / ((mx - mn) / 65536.0)
        code = int(np.sign(c) * np.floor(abs(c) + 0.5))
        if code < lo_code - 1536 or code > hi_code + 1536:
            raise MDFError(f"pad value {v} is too far outside the range [{mn}, {mx}] (code {code})")
        code = min(hi_code, max(lo_code, code))
    out = np.pad(a, pad_widths(pads, a), constant_values=code)
    return out.astype(np.int16 if signed else np.uint16), scalar(mn), scalar(mx)


@hexop("QuantizedPad_16", Q_IN + ("paddings", "pad_value"), optional=("pad_value",))
def quantized_pad_16(q, q_min, q_max, pads, value=None, *, padding="NA"):
    """Pad qint16 data with the quantized pad value; range copied."""
    return _pad16(q, q_min, q_max, pads, value, True)


@hexop("QuantizedPad_u16", Q_IN + ("paddings", "pad_value"), optional=("pad_value",))
def quantized_pad_u16(q, q_min, q_max, pads, value=None, *, padding="NA"):
    """Pad quint16 data with the quantized pad value; range copied."""
    return _pad16(q, q_min, q_max, pads, value, False)


def mirror_pad(a: np.ndarray, pads, padding) -> np.ndarray:
    mode = padding_code(padding)
    if mode not in (PADDING["MIRROR_REFLECT"], PADDING["MIRROR_SYMMETRIC"]):
        raise MDFError("MirrorPad needs padding MIRROR_REFLECT or MIRROR_SYMMETRIC")
    w = pad_widths(pads, a)
    for d in (0, 3):
        if w[d] != (0, 0):
            raise MDFError("MirrorPad: batch and depth cannot be padded")
    reflect = mode == PADDING["MIRROR_REFLECT"]
    for d in (1, 2):
        limit = a.shape[d] - 1 if reflect else a.shape[d]
        if max(w[d]) > limit:
            raise MDFError(f"MirrorPad: pad {max(w[d])} too large for dim of size {a.shape[d]}")
    return np.pad(a, w, mode="reflect" if reflect else "symmetric")


@hexop("MirrorPad_f", ("input", "paddings"), outputs=O1, padding="MIRROR_REFLECT")
def mirror_pad_f(x, pads, *, padding="MIRROR_REFLECT"):
    """Mirror padding of h and w (reflect excludes the edge, symmetric repeats it)."""
    return (mirror_pad(as4d(x, F32), pads, padding),)


@hexop("MirrorPad_8", ("input", "paddings", "input_min", "input_max"), padding="MIRROR_REFLECT")
def mirror_pad_8(q, pads, q_min, q_max, *, padding="MIRROR_REFLECT"):
    """Mirror padding of quint8 data; range copied."""
    return q8_triple(mirror_pad(codes(q), pads, padding), fval(q_min), fval(q_max))
