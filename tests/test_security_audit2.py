"""Regression tests of the second hostile-input audit (docs/security.md, "Audit 2"): each
finding of ``tools/audit2_attacks.py`` once, on the smallest model that shows it. Oracles:
Python's own NFKC folding of names (``unicodedata``), the ``csv`` module reading a CSV back
(RFC 4180), the same model with plain ids (values that must not change), and the one-line
``MDFError`` rule (file, field path, what was expected)."""

from __future__ import annotations

import copy
import csv
import json
import unicodedata

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError, cli
from mdf_engine.backends.compiled.build import numba_failure
from mdf_engine.expressions import parse


def _model(a: str = "A") -> dict:
    """A -> B: A counts p and outputs p * k; B accumulates what it gets."""
    return {
        "id": "m",
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {
                        "id": a,
                        "parameters": [
                            {"id": "p", "value": "p + 1", "default_initial_value": 0},
                            {"id": "k", "value": 2.0},
                        ],
                        "output_ports": [{"id": "o", "value": "p * k"}],
                    },
                    {
                        "id": "B",
                        "input_ports": [{"id": "i", "shape": [1]}],
                        "parameters": [
                            {"id": "acc", "value": "acc + i", "default_initial_value": 0}
                        ],
                        "output_ports": [{"id": "o", "value": "acc"}],
                    },
                ],
                "edges": [
                    {"id": "e", "sender": a, "sender_port": "o", "receiver": "B"}
                    | {"receiver_port": "i"}
                ],
            }
        ],
    }


def _one_line_error(argv: list[str], capsys) -> str:
    assert cli.main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], lines
    return lines[0]


# ---------------------------------------------------------------- names Python folds (NFKC)


@pytest.mark.parametrize("name,plain", [("\uff4b", "k"), ("\u212a", "K"), ("e\u0301", "\xe9")])
def test_a_name_python_reads_as_another_is_refused(name, plain):
    assert unicodedata.normalize("NFKC", name) == plain  # what Python's parser does to it
    with pytest.raises(MDFError, match="reads as"):
        parse(f"p * {name}", "f")
    m = _model()
    m["graphs"][0]["nodes"][0]["parameters"].append({"id": name, "value": 100.0})
    m["graphs"][0]["nodes"][0]["output_ports"][0]["value"] = f"p * {name}"
    with pytest.raises(MDFError, match="output_ports.o.value: the name"):
        mdf_engine.Simulation(m).run(steps=1)  # it read k = 2.0 before, silently


def test_a_non_ascii_name_written_as_itself_still_reads_it():
    m = _model()
    m["graphs"][0]["nodes"][0]["parameters"][1]["id"] = "\xe9"
    m["graphs"][0]["nodes"][0]["output_ports"][0]["value"] = "p * \xe9"
    ref = mdf_engine.Simulation(_model()).run(steps=3).outputs
    assert mdf_engine.Simulation(m).run(steps=3).outputs == ref


# ---------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"threshold": "__import__('os')", "comparator": ">="}, "threshold"),
        ({"threshold": float("nan"), "comparator": ">="}, "threshold"),
        ({"threshold": 1, "comparator": "=~"}, "comparator"),
        ({"threshold": 1, "comparator": ">=", "atol": "x"}, "atol"),
    ],
)
def test_a_threshold_is_checked_when_read(kwargs, field):
    m = _model()
    cond = {"type": "Threshold", "kwargs": {"dependency": "A", "parameter": "p", **kwargs}}
    m["graphs"][0]["conditions"] = {"node_specific": {"A": cond}}
    with pytest.raises(MDFError, match=rf"conditions.*kwargs\.{field}: expected"):
        mdf_engine.Simulation(m).run(steps=2)  # a text threshold was a TypeError mid-run


# ---------------------------------------------------------------- text that is not Unicode


def test_a_lone_surrogate_is_refused_with_its_field(tmp_path, capsys):
    m = _model("A\ud800")
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m))  # ensure_ascii: written as the escape \ud800
    for cmd in (["run"], ["info"], ["sweep", "--set", "B.x=0:1:2", "--record", "B.o"]):
        line = _one_line_error([cmd[0], str(path), *cmd[1:]], capsys)
        assert str(path) in line and "lone surrogate" in line and "\\ud800" in line


# ---------------------------------------------------------------- command-line values


def test_a_negative_seed_is_an_error(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model()))
    assert "seed must be" in _one_line_error(["run", str(path), "--seed", "-1"], capsys)
    args = ["sweep", str(path), "--set", "A.k=0:1", "--samples", "2", "--seed", "-1"]
    assert "seed must be" in _one_line_error([*args, "--record", "B.o"], capsys)


# ---------------------------------------------------------------- ids in result files


def test_sweep_csv_headers_escape_formulas(tmp_path):
    bad = "=cmd|' /C calc'!A0"
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model(bad)))
    for stream in (True, False):  # the streamed file and Dataset.to-file
        out = tmp_path / f"s{stream}.csv"
        if stream:
            argv = ["sweep", str(path), "--set", f"{bad}.k=0:1:2", "--record", f"{bad}.o"]
            assert cli.main([*argv, "--steps", "2", "-o", str(out), "-q"]) == 0
        else:
            from mdf_engine.sweep import save_dataset, sweep

            save_dataset(sweep(str(path), {f"{bad}.k": "0:1:2"}, record=[f"{bad}.o"]), out)
        header = next(csv.reader(out.open()))
        assert header == [f"'{bad}.k", f"'{bad}.o"], header


