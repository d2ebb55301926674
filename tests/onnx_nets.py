"""Real network architectures built with ``onnx.helper`` and seeded random weights (no network
access, no torchvision): SqueezeNet 1.1 and ResNet-18, in the layer layout of their papers and
of torchvision's definitions. Used by the big-model import/run tests and benchmarks/cnn_speed.py.
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, helper, numpy_helper


class _Net:
    """Accumulates nodes and initializers; names are made here (never from data)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.k = 0

    def name(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def const(self, base: str, a: np.ndarray) -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(a, n))
        return n

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out + "_node", **attrs))
        return out

    def conv(
        self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, bias: bool = True
    ) -> str:
        std = np.sqrt(2.0 / (cin * k * k))  # He initialisation keeps activations O(1)
        w = (std * self.rng.standard_normal((cout, cin, k, k))).astype(np.float32)
        ins = [x, self.const("w", w)]
        if bias:
            ins.append(self.const("b", (0.1 * self.rng.standard_normal(cout)).astype(np.float32)))
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        vals = [
            r.uniform(0.5, 1.5, c),
            0.1 * r.standard_normal(c),
            0.1 * r.standard_normal(c),
            r.uniform(0.5, 1.5, c),
        ]
        ins = [self.const(n, v.astype(np.float32)) for n, v in zip(("s", "b", "m", "v"), vals)]
        return self.node("BatchNormalization", [x, *ins], epsilon=1e-5)

    def model(
        self, x: str, shape: list[int], out: str, out_shape: list[int], name: str, opset: int
    ) -> ModelProto:
        g = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
            initializer=self.inits,
        )
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def squeezenet11(seed: int = 0, size: int = 224, classes: int = 1000) -> ModelProto:
    """SqueezeNet 1.1: conv 3x3/2, ceil-mode max pools, eight Fire modules, a 1x1 classifier
    conv, global average pool and a softmax-free flatten (1,235,496 weights at 1000 classes)."""
    n = _Net(seed)
    h = n.node("Relu", [n.conv("input", 3, 64, 3, stride=2)])

    def pool(x: str) -> str:
        return n.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    def fire(x: str, cin: int, sq: int, e1: int, e3: int) -> str:
        s = n.node("Relu", [n.conv(x, cin, sq, 1)])
        a = n.node("Relu", [n.conv(s, sq, e1, 1)])
        b = n.node("Relu", [n.conv(s, sq, e3, 3, pad=1)])
        return n.node("Concat", [a, b], axis=1)

    h = pool(h)
    h = fire(fire(h, 64, 16, 64, 64), 128, 16, 64, 64)
    h = pool(h)
    h = fire(fire(h, 128, 32, 128, 128), 256, 32, 128, 128)
    h = pool(h)
    for cin, sq, e in ((256, 48, 192), (384, 48, 192), (384, 64, 256), (512, 64, 256)):
        h = fire(h, cin, sq, e, e)
    h = n.node("Relu", [n.conv(h, 512, classes, 1)])
    h = n.node("Flatten", [n.node("GlobalAveragePool", [h])], axis=1)
    return n.model("input", [1, 3, size, size], h, [1, classes], "squeezenet1_1", 13)


def resnet18(seed: int = 0, size: int = 224, classes: int = 1000) -> ModelProto:
    """ResNet-18: conv 7x7/2 + BN + ReLU + max pool, four stages of two basic blocks (3x3
    convs with batch norm, 1x1/2 projection shortcuts), global average pool and a Gemm
    classifier (11,689,512 weights at 1000 classes, plus batch-norm statistics)."""
    n = _Net(seed)
    h = n.node("Relu", [n.bn(n.conv("input", 3, 64, 7, stride=2, pad=3, bias=False), 64)])
    h = n.node("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            y = n.node("Relu", [n.bn(n.conv(h, cin, cout, 3, s, 1, bias=False), cout)])
            y = n.bn(n.conv(y, cout, cout, 3, 1, 1, bias=False), cout)
            short = (
                h
                if (s == 1 and cin == cout)
                else n.bn(n.conv(h, cin, cout, 1, s, 0, bias=False), cout)
            )
            h = n.node("Relu", [n.node("Add", [y, short])])
            cin = cout
    h = n.node("Flatten", [n.node("GlobalAveragePool", [h])], axis=1)
    w = (0.05 * n.rng.standard_normal((classes, 512))).astype(np.float32)
    b = (0.1 * n.rng.standard_normal(classes)).astype(np.float32)
    h = n.node("Gemm", [h, n.const("fc_w", w), n.const("fc_b", b)], transB=1)
    return n.model("input", [1, 3, size, size], h, [1, classes], "resnet18", 13)
