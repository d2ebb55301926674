"""Mutated ONNX protobufs for the guided fuzzer (``tools/fuzz_guided.py``, audit 5).

Seeds are small networks built with ``onnx.helper`` (an MLP, a CNN, shape plumbing with
initializers, broadcasting with ``Constant`` nodes, gathers and slices, an ``If``); a mutant is
one of them with one to three changes to its protobuf: dims huge, zero, negative or symbolic;
initializers with other dims, dtypes or truncated data; attributes retyped, removed, huge or
negative, unknown ones added; inputs renamed to nothing (missing inputs), cycles, twin outputs,
hostile names (path separators, newlines, NUL, bidi), other op types and domains, opsets 0 to
10^6, graph inputs and outputs dropped, and bytes of the serialized file flipped.

``mutate(rng, model)`` returns a mutated copy and what was done; ``feeds(model, rng)`` the input
arrays a run needs (or None when an input's shape is not small and concrete).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper

HOSTILE_NAMES = ["a/b", "../x", "x\ny", "x\x00y", "\u202ex", "", " ", "a.b", "%s{0}", "é∂", "/"]
DTYPES = [
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
    TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL, TensorProto.STRING,
    TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.COMPLEX64, 0, 99,
]  # fmt: skip
DIMS = [0, -1, -7, 2**31, 2**40, 2**62, 10**12, 1, 3]
OPS = ["Relu", "Add", "Gemm", "Conv", "MaxPool", "Reshape", "Transpose", "Concat", "Softmax",
       "Gather", "Slice", "Identity", "MatMul", "Sigmoid", "Flatten", "Expand", "Tile", "Where",
       "Squeeze", "Unsqueeze", "Pad", "Resize", "TopK", "ReduceSum", "Cast", "Range", "If",
       "ConstantOfShape", "Split", "LSTM", "Loop", "NoSuchOp"]  # fmt: skip


def _v(name: str, shape: list | None, dtype: int = TensorProto.FLOAT) -> Any:
    return helper.make_tensor_value_info(name, dtype, shape)


def _init(name: str, rng: np.random.Generator, shape: tuple, dtype: type = np.float32) -> Any:
    if np.issubdtype(dtype, np.integer):
        return numpy_helper.from_array(np.asarray(shape and rng.integers(0, 3, shape), dtype), name)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(dtype), name)


def seeds() -> dict[str, ModelProto]:
    """The unmutated networks, by name (each valid: onnxruntime runs it)."""
    r = np.random.default_rng(0)
    i64 = np.int64
    out = {}
    g = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Gemm", ["r", "w2"], ["z"], alpha=0.5),
            helper.make_node("Softmax", ["z"], ["y"], axis=1),
        ],
        "mlp",
        [_v("x", [2, 4])],
        [_v("y", [2, 3])],
        [_init("w1", r, (5, 4)), _init("b1", r, (5,)), _init("w2", r, (5, 3))],
    )
    out["mlp"] = g
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Flatten", ["p"], ["y"], axis=1),
        ],
        "cnn",
        [_v("x", [1, 2, 4, 4])],
        [_v("y", None)],
        [_init("w", r, (3, 2, 3, 3))],
    )
    out["cnn"] = g
    g = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "s"], ["a"]),
            helper.make_node("Transpose", ["a"], ["t"], perm=[1, 0]),
            helper.make_node("Concat", ["t", "t"], ["c"], axis=0),
            helper.make_node("Unsqueeze", ["c", "ax"], ["y"]),
        ],
        "shapes",
        [_v("x", [2, 3])],
        [_v("y", None)],
        [numpy_helper.from_array(np.array([3, 2], i64), "s"),
         numpy_helper.from_array(np.array([0], i64), "ax")],
    )  # fmt: skip
    out["shapes"] = g
    g = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["k"], value=numpy_helper.from_array(np.float32([[1.5, -2]]), "k")
            ),
            helper.make_node("Mul", ["x", "k"], ["m"]),
            helper.make_node("Add", ["m", "x"], ["a"]),
            helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=0),
        ],
        "broadcast",
        [_v("x", [3, 2])],
        [_v("y", None)],
        [numpy_helper.from_array(np.array([1], i64), "axes")],
    )
    out["broadcast"] = g
    g = helper.make_graph(
        [
            helper.make_node("Gather", ["x", "idx"], ["gth"], axis=0),
            helper.make_node("Slice", ["gth", "st", "en", "axs"], ["sl"]),
            helper.make_node("Tile", ["sl", "rep"], ["y"]),
        ],
        "gather",
        [_v("x", [4, 3])],
        [_v("y", None)],
        [numpy_helper.from_array(np.array([3, 0, 1], i64), "idx"),
         numpy_helper.from_array(np.array([0], i64), "st"),
         numpy_helper.from_array(np.array([2], i64), "en"),
         numpy_helper.from_array(np.array([1], i64), "axs"),
         numpy_helper.from_array(np.array([2, 1], i64), "rep")],
    )  # fmt: skip
    out["gather"] = g
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["o"])], "then", [], [_v("o", None)])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["o"])], "else", [], [_v("o", None)])
    g = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        ],
        "branch",
        [_v("x", [2, 2])],
        [_v("y", None)],
        [numpy_helper.from_array(np.float32(0), "zero")],
    )
    out["branch"] = g
    return {
        k: helper.make_model(v, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
        for k, v in out.items()
    }


def feeds(model: ModelProto, rng: random.Random) -> dict[str, np.ndarray] | None:
    """Random inputs for the graph's inputs that are not initializers, or None."""
    inits = {t.name for t in model.graph.initializer}
    gen = np.random.default_rng(rng.randrange(2**32))
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        if any(d < 1 or d > 64 for d in dims) or t.elem_type != TensorProto.FLOAT:
            return None
        out[vi.name] = gen.standard_normal(dims).astype(np.float32)
    return out


