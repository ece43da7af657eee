"""Timing and peak-memory helpers shared by the benchmarks (not a
benchmark itself)."""

from __future__ import annotations

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


def interleaved_ms(fns, repeats: int, pause: float = 0.0) -> list:
    """Each function's timings in ms, one warm-up call each, then `repeats`
    rounds in which the functions are timed in turn, so that a slow spell of
    a shared machine falls on all of them rather than on one.

    `pause` seconds of untimed sleep follow each timing: torch's OpenMP
    workers spin for a while after a parallel region, and on a 2-core
    machine they slow whatever is timed next (measured: onemodel's 2-thread
    conv step 16.7 ms timed alone, 22.1 ms right after torch's)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for t, fn in zip(times, fns):
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e3)
            if pause:
                time.sleep(pause)
    return times
