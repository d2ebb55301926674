"""One numeric semantics on both backends (docs/semantics.md, "One numeric semantics"):
integer ``//`` and ``%`` by zero, ``int()`` beyond 64 bits or of NaN, math functions of huge
integers. The interpreted backend is the oracle; its answers are numpy's float64 rules
(checked here against numpy itself)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError

#: (expression over t = 1, 2, 3, ... and z = 0, what numpy says at the last t)
VALUES = [
    ("int(t) // 0", lambda t: np.floor_divide(np.float64(t), 0.0)),
    ("-int(t) // 0", lambda t: np.floor_divide(-np.float64(t), 0.0)),
    ("int(t) % 0", lambda t: np.float64(np.nan)),
    ("int(t) // int(z)", lambda t: np.floor_divide(np.float64(t), 0.0)),
    ("int(t) % int(z)", lambda t: np.float64(np.nan)),
    ("0 // 0", lambda t: np.floor_divide(0.0, 0.0)),
    ("int(t) // 2", lambda t: np.float64(t // 2)),
    ("int(t) % 2", lambda t: np.float64(t % 2)),
    ("math.exp(10**400)", lambda t: np.float64(np.inf)),
    ("math.exp(-(10**400))", lambda t: np.float64(0.0)),
    ("math.exp(int(t) * 2**61)", lambda t: np.exp(np.float64(t * 2**61))),
    ("int(t * 1e18)", lambda t: np.float64(t * 10**18)),
]


def _model(exprs: list[str]) -> dict:
    params = [{"id": "z", "value": 0}, {"id": "t", "value": "t + 1", "default_initial_value": 0}]
    params += [{"id": f"x{k}", "value": e} for k, e in enumerate(exprs)]
    return {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {"id": "A", "parameters": params, "output_ports": [{"id": "o", "value": "t"}]}
                ],
            }
        ],
    }


def _run(model: dict, backend: str, steps: int):
    sim = mdf_engine.Simulation(model, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim.run(steps=steps)
    return sim


def test_corner_cases_give_the_same_values_on_both_backends(tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    exprs = [e for e, _ in VALUES]
    model = _model(exprs)
    ref = _run(model, "interpreted", 4)
    comp = _run(model, "compiled", 4)
    assert comp.runner.mode == "compiled", comp.runner.fallback_reason
    t = float(ref.value("A", "t"))
    assert t == 4.0  # t is updated before the x's read it
    for k, (e, numpy_says) in enumerate(VALUES):
        want = float(np.asarray(ref.value("A", f"x{k}"), dtype=float))
        np.testing.assert_equal(want, float(numpy_says(int(t))), err_msg=e)
        np.testing.assert_equal(float(comp.value("A", f"x{k}")), want, err_msg=e)


@pytest.mark.parametrize(
    "expr,step",
    [
        ("int(1e19)", 0),
        ("int(t * 4e18)", 2),
        ("int(t / z)", 0),
        ("int(z * math.inf)", 0),
        ("int(-1e19 * t)", 0),
        ("int(t) * 4611686018427387904", 1),
        ("int(t) * 3037000500 * int(t) * 3037000500 - 1", 0),
    ],
)
def test_int_beyond_64_bits_is_an_error_on_both_backends(expr, step, tmp_path, monkeypatch):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model([expr])))
    messages = []
    for backend in ("interpreted", "compiled"):
        sim = mdf_engine.Simulation(str(path), backend=backend)
        done = 0
        with pytest.raises(MDFError, match="beyond 64-bit integers") as err:
            for done in range(8):  # noqa: B007 - the step that failed is checked below
                sim.run(steps=1)
        assert done == step, (backend, done)
        assert "graphs.g.nodes.A.parameters.x0.value" in str(err.value)
        messages.append(str(err.value))
