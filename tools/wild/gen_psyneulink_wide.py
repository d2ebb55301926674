"""Write the wide PsyNeuLink corpus: many small compositions of the pieces researchers use
(every transfer function, the integrators, DDM, LCA, recurrent mechanisms, ports, projection
matrices, nested compositions, scheduling conditions), each exported by PsyNeuLink and run by
PsyNeuLink as the oracle.

Run with the Python of the PsyNeuLink 0.21 venv (tests/data/wild/psyneulink/README.md)::

    /work/venvs/pnl/bin/python tools/wild/gen_psyneulink_wide.py [--llvm] [NAME ...]

It writes ``wide_NAME.json`` (``pnl.get_mdf_serialized(comp)`` before the run) and
``wide_NAME.oracle.json`` (the oracle format of ``tools/pnl_export/make_wild.py``: inputs,
every output port per trial, results, execution lists) into
``tests/data/wild/psyneulink/v<version>/``, and ``tools/wild/gen_psyneulink_wide.report.json``:
per composition, written or not (and why PsyNeuLink could not build, run or export it), and
with ``--llvm`` whether PsyNeuLink's compiled run (``ExecutionMode.LLVMRun``, a fresh copy of
the composition, all trials in one ``run``) gives the same ``results`` as its Python run.

Random matrices are drawn by numpy with the seed named in the builder; noise is 0 everywhere
(PsyNeuLink's noise streams are not in the file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import psyneulink as pnl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pnl_export"))
import make_wild  # noqa: E402
from make_wild import VERSION, _plain, ident, record, shaped  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "wild" / "psyneulink" / f"v{VERSION}"
REPORT = Path(__file__).resolve().with_name("gen_psyneulink_wide.report.json")

MODELS: dict = {}


def model(fn):
    """Register a builder: it returns (composition, inputs per mechanism per trial)."""
    MODELS[fn.__name__] = fn
    return fn


def one_transfer(name: str, function, inputs, **kw):
    """A composition of one TransferMechanism of two elements with ``function``."""
    m = pnl.TransferMechanism(name=name, function=function, **shaped(2), **kw)
    comp = pnl.Composition(name=f"c_{name}", pathways=[[m]])
    return comp, {m: inputs}


THREE = [[1.0, -0.5], [0.25, 2.0], [-1.5, 0.0]]

# -- transfer functions -----------------------------------------------------------------------


@model
def tm_linear():
    """Linear with slope and intercept."""
    return one_transfer("lin", pnl.Linear(slope=2.0, intercept=-0.5), THREE)


@model
def tm_logistic():
    """Logistic with gain, bias, offset, x_0 and scale."""
    f = pnl.Logistic(gain=2.0, bias=0.3, offset=0.1, x_0=0.2, scale=1.5)
    return one_transfer("logi", f, THREE)


@model
def tm_tanh():
    """Tanh with gain, bias, offset and x_0."""
    return one_transfer("tanh", pnl.Tanh(gain=1.5, bias=0.2, offset=-0.1, x_0=0.3), THREE)


@model
def tm_relu():
    """ReLU with gain, bias and leak."""
    return one_transfer("relu", pnl.ReLU(gain=1.5, bias=0.2, leak=0.1), THREE)


@model
def tm_exponential():
    """Exponential with rate, scale, bias and offset."""
    f = pnl.Exponential(rate=0.5, scale=2.0, bias=0.1, offset=-0.3)
    return one_transfer("expo", f, THREE)


@model
def tm_gaussian():
    """Gaussian with standard deviation, bias, scale and offset."""
    f = pnl.Gaussian(standard_deviation=0.7, bias=0.1, scale=1.2, offset=0.2)
    return one_transfer("gauss", f, THREE)


@model
def tm_softmax():
    """SoftMax with a gain, output ALL."""
    return one_transfer("smax", pnl.SoftMax(gain=2.0), THREE)


@model
def tm_softmax_max():
    """SoftMax with output MAX_VAL (the largest probability, the others 0)."""
    return one_transfer("smaxv", pnl.SoftMax(gain=1.0, output=pnl.MAX_VAL), THREE)


@model
def tm_softmax_indicator():
    """SoftMax with output MAX_INDICATOR."""
    return one_transfer("smaxi", pnl.SoftMax(gain=1.0, output=pnl.MAX_INDICATOR), THREE)


@model
def tm_identity():
    """Identity."""
    return one_transfer("ident", pnl.Identity(), THREE)


@model
def tm_integrator_mode():
    """Logistic in integrator mode (integration_rate 0.3, noise 0), state across trials."""
    f = pnl.Logistic(gain=1.2)
    return one_transfer("tmint", f, THREE, integrator_mode=True, integration_rate=0.3, noise=0.0)


@model
def tm_integrator_initial():
    """Linear in integrator mode with an initial value and on_resume_integrator_mode."""
    return one_transfer(
        "tminit",
        pnl.Linear(slope=2.0),
        THREE,
        integrator_mode=True,
        integration_rate=0.6,
        initial_value=[[0.5, -0.5]],
    )


@model
def tm_clip():
    """Linear with clip [-1, 1.5]."""
    return one_transfer("clip", pnl.Linear(slope=3.0), THREE, clip=[-1.0, 1.5])


@model
def tm_integrator_clip():
    """Integrator mode and clip together."""
    return one_transfer(
        "tmclip",
        pnl.Linear(slope=2.0, intercept=0.5),
        THREE,
        integrator_mode=True,
        integration_rate=0.5,
        clip=[-0.8, 1.0],
    )


@model
def tm_multi_trial_settle():
    """Integrator mode, 5 passes per trial (AfterNCalls termination)."""
    m = pnl.TransferMechanism(
        name="settle", **shaped(2), integrator_mode=True, integration_rate=0.25
    )
    comp = pnl.Composition(name="c_settle", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 5)}
    return comp, {m: THREE}


# -- processing mechanisms and combination functions ------------------------------------------


@model
def pm_lincomb_weights():
    """ProcessingMechanism with two input ports and LinearCombination weights."""
    m = pnl.ProcessingMechanism(
        name="lcw",
        input_ports=["a", "b"],
        function=pnl.LinearCombination(weights=[[1.0], [-2.0]]),
    )
    comp = pnl.Composition(name="c_lcw", pathways=[[m]])
    return comp, {m: [[[1.0], [0.5]], [[2.0], [-1.0]], [[0.0], [3.0]]]}


@model
def pm_lincomb_product():
    """LinearCombination PRODUCT with scale and offset, two input ports."""
    m = pnl.ProcessingMechanism(
        name="lcp",
        input_ports=["a", "b"],
        function=pnl.LinearCombination(operation=pnl.PRODUCT, scale=2.0, offset=0.5),
    )
    comp = pnl.Composition(name="c_lcp", pathways=[[m]])
    return comp, {m: [[[1.0], [0.5]], [[2.0], [-1.0]], [[3.0], [3.0]]]}


@model
def pm_lincomb_exponents():
    """LinearCombination with exponents (SUM of a squared and b to the -1)."""
    m = pnl.ProcessingMechanism(
        name="lce",
        input_ports=["a", "b"],
        function=pnl.LinearCombination(exponents=[[2.0], [-1.0]]),
    )
    comp = pnl.Composition(name="c_lce", pathways=[[m]])
    return comp, {m: [[[1.0], [0.5]], [[2.0], [-1.0]], [[3.0], [4.0]]]}


@model
def pm_reduce():
    """Reduce (SUM of the elements) with weights, scale and offset."""
    m = pnl.ProcessingMechanism(
        name="red",
        **shaped(3),
        function=pnl.Reduce(weights=[1.0, -1.0, 2.0], scale=0.5, offset=1.0),
    )
    comp = pnl.Composition(name="c_red", pathways=[[m]])
    return comp, {m: [[1.0, 2.0, 3.0], [0.5, 0.5, -1.0], [0.0, 4.0, 1.0]]}


@model
def pm_reduce_product():
    """Reduce with operation PRODUCT."""
    m = pnl.ProcessingMechanism(
        name="redp", **shaped(3), function=pnl.Reduce(operation=pnl.PRODUCT)
    )
    comp = pnl.Composition(name="c_redp", pathways=[[m]])
    return comp, {m: [[1.0, 2.0, 3.0], [0.5, 0.5, -1.0], [2.0, 4.0, 1.0]]}


@model
def pm_combine_means():
    """CombineMeans of two input ports."""
    m = pnl.ProcessingMechanism(name="cm", input_ports=["a", "b"], function=pnl.CombineMeans())
    comp = pnl.Composition(name="c_cm", pathways=[[m]])
    return comp, {m: [[[1.0, 3.0], [0.5, 2.5]], [[2.0, 0.0], [-1.0, 1.0]]]}


@model
def pm_default():
    """A ProcessingMechanism with its default function (Linear) fed by another."""
    a = pnl.ProcessingMechanism(name="pa", **shaped(2))
    b = pnl.ProcessingMechanism(name="pb", **shaped(2), function=pnl.Linear(slope=-1.0))
    comp = pnl.Composition(name="c_pm", pathways=[[a, b]])
    return comp, {a: THREE}


# -- integrators ------------------------------------------------------------------------------


def one_integrator(name, function, inputs, n_calls=1, **kw):
    m = pnl.IntegratorMechanism(name=name, function=function, **kw)
    comp = pnl.Composition(name=f"c_{name}", pathways=[[m]])
    if n_calls > 1:
        comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, n_calls)}
    return comp, {m: inputs}


ONE = [[1.0], [0.5], [-1.0], [2.0]]


@model
def int_adaptive():
    """AdaptiveIntegrator with rate, offset and initializer, 3 calls per trial."""
    f = pnl.AdaptiveIntegrator(rate=0.4, offset=0.1, initializer=0.2, noise=0.0)
    return one_integrator("adapt", f, ONE, 3)


@model
def int_simple():
    """SimpleIntegrator with rate and offset, 2 calls per trial."""
    f = pnl.SimpleIntegrator(rate=0.5, offset=-0.2, noise=0.0)
    return one_integrator("simp", f, ONE, 2)


@model
def int_accumulator():
    """AccumulatorIntegrator with rate and increment (its variable is ignored)."""
    f = pnl.AccumulatorIntegrator(rate=0.8, increment=0.2, noise=0.0)
    return one_integrator("accum", f, ONE, 2)


@model
def int_lci():
    """LeakyCompetingIntegrator with leak, rate and time step size, 3 calls per trial."""
    f = pnl.LeakyCompetingIntegrator(leak=0.3, rate=1.5, time_step_size=0.2, noise=0.0)
    return one_integrator("lci", f, ONE, 3)


@model
def int_ddi():
    """DriftDiffusionIntegrator (noise 0) with rate, starting value, threshold and
    non-decision time; 4 calls per trial."""
    f = pnl.DriftDiffusionIntegrator(
        rate=0.5, starting_value=0.1, threshold=1.0, time_step_size=0.1, non_decision_time=0.2
    )
    return one_integrator("ddi", f, ONE, 4)


@model
def int_ddi_when_finished():
    """DriftDiffusionIntegrator to its threshold: the trial ends WhenFinished(ddi)."""
    m = pnl.IntegratorMechanism(
        name="ddiw",
        function=pnl.DriftDiffusionIntegrator(rate=1.0, threshold=0.6, time_step_size=0.1),
    )
    comp = pnl.Composition(name="c_ddiw", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.WhenFinished(m)}
    return comp, {m: [[1.0], [2.0], [-1.5]]}


@model
def int_dual_adaptive():
    """DualAdaptiveIntegrator (noise 0), 2 calls per trial."""
    f = pnl.DualAdaptiveIntegrator(short_term_rate=0.8, long_term_rate=0.2)
    return one_integrator("dual", f, ONE, 2)


@model
def int_interactive_activation():
    """InteractiveActivationIntegrator with rate, decay, rest, max and min, 3 calls."""
    f = pnl.InteractiveActivationIntegrator(
        rate=0.6, decay=0.2, rest=0.05, max_val=1.0, min_val=-0.5
    )
    return one_integrator("iai", f, ONE, 3)


@model
def int_ornstein_uhlenbeck():
    """OrnsteinUhlenbeckIntegrator (noise 0), 3 calls per trial."""
    f = pnl.OrnsteinUhlenbeckIntegrator(rate=0.5, decay=0.8, offset=0.1, time_step_size=0.1)
    return one_integrator("ou", f, ONE, 3)


# -- DDM, LCA, recurrent ----------------------------------------------------------------------


@model
def ddm_analytical():
    """DDM with DriftDiffusionAnalytical, all its standard output ports."""
    d = pnl.DDM(
        name="ddma",
        function=pnl.DriftDiffusionAnalytical(
            drift_rate=0.8, threshold=1.5, starting_value=-0.2, noise=1.0, non_decision_time=0.3
        ),
        output_ports=[
            pnl.DECISION_VARIABLE,
            pnl.RESPONSE_TIME,
            pnl.PROBABILITY_UPPER_THRESHOLD,
            pnl.PROBABILITY_LOWER_THRESHOLD,
            pnl.RT_CORRECT_MEAN,
            pnl.RT_CORRECT_VARIANCE,
        ],
    )
    comp = pnl.Composition(name="c_ddma", pathways=[[d]])
    return comp, {d: [[2.0], [0.5], [-1.0], [0.0]]}


@model
def ddm_integrator():
    """DDM with a DriftDiffusionIntegrator (noise 0), run to its threshold (WhenFinished)."""
    d = pnl.DDM(
        name="ddmi",
        function=pnl.DriftDiffusionIntegrator(
            rate=1.0, threshold=0.5, time_step_size=0.1, noise=0.0
        ),
        reset_stateful_function_when=pnl.AtTrialStart(),
    )
    comp = pnl.Composition(name="c_ddmi", pathways=[[d]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.WhenFinished(d)}
    return comp, {d: [[1.0], [-2.0], [0.7]]}


@model
def lca_mechanism():
    """LCAMechanism with leak, competition and self excitation, 4 passes per trial."""
    m = pnl.LCAMechanism(
        name="lca",
        **shaped(3),
        leak=0.4,
        competition=0.5,
        self_excitation=0.2,
        time_step_size=0.1,
        integrator_mode=True,
    )
    comp = pnl.Composition(name="c_lca", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 4)}
    return comp, {m: [[1.0, 0.5, 0.0], [0.0, 1.0, 0.2], [0.3, 0.3, 1.0]]}


@model
def lca_no_competition():
    """LCAMechanism without competition or self excitation (nothing recurrent)."""
    m = pnl.LCAMechanism(
        name="lcan",
        **shaped(2),
        leak=0.5,
        competition=0.0,
        self_excitation=0.0,
        time_step_size=0.2,
        integrator_mode=True,
    )
    inp = pnl.ProcessingMechanism(name="lcan_in", **shaped(2))
    comp = pnl.Composition(name="c_lcan", pathways=[[inp, m]])
    comp.scheduler.add_condition(m, pnl.EveryNCalls(inp, 1))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 3)}
    return comp, {inp: THREE}


@model
def rtm_auto_hetero():
    """RecurrentTransferMechanism with auto and hetero, 3 passes per trial."""
    m = pnl.RecurrentTransferMechanism(
        name="rtm", **shaped(2), auto=0.5, hetero=-0.3, function=pnl.Logistic()
    )
    comp = pnl.Composition(name="c_rtm", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 3)}
    return comp, {m: THREE}


@model
def rtm_integrator():
    """RecurrentTransferMechanism in integrator mode with a matrix, 3 passes per trial."""
    m = pnl.RecurrentTransferMechanism(
        name="rtmi",
        **shaped(2),
        matrix=[[0.2, -0.4], [0.1, 0.3]],
        integrator_mode=True,
        integration_rate=0.5,
        function=pnl.Linear(slope=1.0),
    )
    comp = pnl.Composition(name="c_rtmi", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 3)}
    return comp, {m: THREE}


@model
def kwta():
    """KWTAMechanism choosing k=1 of 3, 2 passes."""
    m = pnl.KWTAMechanism(name="kwta", **shaped(3), k_value=1, threshold=0.0, ratio=0.5)
    comp = pnl.Composition(name="c_kwta", pathways=[[m]])
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(m, 2)}
    return comp, {m: [[1.0, 0.5, 0.0], [0.0, 1.0, 0.2]]}


# -- ports ------------------------------------------------------------------------------------


@model
def ports_standard_outputs():
    """TransferMechanism with RESULT, MEAN, VARIANCE, MEDIAN, STANDARD_DEVIATION, MAX_VAL,
    MAX_ABS_VAL, MAX_INDICATOR, PROB output ports."""
    m = pnl.TransferMechanism(
        name="stdout",
        **shaped(3),
        function=pnl.Linear(slope=2.0),
        output_ports=[
            pnl.RESULT,
            pnl.MEAN,
            pnl.VARIANCE,
            pnl.MEDIAN,
            pnl.STANDARD_DEVIATION,
            pnl.MAX_VAL,
            pnl.MAX_ABS_VAL,
            pnl.MAX_INDICATOR,
            pnl.MAX_ABS_INDICATOR,
        ],
    )
    comp = pnl.Composition(name="c_stdout", pathways=[[m]])
    return comp, {m: [[1.0, -3.0, 2.0], [0.5, 0.25, 4.0]]}


@model
def ports_two_inputs_outputs():
    """A mechanism with two input ports (its function gets both) and two output ports each
    reading one item of the value (OWNER_VALUE index), feeding two receivers."""
    m = pnl.ProcessingMechanism(
        name="two",
        input_ports=["x", "y"],
        function=pnl.Linear(slope=2.0),
        output_ports=[
            pnl.OutputPort(name="first", variable=(pnl.OWNER_VALUE, 0)),
            pnl.OutputPort(name="second", variable=(pnl.OWNER_VALUE, 1)),
        ],
    )
    r1 = pnl.TransferMechanism(name="r1", function=pnl.Linear(slope=-1.0))
    r2 = pnl.TransferMechanism(name="r2", function=pnl.Logistic())
    comp = pnl.Composition(name="c_two")
    comp.add_nodes([m, r1, r2])
    comp.add_projection(pnl.MappingProjection(), m.output_ports[0], r1)
    comp.add_projection(pnl.MappingProjection(), m.output_ports[1], r2)
    return comp, {m: [[[1.0], [2.0]], [[-0.5], [0.5]], [[3.0], [0.0]]]}


@model
def ports_input_weights():
    """A TransferMechanism whose two input ports are combined (its default function sums
    ports? no: each port is one item) with a LinearCombination, output sent on."""
    a = pnl.TransferMechanism(name="ia")
    b = pnl.TransferMechanism(name="ib")
    c = pnl.ProcessingMechanism(
        name="ic", input_ports=["p", "q"], function=pnl.LinearCombination(weights=[[2.0], [1.0]])
    )
    comp = pnl.Composition(name="c_iw")
    comp.add_nodes([a, b, c])
    comp.add_projection(pnl.MappingProjection(matrix=[[1.5]]), a, c.input_ports[0])
    comp.add_projection(pnl.MappingProjection(matrix=[[-1.0]]), b, c.input_ports[1])
    return comp, {a: [[1.0], [2.0], [0.0]], b: [[0.5], [-1.0], [3.0]]}


# -- projections ------------------------------------------------------------------------------


@model
def proj_full_matrix():
    """2 -> 3 full matrix, then 3 -> 2 FULL_CONNECTIVITY."""
    a = pnl.TransferMechanism(name="fa", **shaped(2))
    b = pnl.TransferMechanism(name="fb", **shaped(3), function=pnl.Logistic())
    c = pnl.TransferMechanism(name="fc", **shaped(2))
    comp = pnl.Composition(name="c_full")
    comp.add_linear_processing_pathway(
        [a, np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]]), b, pnl.FULL_CONNECTIVITY_MATRIX, c]
    )
    return comp, {a: THREE}


@model
def proj_identity_hollow():
    """IDENTITY_MATRIX then HOLLOW_MATRIX projections."""
    a = pnl.TransferMechanism(name="ha", **shaped(3))
    b = pnl.TransferMechanism(name="hb", **shaped(3), function=pnl.Linear(slope=2.0))
    c = pnl.TransferMechanism(name="hc", **shaped(3))
    comp = pnl.Composition(name="c_hollow")
    comp.add_linear_processing_pathway([a, pnl.IDENTITY_MATRIX, b, pnl.HOLLOW_MATRIX, c])
    return comp, {a: [[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]}


@model
def proj_random_seeded():
    """A random 3 x 2 matrix drawn by numpy (default_rng(1234)), then a random 2 x 2
    (seed 99); the matrices are in the file."""
    m1 = np.random.default_rng(1234).uniform(-1, 1, (3, 2))
    m2 = np.random.default_rng(99).uniform(-1, 1, (2, 2))
    a = pnl.TransferMechanism(name="ra", **shaped(3))
    b = pnl.TransferMechanism(name="rb", **shaped(2), function=pnl.Tanh())
    c = pnl.TransferMechanism(name="rc", **shaped(2), function=pnl.ReLU())
    comp = pnl.Composition(name="c_rand")
    comp.add_linear_processing_pathway([a, m1, b, m2, c])
    return comp, {a: [[1.0, 2.0, 3.0], [0.0, -1.0, 0.5], [1.0, 1.0, 1.0]]}


@model
def proj_random_pnl():
    """PsyNeuLink's RANDOM_CONNECTIVITY_MATRIX (drawn by PsyNeuLink; the file holds it)."""
    a = pnl.TransferMechanism(name="rpa", **shaped(2))
    b = pnl.TransferMechanism(name="rpb", **shaped(2))
    comp = pnl.Composition(name="c_randp")
    comp.add_linear_processing_pathway([a, pnl.RANDOM_CONNECTIVITY_MATRIX, b])
    return comp, {a: THREE}


