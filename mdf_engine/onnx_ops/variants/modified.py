"""The "modified ONNX" operators of seed 003 (a TF-to-ONNX inference set), namespace ``onnx-mod``.

Called as ``onnx_mod::<Op>``. Seed 003 lists these six ``modified`` entries by name only; the
semantics below are those of the same document's later revision and its converter (digest
section 3.4), all NHWC (channel-last) as TensorFlow lays data out:

* ``Add_``: a channel-last bias add, A (..., C) + B (C,) (or B of A's shape);
* ``Dense``: Y = X @ W + b with W [in, out] (TF orientation);
* ``DepthwiseConv2d``: NHWC input, W [kH, kW, Cin, multiplier], TF padding "SAME"/"VALID",
  output channel k*multiplier+q;
* ``Relu6``: min(max(x, 0), 6);
* ``UpSampling2D``: NHWC nearest-neighbour upsampling by integer factors ``size`` = [sh, sw];
* ``LeakyRelu`` (modified): the fused TF pattern max(alpha*x, x) (equal to the standard
  LeakyRelu only for 0 <= alpha <= 1).

The standard operators that 003 documents (Conv, pools, BatchNormalization, ...) are NCHW in the
seed text and are the ``onnx::`` ones.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ...errors import MDFError
from ...registry import register
from .. import _ew_kernels as K
from ..elementwise import binary, unary
from ..linalg import gemm
from .legacy import arr as _arr
from .legacy import float_dtype as _float_dtype
from .legacy import keep_half, standard
from .legacy_nn import upsample

NS = "onnx-mod"


@numba.njit(cache=True)
def add_bias_jit(A, B):
    """nopython Add_: A + B (B of length C broadcast along the last axis, or A's shape)."""
    return A + B


@register(NS, "Add_", inputs=("A", "B"), outputs=("C",), jit=add_bias_jit)
@keep_half
def add_bias(A, B):
    """Add_ (seed 003, modified; TF BiasAdd): C = A + B with B a 1-D bias of length C added
    along A's last (channel) axis, or B of A's shape. No other broadcasting."""
    a = _arr(A)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    if a.dtype.kind not in "fiu":
        raise MDFError(f"onnx_mod::Add_ needs a numeric A, got {a.dtype}")
    b = _arr(B).astype(a.dtype)
    if b.shape != a.shape and (b.ndim != 1 or a.ndim == 0 or b.shape[0] != a.shape[-1]):
        raise MDFError(
            f"onnx_mod::Add_ adds a bias of length C = A.shape[-1] along the last "
            f"axis (or a B of A's shape); got A {a.shape} and B {b.shape}"
        )
    return (binary(K.ADD, a, b, "onnx_mod::Add_"),)


@register(NS, "Dense", inputs=("X", "W", "b"), optional=("b",), outputs=("Y",))
@keep_half
def dense(X, W, b=None):
    """Dense (seed 003, modified; TF MatMul + BiasAdd): Y = X @ W + b, W [in, out] (not
    transposed), b (out,); X may have leading batch dims (applied to its last axis)."""
    x = _float_dtype(_arr(X))
    w = _arr(W).astype(x.dtype)
    if w.ndim != 2 or x.ndim == 0 or x.shape[-1] != w.shape[0]:
        raise MDFError(
            f"onnx_mod::Dense needs X (..., in) and W (in, out), got {x.shape} and {w.shape}"
        )
    bb = np.zeros(w.shape[1], x.dtype) if b is None else _arr(b).astype(x.dtype).ravel()
    if bb.size != w.shape[1]:
        raise MDFError(f"onnx_mod::Dense: b needs {w.shape[1]} values, got {bb.size}")
    x2 = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    y = gemm(x2, w, bb)[0]
    return (y.reshape(x.shape[:-1] + (w.shape[1],)),)


@numba.njit(cache=True)
def relu6_jit(X):
    """nopython Relu6 of a float array of any rank."""
    return np.minimum(np.maximum(X, 0.0), 6.0)


@register(NS, "Relu6", inputs=("X",), outputs=("Y",), jit=relu6_jit)
@keep_half
def relu6(X):
    """Relu6 (seed 003, modified): Y = min(max(X, 0), 6)."""
    x = _arr(X)
    if x.dtype == np.float16:
        x = x.astype(np.float32)
    if x.dtype.kind not in "fiu":
        raise MDFError(f"onnx_mod::Relu6 needs a numeric input, got {x.dtype}")
    return (unary(K.CLIP, x, 0.0, 6.0, name="onnx_mod::Relu6", ints=True),)


@numba.njit(cache=True)
def leaky_relu_max_jit(X, alpha):
    """nopython modified LeakyRelu: max(alpha*X, X)."""
    return np.maximum(alpha * X, X)


@register(
    NS,
    "LeakyRelu",
    inputs=("X",),
    outputs=("Y",),
    attributes={"alpha": 0.2},
    jit=leaky_relu_max_jit,
)
@keep_half
def leaky_relu_max(X, *, alpha=0.2):
    """LeakyRelu (seed 003, modified; the fused TF pattern Maximum(alpha*x, x)): Y = max(alpha*X,
    X). ``alpha`` defaults to TF's 0.2."""
    x = _float_dtype(_arr(X))
    scaled = binary(K.MUL, x, np.asarray(alpha, dtype=x.dtype), "onnx_mod::LeakyRelu")
    return (binary(K.MAX, scaled, x, "onnx_mod::LeakyRelu"),)


def tf_padding(size: int, k: int, stride: int, dilation: int, mode: str) -> tuple[int, int, int]:
    """TF's (out, pad_begin, pad_end) for one spatial dim: VALID = no pad; SAME = out
    ceil(in/stride), the odd pad at the end."""
    ke = (k - 1) * dilation + 1
    if mode == "VALID":
        out = (size - ke) // stride + 1
        return max(out, 0), 0, 0
    if mode == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + ke - size, 0)
        return out, total // 2, total - total // 2
    raise MDFError(f"padding must be 'SAME' or 'VALID', got {mode!r}")


