"""Hexagon float and int32 ops (the document's reference and bookkeeping ops): elementwise
arithmetic (size-1 dims broadcast; int32 wraps around like the C code), rounding, casts, Select,
AddN, Range, Sink/Rank, transposes, concatenation, slicing, zero and mirror padding, the
reductions Sum/Prod/Min/Max (``dims`` list, ``true_rank``, VALID padding squeezes reduced dims to
the front), ArgMax, TopK, LRN and bilinear resize.

Casts from float saturate to the target's range after truncating toward zero [judgement: C leaves
out-of-range conversions undefined]; int32 -> uint8 keeps the low 8 bits, as C does.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import F32, PADDING, as4d, ilist, ival, padding_code

O1 = ("output",)


def _bcast(a: np.ndarray, b: np.ndarray) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise MDFError(f"shapes {a.shape} and {b.shape} do not broadcast (sizes must match or be 1)"
                       ) from None


def _i32(x) -> np.ndarray:
    return as4d(x).astype(np.int64)


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((v + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


def _unary(name: str, fn, dtype, doc: str) -> None:
    def kernel(x, *, padding="NA"):
        return (fn(as4d(x, dtype)),)
    kernel.__doc__ = doc
    hexop(name, ("input",), outputs=O1)(kernel)


_unary("Neg_f", lambda a: -a, F32, "-x in float.")
_unary("Abs_f", np.abs, F32, "|x| in float.")
_unary("Ceil_f", np.ceil, F32, "ceil(x) in float.")
_unary("Floor_f", np.floor, F32, "floor(x) in float.")
_unary("Round_f", np.rint, F32, "x rounded to nearest, ties to even.")
_unary("Neg_int32", lambda a: _wrap32(-a.astype(np.int64)), np.int32, "-x in int32 (wraps).")
_unary("Abs_int32", lambda a: _wrap32(np.abs(a.astype(np.int64))), np.int32, "|x| in int32.")
_unary("BitwiseNot_int32", np.invert, np.int32, "~x in int32.")
_unary("Convert_int32_f", lambda a: a.astype(F32), np.int32, "int32 -> float32 (direct cast).")
_unary("CastInt32ToFloat32", lambda a: a.astype(F32), np.int32, "int32 -> float32.")
_unary("CastUInt8ToFloat32", lambda a: a.astype(F32), np.uint8, "uint8 -> float32.")
_unary("CastUInt8ToInt32", lambda a: a.astype(np.int32), np.uint8, "uint8 -> int32.")
_unary("CastInt32ToUInt8", lambda a: (a.astype(np.int64) & 0xFF).astype(np.uint8), np.int32,
       "int32 -> uint8 keeping the low 8 bits (C conversion).")


def _float_to(a: np.ndarray, dtype) -> np.ndarray:
    if not np.all(np.isfinite(a)):
        raise MDFError("cast from float: input holds NaN or inf")
    info = np.iinfo(dtype)
    return np.clip(np.trunc(a.astype(np.float64)), info.min, info.max).astype(dtype)


_unary("CastFloat32ToInt32", lambda a: _float_to(a, np.int32), F32,
       "float32 -> int32, truncating toward zero, saturating.")
_unary("CastFloat32ToUInt8", lambda a: _float_to(a, np.uint8), F32,
       "float32 -> uint8, truncating toward zero, saturating at 0 and 255.")


def _binary_i32(name: str, fn, doc: str) -> None:
    def kernel(a, b, *, padding="NA"):
        x, y = _i32(a), _i32(b)
        _bcast(x, y)
        return (_wrap32(fn(x, y)),)
    kernel.__doc__ = doc
    hexop(name, ("a", "b"), outputs=O1)(kernel)


_binary_i32("Add_int32", np.add, "a + b in int32 (wraps), broadcasting size-1 dims.")
_binary_i32("Sub_int32", np.subtract, "a - b in int32 (wraps), broadcasting size-1 dims.")
_binary_i32("Mul_int32", np.multiply, "a * b in int32 (low 32 bits), broadcasting size-1 dims.")
_binary_i32("BitwiseAnd_int32", np.bitwise_and, "a & b in int32, broadcasting size-1 dims.")
_binary_i32("BitwiseOr_int32", np.bitwise_or, "a | b in int32, broadcasting size-1 dims.")
_binary_i32("BitwiseXor_int32", np.bitwise_xor, "a ^ b in int32, broadcasting size-1 dims.")


@hexop("AddN_f", ("inputs",), outputs=O1, variadic=True)
def add_n_f(*xs, padding="NA"):
    """Sum of N >= 1 float tensors of the same shape (no broadcasting)."""
    if not xs:
        raise MDFError("AddN_f needs at least one input")
    arrs = [as4d(x, F32) for x in xs]
    if any(a.shape != arrs[0].shape for a in arrs):
        raise MDFError(f"AddN_f inputs must all have the same shape, got "
                       f"{[a.shape for a in arrs]}")
    return (np.sum(arrs, axis=0, dtype=F32),)


@hexop("Select_f", ("cond", "x", "y"), outputs=O1)
def select_f(cond, x, y, *, padding="NA"):
    """x where cond != 0 else y; all three the same shape."""
    c, a, b = as4d(cond), as4d(x, F32), as4d(y, F32)
    if not c.shape == a.shape == b.shape:
        raise MDFError(f"Select_f needs equal shapes, got {c.shape}, {a.shape}, {b.shape}")
    return (np.where(c != 0, a, b),)


@hexop("Range_int32", ("start", "limit", "delta"), outputs=O1)
def range_int32(start, limit, delta, *, padding="NA"):
    """start, start+delta, ... while < limit (or > limit when limit < start), as [1,1,1,n]."""
    s0, lim, d = ival(start), ival(limit), ival(delta)
    if d == 0 or (lim > s0 and d < 0) or (lim < s0 and d > 0):
        raise MDFError(f"Range_int32: delta {d} never reaches limit {lim} from {s0}")
    return (np.arange(s0, lim, d, dtype=np.int32).reshape(1, 1, 1, -1),)


@hexop("Sink", ("inputs",), outputs=(), variadic=True)
def sink(*xs, padding="NA"):
    """Does nothing (keeps its producers alive); no outputs."""
    return ()


@hexop("Rank_int32", ("input", "rank"), outputs=O1)
def rank_int32(x, rank, *, padding="NA"):
    """A copy of input 1 (the rank given for input 0)."""
    return (np.array(as4d(rank), dtype=np.int32, copy=True),)


def _transpose(x, perm) -> np.ndarray:
    a = as4d(x)
    p = ilist(perm)
    n = len(p)
    if not 1 <= n <= 4 or sorted(p) != list(range(n)):
        raise MDFError(f"transpose: perm must be a permutation of 0..n-1 (n <= 4), got {p}")
    return np.ascontiguousarray(a.transpose(list(range(4 - n)) + [4 - n + v for v in p]))


@hexop("Transpose_f", ("input", "perm"), outputs=O1)
def transpose_f(x, perm, *, padding="NA"):
    """Transpose by perm applied to the last n dims."""
    return (_transpose(as4d(x, F32), perm),)


@hexop("Transpose_int32", ("input", "perm"), outputs=O1)
def transpose_int32(x, perm, *, padding="NA"):
    """Transpose by perm applied to the last n dims."""
    return (_transpose(as4d(x, np.int32), perm),)


def _concat(axis, xs, dtype):
    ax = ival(axis)
    if not 0 <= ax <= 3:
        raise MDFError(f"concat axis must be 0..3 (b,h,w,d), got {ax}")
    try:
        return (np.concatenate([as4d(x, dtype) for x in xs], axis=ax),)
    except ValueError as e:
        raise MDFError(f"concat: inputs do not fit along axis {ax}: {e}") from None


@hexop("Concat_f", ("axis", "inputs"), outputs=O1, variadic=True)
def concat_f(axis, *xs, padding="NA"):
    """Concatenate float tensors along axis (input 0)."""
    return _concat(axis, xs, F32)


@hexop("ConcatV2_f", ("inputs",), outputs=O1, variadic=True)
def concat_v2_f(*args, padding="NA"):
    """Concatenate float tensors along axis (the last input)."""
    return _concat(args[-1], args[:-1], F32)


@hexop("ConcatV2_int32", ("inputs",), outputs=O1, variadic=True)
def concat_v2_int32(*args, padding="NA"):
    """Concatenate int32 tensors along axis (the last input)."""
    return _concat(args[-1], args[:-1], np.int32)


def slice_4d(a: np.ndarray, start, size) -> np.ndarray:
    st, sz = ilist(start), ilist(size)
    if len(st) != len(sz) or len(st) > 4:
        raise MDFError(f"slice: start {st} and size {sz} must have the same length <= 4")
    st = [0] * (4 - len(st)) + st
    sz = [-1] * (4 - len(sz)) + sz
    idx = []
    for d, (s, n) in enumerate(zip(st, sz)):
        n = a.shape[d] - s if n == -1 else n
        if s < 0 or n < 0 or s + n > a.shape[d]:
            raise MDFError(f"slice [{s}, {s + n}) is outside dim {d} of size {a.shape[d]}")
        idx.append(slice(s, s + n))
    return np.ascontiguousarray(a[tuple(idx)])


for _name, _dt in (("Slice_f", F32), ("Slice_int32", np.int32), ("Slice_8", np.uint8)):
    def _slice_kernel(x, start, size, *, padding="NA", _dt=_dt):
        return (slice_4d(as4d(x, _dt), start, size),)
    _slice_kernel.__doc__ = "Slice from start with size (-1 = rest), left-padded full slices."
    hexop(_name, ("input", "start", "size"), outputs=O1)(_slice_kernel)


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


def reduce_4d(a: np.ndarray, dims, true_rank, padding, fn) -> np.ndarray:
    """Reduce over the listed dims (indices into the last ``true_rank`` of b,h,w,d)."""
    r = 4 if true_rank is None else ival(true_rank)
    if not 1 <= r <= 4:
        raise MDFError(f"true rank must be 1..4, got {r}")
    d = None if dims is None else ilist(dims)
    if d is None or any(v < 0 for v in d):
        axes = (0, 1, 2, 3)
    else:
        if any(v >= r for v in d):
            raise MDFError(f"reduction dims {d} out of range for rank {r}")
        axes = tuple(sorted({4 - r + v for v in d}))
    out = fn(a, axis=axes, keepdims=True)
    if padding_code(padding) == PADDING["VALID"]:
        kept = [n for i, n in enumerate(out.shape) if i not in axes]
        out = out.reshape([1] * (4 - len(kept)) + kept)
    return out


for _name, _fn, _dt in (("Sum_f", np.sum, F32), ("Prod_f", np.prod, F32),
                        ("Min_f", np.min, F32), ("Max_f", np.max, F32),
                        ("Prod_int32", np.prod, np.int32)):
    def _red_kernel(x, dims=None, true_rank=None, *, padding="NA", _fn=_fn, _dt=_dt):
        a = as4d(x, _dt)
        if _dt is np.int32:
            return (_wrap32(reduce_4d(a.astype(np.int64), dims, true_rank, padding, _fn)),)
        return (reduce_4d(a, dims, true_rank, padding, _fn).astype(_dt),)
    _red_kernel.__doc__ = (f"{_name}: reduce over dims (all if none or any < 0); VALID padding "
                           "squeezes the reduced dims to the front.")
    hexop(_name, ("input", "dims", "true_rank"), outputs=O1,
          optional=("dims", "true_rank"))(_red_kernel)


@hexop("ArgMax_ftoInt32", ("input", "axis"), outputs=O1)
def argmax_f_to_int32(x, axis, *, padding="NA"):
    """Index of the largest value along axis (0..3, negative from the end); first on ties."""
    a = as4d(x, F32)
    ax = ival(axis)
    if not -4 <= ax <= 3:
        raise MDFError(f"ArgMax_ftoInt32: axis must be in -4..3, got {ax}")
    return (np.argmax(a, axis=ax % 4, keepdims=True).astype(np.int32),)


@hexop("TopK_f", ("input", "k"), outputs=("values", "indices"))
def topk_f(x, k, *, padding="NA"):
    """The k largest values along depth, descending (lower index first on ties), and indices
    (int32); if the depth is smaller than k, all of it, sorted."""
    a = as4d(x, F32)
    kk = ival(k)
    if kk < 1:
        raise MDFError(f"TopK_f: k must be >= 1, got {kk}")
    idx = np.argsort(-a, axis=3, kind="stable")[..., :kk]
    return np.take_along_axis(a, idx, axis=3), idx.astype(np.int32)


@hexop("LRN_f", ("input", "window", "bias", "alpha", "beta"), outputs=O1)
def lrn_f(x, window, bias, alpha, beta, *, padding="NA"):
    """x / (bias + alpha/n * sum over the centred window of x^2)^beta."""
    from .norm import lrn_real

    return (lrn_real(as4d(x, np.float64), window, bias, alpha, beta).astype(F32),)


@hexop("ResizeBilinear_f", ("input", "new_dims", "align_corners"), outputs=O1,
       optional=("align_corners",))
def resize_bilinear_f(x, dims, align_corners=None, *, padding="NA"):
    """Bilinear resize to (h_out, w_out), TF source mapping."""
    from .norm import bilinear

    return (bilinear(as4d(x, np.float64), dims, align_corners).astype(F32),)