@model
def fan_out_in():
    """One input fans out to three mechanisms of different functions, which fan into one
    two-element mechanism."""
    s = pnl.TransferMechanism(name="src", **shaped(2))
    b1 = pnl.TransferMechanism(name="b1", **shaped(2), function=pnl.Logistic(gain=2.0))
    b2 = pnl.TransferMechanism(name="b2", **shaped(1), function=pnl.Tanh())
    b3 = pnl.TransferMechanism(name="b3", **shaped(3), function=pnl.ReLU(leak=0.05))
    t = pnl.TransferMechanism(name="tgt", **shaped(2))
    comp = pnl.Composition(name="c_fan")
    comp.add_nodes([s, b1, b2, b3, t])
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0, 0.0], [0.0, -1.0]]), s, b1)
    comp.add_projection(pnl.MappingProjection(matrix=[[0.5], [0.5]]), s, b2)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0, -1.0, 0.5], [2.0, 0.0, -0.5]]), s, b3)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0, 0.0], [0.0, 1.0]]), b1, t)
    comp.add_projection(pnl.MappingProjection(matrix=[[2.0, -2.0]]), b2, t)
    comp.add_projection(pnl.MappingProjection(matrix=[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]), b3, t)
    return comp, {s: THREE}


# -- nested compositions ----------------------------------------------------------------------


