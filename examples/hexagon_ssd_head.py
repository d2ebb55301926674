"""A quantized detection pipeline: a small float SSD-style head, quantized for Hexagon.

The model (one MDF node) is a float detector head written with ``onnx::`` ops -- a 3x3 conv +
ReLU trunk, then two 3x3 convs predicting, for each of A anchors at each feature-map cell, box
deltas (4 numbers) and class logits (K numbers) -- followed by the detection post-processing of
the Hexagon op list: ``hexagon::Box_Decoder_f`` decodes the deltas against the anchor grid,
``onnx::Softmax`` turns logits into class scores, ``hexagon::Quantize`` puts them on [0, 1] and
``hexagon::MultiClassNms_8`` keeps the best boxes per class.

:func:`mdf_engine.hexagon.quantize` (the float-to-quantized pass) rewrites the head's convs,
ReLU, reshapes and softmax into quantized hexagon chains calibrated on sample inputs;
:func:`compare` runs both models on a new input and matches their kept boxes (same class,
IoU). The weights are random but fixed by a seed; the inputs have a few bright "objects" on a
noisy background so that some anchors score clearly.

Run ``python examples/hexagon_ssd_head.py`` to print the two sets of detections.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdf_engine import Simulation
from mdf_engine.hexagon import quantize
from mdf_engine.hexagon.boxes import iou_matrix
from mdf_engine.model import Graph, InputPort, Model, Node, OutputPort, Parameter

C, H, W = 4, 6, 6  # input channels and feature map size
A, K = 2, 3  # anchors per cell, classes
N = H * W * A  # boxes
SCORE_THRESHOLD, IOU_THRESHOLD, PER_CLASS, TOTAL = 0.6, 0.5, 16, 48
WC_SCALE = 0.1


def anchors() -> np.ndarray:
    """[1,1,N,4] anchors (ymin, xmin, ymax, xmax) in the order of the head's NHWC outputs."""
    out = []
    for i in range(H):
        for j in range(W):
            for size in (1.5, 3.0)[:A]:
                cy, cx = i + 0.5, j + 0.5
                out.append([cy - size / 2, cx - size / 2, cy + size / 2, cx + size / 2])
    return np.array(out, np.float32).reshape(1, 1, N, 4)


def build(seed: int = 0) -> Model:
    """The float SSD-style head with its post-processing, as an MDF model."""
    rng = np.random.default_rng(seed)
    w1 = rng.normal(scale=0.4, size=(8, C, 3, 3))
    wl = rng.normal(scale=0.15, size=(A * 4, 8, 3, 3))
    wc = rng.normal(scale=WC_SCALE, size=(A * K, 8, 3, 3))
    conv = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    node = Node(
        id="detector",
        input_ports=[InputPort(id="image", shape=(1, C, H, W))],
        parameters=[
            Parameter(id="W1", value=w1.tolist()),
            Parameter(id="WL", value=wl.tolist()),
            Parameter(id="WC", value=wc.tolist()),
            Parameter(
                id="trunk",
                function="onnx::Conv",
                args={"X": "image", "W": "W1", "B": rng.normal(scale=0.1, size=8).tolist(), **conv},
            ),
            Parameter(id="feat", function="onnx::Relu", args={"X": "trunk"}),
            Parameter(
                id="loc",
                function="onnx::Conv",
                args={"X": "feat", "W": "WL", "B": [0.0] * (A * 4), **conv},
            ),
            Parameter(
                id="logits",
                function="onnx::Conv",
                args={
                    "X": "feat",
                    "W": "WC",
                    "B": rng.normal(scale=0.3, size=A * K).tolist(),
                    **conv,
                },
            ),
            Parameter(
                id="loc_nhwc",
                function="onnx::Transpose",
                args={"data": "loc", "perm": [0, 2, 3, 1]},
            ),
            Parameter(
                id="deltas",
                function="onnx::Reshape",
                args={"data": "loc_nhwc", "shape": [1, 1, N, 4]},
            ),
            Parameter(
                id="logits_nhwc",
                function="onnx::Transpose",
                args={"data": "logits", "perm": [0, 2, 3, 1]},
            ),
            Parameter(
                id="class_logits",
                function="onnx::Reshape",
                args={"data": "logits_nhwc", "shape": [1, 1, N, K]},
            ),
            Parameter(id="scores", function="onnx::Softmax", args={"input": "class_logits"}),
            Parameter(
                id="boxes",
                function="hexagon::Box_Decoder_f",
                args={
                    "deltas": "deltas",
                    "anchors": anchors().tolist(),
                    "scale_factors": [10.0, 10.0, 5.0, 5.0],
                },
            ),
            Parameter(
                id="qscores",
                function="hexagon::Quantize",
                args={"input": "scores", "input_min": 0.0, "input_max": 1.0},
            ),
            Parameter(
                id="nms",
                function="hexagon::MultiClassNms_8",
                args={
                    "boxes": "boxes",
                    "scores": "qscores[0]",
                    "scores_min": "qscores[1]",
                    "scores_max": "qscores[2]",
                    "score_threshold": SCORE_THRESHOLD,
                    "iou_threshold": IOU_THRESHOLD,
                    "max_per_class": PER_CLASS,
                    "max_total": TOTAL,
                },
            ),
        ],
        output_ports=[
            OutputPort(id="boxes", value="nms[0]"),
            OutputPort(id="scores", value="nms[1]"),
            OutputPort(id="classes", value="nms[4]"),
        ],
    )
    return Model(id="ssd_head", graphs=[Graph(id="g", nodes=[node])])


