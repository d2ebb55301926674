"""Speed of the quantized Hexagon kernels against the float onnx:: kernels, measured in one run.

Conv: hexagon QuantizedConv2d_8x8to32 (uint8 NHWC, int32 accumulation) vs onnx::Conv (float32
NCHW) on the same shapes; MatMul: hexagon QuantizedMatMul_8x8to32 vs onnx::MatMul. Each kernel is
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
    t_q = best_time(lambda: hexagon.run("QuantizedConv2d_8x8to32",
                                        [xq, wq, s(-1), s(1), s(-1), s(1),
                                         np.zeros((1, 1, 1, 1))], padding="SAME"), args.repeat)
    t_f = best_time(lambda: onnx_ops.run("Conv", [xf, wf], {"pads": [1, 1, 1, 1]}), args.repeat)
    rows.append(("conv 4x16x32x32 * 32x16x3x3", t_q, t_f))

    # matrix product: 256 x 512 times 512 x 256
    af = rng.normal(size=(256, 512)).astype(np.float32)
    bf = rng.normal(size=(512, 256)).astype(np.float32)
    aq = rng.integers(0, 256, size=(1, 1, 256, 512), dtype=np.uint8)
    bq = rng.integers(0, 256, size=(1, 1, 512, 256), dtype=np.uint8)
    t_q = best_time(lambda: hexagon.run("QuantizedMatMul_8x8to32",
                                        [aq, bq, s(-1), s(1), s(-1), s(1)]), args.repeat)
    t_f = best_time(lambda: onnx_ops.run("MatMul", [af, bf]), args.repeat)
    rows.append(("matmul 256x512 * 512x256", t_q, t_f))

    print(f"{'kernel':32s} {'quantized ms':>13s} {'float ms':>10s} {'ratio q/f':>10s}")
    for name, tq, tf in rows:
        print(f"{name:32s} {tq * 1e3:13.2f} {tf * 1e3:10.2f} {tq / tf:10.2f}")


if __name__ == "__main__":
    main()