@model
def nested_two_levels():
    """An outer mechanism and a composition holding a mechanism and another composition."""
    a = pnl.TransferMechanism(name="na", function=pnl.Linear(slope=2.0))
    b = pnl.TransferMechanism(name="nb", function=pnl.Logistic())
    c = pnl.TransferMechanism(name="nc", function=pnl.Linear(slope=-1.0, intercept=1.0))
    d = pnl.TransferMechanism(name="nd", function=pnl.Tanh())
    deep = pnl.Composition(name="deep", pathways=[[c, d]])
    mid = pnl.Composition(name="mid")
    mid.add_node(b)
    mid.add_node(deep)
    comp = pnl.Composition(name="c_nest2")
    comp.add_node(a)
    comp.add_node(mid)
    return comp, {a: [[1.0], [0.5], [-2.0]], b: [[0.0], [1.0], [2.0]], c: [[1.0], [-1.0], [0.5]]}


@model
def nested_pathway():
    """A pathway through a nested composition: outer A -> inner (B -> C) -> outer D."""
    a = pnl.TransferMechanism(name="pa_out", function=pnl.Linear(slope=2.0))
    b = pnl.TransferMechanism(name="pb_in", function=pnl.Logistic())
    c = pnl.TransferMechanism(name="pc_in", function=pnl.Linear(slope=3.0))
    d = pnl.TransferMechanism(name="pd_out", function=pnl.Linear(intercept=1.0))
    inner = pnl.Composition(name="inner_p", pathways=[[b, c]])
    comp = pnl.Composition(name="c_nestp", pathways=[[a, inner, d]])
    return comp, {a: [[1.0], [0.5], [-2.0]]}


