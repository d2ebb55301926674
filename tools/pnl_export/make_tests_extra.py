"""Export the rest of PsyNeuLink's own MDF tests (``tests/mdf/test_mdf.py`` of the PsyNeuLink
source distribution) with the installed PsyNeuLink, and record PsyNeuLink's run of each as the
oracle, in ``make_wild.py``'s format (``make_tests_json.py`` writes the scripts run with the
default edge format):

* ``model_backprop.py`` (a learning pathway A -> B -> C; run without learning, as the test runs
  it, on the inputs ``{A: [1, 2, 3]}``: three trials);
* ``model_with_two_disjoint_comps.py`` / ``model_with_two_conjoint_comps.py``: two compositions
  in one file (``write_mdf_file([comp, comp2])``, one graph each); the oracle of
  ``tests_NAME.json`` is ``comp``'s run, that of ``tests_NAME_comp2.json`` (the same file)
  ``comp2``'s, and its ``graph`` names the graph to run;
* the scripts the test also exports with ``simple_edge_format=False`` (each projection an edge,
  also those with a matrix): ``tests_NAME_edges.json``;
* the single-function compositions of ``test_mdf_pnl_results_equivalence_individual_functions``:
  an IntegratorMechanism with a DriftDiffusionIntegrator (rate 0.5, offset 1, non-decision time
  1, seed 0; its ``random_draw`` fixed, as the test fixes it, to the seeded ONNX RandomNormal
  draw the export writes, read as the engine reads it: numpy's ``RandomState(0)``) under no
  termination condition, an Or of two Thresholds, and AfterNCalls(A, 10); and a
  FitzHughNagumoIntegrator (default RK4, and EULER) under AfterNCalls(A, 10).

Run in a venv of one PsyNeuLink release, on the unpacked source distribution::

    pip download psyneulink==0.21.0.0 --no-deps --no-binary :all: && tar xzf psyneulink-*.tar.gz
    /work/venvs/pnl/bin/python tools/pnl_export/make_tests_extra.py \
        psyneulink-0.21.0.0/tests/mdf [OUTDIR] [--NAME ...]

Each case runs in a process of its own (PsyNeuLink renames a second mechanism "A").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import psyneulink as pnl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_tests_json import (  # noqa: E402
    SCRIPTS,
    build,
    command_line,
    fixed_noise,
    script_of,
    write_case,
)
from make_wild import ident, record  # noqa: E402

#: script -> (compositions exported, and per composition its inputs per trial)
MULTI = {
    "model_with_two_disjoint_comps": {"comp": {"A": [[[1.0]]]}, "comp2": {"C": [[[1.0]]]}},
    "model_with_two_conjoint_comps": {"comp": {"A": [[[1.0]]]}, "comp2": {"A": [[[1.0]]]}},
}
#: scripts test_mdf.py also exports with simple_edge_format=False
EDGES = [
    "model_basic",
    "model_basic_non_identity",
    "model_udfs",
    "model_varied_matrix_sizes",
    "model_integrators",
]
#: test_mdf.py's Threshold termination of the DDI (a mechanism variable A in scope)
_DDI_OR = (
    "pnl.Or(pnl.Threshold(A, parameter='value', threshold=A.function.defaults.threshold, "
    "comparator='>=', indices=(0,)), pnl.Threshold(A, parameter='value', "
    "threshold=-1 * A.function.defaults.threshold, comparator='<=', indices=(0,)))"
)
SINGLE = {
    "ddi": None,
    "ddi_threshold": _DDI_OR,
    "ddi_after10": "pnl.AfterNCalls(A, 10)",
    "fhn_rk4": "pnl.AfterNCalls(A, 10)",
    "fhn_euler": "pnl.AfterNCalls(A, 10)",
}


def backprop(src: Path, outdir: Path) -> None:
    scope = build(src / "model_backprop.py")
    inputs = {scope["A"]: [[[1.0]], [[2.0]], [[3.0]]]}
    text, oracle = record("model_backprop", scope["comp"], inputs, doc="model_backprop.py")
    oracle["script"] = script_of(src, "model_backprop")
    write_case(outdir, "tests_model_backprop", text, oracle)


def multi(src: Path, outdir: Path, name: str) -> None:
    scope = build(src / f"{name}.py")
    comps = tuple(scope[c] for c in MULTI[name])
    for comp_var, by_var in MULTI[name].items():
        comp = scope[comp_var]
        inputs = {scope[k]: v for k, v in by_var.items()}
        text, oracle = record(name, comp, inputs, doc=f"{name}.py", exported=comps)
        oracle["script"] = script_of(src, name)
        oracle["graph"] = ident(comp.name)
        stem = f"tests_{name}" + ("" if comp_var == "comp" else f"_{comp_var}")
        write_case(outdir, stem, text, oracle)


def edges(src: Path, outdir: Path, name: str) -> None:
    comp_var, by_var = SCRIPTS[name]
    scope = build(src / f"{name}.py")
    comp = scope[comp_var]
    inputs = {scope[k]: v for k, v in by_var.items()}
    kw, noise = fixed_noise(name, scope)
    text, oracle = record(name, comp, inputs, doc=f"{name}.py", simple_edge_format=False, **kw)
    oracle["script"] = script_of(src, name)
    oracle["simple_edge_format"] = False
    if noise:
        oracle["runtime_noise"] = noise
    write_case(outdir, f"tests_{name}_edges", text, oracle)


def single(outdir: Path, name: str) -> None:
    """test_mdf.py's test_mdf_pnl_results_equivalence_individual_functions."""
    kw: dict = {}
    if name.startswith("ddi"):
        function = pnl.DriftDiffusionIntegrator(rate=0.5, offset=1, non_decision_time=1, seed=0)
        draw = float(np.float32(np.random.RandomState(0).normal(0.0, 1.0, size=(1,))[0]))
    elif name == "fhn_euler":
        function = pnl.FitzHughNagumoIntegrator(integration_method="EULER")
    else:
        function = pnl.FitzHughNagumoIntegrator
    A = pnl.IntegratorMechanism(name="A", function=function)
    comp = pnl.Composition(pathways=[A])
    if SINGLE[name] is not None:
        cond = eval(SINGLE[name], {"pnl": pnl, "A": A})  # test_mdf.py's condition text
        comp.scheduler.termination_conds = {pnl.TimeScale.TRIAL: cond}
    if name.startswith("ddi"):
        kw["runtime_params"] = {A: {"random_draw": draw}}
    text, oracle = record(name, comp, {A: [[[1.0]]]}, doc=f"test_mdf.py {name}", **kw)
    oracle["script"] = "test_mdf.py test_mdf_pnl_results_equivalence_individual_functions"
    if name.startswith("ddi"):
        oracle["runtime_random_draw"] = draw
    write_case(outdir, f"tests_{name}", text, oracle)


def main(src: Path, outdir: Path, only: list[str] | None) -> None:
    cases = ["model_backprop", *MULTI, *(f"{n}_edges" for n in EDGES), *SINGLE]
    outdir.mkdir(parents=True, exist_ok=True)
    if not only:
        for name in cases:
            subprocess.run([sys.executable, __file__, str(src), str(outdir), f"--{name}"])
        return
    for name in only:
        try:
            if name == "model_backprop":
                backprop(src, outdir)
            elif name in MULTI:
                multi(src, outdir, name)
            elif name.endswith("_edges"):
                edges(src, outdir, name[: -len("_edges")])
            else:
                single(outdir, name)
        except Exception as e:  # a case this release cannot build, export or run
            print(f"{name}: not written ({type(e).__name__}: {e})")


if __name__ == "__main__":
    main(*command_line())
