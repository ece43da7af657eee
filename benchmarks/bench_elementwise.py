"""Element-wise loops: elements per second of each loop per kernel path and
mode, next to numpy's np.exp / np.log / np.tanh and a numpy sigmoid measured
in the same process, on 1M-element float32 arrays (median of repeats).

    python benchmarks/bench_elementwise.py [--n 1000000] [--repeats 15]

Not a test: prints a markdown table (docs/performance.md, "Element-wise")."""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import onemodel as om
from _timing import add_harness_args, pin_threads, write_json


def median_time(fn, repeats):
    fn()  # warm-up (pool, caches)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--paths", nargs="+", default=None, help="kernel paths (default: every available one)")
    add_harness_args(ap)
    args = ap.parse_args()
    pin_threads(1)
    n = args.n
    rng = np.random.default_rng(0)
    xs = rng.uniform(-8, 8, n).astype(np.float32)
    xp = rng.uniform(0.01, 100, n).astype(np.float32)
    x, xpos, y = om.tensor(xs), om.tensor(xp), om.tensor(rng.uniform(-1, 1, n).astype(np.float32))
    ops = {
        "add": lambda: om.add(x, y),
        "mul": lambda: om.mul(x, y),
        "relu": lambda: om.relu(x),
        "exp": lambda: om.exp(x),
        "log": lambda: om.log(xpos),
        "tanh": lambda: om.tanh(x),
        "sigmoid": lambda: om.sigmoid(x),
        "erf": lambda: om.erf(x),
        "gelu": lambda: om.functional.gelu(x),
        "sigmoid_backward": lambda: om._core.binary("sigmoid_backward", om.empty(n), y, x),
        "tanh_backward": lambda: om._core.binary("tanh_backward", om.empty(n), y, x),
        "gelu_backward": lambda: om._core.binary("gelu_backward", om.empty(n), y, x),
    }
    numpy_ops = {
        "exp": lambda: np.exp(xs),
        "log": lambda: np.log(xp),
        "tanh": lambda: np.tanh(xs),
        "sigmoid": lambda: 1.0 / (1.0 + np.exp(-xs)),
    }
    paths = args.paths or om.compute.available_kernel_paths()
    json_rows = []
    print(f"n = {n}, median of {args.repeats}; CPU features: {', '.join(om.compute.info().get('cpu_features', []))}")
    header = ["op"] + [f"{p} {m}" for p in paths for m in ("fast", "exact")] + ["numpy"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for name, fn in ops.items():
        row = [name]
        values = {}
        for p in paths:
            for m in ("fast", "exact"):
                with om.compute.settings(mode=m, kernel_path=p):
                    t = median_time(fn, args.repeats)
                row.append(f"{n / t / 1e6:.0f}")
                values[f"onemodel {p} {m}"] = n / t / 1e6
        tn = median_time(numpy_ops[name], args.repeats) if name in numpy_ops else None
        row.append(f"{n / tn / 1e6:.0f}" if tn else "–")
        values["numpy"] = n / tn / 1e6 if tn else None
        json_rows.append({"case": f"{name}, {n} floats", "threads": 1, "values": values})
        print("| " + " | ".join(row) + " |")
    print("(millions of elements per second)")
    write_json(args.json_out, "elementwise", "M elements/s", json_rows, higher_is_better=True, reference="numpy",
               note=f"median of {args.repeats}, one thread")


if __name__ == "__main__":
    main()
