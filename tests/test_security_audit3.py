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


# ---------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"repeat": 0}, "repeat"),
        ({"repeat": -1}, "repeat"),
        ({"repeat": "-2 ms"}, "repeat"),
        ({"repeat": 1e-12}, "repeat"),  # graph-scheduler rounds it to 0 ms, then divides by it
        ({"start": float("nan")}, "start"),
    ],
)
def test_a_time_interval_that_cannot_be_met_is_refused_when_read(kwargs, field):
    import graph_scheduler

    if "repeat" in kwargs:  # the oracle: graph-scheduler's own reading of the time
        assert graph_scheduler.TimeInterval(**kwargs).repeat.m <= 0
    m = _fed("A", "x")
    m["graphs"][0]["conditions"] = {"node_specific": {"A": {"type": "TimeInterval"} | {}}}
    m["graphs"][0]["conditions"]["node_specific"]["A"]["kwargs"] = kwargs
    with pytest.raises(MDFError, match=rf"node_specific\.A\.kwargs\.{field}: expected a"):
        mdf_engine.Simulation(m).run(steps=1, initializer={"x": 1.0})


# ---------------------------------------------------------------- the terminal


def test_a_closed_pipe_ends_the_command_quietly(tmp_path, monkeypatch, capsys):
    """``mdf info m.json | head -1``: the reader going away was reported as an error of the
    model file (``mdf: error: m.json: Broken pipe``)."""
    import io
    import json

    from mdf_engine import cli
    from mdf_engine.cli.checks import EXIT_BROKEN_PIPE

    class Closed(io.StringIO):
        def write(self, s: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    path = tmp_path / "m.json"
    path.write_text(json.dumps(_fed("A", "x")))
    monkeypatch.setattr("sys.stdout", Closed())
    assert cli.main(["info", str(path)]) == EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""


ESCAPES = ["\x1b[31mred\x1b[0m", "\x1b]8;;http://e\x07link\x1b]8;;\x07", "\x9b2J", "\r\x08\x07"]


@pytest.mark.parametrize("text", ESCAPES)
@pytest.mark.parametrize("command", ["info", "run", "error"])
def test_terminal_control_sequences_in_ids_are_printed_escaped(tmp_path, capsys, text, command):
    """Ids (node, port, graph) holding ESC/CSI/OSC sequences reach the terminal as escapes:
    no C0/C1 control character is printed (the oracle: ``unicodedata`` category Cc)."""
    import json
    import unicodedata

    from mdf_engine import cli

    m = _fed("A" + text, "x")
    m["graphs"][0]["id"] = "g" + text
    m["graphs"][0]["nodes"][0]["output_ports"][0]["id"] = "o" + text
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m))
    argv = {
        "info": ["info"],
        "run": ["run", "--steps", "1"],
        "error": ["run", "--steps", "1", "--record", f"A{text}.nope"],  # one line naming it
    }[command]
    rc = cli.main([argv[0], str(path), *argv[1:]])
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "\\x1b" in printed or "\\x9b" in printed or "\\r" in printed, printed
    raw = [c for c in printed if unicodedata.category(c) == "Cc" and c != "\n"]
    assert raw == [] and rc in (0, 2), (rc, printed)


# ---------------------------------------------------------------- YAML 1.1 numbers, null ids

_YAML = """id: m
graphs:
- id: g
  nodes:
  - id: {id}
    parameters:
    - {{id: k, value: {value}}}
    output_ports:
    - {{id: o, value: k}}
"""


@pytest.mark.parametrize("text", ["017", "-0_17", "12:30", "1:2.5"])
def test_a_yaml_number_that_yaml_1_1_reads_otherwise_is_refused(tmp_path, text):
    """PyYAML (YAML 1.1) read ``017`` as 15 and ``12:30`` as 750 (base 60) silently, in a
    value and in an id; YAML 1.2 reads 17 and a text. The oracle: PyYAML's own reading
    differs from the decimal one."""
    import yaml

    assert yaml.safe_load(f"v: {text}")["v"] != yaml.safe_load(f'v: "{text}"')["v"]
    for fields in ({"id": "A", "value": text}, {"id": text, "value": "1"}):
        path = tmp_path / "m.yaml"
        path.write_text(_YAML.format(**fields))
        with pytest.raises(MDFError, match=rf"m.yaml: the number '{text}' means .* \(line [57]\)"):
            mdf_engine.load(str(path))


