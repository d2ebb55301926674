"""Hexagon lookup ops against onnxruntime's Gather, the op list's worked Gather examples and numpy
written from the op list's text (Table partitions, hashtable lookup, LSH projection)."""

import numpy as np
import pytest
from hexagon_formulas import F, deq, ort, s, step

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run
from mdf_engine.hexagon.lookup import fnv1a64

# (index shape, table shape, index_dim, index_rank) -> output shape: the op list's examples,
# with the onnx Gather (data, axis) that computes the same lookup.
EXAMPLES = [
    ((1, 1, 1, 6), (1, 32, 5, 9), None, None, (1, 6, 5, 9), 1, 0),
    ((1, 1, 4, 7), (1, 32, 5, 9), None, None, (4, 7, 5, 9), 1, 0),
    ((2, 5, 5, 12), (1, 1, 1, 256), None, None, (2, 5, 5, 12), 3, 0),
    ((1, 1, 4, 20), (1, 5, 64, 12), 2, None, (5, 4, 20, 12), 1, 1),
    ((1, 1, 1, 8), (1, 5, 64, 12), 2, None, (1, 5, 8, 12), 1, 1),
    ((1, 1, 1, 1), (1, 5, 64, 12), 2, None, (1, 1, 5, 12), 1, 1),
    ((1, 1, 1, 8), (1, 5, 64, 12), 2, 2, (5, 1, 8, 12), 1, 1),
    ((1, 1, 1, 9), (1, 1, 5, 12), 0, None, (9, 1, 5, 12), 0, 0),
]


@pytest.mark.parametrize("ishape,tshape,idim,irank,oshape,lead,axis", EXAMPLES)
def test_gather_examples_of_the_op_list_against_onnxruntime(
    ishape, tshape, idim, irank, oshape, lead, axis
):
    rng = np.random.default_rng(0)
    table = rng.normal(size=tshape).astype(F)
    n = tshape[lead + axis]
    index = rng.integers(0, n, size=ishape).astype(np.int32)
    extra = [] if idim is None else [np.int32(idim)] + ([] if irank is None else [np.int32(irank)])
    (out,) = run("Gather_f", [index, table] + extra)
    assert out.shape == oshape
    data = table.reshape(tshape[lead:])
    if irank is not None:
        idx = index.reshape(ishape[4 - irank :])
    else:
        first = next((i for i, v in enumerate(ishape) if v != 1), 4)
        idx = index.reshape(ishape[first:])
    (ref,) = ort("Gather", {"data": data, "idx": idx.astype(np.int64)}, {"axis": axis})
    np.testing.assert_array_equal(out.reshape(ref.shape), ref)
    (oi,) = run("Gather_int32", [index, (table * 100).astype(np.int32)] + extra)
    np.testing.assert_array_equal(oi, (out * 100).astype(np.int32))


def test_gather_8_is_the_float_gather_of_its_values_and_out_of_range_rules():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 256, size=(1, 1, 10, 3)).astype(np.uint8)
    index = np.array([[[[9, 0, 4, 4]]]], np.int32)
    q, mn, mx = run("Gather_8", [index, codes, s(-1.0), s(2.0)])
    assert (mn.item(), mx.item()) == (-1.0, 2.0)
    (f,) = run("Gather_f", [index, deq(codes, -1.0, 2.0)])
    np.testing.assert_array_equal(deq(q, -1.0, 2.0), f)
    bad = np.array([[[[12, -1]]]], np.int32)
    with pytest.raises(MDFError, match="out of range"):
        run("Gather_f", [bad, codes.astype(F)], padding="SAME")
    (clipped,) = run("Gather_f", [bad, codes.astype(F)], padding="VALID")
    (ref,) = ort(
        "Gather", {"d": codes[0, 0].astype(F), "i": np.array([9, 0], np.int64)}, {"axis": 0}
    )
    np.testing.assert_array_equal(clipped.reshape(ref.shape), ref)


