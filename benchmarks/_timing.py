"""Timing and peak-memory helpers shared by the benchmarks (not a
benchmark itself)."""

from __future__ import annotations

import itertools
import math
import resource
import time


def peak_rss_mib() -> float:
    """This process's peak resident memory in MiB. VmHWM belongs to the
    process's own address space; ru_maxrss (the fallback off Linux) would
    also count the parent's memory at fork time, which Linux carries across
    exec — e.g. torch's import in the parent."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def round_order(items, r: int) -> list:
    """`items` in round `r`'s order: the r-th of their orderings (mod n!),
    so that over n! rounds each item is timed first, and right after each
    other item, equally often. A fixed order, or one rotated each round,
    always times an item right after the same other one and gives it that
    one's traces in the caches and the allocator (measured 2026-12-08 in
    bench_crnn_layers.py: ReLU + max pooling timed right after torch in
    every round took 8.4–8.9 ms in fast mode and 6.5–7.1 ms in exact;
    alternated on their own, 6.2 ms both)."""
    items = list(items)
    k = r % math.factorial(len(items))
    return list(next(itertools.islice(itertools.permutations(items), k, None)))


def interleaved_ms(fns, repeats: int, pause: float = 0.0, clock=time.perf_counter) -> list:
    """Each function's timings in ms, one warm-up call each, then `repeats`
    rounds in which the functions are timed in turn (in each round's order,
    `round_order`), so that a slow spell of a shared machine falls on all
    of them rather than on one.

    `pause` seconds of untimed sleep follow each timing: torch's OpenMP
    workers spin for a while after a parallel region, and on a 2-core
    machine they slow whatever is timed next (measured: onemodel's 2-thread
    conv step 16.7 ms timed alone, 22.1 ms right after torch's)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for r in range(repeats):
        for t, fn in round_order(zip(times, fns), r):
            t0 = clock()
            fn()
            t.append((clock() - t0) * 1e3)
            if pause:
                time.sleep(pause)
    return times


# ---------------------------------------------------------------------------
# What benchmarks/run_all.py needs of every comparison: torch found the same
# way, every library's threads pinned, results as JSON.
# ---------------------------------------------------------------------------

EXTRA_SITE_ENV = "ONEMODEL_BENCH_EXTRA_SITE"


def add_harness_args(ap) -> None:
    """--extra-site and --json, the options run_all.py passes to each benchmark."""
    ap.add_argument("--extra-site", default=None,
                    help="a site-packages directory appended to sys.path when torch is not importable "
                    "(e.g. /work/venvs/torch/lib/python3.11/site-packages); subprocesses inherit it")
    ap.add_argument("--json", dest="json_out", default=None, metavar="FILE",
                    help="also write the results as JSON to FILE (benchmarks/run_all.py reads it)")


def import_torch(extra_site: str | None = None):
    """torch, or None when it is not importable. With `extra_site` (or the
    environment variable a parent benchmark set) that directory is appended
    to sys.path (after this environment's own packages, so numpy and
    onemodel stay this environment's) and exported to child processes."""
    import os
    import sys

    site = extra_site or os.environ.get(EXTRA_SITE_ENV)
    try:
        import torch

        return torch
    except ImportError:
        if not site:
            return None
    os.environ[EXTRA_SITE_ENV] = site
    if site not in sys.path:
        sys.path.append(site)
    try:
        import torch

        return torch
    except ImportError:
        return None


_blas_limit = None


def pin_threads(n: int, torch=None) -> None:
    """Run every library at `n` threads: onemodel's pool, torch's intra-op
    threads, and numpy's BLAS (threadpoolctl; when it is missing numpy keeps
    what OPENBLAS_NUM_THREADS said at start-up, and thread_note() says so)."""
    global _blas_limit
    import onemodel as om

    om.compute.set_threads(n)
    if torch is not None:
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    _blas_limit = threadpool_limits(limits=n, user_api="blas")


def thread_note() -> str:
    """How numpy's BLAS threads are pinned (for a benchmark's header)."""
    try:
        import threadpoolctl  # noqa: F401

        return "numpy BLAS threads pinned with threadpoolctl"
    except ImportError:
        import os

        return f"threadpoolctl missing: numpy BLAS threads from OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"


def write_json(path: str | None, bench: str, unit: str, rows: list, *, higher_is_better: bool = False,
               reference: str = "torch", note: str = "") -> None:
    """Write one benchmark's results for run_all.py: `rows` is a list of
    {"case": str, "threads": int, "values": {column: number or None}}; the
    ratio columns divide every other column by `reference`."""
    if not path:
        return
    import json

    with open(path, "w") as f:
        json.dump({"bench": bench, "unit": unit, "higher_is_better": higher_is_better, "reference": reference,
                   "note": note, "rows": rows}, f)


# ---------------------------------------------------------------------------
# The driver of a benchmark that runs each configuration in a fresh process
# (so that one configuration's peak memory is not mixed with another's).
# ---------------------------------------------------------------------------

def per_process_runs(script: str, child) -> tuple | None:
    """Parse --repeats, --threads, --rounds, --child and the harness's
    options. Called as a child (`--child FRAMEWORK THREADS MODE`): run
    `child(framework, threads, mode, repeats)`, which prints one JSON line,
    and return None. Otherwise run `script` once per configuration —
    onemodel fast, onemodel exact and torch when it is importable — in
    turn (each round in its `round_order`), `--rounds` times per thread
    count, and return `(args, runs,
    configs, have_torch)` with `runs[(threads, framework, mode)]` the list
    of the children's JSON results."""
    import argparse
    import json
    import subprocess
    import sys

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--child", nargs=3, metavar=("FRAMEWORK", "THREADS", "MODE"))
    add_harness_args(ap)
    args = ap.parse_args()
    if args.child:
        fw, th, mode = args.child
        child(fw, int(th), mode, args.repeats)
        return None
    have_torch = import_torch(args.extra_site) is not None  # (children find it the same way)

    def measure(fw, th, mode):
        cmd = [sys.executable, script, "--repeats", str(args.repeats), "--child", fw, str(th), mode]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    configs = [("onemodel", "fast"), ("onemodel", "exact")]
    if have_torch:
        configs.append(("torch", "fast"))
    runs = {}
    for th in args.threads:
        for r in range(args.rounds):
            for fw, mode in round_order(configs, r):
                runs.setdefault((th, fw, mode), []).append(measure(fw, th, mode))
    return args, runs, configs, have_torch
