"""Speed of the quantized Hexagon kernels against the float onnx:: kernels, measured in one run.

Conv: hexagon QuantizedConv2d_8x8to32 (uint8 NHWC, int32 accumulation) vs onnx::Conv (float32
NCHW) on the same shapes; MatMul: hexagon QuantizedMatMul_8x8to32 vs onnx::MatMul; detection
post-processing: hexagon MultiClassNms_8 vs onnx::NonMaxSuppression (the per-class selection
alone) and QuantizedRoiAlignV2_8 vs onnx::RoiAlign. Each kernel is
run once to compile, then timed as the best of several repeats. Prints the times and the ratio
quantized/float (below 1 = the quantized kernel is faster).

Usage: ``python benchmarks/hexagon_speed.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mdf_engine import hexagon, onnx_ops


def best_time(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def s(v: float) -> np.ndarray:
    return np.full((1, 1, 1, 1), v, np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []

    # convolution: batch 4, 32x32, 16 -> 32 channels, 3x3, SAME
    xf = rng.normal(size=(4, 16, 32, 32)).astype(np.float32)
    wf = rng.normal(size=(32, 16, 3, 3)).astype(np.float32)
    xq = rng.integers(0, 256, size=(4, 32, 32, 16), dtype=np.uint8)
    wq = rng.integers(0, 256, size=(3, 3, 16, 32), dtype=np.uint8)
    t_q = best_time(
        lambda: hexagon.run(
            "QuantizedConv2d_8x8to32",
            [xq, wq, s(-1), s(1), s(-1), s(1), np.zeros((1, 1, 1, 1))],
            padding="SAME",
        ),
        args.repeat,
    )
    t_f = best_time(lambda: onnx_ops.run("Conv", [xf, wf], {"pads": [1, 1, 1, 1]}), args.repeat)
    rows.append(("conv 4x16x32x32 * 32x16x3x3", t_q, t_f))

    # matrix product: 256 x 512 times 512 x 256
    af = rng.normal(size=(256, 512)).astype(np.float32)
    bf = rng.normal(size=(512, 256)).astype(np.float32)
    aq = rng.integers(0, 256, size=(1, 1, 256, 512), dtype=np.uint8)
    bq = rng.integers(0, 256, size=(1, 1, 512, 256), dtype=np.uint8)
    t_q = best_time(
        lambda: hexagon.run("QuantizedMatMul_8x8to32", [aq, bq, s(-1), s(1), s(-1), s(1)]),
        args.repeat,
    )
    t_f = best_time(lambda: onnx_ops.run("MatMul", [af, bf]), args.repeat)
    rows.append(("matmul 256x512 * 512x256", t_q, t_f))

    # NMS: 300 boxes, 4 classes, IoU 0.5, score 0.2, 20 per class
    xy = rng.uniform(0, 40, size=(300, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(2, 10, size=(300, 2))], 1).astype(np.float32)
    scores = rng.uniform(size=(300, 4)).astype(np.float32)
    sq = np.clip(np.floor(scores * 255 + 0.5), 0, 255).astype(np.uint8)
    t_q = best_time(
        lambda: hexagon.run(
            "MultiClassNms_8",
            [
                boxes.reshape(1, 1, 300, 4),
                sq.reshape(1, 1, 300, 4),
                s(0),
                s(1),
                s(0.2),
                s(0.5),
                np.int32(20),
                np.int32(80),
            ],
        ),
        args.repeat,
    )
    t_f = best_time(
        lambda: onnx_ops.run(
            "NonMaxSuppression",
            [
                boxes[None],
                scores.T[None].copy(),
                np.array([20]),
                np.array([0.5], np.float32),
                np.array([0.2], np.float32),
            ],
        ),
        args.repeat,
    )
    rows.append(("nms 300 boxes x 4 classes", t_q, t_f))

    # RoiAlign: 16 RoIs, 7x7 bins, 2x2 samples on a 1x32x32x16 map
    feat = rng.integers(0, 256, size=(1, 32, 32, 16), dtype=np.uint8)
    rois = np.concatenate([xy[:16] * 2, xy[:16] * 2 + 24], 1).astype(np.float32)
    qr = np.floor(rois / 0.125 + 0.5).astype(np.uint16).reshape(1, 1, 16, 4)
    t_q = best_time(
        lambda: hexagon.run(
            "QuantizedRoiAlignV2_8",
            [
                feat,
                s(0),
                s(1),
                qr,
                np.zeros((1, 1, 1, 16), np.int32),
                np.int32(7),
                np.int32(7),
                s(0.25),
                s(0.25),
                np.int32(2),
                np.int32(2),
                s(0),
                s(1),
            ],
        ),
        args.repeat,
    )
    ff = (feat / 255.0).astype(np.float32).transpose(0, 3, 1, 2).copy()
    t_f = best_time(
        lambda: onnx_ops.run(
            "RoiAlign",
            [ff, rois, np.zeros(16, np.int64)],
            {"output_height": 7, "output_width": 7, "sampling_ratio": 2, "spatial_scale": 0.25},
        ),
        args.repeat,
    )
    rows.append(("roi align 16 rois 7x7", t_q, t_f))

    print(f"{'kernel':32s} {'quantized ms':>13s} {'float ms':>10s} {'ratio q/f':>10s}")
    for name, tq, tf in rows:
        print(f"{name:32s} {tq * 1e3:13.2f} {tf * 1e3:10.2f} {tq / tf:10.2f}")


if __name__ == "__main__":
    main()
