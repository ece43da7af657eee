"""``onemodel demo``: render synthetic lines, train crnn-v0 from scratch,
report the held-out CER and the weights sha256 (the main job)."""

from __future__ import annotations

import time
from pathlib import Path

from .common import CliError, command_line, drop_option, given_argv, load_checkpoint, require_extras, summary

DEFAULTS = dict(steps=800, batch_size=8, lr=3e-3, train_lines=4000, eval_lines=200, eval_every=100,
                min_len=3, max_len=8, charset="0123456789", arch="small", seed=0)
QUICK = dict(steps=8, train_lines=32, eval_lines=8, eval_every=4)


def run(args) -> int:
    from .. import compute
    from ..recognizer import CrnnV0, Trainer
    from ..recognizer.demo import make_lines
    from ..recognizer.training import NonFiniteError, Sample, StopOnInterrupt, architecture, evaluate, \
        read_history, train, weights_sha256
    from .common import apply_compute

    require_extras(args.command)
    from .plot import write_plot
    from .progress import TrainingProgress

    apply_compute(args)
    if args.quick:
        for k, v in QUICK.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
    for k, v in DEFAULTS.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    cfg = architecture(args.arch, args.charset)
    print(f"onemodel demo: crnn-v0 ({args.arch}: channels {list(cfg.channels)}, hidden {cfg.hidden}, "
          f"layers {cfg.layers}) from scratch on synthetic lines, seed {args.seed}")
    print(f"  charset {args.charset!r}, {args.min_len}-{args.max_len} characters a line, batch {args.batch_size}, "
          f"lr {args.lr:g}, {args.steps} steps; kernel path {compute.kernel_path()}, "
          f"{compute.get_threads()} threads")
    t = time.perf_counter()
    train_lines = [Sample(im, tx, f"synthetic #{i}") for i, (im, tx) in
                   enumerate(make_lines(args.train_lines, args.seed, 0, args.charset, args.min_len, args.max_len))]
    held = [Sample(im, tx, f"held-out #{i}") for i, (im, tx) in
            enumerate(make_lines(args.eval_lines, args.seed, 1, args.charset, args.min_len, args.max_len))]
    print(f"  rendered {len(train_lines)} training and {len(held)} held-out lines with Pillow's built-in font "
          f"in {time.perf_counter() - t:.1f} s")
    history = []
    if args.resume:
        trainer = load_checkpoint(args.resume)
        model = trainer.model
        if model.config != cfg or trainer.lr != args.lr:
            raise CliError(f"--resume {args.resume}: the checkpoint is not this demo's (model or lr differ); "
                           "give the options of the interrupted run")
        if args.steps < trainer.step_count:
            raise CliError(f"--steps {args.steps}: the checkpoint is already at step {trainer.step_count}")
        history = read_history(Path(args.resume).parent, trainer.step_count)
        print(f"  resuming from step {trainer.step_count}")
    else:
        model = CrnnV0(cfg, seed=args.seed)
        trainer = Trainer(model, lr=args.lr, weight_decay=0.01, clip=5.0)

    progress = TrainingProgress(enabled=not args.no_progress, every=max(1, min(args.eval_every or 50, 50)))
    try:
        with StopOnInterrupt() as stop:
            res = train(trainer, train_lines, held, steps=args.steps, batch_size=args.batch_size, seed=args.seed,
                        eval_every=args.eval_every, checkpoint_every=0, out_dir=out, history=history,
                        callbacks=[progress], should_stop=stop)
    except NonFiniteError as e:
        raise CliError(f"{e} (--lr, --clip)") from None
    if res.stopped:
        print(f"Stopped at step {res.step}/{res.steps}; checkpoint saved to {res.checkpoint}.")
        argv = drop_option(given_argv(args), "--resume") + ["--resume", str(res.checkpoint)]
        print(f"Resume with:\n  {command_line(argv)}")
        return 130
    model.save(out / "model.safetensors")
    write_plot(out / "plot.png", res.history, title=f"onemodel demo: crnn-v0 {args.arch}, seed {args.seed}")
    rates, hyps = evaluate(model, held)
    print()
    print("Examples (held-out):")
    for (im, tx, _), h in list(zip(held, hyps))[:5]:
        print(f"  {tx:<{args.max_len}}  ->  {h}{'' if h == tx else '   (wrong)'}")
    print()
    elapsed = res.elapsed
    summary("Result", [
        ("steps", f"{trainer.step_count} (batch {args.batch_size}, {trainer.step_count * args.batch_size} lines)"),
        ("training time", f"{elapsed:.1f} s ({trainer.step_count * args.batch_size / max(elapsed, 1e-9):.1f} lines/s, "
                          f"{compute.get_threads()} threads, {compute.kernel_path()})"),
        ("held-out CER", f"{100 * rates.cer:.2f}% ({rates.char_errors}/{rates.chars} characters, "
                         f"{len(held)} lines)"),
        ("held-out WER", f"{100 * rates.wer:.2f}%"),
        ("weights sha256", weights_sha256(model)),
        ("checkpoint", str(out / "checkpoint.safetensors")),
        ("model", str(out / "model.safetensors")),
        ("plot", str(out / "plot.png")),
    ])
    return 0
