"""Max pooling at the CRNN step's shapes (bench_crnn.py: 8×32×32×256 → 2×2,
8×64×16×128 → 2×2, 8×96×8×64 → (2, 1)), forward and forward + backward,
onemodel next to torch in one process, at one thread.

    python benchmarks/bench_pool.py [--rounds 5] [--repeats 7] [--extra-site DIR]

Each round times every case of both libraries in turn (interleaved), each
the median of --repeats calls in thread CPU time (`time.thread_time`: the
time other processes held the core is left out); the table gives the median
over rounds, its range, and the ratio of the medians. Not a test: nothing
asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from _timing import add_harness_args, import_torch, pin_threads

SHAPES = [((8, 32, 32, 256), (2, 2)), ((8, 64, 16, 128), (2, 2)), ((8, 96, 8, 64), (2, 1))]


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm-up: the pool's buffers, torch's allocator
    times = []
    for _ in range(repeats):
        t0 = time.thread_time()
        fn()
        times.append((time.thread_time() - t0) * 1e3)
    return statistics.median(times)


def cases(om, torch):
    """(name, onemodel callable, torch callable) per shape and direction."""
    import onemodel.functional as F

    out = []
    rng = np.random.default_rng(0)
    for shape, k in SHAPES:
        a = rng.random(shape, dtype=np.float32)
        x = om.tensor(a, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True) if torch is not None else None
        name = "x".join(map(str, shape)) + f" k{k}"

        def om_fwd(x=x, k=k):
            F.max_pool2d(x, k)

        def om_step(x=x, k=k):
            F.max_pool2d(x, k).sum().backward()
            x.grad = None

        def t_fwd(tx=tx, k=k):
            torch.nn.functional.max_pool2d(tx, k)

        def t_step(tx=tx, k=k):
            torch.nn.functional.max_pool2d(tx, k).sum().backward()
            tx.grad = None

        out.append((f"{name} forward", om_fwd, t_fwd if torch is not None else None))
        out.append((f"{name} fwd+bwd", om_step, t_step if torch is not None else None))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=7)
    add_harness_args(ap)
    args = ap.parse_args()
    torch = import_torch(args.extra_site)
    import onemodel as om

    pin_threads(1, torch)
    table = cases(om, torch)
    results = {name: ([], []) for name, _, _ in table}
    for _ in range(args.rounds):
        for name, ours, theirs in table:
            results[name][0].append(_median_ms(ours, args.repeats))
            if theirs is not None:
                results[name][1].append(_median_ms(theirs, args.repeats))
    print("| case (1 thread, ms) | onemodel | torch | onemodel / torch |")
    print("|---|---|---|---|")
    for name, (ours, theirs) in results.items():
        o = statistics.median(ours)
        cell = lambda v: f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
        if theirs:
            t = statistics.median(theirs)
            print(f"| {name} | {cell(ours)} | {cell(theirs)} | {o / t:.2f}× |")
        else:
            print(f"| {name} | {cell(ours)} | — | — |")


if __name__ == "__main__":
    main()
