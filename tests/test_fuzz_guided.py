"""Audit 5 (docs/security.md): regression tests of what the coverage-guided fuzzer
``tools/fuzz_guided.py`` found, and quick seeded runs of its mutators (mutated ONNX protobufs
against onnxruntime, YAML-specific rewrites and special numbers through the loader)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from mdf_engine import MDFError, Simulation, load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

PNL_EDGES = ROOT / "tests/data/wild/psyneulink/v0.15.3.0/tests_model_varied_matrix_sizes_edges.json"


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_a_projection_of_an_int_beyond_float_range_is_one_clean_line(tmp_path, backend):
    """A PsyNeuLink sender whose output is an integer beyond float range (10**400): the
    projection matrix product was an internal OverflowError (found through ``mdf sweep``)."""
    data = json.loads(PNL_EDGES.read_text())
    data["comp"]["graphs"]["comp"]["nodes"]["A"]["output_ports"]["A_RESULT"]["value"] = 10**400
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MDFError) as e:
        Simulation(str(path), backend=backend).run(steps=1)
    text = str(e.value)
    assert "\n" not in text and "big.json" in text
    assert "edges.MappingProjection_from_A_RESULT__to_B_InputPort_0_" in text
    assert "projection matrix" in text


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_an_edge_weight_beyond_float_range_is_one_clean_line(tmp_path, backend):
    """An edge ``weight`` of 10**400 (a JSON integer) times a float: an internal
    OverflowError (found comparing the backends over conditions)."""
    src = ROOT / "tests/data/wild/psyneulink/v0.21.0.0/chain_conditions.json"
    data = json.loads(src.read_text())
    edge = "MappingProjection_from_A_RESULT__to_B_InputPort_0_"
    data["chain_conditions"]["graphs"]["chain_conditions"]["edges"][edge]["parameters"] = {
        "weight": 10**400
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MDFError, match=rf"w\.json: .*edges\.{edge}\.parameters\.weight: "):
        Simulation(str(path), backend=backend).run(steps=3)


def test_a_model_without_graphs_is_refused_naming_its_file(tmp_path):
    """``Simulation(path)`` of a model whose ``graphs`` is empty (or ``graph=`` naming none of
    them): the MDFError named no file (the CLI added it)."""
    path = tmp_path / "none.json"
    path.write_text(json.dumps({"m": {"format": "ModECI MDF v0.4", "graphs": {}}}))
    with pytest.raises(MDFError, match=r"^\S*none\.json: graphs: the model has no graphs$"):
        Simulation(str(path))
    with pytest.raises(MDFError, match=r"varied_matrix_sizes_edges\.json: graphs: no graph 'x'"):
        Simulation(str(PNL_EDGES), graph="x")


def test_onnx_api_errors_name_the_file(tmp_path):
    """``import_model``/``run_onnx`` of a path: the MDFError names the file (``mdf import``
    named it, the API did not)."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from mdf_engine.onnx_io import import_model, run_onnx

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("Add", ["x", "nope"], ["y"])], "g", [x], [y])
    path = tmp_path / "missing_input.onnx"
    path.write_bytes(helper.make_model(g).SerializeToString())
    for call in (lambda: import_model(str(path)), lambda: run_onnx(str(path), {"x": [1, 2]})):
        with pytest.raises(MDFError) as e:
            call()
        assert "missing_input.onnx" in str(e.value) and "nope" in str(e.value)
    with pytest.raises(MDFError, match="no_such.onnx: no such ONNX file"):
        import_model(str(tmp_path / "no_such.onnx"))


def test_seeded_onnx_mutants_import_run_and_match_onnxruntime(tmp_path):
    """300 mutated protobufs (dims, dtypes, attributes, cycles, missing inputs, names, opsets):
    each imports and runs, or is refused in one line naming the file; where onnxruntime runs
    one too, the numbers are onnxruntime's."""
    pytest.importorskip("onnxruntime")
    import fuzz_onnx

    problems, counts = fuzz_onnx.smoke(seed=2, mutants=300, folder=tmp_path)
    assert not problems, "\n".join(problems)
    assert counts.get("agree", 0) >= 20 and counts.get("error", 0) >= 100, counts


def test_yaml_twists_and_special_numbers_load_or_are_refused_cleanly(tmp_path):
    """Alias bombs, tags, duplicate and non-string keys, merge keys, YAML 1.1 numbers, shared
    anchors; -0, subnormals, NaN, huge ints, 10**400, texts and lists where numbers go."""
    pytest.importorskip("onnx")  # fuzz_guided's corpus helpers import the tools' modules
    import fuzz_guided

    seeds = fuzz_guided.mdf_seeds()
    for n in range(120):
        rng = random.Random(f"yaml:{n}")
        src, data, _ = rng.choice(seeds)
        data = json.loads(json.dumps(data))
        if n % 2:
            fuzz_guided.special_number(rng, data)
        path = tmp_path / f"m{n}.yaml"
        path.write_bytes(fuzz_guided.yaml_special(rng, data))
        try:
            load(path)
        except MDFError as e:
            assert "\n" not in str(e) and path.name in str(e), (src, str(e)[:300])
