"""Per-call cost of small operators through the public API: what the
binding layer (argument conversion, checks, GIL release) adds on top of
tiny kernels, plus one mid-size convolution step for scale.

    python benchmarks/bench_calls.py [--repeat 15] [--json]

Prints the median µs per call of each case (1 thread, exact mode). To
compare two builds, run it alternately under each (a slow spell of a
shared machine then falls on both): docs/performance.md shows the loop.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import onemodel as om
import onemodel.functional as F


def cases():
    gen = om.Generator().manual_seed(0)
    a, b = om.randn(8, 8, generator=gen), om.randn(8, 8, generator=gen)
    x = om.randn(2, 3, 8, 8, generator=gen).requires_grad_()
    w = om.randn(4, 3, 3, 3, generator=gen).requires_grad_()
    xs = om.randn(5, 2, 4, generator=gen).requires_grad_()
    lstm = om.nn.LSTM(4, 8, bidirectional=True)
    p = om.randn(64, generator=gen).requires_grad_()
    opt = om.optim.AdamW([p], lr=1e-3)
    big_x = om.randn(4, 32, 32, 32, generator=gen).requires_grad_()
    big_w = om.randn(64, 32, 3, 3, generator=gen).requires_grad_()

    def add():
        a + b

    def conv_step():
        F.conv2d(x, w, padding=1).sum().backward()

    def pool_resize():
        F.interpolate(F.max_pool2d(x.detach(), 2), scale_factor=2.0, mode="bilinear")

    def lstm_step():
        lstm(xs)[0].sum().backward()

    def adam_step():
        p.grad = a.reshape(64)
        opt.step()

    def big_conv_step():
        F.conv2d(big_x, big_w, padding=1).sum().backward()

    return {
        "add 8x8": (add, 2000),
        "conv2d step 2x3x8x8": (conv_step, 200),
        "max_pool2d + interpolate": (pool_resize, 500),
        "bi-LSTM step T=5 H=8": (lstm_step, 200),
        "AdamW step 64": (adam_step, 1000),
        "conv2d step 4x32x32x32 -> 64": (big_conv_step, 5),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", action="store_true", help="print {case: median µs} as JSON")
    args = ap.parse_args()
    om.compute.set_threads(1)
    om.compute.set_mode("exact")
    result = {}
    for name, (fn, calls) in cases().items():
        fn()
        samples = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - t0) / calls * 1e6)
        result[name] = statistics.median(samples)
    if args.json:
        print(json.dumps(result))
    else:
        for name, us in result.items():
            print(f"{name:32s} {us:10.1f} µs")


if __name__ == "__main__":
    main()
