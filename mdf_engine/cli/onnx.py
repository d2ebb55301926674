"""``mdf export --onnx MODEL OUT.onnx`` and ``mdf import MODEL.onnx OUT.json|.yaml``: the ONNX
interchange commands (a plug-in of :mod:`mdf_engine.cli`; the work is in
:mod:`mdf_engine.onnx_io`)."""

from __future__ import annotations

import argparse
import os

from ..errors import MDFError, one_line


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add the ``export`` and ``import`` subcommands."""
    e = sub.add_parser(
        "export",
        help="export an MDF graph to ONNX (stateless, or with "
        "--step / --steps N for stateful models)",
    )
    e.add_argument(
        "--onnx",
        action="store_true",
        required=True,
        help="write an ONNX model (the only export format)",
    )
    e.add_argument("model", help="MDF model file (.json, .yaml)")
    e.add_argument("out", help="ONNX file to write (.onnx)")
    e.add_argument("--graph", default=None, help="graph id (default: the first graph)")
    e.add_argument(
        "--dtype",
        default=None,
        choices=["float32", "float64"],
        help="element type of floating-point values (default: float64 if an input "
        "port's type says so, else float32)",
    )
    e.add_argument(
        "--opset",
        type=int,
        default=None,
        help="ai.onnx opset (default: the model's, else the newest its ops need)",
    )
    st = e.add_argument_group("stateful models (docs/onnx_io.md)")
    st.add_argument(
        "--step",
        action="store_true",
        help="export one update as a function of the state (inputs: external "
        "inputs, dt, state__*; outputs: output ports, next__*)",
    )
    st.add_argument(
        "--steps",
        type=int,
        default=None,
        help="export a whole run of N steps (as Simulation.run(steps=N, dt=DT)) as one ONNX Loop",
    )
    st.add_argument(
        "--duration",
        type=float,
        default=None,
        help="the run's steps from a duration (with --dt), as 'mdf run'",
    )
    st.add_argument("--dt", type=float, default=None, help="time increment of the run")
    st.add_argument(
        "--initializer",
        default=None,
        metavar="FILE.json",
        help="example inputs {input port: value} ('mdf run' format): the export runs the "
        "graph with them to learn shapes, and they become the inputs' defaults",
    )
    st.add_argument(
        "--record",
        action="append",
        default=[],
        metavar="NODE.PORT",
        help="also return this port's value after every step (repeatable)",
    )
    e.set_defaults(func=cmd_export)

    i = sub.add_parser("import", help="convert an ONNX model into an MDF model file")
    i.add_argument("model", help="ONNX file (.onnx)")
    i.add_argument("out", help="MDF file to write (.json, .yaml or .yml)")
    i.add_argument("--id", default=None, help="id of the MDF model (default: the graph name)")
    i.add_argument(
        "--inputs",
        default=None,
        metavar="FEEDS.npz",
        help="arrays keyed by ONNX input name, stored as the input ports' default "
        "values (so 'mdf run' computes on them)",
    )
    i.set_defaults(func=cmd_import)


def cmd_export(args: argparse.Namespace) -> int:
    from ..loader import load
    from ..onnx_io import export

    if not str(args.out).endswith(".onnx"):
        raise MDFError("the output of 'mdf export --onnx' must be a .onnx file", source=args.out)
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder):
        raise MDFError(f"cannot write here: no directory '{folder}'", source=args.out)
    model = load(args.model)
    if args.step or args.steps is not None or args.duration is not None:
        from ..onnx_io.step_export import export_stateful
        from .run import read_initializer

        mp = export_stateful(
            model,
            args.out,
            step=args.step,
            steps=args.steps,
            dt=args.dt,
            duration=args.duration,
            record=args.record,
            graph=args.graph,
            dtype=args.dtype,
            opset=args.opset,
            initializer=read_initializer(args.initializer),
        )
    elif args.record or args.dt is not None or args.initializer is not None:
        raise MDFError("--record, --dt and --initializer need --step, --steps or --duration")
    else:
        mp = export(model, args.out, graph=args.graph, dtype=args.dtype, opset=args.opset)
    if args.quiet:
        return 0
    opset = next(o.version for o in mp.opset_import if o.domain in ("", "ai.onnx"))
    print(
        one_line(
            f"{args.out}: {len(mp.graph.node)} ONNX nodes, opset {opset}, inputs "
            f"{', '.join(i.name for i in mp.graph.input) or 'none'}, outputs "
            f"{', '.join(o.name for o in mp.graph.output)}"
        )
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from ..onnx_io.importer import import_model, read_feeds, save_imported, set_inputs
    from ..sidecar import sidecar_name

    if not str(args.out).endswith((".json", ".yaml", ".yml")):
        raise MDFError(
            "the output of 'mdf import' must be a .json, .yaml or .yml file", source=args.out
        )
    side = os.path.join(os.path.dirname(args.out), sidecar_name(args.out))
    _spare_inputs(side, args)
    model = import_model(args.model, model_id=args.id)
    if os.path.exists(side):
        _spare_external_data(side, args)
    if args.inputs is not None:
        set_inputs(model, read_feeds(args.inputs))
    n_arrays = save_imported(model, args.out)
    g = model.graphs[0]
    side = f", {n_arrays} arrays in {sidecar_name(args.out)}" if n_arrays else ""
    if not args.quiet:
        print(
            f"{args.out}: {len(g.nodes)} nodes, {len(g.edges)} edges (opset "
            f"{model.onnx_opset_version}){side}"
        )
    return 0


def _spare_inputs(side: str, args: argparse.Namespace) -> None:
    """The weights file ``mdf import`` writes beside its output (``OUT.weights.npz``) is not a
    file it reads (the ONNX file, ``--inputs``): writing it would destroy what the user saved."""
    for what, path in (("ONNX", args.model), ("--inputs", args.inputs)):
        try:
            same = path is not None and os.path.samefile(side, path)
        except (OSError, ValueError):  # one of them does not exist (yet)
            same = False
        if same:
            raise MDFError(
                f"its weights file {side!r} would be the {what} file it reads; refusing to "
                "overwrite it (choose another output name)",
                source=args.out,
            )


def _spare_external_data(side: str, args: argparse.Namespace) -> None:
    """Nor is that weights file a file the ONNX model keeps its tensors in (``external_data``:
    read by the import, it would be replaced after it)."""
    import onnx
    from onnx.external_data_helper import ExternalDataInfo, uses_external_data

    mp = onnx.load(args.model, load_external_data=False)  # (the import read it already)
    folder = os.path.dirname(os.path.abspath(args.model))
    tensors = list(mp.graph.initializer)
    tensors += [a.t for n in mp.graph.node for a in n.attribute if a.HasField("t")]
    for t in tensors:
        if uses_external_data(t):
            path = os.path.join(folder, ExternalDataInfo(t).location)
            if os.path.exists(path) and os.path.samefile(side, path):
                raise MDFError(
                    f"its weights file {side!r} would be the file the ONNX model keeps "
                    f"tensor {t.name!r:.80} in; refusing to overwrite it (choose another "
                    "output name)",
                    source=args.out,
                )
