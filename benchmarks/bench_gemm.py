"""GEMM throughput: onemodel.matmul on every kernel path and mode, next to
numpy.matmul (and torch.matmul when installed), at 1 and 2 threads, with the
machine's arithmetic peak measured in the same run.

Shapes are M×K×N: C[M, N] = A[M, K] · B[K, N], all row-major float32; one
product is 2·M·K·N flops. The onemodel columns time the GEMM as the engine
calls it: `_core.matmul(out, a, b)` into a preallocated output (argument
checks in the binding, GIL released, the Rust GEMM). The `om.matmul` column
times the public op on the best path in fast mode (output allocation,
autograd bookkeeping and Python dispatch included), for reference; numpy
and torch are timed through their public matmul. Each cell is the median GFLOP/s of --repeats timed
repeats (wall clock, after one warm-up), each repeat running the product
enough times to last about --min-time seconds. A cell whose single warm-up
already exceeded --max-time is reported from that one run and marked `*`;
larger shapes of that configuration are skipped (`—`) when they would take
longer than --max-time (the scalar and v128 paths in fast mode do their fma
in software and run below 1 GFLOP/s).

Peak: `_core.peak_gflops(path, mode)` (with --clock thread, in thread CPU
time like the 1-thread rows), a Rust loop of 12 independent
accumulator chains per register lane doing one fma (fast) or one multiply
and one add (exact) per step, no memory traffic; best of 5 runs of 0.2 s,
one thread. The 2-thread peak is reported as twice that.

numpy's BLAS thread count is pinned with threadpoolctl (required: pip
install threadpoolctl), and checked inside the limit, so that the
"1 thread" column is one BLAS thread whatever OPENBLAS_NUM_THREADS says.

Usage:
    python benchmarks/bench_gemm.py [--quick] [--markdown FILE] [--extra-site DIR]
        [--shapes M K N [M K N ...]]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import onemodel as om
from onemodel import _core
from onemodel.tensor import Tensor

SQUARE = [128, 256, 512, 1024, 2048]
EXTRA = [(2048, 384, 512), (8, 128, 512)]

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # pragma: no cover
    sys.exit("bench_gemm needs threadpoolctl to pin numpy's BLAS threads: pip install threadpoolctl")


def blas_limited(threads: int):
    """threadpool_limits for numpy's BLAS, checked: every BLAS pool numpy
    loaded must report `threads` inside it (else the numpy column would not
    be the thread count it claims)."""
    limit = threadpool_limits(limits=threads, user_api="blas")
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    wrong = [(p.get("internal_api"), p.get("num_threads")) for p in pools if p.get("num_threads") != threads]
    if not pools or wrong:
        limit.restore_original_limits()
        sys.exit(f"bench_gemm: could not pin numpy's BLAS to {threads} threads (pools: {pools or 'none found'})")
    return limit

torch = None


CLOCK = time.perf_counter


def timed(fn, flops, repeats, min_time, max_time):
    """(median GFLOP/s of `fn`, whether only the warm-up ran)."""
    clock = CLOCK
    t0 = clock()
    fn()
    warm = clock() - t0
    if warm > max_time:
        return flops / warm / 1e9, True
    inner = max(1, int(min_time / max(warm, 1e-7)))
    rates = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(inner):
            fn()
        dt = (clock() - t0) / inner
        rates.append(flops / dt / 1e9)
    return statistics.median(rates), False


def fmt(cell):
    if cell is None:
        return "—"
    rate, single = cell
    return f"{rate:.1f}{'*' if single else ''}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="square sizes up to 512 and the two extra shapes only")
    ap.add_argument("--shapes", type=int, nargs="+", default=None, metavar="M K N",
                    help="these M K N triples instead of the default shapes")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timed repeat")
    ap.add_argument("--max-time", type=float, default=4.0, help="budget of one product before a config is cut")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--paths", nargs="+", default=None, help="kernel paths (default: every available one)")
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="thread: 1-thread rows are timed in CPU seconds of the calling thread "
                    "(time.thread_time), which on a shared machine leaves out the time other "
                    "processes hold the core; 2-thread rows always use the wall clock")
    ap.add_argument("--markdown", default=None, help="also write the table to this file")
    ap.add_argument("--extra-site", default=None,
                    help="a site-packages directory appended to sys.path before importing torch (a torch installed elsewhere)")
    args = ap.parse_args()

    global torch, CLOCK
    if args.extra_site:
        sys.path.append(args.extra_site)
    try:
        import torch as _torch

        torch = _torch
    except ImportError:
        torch = None

    shapes = [(s, s, s) for s in SQUARE if not args.quick or s <= 512] + EXTRA
    if args.shapes:
        if len(args.shapes) % 3:
            ap.error("--shapes takes M K N triples")
        shapes = [tuple(args.shapes[i:i + 3]) for i in range(0, len(args.shapes), 3)]
    paths = args.paths or om.compute.available_kernel_paths()
    configs = [(p, m) for p in paths for m in ("fast", "exact")]

    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    out(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"features {', '.join(om.compute.cpu_features())}; load average at start {os.getloadavg()[0]:.2f}")
    out(f"clock: {'thread CPU time for 1-thread rows, wall for 2-thread rows' if args.clock == 'thread' else 'wall'}; "
        f"median of {args.repeats} repeats of >= {args.min_time} s")
    out(f"numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else ", torch not installed")
        + "; numpy's BLAS threads pinned with threadpoolctl")
    out()
    out("Measured single-thread peak (GFLOP/s): " + ", ".join(
        f"{p} {m} {_core.peak_gflops(p, m, thread_clock=args.clock == 'thread'):.1f}" for p, m in configs))
    out()

    best = paths[-1]
    header = ["M×K×N", "threads", "numpy"] + (["torch"] if torch else []) + [f"om.matmul ({best} fast)"]
    header += [f"{p} {m}" for p, m in configs]
    header += [f"{best} fast / numpy", f"{best} exact / numpy"]
    out("| " + " | ".join(header) + " |")
    out("|" + "---|" * len(header))

    rng = np.random.default_rng(0)
    cut = {}  # (config, threads) -> True once too slow
    prev_mode, prev_threads = om.compute.get_mode(), om.compute.get_threads()
    try:
        for threads in args.threads:
            for (m, k, n) in shapes:
                flops = 2.0 * m * k * n
                a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
                b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
                row = [f"{m}×{k}×{n}", str(threads)]
                CLOCK = time.thread_time if (args.clock == "thread" and threads == 1) else time.perf_counter

                with blas_limited(threads):
                    npc = timed(lambda: np.matmul(a, b), flops, args.repeats, args.min_time, args.max_time)
                row.append(fmt(npc))
                if torch:
                    torch.set_num_threads(threads)
                    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                    row.append(fmt(timed(lambda: torch.matmul(ta, tb), flops, args.repeats, args.min_time, args.max_time)))

                A, B = om.from_numpy(a), om.from_numpy(b)
                C = Tensor._empty((1, m, n))
                A3, B3 = A._view((1, m, k), (0, k, 1)), B._view((1, k, n), (0, n, 1))
                om.compute.set_threads(threads)
                om.compute.set_kernel_path(best)
                om.compute.set_mode("fast")
                row.append(fmt(timed(lambda: om.matmul(A, B), flops, args.repeats, args.min_time, args.max_time)))
                ours = {}
                for path, mode in configs:
                    key = (path, mode, threads)
                    if key in cut and flops / (cut[key] * 1e9) > args.max_time:
                        row.append("—")
                        continue
                    om.compute.set_kernel_path(path)
                    om.compute.set_mode(mode)
                    cell = timed(lambda: _core.matmul(C, A3, B3), flops, args.repeats, args.min_time, args.max_time)
                    if cell[1]:
                        cut[key] = cell[0]
                    ours[(path, mode)] = cell
                    row.append(fmt(cell))
                for mode in ("fast", "exact"):
                    cell = ours.get((best, mode))
                    row.append(f"{cell[0] / npc[0]:.2f}" if cell else "—")
                out("| " + " | ".join(row) + " |")
    finally:
        om.compute.set_kernel_path(None)
        om.compute.set_mode(prev_mode)
        om.compute.set_threads(prev_threads)

    out()
    out(f"load average at end {os.getloadavg()[0]:.2f}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
