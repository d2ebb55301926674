"""The ``mdf`` command line: ``mdf run``, ``mdf info``, ``mdf validate``, and the commands that
plug-in modules add (each module in ``PLUGINS`` has ``add_parsers(sub)``, which registers its
subcommands with ``set_defaults(func=...)``).

Bad input (a malformed model, an unknown option value) exits with status 2 and one line on
stderr that names the file and field; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from typing import Any

from .cli_checks import OneLineParser, guarded
from .errors import MDFError, one_line

#: Modules adding subcommands: ONNX import/export, sweeps and drawings.
PLUGINS = ("mdf_engine.cli_onnx", "mdf_engine.cli_sweep", "mdf_engine.cli_draw")


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="mdf", description="Run and inspect ModECI MDF models.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a model and report or save its outputs")
    r.add_argument("model", help="MDF model file (.json, .yaml)")
    r.add_argument("--graph", default=None, help="graph id (default: the first graph)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--steps", type=int, default=None, help="number of evaluate() calls")
    g.add_argument("--duration", type=float, default=None,
                   help="run the reference loop t=0; while t<=T: ...; t+=dt")
    r.add_argument("--dt", type=float, default=None, help="time increment of steps 2..N")
    r.add_argument("--backend", default="auto",
                   choices=["auto", "interpreted", "compiled", "hexagon"],
                   help="auto (default): compiled for runs of 5000 steps or more, else "
                        "interpreted")
    r.add_argument("--record", nargs="*", default=[], metavar="NODE.PORT",
                   help="record these ports/parameters at every step")
    r.add_argument("-o", "--output", default=None, help="write results (.csv, .npz, .json)")
    r.add_argument("--plot", default=None, help="plot recorded traces to this image")
    r.add_argument("--json", action="store_true", help="print final outputs as JSON")
    r.add_argument("--progress", action="store_true",
                   help="show a progress bar (the default when stderr is a terminal)")
    r.add_argument("--quiet", action="store_true",
                   help="print nothing but errors (and no progress bar)")
    r.add_argument("--check-finite", action="store_true",
                   help="stop at the first NaN or inf and report where")
    r.add_argument("--max-cycles", type=int, default=1000,
                   help="ACT-R models: the most production cycles to run")

    i = sub.add_parser("info", help="print a model's graphs, nodes, edges and conditions")
    i.add_argument("model")

    v = sub.add_parser("validate", help="check a model file; exit 1 with the errors")
    v.add_argument("model")
    r.set_defaults(func=cmd_run)
    i.set_defaults(func=cmd_info)
    v.set_defaults(func=cmd_validate)
    for name in PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.add_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="mdf: %(message)s")
    return guarded(args.func, args)


def _uses_namespace(model: Any, namespace: str) -> bool:
    from .plan import load_function_libraries
    from .registry import REGISTRY

    calls = [p.function for g in model.graphs for n in g.nodes
             for p in list(n.parameters) + list(n.functions) if p.function]
    load_function_libraries(calls)  # only the libraries these names need
    return any(f in REGISTRY and any(s.namespace == namespace for s in REGISTRY.versions(f))
               for f in calls)


def cmd_run(args: argparse.Namespace) -> int:
    from .loader import load
    from .results import plain, summary
    from .simulation import Simulation

    model = load(args.model)
    if _uses_namespace(model, "actr"):
        return _run_actr(model, args)
    if args.backend == "hexagon":
        return _run_hexagon(model, args)
    sim = Simulation(model, graph=args.graph, backend=args.backend,
                     check_finite=args.check_finite)
    record = list(args.record)
    if args.plot and not record:
        record = [f"{n.id}.{o.id}" for n in sim.graph.nodes for o in n.output_ports]
    res = sim.run(steps=args.steps, dt=args.dt, duration=args.duration, record=record,
                  progress=not args.quiet)
    if args.output:
        res.save(args.output)
    if args.plot:
        from .plotting import plot_run

        plot_run(res, args.plot, model=model, title=f"{model.id} / {sim.graph.id}")
    if args.json:
        print(json.dumps({"graph": sim.graph.id, "steps": res.steps,
                          "outputs": plain(res.outputs)}))
    elif not args.quiet:
        print(one_line(f"{model.id} / {sim.graph.id}: {res.steps} steps"))
        for node, ports in res.outputs.items():
            for port, value in ports.items():
                print(one_line(f"  {node}.{port} = {summary(value)}"))
    if not res.completed:
        print(f"mdf: {res.note}", file=sys.stderr)
        return 130


def _run_actr(model: Any, args: argparse.Namespace) -> int:
    from .actr import run_model

    goals = run_model(model, max_cycles=args.max_cycles)
    final = goals[-1] if goals else {}
    if args.json:
        print(json.dumps({"cycles": len(goals), "goal": final}))
    elif not args.quiet:
        print(f"{model.id}: {len(goals)} cycles; final goal: {final}")
    return 0


def _run_hexagon(model: Any, args: argparse.Namespace) -> int:
    from .hexagon import run_quantized
    from .results import plain

    outputs = run_quantized(model, initializer=None)
    if args.json:
        print(json.dumps({"backend": "hexagon", "outputs": plain(outputs)}))
    elif not args.quiet:
        print(json.dumps(plain(outputs), indent=2))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .loader import load
    from .plan import plan_graph

    try:
        model = load(args.model)
        for g in model.graphs:
            plan_graph(model, g, args.model)
    except MDFError as e:
        print(f"mdf: invalid: {e}", file=sys.stderr)
        return 1
    print(f"{args.model}: valid ({len(model.graphs)} graph(s))")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from .info import describe

    print(describe(args.model))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
