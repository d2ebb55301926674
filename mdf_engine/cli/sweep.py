"""``mdf sweep``: run a model over a grid, list or random sample of parameter values.

``mdf sweep MODEL --set NODE.PARAM=START:STOP:N [--set ...] --steps N --dt DT
--record NODE.PORT ... -o OUT.nc|.csv|.npz [--cluster ADDRESS|local] [--workers K]
[--samples N --seed S] [--plot OUT.png]``
"""

from __future__ import annotations

import argparse

from ..errors import MDFError, one_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` subcommand."""
    s = sub.add_parser("sweep", help="run a model over many parameter values")
    s.add_argument("model", help="MDF model file (.json, .yaml)")
    s.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="NODE.PARAM=START:STOP:N",
        help="values of one parameter: START:STOP:N, a list 1,2,5, or with "
        "--samples a range START:STOP",
    )
    s.add_argument("--graph", default=None, help="graph id (default: the first graph)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--steps", type=int, default=1, help="evaluate() calls per run")
    g.add_argument(
        "--duration",
        type=float,
        default=None,
        help="run the reference loop t=0; while t<=T: ...; t+=dt",
    )
    s.add_argument("--dt", type=float, default=None, help="time increment of steps 2..N")
    s.add_argument(
        "--record",
        nargs="+",
        required=True,
        metavar="NODE.PORT",
        help="ports or parameters kept at every step",
    )
    s.add_argument(
        "--design",
        choices=["grid", "list"],
        default="grid",
        help="grid: every combination; list: the i-th values together",
    )
    s.add_argument(
        "--samples",
        type=int,
        default=None,
        help="a random design of this many points inside the --set ranges",
    )
    s.add_argument("--seed", type=int, default=0, help="seed of the random design")
    s.add_argument(
        "--backend",
        choices=["compiled", "interpreted"],
        default="compiled",
        help="compiled (default): every parameter set in one jitted call; interpreted: one run "
        "of the interpreted backend per set",
    )
    s.add_argument(
        "--cluster",
        default=None,
        help="Dask scheduler address, or 'local' for a LocalCluster (default: run here)",
    )
    s.add_argument(
        "--workers",
        type=int,
        default=None,
        help="workers of the LocalCluster (with --cluster local)",
    )
    s.add_argument("--chunk", type=int, default=None, help="parameter sets per task")
    s.add_argument("-o", "--output", default=None, help="write the sweep (.nc, .csv, .npz)")
    s.add_argument(
        "--plot", default=None, help="plot a final value against the swept parameters to this image"
    )
    s.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    s.add_argument(
        "--progress",
        action="store_true",
        help="a progress bar on long runs when stderr is a terminal (the default: the flag "
        "changes nothing; --quiet turns it off)",
    )
    s.set_defaults(func=cmd_sweep)


def parse_sets(sets: list[str]) -> dict[str, str]:
    """``["A.x=0:1:5", ...]`` as ``{"A.x": "0:1:5"}``."""
    out: dict[str, str] = {}
    for item in sets:
        key, sep, value = item.rpartition("=")  # an id may hold "=", a range never
        if not sep or "." not in key or not value:
            raise MDFError(f"--set '{item}': expected NODE.PARAM=START:STOP:N")
        if key in out:
            raise MDFError(f"--set '{key}' given twice")
        out[key.strip()] = value.strip()
    return out


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..progress import progress
    from ..sweep import make_design, sweep

    params = parse_sets(args.sets)
    total = make_design(params, args.design, args.samples, args.seed).values.shape[0]
    bar = progress(total, not args.quiet, unit="run")
    bar = bar if bar.shown else None
    try:
        ds = sweep(
            args.model,
            params,
            steps=args.steps,
            dt=args.dt,
            record=args.record,
            graph=args.graph,
            design=args.design,
            samples=args.samples,
            seed=args.seed,
            backend=args.backend,
            cluster=args.cluster,
            workers=args.workers,
            chunk=args.chunk if args.chunk is not None or not bar else max(1, total // 100),
            progress=bar.update if bar else None,
            duration=args.duration,
            output=args.output,  # (streamed: the series are not held in memory)
        )
    finally:
        if bar:
            bar.close()
    if args.plot:
        from ..viz.sweeps import plot_sweep

        plot_sweep(ds, args.plot, model=args.model)
    if not args.quiet:
        print(
            f"{total} parameter sets x {ds.attrs['steps']} steps"
            + (f" -> {args.output}" if args.output else "")
        )
        if not args.output:
            from ..sweep import final_table

            header, table = final_table(ds)
            print(one_line(",".join(header)))
            for row in table[:20]:
                print(",".join(f"{x:.6g}" for x in row))
            if len(table) > 20:
                print(f"... {len(table) - 20} more rows (use -o to save them all)")
    return 0
