"""Early (opsets 1-10) shape, indexing, reduction and type forms, as adapters over the ``shape``,
``indexing``, ``reductions`` and ``creation`` family kernels.

What the early forms take as attributes, the adapters pass on as the later inputs (or, where an
early standard version exists, as its attributes):

* Reshape (opsets 1-4): attribute ``shape`` -> Reshape-5's ``shape`` input;
* Slice (opsets 1-9): ``starts``/``ends``/``axes`` attributes -> Slice-10's inputs;
* Squeeze/Unsqueeze: ``axes`` attribute (Squeeze-11 / Unsqueeze-1);
* Split (opsets 1-12): part lengths from the 2nd input or the attribute ``split``, or
  ``num_outputs`` equal parts (the node's output count, which a kernel cannot see) -> Split-2;
* ArgMax/ArgMin: seed 000's ``axes`` (a one-element list) is read as ``axis``;
* Reduce*: ``axes`` attribute (the opset-1 forms); Concat/Flatten/Gather/Constant: unchanged;
* Cast (opsets 1-5): ``to`` may be a type name string ('FLOAT', 'tensor(double)', ...);
* Pad (opset 1): ``paddings`` interleaved per axis ``[b0, e0, b1, e1, ...]`` -> Pad-2's
  ``pads`` ``[b0, b1, ..., e0, e1, ...]``, non-negative only.

The forms that tie with a standard ``since=1`` version are shadowed (see
:mod:`~mdf_engine.onnx_ops.variants.legacy`); they stay callable through ``legacy.call``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from ...registry import REQUIRED
from ..cast import DTYPE_NAMES, ONNX_DTYPES
from .legacy import arr, given, legacy_op, standard, text


def _run(op: str, since: int, inputs: list[Any], attrs: dict[str, Any] | None = None) -> tuple:
    return standard(op, since).call(inputs, attrs)


def _no_half(x: Any) -> np.ndarray:
    """float16 data as float32 (exact; ``keep_half`` gives float outputs back as float16), for
    the kernels that select or compare values without a float16 path."""
    x = arr(x)
    return x.astype(np.float32) if x.dtype == np.float16 else x


@legacy_op(
    "Reshape",
    inputs=("data",),
    outputs=("reshaped",),
    attributes={"shape": None, "consumed_inputs": None},
)
def reshape_legacy(data, *, shape=None, consumed_inputs=None):
    """Reshape of opsets 1-4: the target is the attribute ``shape``; 0 copies the input's dim,
    -1 is inferred (a numpy view when possible)."""
    if shape is None:
        raise MDFError("onnx::Reshape (opset < 5) needs the attribute 'shape'")
    return _run("Reshape", 5, [data, np.asarray(shape, dtype=np.int64)])


@legacy_op(
    "Slice",
    inputs=("data",),
    outputs=("output",),
    attributes={"starts": REQUIRED, "ends": REQUIRED, "axes": None},
)
def slice_legacy(data, *, starts, ends, axes=None):
    """Slice of opsets 1-9: attributes ``starts``, ``ends`` and optional ``axes`` (default
    0..len-1); numpy semantics, negative values count from the end, out of range values clamp;
    step 1. Returns a numpy view."""
    if len(starts) != len(ends):
        raise MDFError("onnx::Slice: starts and ends must have the same length")
    if axes is not None and len(axes) != len(starts):
        raise MDFError("onnx::Slice: axes, starts and ends must have the same length")
    ints = [None if v is None else np.asarray(v, dtype=np.int64) for v in (starts, ends, axes)]
    return _run("Slice", 10, [data, *ints])


@legacy_op("Squeeze", inputs=("data",), outputs=("squeezed",), attributes={"axes": None})
def squeeze_legacy(data, *, axes=None):
    """Squeeze of opsets 1-12: attribute ``axes`` (default: every size-1 dim); a listed dim
    that is not 1 is an error. Returns a numpy view."""
    return _run("Squeeze", 11, [data], given(axes=axes))


@legacy_op("Unsqueeze", inputs=("data",), outputs=("expanded",), attributes={"axes": REQUIRED})
def unsqueeze_legacy(data, *, axes):
    """Unsqueeze of opsets 1-12: attribute ``axes`` are positions in the output. A view."""
    return _run("Unsqueeze", 1, [data], {"axes": axes})


@legacy_op(
    "Split",
    inputs=("input", "split"),
    optional=("split",),
    outputs=("outputs",),
    attributes={"axis": 0, "split": None, "num_outputs": None},
)
def split_legacy(input, split_input=None, *, axis=0, split=None, num_outputs=None):
    """Split of opsets 1-12: part lengths from the 2nd input or the attribute ``split``; equal
    parts if neither is given. The number of equal parts is the node's number of outputs,
    which a kernel cannot see: pass it as ``num_outputs`` (the name opset 18 gives it)."""
    parts = split_input if split_input is not None else split
    if parts is not None:
        parts = [int(p) for p in np.asarray(parts).ravel()]
    return _run("Split", 2, [input], given(axis=axis, split=parts, num_outputs=num_outputs))


@legacy_op(
    "Concat", inputs=("inputs",), variadic=True, outputs=("concat_result",), attributes={"axis": 1}
)
def concat_legacy(*inputs, axis=1):
    """Concat of opsets 1-3: ``axis`` defaults to 1."""
    return _run("Concat", 1, list(inputs), {"axis": axis})


@legacy_op("Flatten", inputs=("input",), outputs=("output",), attributes={"axis": 1})
def flatten_legacy(input, *, axis=1):
    """Flatten of opsets 1-8 (seed 000 has no attribute: axis 1): 2-D (prod(:axis),
    prod(axis:)). A view when possible."""
    return _run("Flatten", 1, [input], {"axis": axis})


@legacy_op("Gather", inputs=("data", "indices"), outputs=("output",), attributes={"axis": 0})
def gather_legacy(data, indices, *, axis=0):
    """Gather of opsets 1-10 (seed: always axis 0; the attribute is accepted): np.take with
    negative indices counted from the end."""
    return _run("Gather", 1, [_no_half(data), indices], {"axis": axis})


@legacy_op("Constant", outputs=("output",), attributes={"value": REQUIRED})
def constant_legacy(*, value):
    """Constant of opsets 1-8: the tensor attribute ``value`` (a copy)."""
    return (np.array(_run("Constant", 1, [], {"value": value})[0]),)


def _make_arg(op: str) -> None:
    @legacy_op(
        op,
        inputs=("data",),
        outputs=("reduced",),
        attributes={"axis": None, "axes": None, "keepdims": 1},
    )
    def kernel(data, *, axis=None, axes=None, keepdims=1):
        if axes is not None:
            if len(axes) != 1:
                raise MDFError(f"{op} (seed 000): 'axes' must hold one axis, got {axes}")
            axis = axes[0]
        a = 0 if axis is None else int(axis)
        return _run(op, 1, [_no_half(data)], {"axis": a, "keepdims": keepdims})

    kernel.__doc__ = (
        f"{op} of opsets 1-10; seed 000's ``axes`` (a one-element list) is "
        "accepted as ``axis``. First index of the extreme; int64 output."
    )


_make_arg("ArgMax")
_make_arg("ArgMin")


def _make_reduce(op: str) -> None:
    @legacy_op(op, inputs=("data",), outputs=("reduced",), attributes={"axes": None, "keepdims": 1})
    def kernel(data, *, axes=None, keepdims=1):
        return _run(op, 1, [data], given(axes=axes, keepdims=keepdims))

    kernel.__doc__ = f"{op} of opsets 1-10 (``axes`` attribute; default all axes)."


for _op in ("ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum"):
    _make_reduce(_op)


# ---------------------------------------------------------------- Cast, Pad

#: Spellings of the early documents that the standard type table names differently.
_LEGACY_TYPE_ALIASES = {"FLOAT32": "FLOAT", "FLOAT64": "DOUBLE"}


def dtype_of(to: Any) -> np.dtype:
    """The numpy dtype of an ONNX type given as a name string (legacy, also ``tensor(float)``)
    or a DataType enum int, read from the standard table of :mod:`mdf_engine.onnx_ops.cast`;
    the early documents' numeric and bool types only (no string or complex)."""
    if isinstance(to, (bytes, str)):
        key = text(to).upper().replace("TENSOR(", "").rstrip(")")
        code = DTYPE_NAMES.get(_LEGACY_TYPE_ALIASES.get(key, key))
    else:
        code = int(to)
    dt = np.dtype(ONNX_DTYPES[code]) if code in ONNX_DTYPES else None
    if dt is None or dt.kind not in "biuf":
        raise MDFError(
            f"unknown ONNX data type {to!r} (expected a name such as 'FLOAT', "
            f"'DOUBLE', 'INT64' or a TensorProto enum value)"
        )
    return dt


