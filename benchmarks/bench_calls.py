"""Per-call cost of small operators through the public API, next to torch
in the same process: what the Python layer (checks, records, dispatch) and
the binding (argument conversion, output allocation) add on top of tiny
kernels, with and without autograd recording; then a few small training
steps (a 784-256-10 MLP with AdamW, a small conv, a bi-LSTM) at each
thread count.

    python benchmarks/bench_calls.py [--rounds 15] [--threads 1 2] [--interleave-threads]
        [--only ops|steps] [--extra-site DIR] [--json FILE]

Each case is written once against the torch API and run with `lib` =
onemodel and `lib` = torch (same data, from numpy). In each of --rounds
rounds each library runs the case `calls` times in turn (so a slow spell of
a shared machine falls on both); the table gives the median µs per call
over rounds, and onemodel's ratio to torch. "rec" cases have inputs that
require grad, so each call records a graph (dropped after the call).
onemodel runs in its default (fast) mode; the small ops are the same code
in both modes. Not a test: nothing asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from _timing import add_harness_args, import_torch, pin_threads, thread_note, write_json

import onemodel as om


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def op_cases(lib):
    """(name, fn, calls per timing) of the per-op cases."""
    t = lambda shape, seed, rg=False: lib.tensor(_data(shape, seed)).requires_grad_(rg)  # noqa: E731
    a, b = t((4, 4), 0), t((4, 4), 1)
    ar, br = t((4, 4), 0, True), t((4, 4), 1, True)
    m1, m2 = t((16, 16), 2), t((16, 16), 3)
    m1r, m2r = t((16, 16), 2, True), t((16, 16), 3, True)
    return [
        ("a + b, 4×4", lambda: a + b, 2000),
        ("a * b, 4×4", lambda: a * b, 2000),
        ("relu, 4×4", lambda: a.relu(), 2000),
        ("matmul 16×16", lambda: m1 @ m2, 2000),
        ("sum, 4×4", lambda: a.sum(), 2000),
        ("a + b, 4×4, rec", lambda: ar + br, 2000),
        ("a * b, 4×4, rec", lambda: ar * br, 2000),
        ("relu, 4×4, rec", lambda: ar.relu(), 2000),
        ("matmul 16×16, rec", lambda: m1r @ m2r, 2000),
        ("sum, 4×4, rec", lambda: ar.sum(), 2000),
        ("a + b, 4×4, rec + backward", lambda: (ar + br).sum().backward(), 500),
    ]


def step_cases(lib):
    """(name, fn, calls per timing) of the small training steps."""
    nn, F = lib.nn, lib.nn.functional

    def load(module, seed):
        with lib.no_grad():
            for i, p in enumerate(module.parameters()):
                p.copy_(lib.tensor(_data(tuple(p.shape), seed + i) * 0.05))
        return module

    mlp = load(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)), 10)
    opt = lib.optim.AdamW(mlp.parameters(), lr=1e-3)
    xb = lib.tensor(_data((64, 784), 20))
    yb = lib.tensor(np.random.default_rng(21).integers(0, 10, 64))

    def mlp_step():
        opt.zero_grad()
        F.cross_entropy(mlp(xb), yb).backward()
        opt.step()

    x = lib.tensor(_data((2, 3, 8, 8), 30)).requires_grad_()
    w = lib.tensor(_data((4, 3, 3, 3), 31)).requires_grad_()

    def conv_step():
        x.grad = w.grad = None
        F.conv2d(x, w, padding=1).sum().backward()

    lstm = load(nn.LSTM(4, 8, bidirectional=True), 40)
    xs = lib.tensor(_data((5, 2, 4), 50)).requires_grad_()

    def lstm_step():
        xs.grad = None
        lstm(xs)[0].sum().backward()

    p = lib.tensor(_data((64,), 60)).requires_grad_()
    g = lib.tensor(_data((64,), 61))
    popt = lib.optim.AdamW([p], lr=1e-3)

    def adam_step():
        p.grad = g
        popt.step()

    return [
        ("MLP 784-256-10 step, AdamW, batch 64", mlp_step, 20),
        ("conv2d step 2×3×8×8 → 4", conv_step, 200),
        ("bi-LSTM step T=5 H=8", lstm_step, 100),
        ("AdamW step, 64 floats", adam_step, 500),
    ]


def interleaved_us(fns, calls, rounds, clock=time.perf_counter, budget=0.05, setups=None):
    """Median µs per call of each function over `rounds` interleaved rounds
    of `calls` calls each, fewer when the slowest function would take more
    than `budget` seconds for them (the same count for every function).
    `setups[i]()`, when given, runs (untimed) before each block of fns[i]."""
    setups = setups or [lambda: None] * len(fns)
    slowest = 0.0
    for fn, setup in zip(fns, setups):
        setup()
        warm = []
        for _ in range(max(3, calls // 10)):
            t0 = time.perf_counter()
            fn()
            warm.append(time.perf_counter() - t0)
        slowest = max(slowest, statistics.median(warm))
    calls = max(1, min(calls, int(budget / max(slowest, 1e-9))))
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for s, fn, setup in zip(samples, fns, setups):
            setup()
            t0 = clock()
            for _ in range(calls):
                fn()
            s.append((clock() - t0) / calls * 1e6)
    return [statistics.median(s) for s in samples]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", choices=["ops", "steps"], default=None)
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="thread: rows at 1 thread are timed in CPU time of the calling thread (both libraries "
                    "compute there at 1 thread), which leaves out the time other processes hold the core; "
                    "rows at more threads always use the wall clock")
    ap.add_argument("--interleave-threads", action="store_true",
                    help="time every thread count of a case in the same rounds (wall clock), so that a slow "
                    "spell of the machine cannot fall on one thread count only: the comparison of issue 22's "
                    "'threads never hurt'")
    add_harness_args(ap)
    args = ap.parse_args()
    torch = import_torch(args.extra_site)
    libs = [om] + ([torch] if torch else [])
    groups = [g for g in ("ops", "steps") if args.only in (None, g)]
    rows = []
    print(f"torch {torch.__version__ if torch else 'not importable'}; {thread_note()}; load average {_load():.2f}")
    if args.interleave_threads:
        print(f"| case | threads | onemodel µs | torch µs | onemodel/torch | onemodel / at {args.threads[0]} thread(s) |")
        print("|---|---|---|---|---|---|")
    else:
        print("| case | threads | onemodel µs | torch µs | onemodel/torch |")
        print("|---|---|---|---|---|")
    if args.interleave_threads:
        rows = threads_interleaved(args, libs, groups, torch)
        args.threads = []
    for th in args.threads:
        for lib in libs:
            pin_threads(th, torch)
        built = {id(lib): [c for g in groups for c in (op_cases(lib) if g == "ops" else step_cases(lib))] for lib in libs}
        for i, (name, _, calls) in enumerate(built[id(om)]):
            fns = [built[id(lib)][i][1] for lib in libs]
            clock = time.thread_time if (args.clock == "thread" and th == 1) else time.perf_counter
            us = interleaved_us(fns, calls, args.rounds, clock)
            values = {"onemodel": us[0], "torch": us[1] if torch else None}
            rows.append({"case": name, "threads": th, "values": values})
            ratio = f"{us[0] / us[1]:.2f}×" if torch else "—"
            tcol = f"{us[1]:.2f}" if torch else "—"
            print(f"| {name} | {th} | {us[0]:.2f} | {tcol} | {ratio} |", flush=True)
    clock = "wall clock" if args.clock == "wall" or args.interleave_threads else "1-thread rows in thread CPU time"
    write_json(args.json_out, "calls", "µs per call", rows,
               note=f"median of {args.rounds} interleaved rounds; onemodel fast mode; " + clock
               + ("; thread counts interleaved" if args.interleave_threads else ""))


def threads_interleaved(args, libs, groups, torch):
    """Rows of every (case, thread count), the thread counts of a case timed
    in the same rounds; then onemodel's time at each count against its
    time at the first."""
    built = {id(lib): [c for g in groups for c in (op_cases(lib) if g == "ops" else step_cases(lib))] for lib in libs}
    rows = []
    for i, (name, _, calls) in enumerate(built[id(om)]):
        pairs = [(th, lib) for th in args.threads for lib in libs]
        fns = [built[id(lib)][i][1] for _, lib in pairs]
        setups = [lambda th=th: pin_threads(th, torch) for th, _ in pairs]
        us = dict(zip([(th, id(lib)) for th, lib in pairs], interleaved_us(fns, calls, args.rounds, setups=setups)))
        first = us[(args.threads[0], id(om))]
        for th in args.threads:
            mine, theirs = us[(th, id(om))], us.get((th, id(torch))) if torch else None
            rows.append({"case": name, "threads": th, "values": {"onemodel": mine, "torch": theirs}})
            ratio = f"{mine / theirs:.2f}×" if theirs else "—"
            tcol = f"{theirs:.2f}" if theirs else "—"
            print(f"| {name} | {th} | {mine:.2f} | {tcol} | {ratio} | {mine / first:.2f} |", flush=True)
    return rows


def _load() -> float:
    import os

    return os.getloadavg()[0]


if __name__ == "__main__":
    sys.exit(main())
