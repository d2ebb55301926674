"""``onnx::`` shape and data-movement operators: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
Concat, Split, Slice, Tile, Expand, Pad, Shape, Size, Identity, Cast, CastLike, DepthToSpace and
SpaceToDepth.

These ops only move or relabel data, so they are numpy calls rather than Numba loops (numpy's
copy/stride machinery is already optimal for them). Reshape, Flatten, Squeeze, Unsqueeze,
Transpose, Slice and Identity return numpy *views* of their input where numpy can (no copy);
kernels never write into their inputs, and neither may a caller write into these outputs.
Expand returns a fresh array (not a read-only broadcast view).

Opset versions: Squeeze/Unsqueeze take ``axes`` as an attribute before 13 and as an input from
13; Split takes ``split`` as an attribute (2) then an input (13) and gains ``num_outputs`` (18);
Slice takes inputs from 10; Pad takes ``pads``/``value`` attributes at 2, inputs from 11, an
``axes`` input from 18 and ``wrap`` mode from 19; Reshape gains ``allowzero`` at 14; Shape
gains ``start``/``end`` at 15; DepthToSpace gains ``mode`` at 11. The opset-1 forms of Pad
(``paddings``), Slice, Squeeze and Split live in ``variants/legacy_shape.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from ..errors import MDFError
from ..limits import check_elements
from . import onnx_op

# ---------------------------------------------------------------- helpers


def _ints(x: Any) -> list[int]:
    """An attribute or a 1-D int tensor as a list of Python ints."""
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return [int(v) for v in x]
    if isinstance(x, np.ndarray):
        return [int(v) for v in x.reshape(-1).tolist()]
    return [int(v) for v in np.asarray(x).reshape(-1).tolist()]


def _axis(a: int, ndim: int, op: str, extra: int = 0) -> int:
    """Normalise a possibly negative axis for rank ``ndim`` (+``extra`` allowed positions)."""
    r = ndim + extra
    if not -r <= a < r:
        raise MDFError(f"{op}: axis {a} is out of range for rank {ndim}")
    return a % r if r else 0


# ---------------------------------------------------------------- Reshape / Flatten


def _reshape(data: Any, shape: Any, allowzero: int) -> np.ndarray:
    x = np.asarray(data)
    target = _ints(shape)
    if not allowzero:
        for i, s in enumerate(target):
            if s == 0:
                if i >= x.ndim:
                    raise MDFError(f"Reshape: a 0 at position {i} has no input dim to copy")
                target[i] = x.shape[i]
    if target.count(-1) > 1:
        raise MDFError("Reshape: at most one dimension may be -1")
    try:
        return x.reshape(target)
    except ValueError as e:
        raise MDFError(f"Reshape: cannot reshape {x.shape} into {tuple(target)}") from e


@onnx_op("Reshape", inputs=("data", "shape"), outputs=("reshaped",), since=5)
def reshape_v5(data, shape):
    """Reshape to ``shape`` (0 copies the input dim, -1 is inferred); a view when possible."""
    return (_reshape(data, shape, 0),)


@onnx_op(
    "Reshape",
    inputs=("data", "shape"),
    attributes={"allowzero": 0},
    outputs=("reshaped",),
    since=14,
)
def reshape(data, shape, *, allowzero=0):
    """Reshape; with ``allowzero`` a 0 in ``shape`` means an empty dim, not a copied one."""
    return (_reshape(data, shape, allowzero),)


@onnx_op("Flatten", inputs=("input",), attributes={"axis": 1}, outputs=("output",))
def flatten(input, *, axis=1):
    """2-D view: dims before ``axis`` become the rows, the rest the columns."""
    x = np.asarray(input)
    ax = int(axis)
    if not -x.ndim <= ax <= x.ndim:
        raise MDFError(f"Flatten: axis {ax} is out of range [-{x.ndim}, {x.ndim}]")
    ax = ax + x.ndim if ax < 0 else ax
    rows = math.prod(x.shape[:ax])
    cols = math.prod(x.shape[ax:])
    return (x.reshape(rows, cols),)


# ---------------------------------------------------------------- Squeeze / Unsqueeze


def _squeeze(data: Any, axes: Any) -> np.ndarray:
    x = np.asarray(data)
    if axes is None or np.size(axes) == 0:
        return x.reshape([s for s in x.shape if s != 1])
    ax = sorted({_axis(a, x.ndim, "Squeeze") for a in _ints(axes)})
    bad = [a for a in ax if x.shape[a] != 1]
    if bad:
        raise MDFError(f"Squeeze: axis {bad[0]} has length {x.shape[bad[0]]}, not 1")
    return x.reshape([s for i, s in enumerate(x.shape) if i not in ax])


@onnx_op("Squeeze", inputs=("data",), attributes={"axes": None}, outputs=("squeezed",), since=11)
def squeeze_v11(data, *, axes=None):
    """Remove the length-1 dims in ``axes`` (attribute; all length-1 dims when absent)."""
    return (_squeeze(data, axes),)


@onnx_op("Squeeze", inputs=("data", "axes"), optional=("axes",), outputs=("squeezed",), since=13)
def squeeze(data, axes=None):
    """Remove the length-1 dims in ``axes`` (input; all length-1 dims when absent)."""
    return (_squeeze(data, axes),)


def _unsqueeze(data: Any, axes: Any) -> np.ndarray:
    x = np.asarray(data)
    ax = _ints(axes)
    r = x.ndim + len(ax)
    norm = sorted({_axis(a, r, "Unsqueeze") for a in ax})
    if len(norm) != len(ax):
        raise MDFError(f"Unsqueeze: repeated axes in {ax}")
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return x.reshape(shape)


@onnx_op("Unsqueeze", inputs=("data",), attributes={"axes": None}, outputs=("expanded",))
def unsqueeze_v1(data, *, axes=None):
    """Insert length-1 dims at ``axes`` (attribute, positions in the output)."""
    return (_unsqueeze(data, axes),)


@onnx_op("Unsqueeze", inputs=("data", "axes"), outputs=("expanded",), since=13)
def unsqueeze(data, axes):
    """Insert length-1 dims at ``axes`` (input, positions in the output)."""
    return (_unsqueeze(data, axes),)


# ---------------------------------------------------------------- Transpose / Concat


@numba.njit(cache=True)
def transpose_jit(data, perm):
    """nopython Transpose: ``perm`` a tuple of ints (or None to reverse the dims); a view."""
    if perm is None:
        return data.T
    return np.transpose(data, perm)


@onnx_op(
    "Transpose",
    inputs=("data",),
    attributes={"perm": None},
    outputs=("transposed",),
    jit=transpose_jit,
)
def transpose(data, *, perm=None):
    """Permute the dims (reverse them when ``perm`` is absent); a strided view."""
    x = data if isinstance(data, np.ndarray) else np.asarray(data)
    if perm is None or len(perm) == 0:
        return (x.T,)
    p = _ints(perm)
    if len(p) != x.ndim or len(set(p)) != x.ndim or min(p) < 0 or max(p) >= x.ndim:
        raise MDFError(f"Transpose: perm {p} is not a permutation of 0..{x.ndim - 1}")
    return (np.transpose(x, p),)


def _concat(inputs: tuple, axis: int) -> np.ndarray:
    arrs = [np.asarray(a) for a in inputs if a is not None]
    if not arrs:
        raise MDFError("Concat needs at least one input")
    ax = _axis(int(axis), arrs[0].ndim, "Concat")
    try:
        return np.concatenate(arrs, axis=ax)
    except ValueError as e:
        raise MDFError(f"Concat: shapes {[a.shape for a in arrs]} differ off axis {ax}") from e


@onnx_op(
    "Concat", inputs=("inputs",), variadic=True, attributes={"axis": 1}, outputs=("concat_result",)
)
def concat_v1(*inputs, axis=1):
    """Join the inputs along ``axis`` (default 1 at opset 1)."""
    return (_concat(inputs, axis),)


@onnx_op(
    "Concat",
    inputs=("inputs",),
    variadic=True,
    attributes={"axis": 0},
    outputs=("concat_result",),
    since=4,
)
def concat(*inputs, axis=0):
    """Join the inputs along ``axis`` (negative counts from the end)."""
    return (_concat(inputs, axis),)


# ---------------------------------------------------------------- Split


def _split(x: np.ndarray, sizes: list[int], axis: int) -> tuple:
    ax = _axis(int(axis), x.ndim, "Split")
    if sum(sizes) != x.shape[ax] or any(s < 0 for s in sizes):
        raise MDFError(f"Split: sizes {sizes} do not add up to the axis length {x.shape[ax]}")
    out = []
    start = 0
    for s in sizes:
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(start, start + s)
        out.append(x[tuple(idx)].copy())
        start += s
    return tuple(out)


def _equal_sizes(x: np.ndarray, axis: int, k: Any) -> list[int]:
    """Sizes of ``k`` equal parts of ``x`` along ``axis`` (opsets 2-13: must divide evenly)."""
    n = x.shape[_axis(int(axis), x.ndim, "Split")]
    k = int(k)
    if k < 1 or n % k:
        raise MDFError(f"Split: an axis of length {n} does not split into {k} equal parts")
    return [n // k] * k


def _need_sizes(op: str) -> MDFError:
    return MDFError(
        f"{op}: give 'split' (sizes) — the number of outputs is not known to the "
        "kernel, so an equal split needs 'split' or, from opset 18, 'num_outputs'"
    )


# Before opset 18 an equal split has as many parts as the node has outputs, which only the
# graph runner knows: it passes that count as ``num_outputs`` (see ``onnx_ops.run``).
@onnx_op(
    "Split",
    inputs=("input",),
    attributes={"axis": 0, "split": None, "num_outputs": None},
    outputs=("outputs",),
    since=2,
)
def split_v2(input, *, axis=0, split=None, num_outputs=None):
    """Split along ``axis`` into parts of the sizes in the ``split`` attribute, or into
    ``num_outputs`` (the node's output count) equal parts."""
    x = np.asarray(input)
    if split is not None:
        return _split(x, _ints(split), axis)
    if num_outputs is None:
        raise _need_sizes("Split")
    return _split(x, _equal_sizes(x, axis, num_outputs), axis)


@onnx_op(
    "Split",
    inputs=("input", "split"),
    optional=("split",),
    attributes={"axis": 0, "num_outputs": None},
    outputs=("outputs",),
    since=13,
)
def split_v13(input, split=None, *, axis=0, num_outputs=None):
    """Split along ``axis`` into parts of the sizes given by the ``split`` input, or into
    ``num_outputs`` (the node's output count) equal parts."""
    x = np.asarray(input)
    if split is not None:
        return _split(x, _ints(split), axis)
    if num_outputs is None:
        raise _need_sizes("Split")
    return _split(x, _equal_sizes(x, axis, num_outputs), axis)


@onnx_op(
    "Split",
    inputs=("input", "split"),
    optional=("split",),
    attributes={"axis": 0, "num_outputs": None},
    outputs=("outputs",),
    since=18,
)
def split(input, split=None, *, axis=0, num_outputs=None):
    """Split along ``axis`` by ``split`` sizes, or into ``num_outputs`` parts of
    ceil(n/num_outputs) (the last one smaller)."""
    x = np.asarray(input)
    if split is not None:
        return _split(x, _ints(split), axis)
    if num_outputs is None:
        raise _need_sizes("Split")
    n = x.shape[_axis(int(axis), x.ndim, "Split")]
    k = int(num_outputs)
    if k < 1:
        raise MDFError(f"Split: num_outputs must be >= 1, got {k}")
    chunk = -(-n // k)
    sizes = [min(chunk, max(n - i * chunk, 0)) for i in range(k)]
    return _split(x, sizes, axis)


# ---------------------------------------------------------------- Slice


def _slice(data: Any, starts: Any, ends: Any, axes: Any, steps: Any) -> np.ndarray:
    x = np.asarray(data)
    st, en = _ints(starts), _ints(ends)
    ax = _ints(axes) if axes is not None else list(range(len(st)))
    sp = _ints(steps) if steps is not None else [1] * len(st)
    if not len(st) == len(en) == len(ax) == len(sp):
        raise MDFError("Slice: starts, ends, axes and steps must have the same length")
    idx = [slice(None)] * x.ndim
    for s, e, a, k in zip(st, en, ax, sp):
        a = _axis(a, x.ndim, "Slice")
        d = x.shape[a]
        if k == 0:
            raise MDFError("Slice: a step must not be 0")
        s = s + d if s < 0 else s
        e = e + d if e < 0 else e
        if k > 0:
            s = min(max(s, 0), d)
            e = min(max(e, 0), d)
            idx[a] = slice(s, e, k)
        else:
            s = min(max(s, -1), d - 1)
            e = min(max(e, -1), d - 1)
            idx[a] = (
                slice(s if s >= 0 else None, e if e >= 0 else None, k) if s >= 0 else slice(0, 0, 1)
            )
    return x[tuple(idx)]


@onnx_op(
    "Slice",
    inputs=("data", "starts", "ends", "axes", "steps"),
    optional=("axes", "steps"),
    outputs=("output",),
    since=10,
)
def slice_(data, starts, ends, axes=None, steps=None):
    """``data[starts:ends:steps]`` on ``axes``, bounds clamped as ONNX says; a strided view."""
    return (_slice(data, starts, ends, axes, steps),)


# ---------------------------------------------------------------- Tile / Expand


@onnx_op("Tile", inputs=("input", "repeats"), since=6, outputs=("output",))
def tile(input, repeats):
    """Repeat the input ``repeats[i]`` times along each dim i."""
    x = np.asarray(input)
    r = _ints(repeats)
    if len(r) != x.ndim:
        raise MDFError(f"Tile: repeats has {len(r)} entries for a tensor of rank {x.ndim}")
    check_elements([x.size, *r], "Tile")
    return (np.tile(x, r),)


@onnx_op("Expand", inputs=("input", "shape"), since=8, outputs=("output",))
def expand(input, shape):
    """Broadcast the input against ``shape`` (both ways: the result may exceed ``shape``)."""
    x = input if isinstance(input, np.ndarray) else np.asarray(input)
    want = _ints(shape)
    r = max(len(want), x.ndim)
    a = (1,) * (r - x.ndim) + x.shape
    w = [1] * (r - len(want)) + want
    target = []
    for da, dw in zip(a, w):
        if da != dw and da != 1 and dw != 1:
            raise MDFError(f"Expand: {x.shape} cannot broadcast with {tuple(want)}")
        target.append(da if dw == 1 else dw)
    check_elements(target, "Expand")
    out = np.empty(target, dtype=x.dtype)
    out[...] = x
    return (out,)


# ---------------------------------------------------------------- Pad


def _pad(
    x: np.ndarray,
    pads: list[int],
    mode: str,
    value: Any,
    axes: list[int] | None,
    allowed: tuple[str, ...],
) -> np.ndarray:
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in allowed:
        raise MDFError(f"Pad: mode must be one of {', '.join(allowed)}, got '{mode}'")
    nd = x.ndim
    if axes is None:
        axes = list(range(nd))
    axes = [_axis(a, nd, "Pad") for a in axes]
    if len(pads) != 2 * len(axes):
        raise MDFError(f"Pad: pads needs {2 * len(axes)} values, got {len(pads)}")
    before = [0] * nd
    after = [0] * nd
    for i, a in enumerate(axes):
        before[a] = pads[i]
        after[a] = pads[i + len(axes)]
    # negative pads crop
    if any(v < 0 for v in before) or any(v < 0 for v in after):
        x = x[
            tuple(
                slice(max(-b, 0), x.shape[i] - max(-e, 0))
                for i, (b, e) in enumerate(zip(before, after))
            )
        ]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    if mode == "constant":
        v = 0 if value is None or np.size(value) == 0 else np.asarray(value).reshape(-1)[0]
        out = np.full([n + b + e for n, (b, e) in zip(x.shape, width)], v, dtype=x.dtype)
        out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, width))] = x
        return out
    for i, (b, e) in enumerate(width):
        if (b or e) and x.shape[i] == 0:
            raise MDFError(f"Pad: {mode} mode cannot pad the empty axis {i}")
        if mode == "reflect" and (b or e) and x.shape[i] < 2:
            raise MDFError(f"Pad: reflect needs axis {i} of length >= 2")
    out = np.empty([n + b + e for n, (b, e) in zip(x.shape, width)], dtype=x.dtype)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, width))] = x
    # fill the borders axis by axis, copying whole planes of the already padded region
    for i, (b, e) in enumerate(width):
        if not (b or e):
            continue
        n = x.shape[i]
        pre = tuple(slice(None) for _ in range(i))
        post = tuple(slice(bb, bb + nn) for nn, (bb, _) in zip(x.shape[i + 1 :], width[i + 1 :]))
        for t in range(-b, n + e):
            if 0 <= t < n:
                continue
            if mode == "edge":
                src = min(max(t, 0), n - 1)
            elif mode == "wrap":
                src = t % n
            else:  # reflect: mirror without repeating the edge element
                period = 2 * (n - 1)
                src = abs(t) % period
                src = period - src if src >= n else src
            out[pre + (b + t,) + post] = out[pre + (b + src,) + post]
    return out


