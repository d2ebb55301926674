"""Large constant arrays are held in the compiled state, not frozen into machine code.

Numba compiles a module global array into the machine code as a literal; SqueezeNet's 3.5 M
numbers (weights and zero defaults of its ports) took gigabytes and did not finish compiling.
So an array beyond ``constants.HOLD_ABOVE`` numbers (or beyond ``FROZEN_MOST`` frozen numbers
in all) is a read-only array slot passed to the generated code at run time. Here every array
is held (``HOLD_ABOVE = 0``): results equal the interpreted backend's (the oracle) on a fresh
compile, a start from the compile cache, a batch (sweep), node by node and tier 0; the held
arrays are read-only and shared between runs, and the generated module freezes no array.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.backends.compiled import constants
from mdf_engine.backends.compiled.layout import Role

DATA = Path(__file__).resolve().parent / "data"
MLP = DATA / "wild" / "keras" / "mlp_linear.json"


@pytest.fixture
def hold_all(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every constant array held; a compile cache of the test's own."""
    monkeypatch.setattr(constants, "HOLD_ABOVE", 0)
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    return tmp_path


def _outputs_equal(got: dict, want: dict) -> None:
    for nid, ports in want.items():
        for pid, w in ports.items():
            g = np.asarray(got[nid][pid])
            assert g.dtype == np.asarray(w).dtype, f"{nid}.{pid}"
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, err_msg=f"{nid}.{pid}")


def _held(runner) -> list[np.ndarray]:
    layout, state = runner._layout, runner.compiled_state
    return [state["A"][s.index] for k, s in layout.slots.items() if k.role is Role.CONSTANT]


def test_held_constants_compile_and_equal_the_interpreter(hold_all: Path) -> None:
    oracle = Simulation(MLP, backend="interpreted")
    oracle.run(steps=2)
    for origin in ("generated", "cache"):
        sim = Simulation(MLP, backend="compiled")
        sim.run(steps=2)
        assert sim.runner.mode == "compiled", sim.runner.fallback_reason
        assert sim.runner.origin == origin
        held = _held(sim.runner)
        assert held and not any(a.flags.writeable for a in held)
        _outputs_equal(sim.runner.outputs(), oracle.runner.outputs())
        fresh = sim.runner.cold_state()["A"]  # (a fresh state shares the held arrays)
        assert all(any(a is b for b in fresh) for a in held)
    with np.load(next(hold_all.glob("mdf_model_*.npz"))) as z:  # the module's table
        kinds = str(z["kinds"])
    assert "a" not in kinds  # numbers and strings only: no array frozen into machine code


def test_held_constants_in_a_batch_and_on_tier0(
    hold_all: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle = Simulation(MLP, backend="interpreted")
    oracle.run(steps=2)
    want = oracle.runner.outputs()
    recorded = [(nid, pid) for nid, ports in want.items() for pid in ports]
    sim = Simulation(MLP, backend="compiled")
    assert sim.runner.prepare_batch([], recorded, None), sim.runner.fallback_reason
    rec = sim.runner.run_batch(np.zeros((3, 1)), 2, None)  # three runs from cold states
    for nid, name, col, _shape in sim.runner.record_layout:
        w = np.asarray(want[nid][name], dtype=np.float64).reshape(-1)
        for row in rec:
            np.testing.assert_allclose(row[-1, col : col + w.size], w, rtol=1e-12, atol=0)
    assert _held(sim.runner) and not any(a.flags.writeable for a in _held(sim.runner))
    monkeypatch.setenv("MDF_ENGINE_TIER0", "always")  # (tier 0 reads held arrays too)
    tier0 = Simulation(MLP, backend="compiled")
    tier0.run(steps=2)
    assert tier0.runner.tier0 is not None
    assert _held(tier0.runner)
    got = tier0.runner.outputs()
    for nid, ports in want.items():
        for pid, w in ports.items():
            np.testing.assert_allclose(got[nid][pid], w, rtol=1e-12, atol=1e-15)
