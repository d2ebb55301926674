"""PsyNeuLink's stored runs as an oracle: the trial inputs and the per-port check that the tests
of PsyNeuLink exports share.

A stored run (``tests/data/pnl/NAME.expected.json``, ``tests/data/wild/psyneulink/**.oracle.json``)
has ``inputs`` (per input port, one value per trial) and ``trials`` (per trial, every output
port's value after it), written by PsyNeuLink itself (tools/pnl_export/).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: how close a port's value must be to PsyNeuLink's (float64 both, different operation order)
RTOL, ATOL = 1e-9, 1e-12


def trial_inputs(run: dict, t: int) -> dict[str, np.ndarray]:
    """The initializer of trial ``t`` of a stored run: each input port's value, as floats."""
    return {k: np.array(v[t], dtype=float) for k, v in run["inputs"].items()}


def assert_port_matches(got: Any, want: Any, where: str) -> None:
    """One output port's value equals PsyNeuLink's (shapes aside: both are raveled)."""
    np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=RTOL, atol=ATOL, err_msg=where)