@onnx_op(
    "Pad",
    inputs=("data",),
    attributes={"pads": None, "mode": "constant", "value": 0.0},
    outputs=("output",),
    since=2,
)
def pad_v2(data, *, pads=None, mode="constant", value=0.0):
    """Pad (or crop, for negative values) by the ``pads`` attribute [begins..., ends...]."""
    if pads is None:
        raise MDFError("Pad (opset 2) needs the attribute 'pads'")
    return (
        _pad(np.asarray(data), _ints(pads), mode, value, None, ("constant", "reflect", "edge")),
    )


@onnx_op(
    "Pad",
    inputs=("data", "pads", "constant_value"),
    optional=("constant_value",),
    attributes={"mode": "constant"},
    outputs=("output",),
    since=11,
)
def pad_v11(data, pads, constant_value=None, *, mode="constant"):
    """Pad by the ``pads`` input; modes constant, reflect and edge."""
    return (
        _pad(
            np.asarray(data),
            _ints(pads),
            mode,
            constant_value,
            None,
            ("constant", "reflect", "edge"),
        ),
    )


@onnx_op(
    "Pad",
    inputs=("data", "pads", "constant_value", "axes"),
    optional=("constant_value", "axes"),
    attributes={"mode": "constant"},
    outputs=("output",),
    since=18,
)
def pad_v18(data, pads, constant_value=None, axes=None, *, mode="constant"):
    """Pad by ``pads`` over ``axes`` (all when absent); modes constant, reflect and edge."""
    return (
        _pad(
            np.asarray(data),
            _ints(pads),
            mode,
            constant_value,
            None if axes is None else _ints(axes),
            ("constant", "reflect", "edge"),
        ),
    )