# -- conditions -------------------------------------------------------------------------------


def chain3(tag, fa=None, fb=None, fc=None):
    a = pnl.TransferMechanism(name=f"{tag}A", function=fa or pnl.Linear(slope=2.0))
    b = pnl.TransferMechanism(name=f"{tag}B", function=fb or pnl.Linear(intercept=1.0))
    c = pnl.TransferMechanism(name=f"{tag}C", function=fc or pnl.Linear(slope=-0.5))
    comp = pnl.Composition(name=f"c_{tag}", pathways=[[a, b, c]])
    return comp, a, b, c


@model
def cond_every_after():
    """EveryNCalls(A, 2) for B, AfterNCalls(B, 2) for C; end after 2 calls of C."""
    comp, a, b, c = chain3("ea", pnl.Linear(slope=1.0, intercept=0.5))
    comp.scheduler.add_condition(b, pnl.EveryNCalls(a, 2))
    comp.scheduler.add_condition(c, pnl.AfterNCalls(b, 2))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(c, 2)}
    return comp, {a: ONE[:3]}


@model
def cond_pass():
    """AtPass(0) for A, AfterPass(1) for B, EveryNPasses(2) for C; end AfterNPasses(5)."""
    comp, a, b, c = chain3("ps")
    comp.scheduler.add_condition(a, pnl.AtPass(0))
    comp.scheduler.add_condition(b, pnl.AfterPass(1))
    comp.scheduler.add_condition(c, pnl.EveryNPasses(2))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNPasses(5)}
    return comp, {a: ONE[:3]}


