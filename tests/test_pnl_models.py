"""Models and functions exported by PsyNeuLink itself, against the values PsyNeuLink computed.

tests/data/pnl/ is written by tools/pnl_export/make_models.py (run in a PsyNeuLink environment):
``NAME.json`` is ``pnl.get_mdf_serialized(composition)`` before the run, ``NAME.expected.json``
the inputs of each trial and every output port after it; ``functions.expected.json`` holds
PsyNeuLink's ``Function.execute`` outputs for single functions. One trial is one
``Simulation.evaluate(initializer=...)`` (one reference ``EvaluableGraph.evaluate``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mdf_dicts import logistic_model
from pnl_runs import assert_port_matches, trial_inputs

import mdf_engine
from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.nested_graphs import flatten_nested_graphs
from mdf_engine.plan import load_function_libraries
from mdf_engine.registry import REGISTRY

DATA = Path(__file__).resolve().parent / "data" / "pnl"
MODELS = ["fhn", "linear_chain", "branching", "nested", "stroop"]


def _expected(name: str) -> dict:
    return json.loads((DATA / f"{name}.expected.json").read_text())


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("name", MODELS)
def test_model_matches_psyneulink(name, backend):
    exp = _expected(name)
    model = mdf_engine.load(str(DATA / f"{name}.json"))
    assert model.generating_application.startswith("PsyNeuLink")
    sim = Simulation(model, backend=backend)
    checked = 0
    for t, trial in enumerate(exp["trials"]):
        sim.evaluate(initializer=trial_inputs(exp, t))
        outs = {p: v for node in sim.outputs.values() for p, v in node.items()}
        for port, want in trial.items():
            assert port in outs, f"trial {t}: no output port {port}"
            assert_port_matches(outs[port], want, f"{name} trial {t} {port}")
            checked += 1
    assert checked >= len(exp["trials"])


def test_results_are_the_terminal_outputs():
    """PsyNeuLink's comp.results (its output nodes A and F per trial) agree with the per-trial
    port values the script recorded, which the model tests compare against."""
    exp = _expected("nested")
    a_port = next(p for p in exp["trials"][0] if p.startswith("A"))
    recorded = [[trial[a_port], trial["F_RESULT"]] for trial in exp["trials"]]
    np.testing.assert_allclose(np.ravel(exp["results"]), np.ravel(recorded))


def test_pnl_names_shadow_standard_ones_only_in_psyneulink_files():
    """``logistic`` in a PsyNeuLink file is PsyNeuLink's (offset outside the exponential)."""
    outs = {}
    for app in ("PsyNeuLink v0.21.0.0", "Python mdf_engine"):
        sim = Simulation(logistic_model(app, 0.5, 2.0, 0.1, 0.3))
        sim.evaluate()
        outs[app] = float(np.asarray(sim.outputs["n"]["o"]))
    assert outs["PsyNeuLink v0.21.0.0"] == pytest.approx(1 / (1 + np.exp(-2.0 * 0.6)) + 0.3)
    assert outs["Python mdf_engine"] == pytest.approx(1 / (1 + np.exp(-2.0 * 0.6 + 0.3)))


def test_pnl_arguments_select_the_pnl_version():
    """A call with PsyNeuLink-only arguments binds to the pnl version in any file."""
    m = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "n": {
                            "functions": {
                                "f": {
                                    "function": "linear",
                                    "args": {
                                        "variable0": 2.0,
                                        "slope": 3.0,
                                        "intercept": 1.0,
                                        "scale": 2.0,
                                        "offset": -1.0,
                                    },
                                }
                            },
                            "output_ports": {"o": {"value": "f"}},
                        }
                    }
                }
            }
        }
    }
    sim = Simulation(m)
    sim.evaluate()
    assert float(np.asarray(sim.outputs["n"]["o"])) == pytest.approx(2.0 * (2.0 * 3 + 1) - 1)


# -- single functions --------------------------------------------------------------------------

FUNCTION_CASES = json.loads((DATA / "functions.expected.json").read_text())["cases"]


def _pnl(name: str):
    load_function_libraries(())
    (sch,) = [v for v in REGISTRY.versions(name) if v.namespace == "pnl"]
    return sch


def _inputs(case: dict) -> list:
    if case["function"] == "fitzhughnagumointegrator":
        return [np.float64(case["variable0"]), *map(np.float64, case["state"])]
    ins = [np.array(case["variable0"], dtype=float)]
    if "previous_value" in case:
        ins.append(np.array(case["previous_value"], dtype=float))
    return ins


def _pnl_rounding(case: dict) -> np.ndarray:
    """Relative tolerance per output: 1e-9, or for the DDM's conditional moments the error
    PsyNeuLink's own float64 evaluation can make: a few ulps times the condition number of the
    sums in its formula (sum of |terms| / |result|), which reaches 1e10 for small drift rates.
    tests/test_first_day_ddm.py checks our values against the formula in exact arithmetic."""
    tol = np.full(np.size(case["expected"]), 1e-9)
    if case["function"] != "driftdiffusionanalytical":
        return tol
    a = case["args"]
    drift = a["drift_rate"] * float(np.ravel(case["variable0"])[0])
    z, s = a["threshold"], a["noise"]
    bias = min(max((a["starting_value"] + z) / (2 * z), 1e-8), 1 - 1e-8)
    drift = 0.01 if abs(drift) < 0.01 else drift
    X = np.clip(drift * (bias - 0.5) * 2 * z / s**2, -100, 100)
    Z = np.clip(drift * z / s**2, -100, 100)
    Z = 0.0001 if abs(Z) < 0.0001 else Z

    def terms(u: float) -> tuple[np.ndarray, np.ndarray]:
        f, h = u / np.tanh(u), (u / np.sinh(u)) ** 2
        return np.array([f, h]), np.array([3 * h, 2 * f * h, 3 * f])

    for i, q in ((3, Z + X), (6, Z - X)):
        (v2, t2), (vq, tq) = terms(2 * Z), terms(q)
        cond_var = np.abs(np.r_[v2, vq]).sum() / abs(v2.sum() - vq.sum())
        cond_third = np.abs(np.r_[t2, tq]).sum() / abs(t2.sum() - tq.sum())
        eps = 4 * np.finfo(float).eps
        tol[i] = max(1e-9, eps * cond_var)
        tol[i + 1] = max(1e-9, eps * (cond_third + 1.5 * cond_var))
    return tol


