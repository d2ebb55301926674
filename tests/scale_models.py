"""Generated MDF models of a chosen number of nodes, for the scaling benchmark
(``benchmarks/scale_speed.py``) and the scaling tests (``tests/test_scale*.py``).

Each family stands for a kind of large model researchers export:

* ``chain``: a chain of nodes, each reading its sender (a deep pipeline: graph-scheduler's
  consideration queue has one set per node);
* ``fan``: one source feeding ``n - 2`` middle nodes, all summed into one sink by an input
  port with ``reduce: add`` (wide fan-out and fan-in: one consideration set of ``n - 2``);
* ``cells``: many small independent cells of two nodes (a stimulus and a leaky integrator with
  parameter conditions), every integrator scheduled by ``EveryNCalls(its stimulus, 2)``, as
  NeuroML/PyNN networks exported cell by cell and PsyNeuLink compositions of many mechanisms;
* ``dag``: an ONNX-like layered DAG of ``onnx::`` operators (Add, Sub, Relu, Tanh, Sigmoid) on
  small vectors, each node reading two nodes of earlier layers.

All are plain MDF v0.4 dicts that modeci-mdf's reference engine can run too.
"""

from __future__ import annotations

import random

from mdf_dicts import graph_model


def _counter() -> dict:
    """A source node counting up from 0: its output ``out`` is 1, 2, 3, ... at its runs."""
    return {
        "parameters": {"x": {"default_initial_value": 0.0, "value": "x + 1"}},
        "output_ports": {"out": {"value": "x"}},
    }


def _edge(sender: str, receiver: str, port: str = "i", sender_port: str = "out") -> dict:
    return {
        "sender": sender,
        "sender_port": sender_port,
        "receiver": receiver,
        "receiver_port": port,
    }


def chain(n: int) -> dict:
    """``n`` nodes ``c0 -> c1 -> ...``: ``c0`` counts up, each other node is ``0.5 * i + k``."""
    nodes: dict = {"c0": _counter()}
    edges: dict = {}
    for k in range(1, n):
        nodes[f"c{k}"] = {
            "input_ports": {"i": {}},
            "parameters": {"y": {"value": f"0.5 * i + {k % 7}"}},
            "output_ports": {"out": {"value": "y"}},
        }
        edges[f"e{k}"] = _edge(f"c{k - 1}", f"c{k}")
    return graph_model(nodes, f"chain{n}", edges=edges)


def fan(n: int) -> dict:
    """A source, ``n - 2`` middle nodes reading it, and a sink adding them all up."""
    nodes: dict = {"src": _counter()}
    edges: dict = {}
    for k in range(n - 2):
        nodes[f"m{k}"] = {
            "input_ports": {"i": {}},
            "parameters": {"y": {"value": f"i * {1 + k % 5} - {k % 3}"}},
            "output_ports": {"out": {"value": "y"}},
        }
        edges[f"a{k}"] = _edge("src", f"m{k}")
        edges[f"b{k}"] = _edge(f"m{k}", "sink")
    nodes["sink"] = {
        "input_ports": {"i": {"reduce": "add"}},
        "parameters": {"s": {"value": "i"}},
        "output_ports": {"out": {"value": "s"}},
    }
    return graph_model(nodes, f"fan{n}", edges=edges)


def cells(n: int) -> dict:
    """``n // 2`` cells: a stimulus ``sK`` (a counter) and a leaky integrator ``vK`` that
    resets when it crosses a threshold (parameter conditions), run every second stimulus
    call."""
    nodes: dict = {}
    edges: dict = {}
    conditions: dict = {}
    for k in range(n // 2):
        s, v = f"s{k}", f"v{k}"
        nodes[s] = {
            "parameters": {
                "t": {"default_initial_value": 0.0, "value": "t + 1"},
                "amp": {"value": 0.5 + (k % 10) / 10},
            },
            "output_ports": {"out": {"value": "amp * t"}},
        }
        nodes[v] = {
            "input_ports": {"i": {}},
            "parameters": {
                "thr": {"value": 3.0 + k % 4},
                "v": {
                    "default_initial_value": 0.0,
                    "value": "0.9 * v + i",
                    "conditions": [{"id": "reset", "test": "v > thr", "value": "0"}],
                },
            },
            "output_ports": {"out": {"value": "v"}},
        }
        edges[f"e{k}"] = _edge(s, v)
        conditions[v] = {"type": "EveryNCalls", "kwargs": {"dependency": s, "n": 2}}
    return graph_model(nodes, f"cells{n}", edges=edges, conditions={"node_specific": conditions})


OPS = ("onnx::Add", "onnx::Sub", "onnx::Relu", "onnx::Tanh", "onnx::Sigmoid")


def dag(n: int, seed: int = 1) -> dict:
    """An ONNX-like layered DAG: ``width`` inputs, then layers of ``width`` nodes, each an
    ``onnx::`` operator of one or two nodes of the layers before it (reproducible from
    ``seed``)."""
    rng = random.Random(seed)
    width = max(2, int(round(n**0.5)))
    nodes: dict = {}
    edges: dict = {}
    made: list[str] = []
    for k in range(min(width, n)):
        nid = f"x{k}"
        nodes[nid] = {
            "parameters": {"v": {"value": [0.1 * (k % 5) - 0.2, 0.3, -0.05 * (k % 3)]}},
            "output_ports": {"out": {"value": "v"}},
        }
        made.append(nid)
    k = 0
    while len(nodes) < n:
        nid = f"n{k}"
        op = OPS[k % len(OPS)]
        # read from the last two layers mostly, sometimes from far back (a skip connection)
        lo = max(0, len(made) - 2 * width)
        a = made[rng.randrange(lo, len(made))]
        if op in ("onnx::Add", "onnx::Sub"):
            b = made[rng.randrange(0 if rng.random() < 0.1 else lo, len(made))]
            ports = {"A": {}, "B": {}}
            args = {"A": "A", "B": "B"}
            edges[f"{nid}_a"] = _edge(a, nid, "A")
            edges[f"{nid}_b"] = _edge(b, nid, "B")
        else:
            ports = {"X": {}}
            args = {"input" if op == "onnx::Tanh" else "X": "X"}  # (ONNX's input names)
            edges[f"{nid}_x"] = _edge(a, nid, "X")
        nodes[nid] = {
            "input_ports": ports,
            "parameters": {"y": {"function": op, "args": args}},
            "output_ports": {"out": {"value": "y"}},
        }
        k += 1
        if k % width == 0:
            made.extend(f"n{j}" for j in range(k - width, k))
    return graph_model(nodes, f"dag{n}", edges=edges)


FAMILIES = {"chain": chain, "fan": fan, "cells": cells, "dag": dag}