@model
def cond_any_all_not():
    """Any(AtPass(0), AfterNCalls(A, 3)) for A, All(EveryNCalls(A, 1), Not(AtPass(2))) for B,
    Not(BeforeNCalls(B, 2)) for C; end after 4 passes."""
    comp, a, b, c = chain3("aan")
    comp.scheduler.add_condition(a, pnl.Any(pnl.AtPass(0), pnl.AfterNCalls(a, 3)))
    comp.scheduler.add_condition(b, pnl.All(pnl.EveryNCalls(a, 1), pnl.Not(pnl.AtPass(2))))
    comp.scheduler.add_condition(c, pnl.Not(pnl.BeforeNCalls(b, 2)))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNPasses(4)}
    return comp, {a: ONE[:3]}


@model
def cond_when_finished():
    """A DDI integrates to its threshold; B runs WhenFinished(DDI); the trial ends when B has
    run (AfterNCalls(B, 1))."""
    ddi = pnl.IntegratorMechanism(
        name="wf_ddi",
        function=pnl.DriftDiffusionIntegrator(rate=1.0, threshold=0.35, time_step_size=0.1),
    )
    b = pnl.TransferMechanism(name="wf_B", function=pnl.Linear(slope=10.0))
    comp = pnl.Composition(name="c_wf", pathways=[[ddi, b]])
    comp.scheduler.add_condition(b, pnl.WhenFinished(ddi))
    comp.scheduler.add_condition(ddi, pnl.Not(pnl.WhenFinished(ddi)))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(b, 1)}
    return comp, {ddi: [[1.0], [2.0], [0.5]]}