@onnx_op(
    "Pad",
    inputs=("data", "pads", "constant_value", "axes"),
    optional=("constant_value", "axes"),
    attributes={"mode": "constant"},
    outputs=("output",),
    since=19,
)
def pad(data, pads, constant_value=None, axes=None, *, mode="constant"):
    """Pad by ``pads`` over ``axes``; modes constant, reflect, edge and wrap."""
    return (
        _pad(
            np.asarray(data),
            _ints(pads),
            mode,
            constant_value,
            None if axes is None else _ints(axes),
            ("constant", "reflect", "edge", "wrap"),
        ),
    )


# ---------------------------------------------------------------- Shape / Size / Identity


@onnx_op("Shape", inputs=("data",), outputs=("shape",))
def shape_v1(data):
    """The input's shape as a 1-D int64 tensor."""
    return (np.array(np.shape(data), dtype=np.int64),)


@onnx_op(
    "Shape", inputs=("data",), attributes={"start": 0, "end": None}, outputs=("shape",), since=15
)
def shape(data, *, start=0, end=None):
    """The dims ``start:end`` of the input's shape (clamped; negative from the end), int64."""
    s = np.shape(data)
    r = len(s)
    b = int(start)
    b = min(max(b + r if b < 0 else b, 0), r)
    e = r if end is None else int(end)
    e = min(max(e + r if e < 0 else e, 0), r)
    return (np.array(s[b:e], dtype=np.int64),)


