"""Audit 2: hand-written hostile files through every command, systematically (docs/security.md,
"Audit 2"). Each attack is a file (or a command line) run on every entry point it concerns, in
the sandbox of ``tools/fuzz_models.py`` (forked child, own HOME and cache, time and memory
bounds) and checked by its rules.

Usage: ``python tools/audit2_attacks.py [--only PREFIX] [--grep TEXT] [--texts START:STOP] [-v]``; prints one line per finding.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_models import Case, describe, run_case  # noqa: E402

MARK = "fuzzmark"


def base() -> dict:
    """A -> B: A's state p counts, B accumulates what it gets."""
    return {
        "id": "m",
        "metadata": {"note": "x"},
        "graphs": [
            {
                "id": "g",
                "nodes": [
                    {
                        "id": "A",
                        "parameters": [
                            {"id": "p", "value": "p + 1", "default_initial_value": 0},
                            {"id": "k", "value": 2.0},
                        ],
                        "functions": [{"id": "f", "value": "p * k"}],
                        "output_ports": [{"id": "o", "value": "f"}],
                    },
                    {
                        "id": "B",
                        "input_ports": [{"id": "i", "shape": [1]}],
                        "parameters": [
                            {"id": "acc", "value": "acc + i", "default_initial_value": 0}
                        ],
                        "output_ports": [{"id": "o", "value": "acc"}],
                    },
                ],
                "edges": [
                    {
                        "id": "e",
                        "sender": "A",
                        "sender_port": "o",
                        "receiver": "B",
                        "receiver_port": "i",
                    }
                ],
            }
        ],
    }


