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

from _timing import add_harness_args, import_torch, interleaved_ms, peak_rss_mib, pin_threads, write_json

import onemodel as om

# A memory child measuring onemodel does not load torch at all.
torch = None if os.environ.get("BENCH_RNN_NO_TORCH") else import_torch()

T, B, I, H = 64, 8, 384, 128


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
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    add_harness_args(ap)
    args = ap.parse_args()
    global torch
    if args.extra_site and torch is None and not os.environ.get("BENCH_RNN_NO_TORCH"):
        torch = import_torch(args.extra_site)
    if args.memory_child:
        lib, name, backward = args.memory_child
        memory_child(lib, name, backward == "1", args.repeats)
        return
    print(f"onemodel {om.__version__}, path {om.compute.kernel_path()}, torch {torch.__version__ if torch else 'absent'}")
    print(f"median of {args.repeats} interleaved repeats (onemodel fast, exact and torch timed in turn)")
    print("| layer | pass | threads | onemodel fast ms | onemodel exact ms | torch ms | exact/torch | fast/torch |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for name in ("LSTM", "GRU"):
        for backward in (False, True):
            for threads in args.threads:
                pin_threads(threads, torch)

                def in_mode(mode, run):
                    def timed():
                        with om.compute.settings(mode=mode):
                            run()
                    return timed

                fns = [in_mode("fast", ours(getattr(om.nn, name), backward)), in_mode("exact", ours(getattr(om.nn, name), backward))]
                if torch is not None:
                    fns.append(theirs(getattr(torch.nn, name), backward))
                med = [statistics.median(t) for t in interleaved_ms(fns, args.repeats)]
                res = {"fast": med[0], "exact": med[1]}
                t = med[2] if torch is not None else None
                label = f"{name} {'fwd+bwd' if backward else 'fwd'}"
                rows.append({"case": label, "threads": threads,
                             "values": {"onemodel fast": med[0], "onemodel exact": med[1], "torch": t}})
                ratio = lambda v: f"{v / t:.2f}" if t else "-"  # noqa: E731
                print(f"| {name} | {'fwd+bwd' if backward else 'fwd'} | {threads} | {res['fast']:.1f} | {res['exact']:.1f} | "
                      f"{t:.1f} | {ratio(res['exact'])} | {ratio(res['fast'])} |" if t else
                      f"| {name} | {'fwd+bwd' if backward else 'fwd'} | {threads} | {res['fast']:.1f} | {res['exact']:.1f} | - | - | - |",
                      flush=True)
    write_json(args.json_out, "rnn", "ms per call", rows, note=f"median of {args.repeats} interleaved repeats; T={T}, B={B}, {I}→{H}, 2 layers, bidirectional")
    if args.memory:
        memory_table(args.repeats)


if __name__ == "__main__":
    main()
