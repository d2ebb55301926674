"""Regression tests of the third hostile-input audit (docs/security.md, "Audit 3"): each
finding once, on the smallest model that shows it. Oracles: the same model with plain ids
(values that must not change), Python's ``csv``/``json`` modules and numpy reading files back,
and the one-line ``MDFError`` rule (file, field path, what was expected)."""

from __future__ import annotations

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError


def _fed(a: str, a_port: str, b: str = "B", b_port: str = "i") -> dict:
    """Two nodes each doubling what its input port gets (no edges: the initializer feeds)."""

    def node(nid: str, port: str, k: float) -> dict:
        return {
            "id": nid,
            "input_ports": [{"id": port, "shape": [1]}],
            "parameters": [{"id": "k", "value": k}],
            "output_ports": [{"id": "o", "value": f"k * {port}"}],
        }

    return {
        "id": "m",
        "graphs": [{"id": "g", "nodes": [node(a, a_port, 2.0), node(b, b_port, 3.0)]}],
    }


BACKENDS = ["interpreted", "compiled"]


# ---------------------------------------------------------------- initializer keys


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_initializer_key_naming_a_dotted_node_id(backend):
    """``l1.0.x`` is port ``x`` of node ``l1.0``: it was split at its first dot (node ``l1``,
    port ``0.x``) and refused; the oracle is the same model with the plain node id ``L``."""
    dotted = mdf_engine.Simulation(_fed("l1.0", "x"), backend=backend)
    plain = mdf_engine.Simulation(_fed("L", "x"), backend=backend)
    got = dotted.run(steps=2, initializer={"l1.0.x": 5.0, "B.i": 7.0})
    want = plain.run(steps=2, initializer={"L.x": 5.0, "B.i": 7.0})
    assert want.outputs["L"]["o"] == pytest.approx(10.0)  # k * x: the key reached it
    np.testing.assert_array_equal(got.outputs["l1.0"]["o"], want.outputs["L"]["o"])
    np.testing.assert_array_equal(got.outputs["B"]["o"], want.outputs["B"]["o"])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "model,key",
    [
        # node A's port i and node A.i's port x: 'A.i.x' reads only as the second
        (_fed("A", "i", "A.i", "x"), "A.i.x"),
        # a bare port id feeds every node that has such a port (the reference's rule)
        (_fed("A", "x", "Q", "x"), "x"),
    ],
)
def test_an_initializer_key_with_one_reading_is_taken(backend, model, key):
    sim = mdf_engine.Simulation(model, backend=backend)
    res = sim.run(steps=1, initializer={key: 4.0} | ({} if key == "x" else {"A.i": 1.0}))
    outs = {n: float(np.ravel(v["o"])[0]) for n, v in res.outputs.items()}
    if key == "x":
        assert outs == {"A": 8.0, "Q": 12.0}
    else:
        assert outs == {"A": 2.0, "A.i": 12.0}


def _ambiguous() -> dict:
    """Node ``A`` with input port ``x`` and node ``P`` whose input port id is ``A.x``."""
    m = _fed("A", "x", "P", "y")
    m["graphs"][0]["nodes"][1]["input_ports"].append({"id": "A.x", "shape": [1]})
    return m


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ambiguous_initializer_key_is_refused(backend):
    sim = mdf_engine.Simulation(_ambiguous(), backend=backend)
    with pytest.raises(MDFError, match=r"initializer: initializer key 'A.x' is ambiguous") as e:
        sim.run(steps=1, initializer={"A.x": 1.0, "y": 1.0})
    assert "port 'A.x' of node 'P'" in str(e.value) and "port 'x' of node 'A'" in str(e.value)
    with pytest.raises(MDFError, match="'A.y' is neither an input port id nor NODE.PORT"):
        sim.run(steps=1, initializer={"A.y": 1.0})
