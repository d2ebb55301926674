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


def logistic_model(app: str, x: float, gain: float, bias: float, offset: float) -> dict:
    """A model written by ``app`` (its ``generating_application``) of one node ``n`` whose
    output ``o`` is ``logistic(x)`` with these arguments: which ``logistic`` that is (MDF's
    standard one or PsyNeuLink's) depends on ``app``."""
    args = {"variable0": x, "gain": gain, "bias": bias, "offset": offset}
    node = {"functions": {"f": {"function": "logistic", "args": args}}}
    model = graph_model({"n": {**node, "output_ports": {"o": {"value": "f"}}}})
    model["m"]["generating_application"] = app
    return model