@pytest.mark.parametrize("text,want", [("17", 17), ("07", 7), ("0x1F", 31), ("1_000", 1000)])
def test_yaml_numbers_both_versions_read_alike_are_taken(tmp_path, text, want):
    path = tmp_path / "m.yaml"
    path.write_text(_YAML.format(id="A", value=text))
    res = mdf_engine.Simulation(mdf_engine.load(str(path))).run(steps=1)
    assert res.outputs["A"]["o"] == want


@pytest.mark.parametrize("text", ["null", "~"])
def test_a_null_id_is_refused(tmp_path, text):
    """``id: null`` was the node ``'None'``."""
    path = tmp_path / "m.yaml"
    path.write_text(_YAML.format(id=text, value="1"))
    with pytest.raises(MDFError, match="m.yaml: graphs.g.nodes.None: an id must be a string"):
        mdf_engine.load(str(path))


# ---------------------------------------------------------------- NetCDF names


@pytest.mark.parametrize("text", ["\xe9\u2202\u6f22", "\xe9"])
def test_non_ascii_ids_survive_a_netcdf_sweep_file(tmp_path, text):
    """NetCDF names are UTF-8 (the NetCDF classic format spec). ``save_dataset`` failed with
    an internal UnicodeEncodeError on ``é∂漢`` (and wrote ``é`` in Latin-1); reading a sweep
    file back gave mojibake names (``Ã©.o``). Oracle: the UTF-8 bytes in the file, and the
    in-memory sweep's names and values."""
    from mdf_engine.sweep import open_dataset, save_dataset, sweep

    m = _fed(text, "x")
    args = ({f"{text}.k": "0:1:2"},)
    kw = {"steps": 2, "record": [f"{text}.o"]}
    ds = sweep(m, *args, **kw)
    save_dataset(ds, tmp_path / "a.nc")
    sweep(m, *args, **kw, output=str(tmp_path / "b.nc"))  # streamed, chunk by chunk
    for name in ("a.nc", "b.nc"):
        assert f"{text}.o".encode() in (tmp_path / name).read_bytes()
        back = open_dataset(tmp_path / name)
        assert list(back.data_vars) == [f"{text}.o"] and f"{text}.k" in back.coords
        np.testing.assert_array_equal(back[f"{text}.o"].values, ds[f"{text}.o"].values)
        assert back.attrs["swept"] == ds.attrs["swept"]


# ---------------------------------------------------------------- files a model names


@pytest.mark.parametrize("kind", ["fifo", "device link", "folder"])
def test_a_weights_file_that_is_no_regular_file_is_refused_without_opening_it(tmp_path, kind):
    """The sidecar a model names (``metadata.weights_file``) as a FIFO (opening it would
    block), a symlink to a device, or a folder: one MDFError naming the field."""
    import json
    import os

    target = tmp_path / "w.npz"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device link":
        os.symlink("/dev/zero", target)
    else:
        target.mkdir()
    body = {
        "metadata": {"weights_file": "w.npz"},
        "graphs": {"g": {"nodes": {"n": {"parameters": {"w": {"metadata": {"sidecar": {}}}}}}}},
    }
    body["graphs"]["g"]["nodes"]["n"]["parameters"]["w"]["metadata"]["sidecar"]["value"] = "a0"
    body["graphs"]["g"]["nodes"]["n"]["output_ports"] = {"o": {"value": "w"}}
    (tmp_path / "m.json").write_text(json.dumps({"m": body}))
    with pytest.raises(MDFError, match=r"m.json: metadata.weights_file: (no weights file|the)"):
        mdf_engine.load(str(tmp_path / "m.json"))


def test_an_output_path_that_is_a_symlink_is_replaced_and_its_target_kept(tmp_path):
    """``-o l.csv`` with ``l.csv -> keep.txt``: the link becomes the results file (an atomic
    rename onto it) and what the user saved in ``keep.txt`` stays (docs/security.md)."""
    import csv
    import json
    import os

    from mdf_engine import cli

    (tmp_path / "m.json").write_text(json.dumps(_fed("A", "x")))
    (tmp_path / "keep.txt").write_text("keep me")
    os.symlink("keep.txt", tmp_path / "l.csv")
    argv = ["run", str(tmp_path / "m.json"), "--steps", "1", "-q", "-o", str(tmp_path / "l.csv")]
    assert cli.main(argv) == 0
    assert (tmp_path / "keep.txt").read_text() == "keep me"
    assert not (tmp_path / "l.csv").is_symlink()
    rows = list(csv.reader((tmp_path / "l.csv").open()))
    assert len(rows) == 2 and len(rows[0]) == len(rows[1])
