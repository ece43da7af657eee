"""LSTM and GRU (384 → 128, 2 layers, bidirectional, T=64, B=8): forward and
forward+backward, 1 and 2 threads, both modes, next to torch in the same
process when torch is importable. Prints medians (ms) and ratios.

    python benchmarks/bench_rnn.py [--repeats 7] [--memory]

``--memory`` adds a second table: the peak resident memory (VmHWM) of a
fresh process per (layer, pass, library) at 2 threads, fast mode, after a
warm-up and ``repeats`` runs, next to the same process's peak just after
its imports (so the difference is what the layer used).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from _timing import peak_rss_mib

import onemodel as om

try:
    # A memory child measuring onemodel does not load torch at all.
    if os.environ.get("BENCH_RNN_NO_TORCH"):
        raise ImportError
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


def memory_child(library, name, backward, repeats):
    base = peak_rss_mib()
    if library == "onemodel":
        om.compute.set_threads(2)
        run = ours(getattr(om.nn, name), backward)
    else:
        torch.set_num_threads(2)
        run = theirs(getattr(torch.nn, name), backward)
    for _ in range(repeats + 1):
        run()
    print(f"{base:.1f} {peak_rss_mib():.1f}")


def memory_table(repeats):
    libraries = ["onemodel"] + (["torch"] if torch is not None else [])
    print()
    print("| layer | pass | library | peak MiB | peak after imports MiB | difference MiB |")
    print("|---|---|---|---|---|---|")
    for name in ("LSTM", "GRU"):
        for backward in (False, True):
            for lib in libraries:
                env = dict(os.environ, **({"BENCH_RNN_NO_TORCH": "1"} if lib == "onemodel" else {}))
                out = subprocess.run([sys.executable, __file__, "--repeats", str(repeats), "--memory-child", lib, name, str(int(backward))],
                                     capture_output=True, text=True, check=True, env=env).stdout.split()
                base, peak = float(out[0]), float(out[1])
                print(f"| {name} | {'fwd+bwd' if backward else 'fwd'} | {lib} | {peak:.0f} | {base:.0f} | {peak - base:.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--memory", action="store_true", help="also measure peak memory, one process per case")
    ap.add_argument("--memory-child", nargs=3, metavar=("LIBRARY", "LAYER", "BACKWARD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        lib, name, backward = args.memory_child
        memory_child(lib, name, backward == "1", args.repeats)
        return
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
    if args.memory:
        memory_table(args.repeats)


if __name__ == "__main__":
    main()
