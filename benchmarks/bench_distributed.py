"""Data-parallel costs on a local Ray cluster (loopback), and the model that
scales them to more machines (docs/distributed.md, "Cost").

    python benchmarks/bench_distributed.py reduce [--workers 2 3 4] [--elems 1048576] [--repeat 7]
    python benchmarks/bench_distributed.py step [--workers 1 2 3 4] [--batch 16] [--repeat 3]
    python benchmarks/bench_distributed.py memory [--per-worker 1 4 16] [--batch 16] [--width 256]
    python benchmarks/bench_distributed.py hop [--calls 100] [--repeat 5]
    python benchmarks/bench_distributed.py model --line-s T --hop-s O --update-s U [--bandwidth 1.25e9]

reduce: the whole exchange of a step as OrderedStep runs it (the driver puts
the vector, every worker copies it into its own buffer, each slice chained
through the workers in rank order, the driver reads the sums) against an
unordered ring all-reduce (reduce-scatter then all-gather, each chunk summed
in an order set by its place on the ring, as NCCL and gloo do) of the same
vector on the same actors; both end with every worker holding the result in
its memory. The compute is left out (the parts' vectors are drawn once).
Medians and ranges of --repeat interleaved runs.

step: the recognizer (default crnn-v0, lines of 32×256 px) in one process and
on W workers, interleaved: the step's wall time, the slowest worker's
compute, load and chain seconds, the driver's update, and the bytes moved.

memory: one worker's peak resident memory with a batch of --batch lines when
it may hold c lines' gradients at once (a fresh worker for each c).

hop: the cost of one actor call on this cluster (the model's o).

model: steps/s at 8, 32 and 128 machines from the measured per-line compute
time, update time and per-hop cost, on a link of --bandwidth bytes/s.

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
    "gradients", drawn once), with the ordered chain and the ring's two
    phases. ``load`` copies the step's vector into the worker's memory (a
    buffer of its own, as a model's parameters are), as the ring's
    all-gather leaves the sum in each worker's memory."""

    def __init__(self, n: int):
        self.n = n
        self.held = {}
        self.parts = []
        self.vec = None
        self.weights = None
        self.acc = None

    def load(self, flat, shared):
        if self.weights is None:
            self.weights = np.empty(self.n, np.float32)
        np.copyto(self.weights, flat)

    def compute(self, parts):
        self.parts = [i for i, _ in parts]
        for i in self.parts:
            if i not in self.held:
                self.held[i] = np.random.default_rng(i).random(self.n, dtype=np.float32)
        if self.vec is None:
            self.vec = self.held[self.parts[0]].copy()
        return [0.0] * len(parts)

    def chain(self, lo, hi, incoming):
        # As RecognizerJob.chain: the running sum in a buffer kept between
        # steps, returned as a view (Ray copies it into the object store).
        if self.acc is None:
            self.acc = np.empty(self.n, np.float32)
        acc = self.acc[lo:hi]
        gs = [self.held[i] for i in self.parts]
        np.copyto(acc, gs[0][lo:hi] if incoming is None else incoming)
        for g in gs[1 if incoming is None else 0:]:
            acc += g[lo:hi]
        return acc

    def echo(self, x):
        return x

    # ring all-reduce: chunk c is [bounds[c][0], bounds[c][1]); a returned
    # view is copied into the object store when the call returns.
    def ring_send(self, a, b):
        return self.vec[a:b]

    def ring_add(self, a, b, incoming):
        self.vec[a:b] += incoming
        return self.vec[a:b]

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

                def ring():
                    ring_allreduce(ray, cl.actors, args.elems)

                ordered()  # draws the parts' vectors (kept: later steps only exchange)
                ring()
                times = {"ordered": [], "ring": []}
                for _ in range(args.repeat):
                    for name, fn in (("ordered", ordered), ("ring", ring)):
                        t0 = time.perf_counter()
                        fn()
                        times[name].append(time.perf_counter() - t0)
                n_s = len(runner.last_slices)
            mb = 4 * args.elems / 2**20
            o, r = statistics.median(times["ordered"]), statistics.median(times["ring"])
            rows.append(dict(workers=w, mib=mb, slices=n_s, ordered_ms=1e3 * o,
                             ordered_range=[1e3 * min(times["ordered"]), 1e3 * max(times["ordered"])],
                             ring_ms=1e3 * r, ring_range=[1e3 * min(times["ring"]), 1e3 * max(times["ring"])],
                             ratio=o / r, ratios=[a / b for a, b in zip(times["ordered"], times["ring"])],
                             ordered_calls=w + w * n_s, ring_calls=w * (2 * w - 1)))
    finally:
        disconnect()
    print("| W | vector | slices | ordered step exchange (ms) | ring all-reduce (ms) | ordered / ring (median; range of pairs) "
          "| actor calls, ordered / ring |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workers']} | {r['mib']:.1f} MiB | {r['slices']} "
              f"| {r['ordered_ms']:.1f} ({r['ordered_range'][0]:.1f}–{r['ordered_range'][1]:.1f}) "
              f"| {r['ring_ms']:.1f} ({r['ring_range'][0]:.1f}–{r['ring_range'][1]:.1f}) "
              f"| {r['ratio']:.2f} ({min(r['ratios']):.2f}–{max(r['ratios']):.2f}) "
              f"| {r['ordered_calls']} / {r['ring_calls']} |")
    print(json.dumps(rows))