def sample(rng: np.random.Generator) -> np.ndarray:
    """An input: background noise with two or three bright blobs."""
    x = rng.normal(scale=0.3, size=(1, C, H, W))
    for _ in range(rng.integers(2, 4)):
        i, j = rng.integers(0, H - 1), rng.integers(0, W - 1)
        x[0, :, i : i + 2, j : j + 2] += rng.normal(loc=2.0, scale=0.5, size=(C, 1, 1))
    return x


def detections(model: Model, x: np.ndarray) -> list[tuple[int, np.ndarray, float]]:
    """The kept (class, box, score) of one run (rows past the kept ones are all zero)."""
    sim = Simulation(model)
    sim.evaluate(initializer={"image": x})
    out = sim.outputs["detector"]
    boxes = np.asarray(out["boxes"]).reshape(-1, 4)
    scores = np.asarray(out["scores"]).reshape(-1)
    classes = np.asarray(out["classes"]).reshape(-1)
    return [
        (int(classes[k]), boxes[k], scores[k] / 255.0)
        for k in range(len(boxes))
        if scores[k] > 0 or boxes[k].any()
    ]


def compare(seed: int = 1, n_calibration: int = 16) -> dict[str, Any]:
    """Quantize the head on ``n_calibration`` samples, run float and quantized on a new sample;
    for each kept float box, the IoU of the best quantized box of the same class."""
    rng = np.random.default_rng(seed + 1)
    model = build(seed)
    qmodel = quantize(model, [{"image": sample(rng)} for _ in range(n_calibration)])
    x = sample(rng)
    fdet, qdet = detections(model, x), detections(qmodel, x)
    ious = []
    for cls, box, _ in fdet:
        same = [b for c, b, _ in qdet if c == cls]
        ious.append(float(iou_matrix(box[None], np.array(same)).max()) if same else 0.0)
    funcs = sorted({p.function for p in qmodel.graphs[0].nodes[0].parameters if p.function})
    return {"float": fdet, "quantized": qdet, "ious": ious, "functions": funcs}


def main() -> None:
    res = compare()
    print("hexagon functions in the quantized model:", ", ".join(res["functions"]))
    for name in ("float", "quantized"):
        print(f"{name} detections (class, box ymin xmin ymax xmax, score):")
        for c, b, sc in res[name]:
            print(f"  {c}  {np.round(b, 3)}  {sc:.3f}")
    print("IoU of each float box with its quantized match:", np.round(res["ious"], 3))


if __name__ == "__main__":
    main()