@model
def cond_at_ncalls_just_ran():
    """AtNCalls(A, 2) for B, JustRan(A) for C; end AfterNCalls(A, 4)."""
    comp, a, b, c = chain3("jr")
    comp.scheduler.add_condition(a, pnl.Always())
    comp.scheduler.add_condition(b, pnl.AtNCalls(a, 2))
    comp.scheduler.add_condition(c, pnl.JustRan(b))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(a, 4)}
    return comp, {a: ONE[:3]}


@model
def cond_all_have_run():
    """Two inputs; C waits for AllHaveRun(A, B); A every pass, B every 2 passes; end
    AfterNCalls(C, 2)."""
    a = pnl.TransferMechanism(name="ahA", function=pnl.Linear(slope=2.0))
    b = pnl.TransferMechanism(name="ahB", function=pnl.Linear(intercept=-1.0))
    c = pnl.ProcessingMechanism(
        name="ahC", input_ports=["u", "v"], function=pnl.LinearCombination()
    )
    comp = pnl.Composition(name="c_ah")
    comp.add_nodes([a, b, c])
    comp.add_projection(pnl.MappingProjection(), a, c.input_ports[0])
    comp.add_projection(pnl.MappingProjection(), b, c.input_ports[1])
    comp.scheduler.add_condition(b, pnl.EveryNPasses(2))
    comp.scheduler.add_condition(c, pnl.AllHaveRun(a, b))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(c, 2)}
    return comp, {a: ONE[:3], b: [[0.0], [1.0], [2.0]]}


