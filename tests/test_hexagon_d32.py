"""d32-layout Hexagon ops compute what their plain ops compute, also when their data comes from
and goes to the d32 memory layout (hexagon-digest §3 addressing) with garbage in its padding; the non-core ops they need
(L2 pool, LRN, bilinear resize, quantized sub) against numpy formulas; hexagon ops called from MDF."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, quant, s, step, zero

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.hexagon import d32_layout as L
from mdf_engine.hexagon import run
from mdf_engine.hexagon.d32 import ALIASES
from mdf_engine.hexagon.elementwise import quantized_sub_8p8to8
from mdf_engine.model import Graph, InputPort, Model, Node, OutputPort, Parameter


def _inputs(op, rng):
    x = rng.integers(0, 256, size=(1, 4, 4, 2), dtype=np.uint8)
    win, st = np.zeros((1, 2, 2, 1)), np.zeros((1, 1, 1, 1))
    if "Pool" in op:
        return [x, s(-1), s(1), win, np.zeros((1, 2, 2, 1))]
    if op.startswith("Supernode"):
        w = rng.integers(0, 256, size=(2, 2, 2, 3), dtype=np.uint8)
        b = rng.integers(0, 256, size=(1, 1, 1, 3)).astype(np.uint8 if "p8" in op else np.int32)
        return [x, w, s(-1), s(1), s(-1), s(1), st, b, s(-1), s(1), s(-np.inf), s(np.inf)]
    if op.startswith("DepthwiseSupernode"):
        w = rng.integers(0, 256, size=(2, 2, 2, 1), dtype=np.uint8)
        b = rng.integers(0, 256, size=(1, 1, 1, 2)).astype(np.uint8 if "p8" in op else np.int32)
        return [x, w, s(-1), s(1), s(-1), s(1), st, b, s(-1), s(1), s(-np.inf), s(np.inf)]
    if op.startswith("QuantizedBatchNorm"):
        sc = rng.integers(0, 256, size=(1, 1, 1, 2), dtype=np.uint8)
        b = rng.integers(0, 256, size=(1, 1, 1, 2)).astype(np.uint8 if "p8" in op else np.int32)
        return [x, sc, s(-1), s(1), s(0), s(2), b, s(-1), s(1), s(-np.inf), s(np.inf)]
    if op.startswith("QuantizedResize"):
        return [x, np.array([[[[6, 5]]]], np.int32), s(-1), s(1)]
    if op.startswith(("QuantizedAdd", "QuantizedMul")):
        return [x, x[:, :1], s(-1), s(1), s(-2), s(0.5)]
    return [x, s(-1), s(1)]


@pytest.mark.parametrize("d32,plain", sorted(ALIASES.items()))
def test_d32_alias_equals_plain(d32, plain):
    rng = np.random.default_rng(0)
    args = _inputs(plain, rng)
    padding = "SAME" if "Supernode" in plain else None
    for a, b in zip(run(d32, args, padding=padding), run(plain, args, padding=padding)):
        np.testing.assert_array_equal(a, b)


def test_d32_addressing_follows_the_documented_formula():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, size=(2, 3, 5, 40), dtype=np.uint8)
    g = L.geometry(x.shape, top=2, bottom=3, left=3, right_min=1, before=7)
    assert g.padded[3] % 4 == 0 and g.padded[2] * 32 >= 40 + 7
    flat = L.pack(x, g, fill=255).reshape(-1)
    b, h, w, d = g.shape
    ht, dt, wt = g.padded[1], g.padded[2] * 32, g.padded[3]
    for bb, hh, ww, dd in [(0, 0, 0, 0), (1, 2, 4, 39), (1, 1, 2, 24), (0, 2, 0, 25)]:
        off = (
            bb * ht * wt * dt
            + (hh + 2) * wt * dt
            + ((dd + 7) // 32) * (wt * 32)
            + (ww + 3) * 32
            + (dd + 7) % 32
        )
        assert flat[off] == x[bb, hh, ww, dd]
    assert (flat == 255).sum() == flat.size - x.size
    np.testing.assert_array_equal(L.unpack(L.pack(x, g, fill=7), g), x)


D32_PLAIN = sorted(ALIASES.items()) + [
    ("QuantizedSub_8p8to8_d32", None),
    ("InputSupernode_8x8p8to8_outd32", "Supernode_8x8p8to8"),
    ("InputSupernode_8x8p32to8_outd32", "Supernode_8x8p32to8"),
]


@pytest.mark.parametrize("d32,plain", D32_PLAIN)
def test_d32_op_is_its_plain_op_on_the_d32_layout(d32, plain):
    """Data in d32 layout with random padding bytes: the d32 op on what the layout holds, packed
    back, equals the plain computation packed; the padding never reaches the result."""
    rng = np.random.default_rng(2)
    args = _inputs(plain or "QuantizedAdd_8p8to8", rng)
    if d32 == "QuantizedSub_8p8to8_d32":
        args = args + [s(-np.inf), s(np.inf)]
    padding = "SAME" if "Supernode" in d32 else None
    moved = list(args)
    n_data = 2 if d32.startswith(("QuantizedAdd", "QuantizedMul", "QuantizedSub")) else 1
    for k in range(n_data):
        g = L.geometry(args[k].shape, top=1, bottom=2, left=3, before=5)
        garbage = rng.integers(0, 256, size=g.padded, dtype=np.uint8)
        moved[k] = L.unpack(L.pack(args[k], g, fill=garbage), g)
    out = run(d32, moved, padding=padding)
    if plain is None:  # the flat sub (not an op of the list) that the d32 op runs
        ref = quantized_sub_8p8to8(*args)
    else:
        ref = run(plain, args, padding=padding)
    gout = L.geometry(ref[0].shape, before=3)
    np.testing.assert_array_equal(L.pack(out[0], gout, 0), L.pack(ref[0], gout, 0))
    for a, b in zip(out[1:], ref[1:]):
        np.testing.assert_array_equal(a, b)


def _d32(x, rng, before=5):
    """x through the d32 layout with random padding bytes: what a d32 op reads."""
    g = L.geometry(x.shape, top=2, bottom=1, left=1, before=before)
    return L.unpack(L.pack(x, g, fill=rng.integers(0, 256, size=g.padded, dtype=np.uint8)), g)


def test_d32_converters_concat_quantize_and_close_on_the_d32_layout():
    """The remaining d32 ops: converters and FillPadding keep the data of the layout;
    AutoQuantize_d32 / QuantizeForTest_d32 / _16b_d32 give their plain results; Concat_d32 on
    d32 inputs is the plain concat; Close_d32 judges the data, never the padding."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, size=(1, 3, 5, 6), dtype=np.uint8)
    for op, extra in (
        ("Convert_to_d32", []),
        ("Convert_from_d32", []),
        ("FillPadding_8_d32", [np.array(255)]),
    ):
        np.testing.assert_array_equal(run(op, [_d32(x, rng)] + extra)[0], x)
    q, mn, mx = run("Convert_to_aix_d32", [_d32(x, rng), s(-1), s(1), np.array(0)])
    np.testing.assert_array_equal(q, x)
    f = rng.normal(size=(1, 3, 5, 6)).astype(F)
    auto = run("AutoQuantize", [f])
    for op in ("AutoQuantize_d32", "QuantizeForTest_d32"):
        out = run(op, [f])
        g = L.geometry(out[0].shape, before=9)
        np.testing.assert_array_equal(L.pack(out[0], g, 0), L.pack(auto[0], g, 0))
        np.testing.assert_array_equal(out[1:3], auto[1:3])
    y = rng.integers(0, 256, size=(1, 3, 5, 2), dtype=np.uint8)
    cat = run(
        "QuantizedConcat_8_d32",
        [np.int32(3), _d32(x, rng), _d32(y, rng, 30), s(-1), s(-2), s(1), s(2)],
    )
    ref = run("QuantizedConcat_8", [np.int32(3), x, y, s(-1), s(-2), s(1), s(2)])
    for a, b in zip(cat, ref):
        np.testing.assert_array_equal(a, b)
    ref_f = deq(x, -1.0, 1.0)
    run("Close_d32", [_d32(x, rng), s(-1), s(1), ref_f])
    bad = x.copy()
    bad[0, 1, 2, 3] ^= 0x40
    with pytest.raises(MDFError, match="Close_d32"):
        run("Close_d32", [_d32(bad, rng), s(-1), s(1), ref_f])


