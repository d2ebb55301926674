"""Writes the malformed/hostile MDF corpus in this folder and its sidecar ``expected.tsv``.

Each case is a small model (JSON or YAML) with one thing wrong; ``expected.tsv`` lists
``file<TAB>substring`` where the substring (normally a field path) must appear in the
MDFError message that loading or running the file raises. Run ``python make_corpus.py`` to
regenerate after editing the cases; the generated files are committed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NODE_A = "graphs.g.nodes.A"


def base() -> dict:
    """A valid two-node model: A (input i, parameters k and x, output out) -> B."""
    return {
        "m": {
            "format": "ModECI MDF v0.4",
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "input_ports": {"i": {"shape": [1]}},
                            "parameters": {"k": {"value": 2}, "x": {"value": "k * i"}},
                            "output_ports": {"out": {"value": "x"}},
                        },
                        "B": {
                            "input_ports": {"i": {}},
                            "parameters": {"y": {"value": "i + 1"}},
                            "output_ports": {"out": {"value": "y"}},
                        },
                    },
                    "edges": {
                        "e1": {
                            "sender": "A",
                            "receiver": "B",
                            "sender_port": "out",
                            "receiver_port": "i",
                        }
                    },
                }
            },
        }
    }


def g(d: dict) -> dict:
    return d["m"]["graphs"]["g"]


def node(d: dict, n: str = "A") -> dict:
    return g(d)["nodes"][n]


def param(d: dict, p: str = "x", n: str = "A") -> dict:
    return node(d, n)["parameters"][p]


def mutate(fn) -> dict:
    d = copy.deepcopy(base())
    fn(d)
    return d


def with_expr(text: str) -> dict:
    return mutate(lambda d: param(d).update(value=text))


CASES: list[tuple[str, Any, str]] = []


def case(name: str, data: Any, expected: str) -> None:
    CASES.append((name, data, expected))


# --- structure and types ----------------------------------------------------------------------
case("top_level_list.json", [1, 2, 3], "top level")
case("two_model_ids.json", {"m1": base()["m"], "m2": base()["m"]}, "exactly one model id")
case("model_body_string.json", {"m": "not a model"}, "expected a mapping")
case("graphs_list_of_ints.json", {"m": {"graphs": [1, 2]}}, "graphs[0]")
case("graphs_string.json", {"m": {"graphs": "g"}}, "graphs")
case("node_is_string.json", mutate(lambda d: g(d)["nodes"].update(A="hello")), "graphs.g.nodes.A")
case(
    "node_list_without_id.json",
    mutate(lambda d: g(d).update(nodes=[{"parameters": {"k": {"value": 1}}}], edges={})),
    "graphs.g.nodes.0",
)
case("node_id_mismatch.json", mutate(lambda d: node(d).update(id="Z")), f"{NODE_A}.id")
case("metadata_list.json", mutate(lambda d: node(d).update(metadata=[1, 2])), f"{NODE_A}.metadata")
case(
    "opset_string.json",
    mutate(lambda d: d["m"].update(onnx_opset_version="13")),
    "onnx_opset_version",
)
case(
    "conditions_not_list.json",
    mutate(lambda d: param(d).update(conditions=5)),
    f"{NODE_A}.parameters.x.conditions",
)
case(
    "parameter_value_object.json",
    mutate(
        lambda d: (
            param(d).update(value={"a": 1}) or node(d)["output_ports"]["out"].update(value="x + 1")
        )
    ),
    f"{NODE_A}.output_ports.out.value",
)
case(
    "ragged_array_value.json",
    mutate(lambda d: param(d, "k").update(value=[[1, 2], [3]])),
    f"{NODE_A}.parameters.x.value",
)
case(
    "edge_parameters_list.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(parameters=[1, 2])),
    "graphs.g.edges.e1.parameters",
)

# --- edges -------------------------------------------------------------------------------------
case(
    "edge_unknown_sender.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(sender="Q")),
    "graphs.g.edges.e1.sender",
)
case(
    "edge_unknown_receiver.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(receiver="Q")),
    "graphs.g.edges.e1.receiver",
)
case(
    "edge_unknown_sender_port.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(sender_port="nope")),
    "graphs.g.edges.e1.sender_port",
)
case(
    "edge_unknown_receiver_port.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(receiver_port="nope")),
    "graphs.g.edges.e1.receiver_port",
)
case(
    "edge_sender_int.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(sender=7)),
    "graphs.g.edges.e1.sender",
)
case(
    "edge_missing_id_in_list.json",
    mutate(
        lambda d: g(d).update(
            edges=[{"sender": "A", "receiver": "B", "sender_port": "out", "receiver_port": "i"}]
        )
    ),
    "graphs.g.edges.0",
)
case(
    "cycle_without_default.json",
    mutate(
        lambda d: g(d)["edges"].update(
            e2={"sender": "B", "receiver": "A", "sender_port": "out", "receiver_port": "i"}
        )
    ),
    "graphs.g.edges.e",
)
case(
    "edge_weight_string.json",
    mutate(lambda d: g(d)["edges"]["e1"].update(parameters={"weight": "abc"})),
    "graphs.g.edges.e1",
)
case(
    "edge_weight_hostile.json",
    mutate(
        lambda d: g(d)["edges"]["e1"].update(
            parameters={"weight": "__import__('os').system('echo pwned')"}
        )
    ),
    "graphs.g.edges.e1",
)
case(
    "edge_weight_wrong_shape.json",
    mutate(
        lambda d: (
            g(d)["edges"]["e1"].update(parameters={"weight": [[1, 2, 3], [4, 5, 6]]})
            or node(d).update(input_ports={"i": {"shape": [2]}})
            or param(d, "k").update(value=[1.0, 2.0])
        )
    ),
    "graphs.g.edges.e1.parameters.weight",
)
case(
    "self_loop_edge.json",
    mutate(
        lambda d: g(d)["edges"].update(
            e2={"sender": "B", "receiver": "B", "sender_port": "out", "receiver_port": "i"}
        )
    ),
    "graphs.g.edges.e2",
)

# --- shapes ------------------------------------------------------------------------------------
case(
    "shape_negative.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape=[-1])),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "shape_huge.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape=[100000, 100000])),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "shape_dim_too_large.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape=[2**40])),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "shape_strings.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape=["a"])),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "shape_bad_text.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape="(1, 2, x)")),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "shape_bool.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(shape=True)),
    f"{NODE_A}.input_ports.i.shape",
)
case(
    "output_shape_negative.json",
    mutate(lambda d: node(d)["output_ports"]["out"].update(shape=[3, -2])),
    f"{NODE_A}.output_ports.out.shape",
)
case(
    "reduce_unknown.json",
    mutate(lambda d: node(d)["input_ports"]["i"].update(reduce="max")),
    f"{NODE_A}.input_ports.i.reduce",
)
case(
    "broadcast_mismatch.json",
    with_expr("[1, 2, 3] + np.array([1, 2])"),
    f"{NODE_A}.parameters.x.value",
)
case(
    "matmul_mismatch.json",
    with_expr("np.ones((2, 3)) @ np.ones((2, 3))"),
    f"{NODE_A}.parameters.x.value",
)
case("index_out_of_range.json", with_expr("i[5]"), f"{NODE_A}.parameters.x.value")
case("zeros_huge.json", with_expr("np.zeros((100000, 100000))"), f"{NODE_A}.parameters.x.value")
case("zeros_negative.json", with_expr("np.zeros(-5)"), f"{NODE_A}.parameters.x.value")
case("arange_huge.json", with_expr("np.arange(10**12)"), f"{NODE_A}.parameters.x.value")
case(
    "outer_huge.json",
    with_expr("np.outer(np.ones(10**6), np.ones(10**6))"),
    f"{NODE_A}.parameters.x.value",
)
case(
    "matmul_huge.json",
    with_expr("np.ones((100000, 1)) @ np.ones((1, 100000))"),
    f"{NODE_A}.parameters.x.value",
)
case(
    "broadcast_huge.json",
    with_expr("np.ones((100000, 1)) + np.ones(100000)"),
    f"{NODE_A}.parameters.x.value",
)
case("string_repeat_huge.json", with_expr("'a' * 10**12"), f"{NODE_A}.parameters.x.value")
case("list_repeat_huge.json", with_expr("[0] * 10**12"), f"{NODE_A}.parameters.x.value")
case("tile_huge.json", with_expr("np.tile(k, (10**6, 10**6))"), f"{NODE_A}.parameters.x.value")

# --- functions ---------------------------------------------------------------------------------
case(
    "unknown_function.json",
    mutate(
        lambda d: param(d).update(value=None, function="no_such_function", args={"variable0": "i"})
    ),
    f"{NODE_A}.parameters.x.function",
)
case(
    "unknown_function_argument.json",
    mutate(
        lambda d: param(d).update(
            value=None,
            function="linear",
            args={"variable0": "i", "slope": 1, "intercept": 0, "bogus": 3},
        )
    ),
    f"{NODE_A}.parameters.x.args",
)
case(
    "missing_function_argument.json",
    mutate(lambda d: param(d).update(value=None, function="onnx::MatMul", args={"A": [[1.0]]})),
    f"{NODE_A}.parameters.x.args",
)
case(
    "function_name_list.json",
    mutate(lambda d: param(d).update(value=None, function=["linear"], args={})),
    f"{NODE_A}.parameters.x.function",
)
case(
    "function_two_names.json",
    mutate(lambda d: param(d).update(value=None, function={"linear": {}, "sin": {}})),
    f"{NODE_A}.parameters.x.function",
)
case(
    "function_args_not_mapping.json",
    mutate(lambda d: param(d).update(value=None, function={"linear": [1, 2]})),
    f"{NODE_A}.parameters.x.function",
)
case(
    "function_arg_hostile.json",
    mutate(
        lambda d: param(d).update(
            value=None,
            function="linear",
            args={"variable0": "i.__dict__", "slope": 1, "intercept": 0},
        )
    ),
    f"{NODE_A}.parameters.x.args.variable0",
)
case(
    "node_function_cycle.json",
    mutate(
        lambda d: node(d).update(functions={"f1": {"value": "f2 + 1"}, "f2": {"value": "f1 + 1"}})
    ),
    f"{NODE_A}.functions",
)
case(
    "onnx_wrong_shapes.json",
    mutate(
        lambda d: param(d).update(
            value=None, function="onnx::MatMul", args={"A": [[1.0, 2.0, 3.0]], "B": [[1.0, 2.0]]}
        )
    ),
    f"{NODE_A}.parameters.x",
)
case(
    "time_derivative_list.json",
    mutate(lambda d: param(d).update(value=None, time_derivative=[1, 2])),
    f"{NODE_A}.parameters.x.time_derivative",
)

# --- conditions --------------------------------------------------------------------------------
case(
    "condition_unknown_node.json",
    mutate(
        lambda d: g(d).update(conditions={"node_specific": {"Z": {"type": "Always", "kwargs": {}}}})
    ),
    "conditions.node_specific.Z",
)
case(
    "condition_unknown_type.json",
    mutate(
        lambda d: g(d).update(
            conditions={"node_specific": {"A": {"type": "NoSuchCondition", "kwargs": {}}}}
        )
    ),
    "conditions.node_specific.A",
)
case(
    "condition_not_mapping.json",
    mutate(lambda d: g(d).update(conditions={"node_specific": {"A": "Always"}})),
    "conditions.node_specific.A",
)
case(
    "condition_kwargs_list.json",
    mutate(
        lambda d: g(d).update(
            conditions={"node_specific": {"A": {"type": "EveryNCalls", "kwargs": [1, 2]}}}
        )
    ),
    "conditions.node_specific.A.kwargs",
)
case(
    "termination_bad_type.json",
    mutate(
        lambda d: g(d).update(
            conditions={"termination": {"environment_state_update": {"type": 42}}}
        )
    ),
    "conditions.termination.environment_state_update.type",
)
case(
    "parameter_condition_hostile_test.json",
    mutate(lambda d: param(d).update(conditions=[{"id": "c1", "test": "k.__class__", "value": 1}])),
    f"{NODE_A}.parameters.x.conditions.c1.test",
)

# --- hostile expressions -----------------------------------------------------------------------
HOSTILE = {
    "attr_class": "k.__class__",
    "import_os_system": "__import__('os').system('echo pwned')",
    "lambda": "(lambda: 1)()",
    "list_comprehension": "[j for j in range(3)]",
    "dict_comprehension": "{j: j for j in range(3)}",
    "generator": "sum(j for j in range(3))",
    "walrus": "(y := 3)",
    "fstring": "f'{k}'",
    "builtins_name": "__builtins__",
    "subclasses_walk": "().__class__.__bases__[0].__subclasses__()",
    "open_file": "open('/etc/passwd').read()",
    "eval_call": "eval('1 + 1')",
    "exec_call": "exec('import os')",
    "getattr_call": "getattr(k, 'real')",
    "numpy_load": "np.load('x.npy')",
    "numpy_submodule": "numpy.os.system('ls')",
    "math_dict": "math.__dict__",
    "import_statement": "import os",
    "hidden_in_else": "k if True else __import__('os')",
    "globals_call": "globals()",
    "dict_unpack": "{**k}",
    "starred": "*k",
    "yield_expr": "(yield 1)",
    "await_expr": "await k",
    "type_call": "type(k)",
    "method_call": "k.conjugate()",
    "dunder_name": "__name__ + 'x'",
    "semicolon_statement": "1; import os",
    "nested_parens": "(" * 300 + "1" + ")" * 300,
    "many_terms": "+".join(["1"] * 3000),
    "very_long": "k + " + " + ".join(["1.0"] * 6000),
    "bad_syntax": "k +* 2",
    "unknown_name": "k + undefined_thing",
}
for _name, _text in HOSTILE.items():
    case(f"expr_{_name}.json", with_expr(_text), f"{NODE_A}.parameters.x.value")
case(
    "output_port_hostile.json",
    mutate(lambda d: node(d)["output_ports"]["out"].update(value="__import__('os')")),
    f"{NODE_A}.output_ports.out.value",
)
case(
    "time_derivative_lambda.yaml",
    mutate(
        lambda d: param(d).update(
            value=None, time_derivative="(lambda: 0)()", default_initial_value=0
        )
    ),
    f"{NODE_A}.parameters.x.time_derivative",
)
case(
    "default_initial_value_hostile.yaml",
    mutate(
        lambda d: param(d).update(
            value=None, time_derivative="1", default_initial_value="k.__class__"
        )
    ),
    f"{NODE_A}.parameters.x.default_initial_value",
)

# --- raw files (YAML tags, bad syntax, limits) --------------------------------------------------
RAW: list[tuple[str, bytes, str]] = [
    (
        "yaml_python_apply.yaml",
        b"m:\n  graphs: !!python/object/apply:os.system ['echo pwned']\n",
        "cannot parse",
    ),
    (
        "yaml_python_new.yaml",
        b"m:\n  graphs: !!python/object/new:subprocess.Popen [['echo', 'pwned']]\n",
        "cannot parse",
    ),
    ("yaml_python_name.yaml", b"m:\n  graphs: !!python/name:os.system\n", "cannot parse"),
    ("yaml_python_module.yaml", b"m:\n  graphs: !!python/module:os\n", "cannot parse"),
    (
        "yaml_python_tuple_in_node.yaml",
        b"m:\n  graphs:\n    g:\n      nodes:\n        A:\n          parameters:\n"
        b"            x:\n              value: !!python/object/apply:eval ['1+1']\n",
        "cannot parse",
    ),
    (
        "yaml_billion_laughs.yaml",
        b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        b"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        b"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        b"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
        b"h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
        b"i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
        "expands to more than",
    ),
    ("yaml_recursive_alias.yaml", b"m: &r\n  graphs:\n    g: *r\n", "refers to itself"),
    ("yaml_bad_syntax.yaml", b"m:\n  graphs: [\n   g: {\n", "cannot parse"),
    ("yaml_top_scalar.yaml", b"just a string\n", "top level"),
    ("yaml_empty.yaml", b"", "top level"),
    ("json_bad_syntax.json", b'{"m": {"graphs": {', "invalid JSON"),
    ("json_empty.json", b"", "invalid JSON"),
    ("json_not_utf8.json", b'{"m": {"graphs": {"g\xff\xfe": {}}}}', "UTF-8"),
    (
        "json_deep_nesting.json",
        b'{"m": {"graphs": {"g": {"nodes": {"A": {"parameters": {"x": {"value": '
        + b"[" * 200
        + b"1"
        + b"]" * 200
        + b"}}}}}}}}",
        "nesting deeper",
    ),
    ("json_very_deep_nesting.json", b"[" * 100000 + b"]" * 100000, "nesting deeper"),
    ("yaml_deep_nesting.yaml", b"m: " + b"[" * 200 + b"1" + b"]" * 200 + b"\n", "nesting deeper"),
    ("wrong_extension.txt", json.dumps(base()).encode(), "expected a .json"),
]


def main() -> None:
    lines = []
    for name, data, expected in CASES:
        path = HERE / name
        if name.endswith(".json"):
            path.write_text(json.dumps(data, indent=1) + "\n")
        else:
            import yaml

            path.write_text(yaml.safe_dump(data, sort_keys=False))
        lines.append(f"{name}\t{expected}")
    for name, raw, expected in RAW:
        (HERE / name).write_bytes(raw)
        lines.append(f"{name}\t{expected}")
    (HERE / "expected.tsv").write_text("file\texpected\n" + "\n".join(lines) + "\n")
    print(f"{len(lines)} files")


if __name__ == "__main__":
    main()