@onnx_op("Size", inputs=("data",), outputs=("size",))
def size(data):
    """The number of elements, as a 0-d int64 tensor."""
    return (np.array(np.size(data), dtype=np.int64),)


@numba.njit(cache=True)
def identity_jit(input):
    """nopython Identity (returns its argument)."""
    return input


@onnx_op("Identity", inputs=("input",), outputs=("output",), jit=identity_jit)
def identity(input):
    """The input itself (no copy); sequences and optionals pass through unchanged."""
    return (input,)


# ---------------------------------------------------------------- Cast

#: ONNX TensorProto data types of the spec's era, by enum value.
ONNX_DTYPES: dict[int, Any] = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    8: np.str_,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
    14: np.complex64,
    15: np.complex128,
}
_DTYPE_NAMES = {
    "FLOAT": 1,
    "UINT8": 2,
    "INT8": 3,
    "UINT16": 4,
    "INT16": 5,
    "INT32": 6,
    "INT64": 7,
    "STRING": 8,
    "BOOL": 9,
    "FLOAT16": 10,
    "DOUBLE": 11,
    "UINT32": 12,
    "UINT64": 13,
    "COMPLEX64": 14,
    "COMPLEX128": 15,
}


def onnx_dtype(to: Any) -> np.dtype:
    """The numpy dtype for an ONNX data type given as its enum number or its name."""
    if isinstance(to, (str, bytes)):
        name = to.decode() if isinstance(to, bytes) else to
        key = name.upper().replace("TENSORPROTO.", "")
        if key in _DTYPE_NAMES:
            return np.dtype(ONNX_DTYPES[_DTYPE_NAMES[key]])
        try:
            return np.dtype(name)
        except TypeError as e:
            raise MDFError(f"unknown ONNX data type '{name}'") from e
    code = int(to)
    if code not in ONNX_DTYPES:
        raise MDFError(
            f"ONNX data type {code} is not supported (supported: bool, int8..int64, "
            "uint8..uint64, float16/32/64, complex, string)"
        )
    return np.dtype(ONNX_DTYPES[code])


