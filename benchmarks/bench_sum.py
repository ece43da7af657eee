"""Double sums (docs/engine.md, "Arithmetic rules": each term widened to f64, added in element
order, rounded once) over a [8, 64, 16, 128] tensor — the whole tensor
(`x.sum()`, one chain) and per channel (`x.sum((0, 2, 3))`, a conv bias
gradient) — for normal and uniform [0, 1) data, at 1 and 2 threads.

    python benchmarks/bench_sum.py

Median of 30 calls after one warm-up, in ms. Not a test: nothing asserts
on time. The kernel alone: `cargo run --release --example chain_bench`.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import onemodel as om


def main() -> None:
    rng = np.random.default_rng(0)
    data = [("normal", rng.standard_normal((8, 64, 16, 128)) * 1.7), ("uniform", rng.random((8, 64, 16, 128)))]
    for name, a in data:
        x = om.tensor(a.astype(np.float32))
        for label, f in [("sum()", lambda: x.sum()), ("sum((0,2,3))", lambda: x.sum((0, 2, 3)))]:
            for threads in (1, 2):
                with om.compute.settings(threads=threads):
                    f()
                    ts = []
                    for _ in range(30):
                        t = time.perf_counter()
                        f()
                        ts.append(time.perf_counter() - t)
                print(f"{name:8s} {label:13s} {threads} thread(s): {statistics.median(ts) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
