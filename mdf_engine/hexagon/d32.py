"""26 of the 28 d32-layout Hexagon ops, mapped onto their plain (flat BHWD) implementations (the
two PPrint d32 variants log like PPrint_8, in :mod:`.state`).

d32 is a padded, depth-sliced memory layout of quint8 data used by the HVX-optimised ops; it
changes where bytes live, not what they mean. Here every tensor is a plain BHWD array, so a
``*_d32`` op computes exactly what its flat counterpart computes: layout converters and
FillPadding are identities (their padding options are accepted and have nothing to act on),
AutoQuantize/QuantizeForTest quantize in the data range (QuantizeForTest also returns the
dequantized data) and Close_d32 is the excess-error check. :mod:`.d32_layout` holds the real d32
memory layout, with which the tests check that each of these ops is its plain computation on it.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ..registry import REGISTRY
from . import activation, checks, conversion, elementwise, normalization, pool, resize  # noqa: F401 (registers the plain ops)
from ._registry import hexop
from .conv import supernode
from .layout import concat_q8, split_triples
from .quant import F32, as4d, fval

PAD_OPTS = ("depth_before_pad", "width_left_pad", "width_right_pad", "top_bottom_pad")

#: d32 op -> the plain op whose schema and kernel it shares.
ALIASES = {
    "QuantizedMaxPool_8_d32": "QuantizedMaxPool_8",
    "QuantizedAvgPool_8_d32": "QuantizedAvgPool_8",
    "QuantizedL2Pool_8_d32": "QuantizedL2Pool_8",
    "Supernode_8x8p8to8_d32": "Supernode_8x8p8to8",
    "Supernode_8x8p32to8_d32": "Supernode_8x8p32to8",
    "DepthwiseSupernode_8x8p8to8_d32": "DepthwiseSupernode_8x8p8to8",
    "DepthwiseSupernode_8x8p32to8_d32": "DepthwiseSupernode_8x8p32to8",
    "QuantizedBatchNorm_8x8p8to8_d32": "QuantizedBatchNorm_8x8p8to8",
    "QuantizedBatchNorm_8x8p32to8_d32": "QuantizedBatchNorm_8x8p32to8",
    "QuantizedResizeBilinear_8_d32": "QuantizedResizeBilinear_8",
    "QuantizedAdd_8p8to8_d32": "QuantizedAdd_8p8to8",
    "QuantizedMul_8x8to8_d32": "QuantizedMul_8x8to8",
    "QuantizedTanh_8_d32": "QuantizedTanh_8",
    "QuantizedSigmoid_8_d32": "QuantizedSigmoid_8",
}


def _alias(d32: str, plain: str) -> None:
    s = REGISTRY.lookup("hexagon::" + plain)
    hexop(
        d32,
        s.inputs,
        outputs=s.outputs,
        optional=s.optional,
        variadic=s.variadic,
        padding=s.attributes["padding"],
    )(s.kernel)


for _d32, _plain in ALIASES.items():
    _alias(_d32, _plain)


@hexop("QuantizedSub_8p8to8_d32", elementwise.BIN_OUT_IN, optional=("output_min", "output_max"))
def quantized_sub_8p8to8_d32(*args, padding="NA"):
    """a - b of quint8 tensors into quint8 (the document has no flat Sub_8p8to8)."""
    return elementwise.quantized_sub_8p8to8(*args)


def _input_supernode(name: str, q32: bool) -> None:
    def kernel(x, *rest, padding="SAME"):
        d = as4d(x).shape[3]
        if not 1 <= d <= 4:
            raise MDFError(f"{name}: input depth must be 1..4, got {d}")
        return supernode(x, *rest, padding=padding, depthwise=False, qint32_bias=q32)

    kernel.__doc__ = f"{name}: Supernode on flat input of depth 1..4 (output layout is plain)."
    inputs = REGISTRY.lookup("hexagon::Supernode_8x8p8to8").inputs[:-1]
    hexop(name, inputs, padding="SAME")(kernel)


_input_supernode("InputSupernode_8x8p8to8_outd32", False)
_input_supernode("InputSupernode_8x8p32to8_outd32", True)


@hexop("QuantizedConcat_8_d32", ("axis", "inputs"), variadic=True)
def quantized_concat_8_d32(axis, *rest, padding="NA"):
    """Concatenation along any axis 0..3 in the union of the input ranges."""
    ax = int(np.asarray(axis).reshape(-1)[0])
    if not -4 <= ax <= 3:
        raise MDFError(f"QuantizedConcat_8_d32: axis must be in -4..3, got {ax}")
    return concat_q8(ax % 4, *split_triples(rest))


@hexop("Convert_to_d32", ("input",) + PAD_OPTS, outputs=("output",), optional=PAD_OPTS)
def convert_to_d32(x, *pads, padding="NA"):
    """Flat -> d32: the identity on plain arrays (padding options have nothing to pad)."""
    return (as4d(x),)


@hexop("Convert_from_d32", ("input",) + PAD_OPTS, outputs=("output",), optional=PAD_OPTS)
def convert_from_d32(x, *pads, padding="NA"):
    """d32 -> flat: the identity on plain arrays."""
    return (as4d(x),)


@hexop("Convert_to_aix_d32", ("input", "input_min", "input_max", "from_aix"))
def convert_to_aix_d32(x, x_min, x_max, flag, *, padding="NA"):
    """The quantized triple passed through (aix-d32 is a memory layout)."""
    return as4d(x), as4d(x_min, F32), as4d(x_max, F32)


@hexop(
    "FillPadding_8_d32",
    ("input", "spatial_fill", "depth_fill"),
    outputs=("output",),
    optional=("spatial_fill", "depth_fill"),
)
def fill_padding_8_d32(x, spatial=None, depth=None, *, padding="NA"):
    """The tensor unchanged: plain arrays have no padding bytes to fill."""
    return (as4d(x),)


@hexop("AutoQuantize_d32", ("input",) + PAD_OPTS, optional=PAD_OPTS)
def auto_quantize_d32(x, *pads, padding="NA"):
    """AutoQuantize (padding options ignored)."""
    return conversion.auto_quantize(x)


@hexop(
    "QuantizeForTest_d32",
    ("input",) + PAD_OPTS,
    outputs=("output", "output_min", "output_max", "dequantized"),
    optional=PAD_OPTS,
)
def quantize_for_test_d32(x, *pads, padding="NA"):
    """AutoQuantize plus the float data 'corrected to match' (the dequantized codes)."""
    q, mn, mx = conversion.auto_quantize(x)
    return q, mn, mx, conversion.dequantize(q, mn, mx)[0]


@hexop(
    "QuantizeForTest_16b_d32",
    ("input",) + PAD_OPTS,
    outputs=("output", "output_min", "output_max", "dequantized"),
    optional=PAD_OPTS,
)
def quantize_for_test_16b_d32(x, *pads, padding="NA"):
    """Symmetric qint16 in the data's range plus the dequantized data."""
    a = as4d(x, F32)
    if a.size and not np.all(np.isfinite(a)):
        raise MDFError("QuantizeForTest_16b_d32: input holds NaN or inf")
    m = F32(np.abs(a).max()) if a.size else F32(0)
    q, mn, mx = conversion.quantize_16(a, -m, m)
    return q, mn, mx, (q.astype(F32) * (fval(mx) / F32(32768.0))).astype(F32)


@hexop(
    "Close_d32",
    ("dut", "dut_min", "dut_max", "ref", "max_excess", "max_fraction"),
    outputs=(),
    optional=("max_excess", "max_fraction"),
)
def close_d32(dut, dut_min, dut_max, ref, max_excess=None, max_fraction=None, *, padding="NA"):
    """Excess-error check of quint8 data against a float reference."""
    return checks.close_d32(dut, dut_min, dut_max, ref, max_excess, max_fraction)
