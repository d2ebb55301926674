"""What the cold-start work changed: generated code assigns arrays with the ``_put`` loops
(oracle: numpy's ``dst[...] = src``), and the PsyNeuLink writer's check runs on a compile cache
miss only, so a refused graph never gets a record and a cached PsyNeuLink graph gives the
numbers of its first run (and of the interpreter)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from numba import njit

import mdf_engine
from mdf_engine import psyneulink_files
from mdf_engine.backends.compiled.helpers import _put

CHAIN = ROOT / "tests" / "data" / "pnl" / "linear_chain.json"


@njit(cache=False)
def _put_jitted(dst, src):
    _put(dst, src)


@pytest.mark.parametrize(
    "dst_shape, src",
    [
        ((3,), np.arange(3.0)),
        ((3,), np.array([2.5])),
        ((2, 3), np.arange(6.0).reshape(3, 2).T),  # not contiguous
        ((2, 3), np.array([[1.0, 2.0, 3.0]])),  # broadcast along the rows
        ((2, 3), np.arange(3.0)),  # across dimensions (Numba's own assignment)
        ((2, 2), 7.0),
    ],
    ids=["same", "one", "transposed", "rows", "dims", "scalar"],
)
def test_put_is_numpy_slice_assignment(dst_shape, src):
    expected = np.zeros(dst_shape)
    expected[...] = src
    got = np.zeros(dst_shape)
    _put_jitted(got, src)
    np.testing.assert_array_equal(got, expected)


def test_put_refuses_other_shapes():
    with pytest.raises(ValueError):
        _put_jitted(np.zeros(3), np.arange(2.0))


def _outputs(sim):
    return {(n, p): np.asarray(v) for n, ports in sim.outputs.items() for p, v in ports.items()}


def test_psyneulink_check_on_a_cache_miss_only(tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    interpreted = mdf_engine.Simulation(CHAIN, backend="interpreted")
    interpreted.run(steps=3)
    # a graph the writer's rules refuse: interpreted, and no record for a later start
    monkeypatch.setattr(psyneulink_files, "not_compiled_reason", lambda *a: "refused here")
    for _ in range(2):
        refused = mdf_engine.Simulation(CHAIN, backend="compiled")
        refused.run(steps=3)
        assert refused.runner.mode == "interpreted"
        assert refused.runner.fallback_reason == "refused here"
    assert not list(tmp_path.glob("mdf_graph_*.json"))
    monkeypatch.undo()
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    first = mdf_engine.Simulation(CHAIN, backend="compiled")
    first.run(steps=3)
    second = mdf_engine.Simulation(CHAIN, backend="compiled")
    second.run(steps=3)
    assert (first.runner.origin, second.runner.origin) == ("generated", "cache")
    expected = _outputs(interpreted)
    for sim in (first, second):
        got = _outputs(sim)
        assert got.keys() == expected.keys()
        for key, v in expected.items():
            np.testing.assert_array_equal(got[key], v, err_msg=str(key))