def test_layout_converters_and_quantize_for_test():
    x = np.arange(6, dtype=np.uint8).reshape(1, 1, 2, 3)
    np.testing.assert_array_equal(run("Convert_to_d32", [x, np.array(0), np.array(4)])[0], x)
    np.testing.assert_array_equal(run("Convert_from_d32", [x])[0], x)
    np.testing.assert_array_equal(run("FillPadding_8_d32", [x, np.array(255)])[0], x)
    f = np.array([[[[-1.0, 0.0, 2.0]]]], F)
    q, mn, mx, back = run("QuantizeForTest_d32", [f])
    np.testing.assert_array_equal(q, run("AutoQuantize", [f])[0])
    np.testing.assert_allclose(back, f, atol=float(step(mn.item(), mx.item())) / 2 + 1e-6)
    q16, mn, mx, back = run("QuantizeForTest_16b_d32", [f])
    assert q16.dtype == np.int16 and mn.item() == -mx.item() == -2.0
    np.testing.assert_allclose(back, f, atol=2.0 / 32768)


def test_input_supernode_depth_check():
    x = np.zeros((1, 3, 3, 5), np.uint8)
    args = [
        x,
        np.zeros((1, 1, 5, 1), np.uint8),
        s(-1),
        s(1),
        s(-1),
        s(1),
        np.zeros((1, 1, 1, 1)),
        np.zeros((1, 1, 1, 1), np.uint8),
        s(-1),
        s(1),
        s(-1),
        s(1),
    ]
    with pytest.raises(MDFError, match="depth must be 1..4"):
        run("InputSupernode_8x8p8to8_outd32", args)


