"""The malformed/hostile model corpus (tests/data/bad_models/): every file is refused with an
MDFError naming the offending field, ``mdf run FILE`` exits 2 with one line and no traceback,
and no file makes the process run anything outside the expression whitelist (no eval/exec of
model text, no shell or subprocess, no file opened outside the expected places)."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import mdf_engine
from mdf_engine import MDFError, cli
from mdf_engine.expressions import parse

CORPUS = Path(__file__).resolve().parent / "data" / "bad_models"
NOT_MODELS = {"expected.tsv", "make_corpus.py"}


def _expected() -> dict[str, str]:
    rows = (CORPUS / "expected.tsv").read_text().splitlines()[1:]
    return dict(line.split("\t", 1) for line in rows if line.strip())


EXPECTED = _expected()
FILES = sorted(EXPECTED)


def _load_and_run(path: Path) -> None:
    sim = mdf_engine.Simulation(str(path))
    sim.run(steps=2, dt=0.1)


def test_corpus_is_complete():
    on_disk = {p.name for p in CORPUS.iterdir() if p.is_file() and p.name not in NOT_MODELS}
    assert on_disk == set(EXPECTED)
    assert len(EXPECTED) >= 60
    assert sum(n.endswith((".yaml", ".yml")) for n in EXPECTED) >= 10


@pytest.mark.parametrize("name", FILES)
def test_bad_model_raises_mdf_error_naming_the_field(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MDFError) as err:
            _load_and_run(CORPUS / name)
    assert EXPECTED[name] in str(err.value), str(err.value)


@pytest.mark.parametrize("name", FILES)
def test_cli_exits_2_with_one_line(name, capsys):
    rc = cli.main(["run", str(CORPUS / name), "--steps", "2", "--dt", "0.1"])
    captured = capsys.readouterr()
    assert rc == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mdf: error:"), captured.err
    assert EXPECTED[name] in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    "name",
    [
        "yaml_python_apply.yaml",
        "expr_import_os_system.json",
        "cycle_without_default.json",
        "self_loop_edge.json",
        "broadcast_mismatch.json",
        "json_not_utf8.json",
        "json_very_deep_nesting.json",
        "yaml_billion_laughs.yaml",
    ],
)
def test_cli_subprocess_exits_2_without_traceback(name, tmp_path):
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "mdf_engine.cli", "run", str(CORPUS / name), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert EXPECTED[name] in lines[0]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text,expected",
    [
        ("9 ** 9 ** 9", np.inf),
        ("1 / 0", np.inf),
        ("-1 // 0", -np.inf),
        ("0 ** -1", np.inf),
        ("math.exp(1000)", np.inf),
        ("math.log(0)", -np.inf),
    ],
)
def test_hostile_arithmetic_is_fast_and_follows_numpy(text, expected):
    """Huge powers and divisions by zero give numpy's float64 result instead of hanging or
    raising (the expected values are numpy's own float64 results)."""
    assert parse(text, "here").evaluate({}) == expected


@pytest.mark.parametrize("text", ["(-8) ** 0.5", "7 % 0", "0 / 0", "math.sqrt(-1)"])
def test_invalid_arithmetic_gives_nan(text):
    assert np.isnan(parse(text, "here").evaluate({}))


# -- nothing outside the whitelist runs ----------------------------------------------------------

_FLAGGED_EVENTS = (
    "os.system",
    "subprocess.Popen",
    "os.posix_spawn",
    "os.spawn",
    "os.exec",
    "os.fork",
    "pty.spawn",
    "socket.connect",
    "ctypes.dlopen",
    "os.remove",
    "os.rename",
    "shutil.rmtree",
    "webbrowser.open",
)


class _Recorder:
    """An audit hook (they cannot be removed, so it only records while ``active``) and
    wrappers of eval/exec/compile that record any call that is not an AST-only parse."""

    def __init__(self, allowed_roots: list[str]):
        self.active = False
        self.calls: list[tuple[str, str]] = []
        self.allowed = [os.path.realpath(r) for r in allowed_roots]

    def hook(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        if event.startswith(_FLAGGED_EVENTS):
            self.calls.append((event, repr(args)[:200]))
        elif event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if not any(path == r or path.startswith(r + os.sep) for r in self.allowed):
                self.calls.append((event, path))
        elif event == "exec" and args:
            code = args[0]
            filename = getattr(code, "co_filename", "")
            if not os.path.exists(filename):
                self.calls.append((event, filename))

    def wrap(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_eval, real_exec, real_compile = builtins.eval, builtins.exec, builtins.compile
        rec = self

        def eval_(*a, **k):
            if rec.active:
                rec.calls.append(("eval", repr(a)[:200]))
            return real_eval(*a, **k)

        def exec_(*a, **k):
            if rec.active:
                rec.calls.append(("exec", repr(a)[:200]))
            return real_exec(*a, **k)

        def compile_(source, filename, mode, flags=0, *a, **k):
            import ast

            if rec.active and not flags & ast.PyCF_ONLY_AST:
                rec.calls.append(("compile", repr(source)[:200]))
            return real_compile(source, filename, mode, flags, *a, **k)

        monkeypatch.setattr(builtins, "eval", eval_)
        monkeypatch.setattr(builtins, "exec", exec_)
        monkeypatch.setattr(builtins, "compile", compile_)


_RECORDER: _Recorder | None = None


def _recorder() -> _Recorder:
    global _RECORDER
    if _RECORDER is None:
        roots = [
            str(CORPUS),
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            str(Path(mdf_engine.__file__).resolve().parent.parent),
            tempfile.gettempdir(),
            os.path.expanduser("~/.cache"),
            "/dev/null",
            "/proc",
            "/sys",
            "/usr",
            "/etc/localtime",
        ]
        _RECORDER = _Recorder(roots + [p for p in sys.path if p])
        sys.addaudithook(_RECORDER.hook)
    return _RECORDER


def _warm_up(tmp_path: Path) -> None:
    """Import and exercise everything a corpus run may touch, so that lazy imports happen
    before recording starts."""
    good = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "input_ports": {"i": {"shape": [1]}},
                            "parameters": {
                                "k": {"value": 2},
                                "x": {"value": "k * i + np.sin(k)"},
                                "s": {"default_initial_value": 0, "time_derivative": "x"},
                                "z": {
                                    "function": "linear",
                                    "args": {"variable0": "i", "slope": 1, "intercept": 0},
                                },
                            },
                            "output_ports": {"out": {"value": "x + s + z"}},
                        }
                    },
                    "conditions": {"node_specific": {"A": {"type": "Always", "kwargs": {}}}},
                }
            }
        }
    }
    mdf_engine.Simulation(good).run(steps=2, dt=0.1)
    for name in FILES:
        try:
            _load_and_run(CORPUS / name)
        except MDFError:
            pass