def _parse_number(s: str) -> float:
    t = s.strip()
    u = t.upper()
    if u in ("INF", "+INF", "INFINITY", "+INFINITY"):
        return np.inf
    if u in ("-INF", "-INFINITY"):
        return -np.inf
    if u in ("NAN", "+NAN", "-NAN"):
        return np.nan
    try:
        return float(t)
    except ValueError as e:
        raise MDFError(f"Cast: cannot parse '{s}' as a number") from e


def _format_number(v: Any) -> str:
    if isinstance(v, (np.floating, float)):
        f = float(v)
        if np.isnan(f):
            return "NaN"
        if np.isinf(f):
            return "INF" if f > 0 else "-INF"
        return str(v)
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    return str(v)


def cast_array(x: Any, to: Any) -> np.ndarray:
    """Cast with ONNX rules: float -> int truncates toward zero, nonzero -> True, strings are
    parsed (``"INF"``, ``"-INF"``, ``"NaN"`` case-insensitive) or formatted plainly."""
    a = np.asarray(x)
    dt = onnx_dtype(to)
    if dt.kind == "U":
        flat = [_format_number(v) for v in a.reshape(-1)]
        return np.array(flat, dtype=object).reshape(a.shape)
    if a.dtype.kind in "OUS":
        flat = [
            v
            if not isinstance(v, (str, bytes))
            else _parse_number(v.decode() if isinstance(v, bytes) else v)
            for v in a.reshape(-1).tolist()
        ]
        vals = np.array(flat, dtype=np.float64).reshape(a.shape)
        if dt.kind in "iu":
            vals = np.trunc(vals)
        return vals.astype(dt)
    with np.errstate(invalid="ignore", over="ignore"):
        return a.astype(dt)