@model
def cond_threshold():
    """An integrator A accumulates until Threshold(A, value >= 2.5) ends the trial."""
    a = pnl.IntegratorMechanism(name="thA", function=pnl.SimpleIntegrator(rate=1.0))
    b = pnl.TransferMechanism(name="thB", function=pnl.Linear(slope=0.5))
    comp = pnl.Composition(name="c_th", pathways=[[a, b]])
    comp.termination_processing = {
        pnl.TimeScale.TRIAL: pnl.Threshold(a, "value", 2.5, ">=", indices=(0, 0))
    }
    return comp, {a: [[1.0], [0.5], [2.0]]}


@model
def cond_time_interval():
    """EXACT_TIME: A every 2 ms, B every 1 ms from 1 ms, C every 3 ms; end after 3 calls
    of C."""
    comp, a, b, c = chain3("ti")
    comp.scheduler.mode = pnl.SchedulingMode.EXACT_TIME
    comp.scheduler.add_condition(a, pnl.TimeInterval(repeat=2))
    comp.scheduler.add_condition(b, pnl.TimeInterval(start=1, repeat=1))
    comp.scheduler.add_condition(c, pnl.TimeInterval(repeat=3))
    comp.termination_processing = {pnl.TimeScale.TRIAL: pnl.AfterNCalls(c, 3)}
    return comp, {a: ONE[:3]}


