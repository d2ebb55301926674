"""Early (opsets 1-8) neural-network forms: BatchNormalization, Dropout, Upsample, and the ops
whose early form has the numerics of the earliest standard version (Conv, pools, LRN, MatMul,
Transpose, the random generators), as adapters over the ``normalization``, ``random_ops``,
``resize`` and other family kernels.

* BatchNormalization (opsets 1-6): ``is_test`` (default 0 = training: batch statistics, running
  = running*momentum + batch*(1-momentum), outputs Y, running mean/var, saved (batch) mean/var),
  ``spatial=0`` normalises per activation (the input is viewed as (N, C*D1*...*Dn)),
  ``consumed_inputs`` is ignored; opsets 7-8 (and seed 003): inference, Y only.
* Dropout (opsets 1-6): ``is_test`` (default 0 = training, random and scaled); ``seed`` (an engine
  extension) makes the mask reproducible; the mask has X's dtype. Opsets 7-9: Y = X.
* Upsample: ``height_scale``/``width_scale`` (opset 1, mode nearest or bilinear) or ``scales``
  (opset 7 and seed 003, attribute; opset 9, input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from ..normalization import batch_normalization_9, batch_normalization_14
from .legacy import arr, float_dtype, given, legacy_op, standard, text

# ---------------------------------------------------------------- BatchNormalization


def batch_norm(
    X: Any,
    scale: Any,
    B: Any,
    mean: Any,
    var: Any,
    epsilon: float,
    momentum: float,
    spatial: int,
    training: bool,
) -> tuple:
    """Legacy BatchNormalization (NCHW...): per-channel statistics when ``spatial`` (params of
    shape (C,)), per-activation (params of C*D1*...*Dn values) otherwise. Test mode returns (Y,);
    training returns (Y, running_mean, running_var, saved_mean, saved_var)."""
    x = float_dtype(arr(X))
    if x.ndim < 2:
        raise MDFError(f"BatchNormalization needs an input of rank >= 2 (N, C, ...), got {x.shape}")
    c = x.shape[1] if spatial else int(np.prod(x.shape[1:]))
    params = []
    for name, p in (("scale", scale), ("B", B), ("mean", mean), ("var", var)):
        p = arr(p).astype(x.dtype).ravel()
        if p.size != c:
            raise MDFError(
                f"BatchNormalization (spatial={spatial}): '{name}' needs {c} values, got {p.size}"
            )
        params.append(p)
    xs = x if spatial else x.reshape(x.shape[0], c)
    if not training:
        return (batch_normalization_9(xs, *params, epsilon=epsilon)[0].reshape(x.shape),)
    # momentum 0: the kernel's "running" statistics are the batch statistics themselves
    y, bm, bv = batch_normalization_14(xs, *params, epsilon=epsilon, momentum=0.0, training_mode=1)
    rm = params[2] * momentum + bm * (1.0 - momentum)
    rv = params[3] * momentum + bv * (1.0 - momentum)
    pshape = np.shape(mean)
    return (y.reshape(x.shape),) + tuple(v.reshape(pshape) for v in (rm, rv, bm, bv))


@legacy_op(
    "BatchNormalization",
    inputs=("X", "scale", "B", "mean", "var"),
    outputs=("Y", "mean", "var", "saved_mean", "saved_var"),
    attributes={
        "epsilon": 1e-5,
        "is_test": 0,
        "momentum": 0.9,
        "spatial": 1,
        "consumed_inputs": None,
    },
)
def batch_norm_legacy(
    X,
    scale,
    B,
    mean,
    var,
    *,
    epsilon=1e-5,
    is_test=0,
    momentum=0.9,
    spatial=1,
    consumed_inputs=None,
):
    """BatchNormalization of opsets 1-6: ``is_test`` selects test mode (Y from the given
    mean/var) or training (batch statistics; running = running*momentum + batch*(1-momentum));
    ``spatial=0`` normalises per activation."""
    return batch_norm(X, scale, B, mean, var, epsilon, momentum, spatial, not is_test)


@legacy_op(
    "BatchNormalization",
    since=7,
    inputs=("X", "scale", "B", "mean", "var"),
    outputs=("Y",),
    attributes={"epsilon": 1e-5, "momentum": 0.9, "spatial": 1},
)
def batch_norm_7(X, scale, B, mean, var, *, epsilon=1e-5, momentum=0.9, spatial=1):
    """BatchNormalization of opsets 7-8 (and seed 003), inference: Y only; ``spatial`` as in
    opset 1."""
    return batch_norm(X, scale, B, mean, var, epsilon, momentum, spatial, False)


# ---------------------------------------------------------------- Dropout


@legacy_op(
    "Dropout",
    inputs=("data",),
    outputs=("output", "mask"),
    attributes={"is_test": 0, "ratio": 0.5, "consumed_inputs": None, "seed": None},
)
def dropout_legacy(data, *, is_test=0, ratio=0.5, consumed_inputs=None, seed=None):
    """Dropout of opsets 1-6: ``is_test=0`` (the default) is *training*: a random mask keeps
    each element with probability 1-ratio and scales the kept ones by 1/(1-ratio); with
    ``is_test`` set, Y = X. ``seed`` (an engine extension) makes the mask reproducible. The mask
    output has X's dtype (1 kept, 0 dropped)."""
    x = arr(data)
    ratio = float(ratio)
    if is_test or ratio == 0:
        return standard("Dropout", 1).call([x])
    if not 0 <= ratio < 1:
        raise MDFError(f"onnx::Dropout: ratio must be in [0, 1), got {ratio}")
    y, keep = standard("Dropout", 12).call(
        [x, np.asarray(ratio), np.asarray(True)], given(seed=seed)
    )
    return (y, keep.astype(x.dtype))


