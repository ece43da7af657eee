"""One AdamW step over the crnn-v0 recognizer's parameters (about 1.02M
floats in 20 tensors), onemodel at 1 and 2 threads next to torch's AdamW
with foreach=False and foreach=True in the same process (torch optional).

    python benchmarks/bench_optim.py [--repeat 200] [--classes 100]

Prints the median, the minimum and the 90th percentile of the wall time of
``optimizer.step()`` (gradients set once; the step reads them again each
time). A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import onemodel as om
from _timing import add_harness_args, import_torch, pin_threads, write_json


def crnn_v0_shapes(classes: int) -> list:
    """The container's tensors (docs/recognizer.md, "Architecture (crnn-v0)"): three 3x3 conv blocks
    (32, 64, 96 channels), two bidirectional LSTM layers of hidden 128 on
    4*96 = 384 features, the classifier."""
    shapes = []
    cin = 1
    for cout in (32, 64, 96):
        shapes += [(cout, 3, 3, cin), (cout,)]
        cin = cout
    hidden, feat = 128, 4 * 96
    for layer in range(2):
        n_in = feat if layer == 0 else 2 * hidden
        for _direction in range(2):
            shapes += [(4 * hidden, n_in), (4 * hidden, hidden), (4 * hidden,)]
    shapes += [(classes, 2 * hidden), (classes,)]
    return shapes


def timed(fn, repeat: int) -> tuple:
    for _ in range(5):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return statistics.median(times), times[0], times[min(len(times) - 1, int(0.9 * len(times)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    add_harness_args(ap)
    args = ap.parse_args()
    torch = import_torch(args.extra_site)

    shapes = crnn_v0_shapes(args.classes)
    rng = np.random.default_rng(0)
    init = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    grads = [(rng.standard_normal(s) * 1e-3).astype(np.float32) for s in shapes]
    n = sum(a.size for a in init)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"AdamW step: {n} parameters in {len(shapes)} tensors; kernel path {om.compute.kernel_path()}; "
          f"{os.cpu_count()} CPUs, load average {load}; median (min-p90) of {args.repeat} steps, "
          "the optimizers timed in turn")
    if torch is None:
        print("(torch not importable: its columns are skipped)")
    rows, json_rows = [], []

    params = [om.nn.Parameter(om.tensor(a)) for a in init]
    for p, g in zip(params, grads):
        p.grad = om.tensor(g)
    opt = om.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    names, steps = ["onemodel AdamW"], [opt.step]
    if torch is not None:
        for foreach in (False, True):
            tp = [torch.tensor(a, requires_grad=True) for a in init]
            for p, g in zip(tp, grads):
                p.grad = torch.tensor(g)
            names.append(f"torch {torch.__version__} AdamW foreach={foreach}")
            steps.append(torch.optim.AdamW(tp, lr=1e-3, weight_decay=0.01, foreach=foreach).step)
    for threads in args.threads:
        pin_threads(threads, torch)
        stats = interleaved(steps, args.repeat)
        plural = "s" if threads > 1 else ""
        for name, st in zip(names, stats):
            rows.append((f"{name}, {threads} thread{plural}", st))
        values = {"onemodel": stats[0][0] * 1e3}
        if torch is not None:
            values.update({"torch foreach=False": stats[1][0] * 1e3, "torch": stats[2][0] * 1e3})
        json_rows.append({"case": f"AdamW step, crnn-v0's {n} floats in {len(shapes)} tensors", "threads": threads,
                          "values": values})

    # The fixed cost of a step (Python bookkeeping, one kernel call): the
    # same number of tensors, one element each.
    tiny = [om.nn.Parameter(om.zeros(1)) for _ in shapes]
    for p in tiny:
        p.grad = om.ones(1)
    rows.append((f"onemodel AdamW, {len(shapes)} one-element tensors", timed(om.optim.AdamW(tiny).step, args.repeat)))

    width = max(len(name) for name, _ in rows)
    for name, (med, lo, hi) in rows:
        print(f"{name:<{width}}  {med * 1e3:8.3f} ms  ({lo * 1e3:.3f}-{hi * 1e3:.3f})")
    write_json(args.json_out, "optim", "ms per step", json_rows,
               note=f"median of {args.repeat} interleaved steps; the reference column is torch foreach=True")


def interleaved(fns, repeat: int) -> list:
    """(median, min, p90) seconds of each function, timed in turn."""
    for fn in fns:
        for _ in range(5):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for t, fn in zip(times, fns):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    out = []
    for t in times:
        t.sort()
        out.append((statistics.median(t), t[0], t[min(len(t) - 1, int(0.9 * len(t)))]))
    return out


if __name__ == "__main__":
    main()
