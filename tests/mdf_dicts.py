"""MDF models the tests write as dicts: the envelope of a model of one graph, so that a test
spells only what it is about (its nodes, and the graph's edges or conditions)."""

from __future__ import annotations

from typing import Any


def graph_model(nodes: dict, model: str = "m", graph: str = "g", **fields: Any) -> dict:
    """A ModECI MDF v0.4 model ``model`` of one graph ``graph``: its ``nodes`` and ``fields``
    (``edges``, ``conditions``, ...)."""
    return {model: {"format": "ModECI MDF v0.4", "graphs": {graph: {"nodes": nodes, **fields}}}}


def one_node(parameters: dict, output: str = "o") -> dict:
    """A model of one node ``n`` with ``parameters`` and one output port ``out``, the value of
    ``output``."""
    node = {"parameters": parameters, "output_ports": {"out": {"value": output}}}
    return graph_model({"n": node})