@legacy_op(
    "Dropout", since=7, inputs=("data",), outputs=("output", "mask"), attributes={"ratio": 0.5}
)
def dropout_7(data, *, ratio=0.5):
    """Dropout of opsets 7-9 (inference): Y = X, a mask of ones in X's dtype."""
    return standard("Dropout", 1).call([data])


# ---------------------------------------------------------------- Upsample


def upsample(X: Any, scales: Any, mode: Any) -> np.ndarray:
    """Upsample by per-dim ``scales`` (each >= 1; output dim floor(in*scale)); nearest:
    in = floor(out/scale); linear/bilinear: separable linear interpolation with in = out/scale,
    clamped (the Upsample-9 kernel)."""
    s = np.asarray(scales, dtype=np.float64).ravel()
    x = arr(X)
    if s.size != x.ndim:
        raise MDFError(f"Upsample: {s.size} scales for an input of rank {x.ndim}")
    return standard("Upsample", 9).call([x, s], {"mode": text(mode).lower()})[0]


@legacy_op(
    "Upsample",
    inputs=("X", "scales"),
    optional=("scales",),
    outputs=("Y",),
    attributes={"height_scale": None, "width_scale": None, "scales": None, "mode": "nearest"},
)
def upsample_legacy(
    X, scales_input=None, *, height_scale=None, width_scale=None, scales=None, mode="nearest"
):
    """Upsample of opsets 1-8: opset 1 scales the last two dims of an NCHW tensor by
    ``height_scale``/``width_scale`` (mode nearest or bilinear); opset 7 (and seed 003) gives
    the attribute ``scales`` for every dim (mode nearest or linear). The opset-9 form, ``scales``
    as a second input, is accepted too."""
    x = arr(X)
    if scales_input is not None:
        scales = scales_input
    if scales is None:
        if height_scale is None or width_scale is None:
            raise MDFError(
                "onnx::Upsample (opset < 9) needs 'scales' or both 'height_scale' and 'width_scale'"
            )
        if x.ndim != 4:
            raise MDFError(f"onnx::Upsample (opset 1) needs a 4-D NCHW input, got {x.shape}")
        scales = [1.0, 1.0, float(height_scale), float(width_scale)]
    return (upsample(x, scales, mode),)


# ---------------------------------------------------------------- same numerics as the standard


def _make_delegate(
    op: str,
    inputs: tuple[str, ...],
    optional: tuple[str, ...],
    attrs: tuple[str, ...],
    outputs: tuple[str, ...] = ("Y",),
) -> None:
    @legacy_op(
        op, inputs=inputs, optional=optional, outputs=outputs, attributes={a: None for a in attrs}
    )
    def kernel(*args, **kw):
        return standard(op).call(list(args), given(**kw))

    kernel.__doc__ = (
        f"{op} of the early opsets: the same numerics as the earliest standard "
        f"version; the early attributes ({', '.join(attrs) or 'none'}) are passed "
        "through."
    )


_make_delegate(
    "Conv",
    ("X", "W", "B"),
    ("B",),
    ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"),
)
_make_delegate(
    "ConvTranspose",
    ("X", "W", "B"),
    ("B",),
    (
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "output_padding",
        "output_shape",
        "pads",
        "strides",
    ),
)
_make_delegate("AveragePool", ("X",), (), ("auto_pad", "kernel_shape", "pads", "strides"))
_make_delegate("MaxPool", ("X",), (), ("auto_pad", "dilations", "kernel_shape", "pads", "strides"))
_make_delegate("GlobalAveragePool", ("X",), (), ())
_make_delegate("GlobalMaxPool", ("X",), (), ())
_make_delegate("LRN", ("X",), (), ("alpha", "beta", "bias", "size"))
_make_delegate("MatMul", ("A", "B"), (), ())
_make_delegate("Transpose", ("data",), (), ("perm",), ("transposed",))
_make_delegate("RandomNormal", (), (), ("dtype", "mean", "scale", "seed", "shape"), ("output",))
_make_delegate("RandomUniform", (), (), ("dtype", "high", "low", "seed", "shape"), ("output",))
_make_delegate("RandomNormalLike", ("input",), (), ("dtype", "mean", "scale", "seed"), ("output",))
_make_delegate("RandomUniformLike", ("input",), (), ("dtype", "high", "low", "seed"), ("output",))
