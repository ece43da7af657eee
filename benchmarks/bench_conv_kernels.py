"""The three convolution kernels on their own (forward, input gradient,
weight gradient; 3×3, padding 1, batch 8), at 1 thread (or each count of
--threads), both modes: the
median of 7 calls of each `_core` kernel into preallocated outputs, in ms and
GFLOP/s (2·N·O·H·W·C·9 flops each). Not a test: nothing asserts on time.

    python benchmarks/bench_conv_kernels.py [--threads 1 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import onemodel as om
from onemodel import _core

SHAPES = [(1, 32, 32, 256), (32, 64, 16, 128), (64, 96, 8, 64)]
BATCH = 8


def median_ms(fn, repeats=7):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    one = (1, 1)
    for ci, co, h, w in SHAPES:
        x = om.tensor(rng.standard_normal((BATCH, ci, h, w)).astype(np.float32))
        wt = om.tensor(rng.standard_normal((co, ci, 3, 3)).astype(np.float32))
        y, dy = om.zeros((BATCH, co, h, w)), om.tensor(rng.standard_normal((BATCH, co, h, w)).astype(np.float32))
        dx, dw = om.zeros((BATCH, ci, h, w)), om.zeros((co, ci, 3, 3))
        gflop = 2 * BATCH * co * h * w * ci * 9 / 1e6
        for threads in args.threads:
            om.compute.set_threads(threads)
            for mode in ("exact", "fast"):
                om.compute.set_mode(mode)
                f = median_ms(lambda: _core.conv2d_forward(y, x, wt, None, one, one, one, 1))
                i = median_ms(lambda: _core.conv2d_input_grad(dx, dy, wt, one, one, one, 1))
                g = median_ms(lambda: _core.conv2d_weight_grad(dw, x, dy, one, one, one, 1))
                print(f"{ci}→{co} {h}×{w} {mode} {threads} thread(s): forward {f:.2f} ms ({gflop / f:.1f} GFLOP/s), "
                      f"input grad {i:.2f} ms ({gflop / i:.1f}), weight grad {g:.2f} ms ({gflop / g:.1f})")


if __name__ == "__main__":
    main()
