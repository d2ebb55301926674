"""Structural and byte mutations of MDF files for ``tools/fuzz_inputs.py``.

Each mutation takes the parsed file (JSON/YAML tree) and a seeded ``random.Random`` and returns
a new tree and a short description; every choice is drawn from that ``rng``, so a mutant is a
pure function of its seed. The mutations know MDF's shape (model -> graphs -> nodes, edges,
conditions) in both of its spellings (mappings of id to object, lists of objects with ``id``)
and break it where a loader, a planner or a backend must notice: fields dropped, duplicated or
of the wrong type, lists and mappings swapped, hostile numbers, deep nesting, unicode and
control characters in ids and expressions, dangling references, cycles, empty graphs,
enormous shapes, wrong condition kinds and arguments, expressions made of every operator and
function name the engine knows, and garbage syntax. ``byte_mutant`` breaks the file's text.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
from collections.abc import Callable
from typing import Any

Path_ = tuple  # a path into the tree: keys and indices

NUMBERS: list[Any] = [
    0, -1, 1, -0.0, 1.5, 1e308, -1e308, math.nan, math.inf, -math.inf, True, False,
    2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 5e-324,
    1e-320, 10**400, "1e309", "nan", "-inf", "1e999", "0x10", "1_0", "", " 1",
]  # fmt: skip
WRONG: list[Any] = [
    None, True, False, 0, -3, 2.5, "", "x", "nodes", [], {}, [1, 2], [[1], [2, 3]],
    {"a": 1}, {"id": "x"}, [{}], [None], {"": {}},
]  # fmt: skip
IDS: list[str] = [
    "", " ", "\x00", "\t", "\n", "\x1b[31m", "\u202e", "\u200b", "\ufeff", "e\u0301",
    "\u00e9", "ｋ", "K", "\U0001f600", "a" * 5000, "1a", "0", "-1", "lambda", "None",
    "True", "if", "abs", "np", "math", "sum", "__class__", "__import__", "x.y", "x[0]",
    "a b", "a-b", "a+b", "$x", "{x}", "%s", "'", '"', "\\", "/", "..", "../x", "\udcff",
]  # fmt: skip
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"]
COMPARISONS = ["<", "<=", "==", "!=", ">", ">=", "is", "is not", "in", "not in"]
UNARY = ["-", "+", "~", "not "]
GARBAGE = [
    "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "..", "...", "=", "==", "=>", "->",
    "lambda", "yield", "await", "import", "def", "del", "\\", "#", "'", '"', "`", "$", "?",
    "!", "@", "1e", "0x", "1_", "_", "\n", "\t", "\x00", "\u2028", "if", "else", "for",
]  # fmt: skip
CONDITION_ARGS = ["dependency", "dependencies", "n", "time_scale", "condition", "conditions",
                  "threshold", "comparator", "parameter", "repeat", "start", "end", "unit",
                  "start_inclusive", "end_inclusive", "atol", "rtol", "indices", "bogus"]  # fmt: skip
TIME_SCALES = ["TRIAL", "RUN", "PASS", "TIME_STEP", "ENVIRONMENT_STATE_UPDATE", "LIFE",
               "CONSIDERATION_SET_EXECUTION", "ENVIRONMENT_SEQUENCE", "bogus", "", 3, None]  # fmt: skip


def walk(data: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    """Every (path, value) of the tree, the root first."""
    out = [(path, data)]
    if isinstance(data, dict):
        for k, v in data.items():
            out += walk(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += walk(v, (*path, i))
    return out


def get(data: Any, path: Path_) -> Any:
    for k in path:
        data = data[k]
    return data


def put(data: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    get(data, path[:-1])[path[-1]] = value
    return data


def entries(container: Any) -> list[tuple[Any, dict]]:
    """(key or index, object) of an MDF collection in either spelling."""
    if isinstance(container, dict):
        return [(k, v) for k, v in container.items() if isinstance(v, dict)]
    if isinstance(container, list):
        return [(i, v) for i, v in enumerate(container) if isinstance(v, dict)]
    return []


def object_id(key: Any, obj: dict) -> Any:
    return obj.get("id", key) if isinstance(key, int) else key


def graphs(data: Any) -> list[Path_]:
    """Paths of every dict holding ``nodes`` (a graph)."""
    return [p for p, v in walk(data) if isinstance(v, dict) and "nodes" in v]


def node_ids(g: dict) -> list[Any]:
    return [object_id(k, n) for k, n in entries(g.get("nodes"))]


def port_ids(node: dict, field: str) -> list[Any]:
    return [object_id(k, p) for k, p in entries(node.get(field))]


def strings(data: Any) -> list[tuple[Path_, str]]:
    return [(p, v) for p, v in walk(data) if isinstance(v, str)]


def _pick(rng: random.Random, items: list, default: Any = None) -> Any:
    return rng.choice(items) if items else default


def _describe(path: Path_) -> str:
    return ".".join(str(k) for k in path)[:120]


# ---------------------------------------------------------------- tree mutations


def m_drop(rng: random.Random, data: Any) -> str:
    keys = [(p, k) for p, v in walk(data) if isinstance(v, dict) for k in v]
    important = [x for x in keys if x[1] in _MDF_FIELDS]
    path, key = _pick(rng, important if important and rng.random() < 0.8 else keys, ((), None))
    if key is None:
        return "drop: nothing"
    del get(data, path)[key]
    return f"drop {_describe((*path, key))}"


_MDF_FIELDS = {
    "graphs", "nodes", "edges", "sender", "receiver", "sender_port", "receiver_port", "value",
    "function", "args", "output_ports", "input_ports", "parameters", "functions", "shape",
    "default_initial_value", "default_value", "time_derivative", "conditions", "termination",
    "node_specific", "type", "id", "format", "generating_application", "reduce",
}  # fmt: skip


def m_duplicate(rng: random.Random, data: Any) -> str:
    lists = [(p, v) for p, v in walk(data) if isinstance(v, list) and v]
    colls = [
        (p, v)
        for p, v in walk(data)
        if isinstance(v, dict) and p and p[-1] in ("nodes", "edges", "parameters", "input_ports", "output_ports", "functions", "graphs")
        and v
    ]  # fmt: skip
    if colls and (not lists or rng.random() < 0.7):
        path, coll = rng.choice(colls)
        key = rng.choice(list(coll))
        twin = rng.choice([f"{key}_2", f"{key} ", f"{key}\u200b", str(key).upper(), f"{key}\u0301"])
        coll[twin] = copy.deepcopy(coll[key])
        if isinstance(coll[twin], dict) and rng.random() < 0.5:
            coll[twin]["id"] = key  # an object that says it is the original
        return f"duplicate {_describe((*path, key))} as {twin!a}"
    path, seq = _pick(rng, lists, ((), None))
    if seq is None:
        return "duplicate: nothing"
    i = rng.randrange(len(seq))
    seq.insert(i, copy.deepcopy(seq[i]))
    return f"duplicate {_describe((*path, i))}"


def m_retype(rng: random.Random, data: Any) -> str:
    leaves = [(p, v) for p, v in walk(data) if p]
    path, old = rng.choice(leaves)
    new = copy.deepcopy(rng.choice([w for w in WRONG if type(w) is not type(old)]))
    put(data, path, new)
    return f"retype {_describe(path)}: {type(old).__name__} -> {new!r:.30}"


def m_swap(rng: random.Random, data: Any) -> str:
    """A mapping of id -> object as a list of objects, or the other way round; or any
    mapping/list as its transposed container."""
    conts = [(p, v) for p, v in walk(data) if p and isinstance(v, (dict, list)) and v]
    path, old = rng.choice(conts)
    if isinstance(old, dict):
        new: Any = []
        for k, v in old.items():
            if isinstance(v, dict) and rng.random() < 0.8:
                v = {"id": k, **v} if rng.random() < 0.8 else v
            new.append(v)
    else:
        new = {}
        for i, v in enumerate(old):
            k = v.get("id", str(i)) if isinstance(v, dict) else str(i)
            new[str(k) if not isinstance(k, str) else k] = v
    put(data, path, new)
    return f"swap {_describe(path)} to {type(new).__name__}"


def m_number(rng: random.Random, data: Any) -> str:
    nums = [(p, v) for p, v in walk(data) if p and isinstance(v, (int, float))]
    strs = [(p, v) for p, v in strings(data) if re.fullmatch(r"[-+0-9.eE ]+", v)]
    path, _ = _pick(rng, nums + strs, (None, None))
    if path is None:
        path, _ = rng.choice([(p, v) for p, v in walk(data) if p])
    new = rng.choice(NUMBERS)
    if rng.random() < 0.3 and isinstance(new, (int, float)):
        new = [new, new] if rng.random() < 0.5 else [[new]]
    put(data, path, new)
    return f"number {_describe(path)} = {new!r:.40}"


def m_deep(rng: random.Random, data: Any) -> str:
    path, value = rng.choice([(p, v) for p, v in walk(data) if p])
    depth = rng.choice([3, 20, 65, 90, 200])
    for i in range(depth):
        value = [value] if rng.random() < 0.5 else {f"k{i % 3}": value}
    put(data, path, value)
    return f"deep {_describe(path)} x{depth}"


def _rename(data: Any, old: str, new: str) -> Any:
    """``old`` as a key, a whole string, or a word of an expression, becomes ``new``."""
    word = re.compile(r"(?<![\w.])" + re.escape(old) + r"(?!\w)")
    if isinstance(data, dict):
        return {(new if k == old else k): _rename(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [_rename(v, old, new) for v in data]
    if isinstance(data, str):
        return new if data == old else word.sub(lambda _m: new, data)
    return data


def m_ident(rng: random.Random, data: Any, texts: list[str] | None = None) -> tuple[Any, str]:
    """A node, port or parameter id renamed everywhere to hostile text (or one place only)."""
    ids = set()
    for gp in graphs(data):
        g = get(data, gp)
        for k, n in entries(g.get("nodes")):
            ids.add(object_id(k, n))
            for f in ("input_ports", "output_ports", "parameters", "functions"):
                ids.update(port_ids(n, f))
    ids = sorted(i for i in ids if isinstance(i, str) and i)
    if not ids:
        return data, "ident: nothing"
    old = rng.choice(ids)
    new = rng.choice(texts or IDS)
    if rng.random() < 0.3:
        new = old + new if rng.random() < 0.5 else new + old
    if rng.random() < 0.8:
        return _rename(data, old, new), f"rename {old!a} -> {new[:40]!a} everywhere"
    paths = [p for p, v in walk(data) if isinstance(v, dict) and old in v]
    if not paths:
        return data, "ident: nothing"
    d = get(data, rng.choice(paths))
    d[new] = d.pop(old)
    return data, f"rename key {old!a} -> {new[:40]!a} once"


def m_dangling(rng: random.Random, data: Any) -> str:
    refs = [
        (p, v)
        for p, v in walk(data)
        if p and p[-1] in ("sender", "receiver", "sender_port", "receiver_port", "dependency", "dependencies", "parameter")
    ]  # fmt: skip
    if not refs:
        return m_drop(rng, data)
    path, old = rng.choice(refs)
    new = rng.choice(["nowhere", "", None, 3, [old, "nowhere"], f"{old}.x", str(old).upper()])
    put(data, path, new)
    return f"dangling {_describe(path)} = {new!r:.30}"


def _edges_add(g: dict, edge: dict) -> None:
    edges = g.setdefault("edges", {})
    if isinstance(edges, list):
        edges.append({"id": edge["id"], **edge})
    elif isinstance(edges, dict):
        edges[edge["id"]] = {k: v for k, v in edge.items() if k != "id"}


def m_cycle(rng: random.Random, data: Any) -> str:
    gps = graphs(data)
    if not gps:
        return "cycle: no graph"
    g = get(data, rng.choice(gps))
    nodes = entries(g.get("nodes"))
    if not nodes:
        return "cycle: no node"
    (ka, a), (kb, b) = rng.choice(nodes), rng.choice(nodes)
    out = _pick(rng, port_ids(a, "output_ports"), "out")
    inp = _pick(rng, port_ids(b, "input_ports"), "in")
    if rng.random() < 0.5 and isinstance(b.get("input_ports", {}), dict):  # a fresh port
        inp = "fz_in"
        b.setdefault("input_ports", {})["fz_in"] = {"shape": [1]} if rng.random() < 0.5 else {}
    for _ in range(rng.choice([1, 1, 2])):
        _edges_add(
            g,
            {
                "id": f"fz_cycle_{rng.randrange(1000)}",
                "sender": object_id(ka, a),
                "receiver": object_id(kb, b),
                "sender_port": out,
                "receiver_port": inp,
            },
        )
    return f"edge {object_id(ka, a)!a}.{out!a} -> {object_id(kb, b)!a}.{inp!a}"


def m_empty(rng: random.Random, data: Any) -> str:
    choices = [(p, v) for p, v in walk(data) if isinstance(v, (dict, list)) and v]
    mdf = [x for x in choices if x[0] and x[0][-1] in _MDF_FIELDS]
    path, v = rng.choice(mdf if mdf and rng.random() < 0.85 else choices)
    put(data, path, rng.choice([type(v)(), None, "", type(v)()]))
    return f"empty {_describe(path)}"


SHAPES = [[10**9], [2**40, 2**40], [-1], [0], [0, 5], [1.5], ["3"], [True], [10**5, 10**5],
          [1] * 40, [], [[2]], "[3]", 3, None, [2**63], [math.nan], [math.inf]]  # fmt: skip


def m_shape(rng: random.Random, data: Any) -> str:
    ports = [
        (p, v)
        for p, v in walk(data)
        if isinstance(v, dict) and len(p) >= 2 and p[-2] in ("input_ports", "output_ports", "parameters")
    ]  # fmt: skip
    if not ports:
        return m_number(rng, data)
    path, port = rng.choice(ports)
    field = rng.choice(
        ["shape", "shape", "default_value", "value", "type", "default_initial_value"]
    )
    if field == "shape":
        new: Any = copy.deepcopy(rng.choice(SHAPES))
    elif field == "type":
        new = rng.choice(["float", "int", "bool", "str", "complex", "object", "float1024", 3, ""])
    else:
        new = rng.choice(
            [f"np.zeros({rng.choice(SHAPES)!r})", f"np.ones(({10**5}, {10**5}))",
             [[0.0] * 3, [0.0] * 4], [[[[1.0]]]], {"a": 1}, [math.nan] * 3, [], "[1, [2]]"]
        )  # fmt: skip
    port[field] = new
    return f"shape {_describe(path)}.{field} = {new!r:.40}"


def m_condition(rng: random.Random, data: Any, kinds: list[str]) -> str:
    gps = graphs(data)
    if not gps:
        return "condition: no graph"
    g = get(data, rng.choice(gps))
    nodes = node_ids(g)
    cond = _random_condition(rng, kinds, nodes, 3)
    conds = g.get("conditions")
    if not isinstance(conds, dict):
        conds = g["conditions"] = {}
    if rng.random() < 0.5 and nodes:
        target = rng.choice(nodes + ["nowhere"])
        ns = conds.setdefault("node_specific", {})
        if isinstance(ns, dict):
            ns[str(target)] = cond
        where = f"node_specific[{target!a}]"
    else:
        scale = rng.choice(TIME_SCALES[:6] + ["bogus"])
        term = conds.setdefault("termination", {})
        if isinstance(term, dict):
            term[str(scale)] = cond
        where = f"termination[{scale}]"
    return f"condition {where} = {json.dumps(cond)[:100]}"


def _random_condition(rng: random.Random, kinds: list[str], nodes: list, depth: int) -> Any:
    if rng.random() < 0.05:
        return rng.choice(WRONG)
    kind = rng.choice(kinds + ["Bogus", "", "threshold", "always"])
    args: dict[str, Any] = {}
    for name in rng.sample(CONDITION_ARGS, rng.randrange(0, 4)):
        args[name] = _condition_arg(rng, name, kinds, nodes, depth)
    cond: dict[str, Any] = {"type": kind, "args": args}
    if rng.random() < 0.1:
        cond["args"] = rng.choice([None, [], "x", 3])
    return cond


def _condition_arg(rng: random.Random, name: str, kinds: list[str], nodes: list, depth: int) -> Any:
    if name in ("dependency", "dependencies", "parameter"):
        pool = nodes + ["nowhere", ""]
        if depth > 0 and rng.random() < 0.2:
            return _random_condition(rng, kinds, nodes, depth - 1)
        return rng.choice(pool) if rng.random() < 0.7 else rng.sample(pool, min(2, len(pool)))
    if name in ("condition", "conditions") and depth > 0:
        sub = [_random_condition(rng, kinds, nodes, depth - 1) for _ in range(rng.randrange(0, 3))]
        return sub[0] if (name == "condition" and sub) else sub
    if name == "time_scale":
        return rng.choice(TIME_SCALES)
    if name == "comparator":
        return rng.choice(["<", ">=", "==", "!=", "=<", "", None, 1])
    return rng.choice(NUMBERS + ["x", None, [1, 2]])


def random_expression(
    rng: random.Random, names: list[str], functions: list[str], depth: int = 3
) -> str:
    """An expression drawn from every operator, comparison and function name, over ``names``."""
    r = rng.random()
    if depth <= 0 or r < 0.25:
        leaf = rng.random()
        if leaf < 0.5 and names:
            return rng.choice(names)
        if leaf < 0.6:
            return rng.choice(
                ["math.pi", "np.e", "inf", "nan", "True", "None", "'s'", "[1, 2]", "()", "[]"]
            )
        return repr(rng.choice([0, 1, -1, 2, 0.5, 1e308, 5e-324, 2**63, 10**20, 3]))
    sub = lambda: random_expression(rng, names, functions, depth - 1)  # noqa: E731
    if r < 0.5:
        return f"({sub()} {rng.choice(OPERATORS)} {sub()})"
    if r < 0.6:
        return f"({sub()} {rng.choice(COMPARISONS)} {sub()})"
    if r < 0.68:
        return f"({rng.choice(UNARY)}{sub()})"
    if r < 0.74:
        return f"({sub()} if {sub()} else {sub()})"
    if r < 0.8:
        op = rng.choice([" and ", " or "])
        return f"({sub()}{op}{sub()})"
    if r < 0.86:
        index = rng.choice([sub(), f"{sub()}:{sub()}", "::-1", "0, 0", "...", "None"])
        return f"{sub()}[{index}]"
    name = rng.choice(functions)
    args = ", ".join(sub() for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 5])))
    if rng.random() < 0.1:
        args += (", " if args else "") + f"{rng.choice(['axis', 'shape', 'x', 'A', 'out'])}={sub()}"
    return f"{name}({args})"


def garbage(rng: random.Random, base: str) -> str:
    """``base`` with tokens of garbage syntax inserted, or garbage alone."""
    tokens = [rng.choice(GARBAGE) for _ in range(rng.randrange(1, 6))]
    if not base or rng.random() < 0.3:
        return " ".join(tokens)
    i = rng.randrange(len(base) + 1)
    return base[:i] + "".join(tokens) + base[i:]


def m_expression(rng: random.Random, data: Any, functions: list[str]) -> str:
    exprs = [
        (p, v)
        for p, v in walk(data)
        if p and p[-1] in ("value", "time_derivative", "default_initial_value", "condition")
        and isinstance(v, (str, int, float, list))
    ]  # fmt: skip
    exprs += [
        (p, v) for p, v in walk(data) if len(p) >= 2 and p[-2] == "args" and isinstance(v, str)
    ]
    if not exprs:
        return m_number(rng, data)
    path, old = rng.choice(exprs)
    names = _names_in_scope(data, path)
    r = rng.random()
    if r < 0.6:
        new = random_expression(rng, names, functions)
    elif r < 0.85:
        new = garbage(rng, old if isinstance(old, str) else repr(old))
    else:
        ch = rng.choice(["\x00", "\n", "\u2028", "\u202e", "\u200b", "\x1b", "\ufeff", "ｘ", "\t"])
        text = old if isinstance(old, str) else repr(old)
        i = rng.randrange(len(text) + 1)
        new = text[:i] + ch + text[i:]
    put(data, path, new)
    return f"expression {_describe(path)} = {new[:100]!a}"


def _names_in_scope(data: Any, path: Path_) -> list[str]:
    """Ids of the node that holds ``path`` (its ports, parameters, functions)."""
    for cut in range(len(path), 0, -1):
        if cut >= 2 and path[cut - 2] == "nodes":
            node = get(data, path[:cut])
            if isinstance(node, dict):
                out = []
                for f in ("input_ports", "parameters", "functions", "output_ports"):
                    out += [str(x) for x in port_ids(node, f)]
                return out + ["t", "time", "dt"]
    return ["t"]


def m_function(rng: random.Random, data: Any, functions: list[str]) -> str:
    holders = [
        (p, v)
        for p, v in walk(data)
        if isinstance(v, dict) and len(p) >= 2 and p[-2] in ("parameters", "functions")
    ]
    if not holders:
        return m_expression(rng, data, functions)
    path, obj = rng.choice(holders)
    names = _names_in_scope(data, path)
    name = rng.choice(functions + ["nowhere", "onnx::Nowhere", "", "__import__", "eval"])
    args = {
        rng.choice(["A", "B", "x", "input", "axis", "shape", "scale", "bias", "rate", "perm", "bogus"]):
        rng.choice(names + [1, -1, "[1, 2]", [[1.0]], None, 1e308, "nan"])
        for _ in range(rng.randrange(0, 4))
    }  # fmt: skip
    obj.pop("value", None)
    if rng.random() < 0.3:
        obj["function"] = {name: args}
    else:
        obj["function"], obj["args"] = name, args
    return f"function {_describe(path)} = {name}({json.dumps(args, default=str)[:60]})"


GENTLE_NUMBERS = [0, 1, -1, 0.5, 2, 3, -2.5, 1e-3, 100, 7]
_OPERATOR = re.compile(r"(\*\*|//|[-+*/%<>])")
_CALL = re.compile(r"\b((?:np|numpy|math)\.)?([A-Za-z_]\w*)\(")


def m_gentle(rng: random.Random, data: Any, functions: list[str]) -> str:
    """A change that keeps the model valid more often than not, so that the mutant runs and
    the oracle compares numbers: an ordinary number for a number, an operator for another, a
    function for another of its module."""
    nums = [
        (p, v)
        for p, v in walk(data)
        if p and isinstance(v, (int, float)) and v is not True and v is not False
    ]
    exprs = [(p, v) for p, v in strings(data) if _OPERATOR.search(v) or _CALL.search(v)]
    r = rng.random()
    if nums and (r < 0.4 or not exprs):
        path, old = rng.choice(nums)
        new = rng.choice(GENTLE_NUMBERS)
        put(data, path, new)
        return f"gentle number {_describe(path)}: {old!r:.20} -> {new!r}"
    if not exprs:
        return m_expression(rng, data, functions)
    path, old = rng.choice(exprs)
    ops = list(_OPERATOR.finditer(old))
    calls = list(_CALL.finditer(old))
    if ops and (not calls or rng.random() < 0.5):
        m = rng.choice(ops)
        new_op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "<", ">"])
        new = old[: m.start()] + new_op + old[m.end() :]
    elif calls:
        m = rng.choice(calls)
        module = m.group(1) or ""
        same = (
            [f for f in functions if f.startswith(module) and "." not in f[len(module) :]]
            if module
            else [f for f in functions if "." not in f]
        )
        name = rng.choice(same or functions)
        new = old[: m.start()] + name + "(" + old[m.end() :]
    else:
        return m_expression(rng, data, functions)
    put(data, path, new)
    return f"gentle expression {_describe(path)}: {old[:60]!a} -> {new[:80]!a}"


def mutate(
    rng: random.Random, data: Any, kinds: list[str], functions: list[str]
) -> tuple[Any, str]:
    """One structural mutation (kind drawn from ``rng``) of a deep copy of ``data``."""
    data = copy.deepcopy(data)
    ops: dict[str, Callable[[], Any]] = {
        "drop": lambda: m_drop(rng, data),
        "duplicate": lambda: m_duplicate(rng, data),
        "retype": lambda: m_retype(rng, data),
        "swap": lambda: m_swap(rng, data),
        "number": lambda: m_number(rng, data),
        "deep": lambda: m_deep(rng, data),
        "ident": lambda: m_ident(rng, data),
        "dangling": lambda: m_dangling(rng, data),
        "cycle": lambda: m_cycle(rng, data),
        "empty": lambda: m_empty(rng, data),
        "shape": lambda: m_shape(rng, data),
        "condition": lambda: m_condition(rng, data, kinds),
        "expression": lambda: m_expression(rng, data, functions),
        "function": lambda: m_function(rng, data, functions),
        "gentle": lambda: m_gentle(rng, data, functions),
    }
    weights = {"gentle": 8, "expression": 4, "condition": 2, "number": 2, "ident": 2, "function": 2}
    kind = rng.choices(list(ops), weights=[weights.get(k, 1) for k in ops])[0]
    if not isinstance(data, (dict, list)) or len(walk(data)) < 2:
        return data, "none"
    got = ops[kind]()
    if isinstance(got, tuple):  # m_ident returns the renamed tree
        data, what = got
    else:
        what = got
    return data, what


def byte_mutant(rng: random.Random, blob: bytes) -> tuple[bytes, str]:
    """The file's bytes broken: bits flipped, ranges cut, doubled or moved, bytes inserted,
    the file truncated."""
    b = bytearray(blob)
    if not b:
        return b"\x00", "bytes: empty -> NUL"
    kind = rng.choice(["flip", "cut", "double", "insert", "truncate", "move", "replace"])
    i = rng.randrange(len(b))
    n = rng.choice([1, 1, 2, 8, 64, 1000])
    if kind == "flip":
        for _ in range(rng.randrange(1, 4)):
            j = rng.randrange(len(b))
            b[j] ^= 1 << rng.randrange(8)
    elif kind == "cut":
        del b[i : i + n]
    elif kind == "double":
        b[i:i] = b[i : i + n]
    elif kind == "insert":
        b[i:i] = rng.choice(
            [b"\x00", b"\xff\xfe", b"\xc3", b"\xe2\x80\xa8", b"{", b"[", b"]", b'"', b"\\", b",",
             b"\n", b"\t", b"NaN", b"-", b"1e999", b": &a [*a]", b"!!python/object:os.system"]
        )  # fmt: skip
    elif kind == "truncate":
        del b[i:]
    elif kind == "move":
        j = rng.randrange(len(b))
        piece = b[i : i + n]
        del b[i : i + n]
        b[j:j] = piece
    else:
        for _ in range(rng.randrange(1, 6)):
            j = rng.randrange(len(b))
            b[j] = rng.choice(b'{}[]",:0123456789-.eE \n\x00ntf')
    return bytes(b), f"bytes {kind} at {i} (n={n})"
