"""Integer and boolean ``onnx::`` values on the compiled backend (issue 22, goal 2): slots keep
the dtype the interpreted backend gives (int64 stays int64, bool stays bool), so a graph of
comparisons, logic, integer arithmetic, casts, index results and shapes compiles whole, with
the interpreted backend's values and dtypes, and onnxruntime's values (the oracle; the same
chain as one ONNX graph, see tests/test_onnx_family_models.py).

One model holds every op, so that the suite compiles one graph (a cold compile costs tens of
seconds on a loaded 2-core machine).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
from test_onnx_family_models import Family, _compare, _r, _run, build_model, ort_outputs  # noqa: E402

INTEGER_OPS = Family(
    {
        "x": _r(60, 3, 4),
        "y": _r(61, 4),
        "i": [[7, -8, 9, 10], [3, 4, -5, 6], [1, 2, 3, -4]],
        "j": [2, 3, -2, 4],
        "k": [2],
        "dep": [5],
        "onoff": [-1.0, 3.0],
        "r0": 1,
        "r1": 10,
        "r2": 3,
    },
    [
        ("gt", "Greater", {"A": "x", "B": "y"}),
        ("eq", "Equal", {"A": "i", "B": "j"}),
        ("ls", "Less", {"A": "i", "B": "j"}),
        ("no", "Not", {"X": "gt"}),
        ("an", "And", {"A": "gt", "B": "ls"}),
        ("orr", "Or", {"A": "no", "B": "eq"}),
        ("wh", "Where", {"condition": "orr", "X": "i", "Y": "j"}),
        ("dv", "Div", {"A": "wh", "B": "j"}),
        ("md", "Mod", {"A": "i", "B": "j"}),
        ("ct", "Cast", {"input": "x", "to": 7}),
        ("cf", "Cast", {"input": "an", "to": 1}),
        ("am", "ArgMax", {"data": "x", "axis": 1}),
        ("sh", "Shape", {"data": "x"}),
        ("sz", "Size", {"data": "x"}),
        ("nz", "NonZero", {"X": "gt"}),
        ("tk", "TopK", {"X": "x", "K": "k", "axis": 1}),
        ("oh", "OneHot", {"indices": "am", "depth": "dep", "values": "onoff"}),
        ("ra", "Range", {"start": "r0", "limit": "r1", "delta": "r2"}),
    ],
    outs={"tk": 2},
)


def test_integer_and_boolean_ops_compile_with_their_dtypes():
    model = build_model("intops", INTEGER_OPS)
    interp, _ = _run(model, "interpreted")
    comp, sim = _run(model, "compiled")
    assert sim.runner.is_compiled, sim.runner.fallback_reason
    assert set(comp) == set(interp)
    kinds = set()
    for port, want in interp.items():
        want, got = np.asarray(want), np.asarray(comp[port])
        assert got.dtype == want.dtype, f"{port}: {got.dtype} != interpreted {want.dtype}"
        np.testing.assert_array_equal(got, want, err_msg=port)
        kinds.add(want.dtype.kind)
    assert kinds >= {"b", "i", "f"}  # (the model holds booleans, integers and floats)
    _compare(comp, ort_outputs(INTEGER_OPS), INTEGER_OPS, "onnxruntime")
