"""Where the CRNN training step (benchmarks/bench_crnn.py) spends its time,
layer by layer, onemodel (fast and exact) against torch in one process:
each convolution's forward, input gradient and weight gradient (the
bindings onemodel's autograd calls, torch.nn.grad for torch), ReLU + max
pooling forward and backward, the two-layer bidirectional LSTM forward and
backward, and the head (linear, log_softmax, CTC loss) forward and
backward, at the step's shapes (batch 8, 32×256 input).

Every case is timed once per round for each configuration in turn
(onemodel fast, onemodel exact, torch, in each round's order of the six,
`_timing.round_order`), so a slow spell of a shared machine falls on all
three and none is always timed right after the same one; the table gives
medians over the rounds and the ratio of the medians. Not a timed test.

    python benchmarks/bench_crnn_layers.py [--rounds 7] [--threads 1] [--extra-site DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from _timing import add_harness_args, import_torch, pin_threads, round_order, write_json

B = 8


def conv_cases(om, torch, rng, name, ci, co, h, w):
    """The three products of one 3×3 convolution (padding 1)."""
    from onemodel import _core

    x = rng.standard_normal((B, ci, h, w)).astype(np.float32)
    wt = (rng.standard_normal((co, ci, 3, 3)) * 0.1).astype(np.float32)
    g = rng.standard_normal((B, co, h, w)).astype(np.float32)
    ox, ow, og = om.tensor(x), om.tensor(wt), om.tensor(g)
    oy, odx, odw = om.empty(B, co, h, w), om.empty(B, ci, h, w), om.empty(co, ci, 3, 3)
    tx, tw, tg = torch.tensor(x), torch.tensor(wt), torch.tensor(g)
    geo = ((1, 1), (1, 1), (1, 1), 1)
    return {
        f"{name} forward": (lambda: _core.conv2d_forward(oy, ox, ow, None, *geo),
                            lambda: torch.nn.functional.conv2d(tx, tw, padding=1)),
        f"{name} input grad": (lambda: _core.conv2d_input_grad(odx, og, ow, *geo),
                               lambda: torch.nn.grad.conv2d_input(tx.shape, tw, tg, padding=1)),
        f"{name} weight grad": (lambda: _core.conv2d_weight_grad(odw, ox, og, *geo),
                                lambda: torch.nn.grad.conv2d_weight(tx, tw.shape, tg, padding=1)),
    }


def pool_case(om, torch, rng, name, c, h, w, k):
    import onemodel.functional as F
    import torch.nn.functional as TF

    x = rng.standard_normal((B, c, h, w)).astype(np.float32)
    g = rng.standard_normal((B, c, h // k[0], w // k[1])).astype(np.float32)
    ox, og = om.tensor(x, requires_grad=True), om.tensor(g)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g)

    def ours():
        with om.ActivationScope():
            F.max_pool2d(F.relu(ox), k).backward(og)

    def theirs():
        TF.max_pool2d(TF.relu(tx), k).backward(tg)

    return {name: (ours, theirs)}


def lstm_case(om, torch, rng):
    x = rng.standard_normal((64, B, 384)).astype(np.float32)
    g = rng.standard_normal((64, B, 256)).astype(np.float32)
    ol = om.nn.LSTM(384, 128, num_layers=2, bidirectional=True)
    tl = torch.nn.LSTM(384, 128, num_layers=2, bidirectional=True)
    ox, og = om.tensor(x, requires_grad=True), om.tensor(g)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g)

    def ours():
        with om.ActivationScope():
            ol(ox)[0].backward(og)

    def theirs():
        tl(tx)[0].backward(tg)

    return {"LSTM 2 layers, bidirectional, 384→128": (ours, theirs)}


def head_cases(om, torch, rng):
    import onemodel.functional as F
    import torch.nn.functional as TF

    x = rng.standard_normal((64, B, 256)).astype(np.float32)
    z = rng.standard_normal((64, B, 97)).astype(np.float32)
    tgt = rng.integers(1, 97, size=(B, 20))
    olin, tlin = om.nn.Linear(256, 97), torch.nn.Linear(256, 97)
    ox, tx = om.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oz, tz = om.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    lp = torch.log_softmax(torch.tensor(z), -1)
    olp, tlp = om.tensor(lp.numpy(), requires_grad=True), lp.clone().requires_grad_()
    ot, tt = om.tensor(tgt), torch.tensor(tgt)
    og, tg = om.ones(64, B, 97), torch.ones(64, B, 97)

    def run(f):
        def go():
            with om.ActivationScope():
                f()
        return go

    return {
        "linear 256→97": (run(lambda: olin(ox).backward(og)), lambda: tlin(tx).backward(tg)),
        "log_softmax 97 classes": (run(lambda: F.log_softmax(oz, -1).backward(og)),
                                   lambda: TF.log_softmax(tz, -1).backward(tg)),
        "CTC loss (T 64, targets 20)": (
            run(lambda: F.ctc_loss(olp, ot, [64] * B, [20] * B).backward()),
            lambda: TF.ctc_loss(tlp, tt, torch.full((B,), 64), torch.full((B,), 20)).backward()),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    add_harness_args(ap)
    args = ap.parse_args()
    torch = import_torch(args.extra_site)
    if torch is None:
        raise SystemExit("bench_crnn_layers compares against torch: make it importable (--extra-site)")
    import onemodel as om

    pin_threads(args.threads, torch)
    rng = np.random.default_rng(0)
    cases = {}
    cases.update(conv_cases(om, torch, rng, "conv1 1→32, 32×256", 1, 32, 32, 256))
    cases.update(pool_case(om, torch, rng, "ReLU + max pool 2×2, 32 ch, 32×256", 32, 32, 256, (2, 2)))
    cases.update(conv_cases(om, torch, rng, "conv2 32→64, 16×128", 32, 64, 16, 128))
    cases.update(pool_case(om, torch, rng, "ReLU + max pool 2×2, 64 ch, 16×128", 64, 16, 128, (2, 2)))
    cases.update(conv_cases(om, torch, rng, "conv3 64→96, 8×64", 64, 96, 8, 64))
    cases.update(pool_case(om, torch, rng, "ReLU + max pool 2×1, 96 ch, 8×64", 96, 8, 64, (2, 1)))
    cases.update(lstm_case(om, torch, rng))
    cases.update(head_cases(om, torch, rng))
    configs = ("fast", "exact", "torch")
    times = {name: {c: [] for c in configs} for name in cases}
    for r in range(args.rounds + 1):  # the first round warms up and is dropped
        for name, (ours, theirs) in cases.items():
            for c in round_order(configs, r):
                if c != "torch":
                    om.compute.set_mode(c)
                fn = theirs if c == "torch" else ours
                t0 = time.perf_counter()
                fn()
                times[name][c].append((time.perf_counter() - t0) * 1e3)
    print(f"threads {args.threads}, {args.rounds} interleaved rounds, ms (median), forward + backward unless named\n")
    print("| part | onemodel fast | onemodel exact | torch | fast / torch | exact / torch |\n|---|---|---|---|---|---|")
    total = dict.fromkeys(configs, 0.0)
    for name, t in times.items():
        med = {c: statistics.median(v[1:]) for c, v in t.items()}
        for c in configs:
            total[c] += med[c]
        print(f"| {name} | {med['fast']:.2f} | {med['exact']:.2f} | {med['torch']:.2f} | "
              f"{med['fast'] / med['torch']:.2f} | {med['exact'] / med['torch']:.2f} |")
    print(f"| sum of the parts | {total['fast']:.1f} | {total['exact']:.1f} | {total['torch']:.1f} | "
          f"{total['fast'] / total['torch']:.2f} | {total['exact'] / total['torch']:.2f} |")
    rows = [{"case": name, "threads": args.threads,
             "values": {"onemodel fast": statistics.median(t["fast"][1:]),
                        "onemodel exact": statistics.median(t["exact"][1:]),
                        "torch": statistics.median(t["torch"][1:])}} for name, t in times.items()]
    write_json(args.json_out, "crnn_layers", "ms per part, forward + backward unless named", rows,
               note=f"median of {args.rounds} interleaved rounds, one process")


if __name__ == "__main__":
    main()