@pytest.mark.parametrize(
    "k",
    range(len(FUNCTION_CASES)),
    ids=[f"{c['function']}-{k}" for k, c in enumerate(FUNCTION_CASES)],
)
def test_function_matches_psyneulink(k):
    case = FUNCTION_CASES[k]
    sch = _pnl(case["function"])
    ins = _inputs(case)
    out = sch.call(ins, case["args"])
    got = np.concatenate([np.ravel(o) for o in out])
    want = np.ravel(np.array(case["expected"], dtype=float))
    assert got.shape == want.shape
    for i, rtol in enumerate(_pnl_rounding(case)):
        np.testing.assert_allclose(got[i], want[i], rtol=rtol, atol=1e-12, err_msg=f"output {i}")
    if sch.jit is not None:
        attrs = {**{a: d for a, d in sch.attributes.items()}, **case["args"]}
        jitted = sch.jit(
            *ins,
            *[
                np.float64(attrs[a])
                if not isinstance(attrs[a], (list, str))
                else np.array(attrs[a], dtype=float)
                for a in sch.attributes
            ],
        )
        for i, rtol in enumerate(_pnl_rounding(case)):
            np.testing.assert_allclose(np.ravel(jitted)[i], want[i], rtol=rtol, atol=1e-12)


def test_every_listed_pnl_function_is_registered():
    load_function_libraries(())
    names = set(REGISTRY.names("pnl"))
    for n in (
        "linear",
        "logistic",
        "exponential",
        "linearcombination",
        "reduce",
        "simpleintegrator",
        "adaptiveintegrator",
        "leakycompetingintegrator",
        "fitzhughnagumointegrator",
        "driftdiffusionanalytical",
        "distance",
        "energy",
        "defaultallocationfunction",
    ):
        assert n in names
    covered = {c["function"] for c in FUNCTION_CASES}
    assert names - covered == {"defaultallocationfunction"}


def test_defaultallocationfunction_repeats_the_first_item():
    out = _pnl("defaultallocationfunction").call([np.array([0.7, 0.1])], {"num_control_signals": 3})
    np.testing.assert_array_equal(out[0], [0.7, 0.7, 0.7])


def test_errors_say_what_was_expected():
    with pytest.raises(MDFError, match="operation must be"):
        _pnl("linearcombination").call([np.ones((2, 2))], {"operation": "max"})
    with pytest.raises(MDFError, match="unknown metric"):
        _pnl("distance").call([np.ones((2, 2))], {"metric": "manhattan"})
    with pytest.raises(MDFError, match="must be 2x2"):
        _pnl("energy").call([np.ones(2)], {"matrix": np.ones((3, 3))})


# -- nested graphs -------------------------------------------------------------------------------


def _nested_body() -> dict:
    inner = {
        "nodes": {
            "E": {"input_ports": {"E_in": {}}, "output_ports": {"E_out": {"value": "2 * E_in"}}},
            "F": {"input_ports": {"F_in": {}}, "output_ports": {"F_out": {"value": "F_in + 1"}}},
        },
        "edges": {
            "e1": {"sender": "E", "sender_port": "E_out", "receiver": "F", "receiver_port": "F_in"}
        },
        "conditions": {
            "termination": {
                "environment_state_update": {"type": "AllHaveRun", "kwargs": {"dependencies": []}}
            }
        },
    }
    return {
        "graphs": {
            "g": {
                "nodes": {
                    "A": {
                        "input_ports": {"A_in": {}},
                        "output_ports": {"A_out": {"value": "A_in * 3"}},
                    },
                    "inner": inner,
                },
                "edges": {
                    "e0": {
                        "sender": "A",
                        "sender_port": "A_out",
                        "receiver": "inner",
                        "receiver_port": "E_in",
                    }
                },
            }
        }
    }


def test_nested_graph_is_flattened_and_edges_rewired():
    flat = flatten_nested_graphs(_nested_body())
    g = flat["graphs"]["g"]
    assert set(g["nodes"]) == {"A", "E", "F"}
    assert g["edges"]["e0"]["receiver"] == "E"
    sim = Simulation({"m": _nested_body()})
    sim.evaluate(initializer={"A_in": 2.0})
    assert float(np.asarray(sim.outputs["F"]["F_out"])) == 2.0 * 3 * 2 + 1


def test_nested_graph_errors():
    body = _nested_body()
    body["graphs"]["g"]["edges"]["e0"]["receiver_port"] = "nope"
    with pytest.raises(MDFError, match="no node that has port 'nope'"):
        flatten_nested_graphs(body)
    body = _nested_body()
    body["graphs"]["g"]["nodes"]["inner"]["conditions"]["termination"][
        "environment_state_update"
    ] = {"type": "AfterNCalls", "kwargs": {"dependency": "F", "n": 2}}
    with pytest.raises(MDFError, match="termination condition 'AfterNCalls'"):
        flatten_nested_graphs(body)
    body = _nested_body()
    body["graphs"]["g"]["nodes"]["inner"]["nodes"]["A"] = {}
    with pytest.raises(MDFError, match="used twice"):
        flatten_nested_graphs(body)
