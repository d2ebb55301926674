"""Neural-network benchmark cases for ``benchmarks/onnx_ops_speed.py`` (issue 5's list).

``CASES`` holds Conv (1x3x224x224 with 64 3x3 filters, and a small one), ConvTranspose,
MaxPool (ORT asked for Y only, and for Y and Indices), AveragePool, GlobalAveragePool and
BatchNormalization on float32 data, in the shared dict format of ``onnx_ops_speed.py`` (size
class ``nn``). LSTM (seq 50, hidden 128) lives in ``onnx_recurrent_cases.py``. Run only these with e.g.
``python benchmarks/onnx_ops_speed.py --only Conv,ConvTranspose,MaxPool,BatchNormalization``.
"""

from __future__ import annotations

import numpy as np


def _cases() -> list[dict]:
    rng = np.random.default_rng(5)

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    x224 = f32(1, 3, 224, 224)
    x56 = f32(1, 64, 56, 56)
    x112 = f32(1, 64, 112, 112)
    small = f32(1, 4, 16, 16)
    var = (np.abs(f32(64)) + 0.5).astype(np.float32)
    return [
        {
            "op": "Conv",
            "inputs": [x224, f32(64, 3, 3, 3), f32(64)],
            "attributes": {"pads": [1, 1, 1, 1]},
            "size": "1x3x224x224 64x3x3",
        },
        {
            "op": "Conv",
            "inputs": [x56, f32(64, 64, 3, 3), None],
            "attributes": {"pads": [1, 1, 1, 1]},
            "size": "1x64x56x56 64x3x3",
        },
        {
            "op": "Conv",
            "inputs": [small, f32(8, 4, 3, 3), f32(8)],
            "attributes": {"pads": [1, 1, 1, 1]},
            "size": "1x4x16x16 8x3x3",
        },
        {
            "op": "Conv",
            "inputs": [x56, f32(64, 1, 3, 3), None],
            "attributes": {"pads": [1, 1, 1, 1], "group": 64},
            "size": "depthwise 64x56x56",
        },
        {
            "op": "ConvTranspose",
            "inputs": [f32(1, 64, 28, 28), f32(64, 32, 3, 3), f32(32)],
            "attributes": {"strides": [2, 2], "pads": [1, 1, 0, 0]},
            "size": "1x64x28x28 s2",
        },
        {
            "op": "ConvTranspose",
            "inputs": [small, f32(4, 8, 3, 3), None],
            "attributes": {"strides": [2, 2]},
            "size": "1x4x16x16 s2",
        },
        {
            "op": "MaxPool",
            "inputs": [x112],
            "attributes": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            "size": "1x64x112x112 3x3s2",
        },
        # MaxPool always returns Indices too (a kernel cannot know how many outputs the
        # node uses); the case above times ORT computing Y only, this one Y and Indices
        {
            "op": "MaxPool",
            "inputs": [x112],
            "attributes": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            "n_outputs": 2,
            "size": "1x64x112+Idx",
        },
        {
            "op": "MaxPool",
            "inputs": [small],
            "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]},
            "size": "1x4x16x16 2x2s2",
        },
        {
            "op": "AveragePool",
            "inputs": [x56],
            "attributes": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
            "size": "1x64x56x56 3x3",
        },
        {"op": "GlobalAveragePool", "inputs": [x56], "size": "1x64x56x56"},
        {
            "op": "BatchNormalization",
            "inputs": [f32(1, 64, 112, 112), f32(64), f32(64), f32(64), var],
            "size": "1x64x112x112",
        },
        {
            "op": "BatchNormalization",
            "inputs": [small, f32(4), f32(4), f32(4), var[:4]],
            "size": "1x4x16x16",
        },
    ]


CASES = _cases()
