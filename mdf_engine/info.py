"""A readable summary of a model: graphs, nodes, ports, parameters, edges, conditions, the
function libraries it needs and which backends can run it."""

from __future__ import annotations

from typing import Any

from .loader import load
from .registry import REGISTRY


def describe(source: Any, full: bool = False) -> str:
    """The summary text; large arrays (weights, defaults) as shape, dtype and range unless
    ``full``."""
    from .plan import load_function_libraries
    from .summary import summarize

    def short(v: Any) -> str:
        return summarize(v, full)

    load_function_libraries()
    model = load(source)
    lines = [f"model {model.id} ({model.format or 'MDF'})"]
    for g in model.graphs:
        lines.append(f"  graph {g.id}: {len(g.nodes)} nodes, {len(g.edges)} edges")
        libraries: set[str] = set()
        for n in g.nodes:
            lines.append(f"    node {n.id}")
            for p in n.input_ports:
                extra = f" shape={list(p.shape)}" if p.shape else ""
                extra += f" default={short(p.default_value)}" if p.default_value is not None else ""
                extra += f" reduce={p.reduce}" if p.reduce != "overwrite" else ""
                lines.append(f"      in  {p.id}{extra}")
            for f in n.functions:
                lines.append(
                    f"      fn  {f.id} = {f.function or short(f.value)} {_args(f.args, short)}"
                )
                libraries |= _libraries(f.function)
            for p in n.parameters:
                if p.time_derivative is not None:
                    desc = f"d/dt = {p.time_derivative} (initial {p.default_initial_value})"
                elif p.function is not None:
                    desc = f"{p.function}({_args(p.args, short)})"
                    libraries |= _libraries(p.function)
                elif isinstance(p.value, str):
                    desc = repr(p.value)
                else:
                    desc = short(p.value)
                cond = f"  [{len(p.conditions)} condition(s)]" if p.conditions else ""
                state = " (stateful)" if p.is_stateful() else ""
                lines.append(f"      par {p.id} = {desc}{state}{cond}")
            for o in n.output_ports:
                lines.append(f"      out {o.id} = {o.value}")
        for e in g.edges:
            w = e.weight
            lines.append(
                f"    edge {e.id}: {e.sender}.{e.sender_port} -> "
                f"{e.receiver}.{e.receiver_port}"
                + (f" weight={short(w)}" if not _is_one(w) else "")
            )
        if g.conditions is not None:
            for nid, c in g.conditions.node_specific.items():
                lines.append(f"    condition {nid}: {c.type}({c.kwargs})")
            for scale, c in g.conditions.termination.items():
                lines.append(f"    termination {scale}: {c.type}({c.kwargs})")
        lines.append(f"    libraries: {', '.join(sorted(libraries)) or 'expressions only'}")
        backends = ["interpreted", "compiled"]
        if "actr" in libraries:
            backends = ["interpreted (ACT-R objects)"]
        lines.append(f"    backends: {', '.join(backends)}")
    return "\n".join(lines)


def _libraries(fname: str | None) -> set[str]:
    if not fname or fname not in REGISTRY:
        return {"unknown"} if fname else set()
    return {s.namespace for s in REGISTRY.versions(fname)}


def _args(args: dict[str, Any] | None, short: Any) -> str:
    return ", ".join(
        f"{k}={v if isinstance(v, str) else short(v)}" for k, v in (args or {}).items()
    )


def _is_one(w: Any) -> bool:
    return isinstance(w, (int, float)) and w == 1