def test_no_corpus_input_executes_anything_outside_the_whitelist(monkeypatch, tmp_path, capsys):
    rec = _recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _warm_up(tmp_path)
        rec.wrap(monkeypatch)
        rec.active = True
        try:
            for name in FILES:
                try:
                    _load_and_run(CORPUS / name)
                except MDFError:
                    pass
                cli.main(["run", str(CORPUS / name)])
        finally:
            rec.active = False
    capsys.readouterr()
    assert rec.calls == []


def test_recorder_notices_forbidden_calls(monkeypatch, tmp_path):
    """The recorder above is not blind: it sees eval, os.system and an open outside the
    allowed places."""
    rec = _recorder()
    rec.wrap(monkeypatch)
    outside = Path("/") / "nonexistent-mdf-engine-probe"
    rec.active = True
    try:
        builtins.eval("1 + 1")
        os.system("true")
        try:
            open(outside)
        except OSError:
            pass
    finally:
        rec.active = False
    kinds = [c[0] for c in rec.calls]
    rec.calls.clear()
    assert "eval" in kinds and "os.system" in kinds and "open" in kinds


# -- check_finite: stop at the first NaN/inf and say where ----------------------------------------


def _nan_model(offset: int) -> dict:
    """A's parameter x = log(offset - c) with c = 1, 2, 3, ... becomes -inf at step offset-1
    (0-based); B doubles A's output."""
    return {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "parameters": {
                                "c": {"value": "c + 1"},
                                "x": {"value": f"np.log({offset} - c)"},
                            },
                            "output_ports": {"out": {"value": "x"}},
                        },
                        "B": {
                            "input_ports": {"i": {}},
                            "parameters": {"y": {"value": "i * 2"}},
                            "output_ports": {"out": {"value": "y"}},
                        },
                    },
                    "edges": {
                        "e": {
                            "sender": "A",
                            "receiver": "B",
                            "sender_port": "out",
                            "receiver_port": "i",
                        }
                    },
                }
            }
        }
    }


@pytest.mark.parametrize("backend", ["interpreted", "compiled"])
def test_check_finite_in_the_first_step_names_node_parameter_and_step(backend):
    sim = mdf_engine.Simulation(_nan_model(1), backend=backend, check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MDFError) as err:
            sim.run(steps=5)
    msg = str(err.value)
    assert "graphs.g.nodes.A" in msg and "parameter 'x'" in msg and "step 0" in msg, msg
    assert float(sim.value("B", "y") or 0) == 0.0  # B never ran


def test_check_finite_interpreted_stops_at_the_first_bad_step():
    sim = mdf_engine.Simulation(_nan_model(3), check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MDFError) as err:
            sim.run(steps=6)
    msg = str(err.value)
    assert "graphs.g.nodes.A" in msg and "parameter 'x'" in msg and "step 2" in msg, msg
    assert float(sim.value("A", "c")) == 3.0
    assert float(sim.value("B", "y")) == 0.0  # from step 1 (log(1) * 2); B did not run again


def test_check_finite_compiled_stops_after_warm_up():
    """The NaN appears in compiled code (after the one-step interpreted warm-up)."""
    sim = mdf_engine.Simulation(_nan_model(3), backend="compiled", check_finite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MDFError) as err:
            sim.run(steps=6)
    assert sim.runner.is_compiled
    msg = str(err.value)
    assert err.value.path.endswith("graphs.g.nodes.A") and "non-finite" in msg
    assert "parameter 'x'" in msg and "step 2" in msg, msg
    assert float(sim.value("A", "c")) == 3.0  # the state written back at the stop
    assert float(sim.value("B", "y")) == 0.0


def test_without_check_finite_nan_flows_through():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        res = mdf_engine.Simulation(_nan_model(3)).run(steps=6)
    assert np.isnan(res.outputs["B"]["out"])


def test_cli_check_finite_exits_2_with_one_line(tmp_path, capsys):
    import json

    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_nan_model(3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = cli.main(["run", str(path), "--steps", "6", "--check-finite"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert "parameter 'x'" in lines[0] and "step 2" in lines[0] and "nodes.A" in lines[0]
