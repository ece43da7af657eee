"""GEMM throughput: onemodel's GEMM on each kernel path and mode, next to
numpy.matmul (OpenBLAS; and torch.matmul when installed), at 1 and 2 threads,
in the four operand layouts, with the machine's arithmetic peak measured in
the same run.

Shapes are M×K×N: C[M, N] = A[M, K] · B[K, N], float32; one product is
2·M·K·N flops. Layouts: `NN` (both row-major), `TN` (A is the transposed
view of a row-major K×M matrix, as in the weight gradient xᵀ·g), `NT` (B is
the transposed view of a row-major N×K matrix, as in g·Wᵀ), `TT` (both).
Every library gets the same views (numpy and torch pass the transposes to
their BLAS as flags; onemodel packs through the strides).

The onemodel columns time the GEMM as the engine calls it:
`_core.matmul(out, a, b)` into a preallocated output (argument checks in the
binding, GIL released, the Rust GEMM). The `om.matmul` column times the
public op on the best path in fast mode (output allocation, autograd
bookkeeping and Python dispatch included), for reference.

Interleaving: the measurement runs in --rounds rounds; in each round every
cell (shape, layout, threads, library) is timed once, one after the other,
so a slow spell of the shared machine falls on all of them rather than on
one library; a shape and layout is timed at each thread count in turn, so
that the two cells of a scaling ratio are seconds apart.
A cell's timing runs the product enough times to last about --min-time
seconds. The table gives, per cell, the median GFLOP/s over the rounds, and
the ratio columns give the median over the rounds of that round's ratio to
numpy, with the range (min–max) in brackets. A cell whose single warm-up
already exceeded --max-time is reported from that one run and marked `*`;
larger shapes of that configuration are skipped (`—`) when they would take
longer than --max-time (the scalar and v128 paths in fast mode do their fma
in software and run below 1 GFLOP/s).

Threads: numpy's BLAS is pinned to the row's thread count with threadpoolctl
(required: without it OpenBLAS would use every core in the 1-thread rows;
the limit is checked inside, whatever OPENBLAS_NUM_THREADS says),
torch with torch.set_num_threads, onemodel with compute.set_threads.
--clock thread times the 1-thread rows in CPU seconds of the calling thread
(time.thread_time; all three libraries compute on the calling thread at one
thread), which on a shared machine leaves out the time other processes held
the core; 2-thread rows always use the wall clock.

Pause: --pause seconds (default 0.25) of untimed sleep come before every
timing that follows one at more than one thread. numpy's OpenBLAS keeps its idle worker spinning on a core for about
0.11 s after each product at 2 threads (measured here: the process used
0.110 s of CPU while its main thread slept 0.2 s or 0.4 s after a 1024³
product, 0 s at 1 thread), and torch's OpenMP workers spin for about 8 ms.
On a 2-core machine whatever is timed right after them loses part of a
core: without the pause onemodel's fast column, timed right after numpy's,
scaled 1.28–1.61× at 2 threads at 1024³ while its exact column, timed after
it, scaled 1.88–2.02× (docs/performance.md, "2026-12-06, night"); with a
pause fast scaled 1.80–1.93×. onemodel's pool does not spin (0.0001 s of
CPU in the same test). Timings that follow a
1-thread timing get no pause: no library spins after those.

Peak: `_core.peak_gflops(path, mode)`, a Rust loop of 12 independent
accumulator chains per register lane doing one fma (fast) or one multiply
and one add (exact) per step, no memory traffic; best of 5 runs of 0.2 s,
one thread.

Usage:
    python benchmarks/bench_gemm.py [--quick] [--markdown FILE] [--extra-site DIR]
        [--shapes M K N [M K N ...]] [--layouts NN TN NT TT] [--threads 1 2]
        [--paths avx512 avx2] [--rounds 3] [--clock thread] [--pause 0.25]
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
LAYOUTS = ["NN", "TN", "NT", "TT"]

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


def rate_of(fn, flops, min_time, max_time, clock, pause=0.0):
    """(GFLOP/s of one timing of `fn` lasting about min_time, whether only
    the warm-up ran), after `pause` seconds of untimed sleep (the module
    docstring, "Pause")."""
    if pause:
        time.sleep(pause)
    t0 = clock()
    fn()
    warm = clock() - t0
    if warm > max_time:
        return flops / warm / 1e9, True
    inner = max(1, int(min_time / max(warm, 1e-7)))
    t0 = clock()
    for _ in range(inner):
        fn()
    return flops / ((clock() - t0) / inner) / 1e9, False


def operands(rng, m, k, n, layout):
    """numpy arrays a [m, k] and b [k, n] in `layout` (transposed views of
    contiguous arrays where the layout says T)."""
    a = rng.uniform(-1, 1, (k, m) if layout[0] == "T" else (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if layout[1] == "T" else (k, n)).astype(np.float32)
    return (a.T if layout[0] == "T" else a), (b.T if layout[1] == "T" else b)


def om_view3(x):
    """A [1, rows, cols] onemodel view of the numpy view x (row-major or the
    transpose of a row-major array), sharing the layout."""
    base = x if x.flags.c_contiguous else x.T
    t = om.from_numpy(np.ascontiguousarray(base))
    rows, cols = x.shape
    strides = (0, cols, 1) if x.flags.c_contiguous else (0, 1, rows)
    return t._view((1, rows, cols), strides), t._view((rows, cols), strides[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="square sizes up to 512 and the two extra shapes only")
    ap.add_argument("--shapes", type=int, nargs="+", default=None, metavar="M K N",
                    help="these M K N triples instead of the default shapes")
    ap.add_argument("--layouts", nargs="+", default=["NN"], choices=LAYOUTS,
                    help="operand layouts (A then B: N row-major, T transposed view)")
    ap.add_argument("--rounds", "--repeats", type=int, default=3, dest="rounds",
                    help="interleaved rounds (each cell timed once per round)")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per timing")
    ap.add_argument("--max-time", type=float, default=4.0, help="budget of one product before a config is cut")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--paths", nargs="+", default=None, help="kernel paths (default: every available one)")
    ap.add_argument("--no-om-matmul", action="store_true", help="leave out the om.matmul column")
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="thread: 1-thread rows are timed in CPU seconds of the calling thread "
                    "(time.thread_time), which on a shared machine leaves out the time other "
                    "processes hold the core; 2-thread rows always use the wall clock")
    ap.add_argument("--pause", type=float, default=0.25,
                    help="seconds of untimed sleep before every timing that follows one at more than one "
                    "thread, so that a library's spinning idle threads (OpenBLAS: about 0.11 s) are not "
                    "on a core during it")
    ap.add_argument("--markdown", default=None, help="also write the table to this file")
    ap.add_argument("--extra-site", default=None,
                    help="a site-packages directory appended to sys.path before importing torch (a torch installed elsewhere)")
    args = ap.parse_args()

    global torch
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
    order = om.compute.available_kernel_paths()
    best = max(paths, key=lambda p: order.index(p) if p in order else -1)

    lines = []

    def out(line=""):
        print(line, flush=True)
        lines.append(line)

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    out(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"features {', '.join(om.compute.cpu_features())}; load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out(f"clock: {'thread CPU time for 1-thread rows, wall for 2-thread rows' if args.clock == 'thread' else 'wall'}; "
        f"{args.rounds} interleaved rounds, one timing of >= {args.min_time} s per cell per round, "
        f"{args.pause} s of untimed sleep after each timing at more than one thread")
    out(f"numpy {np.__version__} (" + ", ".join(f"{b.get('internal_api')} {b.get('version')} {b.get('architecture')}"
                                              for b in blas) + ")"
        + (f", torch {torch.__version__}" if torch else ", torch not installed"))
    out()
    out("Measured single-thread peak (GFLOP/s): " + ", ".join(
        f"{p} {m} {_core.peak_gflops(p, m, thread_clock=args.clock == 'thread'):.1f}" for p, m in configs))
    out()

    rng = np.random.default_rng(0)
    cut = {}  # (config, threads) -> GFLOP/s of the warm-up that was too slow
    prev_mode, prev_threads = om.compute.get_mode(), om.compute.get_threads()
    # cells[(threads, shape, layout)][name] -> list of (rate, single) per round
    cells = {}
    cases = [(t, s, lay) for t in args.threads for s in shapes for lay in args.layouts]
    # Timed shape by shape and layout by layout, each at every thread count
    # in turn: the 1- and 2-thread cells that a scaling ratio divides are
    # then seconds apart, not a whole pass over the shapes.
    timing_order = sorted(cases, key=lambda c: (shapes.index(c[1]), args.layouts.index(c[2]),
                                                args.threads.index(c[0])))
    data = {}
    for (t, (m, k, n), lay) in cases:
        if (m, k, n, lay) not in data:
            a, b = operands(rng, m, k, n, lay)
            A3, A2 = om_view3(a)
            B3, B2 = om_view3(b)
            data[(m, k, n, lay)] = (a, b, A3, B3, A2, B2, Tensor._empty((1, m, n)))
        cells[(t, (m, k, n), lay)] = {}
    after_threads = [1]  # the thread count of the last timing

    def timed(fn, flops, clock, threads):
        pause = args.pause if after_threads[0] > 1 else 0.0
        after_threads[0] = threads
        return rate_of(fn, flops, args.min_time, args.max_time, clock, pause)

    try:
        for _ in range(args.rounds):
            for (threads, (m, k, n), lay) in timing_order:
                a, b, A3, B3, A2, B2, C = data[(m, k, n, lay)]
                flops = 2.0 * m * k * n
                clock = time.thread_time if (args.clock == "thread" and threads == 1) else time.perf_counter
                cell = cells[(threads, (m, k, n), lay)]
                with blas_limited(threads):
                    cell.setdefault("numpy", []).append(
                        timed(lambda: np.matmul(a, b), flops, clock, threads))
                if torch:
                    torch.set_num_threads(threads)
                    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                    cell.setdefault("torch", []).append(
                        timed(lambda: torch.matmul(ta, tb), flops, clock, threads))
                om.compute.set_threads(threads)
                if not args.no_om_matmul:
                    om.compute.set_kernel_path(best)
                    om.compute.set_mode("fast")
                    cell.setdefault("om.matmul", []).append(
                        timed(lambda: om.matmul(A2, B2), flops, clock, threads))
                for path, mode in configs:
                    key = (path, mode, threads)
                    if key in cut and flops / (cut[key] * 1e9) > args.max_time:
                        cell.setdefault((path, mode), []).append(None)
                        continue
                    om.compute.set_kernel_path(path)
                    om.compute.set_mode(mode)
                    r = timed(lambda: _core.matmul(C, A3, B3), flops, clock, threads)
                    if r[1]:
                        cut[key] = min(cut.get(key, r[0]), r[0])
                    cell.setdefault((path, mode), []).append(r)
    finally:
        om.compute.set_kernel_path(None)
        om.compute.set_mode(prev_mode)
        om.compute.set_threads(prev_threads)

    def med(runs):
        got = [r for r in runs if r is not None]
        if not got:
            return "—"
        return f"{statistics.median(r[0] for r in got):.1f}{'*' if any(r[1] for r in got) else ''}"

    def ratio(runs, base):
        rs = [r[0] / b[0] for r, b in zip(runs, base) if r is not None]
        if not rs:
            return "—"
        return f"{statistics.median(rs):.2f} ({min(rs):.2f}–{max(rs):.2f})"

    header = ["M×K×N", "layout", "threads", "numpy"] + (["torch"] if torch else [])
    header += [] if args.no_om_matmul else [f"om.matmul ({best} fast)"]
    header += [f"{p} {m}" for p, m in configs]
    header += [f"{best} fast / numpy", f"{best} exact / numpy"]
    out("| " + " | ".join(header) + " |")
    out("|" + "---|" * len(header))
    for (threads, (m, k, n), lay) in cases:
        cell = cells[(threads, (m, k, n), lay)]
        row = [f"{m}×{k}×{n}", lay, str(threads), med(cell["numpy"])]
        row += [med(cell["torch"])] if torch else []
        row += [] if args.no_om_matmul else [med(cell["om.matmul"])]
        row += [med(cell[c]) for c in configs]
        row += [ratio(cell[(best, mode)], cell["numpy"]) for mode in ("fast", "exact")]
        out("| " + " | ".join(row) + " |")
    if len(args.threads) > 1 and 1 in args.threads:
        out()
        out(f"Scaling ({best}, median over rounds of t threads / 1 thread):")
        for (threads, (m, k, n), lay) in cases:
            if threads == 1:
                continue
            one = cells[(1, (m, k, n), lay)]
            cell = cells[(threads, (m, k, n), lay)]
            parts = [f"{mode} {ratio(cell[(best, mode)], one[(best, mode)])}" for mode in ("fast", "exact")]
            parts.append(f"numpy {ratio(cell['numpy'], one['numpy'])}")
            out(f"* {m}×{k}×{n} {lay} {threads} threads: " + ", ".join(parts))
    out()
    out(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
