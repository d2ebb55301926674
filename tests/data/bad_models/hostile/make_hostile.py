"""Writes the issue-18 classes of hostile input in this folder and ``cases.tsv``.

Every case is a model file and the ``mdf`` arguments it is run with; ``cases.tsv`` lists
``file<TAB>arguments<TAB>exit status<TAB>substring of the one stderr line`` (empty for a run
that must succeed). The classes: ids holding code (they must run, and run nothing), subscripts
that grow out of bounds, numeric corner cases, inputs that gave tracebacks, run lengths that
hung, and values that output formats cannot hold. ``OUT`` in the arguments is the output
path the test gives. Run ``python make_hostile.py`` to regenerate; the files are committed.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: A node id that broke out of the generated function and ran at import (issue 18)
CODE = "\nimport os;open('MARKER','w')\ndef _z(nsteps):\n    for step in range(1):\n        #"


def model(
    params: list,
    *,
    nid: str = "A",
    pid_out: str = "o",
    conditions: dict | None = None,
    inputs: list | None = None,
    functions: list | None = None,
    gid: str = "g",
    second: bool = False,
    eid: str = "e",
) -> dict:
    node = {
        "id": nid,
        "parameters": params,
        "output_ports": [{"id": pid_out, "value": params[-1]["id"]}],
    }
    if inputs:
        node["input_ports"] = inputs
    if functions:
        node["functions"] = functions
    nodes, edges = [node], []
    if second:
        nodes.append(
            {
                "id": "B",
                "input_ports": [{"id": "i"}],
                "parameters": [{"id": "y", "value": "i * 2"}],
                "output_ports": [{"id": "o", "value": "y"}],
            }
        )
        edges.append(
            {
                "id": eid,
                "sender": nid,
                "sender_port": pid_out,
                "receiver": "B",
                "receiver_port": "i",
            }
        )
    g = {"id": gid, "nodes": nodes, "edges": edges}
    if conditions:
        g["conditions"] = conditions
    return {"id": "m", "graphs": [g]}


COUNTER = [{"id": "t", "value": "t + 1", "default_initial_value": 0}]
VEC = [{"id": "v", "shape": [4], "default_value": [1.0, 2.0, 3.0, 4.0]}]


def every(kind: str, **kwargs) -> dict:
    return {"node_specific": {"A": {"type": kind, "kwargs": kwargs}}}


CASES: list[tuple[str, dict, str, int, str]] = [
    # ids holding code: they run, on both backends, and nothing else runs
    ("code_node_id.json", model(COUNTER, nid="A" + CODE, second=True), "--steps 3", 0, ""),
    ("code_port_id.json", model(COUNTER, pid_out="o" + CODE, second=True), "--steps 3", 0, ""),
    ("code_edge_id.json", model(COUNTER, eid="e" + CODE, second=True), "--steps 3", 0, ""),
    ("code_graph_id.json", model(COUNTER, gid="g" + CODE), "--steps 3", 0, ""),
    (
        "code_parameter_id.json",
        model([*COUNTER, {"id": "p" + CODE, "value": 2.5}, {"id": "q", "value": "t * 2"}]),
        "--steps 3",
        0,
        "",
    ),
    (
        "code_function_id.json",
        model(
            COUNTER,
            inputs=VEC,
            functions=[
                {
                    "id": "f" + CODE,
                    "function": "linear",
                    "args": {"variable0": "v", "slope": 2.0, "intercept": 1.0},
                }
            ],
        ),
        "--steps 3",
        0,
        "",
    ),
    (
        "code_in_string_constant.json",
        model([*COUNTER, {"id": "s", "value": '\'"""\\n#\''}, {"id": "q", "value": "t"}]),
        "--steps 3",
        0,
        "",
    ),
    (
        "code_condition_node.json",
        model(
            COUNTER,
            nid="A" + CODE,
            conditions={
                "node_specific": {"A" + CODE: {"type": "EveryNPasses", "kwargs": {"n": 1}}}
            },
        ),
        "--steps 3",
        0,
        "",
    ),
    # subscripts that grow out of bounds (the compiled backend read memory it did not own)
    (
        "index_grows.json",
        model([*COUNTER, {"id": "x", "value": "v[int(t)]"}], inputs=VEC),
        "--steps 10",
        2,
        "parameters.x.value",
    ),
    (
        "index_negative_grows.json",
        model([*COUNTER, {"id": "x", "value": "v[-int(t) - 1]"}], inputs=VEC),
        "--steps 10",
        2,
        "parameters.x.value",
    ),
    (
        "index_2d_grows.json",
        model(
            [
                *COUNTER,
                {"id": "m", "value": [[1.0, 2.0], [3.0, 4.0]]},
                {"id": "x", "value": "m[1, int(t)]"},
            ]
        ),
        "--steps 10",
        2,
        "parameters.x.value",
    ),
    # numeric corner cases: one answer on both backends
    (
        "int_of_huge.json",
        model([*COUNTER, {"id": "x", "value": "int(t * 4e18)"}]),
        "--steps 5",
        2,
        "beyond 64-bit integers",
    ),
    (
        "int_of_nan.json",
        model([*COUNTER, {"id": "z", "value": 0}, {"id": "x", "value": "int(z / z)"}]),
        "--steps 2",
        2,
        "beyond 64-bit integers",
    ),
    (
        "int_overflow.json",
        model([*COUNTER, {"id": "x", "value": "int(t) * 4611686018427387904"}]),
        "--steps 5",
        2,
        "integer overflow",
    ),
    (
        "int_floordiv_zero.json",
        model([*COUNTER, {"id": "x", "value": "int(t) // 0"}]),
        "--steps 3 --json",
        0,
        "",
    ),
    (
        "int_mod_zero.json",
        model([*COUNTER, {"id": "x", "value": "int(t) % 0"}]),
        "--steps 3 --json",
        0,
        "",
    ),
    (
        "exp_of_huge_int.json",
        model([*COUNTER, {"id": "x", "value": "math.exp(10**400)"}]),
        "--steps 3 --json",
        0,
        "",
    ),
    # inputs that gave tracebacks
    (
        "expr_800_terms.json",
        model([{"id": "x", "value": "+".join(["x"] * 800), "default_initial_value": 1}]),
        "--steps 2",
        2,
        "parameters.x.value",
    ),
    (
        "condition_unknown_dependency.json",
        model(COUNTER, conditions=every("EveryNCalls", dependency="Z", n=1)),
        "--steps 2",
        2,
        "kwargs.dependency",
    ),
    (
        "condition_n_zero.json",
        model(COUNTER, conditions=every("EveryNPasses", n=0)),
        "--steps 2",
        2,
        "kwargs.n",
    ),
    (
        "condition_n_string.json",
        model(COUNTER, conditions=every("EveryNPasses", n="2")),
        "--steps 2",
        2,
        "kwargs.n",
    ),
    (
        "condition_n_float.json",
        model(COUNTER, conditions=every("AfterNCalls", dependency="A", n=1.5)),
        "--steps 2",
        2,
        "kwargs.n",
    ),
    (
        "value_huge_shape.json",
        model([{"id": "x", "value": "np.zeros((100000000, 9))"}]),
        "--steps 2",
        2,
        "parameters.x.value",
    ),
    (
        "value_huge_ones.json",
        model([{"id": "x", "value": "np.ones((20000, 20000))"}]),
        "--steps 2",
        2,
        "parameters.x.value",
    ),
    # values output formats cannot hold
    (
        "complex_to_csv.json",
        model([{"id": "x", "value": "1j + x", "default_initial_value": 0}]),
        "--steps 2 -o OUT.csv",
        2,
        "CSV holds real numbers",
    ),
    (
        "complex_to_json.json",
        model([{"id": "x", "value": "1j + x", "default_initial_value": 0}]),
        "--steps 2 -o OUT.json",
        0,
        "",
    ),
    ("dict_to_npz.json", model([{"id": "x", "value": {"a": 1}}]), "--steps 2 -o OUT.npz", 0, ""),
    (
        "string_to_csv.json",
        model([{"id": "x", "value": "'=cmd|x'"}]),
        "--steps 2 -o OUT.csv",
        2,
        "CSV holds real numbers",
    ),
    (
        "formula_ids_to_csv.json",
        model(COUNTER, nid="=HYPERLINK(1)", pid_out="@SUM(1)"),
        "--steps 2 -o OUT.csv",
        0,
        "",
    ),
    ("escape_in_ids.json", model(COUNTER, nid="A\x1b[2J\x1b]0;pwned\x07"), "--steps 2", 0, ""),
    # run lengths that hung or gave tracebacks
    ("ok.json", model(COUNTER), "--steps 0", 2, "--steps must be at least 1"),
    ("ok.json", model(COUNTER), "--steps 1000000000000", 2, "MDF_ENGINE_MAX_STEPS"),
    ("ok.json", model(COUNTER), "--steps 1e30", 2, "--steps"),
    ("ok.json", model(COUNTER), "--duration -1 --dt 0.1", 2, "duration"),
    ("ok.json", model(COUNTER), "--duration nan --dt 0.1", 2, "duration"),
    ("ok.json", model(COUNTER), "--duration inf --dt 0.1", 2, "duration"),
    ("ok.json", model(COUNTER), "--duration 1 --dt 1e-15", 2, "MDF_ENGINE_MAX_STEPS"),
    ("ok.json", model(COUNTER), "--duration 1 --dt 0", 2, "dt"),
    ("ok.json", model(COUNTER), "--steps 2 -o OUTDIR", 2, "directory"),
    (
        "ok.json",
        model(COUNTER),
        "--steps 2 -o /nonexistent-folder/x.csv",
        2,
        "folder does not exist",
    ),
    (
        "ok.json",
        model(COUNTER),
        "--steps 2 --plot /nonexistent-folder/x.png",
        2,
        "folder does not exist",
    ),
    ("ok.json", model(COUNTER), "--steps 2 -o OUT.txt", 2, "use .csv, .npz or .json"),
]


def main() -> None:
    rows = ["file\targs\texit\tstderr"]
    written = set()
    for name, data, args, rc, text in CASES:
        if name not in written:
            (HERE / name).write_text(json.dumps(data, indent=1) + "\n")
            written.add(name)
        rows.append(f"{name}\t{args}\t{rc}\t{text}")
    (HERE / "cases.tsv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
