"""``mdf info`` and ``mdf validate``: a readable summary of a model (graphs, nodes, ports,
parameters, edges, conditions, the function libraries it needs and which backends can run it)
and a check that every graph of a file can be planned."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import MDFError, one_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``info`` and ``validate`` subcommands."""
    i = sub.add_parser("info", help="print a model's graphs, nodes, edges and conditions")
    i.add_argument("model", help="MDF model file (.json, .yaml)")
    i.add_argument(
        "--full",
        action="store_true",
        help="print whole arrays (default: shape, dtype and range of large ones)",
    )

    v = sub.add_parser(
        "validate",
        help="check a model file: exit 0 when valid, 1 with its errors (2: not readable)",
    )
    v.add_argument("model", help="MDF model file (.json, .yaml)")
    i.set_defaults(func=cmd_info)
    v.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    from ..loader import load
    from ..plan import plan_graph

    try:
        model = load(args.model)
        for g in model.graphs:
            plan_graph(model, g, args.model)
    except MDFError as e:
        print(f"mdf: invalid: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(one_line(f"{args.model}: valid ({len(model.graphs)} graph(s))"))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    print(describe(args.model, full=args.full))
    return 0


def describe(source: Any, full: bool = False) -> str:
    """The summary text; large arrays (weights, defaults) as shape, dtype and range unless
    ``full``."""
    from ..loader import load
    from ..plan import load_function_libraries
    from ..summary import summarize

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
    # model text (ids, expressions) may hold newlines or terminal escapes: one line each
    return "\n".join(one_line(line) for line in lines)


def _libraries(fname: str | None) -> set[str]:
    from ..registry import REGISTRY

    if not fname or fname not in REGISTRY:
        return {"unknown"} if fname else set()
    return {s.namespace for s in REGISTRY.versions(fname)}


def _args(args: dict[str, Any] | None, short: Any) -> str:
    return ", ".join(
        f"{k}={v if isinstance(v, str) else short(v)}" for k, v in (args or {}).items()
    )


def _is_one(w: Any) -> bool:
    return isinstance(w, (int, float)) and w == 1
