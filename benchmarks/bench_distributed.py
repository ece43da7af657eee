"""Data-parallel costs on a local Ray cluster (loopback), and the model that
scales them to more machines (docs/distributed.md, "Cost").

    python benchmarks/bench_distributed.py reduce [--workers 2 3 4] [--elems 1048576] [--repeat 7]
    python benchmarks/bench_distributed.py step [--workers 1 2 3 4] [--batch 16] [--repeat 3]
    python benchmarks/bench_distributed.py memory [--per-worker 1 4 16]
    python benchmarks/bench_distributed.py model --line-s T --hop-s O [--bandwidth 1.25e9]

reduce: the ordered reduction as a step runs it (the vector broadcast down
the chain of workers, each worker's part added in rank order slice by slice,
the sums gathered by the driver: OrderedStep) against an unordered ring
all-reduce (reduce-scatter then all-gather, each chunk summed in an order
set by its place on the ring, as NCCL and gloo do) of the same vector on the
same actors; both end with every participant able to read the sum. Medians
and ranges of --repeat interleaved runs.

step: the recognizer (default crnn-v0, lines of 256 px) on W workers: the
step's wall time, each worker's compute and chain seconds, and the bytes
each link carries.

memory: one worker's peak resident memory with a batch of 16 lines when it
may hold 1, 4 or 16 lines' gradients at once.

model: steps/s at 8, 32 and 128 machines from the measured per-line compute
time and per-hop overhead, on a link of --bandwidth bytes/s.

One local Ray cluster (127.0.0.1) per invocation; a shared 2-core machine
slows everything unevenly, hence medians of interleaved repeats. Not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/python")  # a source checkout without install


class VectorJob:
    """A worker job holding one random vector per part (the benchmark's
    "gradients"), with the ordered chain and the ring's two phases."""

    def __init__(self, n: int):
        self.n = n
        self.held = []
        self.vec = None

    def load(self, flat, shared):
        pass

    def compute(self, parts):
        self.held = [np.random.default_rng(i).random(self.n, dtype=np.float32) for i, _ in parts]
        self.vec = self.held[0].copy()
        return [0.0] * len(parts)

    def chain(self, lo, hi, incoming):
        acc = self.held[0][lo:hi].copy() if incoming is None else np.array(incoming)
        for g in self.held[1 if incoming is None else 0:]:
            acc += g[lo:hi]
        return acc

    # ring all-reduce: chunk c is [bounds[c][0], bounds[c][1])
    def ring_send(self, a, b):
        return self.vec[a:b].copy()

    def ring_add(self, a, b, incoming):
        self.vec[a:b] += incoming
        return self.vec[a:b].copy()

    def ring_set(self, a, b, incoming):
        self.vec[a:b] = incoming
        return incoming


class _VectorFactory:
    def __init__(self, n):
        self.n = n

    def __call__(self):
        return VectorJob(self.n)


def ring_allreduce(ray, actors, n):
    """Reduce-scatter then all-gather over the ring 0 → 1 → … → W−1 → 0."""
    from onemodel.distributed.plan import even_bounds

    w = len(actors)
    chunks = even_bounds(n, w)
    out = [actors[r].job_call.remote("ring_send", *chunks[r]) for r in range(w)]
    # out[r]: what worker r sends next. Worker r+1 adds the partial of chunk
    # (r - k) it receives; after W-1 steps it holds that chunk's sum.
    for k in range(w - 1):
        out = [actors[r].job_call.remote("ring_add", *chunks[(r - 1 - k) % w], out[(r - 1) % w]) for r in range(w)]
    for k in range(w - 1):  # the finished chunks travel once more round the ring
        out = [actors[r].job_call.remote("ring_set", *chunks[(r - k) % w], out[(r - 1) % w]) for r in range(w)]
    ray.get(out)


