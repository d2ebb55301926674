"""``mdf run MODEL``: run a model through :class:`~mdf_engine.simulation.Simulation` on any
backend, then print, save (``-o``) or plot (``--plot``) its outputs and recorded traces."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import MDFError, one_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand."""
    r = sub.add_parser("run", help="run a model and report or save its outputs")
    r.add_argument("model", help="MDF model file (.json, .yaml)")
    r.add_argument("--graph", default=None, help="graph id (default: the first graph)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--steps", type=int, default=None, help="number of evaluate() calls")
    g.add_argument(
        "--duration",
        type=float,
        default=None,
        help="run the reference loop t=0; while t<=T: ...; t+=dt",
    )
    r.add_argument("--dt", type=float, default=None, help="time increment of steps 2..N")
    r.add_argument(
        "--initializer",
        default=None,
        metavar="FILE.json",
        help="input port values given at every step: a JSON mapping of port id "
        "(or NODE.PORT) to a value",
    )
    r.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "interpreted", "compiled", "hexagon", "actr"],
        help="auto (default): actr for models calling ACT-R functions, else "
        "compiled for runs of 5000 steps or more, else interpreted",
    )
    r.add_argument(
        "--scheduling-mode",
        default="standard",
        choices=["standard", "exact_time"],
        help="graph-scheduler's mode: exact_time is PsyNeuLink's "
        "SchedulingMode.EXACT_TIME (an MDF file does not record it)",
    )
    r.add_argument(
        "--record",
        nargs="*",
        default=[],
        metavar="NODE.PORT",
        help="record these ports/parameters at every step (written by -o, drawn by --plot)",
    )
    r.add_argument("-o", "--output", default=None, help="write results (.csv, .npz, .json)")
    r.add_argument(
        "--plot",
        default=None,
        help="plot recorded traces to this image (without --record: every numeric output port)",
    )
    r.add_argument(
        "--json",
        action="store_true",
        help="print the graph, the steps and the final outputs as one line of strict JSON "
        '(NaN/inf as "NaN"/"Infinity"; a one-step run adds its time steps)',
    )
    r.add_argument(
        "--progress",
        action="store_true",
        help="a progress bar on long runs when stderr is a terminal (the default: the flag "
        "changes nothing; --quiet turns it off)",
    )
    r.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing but errors (and no progress bar)"
    )
    r.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="NODE.PARAM=VALUE",
        help="set a parameter (a number or a JSON list); repeatable",
    )
    r.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed the draws of random operators that have no seed of their own "
        "(reproducible runs, fresh draws each step)",
    )
    r.add_argument(
        "--full",
        action="store_true",
        help="print whole arrays (default: shape, dtype and range of large ones)",
    )
    r.add_argument(
        "--fired",
        action="store_true",
        help="with --plot: a panel marking the steps at which each node ran",
    )
    r.add_argument(
        "--check-finite", action="store_true", help="stop at the first NaN or inf and report where"
    )
    r.add_argument(
        "--max-cycles",
        type=int,
        default=1000,
        help="ACT-R models: the most production cycles a run without --steps takes",
    )

    r.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..backends import uses_namespace
    from ..loader import load
    from ..results import json_text, plain
    from ..simulation import Simulation
    from .checks import check_outputs_spare_inputs

    model = load(args.model)
    check_outputs_spare_inputs(args, model)
    backend, actr_inner = args.backend, "interpreted"
    if backend != "hexagon" and uses_namespace(model, "actr"):
        # an ACT-R production system runs cycle by cycle on any backend; --backend compiled
        # cycles the compiled graph (mdf_engine/actr/compiled.py)
        actr_inner = "compiled" if backend == "compiled" else "interpreted"
        backend = "actr"
    sim = Simulation(
        model,
        graph=args.graph,
        backend=backend,
        check_finite=args.check_finite,
        scheduling_mode=args.scheduling_mode,
        seed=args.seed,
        max_cycles=args.max_cycles,
        actr_inner=actr_inner,
    )
    if args.sets:
        sim.set(parse_values(args.sets, args.model))
    record = list(args.record)
    if args.plot and not record:
        record = [f"{n.id}.{o.id}" for n in sim.graph.nodes for o in n.output_ports]
    res = sim.run(
        steps=args.steps,
        dt=args.dt,
        duration=args.duration,
        record=record,
        progress=not args.quiet,
        initializer=read_initializer(args.initializer),
        record_fired=bool(args.plot and args.fired),
    )
    if args.plot and not args.record:
        _keep_numeric_traces(res)
    if args.output:
        res.save(args.output)
    if args.plot:
        from ..viz.runs import plot_run

        plot_run(
            res,
            args.plot,
            model=model,
            title=f"{model.id} / {sim.graph.id}",
            fired=res.fired or None,
        )
    if args.json:
        data = {"graph": sim.graph.id, "steps": res.steps, "outputs": plain(res.outputs)}
        if sim.backend == "actr":  # as `mdf run` printed for ACT-R models before
            goal = data["outputs"].get("goal_buffer", {}).get("goal_output")
            data.update(cycles=res.steps, goal=goal)
        elif res.steps == 1:  # what ran: compare with a scheduler's execution list
            ran, times = sim.runner.last_update_steps()
            data.update(time_steps=[sorted(s) for s in ran], time_step_times=list(times))
        print(json_text(data))
    elif not args.quiet:
        from ..summary import summarize

        print(one_line(f"{model.id} / {sim.graph.id}: {res.steps} steps"))
        for node, ports in res.outputs.items():
            for port, value in ports.items():
                print(one_line(f"  {node}.{port} = {summarize(value, args.full)}"))
    if not res.completed:
        print(f"mdf: {res.note}", file=sys.stderr)
        return 130


