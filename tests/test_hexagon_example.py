"""The quantized detection pipeline of examples/hexagon_ssd_head.py: a float SSD-style head
quantized by the float-to-quantized pass keeps the same boxes as the float run (same count,
same classes, IoU >= 0.9 with the matching quantized box)."""

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def test_quantized_ssd_head_keeps_the_float_boxes():
    spec = importlib.util.spec_from_file_location(
        "hexagon_ssd_head", ROOT / "examples" / "hexagon_ssd_head.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.compare()
    assert "hexagon::QuantizedConv2d_8x8to32" in res["functions"]
    assert "hexagon::QuantizedSoftmax_8" in res["functions"]
    assert "onnx::Conv" not in res["functions"]
    assert len(res["float"]) >= 5
    assert len(res["quantized"]) == len(res["float"])
    assert sorted(c for c, _, _ in res["quantized"]) == sorted(c for c, _, _ in res["float"])
    assert min(res["ious"]) >= 0.9, np.round(res["ious"], 3)
