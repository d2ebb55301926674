"""Corpus: NeuroMLlite's MDF export (``generate_and_run(sim, simulator="mdf")``, its
MDFHandler, which reads the NeuroML2/LEMS component types through pyNeuroML) on small
networks: an IaF cell, an Izhikevich cell and a PyNN HH cell with current inputs, a PyNN
IaF network with synapses, PyNN conductance-based IaF/EIF cells and a network with a
conductance synapse, and NeuroML2's FitzHugh-Nagumo and Hindmarsh-Rose cells (the last four
are files the writer broke: their oracles are refusals, ``REFUSE``). The oracle is modeci-mdf's reference engine driven as modeci-mdf's
NeuroML example scripts drive these files (``evaluate()`` then ``evaluate(time_increment=dt)``
with times in seconds), for a modest number of steps.

Run in the NeuroML generator venv (``/work/venvs/nml``: pyNeuroML, NeuroMLlite, modeci-mdf)::

    /work/venvs/nml/bin/python tools/wild/gen_neuroml.py
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from neuromllite import (
    Cell,
    Input,
    InputSource,
    Network,
    Population,
    Projection,
    RandomConnectivity,
    Simulation,
    Synapse,
)
from neuromllite.NetworkGenerator import generate_and_run
from oracle import CORPUS, reference_run, version, write_oracle

OUT = CORPUS / "neuroml"


def _pulsed_cell(ref: str, cell: Cell, pop: str, stim_amp: str, duration: str, end: float):
    """One NeuroML2 ``cell`` (population ``pop``) driven by a pulse of ``stim_amp`` from 5 ms
    for ``duration``; run for ``end`` seconds in steps of 0.1 ms."""
    net = Network(id=ref)
    net.parameters = {"stim_amp": stim_amp, "delay": "5ms", "duration": duration}
    net.cells.append(cell)
    net.populations.append(Population(id=pop, size=1, component=cell.id))
    net.input_sources.append(
        InputSource(
            id="pulse",
            neuroml2_input="PulseGenerator",
            parameters={"amplitude": "stim_amp", "delay": "delay", "duration": "duration"},
        )
    )
    net.inputs.append(Input(id="stim", input_source="pulse", population=pop, percentage=100))
    return net, 0.0001, end


def net_iaf() -> tuple[Network, float, float]:
    cell = Cell(id="iaf", neuroml2_cell="iafCell")
    cell.parameters = {
        "leakReversal": "-50mV",
        "thresh": "-55mV",
        "reset": "-70mV",
        "C": "0.2nF",
        "leakConductance": "0.01uS",
    }
    return _pulsed_cell("IafPulse", cell, "iafPop", "0.5nA", "20ms", 0.03)


def net_izh() -> tuple[Network, float, float]:
    cell = Cell(id="izhCell", neuroml2_cell="izhikevich2007Cell")
    cell.parameters = {
        "v0": "-60mV",
        "C": "100 pF",
        "k": "0.7 nS_per_mV",
        "vr": "-60 mV",
        "vt": "-40 mV",
        "vpeak": "35 mV",
        "a": "0.03 per_ms",
        "b": "-2 nS",
        "c": "-50 mV",
        "d": "100 pA",
    }
    return _pulsed_cell("Izhikevich", cell, "izhPop", "100pA", "30ms", 0.04)


def _pynn_net(ref: str, pynn_cell: str, params: dict, pop1: int, synapse: dict, end: float):
    """PyNN cells (``params``) in a population of two with a DC input; with ``pop1``, a second
    population driven from the first through the ``synapse`` (Synapse's arguments); run for
    ``end`` seconds in steps of 0.05 ms."""
    net = Network(id=ref)
    net.parameters = {"input_amp": 0.99}
    cell = Cell(id="testcell", pynn_cell=pynn_cell)
    cell.parameters = params
    net.cells.append(cell)
    net.input_sources.append(
        InputSource(
            id="i_clamp",
            pynn_input="DCSource",
            parameters={"amplitude": "input_amp", "start": 5.0, "stop": 50.0},
        )
    )
    net.populations.append(Population(id="pop0", size=2, component=cell.id))
    if pop1:
        net.populations.append(Population(id="pop1", size=pop1, component=cell.id))
        net.synapses.append(Synapse(**synapse))
        proj = Projection(
            id="proj0",
            presynaptic="pop0",
            postsynaptic="pop1",
            synapse=synapse["id"],
            delay=2,
            weight=0.02,
        )
        proj.random_connectivity = RandomConnectivity(probability=1)
        net.projections.append(proj)
    net.inputs.append(
        Input(id="stim", input_source="i_clamp", population="pop0", percentage=100, weight="1")
    )
    return net, 0.00005, end


def net_pynn(ref: str, pynn_cell: str, pop1: int) -> tuple[Network, float, float]:
    """PyNN current-based cells; with ``pop1``, a network through a current synapse."""
    params = {"i_offset": 0.0, "tau_refrac": 5} if "IF_" in pynn_cell else {"i_offset": 0.05}
    synapse = {
        "id": "ampaSyn",
        "pynn_receptor_type": "excitatory",
        "pynn_synapse_type": "curr_alpha",
        "parameters": {"tau_syn": 2},
    }
    return _pynn_net(ref, pynn_cell, params, pop1, synapse, 0.06 if pop1 else 0.02)


def net_pynn_cond(ref: str, pynn_cell: str, params: dict, pop1: int = 0) -> tuple:
    """PyNN conductance-based cells with a DC input; with ``pop1``, a second population
    driven by an excitatory conductance synapse (``cond_exp``) from the first."""
    synapse = {
        "id": "syn",
        "pynn_receptor_type": "excitatory",
        "pynn_synapse_type": "cond_exp",
        "parameters": {"tau_syn": 2, "e_rev": 0},
    }
    return _pynn_net(ref, pynn_cell, params, pop1, synapse, 0.06)


def net_nml_cell(ref: str, component: str, params: dict) -> tuple:
    """One NeuroML2 abstract cell without input."""
    net = Network(id=ref)
    cell = Cell(id="c", neuroml2_cell=component)
    cell.parameters = params
    net.cells.append(cell)
    net.populations.append(Population(id="pop0", size=1, component=cell.id))
    return net, 0.0001, 0.05


NETWORKS = [
    net_iaf,
    net_izh,
    lambda: net_pynn("PyNN_HH", "HH_cond_exp", 0),
    lambda: net_pynn("PyNN_IF_net", "IF_curr_alpha", 2),
    lambda: net_pynn_cond("PyNN_IF_cond_exp", "IF_cond_exp", {"i_offset": 0.0, "tau_refrac": 5}),
    lambda: net_pynn_cond("PyNN_EIF", "EIF_cond_exp_isfa_ista", {"i_offset": 0.0}),
    lambda: net_pynn_cond(
        "PyNN_IF_cond_net", "IF_cond_alpha", {"i_offset": 0.0, "tau_refrac": 5}, pop1=2
    ),
    lambda: net_nml_cell("FN_cell", "fitzHughNagumoCell", {"I": "0.8"}),
    lambda: net_nml_cell("HindmarshRose", "hindmarshRose1984Cell", {}),
]

#: files the writer broke in ways other than a missing output port: (what mdf_engine's one-line
#: refusal says, why); the reference engine fails on each too
REFUSE = {
    "PyNN_EIF": (
        "unknown name 'eif_threshold'",
        "the spike condition reads 'eif_threshold', a derived variable of the LEMS type that "
        "the writer does not write",
    ),
    "PyNN_IF_cond_net": (
        "unknown name 'v'",
        "the conductance synapse's current reads the postsynaptic membrane potential 'v', "
        "which is not in the synapse node and no edge carries it",
    ),
    "FN_cell": (
        "'^' is a bitwise operator",
        "LEMS writes a power 'V^3', copied as is: in an MDF expression '^' is Python's "
        "bitwise xor, which floats do not have",
    ),
    "HindmarshRose": (
        "unknown name 'C'",
        "the membrane equation reads the capacitance 'C', a parameter of the LEMS base type "
        "that the writer does not write (and writes powers 'x^3')",
    ),
}


def steps_of(duration: float, dt: float) -> int:
    n, t = 0, 0.0
    while t <= duration:
        n, t = n + 1, t + dt
    return n


def _missing_ports(path: Path) -> list[str]:
    """Output ports that edges read but their sender nodes do not have."""
    data = json.loads(path.read_text())
    graph = next(iter(next(iter(data.values()))["graphs"].values()))
    nodes = graph["nodes"]
    return sorted(
        {
            e["sender_port"]
            for e in graph.get("edges", {}).values()
            if e["sender_port"] not in nodes[e["sender"]].get("output_ports", {})
        }
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_this = functools.partial(
        write_oracle,
        writer="NeuroMLlite MDFHandler",
        writer_version=f"neuromllite {version('neuromllite')}, pyNeuroML {version('pyNeuroML')}",
        generator="tools/wild/gen_neuroml.py",
    )
    here = os.getcwd()
    for make in NETWORKS:
        net, dt, duration = make()
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            try:
                net_file = net.to_json_file(f"{net.id}.json")
                sim = Simulation(
                    id=f"Sim{net.id}",
                    network=net_file,
                    duration=duration * 1000,
                    dt=dt * 1000,
                    record_traces={"all": "*"},
                )
                with contextlib.redirect_stdout(io.StringIO()):
                    generate_and_run(sim, simulator="mdf")
                src = Path(tmp) / f"{net.id}.mdf.json"
                path = OUT / src.name
                shutil.copy(src, path)
            finally:
                os.chdir(here)
        steps = steps_of(duration, dt)
        try:
            final, traces = reference_run(path, steps, dt)
        except Exception as e:
            why = f"{type(e).__name__}: {str(e)[:200]}"
            missing = _missing_ports(path)
            if net.id in REFUSE:
                error, reason = REFUSE[net.id]
                write_this(
                    path,
                    protocol="refuse",
                    steps=3,  # derivatives run from the second step, of float states from the third
                    dt=dt,
                    expected={"error_contains": error},
                    note=f"{reason}; modeci-mdf's reference engine fails ({why.splitlines()[0]})",
                )
                print(net.id, "refusal oracle:", error)
                continue
            if not missing:  # the reference cannot run it and we know no reason: left out
                print(net.id, f"reference failed ({why}); file left out")
                path.unlink()
                continue
            # an edge from an output port the writer did not write: no engine can run it
            write_this(
                path,
                protocol="refuse",
                steps=1,
                dt=dt,
                expected={"error_contains": f"no output port '{missing[0]}'"},
                note=f"the writer's edges read output port(s) {missing} that it did "
                f"not write; modeci-mdf's reference engine fails ({why})",
            )
            print(net.id, "refusal oracle: missing output ports", missing)
            continue
        write_this(
            path,
            protocol="reference",
            steps=steps,
            dt=dt,
            expected=final,
            rtol=1e-7,
            atol=1e-12,
            note=f"modeci-mdf {version('modeci-mdf')} EvaluableGraph, SI units "
            f"(dt {dt} s, {duration} s)",
        )
        print(net.id, steps, "steps")


if __name__ == "__main__":
    main()
