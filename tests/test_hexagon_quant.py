"""Hexagon quantization helpers against the digest's formulas, recomputed here in numpy."""

import math

import numpy as np
import pytest

from mdf_engine.hexagon import quant as Q

F = np.float32


def ref_step(mn, mx):
    return F(max(F(1e-4), F(mx) - F(mn)) / F(255))


def ref_zero(mn, mx):
    return -F(mn) / ref_step(mn, mx)


@pytest.mark.parametrize(
    "lo,hi,expect",
    [
        (-1.0, 1.0, (-1.0, -1.0 + 255.0 / 127.0)),  # z = 127.5 -> max raised, zero code 127
        (2.0, 5.0, (0.0, 5.0)),  # strictly positive -> min forced to 0
        (-5.0, -2.0, (-5.0, 0.0)),  # strictly negative -> max forced to 0
        (0.0, 1.0, (0.0, 1.0)),  # already exact
        (-1.0, 0.9921875, (-1.0, 0.9921875)),  # tanh range, z = 128 exactly
    ],
)
def test_adjust_range_hand_cases(lo, hi, expect):
    mn, mx = Q.adjust_range(lo, hi)
    assert mn == pytest.approx(expect[0], rel=1e-6)
    assert mx == pytest.approx(expect[1], rel=1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_adjust_range_gives_integer_zero_and_covers(seed):
    rng = np.random.default_rng(seed)
    lo, hi = sorted(rng.normal(scale=10.0 ** rng.integers(-2, 3), size=2))
    mn, mx = Q.adjust_range(lo, hi)
    tol = 1e-6 * max(1.0, abs(lo), abs(hi))  # float32 arithmetic
    assert mn <= min(lo, 0.0) + tol and mx >= max(hi, 0.0) - tol
    z = float(ref_zero(mn, mx))
    assert abs(z - round(z)) < 1e-3
    assert 0 <= round(z) <= 255
    # the widening is small: at most one step on one side
    width = max(hi, 0.0) - min(lo, 0.0)
    assert (mx - mn) - width <= 1.01 * width / 253 + 1e-6


def test_quantize_zero_is_exact_and_saturates():
    mn, mx = Q.adjust_range(-1.3, 2.9)
    q = Q.quantize_u8(np.array([0.0, -100.0, 100.0, mn, mx], F), mn, mx)
    z = Q.zero_code(mn, mx)
    assert q[0] == z and q[1] == 0 and q[2] == 255 and q[3] == 0 and q[4] == 255
    assert Q.dequantize_u8(np.array([z]), mn, mx)[0] == pytest.approx(0.0, abs=1e-6)


def test_quantize_matches_formula_and_rounds_half_away():
    mn, mx = F(0.0), F(2.55)
    step = ref_step(mn, mx)
    x = (np.arange(0, 256, dtype=F) + F(0.5)) * step  # ties between codes
    got = Q.quantize_u8(x, mn, mx)
    v = (x - mn) / step
    expect = np.clip(np.floor(v + 0.5), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got, expect)
    rng = np.random.default_rng(0)
    y = rng.uniform(-1, 4, size=1000).astype(F)
    v = (y - mn) / step
    expect = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(Q.quantize_u8(y, mn, mx), expect)


def test_out_size_and_pad():
    assert Q.out_size_and_pad(7, 3, 2, Q.PADDING["SAME"]) == (4, 1)
    assert Q.out_size_and_pad(6, 3, 2, Q.PADDING["SAME"]) == (3, 0)  # pad 1, all after
    assert Q.out_size_and_pad(6, 3, 2, Q.PADDING["SAME_CAFFE"]) == (3, 1)
    assert Q.out_size_and_pad(7, 3, 2, Q.PADDING["VALID"]) == (3, 0)
    assert Q.out_size_and_pad(7, 3, 2, Q.PADDING["NA"]) == (3, 0)
    for n, k, s in [(9, 3, 1), (10, 4, 3), (5, 5, 2)]:
        out, before = Q.out_size_and_pad(n, k, s, Q.PADDING["SAME"])
        assert out == math.ceil(n / s)
        assert before == max(0, (out - 1) * s + k - n) // 2
    with pytest.raises(Q.MDFError):
        Q.out_size_and_pad(2, 3, 1, Q.PADDING["VALID"])


def test_padding_names():
    assert Q.padding_code("SAME") == 1 and Q.padding_code("NN_PAD_VALID") == 2
    assert Q.padding_code(None) == 0 and Q.padding_code(5) == 5
    with pytest.raises(Q.MDFError, match="padding must be one of"):
        Q.padding_code("FULL")
