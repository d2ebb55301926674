"""The hostile-input corpus of issue 18 (tests/data/bad_models/hostile/, written by its
``make_hostile.py``) through ``mdf run`` on both backends: the exit status of ``cases.tsv``;
a failure is exactly one line on stderr naming what it lists, never a traceback; no terminal
escape reaches stdout or stderr; nothing is written but the output path (and the compile
cache); no marker file of the ids holding code appears; every case ends within a bound
(an alarm, not a timing)."""

from __future__ import annotations

import os
import shlex
import signal
import stat
from pathlib import Path

import pytest

from mdf_engine import cli

HOSTILE = Path(__file__).resolve().parent / "data" / "bad_models" / "hostile"
BOUND_SECONDS = 240


def _cases() -> list[tuple[str, str, int, str]]:
    rows = (HOSTILE / "cases.tsv").read_text().splitlines()[1:]
    out = []
    for row in rows:
        name, args, rc, text = (row.split("\t") + [""])[:4]
        out.append((name, args, int(rc), text))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def _alarm(signum, frame):
    raise TimeoutError(f"a case ran longer than {BOUND_SECONDS} s")


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(BOUND_SECONDS)
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # a usage error, from argparse
        rc = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_the_corpus_covers_every_class():
    names = {n for n, *_ in CASES}
    on_disk = {p.name for p in HOSTILE.glob("*.json")}
    assert names == on_disk
    for prefix in ("code_", "index_", "int_", "condition_", "value_", "complex_"):
        assert sum(n.startswith(prefix) for n in names) >= 2, prefix


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
@pytest.mark.parametrize("name,args,rc,text", CASES, ids=[f"{n}:{a}" for n, a, _, _ in CASES])
def test_hostile_input_through_the_cli(
    name, args, rc, text, backend, tmp_path, cache, monkeypatch, capsys
):
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    words = [
        w.replace("OUTDIR", str(tmp_path)).replace("OUT", str(tmp_path / "out"))
        for w in shlex.split(args)
    ]
    code, out, err = _run(["run", str(HOSTILE / name), "--backend", backend, *words], capsys)
    assert code == rc, err
    assert "Traceback" not in err and "\x1b" not in err and "\x1b" not in out
    lines = err.strip().splitlines()
    if rc:
        assert len(lines) == 1 and lines[0].startswith("mdf"), err
        assert text in lines[0], lines[0]
    written = {p.name for p in tmp_path.iterdir()}
    assert "MARKER" not in written
    outputs = {p.name for p in tmp_path.glob("out*")}
    assert written <= outputs, written - outputs
    assert len(outputs) == (1 if rc == 0 and "-o" in words else 0)
    for p in tmp_path.glob("out*"):
        mask = os.umask(0)
        os.umask(mask)
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask
    if name == "formula_ids_to_csv.json":
        header = (tmp_path / "out.csv").read_text().splitlines()[0]
        assert all(cell.lstrip('"')[:1] not in "=+-@" for cell in header.split(","))
    for source in Path(cache).glob("*.py"):
        assert "MARKER" not in source.read_text()


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_model_path_that_is_not_a_regular_file_is_refused_unread(kind, tmp_path, capsys):
    path = tmp_path / "model.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    code, _out, err = _run(["run", str(path), "--steps", "2"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and str(path) in lines[0], err


def test_an_update_that_never_ends_stops_at_the_bound(monkeypatch, tmp_path, capsys):
    import mdf_engine.interpreter as interpreter

    monkeypatch.setattr(interpreter, "MAX_TIME_STEPS_PER_UPDATE", 2000)
    monkeypatch.setenv("MDF_ENGINE_CACHE", str(tmp_path))
    path = tmp_path / "never.json"
    path.write_text(
        (HOSTILE / "ok.json")
        .read_text()
        .replace(
            '"edges": []',
            '"edges": [], "conditions": {"termination": '
            '{"environment_state_update": {"type": "Never"}}}',
        )
    )
    for backend in ("interpreted", "compiled"):
        code, _out, err = _run(["run", str(path), "--steps", "2", "--backend", backend], capsys)
        assert code == 2 and "no termination after 2000 time steps" in err, err
        assert len(err.strip().splitlines()) == 1
