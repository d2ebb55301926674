"""A node that has not run yet reads on the compiled backend what the interpreted backend (the
oracle) holds then, not the warm-up's values that its compiled slots start from."""

from __future__ import annotations

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError


def _model(condition: dict) -> dict:
    """A -> B; both count their runs; B runs under ``condition``."""
    counter = {"count": {"value": "count + 1", "default_initial_value": 0}}
    return {
        "unrun": {
            "format": "ModECI MDF v0.4",
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {"parameters": counter, "output_ports": {"out": {"value": "count"}}},
                        "B": {
                            "input_ports": {"i": {"shape": [1]}},
                            "parameters": counter,
                            "output_ports": {"out": {"value": "count + i"}},
                        },
                    },
                    "edges": {
                        "e": {
                            "sender": "A",
                            "receiver": "B",
                            "sender_port": "out",
                            "receiver_port": "i",
                        }
                    },
                    "conditions": {
                        "node_specific": {"B": condition},
                        "termination": {
                            "environment_state_update": {
                                "type": "AfterNPasses",
                                "kwargs": {"n": 3},
                            }
                        },
                    },
                }
            },
        }
    }


@pytest.mark.parametrize("n", [1, 2])
def test_a_node_that_has_not_run_reads_as_on_the_interpreter(n):
    model = _model({"type": "AtEnvironmentStateUpdate", "kwargs": {"n": n}})
    sims = {b: Simulation(model, backend=b) for b in ("interpreted", "compiled")}
    for steps in range(1, n + 3):
        for sim in sims.values():
            sim.run(steps=1)
        interp, comp = sims["interpreted"], sims["compiled"]
        assert comp.runner.mode == "compiled", comp.runner.fallback_reason
        for node, name in (("A", "count"), ("B", "count"), ("B", "out"), ("B", "i")):
            try:
                want = interp.value(node, name)
            except MDFError:  # (an input port not read yet): the same answer
                with pytest.raises(MDFError):
                    comp.value(node, name)
                continue
            got = comp.value(node, name)
            if want is None:
                assert got is None, (steps, node, name, got)
            else:
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert set(interp.outputs) == set(comp.outputs)
        for node, ports in interp.outputs.items():
            for port, want in ports.items():
                got = comp.outputs[node][port]
                assert (got is None) == (want is None), (steps, node, port)
                if want is not None:
                    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
