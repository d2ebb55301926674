"""Audit 6 (docs/security.md): the output side, the terminal, ONNX input bounds, sweeps and
numbers, attacked where audits 1-5 had not. One regression test per finding; each asserts
either one clean MDFError line or the literal text matplotlib itself wrote (SVG text stays
text: the oracle of what a reader sees)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mdf_engine import MDFError, Simulation, cli
from mdf_engine.viz.figures import new_figure

MATH = "r$x^{2}$"  # mathtext would draw x squared
BROKEN = "p$\\frac{$"  # mathtext would fail to parse


def _svg_texts(path) -> list[str]:
    """Every text matplotlib wrote into an SVG (``svg.fonttype: none``: text stays text)."""
    root = ET.parse(path).getroot()
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


# ---------------------------------------------------------------- pictures


@pytest.mark.parametrize(
    "size, dpi, expect",
    [
        ((4, 4), float("nan"), "finite and positive"),
        ((float("inf"), 3), 100, "finite and positive"),
        ((4, 4), 1e6, r"4e\+06 x 4e\+06 pixels"),  # was numpy's MemoryError
        ((1e5, 1e5), 100, "at most 32768 a side"),  # was matplotlib's ValueError
        ((300, 300), 100, r"3e\+04 x 3e\+04 pixels"),  # 30,000 a side, 9e8 in all
    ],
)
def test_a_figure_beyond_its_pixel_bound_is_one_clear_error(size, dpi, expect):
    with pytest.raises(MDFError, match=expect):
        new_figure(size, dpi)


def test_mdf_draw_with_a_huge_size_is_a_usage_error_not_an_internal_one(tmp_path, capsys):
    m = tmp_path / "m.json"
    m.write_text(json.dumps(_chain(2)))
    rc = cli.main(["draw", str(m), str(tmp_path / "d.png"), "--size", "1e5", "1e5"])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and "internal error" not in err[0]
    assert "--size or --dpi" in err[0] and not (tmp_path / "d.png").exists()


def _chain(n: int, hostile: dict[int, str] | None = None, model_id: str = "m") -> dict:
    ids = [(hostile or {}).get(i, f"n{i}") for i in range(n)]
    nodes = {
        nid: {"parameters": {"k": {"value": 1.0}}, "output_ports": {"o": {"value": "k"}}}
        for nid in ids
    }
    graph = {"nodes": nodes}
    return {model_id: {"format": "ModECI MDF v0.4", "graphs": {"g": graph}}}


def test_the_compact_drawing_of_a_large_graph_shows_ids_literally(tmp_path):
    # more than 40 nodes: viz.drawing_large drew ids and titles unescaped: a mathtext parse
    # error ('$\frac{$') was an internal error, '$x^{2}$' drew x squared, ESC a missing glyph
    from mdf_engine.viz.drawing import draw

    m = tmp_path / "big.json"
    m.write_text(json.dumps(_chain(45, {0: BROKEN, 44: MATH + "\x1b[31m"}, model_id=BROKEN)))
    draw(str(m), str(tmp_path / "d.svg"))
    texts = _svg_texts(tmp_path / "d.svg")
    assert any(t.startswith(f"{BROKEN} / g") for t in texts), texts
    assert any(BROKEN in t and r"r$x^{2}$\x1b[31" in t for t in texts), texts  # (clipped)


def test_sweep_facets_and_families_show_parameter_ids_literally(tmp_path):
    # three swept parameters: facets of heat maps, whose titles and heading were unescaped;
    # one line per value of a second parameter: its legend was unescaped
    from mdf_engine.viz.sweeps import plot_sweep

    coords = {f"N.{BROKEN}": [0.0, 1.0], "N.q$": [0.0, 1.0, 2.0], f"N.{MATH}": [3.0, 4.0]}
    data = {"N.o": np.arange(12.0).reshape(2, 3, 2)}
    plot_sweep(data, tmp_path / "f.svg", coords=coords, title="t$x$")
    texts = _svg_texts(tmp_path / "f.svg")
    assert f"N.{MATH} = 3" in texts and f"N.{MATH} = 4" in texts, texts
    assert "t$x$" in texts, texts
    two = {k: coords[k] for k in list(coords)[:2]}
    plot_sweep({"N.o": np.arange(6.0).reshape(2, 3)}, tmp_path / "l.svg", coords=two, x="N.q$")
    texts = _svg_texts(tmp_path / "l.svg")
    assert f"N.{BROKEN} = 0" in texts and f"N.{BROKEN} = 1" in texts, texts


# ---------------------------------------------------------------- recorded traces


def _growing() -> dict:
    node = {
        "parameters": {
            "n": {"default_initial_value": 1, "value": "n * 4"},
            "v": {"value": "np.ones(n)"},
        },
        "output_ports": {"o": {"value": "v"}, "s": {"value": "n"}},
    }
    return {"grow": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"A": node}}}}}


def test_a_recording_beyond_the_record_limit_is_refused_after_its_first_step(tmp_path, monkeypatch):
    # recorded traces grew without bound: `mdf run --plot` records every output port, so a
    # model's large value times many steps filled memory before any error
    m = tmp_path / "grow.json"
    m.write_text(json.dumps(_growing()))
    monkeypatch.setenv("MDF_ENGINE_MAX_RECORD_VALUES", "1000")
    sim = Simulation(str(m), backend="interpreted")
    # 4 numbers kept at the first step (time, n = 4, ones(4) ... ): 1000 steps would pass it
    with pytest.raises(MDFError, match=r"for 1000 steps; the limit is 1e\+03.*RECORD_VALUES"):
        sim.run(steps=1000, record=["A.o"])
    # a value that grows: the projection holds at first, the count stops it later
    sim = Simulation(str(m), backend="interpreted")
    with pytest.raises(MDFError, match=r"after 5 steps; the limit is 1e\+03"):
        sim.run(steps=8, record=["A.o", "A.s"])
    monkeypatch.setenv("MDF_ENGINE_MAX_RECORD_VALUES", "2000")
    res = Simulation(str(m), backend="interpreted").run(steps=5, record=["A.o", "A.s"])
    assert [len(v) for v in res.traces["A.o"]] == [4**k for k in range(1, 6)]
    assert res.recorded == 5 + sum(4**k for k in range(1, 6)) + 5


# ---------------------------------------------------------------- output files


def _matmul_onnx(path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path.write_bytes(m.SerializeToString())
    assert onnx.load(str(path)).graph.initializer[0].name == "w"


@pytest.mark.parametrize("which", ["onnx", "inputs"])
def test_mdf_import_never_writes_its_weights_file_over_a_file_it_reads(tmp_path, capsys, which):
    # `mdf import out.weights.npz out.json` (an ONNX file under that name), or `--inputs
    # out.weights.npz`: the sidecar of 4,096 weights replaced the input the user saved
    net, feeds = tmp_path / "net.onnx", tmp_path / "feeds.npz"
    _matmul_onnx(net)
    np.savez(feeds, x=np.ones((1, 64), np.float32))
    side = tmp_path / "out.weights.npz"
    (net if which == "onnx" else feeds).rename(side)
    before = side.read_bytes()
    args = [str(side if which == "onnx" else net), str(tmp_path / "out.json")]
    rc = cli.main(["import", *args] + (["--inputs", str(side)] if which == "inputs" else []))
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and "refusing to overwrite" in err[0], err
    assert side.read_bytes() == before and not (tmp_path / "out.json").exists()


# ---------------------------------------------------------------- sweeps


def _sweep_model(tmp_path, ports: int = 1):
    outs = {f"o{i}": {"value": "k"} for i in range(ports)}
    node = {"parameters": {"k": {"value": 1.0}}, "output_ports": outs}
    m = tmp_path / "sw.json"
    m.write_text(
        json.dumps({"sw": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"A": node}}}}})
    )
    return m


def test_a_local_cluster_of_absurdly_many_workers_is_refused_before_it_starts(tmp_path):
    # workers=100000 started worker processes until the machine stalled (a hang, then the
    # wall clock)
    pytest.importorskip("dask.distributed")
    from mdf_engine.limits import LOCAL_WORKERS_PER_CPU
    from mdf_engine.sweep import sweep

    m = _sweep_model(tmp_path)
    with pytest.raises(
        MDFError, match=f"at most .* worker processes \\({LOCAL_WORKERS_PER_CPU} per CPU"
    ):
        sweep(str(m), {"A.k": [0.0, 1.0]}, record=["A.o0"], cluster="local", workers=10**5)


@pytest.mark.parametrize("chunk", ["0", "-3"])
def test_mdf_sweep_chunk_zero_or_negative_is_refused_not_read_as_the_default(
    tmp_path, capsys, chunk
):
    m = _sweep_model(tmp_path)
    rc = cli.main(["sweep", str(m), "--set", "A.k=0:1:2", "--record", "A.o0", "--chunk", chunk])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and "chunk must be a whole number >= 1" in err[0], err


def test_a_streamed_npz_that_cannot_open_its_part_files_is_one_clean_error(tmp_path, monkeypatch):
    # one temporary file per recorded variable: past the process's open-file limit (EMFILE)
    # that was an internal OSError, and the part files made so far stayed behind
    import errno

    from mdf_engine import sweep_files
    from mdf_engine.sweep import sweep

    real, calls = sweep_files.tempfile.mkstemp, []

    def mkstemp(*a, **k):  # the file, two parts, then the limit
        calls.append(k)
        if len(calls) > 3:
            raise OSError(errno.EMFILE, "Too many open files")
        return real(*a, **k)

    monkeypatch.setattr(sweep_files.tempfile, "mkstemp", mkstemp)
    m = _sweep_model(tmp_path, ports=5)
    out = tmp_path / "s.npz"
    record = [f"A.o{i}" for i in range(5)]
    with pytest.raises(MDFError, match="s.npz': cannot write the file \\(Too many open files\\)"):
        sweep(str(m), {"A.k": [0.0, 1.0]}, record=record, output=str(out), backend="interpreted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sw.json"]


# ---------------------------------------------------------------- ONNX operators' memory


@pytest.mark.parametrize(
    "op, inputs, attrs, expect",
    [
        # was numpy's MemoryError (or 7.5 GB really allocated) for a 2-element input
        ("Pad", [np.ones(2), np.array([0, 10**9])], {}, "Pad's result would have 1e\\+09"),
        ("OneHot", [np.array([0]), np.array(10**9), np.array([0.0, 1.0])], {}, "OneHot's result"),
        # 2 x 10^6 cells along one axis: 26 s of Python and gigabytes of lists before
        (
            "Resize",
            [np.ones((1, 1, 1, 2)), np.array([]), np.array([1.0, 1.0, 1.0, 1e6])],
            {},
            "an axis of 2000000 cells; the limit is 1048576",
        ),
    ],
)
def test_onnx_operators_check_their_result_size_before_allocating(op, inputs, attrs, expect):
    from mdf_engine import onnx_ops

    with pytest.raises(MDFError, match=expect):
        onnx_ops.run(op, inputs, attrs)


def test_mdf_import_never_writes_its_weights_file_over_the_models_external_data(tmp_path, capsys):
    # the ONNX file keeps its weights in `out.weights.npz` (external_data): the import read
    # them, then replaced that file with its own sidecar
    onnx = pytest.importorskip("onnx")
    net = tmp_path / "net.onnx"
    _matmul_onnx(net)
    mp = onnx.load(str(net))
    onnx.save_model(
        mp, str(net), save_as_external_data=True, location="out.weights.npz", size_threshold=0
    )
    side = tmp_path / "out.weights.npz"
    before = side.read_bytes()
    rc = cli.main(["import", str(net), str(tmp_path / "out.json")])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and "keeps tensor 'w' in" in err[0], err
    assert side.read_bytes() == before and not (tmp_path / "out.json").exists()
    # named otherwise, the same file imports (the weights read from the external data)
    assert cli.main(["import", str(net), str(tmp_path / "other.json")]) == 0
    saved = np.load(tmp_path / "other.weights.npz")
    assert np.array_equal(
        next(iter(saved.values())),
        onnx.numpy_helper.to_array(onnx.load(str(net)).graph.initializer[0])
        .astype(np.float32)
        .reshape(64, 64),
    )


# ---------------------------------------------------------------- terminals

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("command", ["validate", "draw", "import", "sweep"])
def test_file_names_echoed_on_stdout_are_escaped(tmp_path, capsys, command):
    # model and output file names (from a script over a hostile archive's names, say) were
    # printed raw by `validate`, `draw`, `import` and `sweep -o`: ESC sequences reached the
    # terminal
    evil = "e\x1b[2J\r\u202e"
    m = tmp_path / f"{evil}.json"
    m.write_text(_sweep_model(tmp_path).read_text())
    args = {
        "validate": ["validate", str(m)],
        "draw": ["draw", str(m), str(tmp_path / f"{evil}.svg")],
        "import": ["import", str(tmp_path / "net.onnx"), str(tmp_path / f"{evil}.json")],
        "sweep": ["sweep", str(m), "--set", "A.k=0:1:2", "--record", "A.o0", "--backend",
                  "interpreted", "-o", str(tmp_path / f"{evil}.nc")],
    }[command]  # fmt: skip
    if command == "import":
        _matmul_onnx(tmp_path / "net.onnx")
        m.unlink()
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "e\\x1b[2J\\r\\u202e" in out and not RAW.search(out), repr(out)


@pytest.mark.parametrize(
    "dims, expect",
    [([2**40, 2**40], "declares the shape"), ([100000, 100000], "would have 1e\\+10 elements")],
)
def test_mdf_import_refuses_declared_input_shapes_the_loader_would_refuse(
    tmp_path, capsys, dims, expect
):
    # the import wrote a file whose input port shape `mdf run` and `mdf info` then refused
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    net = tmp_path / "net.onnx"
    net.write_bytes(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    )
    rc = cli.main(["import", str(net), str(tmp_path / "out.json")])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and "net.onnx: ONNX value 'x'" in err[0], err
    assert re.search(expect, err[0]) and not (tmp_path / "out.json").exists()


def test_the_fired_panel_shows_node_ids_literally(tmp_path):
    # `mdf run --plot --fired`: the panel of nodes that ran had the node ids as raw tick
    # labels: '$\frac{$' was an internal error (a mathtext parse error)
    m = tmp_path / "m.json"
    m.write_text(json.dumps(_chain(2, {0: BROKEN, 1: MATH})))
    assert (
        cli.main(["run", str(m), "--steps", "2", "--plot", str(tmp_path / "p.svg"), "--fired"]) == 0
    )
    texts = _svg_texts(tmp_path / "p.svg")
    assert BROKEN in texts and MATH in texts, texts


@pytest.mark.parametrize("values", [["$\\frac{$", "b"], [{"a": 1}], [1, "x"], [[1, 2], [3]]])
def test_sweep_values_that_are_not_numbers_are_one_clean_error(tmp_path, values):
    # a list of texts (or of dicts, or ragged) was numpy's ValueError/TypeError out of sweep()
    from mdf_engine.sweep import sweep

    m = _sweep_model(tmp_path)
    with pytest.raises(MDFError, match="sweep 'A.k': expected a non-empty list of numbers"):
        sweep(str(m), {"A.k": values}, record=["A.o0"], backend="interpreted")


# ------------------------------------- compiled array constructors held to the size bound


def _jump(expr: str) -> dict:
    """A node whose array constructor asks for 3 elements for 50 steps, then a huge size."""
    node = {
        "parameters": {
            "c": {"default_initial_value": 0, "value": "c + 1"},
            "v": {"value": expr},
        },
        "output_ports": {"o": {"value": "v"}},
    }
    return {"jump": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"A": node}}}}}


@pytest.mark.parametrize(
    "expr",
    [
        "np.ones(3 if c < 50 else 1000000000000)",
        "np.zeros((3, 3 if c < 50 else 1000000000000))",
        "np.eye(3 if c < 50 else 10000000)",
        "np.linspace(0.0, 1.0, 3 if c < 50 else 1000000000000)",
    ],
)
def test_a_compiled_constructor_beyond_the_bound_is_refused_before_it_allocates(tmp_path, expr):
    # the compiled loop allocated what a later step asked for (np.ones of 10**12 float64s is
    # 8 TB) before the slot's shape check; it now refuses the size first and the interpreter
    # reports it, naming the node, as a first run does (the interpreter is the oracle)
    m = tmp_path / "jump.json"
    m.write_text(json.dumps(_jump(expr)))
    messages = []
    for backend in ("interpreted", "compiled"):
        with pytest.raises(MDFError) as err:
            Simulation(str(m), backend=backend).run(steps=60)
        messages.append(str(err.value))
    assert messages[0] == messages[1], messages
    assert "parameters.v.value: np." in messages[0] and "the limit is" in messages[0]


def test_the_size_checks_return_their_argument_and_refuse_beyond_the_bound():
    numba = pytest.importorskip("numba")
    from mdf_engine.backends.compiled.sizes import HELPERS

    _csize, _csize2, _crange, _ctile = (
        HELPERS[k] for k in ("_csize", "_csize2", "_crange", "_ctile")
    )

    @numba.njit
    def sizes(n, m, a):
        return (
            np.ones(_csize(n)).size,
            np.zeros(_csize((n, m))).size,
            np.eye(_csize2(n, m), m).size,
            np.arange(0, _crange(0, n, 2), 2).size,
            _ctile(a, n) * a.size,  # (Numba has no np.tile: the check alone)
        )

    a = np.ones(3)
    assert sizes(4, 5, a) == (4, 20, 20, 2, 12)  # numpy's own sizes of the same calls
    assert sizes(4, 5, a) == (
        np.ones(4).size,
        np.zeros((4, 5)).size,
        np.eye(4, 5).size,
        np.arange(0, 4, 2).size,
        np.tile(a, 4).size,
    )
    for n, m in ((10**9, 1), (10**5, 10**4), (4, 10**9)):
        with pytest.raises(ValueError, match="more than 100000000 elements"):
            sizes(n, m, a)


def test_the_compiled_refusal_comes_before_the_allocation(tmp_path):
    # 1.5e8 float64s (1.2 GB) were allocated by the compiled loop before the interpreter
    # refused them; the peak memory (VmHWM: this process's own, where ru_maxrss keeps a large
    # forking parent's across exec) of a fresh process shows they no longer are
    m = tmp_path / "jump.json"
    m.write_text(json.dumps(_jump("np.ones(3 if c < 50 else 150000000)")))
    script = (
        "import sys\n"
        "from mdf_engine import Simulation\n"
        "from mdf_engine.errors import MDFError\n"
        "try:\n"
        "    Simulation(sys.argv[1], backend='compiled').run(steps=60)\n"
        "except MDFError as e:\n"
        "    print(e)\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
        "print(status.split()[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(m)], capture_output=True, text=True, timeout=600
    )
    lines = out.stdout.strip().splitlines()
    assert "np.ones(...) would have 1.5e+08 elements" in lines[0], out.stdout + out.stderr
    assert int(lines[-1]) < 800_000, f"peak {int(lines[-1]) // 1024} MB"  # (kB; 1.2 GB before)