def _tensors(model: ModelProto) -> list[Any]:
    return list(model.graph.initializer)


def _names(model: ModelProto) -> list[str]:
    g = model.graph
    names = [vi.name for vi in g.input] + [t.name for t in g.initializer]
    return names + [o for n in g.node for o in n.output]


def _attribute(name: str, val: Any) -> Any:
    if isinstance(val, list) and not val:  # helper cannot infer an empty list's type
        return helper.make_attribute(name, [], attr_type=AttributeProto.INTS)
    return helper.make_attribute(name, val)


def mutate(rng: random.Random, model: ModelProto) -> tuple[ModelProto, str]:
    """A mutated copy of ``model`` and what was done (one mutation)."""
    m = ModelProto()
    m.CopyFrom(model)
    g = m.graph
    kind = rng.choice(
        ["dim", "dim", "init_dims", "init_dtype", "init_data", "attr", "attr", "attr_drop",
         "attr_add", "input_dtype", "cycle", "missing", "twin", "name", "op", "domain", "opset",
         "drop_io", "ir", "nan", "subgraph"]
    )  # fmt: skip
    nodes = list(g.node)
    node = rng.choice(nodes) if nodes else None
    if kind == "dim":
        vis = [vi for vi in list(g.input) + list(g.output) if vi.type.tensor_type.shape.dim]
        if not vis:
            return m, "dim: none"
        vi = rng.choice(vis)
        d = rng.choice(vi.type.tensor_type.shape.dim)
        if rng.random() < 0.2:
            d.dim_param = rng.choice(HOSTILE_NAMES + ["N"])
            return m, f"dim of {vi.name!a} symbolic"
        d.dim_value = rng.choice(DIMS)
        return m, f"dim of {vi.name!a} = {d.dim_value}"
    if kind in ("init_dims", "init_dtype", "init_data", "nan"):
        ts = _tensors(m)
        if not ts:
            return m, "init: none"
        t = rng.choice(ts)
        if kind == "init_dims":
            if t.dims and rng.random() < 0.7:
                t.dims[rng.randrange(len(t.dims))] = rng.choice(DIMS)
            else:
                t.dims.append(rng.choice(DIMS))
            return m, f"initializer {t.name!a} dims {list(t.dims)}"
        if kind == "init_dtype":
            t.data_type = rng.choice(DTYPES)
            return m, f"initializer {t.name!a} dtype {t.data_type}"
        if kind == "nan":
            a = numpy_helper.to_array(t).copy()
            if a.dtype.kind == "f" and a.size:
                a.flat[rng.randrange(a.size)] = rng.choice([np.nan, np.inf, -0.0, 1e-45])
                t.CopyFrom(numpy_helper.from_array(a, t.name))
            return m, f"initializer {t.name!a} NaN/inf/-0/subnormal"
        raw = t.raw_data
        if raw:
            t.raw_data = raw[: rng.randrange(len(raw))] if rng.random() < 0.6 else raw * 2
        return m, f"initializer {t.name!a} data resized"
    if kind in ("attr", "attr_drop", "attr_add"):
        if node is None:
            return m, "attr: no node"
        if kind == "attr_add" or not node.attribute:
            name = rng.choice(["axis", "perm", "kernel_shape", "pads", "strides", "zzz", "alpha"])
            val = rng.choice([2**62, -3, [1, 2, 3, 4, 5, 6, 7], "x", 1.5, [], [-1] * 3])
            node.attribute.append(_attribute(name, val))
            return m, f"attribute {name}={val!a} added to {node.op_type}"
        a = rng.choice(node.attribute)
        if kind == "attr_drop":
            node.attribute.remove(a)
            return m, f"attribute {a.name} dropped from {node.op_type}"
        val = rng.choice([2**62, -(2**62), -1, 0, 99, 1.5, float("nan"), "x", [0] * 9, [],
                          [2**40, 2**40], [-5, 1]])  # fmt: skip
        node.attribute.remove(a)
        node.attribute.append(_attribute(a.name, val))
        return m, f"attribute {node.op_type}.{a.name} = {val!a}"
    if kind == "input_dtype" and len(g.input):
        vi = rng.choice(list(g.input))
        vi.type.tensor_type.elem_type = rng.choice(DTYPES)
        return m, f"input {vi.name!a} dtype {vi.type.tensor_type.elem_type}"
    if kind == "cycle" and len(nodes) >= 2:
        i = rng.randrange(len(nodes) - 1)
        j = rng.randrange(i + 1, len(nodes))
        if nodes[i].input:
            nodes[i].input[rng.randrange(len(nodes[i].input))] = nodes[j].output[0]
        return m, f"cycle: node {i} reads node {j}'s output"
    if kind == "missing" and node is not None and node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(["nope", "", "y"])
        return m, f"{node.op_type} input renamed to a missing name"
    if kind == "twin" and len(nodes) >= 2:
        a, b = rng.sample(nodes, 2)
        b.output[0] = a.output[0]
        return m, f"two nodes write {a.output[0]!a}"
    if kind == "name":
        new = rng.choice(HOSTILE_NAMES)
        old = rng.choice(_names(m))
        for n in g.node:
            for seq in (n.input, n.output):
                for k, v in enumerate(seq):
                    if v == old:
                        seq[k] = new
        for seq in (g.input, g.output, g.initializer):
            for x in seq:
                if x.name == old:
                    x.name = new
        if rng.random() < 0.5:
            g.name = new
        return m, f"name {old!a} -> {new!a}"
    if kind == "op" and node is not None:
        node.op_type = rng.choice(OPS)
        return m, f"op -> {node.op_type}"
    if kind == "domain" and node is not None:
        node.domain = rng.choice(["ai.onnx.ml", "evil", "com.microsoft", "hexagon", "../x"])
        return m, f"domain -> {node.domain!a}"
    if kind == "opset":
        del m.opset_import[:]
        if rng.random() < 0.9:
            m.opset_import.append(helper.make_opsetid("", rng.choice([0, 1, 6, 7, 11, 21, 10**6])))
        return m, f"opsets {[o.version for o in m.opset_import]}"
    if kind == "drop_io":
        seq = rng.choice([g.input, g.output])
        if len(seq):
            del seq[rng.randrange(len(seq))]
        return m, "a graph input or output dropped"
    if kind == "ir":
        m.ir_version = rng.choice([0, 1, 3, 99, 2**40])
        return m, f"ir_version {m.ir_version}"
    if kind == "subgraph":
        ifs = [n for n in nodes if n.op_type == "If"]
        if ifs:
            a = rng.choice(ifs[0].attribute)
            inner, _ = mutate(rng, helper.make_model(a.g))
            a.g.CopyFrom(inner.graph)
            return m, f"If branch {a.name} mutated"
        return m, "subgraph: none"
    return m, f"{kind}: not applicable"