def _recognizer(arch):
    from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

    sizes = {"crnn-v0": dict(), "small": dict(channels=(16, 32, 48), hidden=48, layers=1)}[arch]
    return Trainer(CrnnV0(CrnnV0Config(charset="0123456789 ", **sizes), seed=0), lr=1e-3)


def _lines(batch, seed=0, width=256):
    rng = np.random.default_rng(seed)
    imgs = [rng.random((32, width)).astype(np.float32) for _ in range(batch)]
    texts = ["".join(rng.choice(list("0123456789"), int(rng.integers(8, 20)))) for _ in range(batch)]
    return imgs, texts


def _timed_step(dt, imgs, texts):
    """DistributedTrainer.step's body, timed: (wall, driver update) seconds."""
    t0 = time.perf_counter()
    _, norm, lines = dt._compute(imgs, texts)
    t1 = time.perf_counter()
    dt.trainer._core.finish_step(dt.trainer.model._core, norm)
    t2 = time.perf_counter()
    dt._report(lines)
    return t2 - t0, t2 - t1


def cmd_step(args):
    """The one-process Trainer.step and W = 1.. workers, interleaved: every
    repeat runs one step of each, so load changes hit every column alike."""
    from onemodel import compute
    from onemodel.distributed import DistributedTrainer, connect, disconnect

    compute.set_threads(1)  # the one-process column and the driver: 1 thread, as each worker
    imgs, texts = _lines(args.batch)
    connect(num_cpus=sum(args.workers))
    one = _recognizer(args.arch)
    one.step(imgs, texts)  # warm-up: the line buffers
    dts = {}
    rec = {w: {"wall": [], "update": [], "load": [], "compute": [], "chain": []} for w in args.workers}
    rec[0] = {"wall": []}
    try:
        for w in args.workers:
            dts[w] = DistributedTrainer(_recognizer(args.arch), workers=w, threads=1)
            dts[w].step(imgs, texts)
            dts[w].cluster.ray.get([a.take_seconds.remote() for a in dts[w].cluster.actors])
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            one.step(imgs, texts)
            rec[0]["wall"].append(time.perf_counter() - t0)
            for w, dt in dts.items():
                wall, upd = _timed_step(dt, imgs, texts)
                secs = dt.cluster.ray.get([a.take_seconds.remote() for a in dt.cluster.actors])
                r = rec[w]
                r["wall"].append(wall)
                r["update"].append(upd)
                for k in ("load", "compute", "chain"):
                    r[k].append(max(x[k] for x in secs))
        p_w = len(plan_concat(dts[args.workers[0]]))
        p_g = dts[args.workers[0]].grad_len
    finally:
        for dt in dts.values():
            dt.close()
        disconnect()
    med = statistics.median
    line_bytes = 4 * imgs[0].size
    print(f"recognizer {args.arch}, batch {args.batch} lines of 32×256 px, 1 thread per worker, {args.repeat} "
          f"interleaved steps; weights {4 * p_w / 2**20:.2f} MiB, gradient {4 * p_g / 2**20:.2f} MiB, "
          f"a line {line_bytes / 2**10:.0f} KiB")
    print("| W | step (s) | max worker compute (s) | max load (s) | max chain (s) | driver update (s) | "
          "rest: communication and calls (s) | bytes on the loopback per step |")
    print("|---|---|---|---|---|---|---|---|")
    o = rec[0]["wall"]
    print(f"| one process | {med(o):.3f} ({min(o):.3f}–{max(o):.3f}) | | | | | | 0 |")
    rows = []
    for w in args.workers:
        r = rec[w]
        rest = [a - b - c - d for a, b, c, d in zip(r["wall"], r["compute"], r["load"], r["update"])]
        # The driver puts the weights once (read in place by every worker on
        # this machine); each chain link and the last worker → driver carry
        # the gradient once; each worker receives its own lines.
        moved = 4 * p_w + w * 4 * p_g + args.batch * line_bytes
        row = {k: med(v) for k, v in r.items()}
        row.update(workers=w, wall_range=[min(r["wall"]), max(r["wall"])], rest_s=med(rest),
                   rest_range=[min(rest), max(rest)], bytes=moved)
        rows.append(row)
        print(f"| {w} | {row['wall']:.3f} ({min(r['wall']):.3f}–{max(r['wall']):.3f}) | {row['compute']:.3f} "
              f"| {row['load']:.4f} | {row['chain']:.4f} | {row['update']:.4f} "
              f"| {row['rest_s']:.3f} ({min(rest):.3f}–{max(rest):.3f}) | {moved / 2**20:.1f} MiB |")
    print(json.dumps(dict(one_process=o, rows=rows, raw={str(k): v for k, v in rec.items()})))