def test_sub_d32_formula():
    a = np.array([[[[0, 128, 255]]]], np.uint8)
    b = np.array([[[[255, 0, 128]]]], np.uint8)
    q, mn, mx = run("QuantizedSub_8p8to8_d32", [a, b, s(0), s(1), s(0), s(1)])
    m, M = mn.item(), mx.item()
    assert m <= -1.0 + 1e-6 and M >= 1.0 - 1e-6
    ref = a.astype(np.float64) / 255 - b.astype(np.float64) / 255
    np.testing.assert_allclose(deq(q, m, M), ref, atol=float(step(m, M)) * 0.51)


def test_l2pool_lrn_resize_formulas():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, size=(1, 4, 4, 3), dtype=np.uint8)
    real = deq(x, 0.0, 2.0).astype(np.float64)
    q, _, _ = run(
        "QuantizedL2Pool_8",
        [x, s(0), s(2), np.zeros((1, 2, 2, 1)), np.zeros((1, 2, 2, 1))],
        padding="VALID",
    )
    ref = np.sqrt((real.reshape(1, 2, 2, 2, 2, 3) ** 2).mean(axis=(2, 4)))
    np.testing.assert_array_equal(q, quant(ref, 0.0, 2.0))
    q, mn, mx = run(
        "QuantizedLRN_8", [x, s(0), s(2), np.zeros((1, 1, 1, 3)), s(1.0), s(0.5), s(0.75)]
    )
    sq = np.pad(real**2, ((0, 0), (0, 0), (0, 0), (1, 1)))
    win = sq[..., :-2] + sq[..., 1:-1] + sq[..., 2:]
    ref = real / (1.0 + 0.5 / 3 * win) ** 0.75
    np.testing.assert_allclose(
        deq(q, mn.item(), mx.item()), ref, atol=float(step(mn.item(), mx.item())) * 0.51 + 1e-6
    )
    q, _, _ = run("QuantizedResizeBilinear_8", [x, np.array([8, 6]), s(0), s(2)])
    src_y, src_x = np.arange(8) * 4 / 8, np.arange(6) * 4 / 6
    y0, x0 = np.floor(src_y).astype(int), np.floor(src_x).astype(int)
    y1, x1 = np.minimum(y0 + 1, 3), np.minimum(x0 + 1, 3)
    fy, fx = (src_y - y0)[:, None, None], (src_x - x0)[None, :, None]
    r = real[0]
    ref = (r[y0][:, x0] * (1 - fx) + r[y0][:, x1] * fx) * (1 - fy) + (
        r[y1][:, x0] * (1 - fx) + r[y1][:, x1] * fx
    ) * fy
    np.testing.assert_array_equal(q[0], quant(ref, 0.0, 2.0))


def test_hexagon_ops_called_from_an_mdf_model():
    node = Node(
        id="A",
        input_ports=[InputPort(id="x", shape=(1, 1, 1, 4))],
        parameters=[
            Parameter(
                id="q",
                function="hexagon::Quantize",
                args={"input": "x", "input_min": -1.0, "input_max": 1.0},
            ),
            Parameter(
                id="r",
                function="hexagon::QuantizedRelu_8",
                args={"input": "q[0]", "input_min": "q[1]", "input_max": "q[2]"},
            ),
            Parameter(
                id="y",
                function="hexagon::Dequantize",
                args={"input": "r[0]", "input_min": "r[1]", "input_max": "r[2]"},
            ),
        ],
        output_ports=[OutputPort(id="out", value="y")],
    )
    sim = Simulation(Model(id="m", graphs=[Graph(id="g", nodes=[node])]))
    x = np.array([[[[-0.5, 0.0, 0.25, 0.9]]]])
    sim.evaluate(initializer={"x": x})
    out = sim.outputs["A"]["out"]
    q, mn, mx = sim.value("A", "q")
    z = zero(mn.item(), mx.item())
    np.testing.assert_allclose(out, deq(np.maximum(q, z), mn.item(), mx.item()))
    assert out[0, 0, 0, 0] == pytest.approx(0.0, abs=1e-6)