def compare(ours: dict, ref: dict, model: ModelProto) -> str:
    """'' when our outputs are onnxruntime's (rtol 1e-4, atol 1e-5), else the first
    difference. A model holding NaN or inf constants is compared where both are finite:
    which of NaN and inf a sum of infinities, a padded ``inf * 0`` or a max over NaN gives
    differs between kernels (docs/semantics.md, "Numeric faults follow numpy")."""
    nonfinite = any(
        t.data_type in (TensorProto.FLOAT, TensorProto.DOUBLE)
        and not np.isfinite(numpy_helper.to_array(t)).all()
        for t in model.graph.initializer
    )
    flags = [a.i for n in model.graph.node for a in n.attribute if a.name == "keepdims"]
    if any(f not in (0, 1) for f in flags):
        # onnxruntime reads keepdims other than 1 as 0, ONNX's reference evaluator (and we)
        # as true: the spec defines 0 and 1 only
        return ""
    for k, v in ref.items():
        got, v = np.asarray(ours.get(k)), np.asarray(v)
        if got.shape != v.shape:
            return f"{k!a}: shape {got.shape} vs {v.shape}"
        if nonfinite:
            keep = np.isfinite(got) & np.isfinite(v)
            got, v = got[keep], v[keep]
        if not np.allclose(got, v, rtol=1e-4, atol=1e-5, equal_nan=True):
            return f"{k!a}: {got!r:.80} vs {v!r:.80}"
    return ""