def cmd_reduce(args):
    from onemodel.distributed import Cluster, OrderedStep, connect, disconnect

    ray = __import__("ray")
    connect(num_cpus=max(args.workers) * 1)
    rows = []
    try:
        for w in args.workers:
            with Cluster(_VectorFactory(args.elems), w, threads=1) as cl:
                runner = OrderedStep(cl, slice_elems=args.slice_elems)
                weights = np.zeros(args.elems, np.float32)
                parts = [None] * w

                def ordered():
                    runner.run(weights, None, parts, args.elems, "fast")

                ordered()  # computes the parts; the ring reuses them (compute holds them)

                def ring():
                    ring_allreduce(ray, cl.actors, args.elems)

                times = {"ordered": [], "ring": []}
                for _ in range(args.repeat):
                    for name, fn in (("ordered", ordered), ("ring", ring)):
                        t0 = time.perf_counter()
                        fn()
                        times[name].append(time.perf_counter() - t0)
            mb = 4 * args.elems / 2**20
            o, r = statistics.median(times["ordered"]), statistics.median(times["ring"])
            rows.append(dict(workers=w, mib=mb, ordered_ms=1e3 * o, ordered_range=[1e3 * min(times["ordered"]), 1e3 * max(times["ordered"])],
                             ring_ms=1e3 * r, ring_range=[1e3 * min(times["ring"]), 1e3 * max(times["ring"])], ratio=o / r,
                             ordered_bytes_per_worker=2 * 4 * args.elems, ring_bytes_per_worker=2 * 4 * args.elems * (w - 1) / w))
    finally:
        disconnect()
    print("| W | vector | ordered (ms) | ring all-reduce (ms) | ordered / ring | bytes sent per worker, ordered / ring |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workers']} | {r['mib']:.1f} MiB | {r['ordered_ms']:.1f} ({r['ordered_range'][0]:.1f}–{r['ordered_range'][1]:.1f}) "
              f"| {r['ring_ms']:.1f} ({r['ring_range'][0]:.1f}–{r['ring_range'][1]:.1f}) | {r['ratio']:.2f} "
              f"| {r['ordered_bytes_per_worker'] / 2**20:.1f} / {r['ring_bytes_per_worker'] / 2**20:.1f} MiB |")
    print(json.dumps(rows))


def _recognizer(arch):
    from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

    sizes = {"crnn-v0": dict(), "small": dict(channels=(16, 32, 48), hidden=48, layers=1)}[arch]
    return Trainer(CrnnV0(CrnnV0Config(charset="0123456789 ", **sizes), seed=0), lr=1e-3)


def _lines(batch, seed=0):
    rng = np.random.default_rng(seed)
    imgs = [rng.random((32, 256)).astype(np.float32) for _ in range(batch)]
    texts = ["".join(rng.choice(list("0123456789"), int(rng.integers(8, 20)))) for _ in range(batch)]
    return imgs, texts


def cmd_step(args):
    from onemodel.distributed import DistributedTrainer, connect, disconnect

    imgs, texts = _lines(args.batch)
    connect(num_cpus=max(args.workers))
    rows = []
    try:
        for w in args.workers:
            with DistributedTrainer(_recognizer(args.arch), workers=w, threads=1) as dt:
                dt.step(imgs, texts)  # warm-up (first compute allocates the line buffers)
                for a in dt.cluster.actors:
                    a.take_seconds.remote()
                walls, comp, chain = [], [], []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    dt.step(imgs, texts)
                    walls.append(time.perf_counter() - t0)
                    secs = dt.cluster.ray.get([a.take_seconds.remote() for a in dt.cluster.actors])
                    comp.append(max(s["compute"] for s in secs))
                    chain.append(max(s["chain"] for s in secs))
                p_nat = sum(a.size for a in dt.trainer.model.state_dict().values())
                p_rt = dt.grad_len
            wall, c = statistics.median(walls), statistics.median(comp)
            rows.append(dict(workers=w, wall_s=wall, wall_range=[min(walls), max(walls)], compute_s=c,
                             chain_s=statistics.median(chain), other_s=wall - c, weight_bytes=4 * p_nat,
                             grad_bytes=4 * p_rt, batch_bytes=sum(4 * im.size for im in imgs)))
    finally:
        disconnect()
    print(f"recognizer {args.arch}, batch {args.batch} lines of 256 px, 1 thread per worker, {args.repeat} steps")
    print("| W | step (s) | max compute (s) | max chain (s) | step − compute (s) | bytes per link: weights + gradients |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workers']} | {r['wall_s']:.3f} ({r['wall_range'][0]:.3f}–{r['wall_range'][1]:.3f}) | {r['compute_s']:.3f} "
              f"| {r['chain_s']:.4f} | {r['other_s']:.3f} | {r['weight_bytes'] / 2**20:.2f} + {r['grad_bytes'] / 2**20:.2f} MiB |")
    print(json.dumps(rows))


