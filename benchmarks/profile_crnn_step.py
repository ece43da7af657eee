"""Where onemodel's CRNN training step (benchmarks/bench_crnn.py, batch 8,
32×256) spends its time, by Python-visible call: the median step time of 7
steps after 3 warm-up steps, then cProfile over 5 more steps, the 14
calls with the most time of their own (the kernels are the `_core`
functions). Not a comparison; `bench_crnn.py` and `bench_crnn_layers.py`
time torch beside it.

    python benchmarks/profile_crnn_step.py [fast|exact] [threads]
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time

import bench_crnn


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "fast"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    step = bench_crnn.run_ours(threads, mode, 5)
    for _ in range(3):
        step()
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"{mode}, {threads} thread(s): median step {statistics.median(times):.1f} ms "
          f"(range {min(times):.1f}–{max(times):.1f}); cProfile over 5 steps:")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(5):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