def _keep_numeric_traces(res: Any) -> None:
    """``--plot`` without ``--record`` records every output port; keep the traces that can be
    plotted (numbers, booleans, of one shape), dropping the others (an ACT-R model's chunks and
    productions).
    With none left, an MDFError asks for ``--record``."""
    import numpy as np

    for key in list(res.traces):
        try:
            values = np.asarray(res.traces[key]) if len(res.traces[key]) else np.zeros(0)
        except ValueError:  # values of different shapes (lists, productions)
            values = np.zeros(0, dtype=object)
        if values.dtype == object or not (
            np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_
        ):
            del res.traces[key]
    if not res.traces:
        raise MDFError("--plot: no output port has numeric values; choose some with --record")


def read_initializer(path: str | None) -> dict | None:
    """The ``--initializer`` file: a JSON mapping of input port to value (lists as arrays)."""
    if path is None:
        return None
    import numpy as np

    from ..loader import read_file

    data = read_file(path)
    if not isinstance(data, dict):
        raise MDFError("expected a mapping of input port ids to values", source=path)
    out = {}
    for k, v in data.items():
        if isinstance(v, list):
            try:
                v = np.asarray(v)
            except ValueError:
                raise MDFError("a value is not a rectangular array", str(k), path) from None
        out[str(k)] = v
    return out


def parse_values(sets: list[str], source: str) -> dict[str, Any]:
    """``["A.x=0.5", "B.w=[1, 2]"]`` as ``{"A.x": 0.5, "B.w": [1, 2]}`` (JSON numbers/lists)."""
    out: dict[str, Any] = {}
    for item in sets:
        key, sep, text = item.partition("=")
        try:
            value = json.loads(text) if sep else None
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deeply
            value = None
        ok = isinstance(value, (int, float, list)) and not isinstance(value, bool)
        if not sep or "." not in key or not ok:
            raise MDFError(
                f"--set '{item}': expected NODE.PARAM=VALUE with a number or a JSON list as VALUE",
                source=source,
            )
        out[key.strip()] = value
    return out
