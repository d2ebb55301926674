"""Input validation for the ``mdf`` command line: every failure is one line on stderr.

The commands call these checks before they do any work: a model path must be a regular file
(not a directory, FIFO or device), an output path must be writable and not a directory, run
lengths must be finite and within :mod:`mdf_engine.limits`. :func:`guarded` runs a command
and turns every failure into one line ``mdf: error: FILE: FIELD: what`` with exit status 2
(Ctrl-C: ``mdf: interrupted``, status 130); model text in the line is escaped.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
from collections.abc import Callable
from typing import Any

from ..errors import MDFError, one_line


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {one_line(message)} (see '{self.prog} -h')", file=sys.stderr)
        sys.exit(2)


def check_model_path(path: str) -> None:
    """A model path names a regular file (checked without opening it: a FIFO would block)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise MDFError("no such file", source=path) from None
    except OSError as e:
        raise MDFError(f"cannot read the file ({e.strerror})", source=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise MDFError("is a directory, not a model file", source=path)
    if not stat.S_ISREG(st.st_mode):
        raise MDFError("is not a regular file (a FIFO, device or socket)", source=path)


def check_output_path(path: str | None, what: str = "output") -> None:
    """An output path can be written: not a directory, in an existing writable folder."""
    if path is None:
        return
    if path == "" or os.path.isdir(path):
        raise MDFError(f"the {what} path is a directory, not a file", source=path or "''")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise MDFError(f"the {what} folder does not exist", source=path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MDFError(f"the {what} folder is not writable", source=path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise MDFError(f"the {what} path is not a regular file", source=path)
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise MDFError(f"the {what} file is not writable", source=path)


def check_outputs_spare_inputs(args: argparse.Namespace, model: Any = None) -> None:
    """No output path names a file the command reads (the model, its ``--initializer``, the
    weights sidecar the loaded ``model`` names): writing it would destroy what the user
    saved (``mdf run m.json -o m.json``)."""
    inputs = {
        "model": getattr(args, "model", None),
        "initializer": getattr(args, "initializer", None),
    }
    meta = getattr(model, "metadata", None)
    weights = meta.get("weights_file") if isinstance(meta, dict) else None
    if isinstance(weights, str) and isinstance(inputs["model"], str):
        inputs["weights"] = os.path.join(os.path.dirname(inputs["model"]), weights)
    for name in ("output", "plot", "out"):
        out = getattr(args, name, None)
        for what, path in inputs.items():
            if isinstance(out, str) and isinstance(path, str) and _same_file(out, path):
                raise MDFError(
                    f"the {name} path is the {what} file it reads; refusing to overwrite it",
                    source=out,
                )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet)
        return False


def check_run_args(args: argparse.Namespace) -> None:
    """``--steps``, ``--duration`` and ``--dt``: finite, positive, within the step limit."""
    from ..limits import check_steps, steps_estimate

    steps = getattr(args, "steps", None)
    dt = getattr(args, "dt", None)
    duration = getattr(args, "duration", None)
    if steps is not None:
        if steps < 1:
            raise MDFError(f"--steps must be at least 1, got {steps}")
        check_steps(steps, f"--steps {steps}")
    if dt is not None and (not math.isfinite(dt) or dt <= 0):
        raise MDFError(f"--dt must be a finite number > 0, got {dt}")
    if getattr(args, "max_cycles", 1) < 1:
        raise MDFError(f"--max-cycles must be at least 1, got {args.max_cycles}")
    if duration is not None:
        if dt is None:
            raise MDFError("--duration needs --dt")
        check_steps(steps_estimate(duration, dt), f"--duration {duration} with --dt {dt}")


def guarded(
    command: Callable[[argparse.Namespace], Any],
    args: argparse.Namespace,
    held: Any = None,
) -> int:
    """Run ``command(args)``; every failure is one line on stderr and exit status 2 (the log
    lines ``held`` for the command, a :class:`.messages.HeldLines`, are left out of it)."""
    model = getattr(args, "model", None)
    try:
        if isinstance(model, str) and getattr(args, "command", None) != "import":
            check_model_path(model)
        for name in ("output", "plot"):
            check_output_path(getattr(args, name, None), name)
        if getattr(args, "command", None) in ("import", "draw"):  # export checks its own
            check_output_path(getattr(args, "out", None), "output")
        check_outputs_spare_inputs(args)
        check_run_args(args)
        return int(command(args) or 0)
    except MDFError as e:
        from ..simulation import name_file

        return _fail(str(name_file(e, model)), held)
    except KeyboardInterrupt:
        if held is not None:
            held.print_held()
        print("mdf: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as e:  # an optional extra that is not installed
        from ..extras import missing_message

        text = missing_message(e.name)
        if text is None:
            return _fail(
                f"{model}: internal error (ModuleNotFoundError: {e}); please report it", held
            )
        return _fail(f"mdf {getattr(args, 'command', '')}: {text}", held)
    except RecursionError:
        return _fail(f"{model}: the model is nested too deeply to process", held)
    except MemoryError:
        return _fail(f"{model}: not enough memory for this model or run", held)
    except BrokenPipeError:
        return _reader_gone()
    except OSError as e:
        where = e.filename if e.filename is not None else model
        return _fail(f"{where}: {e.strerror or type(e).__name__}", held)
    except Exception as e:  # noqa: BLE001 - the last resort: one line, never a traceback
        return _fail(f"{model}: internal error ({type(e).__name__}: {e}); please report it", held)


#: the exit status after the reader of stdout went away (``mdf info m.json | head``): 128 +
#: SIGPIPE, as a shell reports a command that the signal stopped
EXIT_BROKEN_PIPE = 141


def _reader_gone() -> int:
    """Stop quietly when stdout's reader closed the pipe: that is no error of the model's
    (it was reported as ``mdf: error: MODEL: Broken pipe``); stdout goes to /dev/null so that
    Python's flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is no file (main() called from Python)
        pass
    return EXIT_BROKEN_PIPE


def _fail(text: str, held: Any = None) -> int:
    line = one_line(text)
    if len(line) > 2000:
        line = line[:1997] + "..."
    if held is not None:
        line += held.drop()
    print(f"mdf: error: {line}", file=sys.stderr)
    return 2