@onnx_op("Cast", inputs=("input",), attributes={"to": 1}, outputs=("output",), since=6)
def cast(input, *, to=1):
    """Convert to the ONNX data type ``to`` (enum number or name)."""
    return (cast_array(input, to),)


@onnx_op(
    "Cast", inputs=("input",), attributes={"to": 1, "saturate": 1}, outputs=("output",), since=19
)
def cast_v19(input, *, to=1, saturate=1):
    """Cast; ``saturate`` only concerns float8 targets, which are outside the spec's era."""
    return (cast_array(input, to),)


def _castlike(input: Any, target_type: Any) -> np.ndarray:
    t = np.asarray(target_type)
    if t.dtype.kind in "OUS":
        return cast_array(input, "STRING")
    return cast_array(input, t.dtype.name)


@onnx_op("CastLike", inputs=("input", "target_type"), outputs=("output",), since=15)
def castlike(input, target_type):
    """Cast ``input`` to the element type of ``target_type`` (only its dtype is read)."""
    return (_castlike(input, target_type),)


@onnx_op(
    "CastLike",
    inputs=("input", "target_type"),
    attributes={"saturate": 1},
    outputs=("output",),
    since=19,
)
def castlike_v19(input, target_type, *, saturate=1):
    """CastLike; ``saturate`` only concerns float8 targets, which are outside the spec's era."""
    return (_castlike(input, target_type),)