def plan_concat(dt):
    from onemodel.distributed import plan

    return plan.concat(dt.trainer.model._core.params())


def cmd_memory(args):
    """One worker, a batch of --batch lines, at most c lines held at once:
    the worker's peak resident memory (VmHWM) after a step, each c on a
    fresh worker process."""
    from onemodel.distributed import DistributedTrainer, connect, disconnect

    imgs, texts = _lines(args.batch, width=args.width)
    connect(num_cpus=1)
    rows = []
    try:
        for per in args.per_worker:
            with DistributedTrainer(_recognizer(args.arch), workers=1, threads=1, lines_per_worker=per) as dt:
                ray = dt.cluster.ray
                before = ray.get(dt.cluster.actors[0].memory.remote())
                dt.step(imgs, texts)
                after = ray.get(dt.cluster.actors[0].memory.remote())
                rows.append(dict(per=per, before=before, after=after, grad_bytes=4 * dt.grad_len))
    finally:
        disconnect()
    print(f"recognizer {args.arch}, batch {args.batch} lines of 32×{args.width} px, one worker, 1 thread; "
          f"a line's gradient {rows[0]['grad_bytes'] / 2**20:.2f} MiB")
    print("| lines held at once c | rounds | peak RSS before the step (MiB) | peak RSS after (MiB) | "
          "growth over c = {} (MiB) | per extra held line (MiB) |".format(rows[0]["per"]))
    print("|---|---|---|---|---|---|")
    for r in rows:
        grow = (r["after"] - rows[0]["after"]) / 2**20
        extra = r["per"] - rows[0]["per"]
        print(f"| {r['per']} | {-(-args.batch // r['per'])} | {r['before'] / 2**20:.1f} | {r['after'] / 2**20:.1f} "
              f"| {grow:.1f} | {grow / extra if extra else float('nan'):.2f} |")
    print(json.dumps(rows))


def cmd_hop(args):
    """The per-call cost o of one hop: a chain of --calls calls alternating
    between two workers, each passing a 256-byte array on (small objects
    travel inline with the call)."""
    from onemodel.distributed import Cluster, connect, disconnect

    ray = __import__("ray")
    connect(num_cpus=2)
    per = []
    try:
        with Cluster(_VectorFactory(64), 2, threads=1) as cl:
            x = np.zeros(64, np.float32)
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                ref = ray.put(x)
                for k in range(args.calls):
                    ref = cl.actors[k % 2].job_call.remote("echo", ref)
                ray.get(ref)
                per.append((time.perf_counter() - t0) / args.calls)
    finally:
        disconnect()
    print(f"per hop: median {1e3 * statistics.median(per):.2f} ms (range {1e3 * min(per):.2f}–{1e3 * max(per):.2f}) "
          f"over {args.repeat} chains of {args.calls} calls")
    print(json.dumps(per))


