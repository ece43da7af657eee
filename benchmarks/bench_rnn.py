"""LSTM and GRU (384 → 128, 2 layers, bidirectional, T=64, B=8): forward and
forward+backward, 1 and 2 threads, both modes, next to torch in the same
process when torch is importable. Prints medians (ms) and ratios.

    python benchmarks/bench_rnn.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import onemodel as om

try:
    import torch
except ImportError:  # torch is optional
    torch = None

T, B, I, H = 64, 8, 384, 128


def median_ms(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def ours(cls, backward):
    m = cls(I, H, num_layers=2, bidirectional=True, generator=om.Generator().manual_seed(0))
    x = om.randn(T, B, I, generator=om.Generator().manual_seed(1))

    def run():
        if backward:
            out, _ = m(x)
            out.sum().backward()
        else:
            with om.no_grad():
                m(x)

    return run


def theirs(cls, backward):
    m = cls(I, H, num_layers=2, bidirectional=True)
    x = torch.randn(T, B, I)

    def run():
        if backward:
            out, _ = m(x)
            out.sum().backward()
        else:
            with torch.no_grad():
                m(x)

    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    print(f"onemodel {om.__version__}, path {om.compute.kernel_path()}, torch {torch.__version__ if torch else 'absent'}")
    print("| layer | pass | threads | onemodel fast ms | onemodel exact ms | torch ms | exact/torch | fast/torch |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("LSTM", "GRU"):
        for backward in (False, True):
            for threads in (1, 2):
                om.compute.set_threads(threads)
                res = {}
                for mode in ("fast", "exact"):
                    om.compute.set_mode(mode)
                    res[mode] = median_ms(ours(getattr(om.nn, name), backward), args.repeats)
                t = None
                if torch is not None:
                    torch.set_num_threads(threads)
                    t = median_ms(theirs(getattr(torch.nn, name), backward), args.repeats)
                ratio = lambda v: f"{v / t:.2f}" if t else "-"
                print(f"| {name} | {'fwd+bwd' if backward else 'fwd'} | {threads} | {res['fast']:.1f} | {res['exact']:.1f} | "
                      f"{t:.1f} | {ratio(res['exact'])} | {ratio(res['fast'])} |" if t else
                      f"| {name} | {'fwd+bwd' if backward else 'fwd'} | {threads} | {res['fast']:.1f} | {res['exact']:.1f} | - | - | - |")


if __name__ == "__main__":
    main()