@register(
    NS,
    "DepthwiseConv2d",
    inputs=("X", "W"),
    outputs=("Y",),
    attributes={
        "dilations": None,
        "group": None,
        "kernel_shape": None,
        "pads": "VALID",
        "strides": None,
    },
)
@keep_half
def depthwise_conv2d(
    X, W, *, dilations=None, group=None, kernel_shape=None, pads="VALID", strides=None
):
    """DepthwiseConv2d (seed 003, modified; TF depthwise_conv2d): X NHWC (N, H, W, Cin), W
    (kH, kW, Cin, multiplier); Y[n, i, j, k*mult+q] = sum_{a,e} W[a, e, k, q] *
    Xpad[n, i*sh + a*dh, j*sw + e*dw, k]; ``pads`` is TF's "SAME" or "VALID"; strides and
    dilations [h, w] (4-element NHWC lists are accepted); ``group`` must be Cin if given."""
    x = _float_dtype(_arr(X))
    w = _arr(W).astype(x.dtype)
    if x.ndim != 4 or w.ndim != 4 or w.shape[2] != x.shape[3]:
        raise MDFError(
            f"onnx_mod::DepthwiseConv2d needs X (N, H, W, C) and W (kH, kW, C, "
            f"multiplier), got {x.shape} and {w.shape}"
        )
    if group is not None and int(group) != x.shape[3]:
        raise MDFError(
            f"onnx_mod::DepthwiseConv2d: group must equal the {x.shape[3]} input "
            f"channels, got {group}"
        )
    if kernel_shape is not None and list(kernel_shape) != list(w.shape[:2]):
        raise MDFError(
            f"onnx_mod::DepthwiseConv2d: kernel_shape {list(kernel_shape)} does not "
            f"match W {w.shape}"
        )

    def hw(v: Any) -> list[int]:
        v = [1, 1] if v is None else [int(t) for t in v]
        return v[1:3] if len(v) == 4 else v

    s, d = hw(strides), hw(dilations)
    mode = pads.decode() if isinstance(pads, bytes) else str(pads)
    oh, pt, pb = tf_padding(x.shape[1], w.shape[0], s[0], d[0], mode.upper())
    ow, pl, pr = tf_padding(x.shape[2], w.shape[1], s[1], d[1], mode.upper())
    n, c, mult = x.shape[0], x.shape[3], w.shape[3]
    if oh == 0 or ow == 0:
        return (np.zeros((n, oh, ow, c * mult), dtype=x.dtype),)
    # the standard grouped Conv (group = C, NCHW): output channel k*mult+q reads input
    # channel k through the filter W[:, :, k, q]
    w_oihw = np.ascontiguousarray(w.transpose(2, 3, 0, 1).reshape(c * mult, 1, *w.shape[:2]))
    attrs = {
        "group": c,
        "strides": s,
        "dilations": d,
        "pads": [pt, pl, pb, pr],
        "kernel_shape": list(w.shape[:2]),
    }
    y = standard("Conv").call([np.ascontiguousarray(x.transpose(0, 3, 1, 2)), w_oihw], attrs)[0]
    return (np.ascontiguousarray(y.transpose(0, 2, 3, 1)),)


@register(
    NS,
    "UpSampling2D",
    inputs=("X",),
    outputs=("Y",),
    attributes={"size": (2, 2), "mode": "nearest"},
)
@keep_half
def upsampling2d(X, *, size=(2, 2), mode="nearest"):
    """UpSampling2D (seed 003, modified; Keras/TF nearest resize by integer factors): X NHWC,
    ``size`` = [sh, sw]; Y[n, i, j, c] = X[n, i // sh, j // sw, c] (``mode="linear"`` gives
    linear interpolation with in = out / size)."""
    x = _arr(X)
    sz = [int(v) for v in size]
    if x.ndim != 4 or len(sz) != 2 or min(sz) < 1:
        raise MDFError(
            f"onnx_mod::UpSampling2D needs an NHWC input and size [sh, sw] >= 1, got "
            f"{x.shape} and {list(size)}"
        )
    return (upsample(x, [1.0, float(sz[0]), float(sz[1]), 1.0], mode),)