def step_model(w, line_s, lines, update_s, hop_s, elems, bandwidth, slices):
    """(compute, communication) seconds of one step on ``w`` machines: the
    weights relayed driver → machine 1 → … → machine w and the gradient
    chained machine 1 → … → machine w → driver, each a pipeline of
    ``slices`` slices over w hops (plan.pipeline_seconds)."""
    from onemodel.distributed import plan

    comm = 2 * plan.pipeline_seconds(elems, w, slices, hop_s, bandwidth)
    return lines * line_s + update_s, comm


def ring_seconds(w, hop_s, elems, bandwidth):
    """A ring all-reduce of the same vector: 2(W − 1) hops of P/W each."""
    return 2 * (w - 1) * (hop_s + 4 * elems / (w * bandwidth))


def cmd_model(args):
    """t(W) = L·t_line + t_update + 2·(W + n_s − 1)·(o + 4P/(n_s·BW))."""
    from onemodel.distributed import plan

    p = args.elems
    print(f"P = {p} elements ({4 * p / 2**20:.2f} MiB), t_line {args.line_s * 1e3:.1f} ms, t_update "
          f"{args.update_s * 1e3:.1f} ms, o {args.hop_s * 1e3:.2f} ms, BW {args.bandwidth * 8 / 1e9:.0f} Gb/s, "
          f"L = {args.lines_per_worker} lines per machine")
    print("| machines | batch | slices n_s | compute + update (s) | ordered communication (s) | "
          "ring all-reduce (s) | ordered / ring | steps/s | lines/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w in (8, 32, 128):
        n = plan.slice_count(p, w, args.hop_s, args.bandwidth)
        comp, comm = step_model(w, args.line_s, args.lines_per_worker, args.update_s, args.hop_s, p,
                                args.bandwidth, n)
        ring = ring_seconds(w, args.hop_s, p, args.bandwidth)
        t = comp + comm
        print(f"| {w} | {w * args.lines_per_worker} | {n} | {comp:.3f} | {comm:.3f} | {ring:.3f} | {comm / ring:.2f} "
              f"| {1 / t:.2f} | {w * args.lines_per_worker / t:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reduce")
    r.add_argument("--workers", type=int, nargs="+", default=[2, 3, 4])
    r.add_argument("--elems", type=int, default=1 << 20)
    r.add_argument("--slice-elems", type=int, default=None, help="default: the step's own choice (plan.slice_count)")
    r.add_argument("--repeat", type=int, default=7)
    s = sub.add_parser("step")
    s.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3, 4])
    s.add_argument("--batch", type=int, default=16)
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--arch", choices=["crnn-v0", "small"], default="crnn-v0")
    m = sub.add_parser("memory")
    m.add_argument("--per-worker", type=int, nargs="+", default=[1, 4, 16])
    m.add_argument("--batch", type=int, default=16)
    m.add_argument("--width", type=int, default=256)
    m.add_argument("--arch", choices=["crnn-v0", "small"], default="crnn-v0")
    h = sub.add_parser("hop")
    h.add_argument("--calls", type=int, default=100)
    h.add_argument("--repeat", type=int, default=5)
    mo = sub.add_parser("model")
    mo.add_argument("--line-s", type=float, required=True, help="compute seconds per line on one worker")
    mo.add_argument("--hop-s", type=float, required=True, help="per-hop overhead of one slice call (s)")
    mo.add_argument("--update-s", type=float, default=0.0, help="the driver's update (clip + AdamW) seconds")
    mo.add_argument("--elems", type=int, default=1_012_203)
    mo.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes/s of one link (10 Gb/s)")
    mo.add_argument("--lines-per-worker", type=int, default=8)
    args = ap.parse_args()
    {"reduce": cmd_reduce, "step": cmd_step, "memory": cmd_memory, "hop": cmd_hop, "model": cmd_model}[args.cmd](args)


if __name__ == "__main__":
    main()