# ---------------------------------------------------------------- DepthToSpace / SpaceToDepth


def _depth_to_space(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    if x.ndim != 4:
        raise MDFError(f"DepthToSpace: input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    if c % (b * b):
        raise MDFError(f"DepthToSpace: channels {c} not divisible by blocksize^2 = {b * b}")
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise MDFError(f"DepthToSpace: mode must be DCR or CRD, got '{mode}'")
    return t.reshape(n, c // (b * b), h * b, w * b)


@onnx_op("DepthToSpace", inputs=("input",), attributes={"blocksize": None}, outputs=("output",))
def depthtospace_v1(input, *, blocksize=None):
    """Move blocks of channels into spatial blocks (DCR order)."""
    if blocksize is None:
        raise MDFError("DepthToSpace needs the attribute 'blocksize'")
    return (_depth_to_space(np.asarray(input), int(blocksize), "DCR"),)


@onnx_op(
    "DepthToSpace",
    inputs=("input",),
    attributes={"blocksize": None, "mode": "DCR"},
    outputs=("output",),
    since=11,
)
def depthtospace(input, *, blocksize=None, mode="DCR"):
    """Move blocks of channels into spatial blocks, ``mode`` DCR (default) or CRD."""
    if blocksize is None:
        raise MDFError("DepthToSpace needs the attribute 'blocksize'")
    return (_depth_to_space(np.asarray(input), int(blocksize), str(mode)),)


def _space_to_depth(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    if x.ndim != 4:
        raise MDFError(f"SpaceToDepth: input must be 4-D (N, C, H, W), got shape {x.shape}")
    n, c, h, w = x.shape
    if h % b or w % b:
        raise MDFError(f"SpaceToDepth: H={h} and W={w} must be multiples of blocksize {b}")
    t = x.reshape(n, c, h // b, b, w // b, b)
    if mode == "DCR":
        t = t.transpose(0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        t = t.transpose(0, 1, 3, 5, 2, 4)
    else:
        raise MDFError(f"SpaceToDepth: mode must be DCR or CRD, got '{mode}'")
    return t.reshape(n, c * b * b, h // b, w // b)


@onnx_op("SpaceToDepth", inputs=("input",), attributes={"blocksize": None}, outputs=("output",))
def spacetodepth_v1(input, *, blocksize=None):
    """Move spatial blocks of ``blocksize`` x ``blocksize`` into channels (DCR order)."""
    if blocksize is None:
        raise MDFError("SpaceToDepth needs the attribute 'blocksize'")
    return (_space_to_depth(np.asarray(input), int(blocksize), "DCR"),)


@onnx_op(
    "SpaceToDepth",
    inputs=("input",),
    attributes={"blocksize": None, "mode": "DCR"},
    outputs=("output",),
    since=28,
)
def spacetodepth(input, *, blocksize=None, mode="DCR"):
    """SpaceToDepth with the channel order ``mode`` (DCR or CRD; opset 28)."""
    if blocksize is None:
        raise MDFError("SpaceToDepth needs the attribute 'blocksize'")
    return (_space_to_depth(np.asarray(input), int(blocksize), str(mode)),)