def _dotted() -> dict:
    """Node ``A.B`` and node ``A`` with a port ``B.o``: ``A.B.o`` names both."""
    m = _model()
    g = m["graphs"][0]
    g["nodes"][0]["output_ports"].append({"id": "B.o", "value": "p * 100"})
    g["nodes"][1]["id"] = g["edges"][0]["receiver"] = "A.B"
    return m


def test_ids_holding_dots_are_recorded_set_and_swept(tmp_path):
    dotted, plain = _model("l1.0.conv"), _model("L")
    sims = [mdf_engine.Simulation(m) for m in (dotted, plain)]
    sims[0].set({"l1.0.conv.k": 5.0})
    sims[1].set({"L.k": 5.0})
    runs = [s.run(steps=3, record=[f"{a}.o"]) for s, a in zip(sims, ("l1.0.conv", "L"))]
    np.testing.assert_array_equal(runs[0].trace("l1.0.conv", "o"), runs[1].trace("L", "o"))
    from mdf_engine.sweep import sweep

    swept = [
        sweep(m, {f"{a}.k": "0:1:3"}, steps=2, record=[f"{a}.o"])
        for m, a in ((dotted, "l1.0.conv"), (plain, "L"))
    ]
    np.testing.assert_array_equal(swept[0]["l1.0.conv.o"].values, swept[1]["L.o"].values)


def test_an_ambiguous_node_port_is_refused_not_guessed(tmp_path):
    sim = mdf_engine.Simulation(_dotted())
    with pytest.raises(MDFError, match="ambiguous, it names node 'A' 'B.o' and node 'A.B' 'o'"):
        sim.run(steps=2, record=["A.B.o"])
    res = sim.run(steps=2)
    for ext in ("npz", "csv"):  # one of the two outputs was silently lost
        with pytest.raises(MDFError, match="would both be named 'A.B.o'"):
            res.save(tmp_path / f"r.{ext}")
    res.save(tmp_path / "r.json")
    back = json.loads((tmp_path / "r.json").read_text())["outputs"]
    assert back["A"]["B.o"] == 200 and back["A.B"]["o"] == res.outputs["A.B"]["o"]


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    "port,match",
    [
        ({"shape": [1] * 40}, "shape: shape has 40 dimensions"),
        ({"default_value": [[1], [1, 2]]}, "default_value: expected a number or a rectangular"),
    ],
)
def test_bad_input_port_shapes_are_load_errors(port, match):
    m = _model()
    m["graphs"][0]["nodes"][1]["input_ports"][0].update(port)
    with pytest.raises(MDFError, match=f"input_ports.i.{match}"):
        mdf_engine.Simulation(copy.deepcopy(m))


def test_the_compiled_fallback_reason_is_clipped():
    reason = numba_failure(TypeError("first\n" + "p" * 20_000))
    assert len(reason) < 400 and reason.endswith("...)")


# ---------------------------------------------------------------- pow() is **


@pytest.mark.parametrize("a,b", [(10, 10**10), (3, 40), (-8, 0.5), (0, -1), (2, 3)])
def test_pow_is_the_power_operator(a, b):
    """``pow(a, b)`` took minutes and 4 GB for ``10, 10**10``, wrapped around 64 bits when
    compiled and was complex for ``-8, 0.5``: it is ``a ** b`` now (the oracle: the same
    model written with ``**``)."""
    got = {}
    for text in (f"pow({a}, {b})", f"({a}) ** ({b})"):
        m = _model()
        m["graphs"][0]["nodes"][0]["parameters"][1]["value"] = text
        got[text] = mdf_engine.Simulation(m).run(steps=2).outputs["A"]["o"]
    first, second = got.values()
    np.testing.assert_equal(np.asarray(first), np.asarray(second))


# ---------------------------------------------------------------- ONNX files


def test_a_complex_onnx_tensor_is_refused_by_name(tmp_path, capsys):
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.COMPLEX64, [1], [1 + 2j])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], [y], [w])
    path = tmp_path / "c.onnx"
    path.write_bytes(helper.make_model(g).SerializeToString())
    line = _one_line_error(["import", str(path), str(tmp_path / "c.json")], capsys)
    assert "complex64, which MDF cannot hold" in line and not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("scales", [[1e6, 1e6], [float("nan"), 1.0], [float("inf"), 1.0]])
def test_resize_checks_its_result_before_allocating(scales):
    from mdf_engine.onnx_ops.resize import resize_11

    with pytest.raises(MDFError, match="Resize"):
        resize_11(np.ones((3, 2), np.float32), None, np.array(scales, np.float32))


def test_importing_many_nodes_of_one_name_is_linear():
    from mdf_engine.onnx_io.names import NamePool

    pool = NamePool()
    names = [pool.fresh("Relu") for _ in range(20_000)]  # was 2 * 10**8 set lookups
    assert len(set(names)) == 20_000 and names[:3] == ["Relu", "Relu_1", "Relu_2"]
    pool.taken.add("x_1")
    assert [pool.fresh("x"), pool.fresh("x")] == ["x", "x_2"]
