"""Every function of modeci-mdf 0.4.15's ``mdf_functions`` table against modeci-mdf's own evaluation.

The oracle is modeci-mdf itself (used only here): the numeric standard functions by the table's
``function``, which modeci-mdf builds from the ``expression_string``; the drift diffusion
integrator by modeci-mdf's own function under ``numpy.random.seed``; ``onnx::`` entries are checked
for the table's argument names (their values are covered by the ONNX conformance cases) and the
ACT-R helpers by tests/test_actr.py, so here only their schemas are compared.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from mdf_dicts import graph_model

from mdf_engine.plan import load_function_libraries
from mdf_engine.registry import REGISTRY
from mdf_engine.simulation import Simulation

standard = pytest.importorskip("modeci_mdf.functions.standard")
ddm = pytest.importorskip("modeci_mdf.functions.ddm")

load_function_libraries()
TABLE = standard.mdf_functions

#: onnx entries of the table that are newer than opset 13 (and not part of our ONNX era).
ONNX_AFTER_ERA = {
    "onnx::CastLike",
    "onnx::OptionalHasElement",
    "onnx::Optional",
    "onnx::OptionalGetElement",
    "onnx::Bernoulli",
    "onnx::HardSwish",
    "onnx::Trilu",
}

NUMERIC = [
    n
    for n, v in TABLE.items()
    if "::" not in n and not v["expression_string"].startswith(("actr.", "ddm."))
]
ACTR = [n for n, v in TABLE.items() if v["expression_string"].startswith("actr.")]
ONNX = [n for n in TABLE if n.startswith("onnx::")]

#: Ranges that keep every function inside its domain.
_DOMAIN = {"arcsin": (-0.99, 0.99), "arccos": (-0.99, 0.99), "tan": (-1.4, 1.4)}


def _random_args(name: str, rng: np.random.Generator) -> dict:
    lo, hi = _DOMAIN.get(name, (-3.0, 3.0))
    args = {}
    for a in TABLE[name]["arguments"]:
        if name == "MatMul":
            args[a] = rng.normal(size=(3, 4) if a == "A" else (4, 2))
        elif a == "variable0" or a == "A":
            args[a] = rng.uniform(lo, hi, size=(5,))
        else:
            args[a] = float(rng.uniform(-2, 2))
    return args


def test_table_is_covered():
    missing = [n for n in TABLE if n not in REGISTRY and n not in ONNX_AFTER_ERA]
    assert missing == []
    assert "drift_diffusion_integrator" in REGISTRY.names("mdf")


@pytest.mark.parametrize("name", NUMERIC + ACTR + ["drift_diffusion_integrator"])
def test_argument_names_agree(name):
    schema = REGISTRY.lookup(name)
    assert list(schema.inputs)[: len(TABLE[name]["arguments"])] == TABLE[name]["arguments"]


@pytest.mark.parametrize("name", [n for n in ONNX if n not in ONNX_AFTER_ERA])
def test_onnx_argument_names_known(name):
    schema = REGISTRY.lookup(name)
    assert set(TABLE[name]["arguments"]) <= set(schema.argument_names)


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_against_modeci_expression(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    schema = REGISTRY.lookup(name)
    for _ in range(5):
        args = _random_args(name, rng)
        theirs = TABLE[name]["function"](**args)
        inputs, attrs = schema.bind(args, name)
        (mine,) = schema.call(inputs, attrs)
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
        if schema.jit is not None:
            np.testing.assert_allclose(schema.jit(*inputs), theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
@pytest.mark.parametrize("drift", [0.0, 0.5, -1.5])
def test_drift_diffusion_against_modeci(seed, drift):
    args = dict(
        starting_point=0.1,
        non_decision_time=0.2,
        drift_rate=drift,
        threshold=0.6,
        noise=1.0,
        dt=0.01,
    )
    np.random.seed(seed)
    theirs = ddm.drift_diffusion_integrator(**args)
    schema = REGISTRY.lookup("drift_diffusion_integrator")
    inputs, attrs = schema.bind({**args, "seed": seed}, "ddm")
    (mine,) = schema.call(inputs, attrs)
    assert mine == pytest.approx(theirs, rel=1e-12, abs=1e-12)


def test_drift_diffusion_defaults_and_unseeded():
    schema = REGISTRY.lookup("drift_diffusion_integrator")
    np.random.seed(5)
    theirs = ddm.drift_diffusion_integrator(0.0, 0.3, 1.0, 0.5)
    (mine,) = schema.call([0.0, 0.3, 1.0, 0.5], {"seed": 5})
    assert mine == pytest.approx(theirs, rel=1e-12)
    (free,) = schema.call([0.0, 0.3, 1.0, 0.5], {})
    assert abs(free) >= 0.3 and round((abs(free) - 0.3) / 0.01, 6) % 1 == 0


def test_drift_diffusion_in_a_model():
    args = {
        "starting_point": 0.0,
        "non_decision_time": 0.25,
        "drift_rate": 2.0,
        "threshold": 0.4,
        "noise": 0.5,
        "dt": 0.001,
        "seed": 3,
    }
    rt = {"function": "drift_diffusion_integrator", "args": args}
    node = {"parameters": {"rt": rt}, "output_ports": {"out": {"value": "rt"}}}
    model = graph_model({"n": node}, model="ddm_model")
    np.random.seed(3)
    theirs = ddm.drift_diffusion_integrator(0.0, 0.25, 2.0, 0.4, 0.5, 0.001)
    sim = Simulation(model)
    sim.evaluate()
    assert float(np.asarray(sim.outputs["n"]["out"])) == pytest.approx(theirs, rel=1e-12)
