"""Graph pictures (mdf_engine.viz.drawing) and ``mdf draw`` (mdf_engine.cli.draw): PNG and SVG files
of the expected size, the text of nodes, ports, conditions, weights and termination read back
from the SVG, and the layered layout."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mdf_engine.errors import MDFError
from mdf_engine.model import (
    Condition,
    ConditionSet,
    Edge,
    Graph,
    InputPort,
    Model,
    Node,
    OutputPort,
)

pytest.importorskip("matplotlib")

from matplotlib.image import imread  # noqa: E402

from mdf_engine.cli import draw as cli_draw  # noqa: E402
from mdf_engine.viz.drawing import draw, graph_layers  # noqa: E402
from mdf_engine.viz.labels import condition_text  # noqa: E402


def _node(i: str, ins: list[str], outs: list[str]) -> Node:
    return Node(
        id=i,
        input_ports=[InputPort(id=p) for p in ins],
        output_ports=[OutputPort(id=o, value="1") for o in outs],
    )


def _abc() -> Model:
    """A feeds B and C, which run every 2nd and 3rd call of A; a nested termination."""
    nodes = [
        _node("A", ["in_a"], ["out_a"]),
        _node("B", ["in_b"], ["out_b"]),
        _node("C", ["in_c"], ["out_c"]),
    ]
    edges = [
        Edge(
            id="ab",
            sender="A",
            receiver="B",
            sender_port="out_a",
            receiver_port="in_b",
            parameters={"weight": 0.25},
        ),
        Edge(id="ac", sender="A", receiver="C", sender_port="out_a", receiver_port="in_c"),
    ]
    conds = ConditionSet(
        node_specific={
            "B": Condition("EveryNCalls", {"dependencies": "A", "n": 2}),
            "C": Condition("EveryNCalls", {"dependencies": "A", "n": 3}),
        },
        termination={
            "environment_state_update": Condition(
                "And",
                {
                    "dependencies": [
                        Condition("AfterNCalls", {"dependencies": "C", "n": 2}),
                        Condition("JustRan", {"dependencies": "A"}),
                    ]
                },
            )
        },
    )
    return Model(
        id="abc", graphs=[Graph(id="abc_graph", nodes=nodes, edges=edges, conditions=conds)]
    )


def _cyclic() -> Model:
    """A -> B -> C -> A, C -> C, A -> D, A -> C (a skip), two edges A -> B."""
    nodes = [
        _node("A", ["x", "fb"], ["y"]),
        _node("B", ["u", "u2"], ["v"]),
        _node("C", ["s", "me"], ["t"]),
        _node("D", ["d"], ["o"]),
    ]

    def e(i, s, r, sp, rp, w=None):
        return Edge(
            id=i,
            sender=s,
            receiver=r,
            sender_port=sp,
            receiver_port=rp,
            parameters=None if w is None else {"weight": w},
        )

    edges = [
        e("e1", "A", "B", "y", "u", 0.5),
        e("e2", "B", "C", "v", "s"),
        e("e3", "C", "A", "t", "fb", -1.5),
        e("e4", "C", "C", "t", "me", 2),
        e("e5", "A", "D", "y", "d"),
        e("e6", "A", "C", "y", "s"),
        e("e7", "A", "B", "y", "u2", [[1, 2], [3, 4]]),
    ]
    return Model(id="cyc", graphs=[Graph(id="loopy", nodes=nodes, edges=edges)])


def _png_shape(path) -> tuple[int, int]:
    img = imread(str(path))
    assert np.ptp(img[..., :3]) > 0, "the image is blank"
    return img.shape[0], img.shape[1]


def _svg(path) -> tuple[str, str, list[str]]:
    root = ET.parse(str(path)).getroot()
    texts = ["".join(el.itertext()) for el in root.iter() if el.tag.endswith("}text")]
    return root.attrib["width"], root.attrib["height"], texts


def test_condition_text():
    c = _abc().graphs[0].conditions
    assert condition_text(c.node_specific["B"]) == "EveryNCalls(A, n=2)"
    assert (
        condition_text(c.termination["environment_state_update"])
        == "And(AfterNCalls(C, n=2), JustRan(A))"
    )
    as_dict = {
        "type": "Any",
        "kwargs": {
            "dependencies": [
                {"type": "AtPass", "kwargs": {"n": 3}},
                {"type": "Never", "kwargs": {}},
            ]
        },
    }
    assert condition_text(as_dict) == "Any(AtPass(n=3), Never())"


def test_graph_layers_sets_back_edges_aside():
    g = _cyclic().graphs[0]
    layer, back = graph_layers(g)
    assert back == {2, 3}  # C -> A closes the cycle A -> B -> C; C -> C is a loop
    for k, e in enumerate(g.edges):
        if k not in back and e.sender != e.receiver:
            assert layer[e.sender] < layer[e.receiver], e.id
    assert layer == {"A": 0, "B": 1, "D": 1, "C": 2}


def test_draw_png_natural_and_fixed_size(tmp_path):
    out = tmp_path / "abc.png"
    w, h = draw(_abc(), out, dpi=80)
    assert _png_shape(out) == (h, w)
    assert 200 < w < 2000 and 150 < h < 2000
    fixed = tmp_path / "fixed.png"
    assert draw(_abc(), fixed, size=(5, 4), dpi=60) == (300, 240)
    assert _png_shape(fixed) == (240, 300)


def test_draw_svg_shows_ports_conditions_weights_and_termination(tmp_path):
    out = tmp_path / "abc.svg"
    w, h = draw(_abc(), out)
    width, height, texts = _svg(out)
    assert (width, height) == (f"{w}pt", f"{h}pt")
    joined = "\n".join(texts)
    for expected in (
        "abc / abc_graph",
        "A",
        "B",
        "C",
        "in: in_b",
        "out: out_a",
        "when: EveryNCalls(A, n=2)",
        "when: EveryNCalls(A, n=3)",
        "when: Always (default)",
        "out_a → in_b",
        "weight = 0.25",
        "environment_state_update: And(AfterNCalls(C, n=2), JustRan(A))",
        "environment_sequence: Never() (default)",
    ):
        assert expected in joined, expected
    # the edge without a weight has no weight line
    assert sum("weight" in t for t in texts) == 1


def test_draw_cycles_self_loops_and_parallel_edges(tmp_path):
    out = tmp_path / "cyc.svg"
    draw(_cyclic(), out, title="loops")
    _, _, texts = _svg(out)
    joined = "\n".join(texts)
    for expected in (
        "loops",
        "t → fb",
        "weight = -1.5",
        "t → me",
        "weight = 2",
        "y → s",
        "y → u2",
        "weight = [[1, 2], [3, 4]]",
        "environment_state_update: AllHaveRun() (default)",
    ):
        assert expected in joined, expected
    png = tmp_path / "cyc.png"
    w, h = draw(_cyclic(), png, dpi=50)
    assert _png_shape(png) == (h, w)


def test_draw_from_a_file_and_graph_choice(tmp_path):
    m = _abc()
    second = Graph(id="other", nodes=[_node("solo", [], ["o"])])
    m.graphs.append(second)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(m.to_dict()))
    out = tmp_path / "other.svg"
    draw(str(path), out, graph="other")
    _, _, texts = _svg(out)
    assert "abc / other" in texts and "solo" in texts and "A" not in texts
    with pytest.raises(MDFError, match="no graph 'nope'"):
        draw(str(path), tmp_path / "x.svg", graph="nope")
    with pytest.raises(MDFError, match=r"\.png, \.svg, \.pdf"):
        draw(str(path), tmp_path / "x.jpeg")


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="mdf")
    cli_draw.add_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_mdf_draw_command(tmp_path, capsys):
    path = tmp_path / "abc.json"
    path.write_text(json.dumps(_abc().to_dict()))
    out = tmp_path / "pic.png"
    assert _cli(["draw", str(path), str(out), "--size", "6", "3", "--dpi", "50"]) == 0
    assert _png_shape(out) == (150, 300)
    assert "300x150 px" in capsys.readouterr().out
    with pytest.raises(MDFError, match="expected a file ending in"):
        _cli(["draw", str(path), str(tmp_path / "pic.bmp")])


def test_mdf_draw_through_the_cli(tmp_path, capsys):
    from mdf_engine.cli import main

    path = tmp_path / "abc.json"
    path.write_text(json.dumps(_abc().to_dict()))
    out = tmp_path / "pic.svg"
    assert main(["draw", str(path), str(out), "--quiet"]) == 0
    width, _, texts = _svg(out)
    assert width.endswith("pt") and "when: EveryNCalls(A, n=3)" in texts
    assert main(["draw", str(path), str(tmp_path / "pic.tiff")]) == 2
    assert "expected a file ending in .png, .svg, .pdf" in capsys.readouterr().err


def test_drawings_are_reproducible(tmp_path):
    first, second = tmp_path / "one.svg", tmp_path / "two.svg"
    draw(_cyclic(), first)
    draw(_cyclic(), second)
    assert first.read_bytes() == second.read_bytes()
    assert b"dc:date" not in first.read_bytes()
    pdf = tmp_path / "one.pdf"
    draw(_abc(), pdf, size=(4, 3))
    assert pdf.read_bytes().startswith(b"%PDF") and b"CreationDate" not in pdf.read_bytes()
