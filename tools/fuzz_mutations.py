"""The mutations of ``tools/fuzz_models.py``: hostile texts, values, structures, whole-file
bytes, command-line arguments and ONNX files. Every function draws only from the ``rng`` it
is given, so a case is a pure function of its seed."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

#: Every hostile text carries this mark: it must never appear in a file name or in source.
MARK = "fuzzmark"

TEXTS = [
    "\n",
    "\r\n",
    "'",
    '"',
    '"""',
    "{}",
    "{0}",
    "{x!r}",
    "%s",
    "%(x)s%n",
    "\\",
    "\\n",
    "\x00",
    "\x1b[2J",
    "\u202e",
    "\u2028",
    "\x85",
    "\ud800",
    "é∂漢",
    "__import__('os').system('touch fuzzmark')",
    f"\nimport os;open('{MARK}','w')\n#",
    f"../../{MARK}",
    f"/tmp/{MARK}",
    "$(touch fuzzmark)",
    "`touch fuzzmark`",
    ";touch fuzzmark;",
    "-o",
    "--help",
    ".",
    "..",
    " ",
    "",
    "a.b",
    "A[0]",
    "<script>&amp;",
    "=cmd|' /C calc'!A0",
]

EXPRESSIONS = [
    "x.__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "__import__('os').system('touch fuzzmark')",
    "(lambda: 1)()",
    "[i for i in range(10)]",
    "{i: i for i in range(3)}",
    "10**10**10",
    "2**(2**64)",
    "9**9**9**9",
    "(" * 300 + "1" + ")" * 300,
    "-" * 3000 + "1",
    "+".join(["1"] * 6000),
    "1" * 5000,
    "1e309",
    "-1e309 * 0",
    "nan",
    "inf",
    "np.ones(10**10)",
    "np.zeros((100000, 100000))",
    "np.arange(1e12)",
    "np.ones((10, 10)) @ np.ones((3, 3))",
    "[1] * 10**10",
    "'a' * 10**10",
    "math.factorial(100000)",
    "int(1e300)",
    "x[10**20]",
    "x[-10**20]",
    "x[::0]",
    "np.exp(1e308)",
    "1 // 0",
    "1 % 0",
    "1 / 0",
    "0 ** -1",
    "(-8) ** (1/3)",
    "x if x else x" * 1,
    "not not not x",
    "a.b.c.d",
    "np.load('x')",
    "open('fuzzmark', 'w')",
    "getattr(np, 'load')",
    "np.__dict__",
    "f'{x}'",
    "x := 3",
    "*x",
    "x; y",
    "",
    " ",
    "\n",
    "# comment",
    "{}",
    "%s",
    "np.random.seed(1)",
    "np.full((10**6, 10**6), 1)",
    "np.linspace(0, 1, 10**12)",
    "np.eye(10**7)",
    "np.tile(np.ones(10), 10**9)",
    "np.outer(np.ones(10**5), np.ones(10**5))",
    "np.broadcast_to(1, (10**6, 10**6))",
    "np.repeat(1, 10**10)",
    "np.reshape(np.ones(4), (-1, -1))",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
]

NUMBERS = [
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    -0.0,
    2**63,
    -(2**63) - 1,
    10**30,
    -1,
    0,
    5e-324,
    True,
    10**4000,
]
WRONG = [[], {}, None, "x", 1, True, [[1]], {"a": {}}, [None], [{}], "", 1.5, [[[]]]]
SHAPES = [[10**12], [-1], [0], [10**6, 10**6], [], [1] * 70, "3", [1.5], [None]]


def hostile_text(rng: random.Random, base: str = "") -> str:
    """``base`` with a hostile text (and the mark) before, after or instead of it."""
    t = rng.choice(TEXTS)
    if rng.random() < 0.1:
        t = t * rng.choice([1000, 100_000])
    t = t + MARK if MARK not in t else t
    return rng.choice([t, base + t, t + base])