@pytest.mark.parametrize("strategy", [0, 1])
def test_table_partitioned_lookup(strategy):
    """Partitions of sizes (3, 3, 2) of 8 ids: mod puts id i in partition i % 3 at row i // 3;
    div numbers ids through the partitions in order."""
    rng = np.random.default_rng(2)
    sizes = [3, 3, 2]
    table = rng.normal(size=(1, 1, 8, 4)).astype(F)
    by_id = np.empty((8, 4), F)
    starts = np.cumsum([0] + sizes[:-1])
    for i in range(8):
        row = starts[i % 3] + i // 3 if strategy == 0 else i
        by_id[i] = table[0, 0, row]
    ids = np.array([[[[7, 0, 5, 3, 1]]]], np.int32)
    structure = np.array(sizes, np.int32).reshape(1, 1, 1, 3)
    (out,) = run("Table_f", [ids, table, structure, np.int32(strategy)])
    np.testing.assert_array_equal(out.reshape(5, 4), by_id[ids.reshape(-1)])
    (plain,) = run("Table_int32", [ids, (table * 10).astype(np.int32)])
    np.testing.assert_array_equal(
        plain.reshape(5, 4), (table * 10).astype(np.int32)[0, 0, ids.reshape(-1)]
    )
    codes = np.arange(32, dtype=np.uint8).reshape(1, 1, 8, 4) * 7
    q, mn, mx = run("Table_8", [ids, codes, s(-1.0), s(1.0), structure, np.int32(strategy)])
    assert (mn.item(), mx.item()) == (-1.0, 1.0) and q.dtype == np.uint8
    (f,) = run("Table_f", [ids, deq(codes, -1.0, 1.0), structure, np.int32(strategy)])
    np.testing.assert_array_equal(deq(q, -1.0, 1.0), f)


def test_hashtable_lookup_from_the_op_list_text():
    rng = np.random.default_rng(3)
    keys = np.array([[[[5, 17, 2, 40]]]], np.int32)
    values = rng.integers(0, 256, size=(4, 2, 1, 3)).astype(np.uint8)
    lookups = np.array([[[[2, 3, 40, 5, 99]]]], np.int32)
    out, mn, mx, hits, hmin, hmax = run(
        "QuantizedHashtableLookup_8", [lookups, keys, values, s(-2.0), s(2.0)]
    )
    assert out.shape == (5, 2, 1, 3) and (mn.item(), mx.item()) == (-2.0, 2.0)
    where = {k: i for i, k in enumerate(keys.reshape(-1))}
    for j, key in enumerate(lookups.reshape(-1)):
        if key in where:
            np.testing.assert_array_equal(out[j], values[where[key]])
            assert hits.reshape(-1)[j] == 1
        else:
            np.testing.assert_allclose(deq(out[j], -2.0, 2.0), 0.0, atol=step(-2.0, 2.0) / 2)
            assert hits.reshape(-1)[j] == 0
    assert deq(hits, hmin.item(), hmax.item()).max() == 1.0


def test_lsh_projection_hash_and_its_sparse_dense_forms():
    # FNV-1a 64 published test vectors
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    rng = np.random.default_rng(4)
    seeds = rng.normal(size=(1, 1, 3, 4)).astype(F)
    data = rng.integers(0, 100, size=(1, 1, 5, 2)).astype(np.int32)
    w = rng.uniform(0.5, 2.0, size=5).astype(F)
    (dense,) = run("LSHProjection", [seeds, data, w, np.int32(2)])
    (sp1,) = run("LSHProjection", [seeds, data, w, np.int32(1)])
    (sp3,) = run("LSHProjection", [seeds, data, w, np.int32(3)])
    bits = dense.reshape(3, 4)
    assert set(np.unique(bits)) <= {0, 1}
    np.testing.assert_array_equal(sp1.reshape(-1), bits @ (1 << np.arange(4)[::-1]))
    np.testing.assert_array_equal(sp3.reshape(-1), sp1.reshape(-1) + np.arange(3) * 16)
    # one item, weight 1: bit = sign of the hash of (seed bytes + item bytes) as an int64
    (one,) = run("LSHProjection", [seeds, data[:, :, :1, :1], np.ones(1, F), np.int32(2)])
    for i in range(3):
        for j in range(4):
            h = fnv1a64(seeds[0, 0, i, j].tobytes() + data[0, 0, 0, :1].tobytes())
            assert one.reshape(3, 4)[i, j] == (0 < h < 2**63)