def mutant(seed: int, number: int, models: dict[str, ModelProto]) -> tuple[ModelProto, str]:
    """Mutant ``number`` of ``seed``: one to three mutations of a seed network."""
    rng = random.Random(f"onnx:{seed}:{number}")
    m = models[rng.choice(sorted(models))]
    whats = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        try:
            m, what = mutate(rng, m)
        except (ValueError, TypeError, IndexError, KeyError) as e:  # onnx.helper refused the change
            what = f"(refused by onnx.helper: {type(e).__name__})"
        whats.append(what)
    return m, "; ".join(whats)


def smoke(seed: int, mutants: int, folder: Any) -> tuple[list[str], dict]:
    """In-process (the test suite's budget): each mutant imported (``import_model``, as
    ``mdf import`` does) and, with feeds, run (``run_onnx``) and compared with onnxruntime
    where onnxruntime runs it. Returns the problems (an exception other than MDFError, a
    multi-line error, a difference from onnxruntime) and the count of each outcome."""
    import collections
    import contextlib
    import io

    from mdf_engine import MDFError
    from mdf_engine.onnx_io import import_model, run_onnx

    models = seeds()
    problems, counts = [], collections.Counter()
    for n in range(mutants):
        m, what = mutant(seed, n, models)
        path = str(folder / f"m{n}.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        fd = feeds(m, random.Random(n))
        try:
            with np.errstate(all="ignore"):
                import_model(path)
                ours = run_onnx(path, fd) if fd is not None else None
            counts["ok"] += 1
        except MDFError as e:
            counts["error"] += 1
            if "\n" in str(e) or f"m{n}.onnx" not in str(e):
                problems.append(f"{n} {what!a}: unclear error {str(e)[:200]!a}")
            continue
        except Exception as e:  # noqa: BLE001 - exactly what the smoke test looks for
            problems.append(f"{n} {what!a}: {type(e).__name__}: {str(e)[:200]!a}")
            continue
        if ours is None:
            continue
        try:
            import onnxruntime as ort

            with contextlib.redirect_stderr(io.StringIO()):
                opts = ort.SessionOptions()
                opts.log_severity_level = 4
                sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
                ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, fd)))
        except Exception:  # noqa: BLE001 - onnxruntime refusing a mutant is no finding
            counts["onnxruntime refused"] += 1
            continue
        diff = compare(ours, ref, m)
        counts["differ" if diff else "agree"] += 1
        if diff:
            problems.append(f"{n} {what!a}: differs from onnxruntime: {diff}")
    return problems, dict(counts)
