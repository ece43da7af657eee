"""Training throughput of the default crnn-v0 (height 32, lines 256 px wide,
batch 8): onemodel's bit-identical trainer at 1 and 2 threads, side by side
with the same model in PyTorch (padded batch, CTCLoss, clip_grad_norm_,
AdamW foreach=False) when torch is importable; peak memory of each.

    python benchmarks/bench_recognizer.py [--steps 10] [--threads 1 2] [--rounds 1]
        [--widths MIN MAX] [--extra-site DIR]

--widths MIN MAX trains on lines of mixed widths instead (each drawn uniformly
from MIN..MAX px, e.g. 130 340 as a real line set; four different batches
taken in turn): onemodel runs each line at its own width; torch pads each
batch to its widest line (zeros on the right), runs the LSTM over the padded
steps and gives CTC each line's own length (a plain padded batch, no packed
sequence: the reverse direction starts on the padding). --extra-site adds a
directory (e.g. torch's venv site-packages) to the workers' sys.path.

Each configuration runs in its own subprocess so that its peak resident
memory (VmHWM) is its own. With --rounds R the configurations run R times
in turn (onemodel and torch alternating, so a slow spell of a shared machine
falls on both) and the table gives each one's median lines/s, its range, and
the ratio of the medians. Not a timed test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _timing import add_harness_args, import_torch, peak_rss_mib, pin_threads, write_json

import numpy as np

WIDTH, BATCH, MIXED_BATCHES = 256, 8, 4


def batch(rng, classes, widths=None):
    ws = [WIDTH] * BATCH if widths is None else [int(rng.integers(widths[0], widths[1] + 1)) for _ in range(BATCH)]
    imgs = [rng.random((32, w)).astype(np.float32) for w in ws]
    labels = [list(rng.integers(1, classes, size=int(rng.integers(8, 20)))) for _ in range(BATCH)]
    return imgs, labels


def batches(classes, widths):
    rng = np.random.default_rng(0)
    return [batch(rng, classes, widths) for _ in range(1 if widths is None else MIXED_BATCHES)]


def run_onemodel(threads, steps, widths):
    import onemodel as om
    from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

    pin_threads(threads)
    model = CrnnV0(CrnnV0Config(), seed=0)
    tr = Trainer(model)
    data = batches(model.config.classes, widths)
    for imgs, labels in data:
        tr.step(imgs, labels)  # warm-up: buffers sized once
    t, c = time.perf_counter(), time.process_time()
    for i in range(steps):
        tr.step(*data[i % len(data)])
    return steps * BATCH / (time.perf_counter() - t), steps * BATCH / (time.process_time() - c)


def run_torch(threads, steps, widths):
    torch = import_torch()
    import torch.nn.functional as F

    from onemodel.recognizer import CrnnV0Config

    pin_threads(threads, torch)
    cfg = CrnnV0Config()

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            chans = (1,) + cfg.channels
            self.convs = torch.nn.ModuleList(torch.nn.Conv2d(chans[i], chans[i + 1], 3, padding=1) for i in range(3))
            feat = (cfg.height // 8) * cfg.channels[-1]
            self.lstm = torch.nn.LSTM(feat, cfg.hidden, num_layers=cfg.layers, bidirectional=True)
            self.cls = torch.nn.Linear(2 * cfg.hidden, cfg.classes)

        def forward(self, x):  # x [B, 1, H, W]
            for conv, pool in zip(self.convs, cfg.pools):
                x = F.max_pool2d(F.relu(conv(x)), pool)
            b, c, h, w = x.shape
            x = x.permute(3, 0, 2, 1).reshape(w, b, h * c)  # [T, B, F]
            return self.cls(self.lstm(x)[0])  # [T, B, K]

    torch.manual_seed(0)
    net = Net()
    decay = [p for n, p in net.named_parameters() if not n.endswith("bias") and "bias" not in n]
    nodecay = [p for n, p in net.named_parameters() if "bias" in n]
    opt = torch.optim.AdamW([{"params": decay}, {"params": nodecay, "weight_decay": 0.0}], lr=1e-3, weight_decay=0.01,
                            foreach=False)
    ctc = torch.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    data = []
    for imgs, labels in batches(cfg.classes, widths):
        wmax = max(im.shape[1] for im in imgs)
        padded = np.zeros((BATCH, 1, cfg.height, wmax), np.float32)
        for i, im in enumerate(imgs):
            padded[i, 0, :, :im.shape[1]] = im
        steps_of = [im.shape[1] // 4 for im in imgs]  # pools (2,2), (2,2), (2,1)
        data.append((torch.tensor(padded), torch.tensor([c for lab in labels for c in lab]),
                     torch.tensor([len(lab) for lab in labels]), torch.tensor(steps_of)))

    def step(x, targets, tlen, ilen):
        opt.zero_grad()
        z = net(x)
        loss = ctc(F.log_softmax(z, dim=2), targets, ilen, tlen) / BATCH
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0, foreach=False)
        opt.step()

    for d in data:
        step(*d)
    t, c = time.perf_counter(), time.process_time()
    for i in range(steps):
        step(*data[i % len(data)])
    return steps * BATCH / (time.perf_counter() - t), steps * BATCH / (time.process_time() - c)


def worker(args):
    if args.extra_site:
        sys.path.append(args.extra_site)
    fn = run_onemodel if args.worker == "onemodel" else run_torch
    lps, lpc = fn(args.worker_threads, args.steps, args.widths)
    peak = peak_rss_mib()
    print(json.dumps({"lines_per_s": lps, "lines_per_cpu_s": lpc, "peak_mib": peak}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--worker", choices=["onemodel", "torch"])
    ap.add_argument("--worker-threads", type=int, default=1)
    ap.add_argument("--widths", type=int, nargs=2, metavar=("MIN", "MAX"), default=None)
    add_harness_args(ap)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if import_torch(args.extra_site) is not None:  # (workers find it the same way)
        impls = ["onemodel", "torch"]
    else:
        impls = ["onemodel"]
        print("torch is not importable: onemodel only")
    runs = {}
    for rnd in range(args.rounds):
        for threads in args.threads:
            for impl in impls:
                cmd = [sys.executable, __file__, "--worker", impl, "--worker-threads", str(threads),
                       "--steps", str(args.steps)]
                if args.widths:
                    cmd += ["--widths", *map(str, args.widths)]
                if args.extra_site:
                    cmd += ["--extra-site", args.extra_site]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                runs.setdefault((impl, threads), []).append(r)
                print(f"round {rnd + 1}: {impl:9s} threads {threads}: {r['lines_per_s']:7.1f} lines/s  "
                      f"{r['lines_per_cpu_s']:7.1f} lines/CPU-s  peak {r['peak_mib']:7.0f} MiB", flush=True)
    med = {key: float(np.median([r["lines_per_s"] for r in rs])) for key, rs in runs.items()}
    print(f"\n| implementation | threads | lines/s (median of {args.rounds}) | range | lines per CPU-second (median) "
          "| peak RSS (MiB) | onemodel / torch |\n| --- | --- | --- | --- | --- | --- | --- |")
    for (impl, threads), rs in runs.items():
        lps = [r["lines_per_s"] for r in rs]
        lpc = float(np.median([r["lines_per_cpu_s"] for r in rs]))
        peak = max(r["peak_mib"] for r in rs)
        ratio = ""
        if impl == "onemodel" and ("torch", threads) in med:
            ratio = f"{med[(impl, threads)] / med[('torch', threads)]:.2f}×"
        print(f"| {impl} | {threads} | {med[(impl, threads)]:.1f} | {min(lps):.1f}–{max(lps):.1f} | {lpc:.1f} "
              f"| {peak:.0f} | {ratio} |")
    rows = [{"case": "crnn-v0 training, lines 256 px, batch 8", "threads": th,
             "values": {impl: med.get((impl, th)) for impl in ("onemodel", "torch")}} for th in args.threads]
    write_json(args.json_out, "recognizer", "lines/s", rows, higher_is_better=True,
               note=f"{args.steps} steps per process, median of {args.rounds} rounds")
    try:
        print(f"\nload average: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    except OSError:
        pass


if __name__ == "__main__":
    main()
