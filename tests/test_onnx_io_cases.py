"""Every single-node ONNX backend case (the oracle: the ONNX package's expected outputs), made
into a one-node ONNX model, imported as an MDF model and run by the Simulation: importing must
lose nothing, so each case that the conformance test counts as passing passes here too.

Cases listed in tests/data/onnx_conformance_skips.tsv are left out (known kernel failures and
newer-than-spec variants), as are cases that MDF nodes cannot carry: sequence or optional-typed
values and subgraph (control-flow) attributes. The count of cases run is checked."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402
from onnx_cases import compare, load_skips, node_cases  # noqa: E402

from mdf_engine.onnx_io import run_onnx  # noqa: E402
from mdf_engine.onnx_ops import names as onnx_names  # noqa: E402


def _attribute(name, value):
    if isinstance(value, np.ndarray):
        return helper.make_attribute(name, numpy_helper.from_array(value))
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return helper.make_attribute(name, [numpy_helper.from_array(v) for v in value])
    return helper.make_attribute(name, value)


def _model(case):
    feeds, ins = {}, []
    for k, x in enumerate(case.inputs):
        if x is None:
            ins.append("")
            continue
        name = f"in_{k}"
        ins.append(name)
        feeds[name] = x
    outs = [
        f"out_{k}" if (k < len(case.expected) and case.expected[k] is not None) else ""
        for k in range(case.n_outputs)
    ]
    node = helper.make_node(case.op, ins, outs, name="case")
    node.attribute.extend(_attribute(k, v) for k, v in case.attributes.items())
    g = helper.make_graph(
        [node],
        case.name,
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for n, x in feeds.items()
        ],
        [helper.make_tensor_value_info(o, 0, None) for o in outs if o],
    )
    mp = helper.make_model(g, opset_imports=[helper.make_opsetid("", case.opset)])
    return mp, feeds, outs


def _usable(case, skips, registered) -> bool:
    if case.name in skips or case.domain not in ("", "ai.onnx") or case.op not in registered:
        return False
    if any(not isinstance(x, (np.ndarray, type(None))) for x in case.inputs):
        return False
    if any(x is not None and x.dtype.kind in "OUS" for x in case.inputs):
        return False
    if any(not isinstance(x, (np.ndarray, type(None))) for x in case.expected):
        return False
    return not any(type(v).__name__ == "GraphProto" for v in case.attributes.values())


def test_node_cases_through_mdf_import():
    skips = load_skips()
    registered = set(onnx_names())
    cases = [c for c in node_cases() if _usable(c, skips, registered)]
    assert len(cases) >= 800, f"expected most ONNX node cases to be usable, got {len(cases)}"
    failures = []
    for case in cases:
        mp, feeds, outs = _model(case)
        try:
            with np.errstate(all="ignore"):
                res = run_onnx(mp, feeds)
            compare(case, [res[o] if o else None for o in outs])
        except Exception as e:  # collected, reported together below
            failures.append(f"{case.name}: {type(e).__name__}: {str(e)[:200]}")
    assert not failures, "\n".join(failures)
