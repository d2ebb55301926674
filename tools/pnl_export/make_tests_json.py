"""Export PsyNeuLink's own MDF test compositions (its ``tests/json/*.py`` / ``tests/mdf/*.py``
scripts) with the installed PsyNeuLink, and record PsyNeuLink's run of each as the oracle.

The scripts are PsyNeuLink's, not ours: they are read from an unpacked PsyNeuLink source
distribution and executed as PsyNeuLink's ``tests/mdf/test_mdf.py`` executes them (``exec`` of the
script, then ``comp.run(inputs=...)`` with that test's inputs)::

    pip download psyneulink==0.13.0.0 --no-deps --no-binary :all: && tar xzf psyneulink-*.tar.gz
    /work/venvs/pnl-0.13.0.0/bin/python tools/pnl_export/make_tests_json.py \
        psyneulink-0.13.0.0/tests/mdf [OUTDIR] [--NAME ...]

OUTDIR defaults to ``tests/data/wild/psyneulink/v<version>``; files are named
``tests_<script>.json`` / ``.oracle.json`` in ``make_wild.py``'s oracle format (one
``comp.run`` per trial). PsyNeuLink's seeded noise draws from numpy's global generator, which no
MDF file records: as PsyNeuLink's test_mdf.py does, the integrators' noise is fixed for the run
with ``runtime_params`` to the draw of the ONNX random operator the export writes (seeded:
numpy's ``RandomState(seed)`` in float32, the engine's reading of a seeded ONNX random op), and the
same values are stored in the oracle (``runtime_noise``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import psyneulink as pnl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_wild import _SHAPE_KW, VERSION, record  # noqa: E402

#: script -> (composition variable, inputs per trial keyed by mechanism variable) as PsyNeuLink's
#: tests/mdf/test_mdf.py runs them (the stroop stimuli: 5 trials of red/green/color)
SCRIPTS = {
    "model_basic": ("comp", {"A": [[[1.0]]]}),
    "model_basic_non_identity": ("comp", {"A": [[[1.0]]]}),
    "model_udfs": ("comp", {"A": [[[10.0]]]}),
    "model_varied_matrix_sizes": ("comp", {"A": [[[1.0, 2.0]]]}),
    "model_integrators": ("comp", {"A": [[[1.0]]]}),
    "model_nested_comp_with_scheduler": ("comp", {"A": [[[1.0]]]}),
    "model_with_control": ("comp", {"Input": [[0.5], [0.123]], "reward": [[20.0], [20.0]]}),
    "stroop_conflict_monitoring": (
        "Stroop_model",
        {
            "color_input": [[1.0, 0.0]] * 5,
            "word_input": [[0.0, 1.0]] * 5,
            "task_input": [[1.0, 0.0]] * 5,
        },
    ),
}

#: the integrators' noise in model_integrators.py, as its export writes it: node -> (ONNX random
#: operator's distribution, its arguments)
NOISE = {
    "A": ("uniform", {"low": -1.0, "high": 1.0, "seed": 0}),
    "B": ("normal", {"loc": -1.0, "scale": 0.5, "seed": 0}),
    "C": ("normal", {"loc": 0.0, "scale": 0.25, "seed": 0}),
    "D": ("uniform", {"low": -0.5, "high": 0.5, "seed": 0}),
    "E": ("uniform", {"low": -0.25, "high": 0.5, "seed": 0}),
}


def _draw(kind: str, args: dict) -> float:
    """A seeded ONNX RandomUniform/RandomNormal of shape (1, 1), float32 (ONNX's default
    dtype), as mdf_engine reads it: numpy's ``RandomState(seed)`` stream."""
    a = dict(args)
    rng = np.random.RandomState(a.pop("seed"))
    return float(np.float32(getattr(rng, kind)(size=(1, 1), **a)[0, 0]))


def build(script: Path) -> dict:
    """Execute one of PsyNeuLink's scripts; return its variables."""
    scope: dict = {}
    text = script.read_text()
    if _SHAPE_KW != "size":  # the keyword was renamed (make_wild.shaped)
        text = text.replace("size=", f"{_SHAPE_KW}=")
    exec(compile(text, str(script), "exec"), scope)  # PsyNeuLink's own test script
    return scope


def fixed_noise(name: str, scope: dict) -> tuple[dict, dict | None]:
    """``record``'s keyword arguments that fix the noise of script ``name`` for the run (its
    variables ``scope``), and that noise per node (None for a script without noise)."""
    if name != "model_integrators":
        return {}, None
    noise = {k: _draw(*NOISE[k]) for k in NOISE}
    return {"runtime_params": {scope[k]: {"noise": v} for k, v in noise.items()}}, noise


def script_of(src: Path, name: str) -> str:
    """The oracle's ``script``: PsyNeuLink's release and path of the script ``name``."""
    return f"PsyNeuLink {src.parts[-3]} {'/'.join(src.parts[-2:])}/{name}.py"


def write_case(outdir: Path, stem: str, text: str, oracle: dict, label: str = "") -> None:
    """Write ``stem``.json (the export ``text``) and its ``oracle`` beside it."""
    (outdir / f"{stem}.json").write_text(text)
    (outdir / f"{stem}.oracle.json").write_text(json.dumps(oracle, indent=1) + "\n")
    print(f"{label or stem}: {len(oracle['trials'])} trials written")


def command_line() -> tuple[Path, Path, list[str] | None]:
    """The arguments of ``__main__``: SRC [OUTDIR] [--NAME ...] (OUTDIR defaults to the
    corpus folder of the installed PsyNeuLink's version)."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = (
        Path(args[1])
        if len(args) > 1
        else Path(__file__).resolve().parents[2] / "tests/data/wild/psyneulink" / f"v{VERSION}"
    )
    only = [a[2:] for a in sys.argv[1:] if a.startswith("--")] or None
    return Path(args[0]).resolve(), out, only


def main(src: Path, outdir: Path, only: list[str] | None) -> None:
    """Write the scripts ``only`` (default: all, each in a process of its own, since
    PsyNeuLink renames a second mechanism "A" of one process "A-1")."""
    outdir.mkdir(parents=True, exist_ok=True)
    if not only:
        for name in SCRIPTS:
            subprocess.run([sys.executable, __file__, str(src), str(outdir), f"--{name}"])
        return
    for name, (comp_var, by_var) in SCRIPTS.items():
        if name not in only:
            continue
        try:
            scope = build(src / f"{name}.py")
            comp = scope[comp_var]
            inputs = {scope[k]: v for k, v in by_var.items()}
            kw, noise = fixed_noise(name, scope)
            mode = (
                "exact_time" if comp.scheduler.mode == pnl.SchedulingMode.EXACT_TIME else "standard"
            )
            text, oracle = record(name, comp, inputs, mode, f"PsyNeuLink's {name}.py", **kw)
        except Exception as e:  # a script this release cannot build, export or run
            print(f"{name}: not written ({type(e).__name__}: {e})")
            continue
        oracle["script"] = script_of(src, name)
        if noise:
            oracle["runtime_noise"] = noise
        write_case(outdir, f"tests_{name}", text, oracle, label=name)


if __name__ == "__main__":
    main(*command_line())
