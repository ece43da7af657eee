"""One large convolution's backward: conv2d 3×3, padding 1, 64→64 channels
on one 256×256 image — time and peak memory, onemodel (fast, exact) and
torch side by side.

The input gradient is a product over the taps' column matrix and its
col2im; on an image this size that matrix is 576 × 65536 floats (144 MiB)
when it is made whole. Each (framework, threads, mode) runs in a fresh
subprocess, so the peak resident memory (VmHWM) of one is not mixed with
another's. The time is of `y.backward(g)` (input and weight gradients),
the first call (the memory pool and the pages still to be obtained) and
the median of the --repeats calls after it.

    python benchmarks/bench_conv_large.py [--repeats 5] [--threads 1 2] [--rounds 1]
"""

from __future__ import annotations

import json
import statistics
import time

from _timing import import_torch, peak_rss_mib, per_process_runs, pin_threads, write_json

import numpy as np

N, C, H, W = 1, 64, 256, 256


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((C, C, 3, 3)) * 0.05).astype(np.float32)
    return x, w


def backward_ours(threads, mode):
    import onemodel as om
    import onemodel.functional as F

    pin_threads(threads)
    om.compute.set_mode(mode)
    xn, wn = data()
    x, w = om.tensor(xn).requires_grad_(), om.tensor(wn).requires_grad_()

    def once():
        x.grad = w.grad = None
        y = F.conv2d(x, w, padding=1)
        g = om.ones_like(y)
        t0 = time.perf_counter()
        y.backward(g)
        return (time.perf_counter() - t0) * 1e3

    return once


def backward_torch(threads, mode):
    torch = import_torch()
    pin_threads(threads, torch)
    xn, wn = data()
    x, w = torch.from_numpy(xn).requires_grad_(), torch.from_numpy(wn).requires_grad_()

    def once():
        x.grad = w.grad = None
        y = torch.nn.functional.conv2d(x, w, padding=1)
        g = torch.ones_like(y)
        t0 = time.perf_counter()
        y.backward(g)
        return (time.perf_counter() - t0) * 1e3

    return once


def child(framework, threads, mode, repeats):
    once = (backward_ours if framework == "onemodel" else backward_torch)(threads, mode)
    first = once()
    later = [once() for _ in range(repeats)]
    print(json.dumps({"first": first, "ms": statistics.median(later), "peak_mib": peak_rss_mib()}))


def main():
    got = per_process_runs(__file__, child)
    if got is None:
        return
    args, runs, configs, have_torch = got

    def med(th, fw, mode, key):
        return statistics.median(r[key] for r in runs[(th, fw, mode)])

    print(f"conv2d 3×3 {C}→{C}, {N}×{C}×{H}×{W}, backward; ms (median of {args.rounds} rounds) and peak MiB\n")
    print("| threads | config | first call ms | later calls ms | peak MiB |")
    print("|---|---|---|---|---|")
    rows = []
    for th in args.threads:
        for fw, mode in configs:
            name = f"{fw} {mode}" if fw == "onemodel" else fw
            print(f"| {th} | {name} | {med(th, fw, mode, 'first'):.0f} | {med(th, fw, mode, 'ms'):.0f} "
                  f"| {med(th, fw, mode, 'peak_mib'):.0f} |")
        for key, case in (("ms", "backward ms"), ("first", "first backward ms"), ("peak_mib", "peak MiB")):
            rows.append({"case": f"conv2d 64→64 256×256 {case}", "threads": th, "values": {
                "onemodel fast": med(th, "onemodel", "fast", key), "onemodel exact": med(th, "onemodel", "exact", key),
                "torch": med(th, "torch", "fast", key) if have_torch else None}})
    write_json(args.json_out, "conv_large", "ms per backward (peak rows: MiB)", rows,
               note=f"median of {args.repeats} calls after the first, one process per configuration")


if __name__ == "__main__":
    main()
