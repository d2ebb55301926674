"""Write docs/onnx_ops_table.md: every operator of the ONNX-related seeds and how it is served.

The op lists are read from the seed documents themselves (004: the ``## onnx::Op`` sections;
000: the ``* **Op**`` entries; 002: the ``### <a name="Op">`` sections, ``experimental`` marked;
003: the index entries, ``modified`` marked, and the body sections), and the implementation
status from the live registry (``mdf_engine.registry.REGISTRY``: namespace and ``since`` of each
registered version). "tested" means the op is exercised by a test: it has ONNX backend node cases
(run by tests/test_onnx_conformance.py), appears in one of the PyTorch-exported ONNX models
(tests/test_onnx_pytorch_models.py), or is named in a test module under tests/.

Usage: ``python tools/onnx_ops_table.py [--seeds DIR] [--out FILE]``
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEEDS = Path("/work/shared/seeds")


def _seed(seeds: Path, prefix: str) -> str:
    files = sorted(glob.glob(str(seeds / f"{prefix}_*.txt")))
    if not files:
        raise SystemExit(f"seed {prefix} not found in {seeds}")
    return Path(files[0]).read_text(encoding="utf-8")


def seed_ops(seeds: Path) -> dict[str, dict[str, str]]:
    """op -> {doc: mark} with doc in 004/000/002/003 and mark yes/exp/mod/idx/body."""
    ops: dict[str, dict[str, str]] = {}

    def put(op: str, doc: str, mark: str) -> None:
        cur = ops.setdefault(op, {})
        if doc not in cur or mark in ("exp", "mod"):
            cur[doc] = mark

    for op in re.findall(r"^## onnx::(\w+)\s*$", _seed(seeds, "004"), re.M):
        put(op, "004", "yes")
    for op in re.findall(r"^\* \*\*(\w+)\*\*", _seed(seeds, "000"), re.M):
        put(op, "000", "yes")
    for exp, op in re.findall(
        r'^### <a name="(?:\w+)"></a><a name="\w+">\*\*(<sub>experimental'
        r"</sub> )?(\w+)\*\*",
        _seed(seeds, "002"),
        re.M,
    ):
        put(op, "002", "exp" if exp else "yes")
    text = _seed(seeds, "003")
    index = re.findall(r'^\s*\* (<sub>modified</sub> )?<a href="#(\w+)">', text, re.M)
    body = set(re.findall(r'^### <a name="(\w+)"></a>', text, re.M))
    in_index = set()
    for mod, op in index:
        in_index.add(op)
        if mod:
            put(op, "003", "mod")
        else:
            put(op, "003", "yes" if op in body else "idx")
    for op in body - in_index:
        put(op, "003", "body")
    return ops


def tested_ops() -> set[str]:
    """Op names exercised by some test (node cases, PyTorch models, names in tests/*.py)."""
    names: set[str] = set()
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from onnx_cases import node_cases

        names |= {c.op for c in node_cases() if c.domain in ("", "ai.onnx")}
    except Exception as exc:  # onnx missing: fall back to the test sources only
        print(f"note: ONNX node cases not read ({exc})", file=sys.stderr)
    try:
        import onnx

        root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
        for d in ("pytorch-converted", "pytorch-operator"):
            for path in glob.glob(os.path.join(root, d, "*", "model.onnx")):
                names |= {n.op_type for n in onnx.load(path).graph.node}
    except Exception as exc:
        print(f"note: PyTorch models not read ({exc})", file=sys.stderr)
    for path in (REPO / "tests").glob("test_*.py"):
        names |= set(
            re.findall(
                r"[\"'](?:onnx(?:_mod)?::)?([A-Z][A-Za-z0-9_]*)[\"']",
                path.read_text(encoding="utf-8"),
            )
        )
    return names


def registered(op: str) -> dict[str, list[int]]:
    """namespace -> sorted ``since`` values of op's registered versions (both call prefixes)."""
    from mdf_engine.registry import REGISTRY

    out: dict[str, list[int]] = {}
    for name in ("onnx::" + op, "onnx_mod::" + op):
        for v in REGISTRY.versions(name):
            out.setdefault(v.namespace, []).append(v.since)
    return {k: sorted(v) for k, v in out.items()}


def needed_namespaces(marks: dict[str, str]) -> list[str]:
    """Which namespaces should serve an op, given where the seeds list it."""
    need = []
    if marks.get("004") == "yes" or (marks.get("003") in ("yes", "idx", "body")):
        need.append("onnx")
    if "exp" in marks.values():
        need.append("onnx-exp")
    if "mod" in marks.values():
        need.append("onnx-mod")
    if (marks.get("000") == "yes" or marks.get("002") == "yes") and "onnx" not in need:
        need.append("onnx-legacy")
    return need


NOTES = [
    "## Decisions for the early, experimental and modified forms",
    "",
    "* A legacy (`onnx-legacy`) version is registered with `since=1` (Dropout and",
    "  BatchNormalization also `since=7`) and serves every opset below the next standard version.",
    "  Where the standard namespace already has a version with the same `since`, the legacy one",
    "  is not registered (listed as shadowed; still callable as `legacy.call(op, ...)`).",
    "* Limited broadcast (Add Sub Mul Div Pow And Or Xor Equal Greater Less, opsets 1-6): B is a",
    "  scalar or matches a contiguous run of A's dims (at `axis`, else suffix-matched); size-1",
    "  dims of B are also repeated (the PyTorch-exported opset-6 models rely on it).",
    "* Softmax/LogSoftmax/Hardmax before opset 13 coerce to 2-D at `axis` (default 1).",
    "* RNN/GRU/LSTM follow seed 002: `initial_h` before `sequence_lens` (an integer 5th input or a",
    "  float 6th one is taken as the later order and swapped); GRU's candidate is the",
    "  `linear_before_reset=1` form (attribute accepted, default 1); LSTM takes 4 activations",
    "  (input, output, forget, cell; a 3-name f, g, h list is also read) and `input_forget`",
    "  couples f = 1 - i; P must be the element-wise [dirs, 3H] form.",
    "* Dropout before opset 7: `is_test=0` (the default) is training (random, scaled); `seed` is",
    "  an engine extension for reproducibility. Split without sizes needs `num_outputs` (the",
    "  kernel cannot see the node's output count).",
    "* ATen: seed 002 names no ATen function; the attribute `operator` selects one of abs neg exp",
    "  log sqrt sigmoid tanh relu add sub mul div mm matmul, anything else is an MDFError.",
    "* Seed 003 documents its standard ops in NCHW; only the `modified` ops are NHWC",
    "  (`onnx_mod::Add_`, `Dense`, `DepthwiseConv2d`, `UpSampling2D`; TF SAME/VALID padding).",
]


def modeci_table_section(seed_names: set[str]) -> list[str]:
    """Lines on modeci-mdf 0.4.15's ONNX function table: every ai.onnx op with a version at
    or below opset 15 (the table ``modeci_mdf.functions.onnx`` builds from ``onnx.defs``)."""
    try:
        import onnx.defs
    except ImportError as exc:
        return [f"(modeci-mdf's table not computed: {exc})"]
    from mdf_engine import onnx_ops

    table = sorted(
        {
            s.name
            for s in onnx.defs.get_all_schemas_with_history()
            if s.domain in ("", "ai.onnx") and s.since_version <= 15
        }
    )
    have = set(onnx_ops.names())
    missing = [op for op in table if op not in have]
    extra = [op for op in table if op not in seed_names]
    return [
        "## modeci-mdf 0.4.15's ONNX table",
        "",
        f"modeci-mdf 0.4.15 offers every ai.onnx operator with a version at or below opset 15:"
        f" {len(table)} ops, {len(table) - len(missing)} registered here"
        + (f" (missing: {', '.join(missing)})." if missing else "."),
        "Those beyond the seeds' lists: "
        + (", ".join(f"`{op}`" for op in extra) or "none")
        + " (node cases in tests/test_onnx_conformance.py part 3; Optional and Bernoulli also in",
        "tests/test_onnx_opset15.py).",
        "",
    ]


def build(seeds: Path) -> str:
    import mdf_engine.onnx_ops  # noqa: F401  (fills the registry)
    from mdf_engine.onnx_ops.variants import legacy

    ops = seed_ops(seeds)
    tested = tested_ops()
    shadowed = {op for op, _ in legacy.SHADOWED}
    rows = []
    counts = {"implemented, tested": 0, "implemented": 0, "partly missing": 0, "missing": 0}
    for i, op in enumerate(sorted(ops, key=str.lower), 1):
        marks = ops[op]
        reg = registered(op)
        need = needed_namespaces(marks)
        early = marks.get("000") == "yes" or marks.get("002") == "yes"
        have = [ns for ns in need if ns in reg or (ns == "onnx-legacy" and op in shadowed)]
        if not have:
            status = "missing"
        elif len(have) < len(need):
            status = "partly missing"
        else:
            status = "implemented, tested" if op in tested else "implemented"
        counts[status] += 1
        versions = "; ".join(f"{ns} @{','.join(map(str, s))}" for ns, s in sorted(reg.items()))
        notes = []
        if early and "onnx-legacy" not in reg:
            notes.append(
                "early form served by the standard version"
                if op not in shadowed
                else "legacy form shadowed by a standard since=1 version"
            )
        missing = [ns for ns in need if ns not in have]
        if missing:
            notes.append("not registered: " + ", ".join(missing))
        cells = [str(i), f"`{op}`"] + [marks.get(d, "—") for d in ("004", "000", "002", "003")]
        rows.append("| " + " | ".join(cells + [versions or "—", status, "; ".join(notes)]) + " |")
    n = {d: sum(1 for m in ops.values() if d in m) for d in ("004", "000", "002", "003")}
    head = [
        "# ONNX-related operators of the seed documents",
        "",
        "Generated by `python tools/onnx_ops_table.py` from the seeds (004 the MDF spec, 000 and 002",
        "the early ONNX documents, 003 the modified set) and the live registry; do not edit by hand.",
        "",
        f"Ops: {len(ops)} distinct names; 004: {n['004']}, 000: {n['000']}, 002: {n['002']}, "
        f"003: {n['003']}.",
        "Status: " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + ".",
        "",
        "Seed columns: `yes` = documented there; `exp` = an experimental op of 002; `mod` = a",
        "`modified` op of 003; `idx` = only in 003's index (no section); `body` = only in 003's",
        "body; `—` = not in this seed. *Registered* lists each namespace with the `since` opsets of",
        "its versions (`onnx` standard, `onnx-legacy` opset 1-6 forms, `onnx-exp` 002's",
        "experimental ops as `onnx::Op`, `onnx-mod` 003's modified ops as `onnx_mod::Op`).",
        "*Tested*: ONNX node cases, a PyTorch-exported test model, or a test module names the op.",
        "",
        *NOTES,
        "",
        *modeci_table_section(set(ops)),
        "| # | op | 004 | 000 | 002 | 003 | registered | status | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=Path, default=SEEDS)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "onnx_ops_table.md")
    args = ap.parse_args(argv)
    text = build(args.seeds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    rows = sum(1 for line in text.splitlines() if re.match(r"^\| \d+ \|", line))
    print(f"wrote {args.out} ({rows} ops)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