def cmd_memory(args):
    from onemodel.distributed import DistributedTrainer, connect, disconnect

    imgs, texts = _lines(16)
    connect(num_cpus=1)
    try:
        for per in args.per_worker:
            with DistributedTrainer(_recognizer(args.arch), workers=1, threads=1, lines_per_worker=per) as dt:
                before = dt.cluster.ray.get(dt.cluster.actors[0].memory.remote())
                dt.step(imgs, texts)
                after = dt.cluster.ray.get(dt.cluster.actors[0].memory.remote())
                print(f"lines held at once {per:3d}: worker peak RSS {before / 2**20:7.1f} MiB before the step, "
                      f"{after / 2**20:7.1f} MiB after (gradient {4 * dt.grad_len / 2**20:.2f} MiB a line)")
    finally:
        disconnect()


def cmd_model(args):
    """t(W) = L·t_line + 2·(W + n_s − 1)·(o + 4P/(n_s·BW)), with n_s chosen
    to minimize it: lines per worker L, the per-hop overhead o, P elements."""
    p = args.elems
    print(f"P = {p} elements ({4 * p / 2**20:.1f} MiB), line {args.line_s * 1e3:.1f} ms, hop overhead "
          f"{args.hop_s * 1e3:.2f} ms, link {args.bandwidth * 8 / 1e9:.0f} Gb/s, {args.lines_per_worker} lines per worker")
    print("| machines | batch | best slices | compute (s) | communication (s) | steps/s | lines/s |")
    print("|---|---|---|---|---|---|---|")
    for w in (8, 32, 128):
        comp = args.lines_per_worker * args.line_s
        best = min((2 * (w + s - 1) * (args.hop_s + 4 * p / (s * args.bandwidth)), s) for s in range(1, 4097))
        t = comp + best[0]
        print(f"| {w} | {w * args.lines_per_worker} | {best[1]} | {comp:.3f} | {best[0]:.3f} | {1 / t:.2f} "
              f"| {w * args.lines_per_worker / t:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reduce")
    r.add_argument("--workers", type=int, nargs="+", default=[2, 3, 4])
    r.add_argument("--elems", type=int, default=1 << 20)
    r.add_argument("--slice-elems", type=int, default=1 << 18)
    r.add_argument("--repeat", type=int, default=7)
    s = sub.add_parser("step")
    s.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3, 4])
    s.add_argument("--batch", type=int, default=16)
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--arch", choices=["crnn-v0", "small"], default="crnn-v0")
    m = sub.add_parser("memory")
    m.add_argument("--per-worker", type=int, nargs="+", default=[1, 4, 16])
    m.add_argument("--arch", choices=["crnn-v0", "small"], default="crnn-v0")
    mo = sub.add_parser("model")
    mo.add_argument("--line-s", type=float, required=True, help="compute seconds per line on one worker")
    mo.add_argument("--hop-s", type=float, required=True, help="per-hop overhead of one slice call (s)")
    mo.add_argument("--elems", type=int, default=1_012_203)
    mo.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s of one link (10 Gb/s)")
    mo.add_argument("--lines-per-worker", type=int, default=8)
    args = ap.parse_args()
    {"reduce": cmd_reduce, "step": cmd_step, "memory": cmd_memory, "model": cmd_model}[args.cmd](args)


if __name__ == "__main__":
    main()
