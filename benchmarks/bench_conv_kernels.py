"""The three convolution kernels on their own (forward, input gradient,
weight gradient; 3×3, padding 1, batch 8), at 1 thread (or each count of
--threads), both modes: the
median of 7 calls of each `_core` kernel into preallocated outputs, in ms and
GFLOP/s (2·N·O·H·W·C·9 flops each), timed in turn with the whole step
bench_conv.py measures (Conv2d with bias, `.sum()`, backward), so the time
outside the three kernels can be read off. Not a test: nothing asserts on
time.

    python benchmarks/bench_conv_kernels.py [--threads 1 2]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from _timing import interleaved_ms

import onemodel as om
from onemodel import _core

SHAPES = [(1, 32, 32, 256), (32, 64, 16, 128), (64, 96, 8, 64)]
BATCH = 8


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
                xg = om.tensor(x.numpy(), requires_grad=True)
                conv = om.nn.Conv2d(ci, co, 3, padding=1)

                def step():
                    with om.ActivationScope():
                        conv(xg).sum().backward()

                f, i, g, s = (statistics.median(t) for t in interleaved_ms([
                    lambda: _core.conv2d_forward(y, x, wt, None, one, one, one, 1),
                    lambda: _core.conv2d_input_grad(dx, dy, wt, one, one, one, 1),
                    lambda: _core.conv2d_weight_grad(dw, x, dy, one, one, one, 1),
                    step,
                ], repeats=7))
                print(f"{ci}→{co} {h}×{w} {mode} {threads} thread(s): forward {f:.2f} ms ({gflop / f:.1f} GFLOP/s), "
                      f"input grad {i:.2f} ms ({gflop / i:.1f}), weight grad {g:.2f} ms ({gflop / g:.1f}); "
                      f"whole step (Conv2d with bias, .sum(), backward) {s:.2f} ms, {s - f - i - g:.2f} outside the kernels")


if __name__ == "__main__":
    main()