def _mdf_nodes(mdf: dict) -> dict:
    nodes = {}

    def walk(graph):
        for nid, node in graph["nodes"].items():
            nodes[nid] = node
            if "nodes" in node:
                walk(node)

    for graph in next(iter(mdf.values()))["graphs"].values():
        walk(graph)
    return nodes


def port_inputs(mdf: dict, inputs: dict) -> dict:
    """Per MDF input port id, its value in each trial: a mechanism of one input port gets
    its trial value there (``make_wild.external_port``); one of several input ports gets the
    k-th item of its trial value in its k-th port."""
    nodes = _mdf_nodes(mdf)
    out = {}
    for mech, per_trial in inputs.items():
        if len(mech.input_ports) == 1:
            out[make_wild.external_port(mdf, mech)] = [_plain(x) for x in per_trial]
            continue
        ports = nodes[ident(mech.name)].get("input_ports", {})
        for k, port in enumerate(mech.input_ports):
            pid = ident(f"{mech.name}_{port.name}")
            if pid not in ports:
                raise RuntimeError(f"no input port {pid} among {list(ports)}")
            out[pid] = [_plain(x[k]) for x in per_trial]
    return out


def build_and_record(name: str, build):
    comp, inputs = build()
    mode = "exact_time" if comp.scheduler.mode == pnl.SchedulingMode.EXACT_TIME else "standard"
    real = make_wild.external_port
    make_wild.external_port = lambda mdf, mech: mech.name  # the oracle's inputs: port_inputs
    try:
        text, oracle = record(f"wide_{name}", comp, inputs, mode, build.__doc__ or "")
    finally:
        make_wild.external_port = real
    oracle["inputs"] = port_inputs(json.loads(text), inputs)
    return text, oracle


def llvm_check(build, oracle: dict) -> str:
    """PsyNeuLink's LLVMRun of a fresh copy against its Python run (the oracle's results)."""
    try:
        comp, inputs = build()
        comp.run(inputs=inputs, execution_mode=pnl.ExecutionMode.LLVMRun)
        got = [_plain(r) for r in comp.results]
    except Exception as e:  # PsyNeuLink's compiler does not take every composition
        return f"LLVMRun failed: {type(e).__name__}: {str(e)[:200]}"
    try:
        for g, w in zip(got, oracle["results"], strict=True):
            np.testing.assert_allclose(np.ravel(g), np.ravel(w), rtol=1e-9, atol=1e-12)
    except (AssertionError, ValueError) as e:
        return f"LLVMRun differs: {str(e)[:200]}"
    return "LLVMRun agrees"


def main(names: list[str], llvm: bool) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    report = json.loads(REPORT.read_text()) if REPORT.exists() and names else {}
    for name, build in MODELS.items():
        if names and name not in names:
            continue
        entry = {"doc": (build.__doc__ or "").strip()}
        try:
            text, oracle = build_and_record(name, build)
        except Exception as e:  # a composition this release cannot build, run or export
            entry["written"] = False
            entry["why"] = f"{type(e).__name__}: {str(e)[:300]}"
            report[name] = entry
            print(f"{name}: not written ({entry['why']})")
            continue
        oracle["generator"] = "tools/wild/gen_psyneulink_wide.py"
        if llvm:
            oracle["llvm"] = entry["llvm"] = llvm_check(build, oracle)
        (OUT / f"wide_{name}.json").write_text(text)
        (OUT / f"wide_{name}.oracle.json").write_text(json.dumps(oracle, indent=1) + "\n")
        entry["written"] = True
        report[name] = entry
        print(f"{name}: {len(oracle['trials'])} trials written {entry.get('llvm', '')}")
    REPORT.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    argv = sys.argv[1:]
    main([a for a in argv if not a.startswith("-")], "--llvm" in argv)