def rename(data, old: str, new: str, keys=("id", "sender", "receiver")):
    if isinstance(data, dict):
        return {
            k: (new if (k in keys and v == old) else rename(v, old, new, keys))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [rename(v, old, new, keys) for v in data]
    return data


HOSTILE_IDS = [
    "a\nb",
    "q\"u'o",
    "back\\slash\\n",
    "{0}{x}%s%(x)s%n",
    "nul\x00x",
    "ls\u2028sep",
    "bidi\u202eevil\u2066",
    "rlm\u200fx\u061c",
    "__class__",
    "None",
    "True",
    "lambda",
    "__import__",
    "__builtins__",
    "s3",
    "c12",
    "a0",
    "F2",
    "S",
    "run",
    "np",
    "math",
    "step",
    "nsteps",
    "err",
    "x" * 100_000,
    "=cmd|' /C calc'!A0",
    "../../" + MARK,
    "/tmp/" + MARK,
    "A.B",
    "",
    " ",
    "\ud800",
    '<b>&amp;</b>"]; evil [label="',
    "}\n digraph { " + MARK,
    "$(touch " + MARK + ")",
    "é∂漢",
]


def id_model(where: str, text: str) -> dict:
    m = base()
    g = m["graphs"][0]
    if where == "node":
        return rename(m, "A", text)
    if where == "param":
        a = g["nodes"][0]
        a["parameters"][1]["id"] = text
        a["functions"][0]["value"] = "p * 2"
        return m
    if where == "state":  # a stateful parameter read by no expression of another
        g["nodes"][1]["parameters"][0]["id"] = text
        g["nodes"][1]["parameters"][0]["value"] = "1.5"
        g["nodes"][1]["output_ports"][0]["value"] = "i"
        return m
    if where == "port":
        g["nodes"][0]["output_ports"][0]["id"] = text
        g["edges"][0]["sender_port"] = text
        return m
    if where == "inport":
        g["nodes"][1]["input_ports"][0]["id"] = text
        g["edges"][0]["receiver_port"] = text
        g["nodes"][1]["parameters"][0]["value"] = "acc + 1"
        return m
    if where == "graph":
        g["id"] = text
        return m
    if where == "model":
        m["id"] = text
        return m
    if where == "edge":
        g["edges"][0]["id"] = text
        return m
    if where == "function":
        g["nodes"][0]["functions"][0]["id"] = text
        g["nodes"][0]["output_ports"][0]["value"] = "p"
        return m
    if where == "metadata":
        m["metadata"] = {text: text, "units": text}
        g["nodes"][0]["metadata"] = {"color": text, text: [text]}
        g["nodes"][0]["parameters"][0]["metadata"] = {"units": text}
        return m
    raise ValueError(where)


ID_PLACES = [
    "node",
    "param",
    "state",
    "port",
    "inport",
    "graph",
    "model",
    "edge",
    "function",
    "metadata",
]


def expr_model(expr: str, where: str = "value") -> dict:
    m = base()
    a = m["graphs"][0]["nodes"][0]
    if where == "value":
        a["parameters"][1]["value"] = expr
    elif where == "function":
        a["functions"][0]["value"] = expr
    elif where == "port":
        a["output_ports"][0]["value"] = expr
    elif where == "condition":
        m["graphs"][0]["conditions"] = {
            "node_specific": {
                "A": {
                    "type": "Threshold",
                    "kwargs": {
                        "dependency": "A",
                        "parameter": "p",
                        "threshold": expr,
                        "comparator": ">=",
                    },
                }
            }
        }
    elif where == "state":
        a["parameters"][0]["value"] = expr
    elif where == "default":
        a["parameters"][0]["default_initial_value"] = expr
    elif where == "derivative":
        a["parameters"][0] = {"id": "p", "time_derivative": expr, "default_initial_value": 0}
    return m


EXPRESSIONS = [
    "__import__('os').system('touch fuzzmark')",
    "p.__class__",
    "k.real",
    "np.__dict__",
    "np.load",
    "np.lib.npyio",
    "math.__loader__",
    "(lambda: 1)()",
    "[i for i in range(3)]",
    "(y := 3)",
    "10**10**10",
    "2.0**10**10",
    "10**-10**10",
    "(" * 5000 + "1" + ")" * 5000,
    "-" * 100000 + "1",
    "~" * 100000 + "1",
    "not " * 20000 + "1",
    "[" * 300 + "1" + "]" * 300,
    "1" * 19000,
    "1e99999",
    "0x" + "f" * 10000,
    "'fuzzmark'",
    "f'{p}'",
    "b'x'",
    '"a" * 10**9',
    "open('fuzzmark', 'w')",
    "eval('1')",
    "getattr(np, 'load')",
    "globals()",
    "np.fromfile('/etc/passwd')",
    "np.genfromtxt('/etc/passwd')",
    "np.loadtxt('/etc/passwd')",
    "np.save('fuzzmark', 1)",
    "np.random.seed(1)",
    "np.ctypeslib",
    "math.pi.__class__",
    "p if p else k",
    "p[::-1]",
    "p[10**30]",
    "np.ones(10**8)",
    "np.ones((10**4, 10**4))",
    "np.arange(10**9)",
    "np.linspace(0, 1, 10**9)",
    "np.empty(10**12)",
    "np.repeat(p, 10**12)",
    "np.kron(np.ones(10**4), np.ones(10**5))",
    "np.ones(10**4)[:, None] * np.ones(10**5)",
    "np.tile(1, 10**12)",
    "np.resize(p, 10**12)",
    "np.pad(p, 10**10)",
    "np.identity(10**6)",
    "np.tri(10**6)",
    "np.meshgrid(np.ones(10**5), np.ones(10**5))",
    "np.indices((10**5, 10**5))",
    "np.diag(np.ones(10**6))",
    "np.full(10**5, 1) ** np.full(10**5, 1)",
    "np.einsum('i,j->ij', np.ones(10**5), np.ones(10**5))",
    "math.factorial(10**6)",
    "math.comb(10**9, 10**8)",
    "math.perm(10**9, 10**8)",
    "math.prod(range(1, 10**6))",
    "math.isqrt(10**100000)",
    "math.lcm(*range(1, 10**6))",
    "pow(10, 10**10)",
    "pow(10, 10**10, 7)",
    "round(1e308, -10**10)",
    "int('9' * 100000)",
    "str(10**5000)",
    "range(10**18)",
    "list(range(10**9))",
    "sum(range(10**12))",
    "max(range(10**12))",
    "sorted(range(10**9))",
    "abs(-1) if 1 else p.__class__",
    "p < k < 1 < 2 < 3",
    "1 << 10**10",
    "1 >> -1",
    "2 ** 3.5j",
    "1j",
    "None",
    "True + ...",
    "...",
    "p @ p",
    "{}",
    "{1, 2}",
    "{'a': 1}",
    "()",
    "(1, 'fuzzmark')",
    "*p",
    "p; import os",
    "p\nimport os",
    "p # fuzzmark",
    "\\\n",
    "",
    "   ",
    "np.array([1, 2]) + np.array([1, 2, 3])",
    "np.nan",
    "math.inf - math.inf",
    "int(math.nan)",
    "1 // 0",
    "1 % 0",
    "1 / 0",
    "0 ** -1",
    "math.log(0)",
    "math.sqrt(-1)",
    "math.exp(1e308)",
    "np.sin",
    "np",
    "math",
    "print",
    "print('fuzzmark')",
    "input()",
    "exit()",
    "breakpoint()",
    "__builtins__",
    "__name__",
]


def shape_model(kind: str, value) -> dict:
    m = base()
    g = m["graphs"][0]
    if kind == "shape":
        g["nodes"][1]["input_ports"][0]["shape"] = value
    elif kind == "default_value":
        g["nodes"][1]["input_ports"][0]["default_value"] = value
    elif kind == "param":
        g["nodes"][0]["parameters"][1]["value"] = value
    elif kind == "init":
        g["nodes"][0]["parameters"][0]["default_initial_value"] = value
    elif kind.startswith("cond:"):
        ctype = kind.split(":", 1)[1]
        kwargs = {"dependency": "A"}
        kwargs.update(value)
        g["conditions"] = {"node_specific": {"B": {"type": ctype, "kwargs": kwargs}}}
    elif kind.startswith("term:"):
        ctype = kind.split(":", 1)[1]
        g["conditions"] = {
            "termination": {"environment_state_update": {"type": ctype, "kwargs": value}}
        }
    elif kind == "onnx_attr":
        g["nodes"][0]["functions"][0] = {
            "id": "f",
            "function": value["function"],
            "args": value["args"],
        }
    return m


NUM = [
    0,
    -1,
    1e308,
    float("nan"),
    float("inf"),
    -float("inf"),
    2**70,
    -(2**70),
    1.5,
    "x",
    None,
    [],
    True,
]


SHAPES = (
    [
        ("shape", v)
        for v in (
            [10**9],
            [-1],
            [0],
            [2**40, 2**40],
            [1e308],
            ["nan"],
            "[1]*99999",
            [[1]],
            [1.5],
            [True],
            "abc",
            {"a": 1},
            [0] * 10000,
            None,
        )
    ]
    + [
        ("default_value", v)
        for v in ([[1], [1, 2]], "p" * 20000, {"a": 1}, [float("nan")], None, [1e308, -1e308])
    ]
    + [
        ("param", v)
        for v in (
            1e308,
            -1e308,
            float("nan"),
            float("inf"),
            [[1, 2], [3]],
            {"x": 1},
            None,
            True,
            "",
            2**64,
            -(2**64),
            2**1000,
            [1] * 200000,
        )
    ]
    + [("init", v) for v in (float("nan"), [[1], [1, 2]], {"a": 1}, 2**64, "p", "k", "10**10**10")]
    + [("cond:EveryNPasses", {"n": v}) for v in NUM]
    + [("cond:EveryNCalls", {"n": v}) for v in NUM]
    + [("cond:AfterNCalls", {"n": v}) for v in NUM]
    + [("cond:AtPass", {"n": v}) for v in NUM]
    + [("cond:AfterPass", {"n": v}) for v in NUM]
    + [("cond:BeforeNCalls", {"n": v}) for v in NUM]
    + [("cond:TimeInterval", {"start": v, "repeat": v}) for v in NUM]
    + [("cond:Threshold", {"parameter": "p", "threshold": v, "comparator": ">="}) for v in NUM]
    + [
        ("cond:Threshold", {"parameter": "p", "threshold": 1, "comparator": c})
        for c in ("=~", "__eq__", "", None, "is")
    ]
    + [("cond:Threshold", {"parameter": "nope", "threshold": 1, "comparator": ">="})]
    + [
        ("cond:Threshold", {"parameter": "p", "threshold": 1, "comparator": ">=", "indices": v})
        for v in ([10**9], [-5], "x", [[1]])
    ]
    + [
        ("cond:" + t, {})
        for t in (
            "Never",
            "Always",
            "__class__",
            "os.system",
            "All",
            "Any",
            "Not",
            "WhileNot",
            "",
            "Threshold",
        )
    ]
    + [("cond:All", {"dependencies": [{"type": "All", "kwargs": {}}] * 3})]
    + [
        ("term:Never", {}),
        ("term:AfterNCalls", {"dependency": "A", "n": 10**12}),
        ("term:AfterNCalls", {"dependency": "A", "n": float("nan")}),
        ("term:AfterPass", {"n": 10**9}),
        ("term:AtPass", {"n": -1}),
        (
            "term:Threshold",
            {"dependency": "A", "parameter": "p", "threshold": float("nan"), "comparator": ">="},
        ),
        (
            "term:Threshold",
            {"dependency": "A", "parameter": "p", "threshold": 1e308, "comparator": ">="},
        ),
        ("term:TimeInterval", {"start": 0, "repeat": 0}),
        ("term:WhenFinished", {"dependency": "A"}),
        ("term:AfterNTrials", {"n": 10**9}),
    ]
    + [
        ("onnx_attr", {"function": {f: {"input": "p"}}, "args": a})
        for f, a in [
            ("onnx::Tile", {"repeats": [10**12]}),
            ("onnx::ConstantOfShape", {"input": [10**6, 10**6]}),
            ("onnx::Range", {"start": 0, "limit": 1e18, "delta": 1e-9}),
            ("onnx::Expand", {"shape": [10**6, 10**6]}),
            ("onnx::Reshape", {"shape": [-1, -1]}),
            ("onnx::Pad", {"pads": [10**10, 10**10]}),
            ("onnx::Resize", {"scales": [1e9]}),
            ("onnx::OneHot", {"indices": [1], "depth": 10**12, "values": [0, 1]}),
            ("onnx::Upsample", {"scales": [1e9]}),
            ("onnx::RandomNormal", {"shape": [10**6, 10**6]}),
            ("onnx::EyeLike", {"k": 10**18}),
            ("onnx::Unknown", {}),
            ("evil::Thing", {}),
            ("__import__", {}),
            ("onnx::Gather", {"indices": [10**12]}),
            ("onnx::Split", {"split": [10**12]}),
            ("onnx::MaxPool", {"kernel_shape": [10**9]}),
            ("onnx::Conv", {"W": [[[1.0]]], "kernel_shape": [10**9]}),
            ("onnx::Einsum", {"equation": "'; import os"}),
            ("onnx::Cast", {"to": 10**9}),
            ("onnx::StringNormalizer", {"stopwords": ["x"] * 10}),
        ]
    ]
)

RUN_ARGS = [
    ["--steps", "0"],
    ["--steps", "-1"],
    ["--steps", "1e308"],
    ["--steps", "nan"],
    ["--steps", "99999999999999999999"],
    ["--dt", "0", "--duration", "1"],
    ["--dt", "-1", "--duration", "1"],
    ["--dt", "nan", "--duration", "1"],
    ["--dt", "1e-320", "--duration", "1"],
    ["--duration", "-1"],
    ["--duration", "nan"],
    ["--duration", "inf"],
    ["--dt", "inf", "--duration", "1"],
    ["--steps", "3", "--dt", "nan"],
    ["--steps", "3", "--dt", "inf"],
    ["--record", "A.nope"],
    ["--record", "A.o.x"],
    ["--record", ""],
    ["--record", "."],
    ["--record", "\x1b[2J.o"],
    ["--set", "A.k=nan"],
    ["--set", "A.k=1e999"],
    ["--set", "A.k=[" * 10 + "]" * 10],
    ["--set", "A.nope=1"],
    ["--set", "A.k"],
    ["--set", "=1"],
    ["--set", "A.k=__import__('os')"],
    ["--set", "A.p=[1,2,3]"],
    ["--seed", "-1"],
    ["--seed", "99999999999999999999999"],
    ["--seed", "nan"],
    ["--graph", "nope"],
    ["--graph", "\x1b[2J"],
    ["--max-cycles", "-1"],
    ["--initializer", "/etc/passwd"],
    ["--initializer", "/dev/zero"],
    ["--initializer", "."],
    ["--initializer", "nope.json"],
]


def files_attacks() -> list[tuple[str, bytes, str]]:
    """(what, file bytes, suffix)."""
    good = json.dumps(base()).encode()
    out = [
        ("bom json", b"\xef\xbb\xbf" + good, ".json"),
        ("utf16 json", json.dumps(base()).encode("utf-16"), ".json"),
        ("latin1 json", good.replace(b'"m"', b'"\xe9"'), ".json"),
        ("nul in json", good + b"\x00", ".json"),
        ("deep json", b"[" * 200000 + b"]" * 200000, ".json"),
        ("deep json obj", b'{"a":' * 100000 + b"1" + b"}" * 100000, ".json"),
        ("dup keys json", good.replace(b'"id": "m"', b'"id": "m", "id": "n"'), ".json"),
        ("nan json", good.replace(b"2.0", b"NaN"), ".json"),
        ("huge number json", good.replace(b"2.0", b"1" * 50000), ".json"),
        ("huge float json", good.replace(b"2.0", b"1e99999"), ".json"),
        ("empty", b"", ".json"),
        ("null", b"null", ".json"),
        ("list top", b"[1,2]", ".json"),
        ("string top", b'"x"', ".json"),
        ("no graphs", b'{"id": "m"}', ".json"),
        ("graphs dict", b'{"id": "m", "graphs": {"g": {"nodes": {}}}}', ".json"),
        ("graphs empty", b'{"id": "m", "graphs": []}', ".json"),
        (
            "yaml python tag",
            b"id: !!python/object/apply:os.system ['touch fuzzmark']\ngraphs: []\n",
            ".yaml",
        ),
        ("yaml python name", b"id: !!python/name:os.system\n", ".yaml"),
        ("yaml custom tag", b"id: !evil x\n", ".yaml"),
        ("yaml binary", b"id: !!binary aGVsbG8=\ngraphs: []\n", ".yaml"),
        ("yaml timestamp", b"id: 2001-12-14t21:59:43.10-05:00\ngraphs: []\n", ".yaml"),
        ("yaml set", b"id: m\ngraphs: !!set {a, b}\n", ".yaml"),
        (
            "yaml bomb",
            b"a: &a [x,x,x,x,x,x,x,x,x]\n"
            + b"".join(
                b"%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n" % ((c,) * 2 + (p,) * 9)
                for p, c in zip(
                    [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"],
                    [b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"i"],
                )
            ),
            ".yaml",
        ),
        ("yaml recursive", b"id: &a [*a]\n", ".yaml"),
        ("yaml recursive map", b"a: &a {b: *a}\nid: m\n", ".yaml"),
        ("yaml merge", b"x: &x {id: m}\n<<: *x\ngraphs: []\n", ".yaml"),
        ("yaml multi doc", b"id: m\n---\nid: n\n", ".yaml"),
        ("yaml deep", b"[" * 100000 + b"]" * 100000, ".yaml"),
        ("yaml deep map", b"{a: " * 50000 + b"1" + b"}" * 50000, ".yaml"),
        ("yaml bool key", b"true: 1\nid: m\n", ".yaml"),
        ("yaml nul", b"id: m\x00\n", ".yaml"),
        (
            "yaml huge int",
            b"id: m\ngraphs: [{id: g, nodes: [{id: A, parameters: [{id: k, value: "
            + b"9" * 100000
            + b"}]}]}]\n",
            ".yaml",
        ),
        ("yaml 0o", b"id: 0o777\ngraphs: []\n", ".yaml"),
        (
            "yaml .inf",
            b"id: m\ngraphs: [{id: g, nodes: [{id: A, parameters: [{id: k, value: .inf}], output_ports: [{id: o, value: k}]}]}]\n",
            ".yaml",
        ),
        (
            "big file",
            b'{"id": "m", "metadata": {"x": "' + b"a" * (300 * 1024 * 1024) + b'"}, "graphs": []}',
            ".json",
        ),
        (
            "many nodes",
            json.dumps(
                {
                    "id": "m",
                    "graphs": [{"id": "g", "nodes": [{"id": f"n{i}"} for i in range(300000)]}],
                }
            ).encode(),
            ".json",
        ),
        (
            "many edges",
            json.dumps(
                {
                    "id": "m",
                    "graphs": [
                        {
                            "id": "g",
                            "nodes": [
                                {
                                    "id": "A",
                                    "output_ports": [{"id": "o", "value": "1"}],
                                    "input_ports": [{"id": "i"}],
                                }
                            ],
                            "edges": [
                                {
                                    "id": f"e{i}",
                                    "sender": "A",
                                    "sender_port": "o",
                                    "receiver": "A",
                                    "receiver_port": "i",
                                }
                                for i in range(100000)
                            ],
                        }
                    ],
                }
            ).encode(),
            ".json",
        ),
        ("weird suffix", good, ".txt"),
        ("no suffix", good, ""),
        ("onnx suffix json", good, ".onnx"),
    ]
    return out


def one(
    name: str,
    model_bytes: bytes,
    suffix: str,
    entry: str,
    extra: list[str] | None = None,
    saved: dict | None = None,
    outputs: tuple = (),
    env: dict | None = None,
    node: str = "A",
) -> tuple[Case, dict]:
    model = "model" + suffix
    args = {
        "run": ["run", model, "--steps", "3"],
        "run-c": ["run", model, "--steps", "3", "--backend", "compiled"],
        "run-t0": ["run", model, "--steps", "3", "--backend", "compiled"],
        "run-csv": ["run", model, "--steps", "3", "-o", "out.csv", "--record", "A.o"],
        "info": ["info", model],
        "validate": ["validate", model],
        "draw": ["draw", model, "out.svg"],
        "export": ["export", "--onnx", model, "out.onnx", "--step"],
        "sweep": [
            "sweep",
            model,
            "--set",
            f"{node}.k=0:1:2",
            "--steps",
            "2",
            "--record",
            "B.o",
            "-o",
            "out.nc",
        ],
        "api": [],
        "compat": [],
    }[entry] + (extra or [])
    outs = outputs or ("out.csv", "out.svg", "out.onnx", "out.nc", "out.npz", "out.json", "out.png")
    case = Case(
        0,
        entry if entry in ("api", "compat", "validate") else "run",
        "audit2",
        name,
        {model: model_bytes},
        model,
        args,
        outputs=outs,
    )
    case.saved[model] = model_bytes
    if saved:
        case.saved.update(saved)
    envs = {"run-c": {"MDF_ENGINE_TIER0": "0"}, "run-t0": {"MDF_ENGINE_TIER0": "always"}}
    e = dict(envs.get(entry, {}))
    e.update(env or {})
    return case, e


ALL = ["run", "run-c", "run-t0", "info", "validate", "draw", "export", "sweep", "api", "compat"]


def attacks(only: str) -> list[tuple[Case, dict]]:
    out = []

    def add(prefix: str, *a, **k):
        if prefix.startswith(only) or only == "":
            c, e = one(*a, **k)
            c.what = prefix + ": " + c.what
            out.append((c, e))

    for where in ID_PLACES:
        for text in HOSTILE_IDS:
            data = json.dumps(id_model(where, text)).encode("utf-8", "surrogatepass")
            entries = ALL if len(text) < 1000 else ["run", "run-c", "info", "draw"]
            if where not in ("node", "param", "port"):
                entries = ["run", "run-c", "info", "draw"]
            if where == "metadata":
                entries = ["run", "info", "draw", "export", "validate"]
            for entry in entries:
                add(
                    "id",
                    f"{where}={text[:40]!a}",
                    data,
                    ".json",
                    entry,
                    node=text if where == "node" else "A",
                )
            if where in ("node", "port") and len(text) < 1000:
                add(
                    "id",
                    f"{where}={text[:40]!a} csv",
                    data,
                    ".json",
                    "run",
                    [
                        "-o",
                        "out.csv",
                        "--record",
                        f"{text if where == 'node' else 'A'}.{text if where == 'port' else 'o'}",
                    ],
                )
    for expr in EXPRESSIONS:
        for where in ("value", "function", "port", "state", "default", "condition", "derivative"):
            data = json.dumps(expr_model(expr, where)).encode()
            entries = ["run", "run-c", "run-t0"] if where == "value" else ["run"]
            if where != "value" and EXPRESSIONS.index(expr) % 4:
                continue  # every 4th expression in the other places
            for entry in entries:
                add("expr", f"{where}={expr[:60]!a}", data, ".json", entry)
    for kind, value in SHAPES:
        data = json.dumps(shape_model(kind, value)).encode()
        for entry in ["run", "run-c"]:
            add("shape", f"{kind}={str(value)[:60]!a}", data, ".json", entry)
    good = json.dumps(base()).encode()
    for a in RUN_ARGS:
        for entry in ["run", "run-c"]:
            add("arg", f"{a!a}", good, ".json", entry, a)
    for what, blob, suffix in files_attacks():
        entries = ["run", "info", "validate"] if len(blob) < 10**6 else ["run"]
        for entry in entries:
            add("file", what, blob, suffix, entry)
    # output paths
    for what, args, saved in [
        ("-o the model", ["-o", "model.json"], {}),
        ("-o a folder", ["-o", "d"], {"d": None}),
        ("-o a folder/", ["-o", "d/"], {"d": None}),
        ("-o existing csv", ["-o", "keep.csv"], {"keep.csv": b"keep me"}),
        ("-o symlink to model", ["-o", "l.json"], {"l.json": b"->model.json"}),
        ("-o dangling symlink", ["-o", "l.csv"], {"l.csv": b"->../x.csv"}),
        ("-o ..", ["-o", "../out.csv"], {}),
        ("-o /dev/full", ["-o", "/dev/full"], {}),
        ("-o no suffix", ["-o", "out"], {}),
        ("-o .exe", ["-o", "out.exe"], {}),
        ("-o empty", ["-o", ""], {}),
        ("--plot the model", ["--plot", "model.json"], {}),
        ("--plot a folder", ["--plot", "d"], {"d": None}),
        ("-o missing folder", ["-o", "nope/out.csv"], {}),
    ]:
        for cmd in ["run", "sweep"]:
            if cmd == "sweep" and "plot" in what:
                continue
            base_args = {"run": ["--steps", "2"], "sweep": None}[cmd]
            if cmd == "sweep":
                c, e = one(what, good, ".json", "sweep", saved=saved)
                c.args = [
                    "sweep",
                    "model.json",
                    "--set",
                    "A.k=0:1:2",
                    "--steps",
                    "2",
                    "--record",
                    "B.o",
                ] + args
            else:
                c, e = one(what, good, ".json", "run", base_args + args, saved=saved)
            c.what = f"out: {cmd} {what}"
            if only == "" or "out".startswith(only):
                out.append((c, e))
        for cmd, a2 in [
            ("draw", ["draw", "model.json"]),
            ("export", ["export", "--onnx", "model.json"]),
        ]:
            if "-o" not in what:
                continue
            target = args[1]
            c, e = one(what, good, ".json", "draw", saved=saved)
            c.args = a2 + [target]
            c.what = f"out: {cmd} {what}"
            if only == "" or "out".startswith(only):
                out.append((c, e))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--grep", default="")
    p.add_argument("-v", action="store_true")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--texts", default="", help="a slice START:STOP of the hostile id texts")
    a = p.parse_args(argv)
    if a.texts:
        start, _, stop = a.texts.partition(":")
        HOSTILE_IDS[:] = HOSTILE_IDS[int(start or 0) : int(stop) if stop else None]
    import graph_scheduler  # noqa: F401
    import yaml  # noqa: F401

    import mdf_engine.cli  # noqa: F401
    import mdf_engine.simulation  # noqa: F401

    root = Path(tempfile.mkdtemp(prefix="audit2_"))
    (root / "sandbox").mkdir()
    cache = root / "cache"
    cache.mkdir()
    cases = [c for c in attacks(a.only) + onnx_cases(a.only) if a.grep in c[0].what]
    t0 = time.monotonic()
    found = 0
    for n, (case, env) in enumerate(cases):
        case.number = n
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            o = run_case(
                case,
                root / "sandbox",
                timeout=a.timeout,
                mem_mb=4096,
                subprocess_mode=False,
                cache=cache,
            )
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if o.rss_mb > 1500:
            o.problems.append(f"used {o.rss_mb:.0f} MB")
        if o.rc == 2 and o.cpu > 20:
            o.problems.append(f"refused only after {o.cpu:.1f} s")
        if o.problems:
            found += 1
            print("FINDING", env, describe(o), flush=True)
        elif a.v:
            print("ok", env, describe(o)[:300], flush=True)
        import shutil

        for box in (root / "sandbox").iterdir():
            shutil.rmtree(box, ignore_errors=True)
    print(f"{len(cases)} cases, {found} findings, {time.monotonic() - t0:.0f} s")
    return 1 if found else 0


def onnx_attacks() -> list[tuple[str, bytes, dict]]:
    """(what, ONNX bytes, files beside it)."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", F, [3, 2])
    y = helper.make_tensor_value_info("y", F, None)

    def model(nodes, inits=(), opset=13, inputs=None, functions=(), extra_opsets=()):
        g = helper.make_graph(nodes, "g", [x] if inputs is None else inputs, [y], list(inits))
        ops = [helper.make_opsetid("", opset), *extra_opsets]
        m = helper.make_model(g, opset_imports=ops, functions=list(functions))
        return m.SerializeToString()

    out = []

    def ext(loc, length=None, offset=None):
        t = helper.make_tensor("w", F, [2], [0.0, 0.0])
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("length", length), ("offset", offset)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        return t

    add = [helper.make_node("Add", ["x", "w"], ["y"])]
    for loc, files in [
        ("fifo", {"fifo": b"FIFO"}),
        ("model.onnx", {}),
        (".", {}),
        ("d", {"d": None}),
        ("w.bin", {"w.bin": b"\0" * 8}),
        ("l.bin", {"l.bin": b"->/etc/passwd"}),
        ("../" + MARK, {}),
        ("/etc/passwd", {}),
        ("nope.bin", {}),
    ]:
        out.append((f"external {loc}", model(add, [ext(loc)]), files))
    out.append(("external huge length", model(add, [ext("w.bin", 10**12)]), {"w.bin": b"\0" * 8}))
    out.append(
        ("external huge offset", model(add, [ext("w.bin", 8, 10**15)]), {"w.bin": b"\0" * 8})
    )
    out.append(("external neg offset", model(add, [ext("w.bin", 8, -4)]), {"w.bin": b"\0" * 8}))
    # a local function that calls itself
    f = helper.make_function(
        "cust",
        "Rec",
        ["a"],
        ["b"],
        [helper.make_node("Rec", ["a"], ["b"], domain="cust")],
        [helper.make_opsetid("", 13), helper.make_opsetid("cust", 1)],
    )
    out.append(
        (
            "recursive function",
            model(
                [helper.make_node("Rec", ["x"], ["y"], domain="cust")],
                functions=[f],
                extra_opsets=[helper.make_opsetid("cust", 1)],
            ),
            {},
        )
    )
    for opset in (0, -1, 10**6, 2**62):
        out.append(
            (f"opset {opset}", model([helper.make_node("Relu", ["x"], ["y"])], opset=opset), {})
        )
    i64 = TensorProto.INT64
    for what, nodes, inits in [
        (
            "reshape -1 -1",
            [helper.make_node("Reshape", ["x", "s"], ["y"])],
            [helper.make_tensor("s", i64, [2], [-1, -1])],
        ),
        (
            "tile huge",
            [helper.make_node("Tile", ["x", "s"], ["y"])],
            [helper.make_tensor("s", i64, [2], [10**9, 10**9])],
        ),
        (
            "expand huge",
            [helper.make_node("Expand", ["x", "s"], ["y"])],
            [helper.make_tensor("s", i64, [3], [10**6, 10**6, 2])],
        ),
        (
            "conv huge kernel",
            [helper.make_node("Conv", ["x4", "w"], ["y"], kernel_shape=[10**9, 10**9])],
            [helper.make_tensor("w", F, [1, 1, 1, 1], [1.0])],
        ),
        (
            "conv huge pads",
            [helper.make_node("Conv", ["x4", "w"], ["y"], pads=[10**9] * 4)],
            [helper.make_tensor("w", F, [1, 1, 1, 1], [1.0])],
        ),
        (
            "maxpool huge stride",
            [helper.make_node("MaxPool", ["x4"], ["y"], kernel_shape=[1, 1], strides=[0, 0])],
            [],
        ),
        (
            "pad huge",
            [helper.make_node("Pad", ["x", "p"], ["y"])],
            [helper.make_tensor("p", i64, [4], [10**6, 10**6, 10**6, 10**6])],
        ),
        (
            "onehot huge",
            [helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
            [
                helper.make_tensor("i", i64, [1], [1]),
                helper.make_tensor("d", i64, [1], [10**12]),
                helper.make_tensor("v", F, [2], [0, 1]),
            ],
        ),
        (
            "resize huge",
            [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
            [helper.make_tensor("sc", F, [2], [1e6, 1e6])],
        ),
        (
            "range huge",
            [helper.make_node("Range", ["a", "b", "c"], ["y"])],
            [
                helper.make_tensor("a", F, [], [0]),
                helper.make_tensor("b", F, [], [1e18]),
                helper.make_tensor("c", F, [], [1e-6]),
            ],
        ),
        (
            "range zero delta",
            [helper.make_node("Range", ["a", "b", "c"], ["y"])],
            [
                helper.make_tensor("a", F, [], [0]),
                helper.make_tensor("b", F, [], [1]),
                helper.make_tensor("c", F, [], [0]),
            ],
        ),
        (
            "range nan",
            [helper.make_node("Range", ["a", "b", "c"], ["y"])],
            [
                helper.make_tensor("a", F, [], [0]),
                helper.make_tensor("b", F, [], [float("nan")]),
                helper.make_tensor("c", F, [], [1]),
            ],
        ),
        (
            "constantofshape neg",
            [helper.make_node("ConstantOfShape", ["s"], ["y"])],
            [helper.make_tensor("s", i64, [2], [-5, 3])],
        ),
        (
            "gather oob",
            [helper.make_node("Gather", ["x", "i"], ["y"])],
            [helper.make_tensor("i", i64, [1], [10**12])],
        ),
        (
            "slice huge",
            [helper.make_node("Slice", ["x", "a", "b"], ["y"])],
            [
                helper.make_tensor("a", i64, [1], [-(2**63)]),
                helper.make_tensor("b", i64, [1], [2**63 - 1]),
            ],
        ),
        (
            "topk huge",
            [helper.make_node("TopK", ["x", "k"], ["y", "z"])],
            [helper.make_tensor("k", i64, [1], [10**12])],
        ),
        (
            "split zero",
            [helper.make_node("Split", ["x", "s"], ["y"])],
            [helper.make_tensor("s", i64, [1], [0])],
        ),
        ("cast to string", [helper.make_node("Cast", ["x"], ["y"], to=8)], []),
        ("cast to 999", [helper.make_node("Cast", ["x"], ["y"], to=999)], []),
        (
            "loop huge",
            [
                helper.make_node(
                    "Loop",
                    ["n", ""],
                    ["y"],
                    body=helper.make_graph(
                        [helper.make_node("Identity", ["c"], ["co"])],
                        "b",
                        [
                            helper.make_tensor_value_info("it", i64, []),
                            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                        ],
                        [helper.make_tensor_value_info("co", TensorProto.BOOL, [])],
                    ),
                )
            ],
            [helper.make_tensor("n", i64, [], [10**15])],
        ),
        (
            "randomnormal huge",
            [helper.make_node("RandomNormal", [], ["y"], shape=[10**6, 10**6])],
            [],
        ),
        ("eyelike huge k", [helper.make_node("EyeLike", ["x"], ["y"], k=2**62)], []),
        (
            "einsum weird",
            [
                helper.make_node(
                    "Einsum", ["x"], ["y"], equation="'; import os; os.system('touch fuzzmark')"
                )
            ],
            [],
        ),
        (
            "dup outputs",
            [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])],
            [],
        ),
        ("self loop", [helper.make_node("Add", ["x", "y"], ["y"])], []),
        (
            "output is input",
            [helper.make_node("Relu", ["x"], ["x"]), helper.make_node("Relu", ["x"], ["y"])],
            [],
        ),
        (
            "dup init",
            [helper.make_node("Add", ["x", "w"], ["y"])],
            [helper.make_tensor("w", F, [1], [1.0]), helper.make_tensor("w", F, [1], [2.0])],
        ),
        (
            "init named like input",
            [helper.make_node("Relu", ["x"], ["y"])],
            [helper.make_tensor("x", F, [3, 2], [1.0] * 6)],
        ),
        (
            "node name hostile",
            [helper.make_node("Relu", ["x"], ["y"], name="a\nb\x1b[2J{0}%s\u202e")],
            [],
        ),
        ("value name hostile", [helper.make_node("Relu", ["x"], ["y\n\x1b[2J\u202e=cmd"])], []),
        ("attr huge ints", [helper.make_node("Relu", ["x"], ["y"], foo=[2**62] * 10)], []),
        (
            "attr graph in relu",
            [helper.make_node("Relu", ["x"], ["y"], g=helper.make_graph([], "e", [], []))],
            [],
        ),
        (
            "string initializer",
            [helper.make_node("Identity", ["w"], ["y"])],
            [helper.make_tensor("w", TensorProto.STRING, [1], [b"\xff\xfe"])],
        ),
        (
            "complex initializer",
            [helper.make_node("Identity", ["w"], ["y"])],
            [helper.make_tensor("w", TensorProto.COMPLEX64, [1], [1 + 2j])],
        ),
        (
            "bfloat16 initializer",
            [helper.make_node("Identity", ["w"], ["y"])],
            [helper.make_tensor("w", TensorProto.BFLOAT16, [1], [1.0])],
        ),
        (
            "float8 initializer",
            [helper.make_node("Identity", ["w"], ["y"])],
            [helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [1], [1.0])],
        ),
        (
            "many nodes",
            [
                helper.make_node(
                    "Relu", [f"v{i}" if i else "x"], [f"v{i + 1}" if i < 29999 else "y"]
                )
                for i in range(30000)
            ],
            [],
        ),
        ("unknown domain op", [helper.make_node("Relu", ["x"], ["y"], domain="com.microsoft")], []),
        ("ml domain", [helper.make_node("Normalizer", ["x"], ["y"], domain="ai.onnx.ml")], []),
        ("empty op", [helper.make_node("", ["x"], ["y"])], []),
        ("op dunder", [helper.make_node("__class__", ["x"], ["y"])], []),
    ]:
        inputs = None
        if "x4" in str(nodes[0].input):
            inputs = [helper.make_tensor_value_info("x4", F, [1, 1, 4, 4])]
        out.append((what, model(nodes, inits, inputs=inputs), {}))
    return out


def onnx_cases(only: str) -> list[tuple[Case, dict]]:
    if only and not "onnx".startswith(only):
        return []
    out = []
    for what, blob, files in onnx_attacks():
        for target in ("out.json", "out.yaml"):
            case = Case(
                0,
                "import",
                "audit2",
                "onnx: " + what,
                {"model.onnx": blob},
                "model.onnx",
                ["import", "model.onnx", target],
                outputs=(target, "out.weights.npz"),
            )
            case.saved["model.onnx"] = blob
            for name, content in files.items():
                if content == b"FIFO":
                    case.saved[name] = b"FIFO"
                else:
                    case.saved[name] = content
            out.append((case, {}))
    return out


if __name__ == "__main__":
    sys.exit(main())
