"""Hexagon Split / ExpandDims (their count / shape is a node attribute) against onnxruntime."""

import numpy as np
import pytest
from hexagon_formulas import F, ort, s

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run


@pytest.mark.parametrize("dim,n", [(0, 2), (1, 3), (2, 1), (3, 4)])
def test_split_against_onnxruntime(dim, n):
    rng = np.random.default_rng(dim)
    shape = [2, 3, 5, 8]
    x = rng.normal(size=shape).astype(F)
    parts = run("Split_f", [np.int32(dim), x], num_outputs=n)
    ref = ort("Split", {"x": x}, {"axis": dim, "num_outputs": n}, n_out=n)
    assert len(parts) == n
    for p, r in zip(parts, ref):
        np.testing.assert_array_equal(p, r)
    ints = run("Split_int32", [np.int32(dim), (x * 100).astype(np.int32)], num_outputs=n)
    for p, r in zip(ints, ref):
        np.testing.assert_array_equal(p, (r * 100).astype(np.int32))
    codes = rng.integers(0, 256, size=shape).astype(np.uint8)
    out = run("QuantizedSplit_8", [np.int32(dim), codes, s(-1.0), s(3.0)], num_outputs=n)
    assert len(out) == n + 2 and (out[-2].item(), out[-1].item()) == (-1.0, 3.0)
    np.testing.assert_array_equal(np.concatenate(out[:n], axis=dim), codes)


def test_split_and_expand_dims_errors_and_shapes():
    with pytest.raises(MDFError, match="equal parts"):
        run("Split_f", [np.int32(3), np.zeros((1, 1, 1, 5))], num_outputs=2)
    with pytest.raises(MDFError, match="num_outputs"):
        run("Split_f", [np.int32(3), np.zeros((1, 1, 1, 4))])
    x = np.arange(6, dtype=F)
    (y,) = run("ExpandDims_f", [x], output_shape=[2, 1, 3])
    (r,) = ort("Unsqueeze", {"x": x.reshape(2, 3), "axes": np.array([1], np.int64)}, opset=13)
    np.testing.assert_array_equal(y, r.reshape(1, 2, 1, 3))
    (z,) = run("ExpandDims_int32", [x.astype(np.int32)], output_shape=[1, 6, 1, 1])
    assert z.shape == (1, 6, 1, 1) and z.dtype == np.int32
    with pytest.raises(MDFError, match="holds 4 elements"):
        run("ExpandDims_f", [x], output_shape=[2, 2])