def _walk(data: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    out = [(path, data)]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _walk(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _walk(v, path + (i,))
    return out


def _get(data: Any, path: tuple) -> Any:
    for p in path:
        data = data[p]
    return data


def _set(data: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(data, path[:-1])[path[-1]] = value
    return data


def _rename_everywhere(data: Any, old: str, new: str) -> Any:
    if isinstance(data, dict):
        return {(new if k == old else k): _rename_everywhere(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [_rename_everywhere(v, old, new) for v in data]
    if data == old:
        return new
    return data


def _graphs(data: Any) -> list[dict]:
    out = []
    if isinstance(data, dict):
        for m in data.values():
            if isinstance(m, dict) and isinstance(m.get("graphs"), dict):
                out += [g for g in m["graphs"].values() if isinstance(g, dict)]
            elif isinstance(m, dict) and isinstance(m.get("graphs"), list):
                out += [g for g in m["graphs"] if isinstance(g, dict)]
    return out


def _nodes(g: dict) -> list[tuple[str, dict]]:
    nodes = g.get("nodes")
    if isinstance(nodes, dict):
        return [(k, v) for k, v in nodes.items() if isinstance(v, dict)]
    if isinstance(nodes, list):
        return [(v.get("id", ""), v) for v in nodes if isinstance(v, dict)]
    return []


def _ports(node: dict, kind: str) -> list[str]:
    ports = node.get(kind)
    if isinstance(ports, dict):
        return list(ports)
    if isinstance(ports, list):
        return [p.get("id") for p in ports if isinstance(p, dict)]
    return []


def mutate_tree(rng: random.Random, data: Any) -> tuple[Any, str]:
    """One mutation of parsed model data; returns (new data, what was done)."""
    data = copy.deepcopy(data)
    items = _walk(data)
    kind = rng.choice(
        [
            "text",
            "key",
            "expr",
            "expr",
            "number",
            "type",
            "delete",
            "structure",
            "structure",
            "shape",
            "giant",
            "rename",
        ]
    )
    if kind == "structure" and _graphs(data):
        return _structure(rng, data)
    strings = [(p, v) for p, v in items if isinstance(v, str)]
    dict_keys = [(p, k) for p, v in items if isinstance(v, dict) for k in v]
    if kind in ("text", "expr") and strings:
        path, value = rng.choice(strings)
        if kind == "text":
            new = hostile_text(rng, value)
        else:
            e = rng.choice(EXPRESSIONS)
            new = rng.choice([e, f"({value}) + ({e})", f"{value} * {e}"])
        return _set(data, path, new), f"{kind} at {_p(path)} = {new[:80]!a}"
    if kind in ("key", "rename") and dict_keys:
        path, key = rng.choice(dict_keys)
        new = hostile_text(rng, key)
        if kind == "rename":
            return _rename_everywhere(data, key, new), f"rename {key!a} -> {new[:80]!a}"
        parent = _get(data, path)
        parent[new] = parent.pop(key)
        return data, f"key at {_p(path)}: {key!a} -> {new[:80]!a}"
    leaves = [(p, v) for p, v in items if p]
    if not leaves:
        return data, "none"
    path, value = rng.choice(leaves)
    if kind == "number":
        nums = [(p, v) for p, v in leaves if isinstance(v, (int, float)) and v is not True]
        if nums:
            path, value = rng.choice(nums)
        new = rng.choice(NUMBERS)
        if isinstance(value, str) and rng.random() < 0.5:
            new = repr(new)
        return _set(data, path, new), f"number at {_p(path)} = {new!r:.40}"
    if kind == "type":
        new = rng.choice(WRONG)
        return _set(data, path, copy.deepcopy(new)), f"type at {_p(path)} = {new!r}"
    if kind == "delete":
        parent = _get(data, path[:-1])
        del parent[path[-1]]
        return data, f"delete {_p(path)}"
    if kind == "shape":
        dicts = [(p, v) for p, v in items if isinstance(v, dict)]
        p, d = rng.choice(dicts)
        field = rng.choice(["shape", "default_value", "default_initial_value", "value", "type"])
        new = (
            rng.choice(SHAPES)
            if field == "shape"
            else rng.choice(
                [[[0.0] * 50] * 50, "np.zeros(" + repr(rng.choice(SHAPES)) + ")", [1e309, -1e309]]
            )
        )
        d[field] = new
        return data, f"shape {_p(p)}.{field} = {new!r:.60}"
    # giant
    new = rng.choice(
        [
            "x" * 2_000_000,
            list(range(200_000)),
            _deep([], 60),
            _deep({}, 63),
            {f"k{i}": i for i in range(50_000)},
        ]
    )
    return _set(data, path, new), f"giant at {_p(path)} ({type(new).__name__})"


def _deep(leaf: Any, n: int) -> Any:
    for _ in range(n):
        leaf = [leaf] if isinstance(leaf, list) else {"a": leaf}
    return leaf


def _p(path: tuple) -> str:
    return ".".join(str(p) for p in path)[:120]


def _structure(rng: random.Random, data: Any) -> tuple[Any, str]:
    g = rng.choice(_graphs(data))
    nodes = _nodes(g)
    if not nodes:
        return data, "structure: no nodes"
    nid, node = rng.choice(nodes)
    outs = _ports(node, "output_ports") or ["out"]
    ins = _ports(node, "input_ports") or ["in"]
    what = rng.choice(
        ["self_loop", "missing_port", "missing_node", "condition", "twin", "cycle", "termination"]
    )
    edge = {"sender": nid, "receiver": nid, "sender_port": outs[0], "receiver_port": ins[0]}
    if what == "missing_port":
        edge["receiver_port"] = hostile_text(rng, "nope")
    elif what == "missing_node":
        edge["receiver"] = hostile_text(rng, "nope")
    elif what == "cycle" and len(nodes) > 1:
        other, onode = rng.choice(nodes)
        edge["receiver"] = other
        edge["receiver_port"] = (_ports(onode, "input_ports") or ["in"])[0]
        back = {
            "sender": other,
            "receiver": nid,
            "receiver_port": ins[0],
            "sender_port": (_ports(onode, "output_ports") or ["out"])[0],
        }
        _add_edge(g, back, "back_" + MARK)
    if what in ("self_loop", "missing_port", "missing_node", "cycle"):
        _add_edge(g, edge, "e_" + MARK)
        return data, f"structure {what} at {nid!a}"
    if what == "twin":
        # a copy of a node whose id differs only by a hostile character
        twin = (
            hostile_text(rng, nid)
            if rng.random() < 0.5
            else nid + rng.choice(["_", ".", " ", "\n", "é", "0", "__", "-"])
        )
        copy_ = copy.deepcopy(node)
        if isinstance(g["nodes"], dict):
            g["nodes"][twin] = copy_
        else:
            copy_["id"] = twin
            g["nodes"].append(copy_)
        return data, f"structure twin {nid!a} -> {twin[:40]!a}"
    conds = g.setdefault("conditions", {})
    if not isinstance(conds, dict):
        return data, "structure: conditions not a dict"
    if what == "termination":
        conds["termination"] = {
            "environment_state_update": rng.choice(
                [
                    {"type": "AfterNCalls", "kwargs": {"dependency": nid, "n": 10**18}},
                    {"type": "Never"},
                    {
                        "type": "AfterPass",
                        "kwargs": {"n": rng.choice([10**12, -5, 1.5, "3", None])},
                    },
                    {
                        "type": "Threshold",
                        "kwargs": {
                            "dependency": nid,
                            "parameter": MARK,
                            "threshold": float("nan"),
                            "comparator": rng.choice(["<", "nope", "__eq__"]),
                        },
                    },
                ]
            )
        }
        return data, f"structure termination {conds['termination']!a:.100}"
    node_conds = conds.setdefault("node_specific", {})
    if not isinstance(node_conds, dict):
        return data, "structure: node_specific not a dict"
    target = rng.choice([nid, hostile_text(rng, "ghost")])
    node_conds[target] = rng.choice(
        [
            {"type": "EveryNCalls", "kwargs": {"dependency": hostile_text(rng, "ghost"), "n": 1}},
            {
                "type": "EveryNCalls",
                "kwargs": {"dependency": nid, "n": rng.choice([0, -1, 10**20])},
            },
            {"type": hostile_text(rng, "All"), "kwargs": {}},
            {"type": "All", "kwargs": {"dependencies": [{"type": "All", "kwargs": {}}] * 3}},
            {"type": "Any", "kwargs": {"dependencies": _deep_cond(40)}},
            {"type": "TimeInterval", "kwargs": {"start": 1e309, "repeat": -1}},
            {"type": "WhenFinished", "kwargs": {"dependency": nid}},
        ]
    )
    return data, f"structure condition for {target[:40]!a}: {node_conds[target]!a:.100}"


def _deep_cond(n: int) -> list:
    c: Any = {"type": "Always", "kwargs": {}}
    for _ in range(n):
        c = {"type": "Not", "kwargs": {"condition": c}}
    return [c]


def _add_edge(g: dict, edge: dict, eid: str) -> None:
    edges = g.get("edges")
    if isinstance(edges, list):
        edges.append({"id": eid, **edge})
    else:
        if not isinstance(edges, dict):
            edges = g["edges"] = {}
        edges[eid] = edge


# ---------------------------------------------------------------- whole files


def byte_mutation(rng: random.Random, data: Any, ext: str) -> tuple[bytes, str, str]:
    """A mutation of the file's bytes: (bytes, extension, what was done)."""
    text = json.dumps(data)
    kind = rng.choice(
        [
            "bom",
            "utf16",
            "bad_utf8",
            "truncate",
            "empty",
            "scalar",
            "deep",
            "nan_tokens",
            "duplicate_key",
            "huge_int",
            "yaml_bomb",
            "yaml_python",
            "yaml_types",
            "yaml_keys",
            "crlf",
            "wrong_ext",
            "deep_yaml",
            "nul_bytes",
        ]
    )
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode(), ".json", kind
    if kind == "utf16":
        return text.encode("utf-16"), ".json", kind
    if kind == "bad_utf8":
        i = rng.randrange(len(text) + 1)
        b = text.encode()
        return (
            b[:i] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"]) + b[i:],
            ".json",
            kind,
        )
    if kind == "truncate":
        return text.encode()[: rng.randrange(len(text) + 1)], ".json", kind
    if kind == "empty":
        return rng.choice([b"", b" \n", b"\n\n"]), rng.choice([".json", ".yaml"]), kind
    if kind == "scalar":
        return (
            rng.choice(
                [
                    b"null",
                    b"[]",
                    b"1",
                    b'"x"',
                    b"{}",
                    b"true",
                    b"[{}]",
                    b'{"m": null}',
                    b'{"m": {"graphs": {}}}',
                    b'{"m": {"graphs": []}}',
                    b'{"m": {"graphs": {"g": {}}}}',
                ]
            ),
            ".json",
            kind,
        )
    if kind == "deep":
        n = rng.choice([100_000, 1000, 65])
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        return (opener * n + "1" + closer * n).encode(), ".json", f"deep {n}"
    if kind == "deep_yaml":
        n = rng.choice([100_000, 1000])
        return ("[" * n + "1" + "]" * n).encode(), ".yaml", f"deep yaml {n}"
    if kind == "nan_tokens":
        t = text.replace("0.", "NaN", 1).replace("1", "Infinity", 1)
        return t.encode(), ".json", kind
    if kind == "duplicate_key":
        i = text.find("{", 1)
        if i < 0:
            return text.encode(), ".json", "duplicate_key (none)"
        return (text[: i + 1] + '"nodes": {}, ' + text[i + 1 :]).encode(), ".json", kind
    if kind == "huge_int":
        return text.replace("1", "1" + "0" * 5000, 1).encode(), ".json", kind
    if kind == "yaml_bomb":
        bomb = "\n".join(
            ["a: &a [x, x, x, x, x, x, x, x, x]"]
            + [
                f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]"
                for i in range(1, 10)
            ]
        )
        return bomb.encode(), ".yaml", kind
    if kind == "yaml_python":
        tag = rng.choice(
            [
                "!!python/object/apply:os.system ['touch fuzzmark']",
                "!!python/name:os.system",
                "!!python/object/new:subprocess.Popen [['touch', 'fuzzmark']]",
                "!!python/module:os",
            ]
        )
        return f"m:\n  graphs:\n    g:\n      nodes: {tag}\n".encode(), ".yaml", kind
    if kind == "yaml_types":
        v = rng.choice(
            [
                "2001-12-14",
                "!!binary aGVsbG8=",
                "!!set {a, b}",
                "0x1F",
                "0o17",
                "1_000",
                ".nan",
                "-.inf",
                "~",
                "yes",
                "2001-12-14t21:59:43.10-05:00",
                "!!float '1e400'",
                "!!str",
                "!!omap [a: 1]",
            ]
        )
        data2 = copy.deepcopy(data)
        leaves = [(p, x) for p, x in _walk(data2) if p and not isinstance(x, (dict, list))]
        if not leaves:
            return b"x: 1", ".yaml", kind
        path, _ = rng.choice(leaves)
        _set(data2, path, "@@MARK@@")
        import yaml

        t = yaml.safe_dump(data2).replace("'@@MARK@@'", v).replace("'@@MARK@@", v)
        return t.encode(), ".yaml", f"yaml value {v} at {_p(path)}"
    if kind == "yaml_keys":
        k = rng.choice(
            ["1", "null", "true", "1.5", "2001-12-14", "[1, 2]", "{a: 1}", "? [x]", "<<"]
        )
        return (
            (
                f"m:\n  graphs:\n    g:\n      nodes:\n        {k}:\n          "
                f"parameters: {{p: {{value: 1}}}}\n"
            ).encode(),
            ".yaml",
            f"yaml key {k}",
        )
    if kind == "crlf":
        return json.dumps(data, indent=1).replace("\n", "\r\n").encode(), ".json", kind
    if kind == "nul_bytes":
        return text.encode().replace(b'"', b'"\x00', 1), ".json", kind
    # wrong_ext
    return text.encode(), rng.choice([".yml", ".JSON", ".txt", ".onnx", ""]), kind


# ---------------------------------------------------------------- command lines


def _first_param(data: dict) -> tuple[str, str] | None:
    for g in _graphs(data):
        for nid, node in _nodes(g):
            params = node.get("parameters")
            if isinstance(params, dict):
                for pid, p in params.items():
                    if isinstance(p, dict) and isinstance(p.get("value"), (int, float)):
                        return str(nid), str(pid)
    return None


def _first_port(data: dict) -> str:
    for g in _graphs(data):
        for nid, node in _nodes(g):
            ports = _ports(node, "output_ports")
            if ports:
                return f"{nid}.{ports[0]}"
    return "A.out"


def run_arguments(rng: random.Random, case: Any, data: dict) -> None:
    """Fill ``case.args`` (and the files it sets up) for its entry point."""
    m = case.model
    e = case.entry
    steps = ["--steps", str(rng.choice([1, 2, 3, 3, 5]))]
    if e in ("info", "validate"):
        case.args = [e, m] + (["--full"] if e == "info" and rng.random() < 0.3 else [])
        return
    if e == "draw":
        out = rng.choice(["out.svg", "out.png"])
        case.args, case.outputs = ["draw", m, out], (out,)
        return
    if e == "export":
        case.args, case.outputs = ["export", "--onnx", m, "out.onnx"], ("out.onnx",)
        return
    if e == "sweep":
        p = _first_param(data) or ("A", "p")
        case.args = [
            "sweep",
            m,
            "--set",
            f"{p[0]}.{p[1]}=0:1:3",
            "--record",
            _first_port(data),
            "--backend",
            "interpreted",
            *steps,
        ]
        return
    if e in ("api", "compat"):
        return
    backend = {"run": "interpreted", "run-compiled": "compiled", "run-hexagon": "hexagon"}[e]
    args = ["run", m, "--backend", backend]
    extra = rng.random()
    if extra < 0.45:
        args += steps
    elif extra < 0.55:
        args += rng.choice(
            [
                ["--steps", rng.choice(["10000000000", "-1", "0", "1e3", "nan", "9" * 30])],
                [
                    "--duration",
                    rng.choice(["1e300", "nan", "inf", "-1", "1"]),
                    "--dt",
                    rng.choice(["1e-300", "0", "-1", "nan", "5e-324", "0.1"]),
                ],
                ["--steps", "2", "--dt", rng.choice(["inf", "nan", "1e309", "-0"])],
                ["--steps", "2", "--seed", rng.choice(["-1", "99999999999999999999999", "x"])],
            ]
        )
    elif extra < 0.7:
        p = _first_param(data) or ("A", "p")
        value = rng.choice(
            [
                "1e309",
                "nan",
                "-inf",
                "[" * 100_000,
                "[1, [2]]",
                "{}",
                '"x"',
                "__import__('os').system('touch fuzzmark')",
                "np.ones(10**10)",
                "[" + ",".join(["1"] * 100) + "]",
                "null",
                "1" * 5000,
                "",
                "=",
                "[[1e308, -1e308]]",
                "true",
            ]
        )
        target = rng.choice(
            [
                f"{p[0]}.{p[1]}",
                hostile_text(rng, "A") + ".p",
                f"{p[0]}.{hostile_text(rng, 'p')}",
                "",
                ".",
                "A..p",
                p[0],
            ]
        )
        args += steps + ["--set", f"{target}={value}"]
    elif extra < 0.8:
        args += steps + [
            "--record",
            rng.choice([_first_port(data), hostile_text(rng, "A.o"), "*", ".", "", "A." * 1000]),
        ]
    else:
        args += steps + _output_args(rng, case)
    case.args = args


def _output_args(rng: random.Random, case: Any) -> list[str]:
    """``-o``/``--plot`` at existing files, folders, symlinks and the model itself."""
    # (the command line is trusted: "-o ../x" writes there, as asked)
    kind = rng.choice(["file", "dir", "symlink", "model", "dangling", "nested", "plot_model"])
    ext = rng.choice([".csv", ".json", ".npz"])
    if kind == "file":
        name = "saved" + ext
        case.saved[name] = b"precious user data\n"
        case.outputs = (name,)
        return ["-o", name]
    if kind == "dir":
        case.saved["saved" + ext] = None
        return ["-o", "saved" + ext]
    if kind == "symlink":
        case.saved["target.txt"] = b"precious target\n"
        case.saved["link" + ext] = b"->target.txt"
        case.outputs = ("link" + ext,)
        return ["-o", "link" + ext]
    if kind == "model":
        case.replaced_ok = False
        if case.model.endswith(".json"):
            return ["-o", case.model]
        return ["-o", "./" + case.model]
    if kind == "dangling":
        case.saved["dangle" + ext] = b"->missing_dir/x"
        case.outputs = ("dangle" + ext, "missing_dir")
        return ["-o", "dangle" + ext]
    if kind == "nested":
        return ["-o", "no_such_dir/out" + ext]
    # plot_model
    case.replaced_ok = False
    return ["--plot", case.model]


# ---------------------------------------------------------------- ONNX


def _pb_text(rng: random.Random, base: str) -> str:
    """A hostile text protobuf can hold (no lone surrogates)."""
    return hostile_text(rng, base).replace("\ud800", "\ufffd")


def make_onnx_case(rng: random.Random) -> tuple[bytes, str]:
    """A small hostile ONNX file: (bytes, what it holds)."""
    from onnx import TensorProto, helper

    kind = rng.choice(
        [
            "huge_dim",
            "external",
            "nested",
            "names",
            "bad_raw",
            "cycle",
            "unknown_op",
            "garbage",
            "huge_initializer",
            "string_tensor",
            "negative_dim",
            "deep_nested",
            "missing_input",
        ]
    )
    if kind == "garbage":
        return rng.choice(
            [
                b"",
                b"\x00" * 100,
                b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
                bytes(rng.randrange(256) for _ in range(300)),
            ]
        ), kind
    name = _pb_text(rng, "x") if kind == "names" else "x"
    dim = {"huge_dim": 10**12, "negative_dim": -5}.get(kind, 3)
    x = helper.make_tensor_value_info(name, TensorProto.FLOAT, [dim, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", [name], ["y"], name=_pb_text(rng, "n"))]
    inits = []
    if kind == "external":
        t = helper.make_tensor("w", TensorProto.FLOAT, [2], [0.0, 0.0])
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (
            (
                "location",
                rng.choice(
                    ["../../etc/passwd", "/etc/passwd", f"../{MARK}", "/dev/zero", "x\x00y"]
                ),
            ),
            ("length", str(rng.choice([8, 10**12]))),
        ):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        nodes = [helper.make_node("Add", [name, "w"], ["y"])]
    if kind == "huge_initializer":
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**6, 10**6])
        t.float_data.append(1.0)
        inits.append(t)
        nodes = [helper.make_node("Add", [name, "w"], ["y"])]
    if kind == "bad_raw":
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[5, 2], raw_data=b"\0" * 7)
        inits.append(t)
        nodes = [helper.make_node("Add", [name, "w"], ["y"])]
    if kind == "string_tensor":
        t = helper.make_tensor("w", TensorProto.STRING, [1], [MARK.encode()])
        inits.append(t)
        nodes = [helper.make_node("Add", [name, "w"], ["y"])]
    if kind == "cycle":
        nodes = [helper.make_node("Relu", ["z"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    if kind == "unknown_op":
        nodes = [
            helper.make_node(
                _pb_text(rng, "Op"),
                [name],
                ["y"],
                domain=rng.choice(["", "evil", _pb_text(rng, "d")]),
            )
        ]
    if kind == "missing_input":
        nodes = [helper.make_node("Add", [name, "nope"], ["y"])]
    if kind in ("nested", "deep_nested"):
        depth = 3 if kind == "nested" else 30
        out = [helper.make_tensor_value_info("o", TensorProto.BOOL, [])]
        leaf = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "leaf", [], out)
        body: Any = None
        for _ in range(depth):  # nested in one branch: the other is a leaf (else 2**depth)
            inner_nodes = (
                [helper.make_node("Identity", ["c"], ["o"])]
                if body is None
                else [helper.make_node("If", ["c"], ["o"], then_branch=body, else_branch=leaf)]
            )
            body = helper.make_graph(
                inner_nodes, "b", [], [helper.make_tensor_value_info("o", TensorProto.BOOL, [])]
            )
        c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=leaf)]
        graph = helper.make_graph(nodes, _pb_text(rng, "g"), [c], [y])
        return helper.make_model(graph).SerializeToString(), kind
    graph = helper.make_graph(
        nodes, _pb_text(rng, "g") if rng.random() < 0.5 else "g", [x], [y], inits
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", rng.choice([13, 13, 1, 10**6]))]
    )
    return model.SerializeToString(), kind
