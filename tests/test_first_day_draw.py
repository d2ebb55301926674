"""``mdf draw`` of networks with 100+ nodes (issue 24, item 8): layered top-down, repeated blocks
collapsed into one box, the image size capped."""

from __future__ import annotations

import json

import pytest

from mdf_engine import load
from mdf_engine.cli import main
from mdf_engine.viz.drawing_large import MAX_INCHES, units_of

pytest.importorskip("matplotlib")


def _net(blocks: int, branching: bool) -> dict:
    """A ResNet-like (or, with ``branching``, ShuffleNet-like: two branches joined by Concat)
    chain of ``blocks`` identical blocks after a stem."""
    nodes: dict = {
        "input": {
            "parameters": {"x": {"value": [1.0, -1.0]}},
            "output_ports": {"out": {"value": "x"}},
        }
    }
    edges: dict = {}

    def add(nid: str, op: str, srcs: list[str]) -> None:
        ins = [f"i{k}" for k in range(len(srcs))]
        args = {"X": ins[0]} if len(ins) == 1 else {"A": ins[0], "B": ins[1]}
        nodes[nid] = {
            "input_ports": {i: {} for i in ins},
            "parameters": {"y": {"function": f"onnx::{op}", "args": args}},
            "output_ports": {"out": {"value": "y"}},
        }
        for k, s in enumerate(srcs):
            edges[f"{s}__{nid}__{k}"] = {
                "sender": s,
                "sender_port": "out",
                "receiver": nid,
                "receiver_port": f"i{k}",
            }

    add("stem", "Relu", ["input"])
    prev = "stem"
    for b in range(blocks):
        add(f"b{b}_conv1", "Relu", [prev])
        add(f"b{b}_conv2", "Sigmoid", [f"b{b}_conv1"])
        if branching:
            add(f"b{b}_side", "Tanh", [prev])
            add(f"b{b}_join", "Add", [f"b{b}_conv2", f"b{b}_side"])
        else:
            add(f"b{b}_join", "Add", [f"b{b}_conv2", prev])
        add(f"b{b}_out", "Relu", [f"b{b}_join"])
        prev = f"b{b}_out"
    return {"net": {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": nodes, "edges": edges}}}}


@pytest.mark.parametrize("branching", [False, True])
def test_repeated_blocks_collapse_and_size_is_capped(branching, tmp_path, capsys):
    blocks = 40
    path = tmp_path / "net.json"
    path.write_text(json.dumps(_net(blocks, branching)))
    graph = load(str(path)).graphs[0]
    assert len(graph.nodes) > 100
    units = units_of(graph)
    repeated = [u for u in units if u.repeat > 1]
    assert len(repeated) == 1 and repeated[0].repeat * (len(repeated[0].nodes) // blocks) == len(
        repeated[0].nodes
    )
    assert sum(len(u.nodes) for u in units) == len(graph.nodes)  # every node is in one box
    assert len(units) <= 4
    out = tmp_path / "net.png"
    assert main(["draw", str(path), str(out)]) == 0
    w, h = (int(v) for v in capsys.readouterr().out.split()[1].split("x"))
    assert w <= MAX_INCHES * 100 and h <= MAX_INCHES * 100
    assert out.stat().st_size < 2_000_000


def test_long_network_without_repeats_is_capped(tmp_path, capsys):
    """150 different operators in a row: one box each, top-down, shrunk to the cap."""
    ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Sin", "Cos", "Softsign", "Softplus"]
    nodes = {"n0": {"parameters": {"x": {"value": 0.5}}, "output_ports": {"out": {"value": "x"}}}}
    edges = {}
    for k in range(1, 151):
        op = ops[(k * k + k // 7) % len(ops)] if k % 13 else ops[k % 3]
        nodes[f"n{k}"] = {
            "input_ports": {"i": {}},
            "parameters": {"y": {"function": f"onnx::{op}", "args": {"X": "i"}}},
            "output_ports": {"out": {"value": "y"}},
        }
        edges[f"e{k}"] = {
            "sender": f"n{k - 1}",
            "sender_port": "out",
            "receiver": f"n{k}",
            "receiver_port": "i",
        }
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"long": {"graphs": {"g": {"nodes": nodes, "edges": edges}}}}))
    out = tmp_path / "long.svg"
    assert main(["draw", str(path), str(out)]) == 0
    w, h = (float(v) for v in capsys.readouterr().out.split()[1].split("x"))
    assert max(w, h) <= MAX_INCHES * 72 + 1
