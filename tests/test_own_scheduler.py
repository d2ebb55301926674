"""The engine's own scheduler (``mdf_engine.schedulers.own``), which runs the compiled
backend's warm-up without graph-scheduler: on every condition case of test_conditions.py that
it takes, its time steps equal graph-scheduler's own run of the same conditions (the oracle);
it declines the rest (absolute time, WhenFinished, JustRan, conditions the compiled loop lacks), which
then run under graph-scheduler; and
a first compiled run (and a first few evaluate() calls, whose time steps equal the
interpreter's) of the cold-start benchmark's models imports no graph-scheduler at all."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT
from gs_oracle import oracle_time_steps
from test_conditions import CASES, chain_model

from mdf_engine.interpreter import InterpretedGraph
from mdf_engine.plan import plan_graph
from mdf_engine.schedulers.kinds import JustRan, TimeInterval, TimeTermination
from mdf_engine.schedulers.own import OwnScheduler
from mdf_engine.schedulers.parse import parse_condition

pytestmark = pytest.mark.filterwarnings("ignore:.*as its owner:UserWarning")


def _declined(case) -> bool:
    """The case has a condition the own scheduler leaves to graph-scheduler."""
    graph = chain_model(case.nodes, case.term, case.finish).graphs[0]
    kinds = [parse_condition(d, "c", graph) for d in [*case.nodes.values(), *case.term.values()]]
    return any(
        isinstance(k, (TimeInterval, TimeTermination, JustRan))
        or type(k).__name__.startswith("When")
        for kind in kinds
        for k in kind.walk()
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_own_scheduler_matches_graph_scheduler(case):
    model = chain_model(case.nodes, case.term, case.finish)
    interp = InterpretedGraph(plan_graph(model, model.graphs[0]), own_scheduler=True)
    if isinstance(interp.scheduler, OwnScheduler):
        assert not _declined(case)
    else:  # (declined: graph-scheduler's; so are conditions the compiled loop lacks)
        assert _declined(case) or not case.compiled
    for _ in range(case.steps):
        interp.evaluate()
    assert interp.time_steps == oracle_time_steps(case.oracle, case.steps, case.finish)


COLD_MODELS = [
    ROOT / "tests/data/pnl/linear_chain.json",
    ROOT / "examples/conditions_threshold.json",
    ROOT / "examples/fitzhugh_nagumo.json",
]

FIRST_RUN = """
import sys
from mdf_engine import Simulation
sim = Simulation(sys.argv[1], backend="compiled")
sim.run(steps=10, dt=0.01)
assert sim.runner.origin == "generated", sim.runner.origin
ev = Simulation(sys.argv[1], backend="compiled")  # (evaluate() reads each update's steps)
steps = []
for _ in range(3):
    ev.evaluate(time_increment=0.01)
    steps.append((ev.time_steps, ev.time_step_times))
late = sorted(m for m in ("graph_scheduler", "networkx", "pint") if m in sys.modules)
ref = Simulation(sys.argv[1], backend="interpreted")
for k in range(3):
    ref.evaluate(time_increment=0.01)
    assert (ref.time_steps, ref.time_step_times) == steps[k], (k, steps[k])
print(",".join(late) or "none")
"""


@pytest.mark.parametrize("path", COLD_MODELS, ids=[p.stem for p in COLD_MODELS])
def test_first_compiled_run_imports_no_graph_scheduler(path, tmp_path):
    env = {**os.environ, "MDF_ENGINE_CACHE": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_RUN, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "none"
