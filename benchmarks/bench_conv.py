"""Forward + backward time of conv2d 3×3 (padding 1, batch 8) at three
shapes and of the two oracle models (tests/oracle_models.py), at 1 and 2
threads in both modes, side by side with torch when it is importable.

    python benchmarks/bench_conv.py [--repeat N] [--markdown] [--only WORD ...]

Each figure is the best of N runs (default 5) after one warm-up, in
milliseconds; onemodel fast, onemodel exact and torch are timed in turn
within each run, so that a slow spell of a shared machine falls on all
three. Not a test: nothing asserts on time."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import onemodel as om  # noqa: E402
import onemodel.functional as F  # noqa: E402
from _timing import add_harness_args, import_torch, interleaved_ms, pin_threads, write_json  # noqa: E402

torch = None  # optional: main() imports it (benchmarks/_timing.py)

CONV_SHAPES = [(1, 32, 32, 256), (32, 64, 16, 128), (64, 96, 8, 64)]
BATCH = 8


def conv_case_om(cin, cout, h, w):
    rng = np.random.default_rng(0)
    x = om.tensor(rng.standard_normal((BATCH, cin, h, w)).astype(np.float32)).requires_grad_()
    wt = om.tensor((rng.standard_normal((cout, cin, 3, 3)) * 0.1).astype(np.float32)).requires_grad_()
    b = om.tensor(np.zeros(cout, np.float32)).requires_grad_()

    def step():
        x.grad = wt.grad = b.grad = None
        with om.ActivationScope():
            F.conv2d(x, wt, b, padding=1).sum().backward()

    return step


def conv_case_torch(cin, cout, h, w):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((BATCH, cin, h, w)).astype(np.float32)).requires_grad_()
    wt = torch.from_numpy((rng.standard_normal((cout, cin, 3, 3)) * 0.1).astype(np.float32)).requires_grad_()
    b = torch.zeros(cout, requires_grad=True)

    def step():
        x.grad = wt.grad = b.grad = None
        torch.nn.functional.conv2d(x, wt, b, padding=1).sum().backward()

    return step


def model_case_om(name):
    from oracle_models import build, load, step

    data = load(name)
    model = build(name, data)

    def run():
        for p in model.parameters():
            p.grad = None
        with om.ActivationScope():
            step(name, model, data)

    return run


def model_case_torch(name):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import autograd_oracle as ao  # needs torch
    from oracle_models import load

    data = load(name)
    cfg = data["meta"]["config"]
    model = (ao.ConvNet(cfg) if name == "convnet" else ao.Encoder(cfg)).train()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for k, p in params.items():
            p.copy_(torch.from_numpy(data[f"param/{k}"]))
    if name == "convnet":
        x, t = torch.from_numpy(data["input/x"]), torch.from_numpy(data["input/targets"])
        fwd = lambda: torch.nn.functional.cross_entropy(model(x), t)  # noqa: E731
    else:
        tok, pad, t = (torch.from_numpy(data[k]) for k in ("input/tokens", "input/pad_mask", "input/targets"))
        fwd = lambda: torch.nn.functional.cross_entropy(model(tok, pad).reshape(-1, cfg["classes"]), t.reshape(-1))  # noqa: E731

    def run():
        model.zero_grad(set_to_none=True)
        fwd().backward()

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", nargs="+", default=None, metavar="WORD",
                    help="run only the cases whose label contains one of these words (e.g. encoder)")
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="thread: 1-thread rows in CPU time of the calling thread (see bench_calls.py)")
    add_harness_args(ap)
    args = ap.parse_args()
    global torch
    torch = import_torch(args.extra_site)
    json_rows = []
    def wanted(label):
        return args.only is None or any(w in label for w in args.only)

    cases = [(label, conv_case_om(ci, co, h, w), torch and conv_case_torch(ci, co, h, w))
             for ci, co, h, w in CONV_SHAPES if wanted(label := f"conv2d 3×3 {ci}→{co}, {h}×{w}")]
    for name in ("convnet", "encoder"):
        if wanted(f"oracle {name}"):
            cases.append((f"oracle {name}", model_case_om(name), torch and model_case_torch(name)))
    rows = []
    for label, ours, theirs in cases:
        for threads in args.threads:
            row = [label, str(threads)]

            def in_mode(mode):
                def run():
                    with om.compute.settings(mode=mode):
                        ours()
                return run

            pin_threads(threads, torch)
            fns = [in_mode("fast"), in_mode("exact")] + ([theirs] if theirs else [])
            clock = time.thread_time if (args.clock == "thread" and threads == 1) else time.perf_counter
            timings = interleaved_ms(fns, args.repeat, pause=0.05, clock=clock)
            best = [min(t) for t in timings]
            med = [statistics.median(t) for t in timings]
            json_rows.append({"case": label, "threads": threads, "values": {
                "onemodel fast": med[0], "onemodel exact": med[1], "torch": med[2] if theirs else None}})
            times = {"fast": best[0], "exact": best[1]}
            t_torch = best[2] if theirs else None
            for mode in ("fast", "exact"):
                row.append(f"{times[mode]:.2f}")
            row.append("—" if t_torch is None else f"{t_torch:.2f}")
            for mode in ("fast", "exact"):
                t = times[mode]
                row.append("—" if t_torch is None else f"{t / t_torch:.2f}×")
            rows.append(row)
            print(" | ".join(row), file=sys.stderr if args.markdown else sys.stdout, flush=True)
    if args.markdown:
        head = ["case", "threads", "fast ms", "exact ms", "torch ms", "fast/torch", "exact/torch"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    write_json(args.json_out, "conv", "ms per forward + backward", json_rows,
               note=f"median of {args.repeat} interleaved repeats; "
               + ("1-thread rows in thread CPU time" if args.clock == "thread" else "wall clock"))
    print(f"\nkernel path {om.compute.kernel_path()}, cpu features {', '.join(om.compute.cpu_features())}, "
          f"torch {torch.__version__ if torch else 'not installed'}", file=sys.stderr if args.markdown else sys.stdout)


if __name__ == "__main__":
    main()
