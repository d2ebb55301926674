"""Corpus: files in the older forms modeci-mdf 0.3.3 writes ("ModECI MDF v0.3": node
``functions`` whose ``function`` is a ``{name: {args}}`` dict, conditions with ``args``), with
modeci-mdf 0.3.3's own reference engine as the oracle.

Run in a venv with modeci-mdf 0.3.3 (installed ``--no-deps`` with modelspec<0.2,
graph-scheduler<1.0.1, tabulate, toposort; its pins of torch<=1.8 and numpy<=1.20 have no
Python 3.11 wheels and are not needed by these models)::

    /work/venvs/mdfold/bin/python tools/wild/gen_modeci_old.py
"""

from __future__ import annotations

from modeci_mdf.mdf import (
    Condition,
    ConditionSet,
    Edge,
    Function,
    Graph,
    InputPort,
    Model,
    Node,
    OutputPort,
    Parameter,
)
from oracle import CORPUS, reference_run, version, write_oracle

OUT = CORPUS / "modeci_old"


def model_chain() -> tuple[Model, dict]:
    """A source and a processing node whose node functions use the dict form."""
    m = Model(id="OldChain")
    g = Graph(id="old_chain")
    m.graphs.append(g)
    src = Node(id="input_node")
    src.parameters.append(Parameter(id="input_level", value=0.5))
    src.output_ports.append(OutputPort(id="out_port", value="input_level"))
    proc = Node(id="processing_node")
    proc.input_ports.append(InputPort(id="input_port1"))
    proc.parameters.append(Parameter(id="lin_slope", value=0.5))
    proc.parameters.append(Parameter(id="lin_intercept", value=0))
    proc.parameters.append(Parameter(id="log_gain", value=3))
    proc.functions.append(
        Function(
            id="linear_1",
            function={
                "linear": {
                    "variable0": "input_port1",
                    "slope": "lin_slope",
                    "intercept": "lin_intercept",
                }
            },
        )
    )
    proc.functions.append(
        Function(
            id="logistic_1",
            function={
                "logistic": {"variable0": "linear_1", "gain": "log_gain", "bias": 0, "offset": 0}
            },
        )
    )
    proc.output_ports.append(OutputPort(id="output_1", value="logistic_1"))
    g.nodes += [src, proc]
    g.edges.append(
        Edge(
            id="input_edge",
            parameters={"weight": 0.55},
            sender="input_node",
            sender_port="out_port",
            receiver="processing_node",
            receiver_port="input_port1",
        )
    )
    return m, {"steps": 1, "dt": None}


def model_fn() -> tuple[Model, dict]:
    """FitzHugh-Nagumo with two coupled time derivatives."""
    m = Model(id="OldFN")
    g = Graph(id="old_fn")
    m.graphs.append(g)
    n = Node(id="FNpop")
    for pid, v in (("a", 0.7), ("b", 0.8), ("tau", 12.5), ("I", 0.5)):
        n.parameters.append(Parameter(id=pid, value=v))
    n.parameters.append(
        Parameter(id="V", default_initial_value=-1.0, time_derivative="V - V*V*V/3 - W + I")
    )
    n.parameters.append(
        Parameter(id="W", default_initial_value=0.0, time_derivative="(V + a - b*W)/tau")
    )
    n.output_ports.append(OutputPort(id="V_out", value="V"))
    n.output_ports.append(OutputPort(id="W_out", value="W"))
    g.nodes.append(n)
    return m, {"steps": 200, "dt": 0.05, "trace": ["FNpop.V_out"], "trace_every": 20}


def model_conditions() -> tuple[Model, dict]:
    m = Model(id="OldConditions")
    g = Graph(id="old_conditions")
    m.graphs.append(g)
    nodes = []
    for nid in "ABC":
        n = Node(id=nid)
        if nid != "A":
            n.input_ports.append(InputPort(id="input_port1"))
        n.parameters.append(Parameter(id="param", value=1))
        n.functions.append(Function(id="f", value="param * 2"))
        n.output_ports.append(OutputPort(id="output_1", value="f"))
        nodes.append(n)
    g.nodes += nodes
    for a, b in zip(nodes, nodes[1:]):
        g.edges.append(
            Edge(
                id=f"{a.id}_{b.id}",
                sender=a.id,
                sender_port="output_1",
                receiver=b.id,
                receiver_port="input_port1",
            )
        )
    g.conditions = ConditionSet(
        node_specific={
            "A": Condition(type="Always"),
            "B": Condition(type="EveryNCalls", dependency="A", n=2),
            "C": Condition(type="EveryNCalls", dependency="B", n=2),
        },
        termination={
            "environment_state_update": Condition(type="AfterNCalls", dependency="C", n=1)
        },
    )
    return m, {"steps": 1, "dt": None}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in (model_chain, model_fn, model_conditions):
        m, run = make()
        path = OUT / f"{m.id}.json"
        m.to_json_file(str(path))
        try:
            final, traces = reference_run(path, run["steps"], run["dt"], None, run.get("trace"))
        except Exception as e:
            print(m.id, f"reference failed: {type(e).__name__}: {e}")
            path.unlink()
            continue
        every = run.get("trace_every", 1)
        traces = {k: v[::every] for k, v in traces.items()}
        write_oracle(
            path,
            writer="modeci-mdf Python API (0.3.x forms)",
            writer_version=f"modeci-mdf {version('modeci-mdf')}",
            generator="tools/wild/gen_modeci_old.py",
            protocol="reference",
            steps=run["steps"],
            dt=run["dt"],
            expected=final,
            traces={"every": every, **traces} if traces else None,
            note=f"modeci-mdf {version('modeci-mdf')} EvaluableGraph, graph-scheduler "
            f"{version('graph-scheduler')}",
        )
        print(m.id, run["steps"], "steps")


if __name__ == "__main__":
    main()