@legacy_op("Cast", inputs=("input",), outputs=("output",), attributes={"to": REQUIRED})
def cast_legacy(input, *, to):
    """Cast of opsets 1-5: ``to`` is a type name string (or an enum int); float to int
    truncates toward zero."""
    return _run("Cast", 6, [input], {"to": dtype_of(to).name})


@legacy_op(
    "Pad",
    inputs=("data",),
    outputs=("output",),
    attributes={"paddings": REQUIRED, "mode": "constant", "value": 0.0},
)
def pad_legacy(data, *, paddings, mode="constant", value=0.0):
    """Pad of opset 1 (seed 002): ``paddings`` interleaved per axis ``[b0, e0, b1, e1, ...]``,
    ``mode`` constant/reflect/edge, ``value`` for constant mode."""
    x = arr(data)
    p = [int(v) for v in paddings]
    if len(p) != 2 * x.ndim:
        raise MDFError(
            f"onnx::Pad (opset 1): 'paddings' needs 2*rank = {2 * x.ndim} values, got {len(p)}"
        )
    if min(p, default=0) < 0:
        raise MDFError("onnx::Pad (opset 1): paddings must be non-negative")
    return _run("Pad", 2, [x], {"pads": p[0::2] + p[1::2], "mode": text(mode), "value": value})
