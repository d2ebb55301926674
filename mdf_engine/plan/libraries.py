"""Which function libraries a graph needs, imported on demand so that the registry knows them,
and the registered functions that expressions may call by bare name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import Graph
from ..registry import REGISTRY, OpSchema

_LIBRARY_OF_PREFIX = {"onnx::": "onnx_ops", "onnx_mod::": "onnx_ops", "hexagon::": "hexagon"}


def load_function_libraries(names: Iterable[str] | None = None) -> None:
    """Import the function libraries that ``names`` need (all of them for None), so that the
    registry knows them. Standard and ACT-R functions are always loaded; ``onnx::`` and
    ``hexagon::`` libraries only when a name asks for them (they take a while to import)."""
    from .. import standard_functions  # noqa: F401

    wanted = {"actr"}
    if names is None:
        wanted |= set(_LIBRARY_OF_PREFIX.values())
    else:
        for n in names:
            for prefix, lib in _LIBRARY_OF_PREFIX.items():
                if n and n.startswith(prefix):
                    wanted.add(lib)
    for mod in sorted(wanted):
        # every library is part of the package: a failing import is a bug and must surface
        __import__(f"mdf_engine.{mod}")


def graph_function_names(graph: Graph) -> set[str]:
    """Every function name a graph's parameters and node functions call."""
    return {
        f.function
        for n in graph.nodes
        for f in list(n.parameters) + list(n.functions)
        if f.function
    }


def expression_functions() -> dict[str, Any]:
    """Registered functions callable by bare name inside expressions (``linear(x, 2, 1)``)."""
    load_function_libraries(())
    out = {}
    for name in REGISTRY.names():
        if "::" in name:
            continue
        sch = REGISTRY.lookup(name)
        out[name] = _positional_caller(sch)
    return out


def _positional_caller(sch: OpSchema):
    names = sch.argument_names

    def call(*args, **kwargs):
        bound = dict(zip(names, args))
        bound.update(kwargs)
        inputs, attrs = sch.bind(bound, sch.name)
        out = sch.call(inputs, attrs)
        return out[0] if len(out) == 1 else out

    call.__name__ = sch.op
    return call
