"""The CRNN training step at its real size (issue 6): input 8×1×32×256,
conv blocks 1→32→64→96 (3×3, ReLU, max-pool (2,2), (2,2), (2,1)), collapse
height (4·96 = 384 features), 2-layer bidirectional LSTM (hidden 128),
linear to 97 classes, log_softmax, CTC loss, backward and an AdamW step.

Each (framework, threads, mode) runs in a fresh subprocess, so the peak
resident memory (VmHWM) of one framework is not mixed with the other's.
Medians of --repeats steps after two warm-up steps. With --rounds R the
three configurations of a thread count (onemodel fast, exact, torch) run R
times in turn, so that a slow spell of a shared machine falls on all of
them, and the table gives the median over rounds (and each one's range).

    python benchmarks/bench_crnn.py [--repeats 5] [--rounds 1]
"""

from __future__ import annotations

import json
import statistics
import time

from _timing import import_torch, peak_rss_mib, per_process_runs, pin_threads, write_json

import numpy as np

B, H, W, CLASSES = 8, 32, 256, 97
T_STEPS = W // 4
TARGET_LEN = 20


def data():
    rng = np.random.default_rng(0)
    x = rng.random((B, 1, H, W), dtype=np.float32)
    targets = rng.integers(1, CLASSES, size=(B, TARGET_LEN)).astype(np.int64)
    return x, targets


def run_ours(threads, mode, repeats):
    import onemodel as om
    import onemodel.functional as F

    pin_threads(threads)
    om.compute.set_mode(mode)

    class CRNN(om.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = om.nn.Conv2d(1, 32, 3, padding=1), om.nn.Conv2d(32, 64, 3, padding=1), om.nn.Conv2d(64, 96, 3, padding=1)
            self.lstm = om.nn.LSTM(384, 128, num_layers=2, bidirectional=True)
            self.fc = om.nn.Linear(256, CLASSES)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            x = F.max_pool2d(F.relu(self.c3(x)), (2, 1))
            b, c, h, w = x.shape
            out, _ = self.lstm(x.permute(3, 0, 1, 2).reshape(w, b, c * h))
            return self.fc(out)

    model = CRNN()
    opt = om.optim.AdamW(model.parameters(), lr=1e-3)
    xn, tn = data()
    x, targets = om.tensor(xn), om.tensor(tn)

    def step():
        with om.ActivationScope():
            opt.zero_grad()
            lp = F.log_softmax(model(x), dim=-1)
            loss = F.ctc_loss(lp, targets, [T_STEPS] * B, [TARGET_LEN] * B)
            loss.backward()
            opt.step()
            return loss.item()

    return step


def run_torch(threads, mode, repeats):
    torch = import_torch()
    import torch.nn.functional as F

    pin_threads(threads, torch)

    class CRNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.Conv2d(64, 96, 3, padding=1)
            self.lstm = torch.nn.LSTM(384, 128, num_layers=2, bidirectional=True)
            self.fc = torch.nn.Linear(256, CLASSES)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            x = F.max_pool2d(F.relu(self.c3(x)), (2, 1))
            b, c, h, w = x.shape
            out, _ = self.lstm(x.permute(3, 0, 1, 2).reshape(w, b, c * h))
            return self.fc(out)

    model = CRNN()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    xn, tn = data()
    x, targets = torch.from_numpy(xn), torch.from_numpy(tn)

    def step():
        opt.zero_grad()
        lp = F.log_softmax(model(x), dim=-1)
        loss = F.ctc_loss(lp, targets, torch.full((B,), T_STEPS), torch.full((B,), TARGET_LEN))
        loss.backward()
        opt.step()
        return loss.item()

    return step


def child(framework, threads, mode, repeats):
    step = (run_ours if framework == "onemodel" else run_torch)(threads, mode, repeats)
    step()
    step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    peak = peak_rss_mib()
    print(json.dumps({"ms": statistics.median(times), "peak_mib": peak}))


def main():
    got = per_process_runs(__file__, child)
    if got is None:
        return
    args, runs, _, have_torch = got

    def ms(th, fw, mode):
        return statistics.median(r["ms"] for r in runs[(th, fw, mode)])

    def span(th, fw, mode):
        v = [r["ms"] for r in runs[(th, fw, mode)]]
        return f" ({min(v):.0f}–{max(v):.0f})" if len(v) > 1 else ""

    def peak(th, fw, *modes):
        return max(r["peak_mib"] for m in modes for r in runs[(th, fw, m)])

    what = f"median of {args.rounds} rounds, " if args.rounds > 1 else ""
    print(f"| threads | onemodel fast ms ({what}range) | onemodel exact ms | torch ms | exact/torch | fast/torch "
          "| onemodel peak MiB | torch peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for th in args.threads:
        fast, exact = ms(th, "onemodel", "fast"), ms(th, "onemodel", "exact")
        tor = ms(th, "torch", "fast") if have_torch else None
        r = lambda v: f"{v / tor:.2f}" if tor else "-"
        tcol = f"{tor:.0f}{span(th, 'torch', 'fast')}" if tor else "-"
        tpeak = f"{peak(th, 'torch', 'fast'):.0f}" if tor else "-"
        print(f"| {th} | {fast:.0f}{span(th, 'onemodel', 'fast')} | {exact:.0f}{span(th, 'onemodel', 'exact')} | {tcol} "
              f"| {r(exact)} | {r(fast)} | {peak(th, 'onemodel', 'fast', 'exact'):.0f} | {tpeak} |")
    rows = []
    for th in args.threads:
        rows.append({"case": "CRNN step 8×1×32×256", "threads": th, "values": {
            "onemodel fast": ms(th, "onemodel", "fast"), "onemodel exact": ms(th, "onemodel", "exact"),
            "torch": ms(th, "torch", "fast") if have_torch else None}})
        rows.append({"case": "CRNN step peak MiB", "threads": th, "values": {
            "onemodel fast": peak(th, "onemodel", "fast"), "onemodel exact": peak(th, "onemodel", "exact"),
            "torch": peak(th, "torch", "fast") if have_torch else None}})
    write_json(args.json_out, "crnn", "ms per step (peak rows: MiB)", rows,
               note=f"median of {args.repeats} steps, one process per configuration")


if __name__ == "__main__":
    main()
