"""``mdf draw MODEL OUT.png|.svg|.pdf``: a picture of a model's graph (a plug-in of
:mod:`mdf_engine.cli`; the drawing is made by :mod:`mdf_engine.viz.drawing`)."""

from __future__ import annotations

import argparse

from ..errors import MDFError, one_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``draw`` subcommand."""
    d = sub.add_parser("draw", help="draw a graph: nodes, ports, edges, weights, conditions")
    d.add_argument("model", help="MDF model file (.json, .yaml)")
    d.add_argument("out", help="image to write (.png, .svg or .pdf)")
    d.add_argument("--graph", default=None, help="graph id (default: the first graph)")
    d.add_argument(
        "--size",
        type=float,
        nargs=2,
        default=None,
        metavar=("W", "H"),
        help="figure size in inches (default: as large as the text needs)",
    )
    d.add_argument("--dpi", type=float, default=100, help="pixels per inch of a PNG")
    d.add_argument(
        "--detailed",
        action="store_true",
        help="every node with its ports and conditions, also for graphs of more "
        "than 40 nodes (which are otherwise drawn compactly, repeated blocks "
        "collapsed)",
    )
    d.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    d.set_defaults(func=cmd_draw)


def cmd_draw(args: argparse.Namespace) -> int:
    from ..viz.drawing import draw
    from ..viz.figures import image_format

    image_format(args.out)  # a bad extension fails before the model is read
    if args.dpi <= 0 or (args.size is not None and min(args.size) <= 0):
        raise MDFError("--size and --dpi must be positive")
    w, h = draw(
        args.model,
        args.out,
        graph=args.graph,
        size=tuple(args.size) if args.size else None,
        dpi=args.dpi,
        detailed=args.detailed,
    )
    if not args.quiet:
        unit = "px" if str(args.out).lower().endswith(".png") else "pt"
        print(one_line(f"{args.out}: {w}x{h} {unit}"))
    return 0
