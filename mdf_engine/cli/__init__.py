"""The ``mdf`` command line. Each module of this package adds its subcommands with
``add_parsers(sub)`` (registering the function to call with ``set_defaults(func=...)``):
:mod:`.run` (``mdf run``), :mod:`.info` (``mdf info``, ``mdf validate``), :mod:`.onnx`
(``mdf export``, ``mdf import``), :mod:`.sweep` (``mdf sweep``) and :mod:`.draw` (``mdf draw``);
:mod:`.checks` validates paths and run lengths and turns every failure into one line.

Bad input (a malformed model, an unknown option value) exits with status 2 and one line on
stderr that names the file and field; never a traceback. So does a command whose optional
dependency is not installed: the line names the pip extra to install.

Verbosity: ``-v`` shows the engine's INFO lines (backend choices, compile-cache use) and those
of Dask; ``-q`` shows errors only. Without ``-v`` Dask's own INFO lines are hidden.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Iterator

from . import draw, info, onnx, run, sweep
from .checks import OneLineParser, guarded
from .messages import HeldLines, command_lines

#: The modules adding subcommands, in the order ``mdf -h`` lists them.
COMMANDS = (run, info, onnx, sweep, draw)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"mdf {version('mdf-engine')}"
    except PackageNotFoundError:
        return "mdf (mdf_engine imported from a source tree that is not pip-installed)"


def _verbosity(p: argparse.ArgumentParser, top: bool) -> None:
    """``-v``/``-q``, accepted before the subcommand (``top``: kept as ``verbose_all`` and
    ``quiet_all``, which a subcommand's own defaults cannot overwrite) and after it."""
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        dest="verbose_all" if top else "verbose",
        help="more log lines (-v: INFO, -vv: DEBUG)",
    )
    if not any("--quiet" in a.option_strings for a in p._actions):
        p.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            dest="quiet_all" if top else "quiet",
            help="print nothing but errors",
        )


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="mdf", description="Run and inspect ModECI MDF models.")
    p.add_argument("--version", action="version", version=_version())
    _verbosity(p, top=True)
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_parsers(sub)
    for sp in sub.choices.values():
        _verbosity(sp, top=False)
    return p


@contextlib.contextmanager
def _logging(verbose: int, quiet: bool) -> Iterator[HeldLines | None]:
    """Log levels for one command; the previous levels (and environment) come back after it,
    so calling :func:`main` from Python leaves no trace in the caller's logging."""
    level = logging.ERROR if quiet else (logging.WARNING, logging.INFO)[min(verbose, 1)]
    if verbose >= 2:
        level = logging.DEBUG
    names = ("mdf_engine", "distributed")
    saved = {n: logging.getLogger(n).level for n in names}
    saved_env = os.environ.get("DASK_LOGGING__DISTRIBUTED")
    logging.getLogger("mdf_engine").setLevel(level)
    if not verbose:
        # Dask reads this when it is first imported (also in its worker processes)
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
        logging.getLogger("distributed").setLevel(max(level, logging.WARNING))
    try:
        with command_lines(level, verbose > 0) as held:
            yield held
    finally:
        for n, lv in saved.items():
            logging.getLogger(n).setLevel(lv)
        if saved_env is None:
            os.environ.pop("DASK_LOGGING__DISTRIBUTED", None)
        else:
            os.environ["DASK_LOGGING__DISTRIBUTED"] = saved_env


def main(argv: list[str] | None = None) -> int:
    """Run the ``mdf`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    args = _parser().parse_args(argv)
    args.quiet = bool(getattr(args, "quiet", False) or args.quiet_all)
    args.verbose = max(getattr(args, "verbose", 0), args.verbose_all)
    with _logging(args.verbose, args.quiet) as held:
        rc = guarded(args.func, args, held)
        if held is not None and rc in (0, 130):
            held.print_held()
        elif held is not None:  # a failure is one line (mdf validate's too)
            held.drop()
        return rc
