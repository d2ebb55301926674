"""What README.md and docs/*.md show a new user runs as written (docs/tutorial.md has its own
test, tests/test_first_day_docs.py).

Every ```python block of a document runs, in order, in one namespace, in an empty folder that
holds a copy of ``examples/``; every line of a ```bash block that runs ``mdf`` runs through
the command line (exit 0). A document whose blocks use an extra that is not installed is
skipped. The README's synopsis of the ``mdf`` command names exactly the options each
subcommand's parser takes, and every option says in its ``--help`` what it does.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES

from mdf_engine import cli

ROOT = Path(__file__).resolve().parents[1]
#: documents run by other tests (the tutorial), or whose blocks are tables of printed numbers
ELSEWHERE = {"tutorial.md", "performance.md"}
DOCS = [ROOT / "README.md"] + sorted(
    p for p in (ROOT / "docs").glob("*.md") if p.name not in ELSEWHERE
)
#: an extra a block needs, recognised by a word in its code
NEEDS = {
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "run_onnx": "onnxruntime",
    "to_dataframe": "pandas",
    "sweep": "xarray",
    "plot": "matplotlib",
}


def _blocks(path: Path) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", path.read_text(), flags=re.S)


def _commands(code: str) -> list[list[str]]:
    """The ``mdf`` commands of a bash block (``a && mdf ...`` runs its ``mdf`` part)."""
    out = []
    for line in code.splitlines():
        for part in line.split("&&"):
            argv = shlex.split(part, comments=True)
            if argv and argv[0] == "mdf":
                out.append(argv[1:])
    return out


RUNNABLE = [
    p for p in DOCS if any(k == "python" or (k == "bash" and _commands(c)) for k, c in _blocks(p))
]


@pytest.mark.parametrize("doc", RUNNABLE, ids=lambda p: p.name)
def test_a_documents_code_runs_as_written(doc, tmp_path, monkeypatch):
    blocks = _blocks(doc)
    code = "\n".join(c for _, c in blocks)
    for word, module in NEEDS.items():
        if re.search(rf"\b{word}\b", code) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{doc.name} needs {module}")
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "docs"}
    for k, (kind, code) in enumerate(blocks):
        where = f"{doc.name} block {k}"
        if kind == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, where, "exec"), namespace)
        elif kind == "bash":
            for argv in _commands(code):
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    assert cli.main(argv) == 0, (where, argv, err.getvalue())


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _synopsis() -> dict[str, set[str]]:
    """The options the README's "Command line" block names for each subcommand."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"Command line:\n\n```\n(.*?)```", text, flags=re.S).group(1)
    named: dict[str, set[str]] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"mdf (\w+)", line)
        if m:
            current = m.group(1)
        elif line.startswith("mdf"):
            current = None
        if current:
            named.setdefault(current, set()).update(
                re.findall(r"(?<![\w-])(--[\w-]+|-o)(?![\w-])", line)
            )
    return named


def test_readme_synopsis_names_every_option_of_every_subcommand():
    named = _synopsis()
    common = {"--help", "--verbose", "--quiet", "--output"}
    for name, parser in _subcommands().items():
        options = {o for a in parser._actions for o in a.option_strings if len(o) > 2 or o == "-o"}
        assert options - common - {"-o"} <= named.get(name, set()), name
        assert named.get(name, set()) - {"--quiet"} <= options, name


def test_every_option_says_what_it_does():
    for name, parser in _subcommands().items():
        for action in parser._actions:
            assert action.help, f"mdf {name} {action.option_strings or action.dest}: no help"


def test_api_reference_builds_without_warnings(tmp_path):
    """``python docs/api_build.py`` (README) prints no warning: pdoc reads every annotation
    (``set[str]`` in a class with a method ``set`` read as that method)."""
    pytest.importorskip("pdoc")
    import warnings

    spec = importlib.util.spec_from_file_location("api_build", ROOT / "docs" / "api_build.py")
    api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        api.build(tmp_path)
    assert not [str(w.message) for w in seen]
