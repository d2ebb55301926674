"""Audit 3: the hostile inputs audits 1-2 left out (docs/security.md, "Audit 3"), run in this
process through ``mdf_engine.cli.main`` and the Python API, in a scratch folder.

* ``writers``: every id text of ``audit2_attacks.HOSTILE_IDS`` (and terminal escapes, option-
  like and CSV/NPZ-key-like texts) as node, port, parameter, graph, edge, function id and as
  condition keys, through ``run -o .csv/.npz/.json``, ``--plot`` (with ``--fired``), ``sweep
  -o .csv/.npz/.nc`` (the ``.nc`` read back: the names must come back as written), ``export
  --onnx --step``, ``draw .svg/.dot``, ``info`` and ``--set``;
* ``terminal``: ESC/CSI/OSC/C1 sequences in ids through ``info``, ``run`` and error lines: no
  raw control character may be printed;
* ``numbers``: YAML 1.1 numbers (``017``, ``12:30``), null ids, TimeInterval repeats that
  graph-scheduler reads as 0 or less, NaN bounds, booleans as counts, steps and seeds.

A case is a finding when the exit status is neither 0 nor 2, a failure is not one line or is
an ``internal error``, a raw control character is printed, a ``fuzzmark`` file appears, a
written name does not read back, or a warning escapes. Cases that can hang (never-met
terminations) belong to ``audit2_attacks.py``'s sandbox, not here.

Usage: ``python tools/audit3_attacks.py [--only writers,terminal,numbers]``; one line per
finding and a summary; exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import json
import os
import sys
import tempfile
import unicodedata
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit2_attacks import HOSTILE_IDS, base, id_model, rename  # noqa: E402

EXTRA = ["esc\x1b[31mred", "osc\x1b]8;;http://e\x07l", "csi\x9b2J", "cr\rx", "-A", "--steps"]
EXTRA += ["A=B", "A,B", "A;B", "A B", "time", "\t=1+1", "_FillValue", "a/b", "/", "."]
ESCAPES = ["\x1b[31mred\x1b[0m", "\x1b]8;;http://e\x07link\x1b]8;;\x07", "\x9b2J", "\r\x08\x07"]
_BIDI = set("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def cli(argv: list[str]) -> tuple[object, str, str]:
    """``mdf ARGV`` in this process: (exit status or the exception, stdout, stderr)."""
    from mdf_engine import cli as mdf

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                rc: object = mdf.main(argv)
            except SystemExit as e:
                rc = e.code
            except BaseException as e:  # noqa: BLE001 - a finding
                rc = repr(e)
    return rc, out.getvalue(), err.getvalue()


def problems(rc: object, out: str, err: str) -> list[str]:
    found = []
    raw = [c for c in out + err if (unicodedata.category(c) == "Cc" and c != "\n") or c in _BIDI]
    if raw:
        found.append(f"raw {raw[:3]!a}")
    if rc not in (0, 2):
        found.append(f"status {rc!a}")
    if rc == 2 and len(err.strip().splitlines()) != 1:
        found.append("not one line")
    if "internal error" in err or "Traceback" in err:
        found.append("internal")
    if glob.glob("**/*fuzzmark*", recursive=True) or glob.glob("../*fuzzmark*"):
        found.append("marker file")
    return found


def _cond_model(t: str) -> dict:
    m = rename(base(), "A", t)
    m["graphs"][0]["conditions"] = {
        "node_specific": {t: {"type": "EveryNCalls", "kwargs": {"dependency": "B", "n": 1}}},
        "termination": {
            "environment_state_update": {
                "type": "AfterNCalls",
                "kwargs": {"dependency": t, "n": 2},
            }
        },
    }
    return m


def writers() -> list[str]:
    import xarray as xr

    found = []
    texts = [t for t in HOSTILE_IDS if len(t) < 1000 and "\ud800" not in t] + EXTRA
    for t in texts:
        for where in ["node", "port", "param", "cond", "graph", "edge", "function"]:
            m = _cond_model(t) if where == "cond" else id_model(where, t)
            for f in glob.glob("*"):
                os.remove(f)
            Path("m.json").write_text(json.dumps(m))
            node = t if where in ("node", "cond") else "A"
            port = t if where == "port" else "o"
            rec = [f"--record={node}.{port}"]
            g = ["--graph", t] if where == "graph" else []
            swept = f"--set={node}.k=0:1:2"
            cmds = [
                ["run", "m.json", "--steps", "2", *rec, "-o", f"o.{x}"]
                for x in "csv npz json".split()
            ]
            cmds += [
                ["run", "m.json", "--steps", "2", "--plot", "p.png", "--fired"],
                ["run", "m.json", "--steps", "2", *rec, "--plot", "p2.png", "--json"],
                *(
                    ["sweep", "m.json", swept, "--steps", "2", *rec, "-o", f"s.{x}"]
                    for x in ("csv", "npz", "nc")
                ),
                ["export", "--onnx", "m.json", "x.onnx", "--step"],
                ["draw", "m.json", "d.svg"],
                ["draw", "m.json", "d.dot"],
                ["info", "m.json"],
            ]
            if where == "param":
                cmds.append(["run", "m.json", "--steps", "2", f"--set=A.{t}=3", "--record=B.o"])
            for argv in cmds:
                rc, out, err = cli(argv + g)
                bad = problems(rc, out, err)
                if rc == 0 and argv[-1] == "s.nc":
                    from mdf_engine.sweep import open_dataset

                    names = list(open_dataset("s.nc").data_vars)
                    if names != [f"{node}.{port}"]:
                        bad.append(f"names read back {names!a}")
                    with xr.open_dataset("s.nc"):
                        pass
                if bad:
                    found.append(f"writers {where}={t[:40]!a} {argv!a}: {bad} {err[:200]!a}")
    return found


def terminal() -> list[str]:
    found = []
    for t in ESCAPES:
        for where in ["node", "port", "param", "graph", "model", "edge", "metadata", "inport"]:
            Path("m.json").write_text(json.dumps(id_model(where, t)))
            for argv in (
                ["info", "m.json"],
                ["validate", "m.json"],
                ["run", "m.json", "--steps", "2"],
                ["run", "m.json", "--steps", "1", "--record", f"A{t}.nope"],
            ):
                rc, out, err = cli(argv)
                bad = problems(rc, out, err)
                if bad:
                    found.append(f"terminal {where}={t!a} {argv[0]}: {bad}")
    return found


_YAML = "id: m\ngraphs:\n- id: g\n  nodes:\n  - id: {id}\n    parameters:\n    - {{id: k, value: {v}}}\n    output_ports:\n    - {{id: o, value: k}}\n"


def numbers() -> list[str]:
    found = []
    #: read otherwise by YAML 1.1 (PyYAML) and YAML 1.2, or a null id: each must be refused
    refused = {"017", "-0_17", "12:30", "1:2.5", "null", "~"}
    for text in [*refused, "07", "0x1F", "yes", "1e309"]:
        for fields in ({"id": "A", "v": text}, {"id": text, "v": "1"}):
            Path("m.yaml").write_text(_YAML.format(**fields))
            rc, out, err = cli(["run", "m.yaml", "--steps", "1"])
            bad = problems(rc, out, err)
            null_value = fields["v"] in ("null", "~")  # (a null value is "no value": fine)
            if rc == 0 and text in refused and not null_value:
                bad.append("accepted")
            if bad:
                found.append(f"numbers {fields!a}: {bad} {err[:200]!a}")
    for kw in [
        {"repeat": 0},
        {"repeat": -1},
        {"repeat": 1e-12},
        {"repeat": "0 s"},
        {"start": "nan"},
    ]:
        m = base()
        m["graphs"][0]["conditions"] = {
            "node_specific": {"A": {"type": "TimeInterval", "kwargs": kw}}
        }
        Path("m.json").write_text(json.dumps(m).replace('"nan"', "NaN"))
        for backend in ("interpreted", "compiled"):
            rc, out, err = cli(["run", "m.json", "--steps", "3", "--backend", backend])
            bad = problems(rc, out, err) + ([] if rc == 2 else ["accepted"])
            if bad:
                found.append(f"numbers TimeInterval {kw!a} {backend}: {bad} {err[:200]!a}")
    for what, kwargs in [("steps", {"steps": True}), ("seed", {"seed": True})]:
        import mdf_engine

        try:
            seed = kwargs.get("seed")
            mdf_engine.Simulation(base(), seed=seed).run(steps=kwargs.get("steps", 1))
            found.append(f"numbers {what}=True was taken as 1")
        except mdf_engine.MDFError:
            pass
    return found


GROUPS = {"writers": writers, "terminal": terminal, "numbers": numbers}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default=",".join(GROUPS))
    a = p.parse_args(argv)
    here = os.getcwd()
    found: list[str] = []
    with tempfile.TemporaryDirectory(prefix="audit3_") as box:
        os.environ.setdefault("MDF_ENGINE_CACHE", os.path.join(box, "cache"))
        os.makedirs(os.path.join(box, "w"))
        os.chdir(os.path.join(box, "w"))
        try:
            for name in a.only.split(","):
                got = GROUPS[name]()
                for line in got:
                    print("FINDING", line, flush=True)
                print(f"{name}: {len(got)} findings", flush=True)
                found += got
        finally:
            os.chdir(here)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
